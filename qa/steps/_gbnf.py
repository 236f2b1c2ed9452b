"""Grammars generated in code, rendered two ways from one definition: GBNF text for
llama.cpp to constrain generation, and an equivalent Python regular expression to check
text that was generated without it (a backend that ignores grammars, a scripted test).

Only what a step grammar needs: rules whose alternatives are sequences of literals, rule
references and character-class items with a bounded repetition. Rules may not refer to
themselves (directly or not), so every grammar here is regular and the regex is exact.
Pure functions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, Union


@dataclass(frozen=True)
class Ref:
    """A reference to another rule by name."""

    name: str


@dataclass(frozen=True)
class Chars:
    """A character class (GBNF and regex share the ``[a-z0-9_]`` / ``[^\\n]`` syntax)
    repeated between ``low`` and ``high`` times."""

    cls: str
    low: int = 1
    high: int = 1


Item = Union[str, Ref, Chars]  # a str is a literal


class Grammar:
    """Rules by name; ``root`` is where matching starts."""

    def __init__(self):
        self.rules: dict[str, list[tuple[Item, ...]]] = {}

    def rule(self, name: str, *alternatives: Sequence[Item] | Item) -> Ref:
        """Define ``name`` with ``alternatives`` (each a sequence of items, or one item);
        returns a reference to it."""
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            raise ValueError(f"a rule name is lower-case letters, digits and dashes: {name!r}")
        alts = [tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in alternatives]
        if not alts:
            raise ValueError(f"rule {name} has no alternatives")
        self.rules[name] = alts
        return Ref(name)

    def gbnf(self) -> str:
        if "root" not in self.rules:
            raise ValueError("the grammar has no root rule")
        return "".join(f"{name} ::= {' | '.join(' '.join(_gbnf_item(i) for i in alt) for alt in alts)}\n"
                       for name, alts in self.rules.items())

    def regex(self) -> re.Pattern:
        return re.compile(self._regex("root", ()), re.DOTALL)

    def accepts(self, text: str) -> bool:
        """Whether the grammar generates exactly ``text``."""
        return self.regex().fullmatch(text) is not None

    def _regex(self, name: str, seen: tuple[str, ...]) -> str:
        if name in seen:
            raise ValueError(f"rule {name} refers to itself")
        if name not in self.rules:
            raise ValueError(f"no rule {name}")
        parts = []
        for alt in self.rules[name]:
            pieces = []
            for item in alt:
                if isinstance(item, Ref):
                    pieces.append(self._regex(item.name, seen + (name,)))
                elif isinstance(item, Chars):
                    pieces.append(f"{item.cls}{{{item.low},{item.high}}}")
                else:
                    pieces.append(re.escape(item))
            parts.append("".join(pieces))
        return "(?:" + "|".join(parts) + ")"


def _gbnf_item(item: Item) -> str:
    if isinstance(item, Ref):
        return item.name
    if isinstance(item, Chars):
        if (item.low, item.high) == (1, 1):
            return item.cls
        return f"{item.cls}{{{item.low},{item.high}}}"
    return gbnf_literal(item)


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


__all__ = ["Grammar", "Ref", "Chars", "gbnf_literal"]

"""The writing: the model writes 1 to 6 sentences from the ground graph's numbered facts,
each ending with the facts it cites ([1][3]), under a grammar that allows only this
ground graph's fact numbers. Parsing what it wrote is a pure function."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..prompts import grammar_text
from ._facts import Fact

MAX_SENTENCES = 6
_CITES = re.compile(r"\s*((?:\[\d+\]\s*)+)\.?\s*$")


@dataclass(frozen=True)
class Draft:
    """One sentence as the model wrote it (citations taken off) and the facts it cites."""

    text: str
    cites: tuple[int, ...]


def facts_text(facts: Sequence[Fact]) -> str:
    return "\n".join(f.text() for f in facts)


def write_grammar(numbers: Sequence[int], max_sentences: int) -> str:
    """The open_write grammar with at most ``max_sentences`` lines citing only ``numbers``."""
    fact = " | ".join(f'"{n}"' for n in sorted(set(numbers), key=lambda n: -len(str(n))))
    root = "root ::= line" + "".join(" (line" for _ in range(max_sentences - 1)) + ")?" * (max_sentences - 1)
    return f"{root}\nfact  ::= {fact}\n{grammar_text('open_write')}"


def sentence_limit(facts: Sequence[Fact]) -> int:
    """At most one sentence a fact, and at most six: a thin ground graph makes a short answer."""
    return max(1, min(MAX_SENTENCES, len(facts)))


def write(run, question: str, facts: Sequence[Fact], *, max_tokens: int = 200, use_grammar: bool = True
          ) -> list[Draft]:
    """The model's sentences about ``facts`` for ``question``, each with its citations."""
    limit = sentence_limit(facts)
    options = {"grammar": write_grammar([f.n for f in facts], limit)} if use_grammar else {}
    completion = run.ask("writing", "open_write", {"question": question, "facts": facts_text(facts)},
                         max_tokens=max_tokens, temperature=0.0, stop_repeated_lines=True, **options)
    return parse_drafts(completion.text)[:limit]


def parse_drafts(text: str) -> list[Draft]:
    """``Nepal's capital is Kathmandu [2].`` lines → drafts; a line without citations is
    kept with none (the checker drops it); repeated lines count once."""
    out: list[Draft] = []
    seen: set[str] = set()
    for line in text.splitlines():
        line = line.strip().lstrip("-*").strip()
        if not line:
            continue
        m = _CITES.search(line)
        cites: tuple[int, ...] = ()
        body = line
        if m:
            cites = tuple(dict.fromkeys(int(n) for n in re.findall(r"\d+", m.group(1))))
            body = line[:m.start()]
        body = re.sub(r"\s*\[\d+\]", "", body).strip()  # citations inside the sentence count too
        cites = tuple(dict.fromkeys(cites + tuple(int(n) for n in re.findall(r"\[(\d+)\]", line[:m.start()]
                                                                                if m else line))))
        body = body.rstrip(" ,;") + ("" if body.endswith((".", "!", "?")) else ".")
        if body != "." and body.lower() not in seen:
            seen.add(body.lower())
            out.append(Draft(body, cites))
    return out

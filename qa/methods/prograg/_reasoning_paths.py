"""Reasoning paths from a topic entity through store facts, their prefixes, and packing the
best of them into a token budget. Pure functions over :class:`~qa.steps._result.Evidence`.

A step is a fact walked forward (subject → object) or backward (object → subject); the
path's end is the entity (or literal value) the last step reached. Every prefix of a path
is itself a path: when a question needs fewer hops than its decomposition says, a prefix
ends at the answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ...steps._result import Evidence

CHARS_PER_TOKEN = 4  # English text in the Qwen tokenizer, near enough for a budget


@dataclass(frozen=True)
class Step:
    fact: Evidence
    backward: bool = False

    @property
    def end(self) -> str:
        """The node the step reaches: an IRI, or for a literal its lexical form."""
        return self.fact.s if self.backward else self.fact.o

    @property
    def end_label(self) -> str:
        e = self.fact
        if self.backward:
            return e.s_label or e.s
        return e.o if e.literal else (e.o_label or e.o)

    @property
    def literal(self) -> bool:
        return not self.backward and self.fact.literal


@dataclass(frozen=True)
class ReasoningPath:
    start: str
    start_label: str
    steps: tuple[Step, ...] = ()

    @property
    def end(self) -> str:
        return self.steps[-1].end if self.steps else self.start

    @property
    def end_label(self) -> str:
        return self.steps[-1].end_label if self.steps else self.start_label

    @property
    def end_is_literal(self) -> bool:
        return bool(self.steps) and self.steps[-1].literal

    def nodes(self) -> list[str]:
        return [self.start] + [s.end for s in self.steps]

    def then(self, step: Step) -> "ReasoningPath":
        return ReasoningPath(self.start, self.start_label, self.steps + (step,))

    def facts(self) -> list[Evidence]:
        return [s.fact for s in self.steps]

    def text(self) -> str:
        """The path as the facts it walks, in stored direction: ``a | r | b; b | r2 | c``."""
        return "; ".join(s.fact.text() for s in self.steps)

    def line(self) -> str:
        """The path as one line from its start, each relation with the way it was walked:
        ``Nepal <- country <- Mount Everest -> mountain range -> Himalayas``."""
        parts = [self.start_label]
        for s in self.steps:
            relation = s.fact.p_label or s.fact.p
            parts.append(f"<- {relation} <- {s.end_label}" if s.backward else f"-> {relation} -> {s.end_label}")
        return " ".join(parts)


def prefixes(paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    """Every non-empty prefix of every path, each once, shorter first within a path."""
    out: dict[tuple, ReasoningPath] = {}
    for path in paths:
        for n in range(1, len(path.steps) + 1):
            part = ReasoningPath(path.start, path.start_label, path.steps[:n])
            out.setdefault(_key(part), part)
    return list(out.values())


def distinct(paths: Sequence[ReasoningPath]) -> list[ReasoningPath]:
    out: dict[tuple, ReasoningPath] = {}
    for p in paths:
        out.setdefault(_key(p), p)
    return list(out.values())


def _key(path: ReasoningPath) -> tuple:
    return (path.start,) + tuple((s.fact.s, s.fact.p, s.fact.o, s.backward) for s in path.steps)


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


def pack(paths: Sequence[ReasoningPath], scores: Sequence[float], budget: int,
         cost: Callable[[ReasoningPath], int] | None = None) -> list[ReasoningPath]:
    """The best-scoring paths, best first, while they fit in ``budget`` tokens (each path's
    line by default); a path that does not fit is skipped, and smaller ones after it may
    still go in."""
    cost = cost or (lambda p: estimate_tokens(p.line()))
    chosen, used = [], 0
    for i in sorted(range(len(paths)), key=lambda i: -scores[i]):
        extra = cost(paths[i])
        if used + extra <= budget:
            used += extra
            chosen.append(paths[i])
    return chosen


def packed_facts(paths: Sequence[ReasoningPath]) -> list[Evidence]:
    """The facts of ``paths`` in packing order, each once."""
    out: dict[tuple, Evidence] = {}
    for p in paths:
        for e in p.facts():
            out.setdefault((e.s, e.p, e.o), e)
    return list(out.values())


__all__ = ["ReasoningPath", "Step", "distinct", "estimate_tokens", "pack", "packed_facts", "prefixes"]

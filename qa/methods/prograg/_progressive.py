"""One hop of progressive retrieval, as pure functions: the relations around the current
entities read both ways, the paths one hop longer along the kept relations, their combined
scores, and the letters the model picks options by.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from ...steps._examples import Hop, hop_phrase
from ...steps._retrieval import edge_evidence
from ._graph_scores import personalized_pagerank, scaled
from ._reasoning_paths import ReasoningPath, Step

LETTERS = "ABCDEFGHIJKLMNOP"
NONE = "None"
_LETTER = re.compile(r"\b([A-P])\b")


@dataclass(frozen=True)
class Reading:
    """A relation read from the current entities: forward asks for its objects, backward
    for its subjects."""

    relation: str
    label: str
    backward: bool

    @property
    def key(self) -> tuple[str, bool]:
        return (self.relation, self.backward)

    def phrase(self, given: str) -> str:
        """The reading as a question phrase: "what is the capital of Nepal"."""
        return hop_phrase(Hop(self.label, self.backward), given, "what")

    def to_dict(self) -> dict:
        return {"relation": self.relation, "label": self.label, "backward": self.backward}


def readings(edges_by_node: Mapping[str, Sequence]) -> list[Reading]:
    """Each relation around the nodes, once per direction it is read in, in first-seen order."""
    out: dict[tuple[str, bool], Reading] = {}
    for node, edges in edges_by_node.items():
        for e in edges:
            backward = e.o == node and not e.o_literal and e.s != node
            key = (e.p, backward)
            if key not in out:
                out[key] = Reading(e.p, e.p_label or _local(e.p), backward)
    return list(out.values())


def _local(iri: str) -> str:
    return re.split(r"[/#]", iri.rstrip("/#"))[-1].replace("_", " ")


def expand(frontier: Sequence[ReasoningPath], edges_by_node: Mapping[str, Sequence],
           kept: Sequence[tuple[str, bool]], *, limit: int) -> list[ReasoningPath]:
    """Each frontier path one step longer along the kept readings, never back to a node it
    passed; at most ``limit`` paths, those of the first kept reading first."""
    order = {key: i for i, key in enumerate(kept)}
    found = []
    for path in frontier:
        visited = set(path.nodes())
        for e in edges_by_node.get(path.end, ()):
            backward = e.o == path.end and not e.o_literal and e.s != path.end
            if (e.p, backward) not in order:
                continue
            step = Step(edge_evidence(e), backward)
            if step.end in visited:
                continue
            found.append((order[(e.p, backward)], path.then(step)))
    found.sort(key=lambda x: x[0])
    return [p for _, p in found[:limit]]


def combined_scores(paths: Sequence[ReasoningPath], text_similarity: Sequence[float],
                    local_edges: Sequence[tuple[str, str]], topic: str, weight: float) -> list[tuple[float, float]]:
    """(combined score, structural score) per path: the last fact's similarity to the
    sub-question plus ``weight`` × the personalized PageRank of the path's end from the
    topic entity over the edges read so far, scaled so the best candidate end is 1."""
    graph = list(local_edges) + [(s.fact.s, s.fact.o) for p in paths for s in p.steps[-1:]]
    rank = personalized_pagerank(graph, [topic])
    structure = scaled({p.end: rank.get(p.end, 0.0) for p in paths})
    return [(sim + weight * structure[p.end], structure[p.end]) for p, sim in zip(paths, text_similarity)]


def choice_grammar(count: int, *, none: bool = True, most: int | None = None) -> str:
    """GBNF for a reply of option letters (the first ``count``), comma-separated, at most
    ``most`` of them (any number when None), or ``None``."""
    letters = " | ".join(f'"{c}"' for c in LETTERS[:count])
    if most is None:
        picks = 'pick (", " pick)*'
    else:
        picks = "pick" + "".join('(", " pick' for _ in range(most - 1)) + ")?" * (most - 1)
    root = f'root ::= "{NONE}" | {picks}' if none else f"root ::= {picks}"
    return f"{root}\npick ::= {letters}\n"


def parse_choices(text: str, count: int) -> list[int]:
    """The option numbers (0-based) the reply names, in order, each once; none for "None"."""
    out = []
    for letter in _LETTER.findall(text):
        i = LETTERS.index(letter)
        if i < count and i not in out:
            out.append(i)
    return out


def lettered(lines: Sequence[str]) -> str:
    return "\n".join(f"{LETTERS[i]}. {line}" for i, line in enumerate(lines))


__all__ = ["LETTERS", "NONE", "Reading", "choice_grammar", "combined_scores", "expand", "lettered",
           "parse_choices", "readings"]

"""Pruning retrieved triples into the ground graph (step 3 of the pseudo-graph method).
Pure functions over retrieved evidence; no LLM, no store access (popularity is passed in).

For each pseudo-triple the index returned its top triples. Each retrieved triple is
*anchored* at the store entity standing for the pseudo-triple's subject: the KG triple's
subject, or its object when that is the side whose label matches the pseudo subject (the
model may write ``actor ACTED_IN film`` where the store says ``film | starred actors | actor``).
With k = the number of distinct pseudo-graph subjects, the k anchors that match a pseudo
subject's name best, most popular first among equals (the famous Yao Ming over namesakes),
are kept; each is scored by the mean similarity of its retrieved triples and dropped under
the threshold. What remains, grouped per entity, is the ground graph.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ...steps._graph_text import labelled, triple_lines
from ...steps._grounding import normalise_label
from ...steps._result import Evidence

_YEAR = re.compile(r"^([+-]?\d{1,4})(?:-(\d\d)(?:-(\d\d))?)?")


@dataclass
class EntityGroup:
    """One kept entity of the ground graph and the retrieved triples anchored at it."""

    iri: str
    label: str
    score: float
    popularity: int
    name_match: float
    triples: list[Evidence] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"iri": self.iri, "label": self.label, "score": round(self.score, 4), "popularity": self.popularity,
                "name_match": round(self.name_match, 3), "triples": [e.text() for e in self.triples]}


def name_match(a: str, b: str) -> float:
    """How well two names match: 1 for the same normalised label, else token overlap (Jaccard)."""
    na, nb = normalise_label(a), normalise_label(b)
    if not na or not nb:
        return 0.0
    if na == nb:
        return 1.0
    ta, tb = set(na.split()), set(nb.split())
    return len(ta & tb) / len(ta | tb)


def anchor(evidence: Evidence, pseudo_subject: str) -> tuple[str, str, float]:
    """(iri, label, name match) of the side of ``evidence`` that stands for ``pseudo_subject``."""
    subject_match = name_match(evidence.s_label or "", pseudo_subject)
    if not evidence.literal and evidence.o_label:
        object_match = name_match(evidence.o_label, pseudo_subject)
        if object_match > subject_match:
            return evidence.o, evidence.o_label, object_match
    return evidence.s, evidence.s_label or evidence.s, subject_match


def prune(retrieved: Sequence[tuple[str, Sequence[Evidence]]], *, k: int, popularity: Mapping[str, int],
          threshold: float = 0.7, score_top: int | None = None
          ) -> tuple[list[EntityGroup], list[tuple[EntityGroup, str]]]:
    """The ground graph from ``retrieved`` = [(pseudo subject, hits with scores), ...].

    An entity's score is the mean similarity of its retrieved triples, or of its best
    ``score_top`` when given: a search over one entity's own triples returns its unrelated
    facts too, which would drag the mean of an entity that has the fact asked for under
    the threshold.

    Returns (kept groups, highest score last; (dropped group, why) in the order
    considered), so a trace can show why an entity did not make it.
    """
    scores: dict[str, dict[tuple, float]] = {}  # anchor iri -> triple key -> best similarity
    triples: dict[tuple, Evidence] = {}
    labels: dict[str, str] = {}
    matches: dict[str, float] = {}
    for pseudo_subject, hits in retrieved:
        for hit in hits:
            iri, label, match = anchor(hit, pseudo_subject)
            key = (hit.s, hit.p, hit.o)
            triples.setdefault(key, hit)
            per_entity = scores.setdefault(iri, {})
            per_entity[key] = max(per_entity.get(key, float("-inf")), hit.score or 0.0)
            labels.setdefault(iri, label)
            matches[iri] = max(matches.get(iri, 0.0), match)
    candidates = sorted(scores, key=lambda iri: (-matches[iri], -popularity.get(iri, 0), labels[iri]))
    kept, dropped = [], []
    for rank, iri in enumerate(candidates):
        sims = scores[iri]
        best = sorted(sims.values(), reverse=True)[:score_top] if score_top else list(sims.values())
        group = EntityGroup(iri=iri, label=labels[iri], score=sum(best) / len(best),
                            popularity=popularity.get(iri, 0), name_match=matches[iri],
                            triples=order_triples([triples[key] for key in sims]))
        if rank >= k:
            dropped.append((group, f"not among the k={k} best-matching, most popular entities"))
        elif group.score < threshold:
            dropped.append((group, f"mean similarity {group.score:.3f} < {threshold}"))
        else:
            kept.append(group)
    kept.sort(key=lambda g: g.score)  # highest last: nearest the pseudo-graph in the prompt
    return kept, dropped


def time_key(evidence: Evidence) -> tuple:
    """A chronological sort key for date-like literal objects (years, ISO dates); others sort after."""
    if evidence.literal:
        m = _YEAR.match(evidence.o.strip())
        if m and (evidence.datatype is None or "date" in evidence.datatype.lower()
                  or "year" in evidence.datatype.lower() or m.group(2)):
            return (0, int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0))
    return (1,)


def order_triples(triples: Sequence[Evidence]) -> list[Evidence]:
    """Group a relation's values together and list time-varying values chronologically;
    within a relation, non-temporal values keep their best-similarity order."""
    first_seen: dict[str, int] = {}
    for i, e in enumerate(sorted(triples, key=lambda e: -(e.score or 0.0))):
        first_seen.setdefault(e.p, i)
    ranked = sorted(triples, key=lambda e: -(e.score or 0.0))
    position = {id(e): i for i, e in enumerate(ranked)}
    return sorted(triples, key=lambda e: (first_seen[e.p], time_key(e), position[id(e)]))


def ground_graph_text(groups: Sequence[EntityGroup]) -> str:
    """The ground graph as prompt text: one block per entity (in the order given), one
    line per relation with its values (see :mod:`qa.steps._graph_text`)."""
    seen: set[tuple] = set()
    blocks = []
    for group in groups:
        fresh = [e for e in group.triples if (e.s, e.p, e.o) not in seen]
        seen.update((e.s, e.p, e.o) for e in fresh)
        if fresh:
            blocks.append(triple_lines(labelled(fresh)))
    return "\n\n".join(blocks)

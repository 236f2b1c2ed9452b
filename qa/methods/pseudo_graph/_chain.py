"""Multi-hop pseudo-graphs: which pseudo-triples to look up first, and which store entities
a looked-up hop leads to. Pure functions over pseudo-triples and retrieved evidence.

A pseudo-graph for "the nationality of Pierre Curie's son" is a chain: ``Pierre Curie -child->
Jacques Curie -nationality-> French``. The second pseudo-triple's subject is the model's guess
at an intermediate entity, and a wrong guess retrieves nothing useful. So the semantic
query runs hop by hop from the entities the question names; the store entities a hop's
hits lead to (Irène Joliot-Curie) then stand in for the guessed intermediate in the next
hop's query text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Sequence

from ...steps._grounding import normalise_label
from ...steps._result import Evidence
from ._pruning import anchor

PseudoTriple = tuple[str, str, str]


@dataclass(frozen=True)
class Lookup:
    """One pseudo-triple to look up. ``known`` is the end (0 = subject, 2 = object) already
    tied to the store: named in the question, or reached by an earlier hop; ``resolves``
    says whether the other end is a guess that this lookup's hits should replace."""

    triple: PseudoTriple
    known: int
    resolves: bool


def _mentioned(name: str, question: str) -> bool:
    n = normalise_label(name)
    return bool(n) and f" {n} " in f" {question} "


def lookup_plan(triples: Sequence[PseudoTriple], question: str,
                in_store: Collection[str] = ()) -> list[list[Lookup]]:
    """The pseudo-triples in lookup order, hop by hop from the entities the question names.

    Edges count in both directions (the model may write ``actor ACTED_IN film`` for a
    question about the actor). ``in_store`` holds the normalised node names that are store
    entities: when some named nodes are, the others ("darling" in "the gender of Andronikos
    III's darling") are guesses. With no node named in the question, nodes that are no
    triple's object are the starting points; a part of the graph that nothing reaches
    starts from its first triple's subject. A triple from a node to itself (the model named
    the answer after the question's entity) looks its far end up."""
    q = normalise_label(question)
    names = [n for s, _, o in triples for n in (s, o)]
    mentioned = {normalise_label(n) for n in names if _mentioned(n, q)}
    if mentioned & set(in_store):
        mentioned &= set(in_store)
    # "Pierre Curie's son" is in the question too, but it describes a guess rather than naming an entity
    reached = {n for n in mentioned if not any(m != n and _mentioned(m, n) for m in mentioned)}
    if not reached:
        objects = {normalise_label(o) for _, _, o in triples}
        reached = {normalise_label(s) for s, _, _ in triples} - objects
    remaining = list(range(len(triples)))
    levels: list[list[Lookup]] = []
    while remaining:
        level = []
        for i in remaining:
            s, _, o = triples[i]
            s_known, o_known = normalise_label(s) in reached, normalise_label(o) in reached
            if s_known or o_known:
                loop = normalise_label(s) == normalise_label(o)
                level.append((i, Lookup(triples[i], 0 if s_known else 2, loop or not (s_known and o_known))))
        if not level:
            i = remaining[0]
            level = [(i, Lookup(triples[i], 0, True))]
        for i, lookup in level:
            remaining.remove(i)
            reached.update(normalise_label(n) for n in (lookup.triple[0], lookup.triple[2]))
        levels.append([lookup for _, lookup in level])
    return levels


def next_hop_entities(hits: Sequence[Evidence], subject: str, *, limit: int = 5) -> list[tuple[str, str]]:
    """The store entities, as (IRI, label), that the hits for a pseudo-triple about
    ``subject`` lead to.

    Among the hits anchored at the store entity matching ``subject`` best, the relation of
    the best-scoring one is taken as the hop the model meant; every entity at the far end
    of that relation (all of Pierre Curie's children, not just the nearest) is returned,
    best-scoring first, at most ``limit``. Literal values lead nowhere."""
    anchored = [(hit, anchor(hit, subject)) for hit in hits]
    if not anchored:
        return []
    best_match = max(match for _, (_, _, match) in anchored)
    if best_match <= 0.0:
        return []
    on_subject = [(hit, iri) for hit, (iri, _, match) in anchored if match == best_match]
    top_hit, top_iri = max(on_subject, key=lambda pair: pair[0].score or 0.0)
    out: list[tuple[str, str]] = []
    for hit, iri in sorted(on_subject, key=lambda pair: -(pair[0].score or 0.0)):
        if hit.p != top_hit.p or iri != top_iri:
            continue
        far = _far_end(hit, iri)
        if far and far not in out:
            out.append(far)
    return out[:limit]


def _far_end(hit: Evidence, anchor_iri: str) -> tuple[str, str] | None:
    if hit.s == anchor_iri:
        return None if hit.literal or not hit.o_label else (hit.o, hit.o_label)
    return (hit.s, hit.s_label) if hit.s_label else None

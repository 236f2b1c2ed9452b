"""An open answer ("Tell me about X") from several stores, as the pseudo-graph paper's
multisource half does it: the subject is found in every store, the stores that say it is
the same entity (``_identity``) pool their facts, the model sketches once, the sketch is
verified against each of those stores' triple index, and the paragraph is written from
the union, every fact marked with its store. A namesake no store says is the same stays
apart: none of its facts is used, and the answer says it was held apart."""
from __future__ import annotations

from typing import Sequence

from ..open import (DEFAULT_THRESHOLD, GroundGraph, OpenReading, link_subject, number_facts, open_refusal,
                    sketch, subject_evidence, written_answer)
from ..steps._result import Answer
from ._identity import Held, held_as, identity_keys
from ._sources import StoreSource


def open_answer_over(sources: Sequence[StoreSource], question: str, reading: OpenReading, run, *,
                     max_facts: int = 8, threshold: float = DEFAULT_THRESHOLD) -> Answer:
    """A paragraph about the entity ``question`` names, from the facts of every store that
    holds it (or says it is the same as the one that does), or a refusal when none does."""
    run.record("reading", **reading.to_dict())
    members, apart = subject_in_stores(sources, reading)
    run.record("stores", same=[m.to_dict() for m in members], apart=[a.to_dict() for a in apart])
    if not members:
        names = ", ".join(s.name for s in sources)
        answer = open_refusal(question, "not_in_store",
                              f"not in the stores ({names}): no entity is named {reading.subject!r}")
        answer.by_store = [{"store": s.name, "entity": None, "as": "not held"} for s in sources]
        return answer
    by_name = {s.name: s for s in sources}
    sketched = sketch(run, question)
    gathered = [subject_evidence(by_name[m.store].store, by_name[m.store].context.get_index(("triples",)), m.iri,
                                 m.label, sketched, run, threshold=threshold, store_name=m.store) for m in members]
    facts = number_facts(gathered, max_facts=max_facts)
    run.record("ground_graph", subject=[m.to_dict() for m in members],
               facts=[f"{f.text()}  ({f.source}, {f.store})" for f in facts])
    answer = written_answer(question, GroundGraph(members[0].iri, members[0].label, facts), run)
    answer.meant = ([{**m.to_dict(), "same": True} for m in members]
                    + [{**a.to_dict(), "same": False} for a in apart])
    answer.by_store = [_store_entry(s.name, members, apart) for s in sources]
    if not answer.refused:
        cited = {name for f in answer.facts for name in f["stores"]}
        answer.answer_stores = [[s.name for s in sources if s.name in cited]]
    return answer


def subject_in_stores(sources: Sequence[StoreSource], reading: OpenReading) -> tuple[list[Held], list[Held]]:
    """The subject as each store holds it: ``same``, the first store's entity of the name
    and those other stores say are one with it; ``apart``, the namesakes no store joins."""
    named = [(s, link_subject(s.context.get_index(), reading)) for s in sources]
    first = next(((s, found) for s, found in named if found), None)
    if first is None:
        return [], []
    source, (iri, label) = first
    members = [Held(source.name, iri, label)]
    keys = identity_keys(source.store, iri)
    apart = []
    for other, found in named:
        if other is source:
            continue
        same = held_as(other.store, keys)
        if same:
            members.append(Held(other.name, same[0], other.store.label(same[0]) or label))
            keys |= identity_keys(other.store, same[0])
        elif found:
            apart.append(Held(other.name, *found))
    return members, apart


def _store_entry(name: str, members: Sequence[Held], apart: Sequence[Held]) -> dict:
    for held, role in [(m, "subject" if i == 0 else "same entity") for i, m in enumerate(members)] + \
            [(a, "held apart") for a in apart]:
        if held.store == name:
            return {"store": name, "entity": held.iri, "label": held.label, "as": role}
    return {"store": name, "entity": None, "as": "not held"}

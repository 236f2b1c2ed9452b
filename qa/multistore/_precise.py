"""A precise question ("Who directed Alien?") over several stores: the method runs on each
store in turn, each answer executed against that store as with one store, and the answers
are merged. An answer two stores give (the same IRI, the same entity by ``_identity``, or
the same literal) is one answer marked with both stores; every evidence triple is marked
with its store. Nothing is answered that no store's own run answered."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

from ..steps._grounding import normalise_label
from ..steps._result import Answer, Refusal, TokenUsage
from ._identity import identity_keys
from ._sources import StoreSource


@dataclass
class MergedAnswer:
    """One answer of the merged record: its label, IRI and value from the first store that
    gave it, the stores that gave it, and the keys it goes by (``_identity``)."""

    label: str
    iri: str | None
    value: dict | None
    stores: list[str] = field(default_factory=list)
    keys: frozenset[str] = frozenset()


def merge_answers(question: str, method: str, answered: Sequence[tuple[StoreSource, Answer]]) -> Answer:
    """One record from each store's answer (in the stores' order)."""
    merged: list[MergedAnswer] = []
    for source, answer in answered:
        if answer.refused:
            continue
        values = list(answer.values) + [None] * (len(answer.answers) - len(answer.values))
        for label, iri, value in zip(answer.answers, answer.answer_iris, values):
            keys = identity_keys(source.store, iri) if iri else frozenset({"literal:" + normalise_label(str(label))})
            same = next((m for m in merged if m.keys & keys), None)
            if same is None:
                merged.append(MergedAnswer(str(label), iri, value, [source.name], keys))
            elif source.name not in same.stores:
                same.stores.append(source.name)
                same.keys |= keys
    tokens = TokenUsage()
    for _, answer in answered:
        tokens.merge(answer.tokens)
    given = [a for _, a in answered if not a.refused]
    out = Answer(
        question=question, method=method,
        answers=[m.label for m in merged], answer_iris=[m.iri for m in merged], values=[m.value for m in merged],
        answer_stores=[list(m.stores) for m in merged],
        evidence=[replace(e, store=s.name) for s, a in answered for e in a.evidence],
        refusal=None if merged else _refusal(answered),
        parametric=any(a.parametric for a in given),
        query=given[0].query if len(given) == 1 else None,
        shape=next((a.shape for a in given if a.shape), None),
        meant=[{**m, "store": s.name} for s, a in answered for m in a.meant],
        constraints=[{**c, "store": s.name} for s, a in answered for c in a.constraints],
        by_store=[store_entry(s.name, a) for s, a in answered],
        trace={s.name: a.trace for s, a in answered}, tokens=tokens)
    return out


def store_entry(name: str, answer: Answer) -> dict:
    """What one store gave: its answers, or its refusal, and the query it ran."""
    return {"store": name, "method": answer.method, "answers": list(answer.answers),
            "answer_iris": list(answer.answer_iris), "refused": answer.refused,
            "refusal": None if answer.refusal is None else {"reason": answer.refusal.reason,
                                                            "message": answer.refusal.message},
            "query": answer.query, "parametric": answer.parametric, "seconds": round(answer.seconds, 3)}


def _refusal(answered: Sequence[tuple[StoreSource, Answer]]) -> Refusal:
    """No store answered: ``not_in_store`` when every store said so, else the first store's
    reason; the message says what each store said."""
    reasons = [a.refusal.reason for _, a in answered if a.refusal]
    reason = "not_in_store" if reasons and all(r == "not_in_store" for r in reasons) else (reasons or ["no_answer"])[0]
    return Refusal(reason, "; ".join(f"{s.name}: {a.refusal.message}" for s, a in answered if a.refusal))

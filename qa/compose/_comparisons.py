"""Comparisons of two things the question names, enumerated from what the store holds of
both (the last stage of composing): for each relation both entities hold,

* **order**: which of the two has the earlier (lower) or the later (higher) value;
* **equality**: whether they share a value (the same year, language, director);
* **difference**: how far apart their values are (years, numbers);
* **counts**: which holds more (or fewer) values of it, and by how many ("how many more
  films did A direct than B").

Only relations both hold are offered, and only values that order are ordered or
subtracted. Each candidate is computed from the facts fetched here, which are its evidence.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError
from kgstore.terms import is_fact_predicate, is_true

from ..sandbox import run_sparql
from ..steps._result import Answer, Evidence
from ..steps._retrieval import store_labels
from ..steps._values import comparable, is_date, literal_value
from ._reading import LinkedEntity, QuestionReading

KINDS = ("earlier", "later", "same", "difference", "more", "fewer", "count difference")
MAX_FACTS = 400
_XSD = "http://www.w3.org/2001/XMLSchema#"


@dataclass(frozen=True)
class Side:
    """One entity's values of the compared relation, as facts."""

    entity: LinkedEntity
    facts: tuple[Evidence, ...]

    def values(self, backward: bool) -> set[str]:
        return {f.s if backward else f.o for f in self.facts}

    def numbers(self) -> list[float]:
        out = []
        for f in self.facts:
            n = comparable(f.o, f.datatype) if f.literal else None
            if n is not None:
                out.append(n)
        return out


@dataclass(frozen=True)
class Comparison:
    """Two named entities compared on ``relation``: ``kind`` is one of :data:`KINDS`.
    ``answers`` once computed (an entity's label, ``yes``/``no``, or a number)."""

    first: Side
    second: Side
    relation: str
    relation_label: str
    backward: bool
    kind: str
    answers: tuple[str, ...] = ()
    stage: str = "comparison"
    hops: int = 1
    size: int = 1

    @property
    def topic(self) -> LinkedEntity:
        return self.first.entity

    def answer(self, question: str, method: str) -> Answer:
        """The computed answer as the standard record, the compared facts its evidence."""
        evidence = list(self.first.facts[:5]) + list(self.second.facts[:5])
        text = self.answers[0]
        if self.kind in ("earlier", "later", "more", "fewer"):
            winner = self.first.entity if text == self.first.entity.label else self.second.entity
            return Answer(question=question, method=method, answers=[winner.label], answer_iris=[winner.iri],
                          values=[None], evidence=evidence, shape="comparison")
        if self.kind == "same":
            return Answer(question=question, method=method, answers=[text], answer_iris=[None], evidence=evidence,
                          values=[{"value": text, "lexical": "true" if text == "yes" else "false",
                                   "datatype": _XSD + "boolean", "kind": "boolean"}], shape="comparison")
        value = literal_value(text, _XSD + "decimal" if "." in text else _XSD + "integer")
        return Answer(question=question, method=method, answers=[value.text], answer_iris=[None], evidence=evidence,
                      values=[value.to_dict()], shape="comparison")


def pair(reading: QuestionReading) -> tuple[LinkedEntity, LinkedEntity] | None:
    """The two things compared: the best entities of the first two mentions that do not
    overlap, in the order the question names them; None when it names fewer."""
    mentions = sorted(reading.mentions, key=lambda m: m.span[0])
    chosen = []
    for m in mentions:
        if any(m.span[0] < c.span[1] and c.span[0] < m.span[1] for c in chosen):
            continue
        if all(m.best.iri != c.best.iri for c in chosen):
            chosen.append(m)
    return (chosen[0].best, chosen[1].best) if len(chosen) >= 2 else None


def comparisons(store, reading: QuestionReading, *, timeout_s: float) -> list[Comparison]:
    """Every comparison the store can compute of the question's two named things."""
    both = pair(reading)
    if both is None:
        return []
    a, b = both
    facts = {}
    for side, entity in (("a", a), ("b", b)):
        facts[side] = _facts(store, entity.iri, timeout_s)
    labels = store_labels(store, {p for p, _ in facts["a"]} | {p for p, _ in facts["b"]})
    out = []
    for key in sorted(set(facts["a"]) & set(facts["b"])):
        relation, backward = key
        label = labels.get(relation)
        if not label:
            continue
        first, second = Side(a, tuple(facts["a"][key])), Side(b, tuple(facts["b"][key]))
        for kind in KINDS:
            computed = _compute(kind, first, second, backward)
            if computed is not None:
                out.append(Comparison(first, second, relation, label, backward, kind, (computed,)))
    return out


def _compute(kind: str, first: Side, second: Side, backward: bool) -> str | None:
    if kind == "same":
        return "yes" if first.values(backward) & second.values(backward) else "no"
    if kind in ("more", "fewer", "count difference"):
        x, y = len(first.values(backward)), len(second.values(backward))
        if x == y or max(x, y) < 2:
            return None  # one value each is a value, not a count
        if kind == "count difference":
            return str(abs(x - y))
        return (first if (x > y) == (kind == "more") else second).entity.label
    x, y = first.numbers(), second.numbers()
    # one value each, so "earlier" and "how far apart" mean one thing
    if backward or len(x) != 1 or len(y) != 1 or len(first.facts) != 1 or len(second.facts) != 1:
        return None
    if kind == "difference":
        gap = abs(x[0] - y[0])
        dates = is_date(first.facts[0].o, first.facts[0].datatype)
        return f"{int(gap)}" if gap.is_integer() or dates else f"{gap:g}"
    if x[0] == y[0]:
        return None
    low = first if x[0] < y[0] else second
    high = second if low is first else first
    return (low if kind == "earlier" else high).entity.label


def _facts(store, iri: str, timeout_s: float) -> dict[tuple[str, bool], list[Evidence]]:
    query = ("SELECT ?p ?y ?back WHERE {\n"
             f"  {{ <{iri}> ?p ?y . BIND(false AS ?back) }} UNION {{ ?y ?p <{iri}> . BIND(true AS ?back) }}\n"
             f"}} LIMIT {MAX_FACTS}")
    try:
        rows = run_sparql(store, query, timeout_s=timeout_s, max_rows=MAX_FACTS).rows
    except (QueryError, UnsafeQueryError):
        return {}
    raw = [(r["p"].value, is_true(r["back"]), r["y"]) for r in rows
           if isinstance(r.get("p"), ox.NamedNode) and is_fact_predicate(r["p"].value)
           and isinstance(r.get("y"), (ox.NamedNode, ox.Literal))]
    labels = store_labels(store, {iri} | {y.value for *_, y in raw if isinstance(y, ox.NamedNode)})
    out: dict[tuple[str, bool], list[Evidence]] = {}
    for p, back, y in raw:
        literal = isinstance(y, ox.Literal)
        if back and literal:
            continue
        if back:
            fact = Evidence(s=y.value, p=p, o=iri, s_label=labels.get(y.value), o_label=labels.get(iri))
        else:
            fact = Evidence(s=iri, p=p, o=y.value, s_label=labels.get(iri),
                            o_label=None if literal else labels.get(y.value), literal=literal,
                            datatype=y.datatype.value if literal and y.datatype else None)
        out.setdefault((p, back), []).append(fact)
    return out


def comparison_text(c: Comparison) -> str:
    """The comparison in words, for the encoder and the model (pure)."""
    a, b, label = c.first.entity.label, c.second.entity.label, c.relation_label
    if c.kind == "same":
        return f"do {a} and {b} have the same {label}"
    if c.kind == "difference":
        return f"how far apart (the difference between) the {label} of {a} and of {b}"
    if c.kind == "count difference":
        return f"how many more {label} (the difference between the numbers of {label}) {a} has than {b}"
    if c.kind in ("more", "fewer"):
        return f"which of {a} and {b} has {c.kind} {label}"
    which = "earlier (older, lower, first)" if c.kind == "earlier" else "later (newer, higher, last)"
    return f"which of {a} and {b} has the {which} {label}"


__all__ = ["Comparison", "Side", "comparisons", "comparison_text", "pair", "KINDS"]

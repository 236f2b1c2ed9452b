"""An entity's facts grouped by relation and direction: what a comparison, a superlative
or a yes/no check reads. Each group knows its values as evidence, how many there are, and
whether they order (numbers, dates, or entities named as numbers, such as a year "1999").

Which group a question means is chosen by the encoder against the question's words, among
the groups the store actually holds: the store enumerates, the encoder picks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError
from kgstore.terms import is_fact_predicate, is_true

from ..sandbox import run_sparql
from ..steps._result import Evidence
from ..steps._retrieval import store_labels
from ..steps._values import comparable, is_date

MAX_FACTS = 2000
# English words that make a relation's numbers points in time ("release year")
TIME_WORDS = {"year", "date", "time", "born", "birth", "death", "founded", "inception", "established", "released",
              "published", "when"}

AttributeKey = tuple[str, bool]  # (relation IRI, backward: the entity is the object)


@dataclass
class Attribute:
    """The facts of one relation, one direction, of one entity."""

    relation: str
    backward: bool
    label: str
    facts: list[Evidence] = field(default_factory=list)

    @property
    def key(self) -> AttributeKey:
        return (self.relation, self.backward)

    def other_ends(self) -> list[str]:
        """The value of each fact: the object, or the subject when read backwards."""
        return [f.s if self.backward else f.o for f in self.facts]

    def numbers(self) -> list[float]:
        """Each fact's value as a number to order by (dates as years), where it reads as one."""
        out = []
        for f in self.facts:
            if self.backward:
                text, datatype = f.s_label or "", None
            elif f.literal:
                text, datatype = f.o, f.datatype
            else:
                text, datatype = f.o_label or "", None
            value = comparable(text, datatype)
            if value is not None:
                out.append(value)
        return out

    @property
    def ordered(self) -> bool:
        """Every value orders (a number or a date)."""
        return bool(self.facts) and len(self.numbers()) == len(self.facts)

    @property
    def dates(self) -> bool:
        """The values are points in time: dates, or numbers of a relation named as one
        ("release year"), for which "older" is the smaller value."""
        if TIME_WORDS & set(self.label.lower().replace("_", " ").split()):
            return True
        return any(is_date(f.o, f.datatype) for f in self.facts if f.literal and not self.backward)

    @property
    def literal(self) -> bool:
        return any(f.literal for f in self.facts) and not self.backward


def _query(iri: str) -> str:
    return ("SELECT ?p ?y ?back WHERE {\n"
            f"  {{ <{iri}> ?p ?y . BIND(false AS ?back) }} UNION {{ ?y ?p <{iri}> . BIND(true AS ?back) }}\n"
            f"}} LIMIT {MAX_FACTS}")


def entity_attributes(store, iri: str, *, timeout_s: float = 5.0) -> dict[AttributeKey, Attribute]:
    """The facts of ``iri`` both ways, grouped by (relation, backward), labelled."""
    try:
        rows = run_sparql(store, _query(iri), timeout_s=timeout_s, max_rows=MAX_FACTS).rows
    except (QueryError, UnsafeQueryError):
        return {}
    raw = []
    for row in rows:
        p, y = row.get("p"), row.get("y")
        if not isinstance(p, ox.NamedNode) or not is_fact_predicate(p.value) or y is None:
            continue
        if isinstance(y, ox.BlankNode):
            continue
        raw.append((p.value, is_true(row["back"]), y))
    labels = store_labels(store, {iri} | {p for p, _, _ in raw}
                          | {y.value for _, _, y in raw if isinstance(y, ox.NamedNode)})
    out: dict[AttributeKey, Attribute] = {}
    for p, back, y in raw:
        label = labels.get(p)
        if not label:
            continue
        attr = out.setdefault((p, back), Attribute(p, back, label))
        literal = isinstance(y, ox.Literal)
        if back:
            fact = Evidence(s=y.value, p=p, o=iri, s_label=labels.get(y.value), p_label=label,
                            o_label=labels.get(iri))
        else:
            fact = Evidence(s=iri, p=p, o=y.value, s_label=labels.get(iri), p_label=label,
                            o_label=None if literal else labels.get(y.value), literal=literal,
                            datatype=y.datatype.value if literal and y.datatype else None)
        attr.facts.append(fact)
    return out


def value_roles(store, iri: str, *, timeout_s: float = 5.0) -> set[AttributeKey]:
    """The (relation, backward) roles in which ``iri`` is the value of some other entity's
    fact: Chile is the value of "country" of the Andes, so "is Everest in Chile" is
    a question about Everest's country."""
    query = ("SELECT DISTINCT ?p ?back WHERE {\n"
             f"  {{ ?x ?p <{iri}> . BIND(false AS ?back) }} UNION {{ <{iri}> ?p ?x . FILTER(isIRI(?x)) "
             "BIND(true AS ?back) }\n} LIMIT 500")
    try:
        rows = run_sparql(store, query, timeout_s=timeout_s, max_rows=500).rows
    except (QueryError, UnsafeQueryError):
        return set()
    return {(r["p"].value, is_true(r["back"])) for r in rows
            if isinstance(r.get("p"), ox.NamedNode) and is_fact_predicate(r["p"].value)}


def rank_attributes(embed: Callable[[list[str]], "object"], text: str, attributes: Sequence[Attribute],
                    *, count: Sequence[bool] = ()) -> list[tuple[float, int]]:
    """(similarity, position) of each attribute's label against ``text``, best first. A
    count reads as "number of <label>" ("more countries" is the number of "country" facts)."""
    if not attributes:
        return []
    counts = list(count) or [False] * len(attributes)
    texts = [f"number of {a.label}" if c else a.label for a, c in zip(attributes, counts)]
    vectors = embed([text] + texts)
    sims = (vectors[1:] @ vectors[0]).tolist()
    return sorted(((float(s), i) for i, s in enumerate(sims)), key=lambda x: -x[0])


__all__ = ["Attribute", "AttributeKey", "entity_attributes", "value_roles", "rank_attributes"]

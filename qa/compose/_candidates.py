"""Query-graph candidates, enumerated from what the store holds (STAGG, Yih et al. 2015;
Lan and Jiang 2020), in stages:

1. **Core chains** of one to three hops from each candidate topic entity, through
   mediators, as the store's relation paths (:func:`qa.steps._paths.relation_paths`).
2. **Constraints** on a chain's answer or on a node it passes: another entity the question
   mentions, joined by whatever relation the store has between them; a value the question
   writes, compared with a date or number the node holds.
3. **Aggregations**: the first or last by a date or number the node holds, when the chain
   answers more than one thing; a count.

Only what exists is enumerated, and every candidate is executed: its answers come from the
store, so none can be invented, and a candidate that returns nothing is never offered.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError
from kgstore.terms import is_fact_predicate, is_true

from ..sandbox import run_sparql
from ..steps import _sparql_build as sb
from ..steps._paths import RelationPath
from ..steps._query_graph import ValueConstraint
from ..steps._retrieval import store_labels
from ._reading import LinkedEntity

# the datatypes a node's value may be ordered or compared by
ORDERED_TYPES = ("date", "dateTime", "gYear", "gYearMonth", "integer", "decimal", "double", "float")
_XSD = "http://www.w3.org/2001/XMLSchema#"


@dataclass(frozen=True)
class EntityTie:
    """A constraint tying a node of the chain (``node``, a variable) to ``entity`` by
    ``relation`` (read from the node to the entity unless ``backward``), or, ``negated``,
    keeping only the nodes the store does not so tie."""

    node: str
    relation: str
    relation_label: str
    backward: bool
    entity: LinkedEntity
    # the node must *not* be so tied ("which of X's films are not comedies")
    negated: bool = False


@dataclass(frozen=True)
class ValueTie:
    """A constraint comparing a value the node holds by ``relation`` with a constant the
    question writes."""

    node: str
    relation: str
    relation_label: str
    value: ValueConstraint


@dataclass(frozen=True)
class SpanTie:
    """A constraint keeping the nodes whose span covers the year the question writes: the
    node holds a date by ``start`` in or before it, and no date by ``end`` before it (a
    term held from 2010 to 2014, or one still held: "the governor of Virginia in 2011")."""

    node: str
    start: str
    end: str
    start_label: str
    end_label: str
    value: ValueConstraint


@dataclass(frozen=True)
class Ordering:
    """Keep the first (``ascending``) or last of the chain's answers by the value the
    ``node`` holds by ``relation``, or by the node's own value when ``relation`` is empty
    (the chain answers years, and the question asks for the first one)."""

    node: str
    relation: str
    relation_label: str
    ascending: bool


@dataclass(frozen=True)
class QueryCandidate:
    """One query graph: a core ``path`` from its ``topic``, optional constraints and an
    aggregation; ``answers`` (labels, a sample) and ``size`` once executed."""

    topic: LinkedEntity
    path: RelationPath
    ties: tuple[EntityTie | ValueTie | SpanTie, ...] = ()
    ordering: Ordering | None = None
    count: bool = False
    answers: tuple[str, ...] = ()
    size: int = 0
    stage: str = "chain"
    # the other entities the question names: never the answer ("who plays X in F" is not F)
    named: tuple[str, ...] = ()
    # every answer is a literal (a year, a number): it orders by itself
    literal: bool = False

    @property
    def hops(self) -> int:
        return self.path.hops

    def nodes(self) -> list[str]:
        """The chain's variables after the topic: its middles, then the answer."""
        return [f"?m{i + 1}" for i in range(self.path.hops - 1)] + ["?answer"]

    def query(self) -> sb.BuiltQuery:
        built = self.path.query(answer="?answer", exclude=[self.topic.iri, *self.named])
        patterns = list(built.steps[0][0])
        filters = list(built.filters)
        for tie in self.ties:
            if isinstance(tie, EntityTie):
                ent = f"<{tie.entity.iri}>"
                pattern = (sb.TriplePattern(ent, f"<{tie.relation}>", tie.node) if tie.backward
                           else sb.TriplePattern(tie.node, f"<{tie.relation}>", ent))
                if tie.negated:
                    filters.append(f"FILTER NOT EXISTS {{ {pattern.text()} }}")
                else:
                    patterns.append(pattern)
                filters += sb.exclude_filter("?answer", [tie.entity.iri])
            elif isinstance(tie, SpanTie):
                var, year = f"{tie.node}_s", f"{tie.value.low:g}"
                patterns.append(sb.TriplePattern(tie.node, f"<{tie.start}>", var))
                filters.append(f"FILTER(YEAR({var}) <= {year})")
                filters.append(f"FILTER NOT EXISTS {{ {tie.node} <{tie.end}> {var}_e . FILTER(YEAR({var}_e) < {year}) }}")
            else:
                var = f"{tie.node}_v"
                patterns.append(sb.TriplePattern(tie.node, f"<{tie.relation}>", var))
                filters.append(value_filter(var, tie.value))
        tail = None
        if self.ordering:
            var = f"{self.ordering.node}_o" if self.ordering.relation else self.ordering.node
            if self.ordering.relation:
                patterns.append(sb.TriplePattern(self.ordering.node, f"<{self.ordering.relation}>", var))
            tail = f"ORDER BY {'ASC' if self.ordering.ascending else 'DESC'}({var}) LIMIT 1"
        return sb.BuiltQuery("?answer", [[patterns]], filters, tail=tail, count=self.count)


def value_filter(var: str, value: ValueConstraint) -> str:
    """A FILTER comparing ``var`` with the question's constant (by year for a year)."""
    # a year is a date's year, or a plain number where the store writes years as numbers
    term = f"COALESCE(YEAR({var}), <{_XSD}integer>({var}))" if value.year else f"<{_XSD}double>({var})"
    if value.op == "between":
        return f"FILTER({term} >= {value.low:g} && {term} <= {value.high:g})"
    return f"FILTER({term} {value.op} {value.low:g})"


def execute(store, candidate: QueryCandidate, *, timeout_s: float, sample: int = 5,
            max_rows: int = 2000) -> QueryCandidate | None:
    """``candidate`` with its answers, or None when it returns nothing an answer may be
    (no rows, only mediators or blank nodes, a count of zero)."""
    query = candidate.query()
    if candidate.count:
        rows, _ = sb.execute(store, query, timeout_s=timeout_s, max_rows=1)
        if not rows:
            return None
        count = int(float(rows[0]["count"].value))
        return replace(candidate, answers=(str(count),), size=1)
    rows, _ = sb.execute(store, replace(query, count=False), timeout_s=timeout_s, max_rows=max_rows)
    terms = sb.answer_terms(store, query, rows, limit=max_rows)
    if not terms:
        return None
    return replace(candidate, answers=tuple(t.label for t in terms[:sample]), size=len(terms),
                   literal=all(t.iri is None for t in terms))


def core_candidates(topic: LinkedEntity, paths: Sequence[RelationPath],
                    named: Sequence[str] = ()) -> list[QueryCandidate]:
    """A candidate for each path from ``topic``; ``named``: the question's other entities."""
    named = tuple(iri for iri in named if iri != topic.iri)
    return [QueryCandidate(topic, p, named=named) for p in paths]


def entity_ties(store, candidate: QueryCandidate, others: Sequence[LinkedEntity], *,
                timeout_s: float, negated: bool = False) -> list[QueryCandidate]:
    """``candidate`` constrained by each relation the store has between one of its nodes and
    one of the ``others`` the question mentions; with ``negated``, also by the absence of
    each such tie (only a relation some of its nodes hold is ever negated)."""
    out = []
    base = candidate.query()
    body = " ".join(p.text() for p in base.patterns()) + " " + " ".join(base.filters)
    for node in candidate.nodes():
        for other in others:
            if other.iri == candidate.topic.iri:
                continue
            sparql = (f"SELECT DISTINCT ?pc ?back WHERE {{ {body} "
                      f"{{ {node} ?pc <{other.iri}> BIND(false AS ?back) }} UNION "
                      f"{{ <{other.iri}> ?pc {node} BIND(true AS ?back) }} }} LIMIT 20")
            for pc, back in _relation_rows(store, sparql, timeout_s):
                out.append((node, pc, back, other))
    labels = store_labels(store, [pc for _, pc, _, _ in out])
    return [replace(candidate, ties=candidate.ties + (EntityTie(node, pc, labels.get(pc, _local(pc)), back, other,
                                                                negated=negative),),
                    stage="negation" if negative else "entity constraint")
            for node, pc, back, other in out
            # a denial is of the answers ("X's films that are not comedies"), not of a link
            for negative in ((False, True) if negated and node == "?answer" else (False,))]


def conjunctions(store, candidate: QueryCandidate, *, timeout_s: float) -> list[QueryCandidate]:
    """``candidate`` with its answer tied back to its topic by a second relation the store
    holds between them ("the films X both directed and acted in": directed by X, and
    starring X); the chain's own last relation is not a second one."""
    base = candidate.query()
    body = " ".join(p.text() for p in base.patterns()) + " " + " ".join(base.filters)
    topic = candidate.topic
    sparql = (f"SELECT DISTINCT ?pc ?back WHERE {{ {body} "
              f"{{ ?answer ?pc <{topic.iri}> BIND(false AS ?back) }} UNION "
              f"{{ <{topic.iri}> ?pc ?answer BIND(true AS ?back) }} }} LIMIT 20")
    own = candidate.path.steps[0] if candidate.path.hops == 1 else None
    found = [(pc, back) for pc, back in _relation_rows(store, sparql, timeout_s)
             # the one-hop chain read from the answer's side: "?answer directed_by X" is the chain
             if own is None or (pc, not back) != own]
    labels = store_labels(store, [pc for pc, _ in found])
    return [replace(candidate, ties=candidate.ties + (EntityTie("?answer", pc, labels.get(pc, _local(pc)), back, topic),),
                    stage="conjunction") for pc, back in found]


def ordered_relations(store, candidate: QueryCandidate, *, timeout_s: float) -> list[tuple[str, str, str]]:
    """(node, relation, label) for each date or number a node of ``candidate`` holds."""
    base = candidate.query()
    body = " ".join(p.text() for p in base.patterns()) + " " + " ".join(base.filters)
    types = ", ".join(f"<{_XSD}{t}>" for t in ORDERED_TYPES)
    found = []
    for node in candidate.nodes():
        sparql = (f"SELECT DISTINCT ?pd WHERE {{ {body} {node} ?pd ?d . "
                  f"FILTER(isLiteral(?d) && datatype(?d) IN ({types})) }} LIMIT 20")
        try:
            rows = run_sparql(store, sparql, timeout_s=timeout_s, max_rows=20).rows
        except (QueryError, UnsafeQueryError):
            continue
        for row in rows:
            pd = row.get("pd")
            if isinstance(pd, ox.NamedNode) and is_fact_predicate(pd.value):
                found.append((node, pd.value))
    labels = store_labels(store, [pd for _, pd in found])
    return [(node, pd, labels.get(pd, _local(pd))) for node, pd in found]


def value_ties(candidate: QueryCandidate, values: Sequence[ValueConstraint],
               relations: Sequence[tuple[str, str, str]]) -> list[QueryCandidate]:
    """``candidate`` with each value the question writes compared with each date or number
    its nodes hold."""
    return [replace(candidate, ties=candidate.ties + (ValueTie(node, pd, label, value),), stage="value constraint")
            for value in values for node, pd, label in relations]


def span_ties(candidate: QueryCandidate, values: Sequence[ValueConstraint],
               relations: Sequence[tuple[str, str, str]]) -> list[QueryCandidate]:
    """``candidate`` with each year the question writes inside the span of each pair of
    dates one of its nodes holds (the first of the pair its start, the other its end; a
    pair read the wrong way round keeps nothing, or what began and ended that year)."""
    years = [v for v in values if v.year and v.op == "="]
    return [replace(candidate, ties=candidate.ties + (SpanTie(node, start, end, start_label, end_label, value),),
                    stage="time span")
            for value in years
            for node, start, start_label in relations for other, end, end_label in relations
            if other == node and end != start]


def orderings(candidate: QueryCandidate, relations: Sequence[tuple[str, str, str]]) -> list[QueryCandidate]:
    """``candidate``'s first and last answer by each date or number its nodes hold."""
    return [replace(candidate, ordering=Ordering(node, pd, label, ascending), stage="superlative")
            for node, pd, label in relations for ascending in (True, False)]


def value_orderings(candidate: QueryCandidate) -> list[QueryCandidate]:
    """``candidate``'s first and last answer when its answers are values that order."""
    return [replace(candidate, ordering=Ordering("?answer", "", "value", ascending), stage="superlative value")
            for ascending in (True, False)]


def counted(candidate: QueryCandidate) -> QueryCandidate:
    return replace(candidate, count=True, stage="count")


def _relation_rows(store, sparql: str, timeout_s: float) -> list[tuple[str, bool]]:
    try:
        rows = run_sparql(store, sparql, timeout_s=timeout_s, max_rows=20).rows
    except (QueryError, UnsafeQueryError):
        return []
    out = []
    for row in rows:
        pc = row.get("pc")
        if isinstance(pc, ox.NamedNode) and is_fact_predicate(pc.value):
            out.append((pc.value, is_true(row["back"])))
    return out


def _local(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1].replace("_", " ").replace(".", " ")


__all__ = ["QueryCandidate", "EntityTie", "ValueTie", "SpanTie", "Ordering", "execute", "core_candidates", "entity_ties", "conjunctions",
           "ordered_relations", "value_ties", "span_ties", "orderings", "value_orderings", "counted", "value_filter"]

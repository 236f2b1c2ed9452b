"""Build SPARQL from resolved pieces, run it in the sandbox, and read answers and evidence
from its rows: what the SPARQL-building methods (pgmr, memq) share.

A query is a list of *steps*; a step is one or more *alternatives* joined with ``UNION``
(memq recalls near-synonymous relations that way); an alternative is a list of triple
patterns whose terms are variables (``?f``) or IRIs (``<http://...>``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError

from ..sandbox import run_sparql
from ._answering import rows_answer
from ._grounding import StoreTerm
from ._result import Evidence
from ._retrieval import store_labels
from ._value_details import literal_details
from ._values import literal_value


@dataclass(frozen=True)
class TriplePattern:
    s: str
    p: str
    o: str

    def text(self) -> str:
        return f"{self.s} {self.p} {self.o} ."


@dataclass
class BuiltQuery:
    """A query to run: ``steps`` of alternatives of patterns, extra ``filters`` (SPARQL
    text), the answer variable, and an optional ORDER BY ... LIMIT ``tail``."""

    answer: str
    steps: list[list[list[TriplePattern]]]
    filters: list[str] = field(default_factory=list)
    tail: str | None = None
    count: bool = False

    def patterns(self) -> list[TriplePattern]:
        return [p for step in self.steps for alt in step for p in alt]

    def render(self, *, select_all: bool = False) -> str:
        lines = []
        for step in self.steps:
            if len(step) == 1:
                lines += [p.text() for p in step[0]]
            else:
                lines.append(" UNION ".join("{ " + " ".join(p.text() for p in alt) + " }" for alt in step))
        lines += self.filters
        if select_all:
            projection = "*"
        elif self.count:
            projection = f"(COUNT(DISTINCT {self.answer}) AS ?count)"
        else:
            projection = f"DISTINCT {self.answer}"
        tail = f"\n{self.tail}" if self.tail else ""
        return "SELECT " + projection + " WHERE {\n  " + "\n  ".join(lines) + "\n}" + tail


# the rows read to order answers by the paths that reach them (a hub's thousands of rows
# are not all read; the first ones order what is there)
SUPPORT_ROWS = 2000


def exclude_filter(var: str, iris: Sequence[str]) -> list[str]:
    """A FILTER keeping ``iris`` (the question's own entities) out of ``var``: "which films
    share a director with Milk" is not answered by Milk."""
    iris = list(dict.fromkeys(iris))
    return ["FILTER(" + " && ".join(f"{var} != <{iri}>" for iri in iris) + ")"] if iris else []


def execute(store, query: BuiltQuery, *, timeout_s: float, max_rows: int) -> tuple[list[dict], str | None]:
    """The rows that answer (for a COUNT, a count above zero) and the error text, if any."""
    try:
        result = run_sparql(store, query.render(), timeout_s=timeout_s, max_rows=max_rows)
    except (QueryError, UnsafeQueryError) as exc:
        return [], str(exc)
    var = "count" if query.count else query.answer.lstrip("?")
    rows = [r for r in result.rows if var in r]
    if query.count:
        rows = [r for r in rows if _number(r[var]) > 0]
    return rows, None


def answer_values(store, values: Sequence) -> list:
    """``values`` without mediators (a film performance, a statement node) and blank nodes:
    those are never an answer; a chain walks through them to the value they hold."""
    joining = store.mediators(v.value for v in values if isinstance(v, ox.NamedNode))
    return [v for v in values if not isinstance(v, ox.BlankNode)
            and not (isinstance(v, ox.NamedNode) and v.value in joining)]


def answering_rows(store, query: BuiltQuery, rows: list[dict]) -> list[dict]:
    """``rows`` without those whose answer is a mediator or a blank node: a query that ends
    on a film performance ("what part did X play in Y", drafted as X's films in Y) has
    rows but no answer, and the next reading of the draft is tried instead."""
    if query.count:
        return rows
    var = query.answer.lstrip("?")
    kept = set(answer_values(store, list(dict.fromkeys(r[var] for r in rows if var in r))))
    return [r for r in rows if r.get(var) in kept]


def answer_terms(store, query: BuiltQuery, rows: list[dict], *, limit: int) -> list[StoreTerm]:
    """The answer variable's values as store terms (IRIs labelled from the catalog)."""
    var = "count" if query.count else query.answer.lstrip("?")
    values = list(dict.fromkeys(r[var] for r in rows if var in r))
    # each IRI is a term of its own, so no more than the first ``limit`` are ever labelled
    # (a path into a hub returns thousands of rows)
    values = answer_values(store, values)
    labels = store_labels(store, [v.value for v in values if isinstance(v, ox.NamedNode)][:limit])
    terms: dict[StoreTerm, None] = {}
    for v in values:
        if len(terms) == limit:
            break
        if isinstance(v, ox.NamedNode):
            term = StoreTerm(labels.get(v.value) or v.value, v.value)
        elif isinstance(v, ox.Literal):
            value = literal_value(v.value, v.datatype.value if v.datatype else None)
            term = StoreTerm(value.text, None, value)
        else:
            continue
        terms.setdefault(term)
    return list(terms)


def supporting_rows(store, query: BuiltQuery, *, timeout_s: float, limit: int) -> list[dict]:
    """The rows of ``SELECT *`` (at most ``limit``): every way the query's patterns are
    met, each answer once per path to it."""
    try:
        return run_sparql(store, query.render(select_all=True), timeout_s=timeout_s, max_rows=limit).rows
    except (QueryError, UnsafeQueryError):
        return []


def by_support(query: BuiltQuery, terms: list[StoreTerm], rows: list[dict]) -> list[StoreTerm]:
    """``terms`` with those more ``rows`` reach first (a stable sort: ties keep their
    order, the model's marks first where it marked them). Mark Hamill plays Luke
    Skywalker in three films, a voice actor in one: the answer more facts support leads.
    A query that orders its own rows (ORDER BY … LIMIT) or counts keeps its order."""
    if query.count or query.tail or len(terms) < 2:
        return terms
    var = query.answer.lstrip("?")
    support: dict[str, int] = {}
    for row in rows:
        value = row.get(var)
        if value is not None:
            support[value.value] = support.get(value.value, 0) + 1
    return sorted(terms, key=lambda t: -support.get(t.iri if t.iri else (t.value.lexical if t.value else t.label), 0))


def evidence(store, query: BuiltQuery, *, timeout_s: float, limit: int = 20,
             rows: list[dict] | None = None) -> list[Evidence]:
    """The query's patterns instantiated with the rows of ``SELECT *`` (the first ``limit``
    of ``rows`` when given): the store facts each answer rests on."""
    if rows is None:
        rows = supporting_rows(store, query, timeout_s=timeout_s, limit=limit)
    rows = rows[:limit]
    facts = []
    for row in rows:
        for p in query.patterns():
            s, o = _bound(p.s, row), _bound(p.o, row)
            if isinstance(s, ox.NamedNode) and o is not None and p.p.startswith("<"):
                facts.append((s.value, p.p[1:-1], o))
    iris = {s for s, _, _ in facts} | {p for _, p, _ in facts} | {o.value for *_, o in facts
                                                                  if isinstance(o, ox.NamedNode)}
    labels = store_labels(store, iris)
    out, seen = [], set()
    for s, p, o in facts:
        if (s, p, o.value) in seen or isinstance(o, ox.BlankNode):
            continue
        seen.add((s, p, o.value))
        literal = isinstance(o, ox.Literal)
        out.append(Evidence(s=s, p=p, o=o.value, s_label=labels.get(s), p_label=labels.get(p),
                            o_label=None if literal else labels.get(o.value), literal=literal,
                            datatype=o.datatype.value if literal and o.datatype else None))
    return out


def query_answer(store, question: str, method: str, query: BuiltQuery, rows: list[dict], *, limit: int,
                 timeout_s: float):
    """The answer of an executed query: its answer terms, the instantiated patterns as
    evidence, and the query itself."""
    support = supporting_rows(store, query, timeout_s=timeout_s, limit=SUPPORT_ROWS)
    facts = evidence(store, query, timeout_s=timeout_s, rows=support)
    terms = by_support(query, answer_terms(store, query, rows, limit=limit), support)
    terms = [with_details(store, t, facts) for t in terms]
    result = rows_answer(question, method, terms, facts)
    result.query = query.render()
    return result


def with_details(store, term: StoreTerm, facts: list[Evidence]) -> StoreTerm:
    """A literal answer with the unit and precision its statement node gives, if any."""
    if term.value is None:
        return term
    fact = next((f for f in facts if f.literal and f.o == term.value.lexical), None)
    if fact is None:
        return term
    unit, precision = literal_details(store, fact.s, fact.p, term.value.lexical)
    if not unit and not precision:
        return term
    value = literal_value(term.value.lexical, term.value.datatype, unit=unit, precision=precision)
    return StoreTerm(value.text, None, value)


def _bound(term: str, row: dict):
    if term.startswith("?"):
        return row.get(term[1:])
    if term.startswith("<"):
        return ox.NamedNode(term[1:-1])
    return None


def _number(term) -> float:
    try:
        return float(term.value)
    except (AttributeError, ValueError):
        return 0.0


__all__ = ["TriplePattern", "BuiltQuery", "exclude_filter", "execute", "answer_values", "answering_rows", "answer_terms", "evidence", "query_answer",
           "supporting_rows", "by_support", "SUPPORT_ROWS"]

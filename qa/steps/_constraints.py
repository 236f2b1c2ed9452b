"""Constraints grounded on a chain's answers, and a value checked against a constant: the
step after the core chain in the query graph (:mod:`qa.steps._query_graph`).

The store enumerates what each constraint could mean, and executing decides:

* **an entity constraint** ("comedies", "Asian", "starring Y"): the relations that join
  the chain's answers to the entity, either way, counted per relation; the relation that
  joins the most answers applies (the encoder breaks ties against the question);
* **a value constraint** ("before 1980", "over 8,000 m"): the relations from the chain's
  answers to literal values of the constant's kind (dates and years for a year, numbers
  for a quantity), ranked by the encoder against the question's words and by how many
  answers hold them; the best is applied as a FILTER.

A constraint no relation can carry is not applied, and the answer says so: nothing the
question asked for is dropped in silence. The constrained query replaces the chain's, so
a count counts only what meets the constraints and a superlative orders only those.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError

from ..sandbox import run_sparql
from ._query_graph import EntityConstraint, Grounded, QueryGraph, ValueConstraint
from ._result import Answer, Evidence, Refusal
from ._retrieval import similarities, store_labels
from ._values import XSD

_SELECT_DISTINCT = re.compile(r"^\s*SELECT\s+DISTINCT\s+(\?\w+)\s+WHERE\s*\{", re.I | re.S)
_DATES = {XSD + "date", XSD + "dateTime", XSD + "dateTimeStamp", XSD + "gYear", XSD + "gYearMonth"}
_NUMBERS = {XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "short",
                              "nonNegativeInteger", "positiveInteger")}
# A relation must reach this share of the chain's answers to carry a value constraint
# ("released before 1980" is read along a relation most of the films hold)
VALUE_COVERAGE = 0.3
# How much coverage counts against the encoder's fit when ranking value relations
COVERAGE_WEIGHT = 0.3
MAX_RELATIONS = 40
# the numbers a year stored as a plain number may be
YEARS = (1000, 2100)
# the refusal of a list none of whose answers meets the constraints: a count of it is 0
NONE_MEETS = "none_meets"
EVIDENCE = 20


def chain_body(query: str | None) -> tuple[str, str] | None:
    """The answer variable and WHERE body of a chain's ``SELECT DISTINCT ?x WHERE {…}``."""
    if not query:
        return None
    m = _SELECT_DISTINCT.match(query)
    if not m:
        return None
    end = query.rfind("}")
    if end <= m.end():
        return None
    return m.group(1), query[m.end():end].strip()


def _rows(store, query: str, timeout_s: float, max_rows: int = 1000) -> list[dict]:
    try:
        return run_sparql(store, query, timeout_s=timeout_s, max_rows=max_rows).rows
    except (QueryError, UnsafeQueryError):
        return []


def value_expression(var: str, datatype: str | None, year: bool) -> str | None:
    """The SPARQL expression a constant is compared with: a date's year for a year, the
    number itself for a number or a year stored as one; None when the kinds differ."""
    if datatype in _DATES:
        return f"YEAR({var})" if year else None
    if datatype in _NUMBERS:
        return var
    return None


def apply_constraints(store, index, chain: Answer, graph: QueryGraph, run, *, timeout_s: float = 5.0) -> Answer:
    """``chain`` with ``graph``'s constraints applied to its answers, each recorded in
    ``graph.grounded`` (applied, or why not); the answer's query becomes the constrained one."""
    if chain.refused or not graph.constraints:
        return chain
    read = chain_body(chain.query)
    if read is None or not chain.answers:
        graph.grounded = [Grounded(c, False, why="the chain's answer is not a list to constrain")
                          for c in graph.constraints]
        return _with_record(chain, graph, run)
    var, body = read
    extra: list[str] = []
    keys = [_answer_key(chain, i) for i in range(len(chain.answers))]
    total = len(set(keys))
    # a name read as a literal may be the name of an entity the chain runs through (the film
    # of "X's character in F", joined by the method through the performance)
    named_in_chain = {label.casefold() for label in store_labels(store, iris_in(body)).values() if label}
    for constraint in graph.constraints:
        if isinstance(constraint, EntityConstraint) and (
                constraint.term in body or any(f"<{iri}>" in body for iri, _ in constraint.namesakes)
                or (constraint.literal and constraint.label.casefold() in named_in_chain)):
            continue  # the chain runs through it already (or through a namesake the method chose)
        current = body + "\n  " + "\n  ".join(extra)
        if isinstance(constraint, EntityConstraint):
            named = _names_a_chain_relation(store, body, constraint)
            if named:
                # "the capitals of …" along `capital`: the word names the chain, not a restriction
                graph.grounded.append(Grounded(constraint, False, why=f"names the chain's relation {named!r}"))
                continue
            grounded, pattern = max(
                (_ground_entity(store, index, var, current, c, graph.question, total, timeout_s)
                 for c in [constraint] + [replace(constraint, iri=iri, label=label, namesakes=())
                                          for iri, label in constraint.namesakes]),
                key=lambda found: found[0].kept or 0)
        else:
            grounded, pattern = _ground_value(store, index, var, current, constraint, graph.question, total,
                                              timeout_s)
        graph.grounded.append(grounded)
        # a constraint every answer meets changes nothing: the chain's query stays as it is
        if pattern and grounded.kept != total:
            extra += pattern
    if not extra:
        return _with_record(chain, graph, run)
    where = body + "\n  " + "\n  ".join(extra)
    query = f"SELECT DISTINCT {var} WHERE {{\n  {where}\n}}"
    rows = _rows(store, f"SELECT DISTINCT * WHERE {{\n  {where}\n}}", timeout_s, max_rows=5000)
    kept = {r[var[1:]].value for r in rows if var[1:] in r}
    facts = _constraint_facts(store, rows, var, graph)
    keep = [i for i, key in enumerate(keys) if key in kept]
    out = Answer(question=chain.question, method=chain.method,
                 answers=[chain.answers[i] for i in keep], answer_iris=[chain.answer_iris[i] for i in keep],
                 evidence=([e for e in chain.evidence if e.s in kept or e.o in kept] + facts)[:EVIDENCE * 2],
                 values=[chain.values[i] for i in keep] if chain.values else [],
                 query=query, shape=chain.shape, meant=chain.meant)
    if not keep:
        applied = "; ".join(g.constraint.words for g in graph.grounded if g.applied)
        out.refusal = Refusal(NONE_MEETS, f"none of the {total} answers meets {applied!r} in the store")
    return _with_record(out, graph, run)


_IRI = re.compile(r"<([^<>\s]+)>")
_VAR = re.compile(r"\?\w+")


def iris_in(sparql: str) -> list[str]:
    """The IRIs a query's text writes (``<…>``)."""
    return _IRI.findall(sparql)


def _names_a_chain_relation(store, body: str, c: EntityConstraint) -> str | None:
    """The label of a relation the chain walks that a common word (not written as a name)
    names too ("capitals" and `capital`, "countries" and `country`), or None."""
    if c.written_as_name:
        return None
    words = {_stem(w) for w in re.findall(r"[a-z]+", f"{c.words} {c.label}".lower())}
    labels = store_labels(store, iris_in(body))
    for label in labels.values():
        if words & {_stem(w) for w in re.findall(r"[a-z]+", label.lower())}:
            return label
    return None


def _stem(word: str) -> str:
    for ending in ("ies", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[:-len(ending)] + ("y" if ending == "ies" else "")
    return word


def _answer_key(answer: Answer, i: int) -> str:
    """The term of answer ``i`` as the query's rows give it: an IRI, or a literal's lexical form."""
    if i < len(answer.answer_iris) and answer.answer_iris[i]:
        return answer.answer_iris[i]
    value = answer.values[i] if i < len(answer.values) else None
    return (value or {}).get("lexical") or answer.answers[i]


def _with_record(answer: Answer, graph: QueryGraph, run) -> Answer:
    run.record("constraints", **graph.to_dict())
    answer.constraints = [g.to_dict() for g in graph.shown]
    return answer


def _ground_entity(store, index, var: str, body: str, c: EntityConstraint, question: str, total: int,
                   timeout_s: float):
    """The relation that joins the most answers to ``c``'s entity (or literal name), from
    the answer itself or, through a mediator, from a node of the chain ("which character did
    X play in F": the performance that holds the character has X as its actor)."""
    counts: list[tuple[int, str, bool, str]] = []
    for node in [var] + [v for v in dict.fromkeys(_VAR.findall(body)) if v != var]:
        for backward in ((False,) if c.literal else (False, True)):
            triple = f"{c.term} ?r {node} ." if backward else f"{node} ?r {c.term} ."
            for row in _rows(store, f"SELECT ?r (COUNT(DISTINCT {var}) AS ?n) WHERE {{\n  {body}\n  {triple}\n}} "
                                    f"GROUP BY ?r", timeout_s, MAX_RELATIONS):
                if "r" in row and "n" in row:
                    counts.append((int(float(row["n"].value)), row["r"].value, backward, node))
        if counts:
            break  # the answer's own relations first; a mediator's only when it has none
    if not counts:
        return Grounded(c, False, why=f"no answer of the chain is related to {c.label} in the store"), None
    labels = store_labels(store, [r for _, r, _, _ in counts])
    fits = similarities(index, question, [labels.get(r) or r for _, r, _, _ in counts])
    best = max(range(len(counts)), key=lambda i: (counts[i][0], fits[i]))
    n, relation, backward, node = counts[best]
    triple = f"{c.term} <{relation}> {node} ." if backward else f"{node} <{relation}> {c.term} ."
    return Grounded(c, True, relation, labels.get(relation), backward, n, total), [triple]


def _ground_value(store, index, var: str, body: str, c: ValueConstraint, question: str, total: int,
                  timeout_s: float):
    rows = _rows(store, f"SELECT ?r (COUNT(DISTINCT {var}) AS ?n) (SAMPLE(DATATYPE(?v)) AS ?t) (MIN(?v) AS ?lo) "
                        f"(MAX(?v) AS ?hi) WHERE {{\n  {body}\n  {var} ?r ?v . FILTER(isLiteral(?v))\n}} GROUP BY ?r",
                 timeout_s, MAX_RELATIONS)
    options = []
    for row in rows:
        datatype = row["t"].value if "t" in row else None
        if "r" in row and value_expression("?v", datatype, c.year) is not None and \
                (not c.year or datatype in _DATES or _years(row.get("lo"), row.get("hi"))):
            options.append((row["r"].value, int(float(row["n"].value)), datatype))
    options = [o for o in options if o[1] >= max(1, VALUE_COVERAGE * total)] or options
    if not options:
        kind = "a date or year" if c.year else "a number"
        return Grounded(c, False, why=f"the chain's answers hold no {kind} to compare with {c.words!r}"), None
    labels = store_labels(store, [r for r, _, _ in options])
    context = _context(question, c)
    fits = similarities(index, context, [labels.get(r) or r for r, _, _ in options])
    scores = [fit + COVERAGE_WEIGHT * n / max(total, 1) for fit, (_, n, _) in zip(fits, options)]
    best = max(range(len(options)), key=lambda i: scores[i])
    relation, n, datatype = options[best]
    value_var = f"?value{abs(hash((relation, c.words))) % 1000}"
    expression = value_expression(value_var, datatype, c.year)
    pattern = [f"{var} <{relation}> {value_var} .", c.sparql(expression)]
    counted = _rows(store, f"SELECT (COUNT(DISTINCT {var}) AS ?n) WHERE {{\n  {body}\n  " + "\n  ".join(pattern)
                    + "\n}", timeout_s, 1)
    kept = int(float(counted[0]["n"].value)) if counted and "n" in counted[0] else None
    return Grounded(c, True, relation, labels.get(relation), False, kept, total), pattern


def _context(question: str, c: ValueConstraint) -> str:
    """The question's words near a value constraint: what the value is ("released before
    1980": released; "over 8,000 m tall": tall)."""
    before, after = question[:c.span[0]].split()[-3:], question[c.span[1]:].split()[:2]
    return " ".join(before + [c.words] + after)


def _constraint_facts(store, rows: list[dict], var: str, graph: QueryGraph) -> list[Evidence]:
    """The facts that show each kept answer meets the applied constraints."""
    facts: list[tuple[str, str, object]] = []
    for g in graph.grounded:
        if not g.applied:
            continue
        for row in rows[:EVIDENCE]:
            x = row.get(var[1:])
            if x is None:
                continue
            if isinstance(g.constraint, EntityConstraint) and not g.constraint.literal and isinstance(x, ox.NamedNode):
                s, o = (g.constraint.iri, x.value) if g.backward else (x.value, g.constraint.iri)
                facts.append((s, g.relation, o))
            else:
                value = next((v for k, v in row.items() if k.startswith("value")), None)
                if value is not None and isinstance(x, ox.NamedNode):
                    facts.append((x.value, g.relation, value))
    iris = {s for s, _, _ in facts} | {p for _, p, _ in facts} | {o for *_, o in facts if isinstance(o, str)}
    labels = store_labels(store, iris)
    out, seen = [], set()
    for s, p, o in facts:
        literal = not isinstance(o, str)
        lexical = o.value if literal else o
        if (s, p, lexical) in seen:
            continue
        seen.add((s, p, lexical))
        out.append(Evidence(s=s, p=p, o=lexical, s_label=labels.get(s), p_label=labels.get(p),
                            o_label=None if literal else labels.get(o), literal=literal,
                            datatype=o.datatype.value if literal and o.datatype else None))
    return out


def check_value(store, index, subject_iri: str, subject_label: str, c: ValueConstraint, asked: str, *,
                timeout_s: float = 5.0):
    """Whether ``subject``'s value meets ``c`` ("was X born after 1950": X's date of birth
    after 1950), read along the subject's literal relation of the constant's kind that
    fits ``asked`` best: (verdict, the facts, the relation's label), or (None, [], why)
    when the subject holds no value of that kind."""
    rows = _rows(store, f"SELECT ?r ?v WHERE {{ <{subject_iri}> ?r ?v . FILTER(isLiteral(?v)) }}", timeout_s, 500)
    options: dict[str, list] = {}
    for row in rows:
        v = row["v"]
        datatype = v.datatype.value if getattr(v, "datatype", None) else None
        if value_expression("?v", datatype, c.year) is not None and \
                (not c.year or datatype in _DATES or _years(v, v)):
            options.setdefault(row["r"].value, []).append(v)
    if not options:
        kind = "date or year" if c.year else "number"
        return None, [], f"the store holds no {kind} of {subject_label} to compare with {c.words!r}"
    relations = list(options)
    labels = store_labels(store, relations)
    fits = similarities(index, asked, [labels.get(r) or r for r in relations])
    best = relations[max(range(len(relations)), key=lambda i: fits[i])]
    values = options[best]
    numbers = [_as_number(v, c.year) for v in values]
    verdict = any(n is not None and c.holds(n) for n in numbers)
    facts = [Evidence(s=subject_iri, p=best, o=v.value, s_label=subject_label, p_label=labels.get(best),
                      literal=True, datatype=v.datatype.value if v.datatype else None) for v in values[:5]]
    return verdict, facts, labels.get(best) or best


def _years(low, high) -> bool:
    """Whether numbers from ``low`` to ``high`` read as years: a year compared with a
    number relation needs one that holds years (a release year, not a vote count)."""
    try:
        lo, hi = float(low.value), float(high.value)
    except (AttributeError, TypeError, ValueError):
        return False
    return YEARS[0] <= lo <= hi <= YEARS[1] and lo.is_integer() and hi.is_integer()


def _as_number(literal, year: bool) -> float | None:
    text = literal.value.strip()
    datatype = literal.datatype.value if literal.datatype else None
    if datatype in _DATES:
        m = re.match(r"^([+-]?\d+)", text)
        return float(m.group(1)) if m else None
    try:
        return float(text)
    except ValueError:
        return None


__all__ = ["NONE_MEETS", "MAX_RELATIONS", "iris_in", "apply_constraints", "chain_body", "check_value", "value_expression"]

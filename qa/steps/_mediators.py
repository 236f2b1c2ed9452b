"""A chain that ends on mediator nodes walks on through them to the value they hold.

A small model often stops its query at a Freebase performance or a Wikidata statement
node ("which character did X play in F": the performance joining X and F). A mediator is
never an answer, so the answer variable is carried one hop further: the store lists the
relations out of those nodes (those the query already walks aside), the encoder picks the
one the question's words name ("character"), and the query runs again with that hop.

When a draft names two things that only a mediator joins ("X's character in F": the
actor and the film), the answer is what else the joining mediator holds
(:func:`through_a_shared_mediator`).
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from kgstore.errors import QueryError, UnsafeQueryError

from ..sandbox import run_sparql
from . import _sparql_build as sb
from ._answering import rows_answer
from ._constraints import MAX_RELATIONS, chain_body, iris_in
from ._query_graph import EntityConstraint
from ._result import Answer
from ._retrieval import similarities, store_labels


def walk_through_mediators(store, index, chain: Answer, question: str, run, *, timeout_s: float = 5.0,
                           limit: int = 200) -> Answer:
    """``chain`` itself, or, when its query's answers are all mediators (so it answered
    nothing), the answer one hop on from them along the relation that fits ``question``."""
    if chain.refused or chain.answers:
        return chain
    read = chain_body(chain.query)
    if read is None:
        return chain
    var, body = read
    step = _step_on(store, index, question, body, var, set(iris_in(body)), timeout_s=timeout_s)
    if step is None:
        return chain
    relation, backward, labels = step
    hop = sb.TriplePattern("?through", f"<{relation}>", var) if backward else \
        sb.TriplePattern(var, f"<{relation}>", "?through")
    built = sb.BuiltQuery("?through", [[[hop]]])
    query = f"SELECT DISTINCT ?through WHERE {{\n  {body}\n  {hop.text()}\n}}"
    try:
        found = run_sparql(store, query, timeout_s=timeout_s, max_rows=limit).rows
    except (QueryError, UnsafeQueryError):
        return chain
    terms = sb.answer_terms(store, built, found, limit=limit)
    run.record("mediators", walked_from=var, relation=labels.get(relation) or relation, answers=len(terms),
               **({"backward": True} if backward else {}))
    if not terms:
        return chain
    out = rows_answer(question, chain.method, terms, chain.evidence)
    out.query = query
    out.meant = chain.meant
    out.shape = chain.shape
    return out



def through_a_shared_mediator(store, index, question: str, named: Sequence[str], run, *, timeout_s: float = 5.0,
                              max_rows: int = 1000, nodes: int = 50):
    """(the built query, its rows) of the answer held by the mediators that join two
    things the question names (entity IRIs, or a value's SPARQL term: ``"Lenny Darwin"``),
    or None.

    "Which character did X play in F?", "What was X's role in F?": X and F meet on a
    performance node, and the answer is what else that node holds. The store lists the
    mediators joining the first two names (either direction, any relation), the relations
    out of them to anything but the two, and the encoder picks the one the question's
    words name ("character", "role"); the query built from the most common way the two
    reach the node runs, and its rows are the answer."""
    if len(named) < 2:
        return None
    a, b = (n if n.startswith('"') else f"<{n}>" for n in named[:2])
    # a value is only ever an object: the node holds it
    joins = (f"SELECT ?m ?p1 ?d1 ?p2 ?d2 WHERE {{\n"
             f"  {_either_way(a, '?p1', '?d1')}\n  {_either_way(b, '?p2', '?d2')}\n}}")
    try:
        rows = run_sparql(store, joins, timeout_s=timeout_s, max_rows=nodes * 4).rows
    except (QueryError, UnsafeQueryError):
        return None
    mediators = store.mediators({r["m"].value for r in rows if "m" in r})
    ways: dict[tuple, int] = {}
    for r in rows:
        if "m" in r and r["m"].value in mediators:
            way = (r["p1"].value, r["d1"].value, r["p2"].value, r["d2"].value)
            ways[way] = ways.get(way, 0) + 1
    if not ways:
        return None
    p1, d1, p2, d2 = max(ways, key=ways.get)
    reach = [sb.TriplePattern("?m", f"<{p1}>", a) if d1 == "0" else sb.TriplePattern(a, f"<{p1}>", "?m"),
             sb.TriplePattern("?m", f"<{p2}>", b) if d2 == "0" else sb.TriplePattern(b, f"<{p2}>", "?m")]
    body = "\n  ".join(p.text() for p in reach)
    step = _step_on(store, index, question, body, "?m", {p1, p2}, timeout_s=timeout_s, besides=(a, b))
    if step is None:
        return None
    relation, backward, labels = step
    hop = sb.TriplePattern("?answer", f"<{relation}>", "?m") if backward else \
        sb.TriplePattern("?m", f"<{relation}>", "?answer")
    built = sb.BuiltQuery("?answer", [[reach + [hop]]],
                          [f"FILTER(!sameTerm(?answer, {a}) && !sameTerm(?answer, {b}))"])
    found, error = sb.execute(store, built, timeout_s=timeout_s, max_rows=max_rows)
    run.record("shared_mediator", joined=list(named[:2]), nodes=sum(ways.values()), relation=labels.get(relation) or relation,
               rows=len(found), **({"backward": True} if backward else {}), **({"error": error} if error else {}))
    return (built, found) if found else None


def _step_on(store, index, question: str, body: str, var: str, walked: set[str], *, timeout_s: float,
             besides: Sequence[str] = ()) -> tuple[str, bool, dict] | None:
    """(relation, backward, labels) of the hop on from the nodes ``var`` of ``body`` that
    the question's words fit best, among the relations out of them and into them (the film
    holds its performances: "in which films did X play Y") that the query does not walk
    already and that lead to none of ``besides`` (SPARQL terms); None when there is none."""
    apart = f"  FILTER({' && '.join(f'!sameTerm(?next, {t})' for t in besides)})\n" if besides else ""
    steps = []
    for backward, hop in ((False, f"{var} ?r ?next"), (True, f"?next ?r {var}")):
        try:
            rows = run_sparql(store, f"SELECT ?r (COUNT(*) AS ?n) WHERE {{\n  {body}\n  {hop} .\n{apart}}} GROUP BY ?r",
                              timeout_s=timeout_s, max_rows=MAX_RELATIONS).rows
        except (QueryError, UnsafeQueryError):
            continue
        steps += [(r["r"].value, backward) for r in rows if "r" in r and r["r"].value not in walked]
    if not steps:
        return None
    labels = store_labels(store, [r for r, _ in steps])
    fits = similarities(index, question, [labels.get(r) or r for r, _ in steps])
    relation, backward = steps[max(range(len(steps)), key=lambda i: fits[i])]
    return relation, backward, labels


def _either_way(term: str, relation: str, direction: str) -> str:
    """The pattern of a node ``?m`` joined to ``term`` by ``relation`` either way (``direction``
    bound to 0 when ``?m`` is the subject); a value only as the object."""
    held = f"{{ ?m {relation} {term} BIND(0 AS {direction}) }}"
    return held if term.startswith('"') else f"{held} UNION {{ {term} {relation} ?m BIND(1 AS {direction}) }}"


def beside_the_constraint(store, index, answer: Answer, grounded: Sequence, question: str, run, *,
                          timeout_s: float = 5.0) -> Answer:
    """``answer``, or, when every answer is an applied constraint's own value ("In F, who
    was Vernon Dursley?" answered *Vernon Dursley*: the chain ended on the character, and
    the constraint picked that same character), the answer one hop on from the node that
    holds the constraint, along the relation the question names (the actor). A question
    never asks for what it already says."""
    if answer.refused or not answer.answers or not answer.query:
        return answer
    read = chain_body(answer.query)
    if read is None:
        return answer
    _, body = read
    for g in grounded:
        if not g.applied or not isinstance(g.constraint, EntityConstraint):
            continue  # a value constraint ("after 1950") never names an answer
        term, own = g.constraint.term, {g.constraint.label.strip().casefold()}
        if not all(a.strip().casefold() in own for a in answer.answers):
            continue
        held = re.search(rf"(\?\w+) <[^>]+> {re.escape(term)}", body)
        if not held:
            continue
        node = held.group(1)
        walked = walk_through_mediators(store, index, replace(answer, answers=[], answer_iris=[], values=[],
                                                              query=f"SELECT DISTINCT {node} WHERE {{\n  {body}\n}}"),
                                        question, run, timeout_s=timeout_s)
        if walked.answers and not all(a.strip().casefold() in own for a in walked.answers):
            run.record("mediators", beside_the_constraint=g.constraint.label)
            return walked
    return answer


__all__ = ["walk_through_mediators", "through_a_shared_mediator", "beside_the_constraint"]

"""A chain that ends on mediator nodes walks on through them to the value they hold.

A small model often stops its query at a Freebase performance or a Wikidata statement
node ("which character did X play in F": the performance joining X and F). A mediator is
never an answer, so the answer variable is carried one hop further: the store lists the
relations out of those nodes (those the query already walks aside), the encoder picks the
one the question's words name ("character"), and the query runs again with that hop.
"""
from __future__ import annotations

from kgstore.errors import QueryError, UnsafeQueryError

from ..sandbox import run_sparql
from . import _sparql_build as sb
from ._answering import rows_answer
from ._constraints import MAX_RELATIONS, chain_body, iris_in
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
    try:
        rows = run_sparql(store, f"SELECT ?r (COUNT(*) AS ?n) WHERE {{\n  {body}\n  {var} ?r ?next .\n}} GROUP BY ?r",
                          timeout_s=timeout_s, max_rows=MAX_RELATIONS).rows
    except (QueryError, UnsafeQueryError):
        return chain
    walked = set(iris_in(body))
    relations = [r["r"].value for r in rows if "r" in r and r["r"].value not in walked]
    if not relations:
        return chain
    labels = store_labels(store, relations)
    fits = similarities(index, question, [labels.get(r) or r for r in relations])
    relation = relations[max(range(len(relations)), key=lambda i: fits[i])]
    built = sb.BuiltQuery("?through", [[[sb.TriplePattern(var, f"<{relation}>", "?through")]]])
    query = f"SELECT DISTINCT ?through WHERE {{\n  {body}\n  {var} <{relation}> ?through .\n}}"
    try:
        found = run_sparql(store, query, timeout_s=timeout_s, max_rows=limit).rows
    except (QueryError, UnsafeQueryError):
        return chain
    terms = sb.answer_terms(store, built, found, limit=limit)
    run.record("mediators", walked_from=var, relation=labels.get(relation) or relation, answers=len(terms))
    if not terms:
        return chain
    out = rows_answer(question, chain.method, terms, chain.evidence)
    out.query = query
    out.meant = chain.meant
    out.shape = chain.shape
    return out


__all__ = ["walk_through_mediators"]

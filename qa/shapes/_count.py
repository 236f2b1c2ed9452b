"""Counts: "how many …" is the chain the rest of the question asks for, counted.

The chain method answers "How many countries does the Andes cover?" with the seven
countries; the answer is 7, and the counted entities (the first 20 facts) are the
evidence. When the chain's query capped its rows, the count comes from running it as
``COUNT(DISTINCT …)``. A question whose answer is already a number in the store ("how
many people live in India": a population) keeps that number.
"""
from __future__ import annotations

import re

from kgstore.errors import QueryError, UnsafeQueryError

from ..sandbox import run_sparql
from ..steps._result import Answer

EVIDENCE = 20
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
_SELECT_DISTINCT = re.compile(r"^\s*SELECT\s+DISTINCT\s+(\?\w+)\s+WHERE", re.I)


def counted_query(query: str | None) -> str | None:
    """``SELECT DISTINCT ?x WHERE {...}`` as ``SELECT (COUNT(DISTINCT ?x) AS ?count) WHERE {...}``."""
    if not query:
        return None
    m = _SELECT_DISTINCT.match(query)
    if not m:
        return None
    return f"SELECT (COUNT(DISTINCT {m.group(1)}) AS ?count) WHERE" + query[m.end():]


def is_one_number(answer: Answer) -> bool:
    """The answer is one number the store holds (a population, not things to count)."""
    return len(answer.answers) == 1 and bool((answer.values[:1] or [None])[0]) and answer.values[0].get("kind") == "number"


def count_answer(store, chain: Answer, run, *, timeout_s: float = 5.0) -> Answer:
    """The chain's answer counted (see the module docstring); a refusal stays a refusal."""
    chain.shape = "count"
    if chain.refused:
        return chain
    entities = list(dict.fromkeys(i for i in chain.answer_iris if i))
    if not entities:
        # literal answers: one number is the count the store holds; anything else counts as is
        if is_one_number(chain):
            run.record("count", counted=False, reason="the answer is a number in the store")
            return chain
        entities = list(dict.fromkeys(chain.answers))
    total = len(entities)
    query = counted_query(chain.query)
    if query:
        try:
            rows = run_sparql(store, query, timeout_s=timeout_s, max_rows=1).rows
            if rows and "count" in rows[0]:
                total = max(total, int(float(rows[0]["count"].value)))
        except (QueryError, UnsafeQueryError, ValueError):
            query = None
    run.record("count", counted=True, total=total, count_query=query, first=chain.answers[:EVIDENCE])
    return Answer(question=chain.question, method=chain.method, answers=[str(total)], answer_iris=[None],
                  evidence=chain.evidence[:EVIDENCE], values=[{"value": str(total), "lexical": str(total),
                                                               "datatype": INTEGER, "kind": "number",
                                                               "counted": chain.answers[:EVIDENCE]}],
                  query=query or chain.query, shape="count", meant=chain.meant)


__all__ = ["count_answer", "counted_query", "is_one_number"]

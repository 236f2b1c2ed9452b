"""Reading the semantic index and the catalog for QA: triple search results as Evidence,
and entity popularity for pruning."""
from __future__ import annotations

from typing import Iterable

from ._result import Evidence


def search_triples(index, text: str, k: int) -> list[Evidence]:
    """The ``k`` store triples nearest ``text`` in the triple index, best first, as Evidence."""
    return [hit_evidence(hit) for hit in index.search("triples", text, k)]


def search_triples_many(index, texts: list[str], k: int) -> list[list[Evidence]]:
    """:func:`search_triples` for several texts, embedded in one batch."""
    return [[hit_evidence(h) for h in hits] for hits in index.search_many("triples", texts, k)]


def search_triples_about(index, texts: list[str], about: list[list[str]], k: int) -> list[list[Evidence]]:
    """:func:`search_triples_many` among the triples of given entities (``about[i]`` for ``texts[i]``)."""
    return [[hit_evidence(h) for h in hits] for hits in index.search_about("triples", texts, about, k)]


def hit_evidence(hit) -> Evidence:
    """One triple-index hit (an ``indexer.SearchHit`` of kind "triples") as Evidence."""
    x = hit.extra
    p = x["p"]
    if isinstance(p, (list, tuple)):  # two hops through a mediator node
        p = " / ".join(p)
    return Evidence(s=x["s"], p=p, o=x["o"], s_label=x.get("s_label"), p_label=x.get("p_label"),
                    o_label=x.get("o_label"), literal=bool(x.get("o_literal")), datatype=x.get("datatype"),
                    score=float(hit.score), via=x.get("via"))


def entity_popularity(store, iris: Iterable[str]) -> dict[str, int]:
    """Catalog popularity (statements as subject plus as object) of each IRI; 0 if unknown."""
    wanted = sorted(set(iris))
    if not wanted:
        return {}
    with store.catalog.connect() as con:
        rows = con.execute("SELECT iri, popularity FROM entities WHERE list_contains(?, iri)", [wanted]).fetchall()
    found = {iri: int(pop or 0) for iri, pop in rows}
    return {iri: found.get(iri, 0) for iri in wanted}

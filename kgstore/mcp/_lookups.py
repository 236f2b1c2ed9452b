"""What the read-only tools answer, as JSON-ready documents: a SPARQL result, search hits,
link candidates, an entity page, the store's counts. Plain functions over one store
handle, run in a worker thread by ``_server`` (the catalog one lookup at a time)."""
from __future__ import annotations

from typing import Any

from .._bounded_query import BoundedResult
from ..server._entity_detail import entity_detail
from ..terms import shorten


def sparql_document(result: BoundedResult, prefixes: dict[str, str]) -> dict[str, Any]:
    """A bounded result as an agent reads it: IRIs shortened with the store's prefixes
    (``wd:Q5456``), literals as their text; ``truncated`` when rows were cut at the cap."""
    def term(value) -> str | None:
        if value is None:
            return None
        kind = type(value).__name__
        if kind == "NamedNode":
            return shorten(value.value, prefixes)
        if kind == "Literal":
            return value.value
        if kind == "BlankNode":
            return f"_:{value.value}"
        return str(value)

    if result.kind == "boolean":
        return {"boolean": bool(result.boolean)}
    if result.kind == "graph":
        return {"triples": [[term(t.subject), term(t.predicate), term(t.object)] for t in result.triples],
                "truncated": result.truncated}
    return {"variables": list(result.variables),
            "rows": [{v: term(t) for v, t in zip(result.variables, row) if t is not None} for row in result.rows],
            "truncated": result.truncated}


def search_hits(index, kind: str, text: str, k: int) -> list[dict[str, Any]]:
    """The ``k`` entries of ``kind`` nearest to ``text`` (what `kgstore search` prints)."""
    return [hit.to_dict() for hit in index.search(kind, text, k)]


def link_candidates(index, text: str, k: int, prefixes: dict[str, str]) -> list[dict[str, Any]]:
    """Entities ``text`` may name, best first: label, description, id (the prefixed name
    SPARQL and ``entity`` take, ``wd:Q5456``), IRI and score."""
    return [{"label": c.label, "description": c.description, "id": shorten(c.iri, prefixes), "iri": c.iri,
             "score": round(c.score, 4), "mention": c.mention, "match": c.match}
            for c in index.link_text(text, k)]


def entity_page(store, ref: str, *, limit: int, incoming: int) -> dict[str, Any] | None:
    """The entity's label, description, aliases, up to ``limit`` facts out and ``incoming``
    facts in (the JSON of `kgstore entity`, with ``incoming_facts``), or None."""
    return entity_detail(store, ref, max_facts=limit, incoming=incoming, qualifiers=False,
                         prefixes=store.config.prefixes)


def store_stats(store, path) -> dict[str, Any]:
    """The counts of `kgstore stats`, and where the store is."""
    return {"store": str(path), **store.stats()}

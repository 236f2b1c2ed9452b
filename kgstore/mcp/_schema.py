"""The store's schema as an agent needs it before writing SPARQL: the relations that have
facts, with their label, id, IRI and fact count, most used first."""
from __future__ import annotations

from typing import Any

from ..terms import shorten


def relation_list(store, words: str | None = None, *, limit: int = 50) -> dict[str, Any]:
    """The relations of ``store`` that have facts, most used first. ``words`` keeps those
    whose label, id or description holds every word (any case); relations whose label
    holds them come first. ``total`` counts all that match, ``relations`` the first
    ``limit`` of them."""
    terms = [w.lower() for w in (words or "").split()]
    where, params = ["usage > 0"], []
    for term in terms:
        where.append("(contains(lower(coalesce(label, '')), ?) OR lower(coalesce(id, '')) = ? "
                     "OR contains(lower(coalesce(description, '')), ?))")
        params += [term, term, term]
    in_label = " AND ".join(["contains(lower(coalesce(label, '')), ?)"] * len(terms))
    order = f"({in_label}) DESC, usage DESC, iri" if terms else "usage DESC, iri"
    sql = (f"SELECT iri, id, label, description, usage, count(*) OVER () AS total FROM relations "
           f"WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?")
    with store.catalog.connect() as con:
        rows = con.execute(sql, [*params, *terms, limit]).fetchall()
    prefixes = store.config.prefixes
    return {
        "total": rows[0][5] if rows else 0,
        "relations": [{"label": label, "id": rid, "prefixed": shorten(iri, prefixes), "facts": usage,
                       "description": description} for iri, rid, label, description, usage, _ in rows],
    }

"""What a store's statement nodes add to a literal: a quantity's unit and a date's
precision. A store ingested with ``--statements full`` holds, beside the direct fact
``wd:Q513 wdt:P2044 8848.86``, its statement and value nodes (``psv:P2044`` → a value
node with ``wikibase:quantityUnit wd:Q11573``; ``wikibase:timePrecision 9`` for a year).
A store without them gives nothing, and the literal prints as it is."""
from __future__ import annotations

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError
from kgstore.terms import P, PS, PSV, WDT, WIKIBASE

from ..sandbox import run_sparql
from ._retrieval import store_labels
from ._values import PRECISION_BY_WIKIBASE

# Wikidata's "1" unit: a plain number
NO_UNIT = "http://www.wikidata.org/entity/Q199"


def literal_details(store, s: str, p: str, lexical: str, *, timeout_s: float = 2.0) -> tuple[str | None, str | None]:
    """(unit label, precision) of the value ``lexical`` of ``s``'s direct fact ``p``, read
    from its statement node; (None, None) when the store has none."""
    if not p.startswith(WDT):
        return None, None
    pid = p[len(WDT):]
    query = ("SELECT ?unit ?precision ?value WHERE {\n"
             f"  <{s}> <{P}{pid}> ?st . ?st <{PS}{pid}> ?value . ?st <{PSV}{pid}> ?node .\n"
             f"  OPTIONAL {{ ?node <{WIKIBASE}quantityUnit> ?unit }}\n"
             f"  OPTIONAL {{ ?node <{WIKIBASE}timePrecision> ?precision }}\n"
             "} LIMIT 20")
    try:
        rows = run_sparql(store, query, timeout_s=timeout_s, max_rows=20).rows
    except (QueryError, UnsafeQueryError):
        return None, None
    for row in rows:
        value = row.get("value")
        if not isinstance(value, ox.Literal) or value.value != lexical:
            continue
        unit = row.get("unit")
        label = None
        if isinstance(unit, ox.NamedNode) and unit.value != NO_UNIT:
            label = store_labels(store, [unit.value]).get(unit.value) or unit.value.rsplit("/", 1)[-1]
        precision = row.get("precision")
        try:
            precision = PRECISION_BY_WIKIBASE.get(int(precision.value)) if precision is not None else None
        except ValueError:
            precision = None
        return label, precision
    return None, None


__all__ = ["literal_details"]

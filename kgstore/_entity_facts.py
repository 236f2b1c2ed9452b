"""An entity's direct facts, read by the entity: what :meth:`kgstore.Store.edges` and
:meth:`kgstore.Store.entity` list.

The rows are the catalog's statements rows, found by subject or by object. In a store
with its own Oxigraph they are read through Oxigraph's SPO and OSP indexes and kept by the
catalog's own rule (:func:`kgstore._columns.fact_mask`). The catalog's statements table
has no index on either column, so there a read by object scans every statement: 0.8 s at
46M statements, against milliseconds through Oxigraph. A store over a SPARQL endpoint has
no Oxigraph and reads its synced catalog. Labels are joined afterwards, by primary key,
for the few rows kept.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, NamedTuple, Sequence

import pyoxigraph as ox

from ._columns import fact_mask, triple_columns
from .records import Triple
from .terms import XSD

# A hub's incoming facts are read up to this many triples (in Oxigraph's order), so that a
# class with millions of instances costs what a large entity does; the relations ranked
# first per relation come from those.
MAX_SCANNED = 10_000
_XSD_STRING = XSD + "string"


class FactRow(NamedTuple):
    s: str
    p: str
    o: str
    literal: bool
    datatype: str | None
    lang: str | None


def oxigraph_fact_rows(rdf: ox.Store, iri: str, side: str, *, max_scanned: int = MAX_SCANNED) -> list[FactRow]:
    """The facts with ``iri`` as subject (``side`` "out") or as IRI object ("in"), from
    Oxigraph's indexes, each once (a triple in several graphs is one fact)."""
    try:
        node = ox.NamedNode(iri)
    except ValueError:
        return []
    quads = rdf.quads_for_pattern(node, None, None) if side == "out" else rdf.quads_for_pattern(None, None, node)
    triples: dict[Triple, None] = {}
    for n, quad in enumerate(quads):
        if n >= max_scanned:
            break
        triple = _triple(quad)
        if triple is not None:
            triples[triple] = None
    if not triples:
        return []
    found = list(triples)
    keep = fact_mask(triple_columns(found)).to_pylist()
    return [FactRow(*t) for t, kept in zip(found, keep) if kept]


def _triple(quad: ox.Quad) -> Triple | None:
    """The catalog's form of a quad's triple; None for blank nodes and quoted triples,
    which loaders never write (they skolemise blank nodes)."""
    s, p, o = quad.subject, quad.predicate, quad.object
    if not isinstance(s, ox.NamedNode):
        return None
    if isinstance(o, ox.NamedNode):
        return Triple(s.value, p.value, o.value)
    if not isinstance(o, ox.Literal):
        return None
    if o.language:
        return Triple(s.value, p.value, o.value, True, None, o.language)
    datatype = o.datatype.value
    return Triple(s.value, p.value, o.value, True, None if datatype == _XSD_STRING else datatype, None)


# The catalog's form of the same read, for a store over an endpoint: bounded in SQL by the
# same ranking as :func:`first_per_relation`, so a hub's rows never all reach Python.
CATALOG_RANKED_SQL = """
    SELECT s, p, o, o_literal, datatype, lang FROM (
        SELECT s, p, o, o_literal, datatype, lang,
               row_number() OVER (PARTITION BY p ORDER BY s, o) AS rn
        FROM statements WHERE {where})
    ORDER BY rn, p, s, o
    LIMIT ?"""
CATALOG_WHERE = {"out": "s = ?", "in": "o = ? AND NOT o_literal"}


def catalog_fact_rows(con, iri: str, side: str, limit: int) -> list[FactRow]:
    """The first ``limit`` facts of ``iri`` on ``side`` from the catalog, ranked as
    :func:`first_per_relation` ranks them."""
    sql = CATALOG_RANKED_SQL.format(where=CATALOG_WHERE[side])
    return [FactRow(s, p, o, bool(lit), dt, lang) for s, p, o, lit, dt, lang in con.execute(sql, [iri, limit]).fetchall()]


def first_per_relation(rows: Iterable[FactRow], limit: int) -> list[FactRow]:
    """At most ``limit`` of ``rows``: the first fact of every relation, then the second of
    every relation, and so on (within a relation by subject, then object), so that a hub's
    many facts of one relation do not hide its other relations."""
    by_relation: dict[str, list[FactRow]] = defaultdict(list)
    for row in rows:
        by_relation[row.p].append(row)
    ranked = []
    for relation, group in by_relation.items():
        group.sort(key=lambda r: (r.s, r.o))
        ranked += [(rank, relation, row.s, row.o, row) for rank, row in enumerate(group[:limit])]
    ranked.sort(key=lambda item: item[:4])
    return [item[4] for item in ranked[:limit]]


def ranked_fact_rows(con, rdf: ox.Store | None, iri: str, side: str, limit: int) -> list[FactRow]:
    """The first ``limit`` facts of ``iri`` on ``side`` ("out"/"in"), one per relation
    first: through Oxigraph where the store has its own (``rdf``), else from the synced
    catalog of a store over an endpoint."""
    if rdf is None:
        return catalog_fact_rows(con, iri, side, limit)
    return first_per_relation(oxigraph_fact_rows(rdf, iri, side), limit)


def subject_fact_rows(con, rdf: ox.Store | None, iri: str) -> list[FactRow]:
    """Every fact with ``iri`` as subject, each once, from where :func:`ranked_fact_rows` reads."""
    if rdf is None:
        return [FactRow(iri, p, o, bool(lit), dt, lang) for p, o, lit, dt, lang in con.execute(
            "SELECT DISTINCT p, o, o_literal, datatype, lang FROM statements WHERE s = ?", [iri]).fetchall()]
    return oxigraph_fact_rows(rdf, iri, "out")


def labels_by_key(con, entity_iris: Sequence[str], relation_iris: Sequence[str]) -> tuple[dict, dict]:
    """Catalog labels of entities and of relations, looked up by primary key (a filter on
    the label itself would turn the lookup into a scan of every entity)."""
    entities = _labels(con, "entities", entity_iris)
    relations = _labels(con, "relations", relation_iris)
    return entities, relations


def relations_by_key(con, iris: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
    """The (id, label) of each relation among ``iris``, by primary key."""
    wanted = sorted(set(iris))
    if not wanted:
        return {}
    rows = con.execute("SELECT iri, id, label FROM relations WHERE list_contains(?, iri)", [wanted]).fetchall()
    return {iri: (id_, label) for iri, id_, label in rows}


def _labels(con, table: str, iris: Sequence[str]) -> dict[str, str]:
    wanted = sorted(set(iris))
    if not wanted:
        return {}
    rows = con.execute(f"SELECT iri, label FROM {table} WHERE list_contains(?, iri)", [wanted]).fetchall()
    return {iri: label for iri, label in rows if label is not None}

"""The property graph: a Cypher mirror of a store.

Public API::

    from kgstore.graph import open_graph, sync_graph
    with Store.open("./mystore") as store:
        report = sync_graph(store)                       # full mirror of the catalog
        with open_graph(store) as graph:                 # Ladybug, or Neo4j when configured
            graph.query('MATCH (a:Entity {id:"Q42"})-[r]->(b) RETURN r.label, b.label LIMIT 10')

Backends import their libraries only when used.
"""
from __future__ import annotations

from ._base import ENTITY, HAS_VALUE, LITERAL, REL, GraphCounts, PropertyGraph, SyncProgress, SyncReport
from ._export import ROW_SETS, ExportedFile, ExportedFiles, RowSet, export_parquet
from ._readonly import check_read_only, segments as cypher_segments, words as cypher_words, write_clause
from ..errors import GraphError

BACKENDS = ("ladybug", "neo4j")


def open_graph(store, backend: str | None = None) -> PropertyGraph:
    """The property graph of ``store``: ``backend`` or else the store's ``[graph] backend``
    (``ladybug``, the default, embedded in the store directory; or ``neo4j``)."""
    name = (backend or store.config.graph.backend or "ladybug").lower()
    if name == "ladybug":
        from ._ladybug import LadybugGraph

        return LadybugGraph(store.path)
    if name == "neo4j":
        from ._neo4j import Neo4jGraph

        return Neo4jGraph(store.path, store.config.graph)
    raise GraphError(f"unknown graph backend {name!r}; choose one of: {', '.join(BACKENDS)}")


def sync_graph(store, progress=None, *, backend: str | None = None) -> SyncReport:
    """Mirror ``store`` into its property graph (what ``kgstore graph sync`` and
    ``kgstore ingest --graph`` run)."""
    with open_graph(store, backend) as graph:
        return graph.sync(store, progress=progress)


__all__ = [
    "open_graph", "sync_graph", "BACKENDS", "PropertyGraph", "SyncReport", "SyncProgress", "GraphCounts",
    "ExportedFiles", "ExportedFile", "RowSet", "ROW_SETS", "export_parquet", "check_read_only", "write_clause",
    "cypher_segments", "cypher_words",
    "ENTITY", "LITERAL", "REL", "HAS_VALUE",
]

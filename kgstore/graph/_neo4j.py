"""The server backend: Neo4j over Bolt with the official driver.

The graph has the same shape as the embedded one (see ``_base``): nodes ``:Entity`` and
``:Literal``, relationships ``:REL`` and ``:HAS_VALUE`` whose ``pid``/``label`` properties
name the relation. One relationship type per kind, rather than one per property (``:P26``),
so every query runs unchanged on both backends; filter with ``r.pid = 'P26'``, which the
relationship-property index makes fast.

A sync creates constraints and indexes first, then upserts in batches
(``UNWIND $rows AS row MERGE ...``), stamping every node and relationship with the sync's
id; what an older sync wrote and this one did not is deleted at the end. So the mirror is
exact, and a sync that dies half-way leaves the previous data plus part of the new, fixed
by the next sync. The statement text is built by pure functions, tested without a server.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import GraphError, GraphNotSyncedError, QueryError
from ._base import ENTITY, HAS_VALUE, LITERAL, REL, GraphCounts, ProgressCallback, PropertyGraph, SyncProgress, \
    SyncReport
from ._export import ROW_SETS, catalog_state, count_rows, iter_rows
from ._readonly import check_read_only

META_NAME = "neo4j.json"
SYNC_PROPERTY = "_sync"
BATCH_SIZE = 5000

# label -> (key property, other properties), as the row sets in _export name them
NODE_PROPERTIES: dict[str, tuple[str, tuple[str, ...]]] = {
    ENTITY: ("iri", ("id", "label", "description", "popularity", "is_mediator")),
    LITERAL: ("key", ("value", "label", "datatype", "lang")),
}
# relationship type -> (label of the target node)
RELATIONSHIP_TARGETS: dict[str, str] = {REL: ENTITY, HAS_VALUE: LITERAL}


# -- statement builders (pure) -------------------------------------------------------------
def schema_statements() -> list[str]:
    """Constraints (which also index the keys) and indexes, idempotent."""
    return [
        f"CREATE CONSTRAINT kgstore_entity_iri IF NOT EXISTS FOR (n:{ENTITY}) REQUIRE n.iri IS UNIQUE",
        f"CREATE CONSTRAINT kgstore_literal_key IF NOT EXISTS FOR (n:{LITERAL}) REQUIRE n.key IS UNIQUE",
        f"CREATE INDEX kgstore_entity_id IF NOT EXISTS FOR (n:{ENTITY}) ON (n.id)",
        f"CREATE INDEX kgstore_entity_label IF NOT EXISTS FOR (n:{ENTITY}) ON (n.label)",
        f"CREATE INDEX kgstore_rel_pid IF NOT EXISTS FOR ()-[r:{REL}]-() ON (r.pid)",
        f"CREATE INDEX kgstore_has_value_pid IF NOT EXISTS FOR ()-[r:{HAS_VALUE}]-() ON (r.pid)",
    ]


def node_upsert_statement(label: str) -> str:
    """Upsert a batch ``$rows`` of ``label`` nodes, stamping them with ``$sync``."""
    key, props = NODE_PROPERTIES[label]
    sets = ", ".join([f"n.{p} = row.{p}" for p in props] + [f"n.{SYNC_PROPERTY} = $sync"])
    return f"UNWIND $rows AS row MERGE (n:{label} {{{key}: row.{key}}}) SET {sets}"


def relationship_upsert_statement(rel_type: str) -> str:
    """Upsert a batch ``$rows`` of ``rel_type`` relationships (one per subject, predicate IRI
    and object), stamping them with ``$sync``. Rows carry ``from``/``to`` node keys."""
    target = RELATIONSHIP_TARGETS[rel_type]
    target_key = NODE_PROPERTIES[target][0]
    return (
        f"UNWIND $rows AS row "
        f"MATCH (a:{ENTITY} {{iri: row.`from`}}) "
        f"MATCH (b:{target} {{{target_key}: row.`to`}}) "
        f"MERGE (a)-[r:{rel_type} {{iri: row.iri}}]->(b) "
        f"SET r.pid = row.pid, r.label = row.label, r.{SYNC_PROPERTY} = $sync"
    )


def cleanup_statements() -> list[str]:
    """Delete, ``$limit`` at a time, what older syncs wrote and the current ``$sync`` did not;
    each returns the number deleted in ``n`` (run each until it returns 0)."""
    stale = f"(x.{SYNC_PROPERTY} IS NULL OR x.{SYNC_PROPERTY} <> $sync)"
    return [
        f"MATCH ()-[x:{REL}|{HAS_VALUE}]->() WHERE {stale} WITH x LIMIT $limit DELETE x RETURN count(*) AS n",
        f"MATCH (x) WHERE (x:{ENTITY} OR x:{LITERAL}) AND {stale} "
        f"WITH x LIMIT $limit DETACH DELETE x RETURN count(*) AS n",
    ]


def count_statements() -> dict[str, str]:
    return {
        "entities": f"MATCH (n:{ENTITY}) RETURN count(n) AS n",
        "literals": f"MATCH (n:{LITERAL}) RETURN count(n) AS n",
        "edges": f"MATCH ()-[r:{REL}]->() RETURN count(r) AS n",
        "values": f"MATCH ()-[r:{HAS_VALUE}]->() RETURN count(r) AS n",
    }


def upsert_statement(table: str) -> str:
    return node_upsert_statement(table) if table in NODE_PROPERTIES else relationship_upsert_statement(table)


def batches(rows: Iterable[dict], size: int = BATCH_SIZE) -> Iterator[list[dict]]:
    batch: list[dict] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def connection_settings(config, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """URI, user, password and database from the store's [graph] config and the environment:
    ``NEO4J_URI`` overrides the configured URI; the password is read from the variable the
    config names (never from the config file). No password means no authentication."""
    environ = os.environ if environ is None else environ
    uri = environ.get("NEO4J_URI") or config.neo4j_uri
    if not uri:
        raise GraphError(
            "the neo4j backend needs a server: set neo4j_uri in the [graph] section of kgstore.toml "
            "or the NEO4J_URI environment variable (e.g. bolt://localhost:7687)")
    password = environ.get(config.neo4j_password_env) if config.neo4j_password_env else None
    auth = (config.neo4j_user, password) if password is not None else None
    return {"uri": uri, "auth": auth, "database": config.neo4j_database or None,
            "password_env": config.neo4j_password_env}


# -- the backend ----------------------------------------------------------------------------
class Neo4jGraph(PropertyGraph):
    name = "neo4j"

    def __init__(self, store_dir: str | os.PathLike, config, *, driver=None):
        """``config`` is the store's [graph] section; ``driver`` an already-open
        ``neo4j.Driver`` (or anything with its ``session()``), else one is opened on first use."""
        self.store_dir = Path(store_dir)
        self.meta_path = self.store_dir / "graph" / META_NAME
        self.settings = connection_settings(config)
        self._driver = driver

    def __repr__(self) -> str:
        return f"<Neo4jGraph {self.settings['uri']} database={self.settings['database']}>"

    def _connect(self):
        if self._driver is None:
            try:
                import neo4j
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise GraphError("the neo4j backend needs the driver: pip install 'kgstore[neo4j]'") from exc
            self._driver = neo4j.GraphDatabase.driver(self.settings["uri"], auth=self.settings["auth"])
            try:
                self._driver.verify_connectivity()
            except neo4j.exceptions.AuthError as exc:
                self.close()
                raise GraphError(f"Neo4j at {self.settings['uri']} refused the credentials; set "
                                 f"{self.settings['password_env']} to the password: {exc}") from exc
            except Exception as exc:  # the driver raises several unrelated types here
                self.close()
                raise GraphError(f"cannot reach Neo4j at {self.settings['uri']}: {exc}") from exc
        return self._driver

    def _session(self, *, write: bool):
        import neo4j

        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._connect().session(database=self.settings["database"], default_access_mode=mode)

    # -- sync --------------------------------------------------------------------------
    def sync(self, store, progress: ProgressCallback | None = None) -> SyncReport:
        started = time.perf_counter()
        sync_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        with store.catalog.connect() as con:
            state = catalog_state(con)
        rows = count_rows(store)
        total = sum(rows.values())
        export_seconds = time.perf_counter() - started
        done = 0
        stages: dict[str, float] = {}
        load_started = time.perf_counter()
        with self._session(write=True) as session:
            for stmt in schema_statements():
                session.run(stmt).consume()
            for row_set in ROW_SETS:
                t0 = time.perf_counter()
                stmt = upsert_statement(row_set.table)
                for batch in iter_rows(store, row_set, BATCH_SIZE):
                    if progress:
                        progress(SyncProgress(row_set.table, done, total))
                    session.execute_write(lambda tx, b=batch: tx.run(stmt, rows=b, sync=sync_id).consume())
                    done += len(batch)
                stages[row_set.name] = time.perf_counter() - t0
            t0 = time.perf_counter()
            if progress:
                progress(SyncProgress("cleanup", done, total))
            for stmt in cleanup_statements():
                while session.execute_write(
                        lambda tx, s=stmt: tx.run(s, sync=sync_id, limit=BATCH_SIZE).single()["n"]):
                    pass
            stages["cleanup"] = time.perf_counter() - t0
        if progress:
            progress(SyncProgress("done", done, total))
        report = SyncReport(
            backend=self.name,
            counts=GraphCounts(entities=rows[ENTITY], literals=rows[LITERAL], edges=rows[REL], values=rows[HAS_VALUE]),
            seconds=time.perf_counter() - started, export_seconds=export_seconds,
            load_seconds=time.perf_counter() - load_started, catalog_state=state,
            location=f"{self.settings['uri']} database={self.settings['database']}", stages=stages,
        )
        self.meta_path.parent.mkdir(parents=True, exist_ok=True)
        self.meta_path.write_text(json.dumps({**report.as_dict(), "sync_id": sync_id,
                                              "synced_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, indent=2))
        return report

    # -- reading ------------------------------------------------------------------------
    def is_synced(self) -> bool:
        return self.meta_path.exists()

    def last_sync(self) -> dict | None:
        return json.loads(self.meta_path.read_text()) if self.meta_path.exists() else None

    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False) -> list[dict]:
        if not write:
            check_read_only(cypher)
        if not self.is_synced():
            raise GraphNotSyncedError(self.store_dir, self.name)
        import neo4j

        def work(tx):
            result = tx.run(cypher, params or {})
            rows = [{k: plain(v) for k, v in record.items()} for record in result]
            self.last_columns = list(result.keys())
            return rows

        try:
            with self._session(write=write) as session:
                return session.execute_write(work) if write else session.execute_read(work)
        except neo4j.exceptions.Neo4jError as exc:
            raise QueryError(f"Cypher query failed: {exc.message or exc}") from exc

    def counts(self) -> GraphCounts:
        with self._session(write=False) as session:
            return GraphCounts(**{name: session.run(q).single()["n"] for name, q in count_statements().items()})

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None


def plain(value: Any) -> Any:
    """A driver value as JSON-ready Python, shaped like the embedded backend's rows."""
    from neo4j.graph import Node, Path as GraphPath, Relationship

    if isinstance(value, Node):
        return {"_LABEL": next(iter(value.labels), None),
                **{k: plain(v) for k, v in value.items() if k != SYNC_PROPERTY}}
    if isinstance(value, Relationship):
        return {"_LABEL": value.type, **{k: plain(v) for k, v in value.items() if k != SYNC_PROPERTY}}
    if isinstance(value, GraphPath):
        return {"_NODES": [plain(n) for n in value.nodes], "_RELS": [plain(r) for r in value.relationships]}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)

"""The server backend: Neo4j over Bolt with the official driver.

The graph has the same shape as the embedded one (see ``_base``): nodes ``:Entity`` and
``:Literal``, relationships ``:REL`` and ``:HAS_VALUE`` whose ``pid``/``label`` properties
name the relation. One relationship type per kind, rather than one per property (``:P26``),
so every query runs unchanged on both backends; filter with ``r.pid = 'P26'``, which the
relationship-property index makes fast.

A sync creates constraints and indexes first, then sends what changed since the last sync
(``_delta``: DuckDB diffs the rows against a snapshot of those last sent): deletions
(``UNWIND $rows AS row MATCH ... DELETE``), then upserts (``UNWIND $rows AS row MERGE ...``),
in batches of one transaction each, stamping what it writes with the sync's id. A full sync
(the first, ``full=True``, or when the server no longer holds what the snapshot says) sends
every row and then deletes what it did not stamp, so the mirror is exact whatever the
server held. A sync that dies half-way is done again by the next one: the snapshot only
moves once the server has everything. The statement text is built by pure functions,
tested without a server; the same Cypher runs on Neo4j and on ArcadeDB's Bolt server (the
tests' server), see the README for what differed.
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
from ._delta import Delta, compute_delta
from ._export import TABLES
from ._readonly import check_read_only

META_NAME = "neo4j.json"
SNAPSHOT_NAME = "neo4j-rows"  # the rows last sent (see _delta), next to META_NAME
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
    # collect() first, as in delete_statement: no deletion while still matching.
    return [
        f"MATCH ()-[x:{REL}|{HAS_VALUE}]->() WHERE {stale} WITH x LIMIT $limit "
        f"WITH collect(x) AS doomed UNWIND doomed AS x DELETE x RETURN count(*) AS n",
        f"MATCH (x) WHERE (x:{ENTITY} OR x:{LITERAL}) AND {stale} WITH x LIMIT $limit "
        f"WITH collect(x) AS doomed UNWIND doomed AS x DETACH DELETE x RETURN count(*) AS n",
    ]


def delete_statement(table: str) -> str:
    """Delete a batch ``$rows`` of ``table`` rows by their keys (``TABLE_KEYS``): a node with
    its relationships, or one relationship."""
    # Match them all, then delete (collect() is the barrier): ArcadeDB's Bolt server fails
    # with EntityNotFound when deletions interleave with the matching of the next rows
    # (its edge iterator meets a segment just deleted); Neo4j is indifferent.
    if table in NODE_PROPERTIES:
        key = NODE_PROPERTIES[table][0]
        return (f"UNWIND $rows AS row MATCH (n:{table} {{{key}: row.{key}}}) "
                f"WITH collect(n) AS doomed UNWIND doomed AS n DETACH DELETE n")
    target = RELATIONSHIP_TARGETS[table]
    target_key = NODE_PROPERTIES[target][0]
    return (f"UNWIND $rows AS row "
            f"MATCH (a:{ENTITY} {{iri: row.`from`}})-[r:{table} {{iri: row.iri}}]->"
            f"(b:{target} {{{target_key}: row.`to`}}) "
            f"WITH collect(r) AS doomed UNWIND doomed AS r DELETE r")


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

    def __init__(self, store_dir: str | os.PathLike, config, *, driver=None, batch_size: int | None = None):
        """``config`` is the store's [graph] section; ``driver`` an already-open
        ``neo4j.Driver`` (or anything with its ``session()``), else one is opened on first use;
        ``batch_size``: rows per statement and transaction when syncing."""
        self.store_dir = Path(store_dir)
        self.meta_path = self.store_dir / "graph" / META_NAME
        self.snapshot = self.store_dir / "graph" / SNAPSHOT_NAME
        self.settings = connection_settings(config)
        self.batch_size = batch_size or BATCH_SIZE
        self._driver = driver

    def __repr__(self) -> str:
        return f"<Neo4jGraph {self.settings['uri']} database={self.settings['database']}>"

    @property
    def location(self) -> str:
        return f"{self.settings['uri']} database={self.settings['database']}"

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
    def needs_full_sync(self) -> str | None:
        """Why the next sync must send everything (None: only what changed will do)."""
        last = self.last_sync()
        if last is None or not self.snapshot.is_dir():
            return "never synced"
        if last.get("location") != self.location:
            return f"the last sync went to {last.get('location')}"
        pending = last.get("pending")
        if pending is not None:
            # An interrupted sync: the server holds part of what it sent, which the next
            # one sends again. An interrupted full sync had not cleaned up yet.
            return "the last full sync was interrupted" if pending.get("mode") == "full" else None
        expected = GraphCounts(**{k: last["counts"][k] for k in ("entities", "literals", "edges", "values")})
        found = self.counts()
        if found != expected:
            return f"the server holds {found} where the last sync left {expected}"
        return None

    def sync(self, store, progress: ProgressCallback | None = None, *, full: bool = False) -> SyncReport:
        """Send what changed since the last sync (everything when ``full``, on the first
        sync, or when the server no longer holds what the last sync left)."""
        return self._sync(store, progress, "asked" if full else self.needs_full_sync())

    def _sync(self, store, progress: ProgressCallback | None, reason: str | None) -> SyncReport:
        """A sync: full when there is a ``reason`` for it, else incremental."""
        started = time.perf_counter()
        sync_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        if progress:
            progress(SyncProgress("export", 0, 0))
        delta = compute_delta(store, self.snapshot, full=reason is not None)
        mode = "full" if delta.full else "incremental"
        try:
            self._write_meta({**(self.last_sync() or {}), "pending": {"sync_id": sync_id, "mode": mode}})
            load_started = time.perf_counter()
            stages = self._send(delta, sync_id, progress)
            delta.commit()
        except BaseException:
            delta.discard()
            raise
        n = delta.row_counts
        report = SyncReport(
            backend=self.name,
            counts=GraphCounts(entities=n[ENTITY], literals=n[LITERAL], edges=n[REL], values=n[HAS_VALUE]),
            seconds=time.perf_counter() - started, export_seconds=delta.seconds,
            load_seconds=time.perf_counter() - load_started, catalog_state=delta.catalog_state,
            location=self.location, stages=stages, mode=mode,
            upserted=sum(delta.upsert_counts.values()), deleted=sum(delta.delete_counts.values()),
        )
        self._write_meta({**report.as_dict(), "sync_id": sync_id, "full_reason": reason,
                          "synced_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
        if mode == "incremental":
            # Cheap insurance: what a change of the server behind our back (or an
            # interrupted sync whose rows the store dropped since) left, a full sync removes.
            found = self.counts()
            if found != report.counts:
                again = self._sync(store, progress, f"after an incremental sync the server held {found}, "
                                                    f"not {report.counts}")
                again.seconds += report.seconds
                return again
        return report

    def _send(self, delta: Delta, sync_id: str, progress: ProgressCallback | None) -> dict[str, float]:
        total = delta.changed
        done = 0
        stages: dict[str, float] = {}

        def run_batches(stage: str, stmt: str, batches, **params) -> None:
            nonlocal done
            t0 = time.perf_counter()
            for batch in batches:
                if progress:
                    progress(SyncProgress(stage, done, total))
                session.execute_write(lambda tx, b=batch: tx.run(stmt, rows=b, **params).consume())
                done += len(batch)
            stages[stage] = stages.get(stage, 0.0) + time.perf_counter() - t0

        with self._session(write=True) as session:
            for stmt in schema_statements():
                session.run(stmt).consume()
            if not delta.full:
                # Relationships first: a node's DETACH DELETE would take them anyway, but a
                # relationship between nodes that stay must go by itself.
                for table in (REL, HAS_VALUE, ENTITY, LITERAL):
                    run_batches(f"delete {table}", delete_statement(table), delta.deletes(table, self.batch_size))
            for table in TABLES:  # nodes before the relationships that point at them
                run_batches(table, upsert_statement(table), delta.upserts(table, self.batch_size), sync=sync_id)
            if delta.full:
                t0 = time.perf_counter()
                if progress:
                    progress(SyncProgress("cleanup", done, total))
                for stmt in cleanup_statements():
                    while session.execute_write(
                            lambda tx, s=stmt: tx.run(s, sync=sync_id, limit=self.batch_size).single()["n"]):
                        pass
                stages["cleanup"] = time.perf_counter() - t0
        if progress:
            progress(SyncProgress("done", done, total))
        return stages

    def _write_meta(self, meta: dict) -> None:
        self.meta_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=2))
        tmp.replace(self.meta_path)

    # -- reading ------------------------------------------------------------------------
    def is_synced(self) -> bool:
        last = self.last_sync()
        return last is not None and "counts" in last

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
            if not write and result.consume().counters.contains_updates:
                # Neo4j refuses writes in a read transaction; ArcadeDB's Bolt server runs
                # them. Raising here makes the driver roll the transaction back.
                raise _WroteWhileReading()
            return rows

        try:
            with self._session(write=write) as session:
                return session.execute_write(work) if write else session.execute_read(work)
        except neo4j.exceptions.Neo4jError as exc:
            raise QueryError(f"Cypher query failed: {exc.message or exc}") from exc
        except _WroteWhileReading:
            raise QueryError("the query wrote to the property graph, so it was rolled back; pass --write "
                             "(write=True) to allow queries that write") from None

    def counts(self) -> GraphCounts:
        with self._session(write=False) as session:
            return GraphCounts(**{name: session.run(q).single()["n"] for name, q in count_statements().items()})

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None


class _WroteWhileReading(Exception):
    """A query run as read-only reported updates (the server did not refuse them)."""


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

"""The DuckDB catalog: entities, relations, statements, ingest runs and rejected lines.

The writer opens DuckDB only for the length of a transaction, because DuckDB lets no
other process read a file that one process holds open for writing; this way readers can
open the catalog read-only between the writer's batches. An ingest of a big file holds
it across its commits for up to half a minute at a time (kgstore/_ingest.py says why).
"""
from __future__ import annotations

import contextlib
import json
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._columns import fact_mask, triple_columns
from .errors import CatalogBusyError
from .records import EntityRecord, RejectedLine, RelationRecord, Triple

CATALOG_NAME = "catalog.duckdb"
SCHEMA_VERSION = 1

DDL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS entities (
    iri VARCHAR PRIMARY KEY,
    id VARCHAR,
    label VARCHAR,
    description VARCHAR,
    aliases VARCHAR[],
    sitelinks INTEGER,
    popularity BIGINT DEFAULT 0,
    is_mediator BOOLEAN DEFAULT FALSE,
    kind VARCHAR DEFAULT 'item'
);
CREATE TABLE IF NOT EXISTS relations (
    iri VARCHAR PRIMARY KEY,
    id VARCHAR,
    label VARCHAR,
    description VARCHAR,
    inverse_label VARCHAR,
    datatype VARCHAR,
    is_mediator_type BOOLEAN DEFAULT FALSE,
    usage BIGINT DEFAULT 0
);
-- Direct facts (no labels/descriptions, no Wikidata statement-node vocabulary).
-- o_literal = FALSE means o is an IRI.
CREATE TABLE IF NOT EXISTS statements (
    s VARCHAR NOT NULL,
    p VARCHAR NOT NULL,
    o VARCHAR NOT NULL,
    o_literal BOOLEAN NOT NULL,
    datatype VARCHAR,
    lang VARCHAR,
    run_id INTEGER
);
CREATE SEQUENCE IF NOT EXISTS run_ids START 1;
CREATE TABLE IF NOT EXISTS ingest_runs (
    run_id INTEGER PRIMARY KEY,
    file VARCHAR,
    size BIGINT,
    checksum VARCHAR,
    format VARCHAR,
    options VARCHAR,
    checkpoint_offset BIGINT DEFAULT 0,
    checkpoint_line BIGINT DEFAULT 0,
    counts VARCHAR DEFAULT '{}',
    status VARCHAR,
    error VARCHAR,
    started TIMESTAMP,
    finished TIMESTAMP
);
CREATE TABLE IF NOT EXISTS rejected (
    run_id INTEGER,
    file VARCHAR,
    line_no BIGINT,
    reason VARCHAR,
    raw VARCHAR
);
"""

_STATEMENT_SCHEMA = pa.schema([
    ("s", pa.string()), ("p", pa.string()), ("o", pa.string()), ("o_literal", pa.bool_()),
    ("datatype", pa.string()), ("lang", pa.string()), ("run_id", pa.int32()),
])


WAIT_REPORT_EVERY_S = 5.0


@dataclass(frozen=True)
class CatalogWait:
    """This process waits for the catalog: ``holder`` (pid and command, when DuckDB
    names it) holds it, and has for ``waited_s`` seconds of this wait."""

    store: str
    holder: str | None
    waited_s: float
    limit_s: float

    def __str__(self) -> str:
        return (f"waiting for the catalog of {self.store}: held by {self.holder or 'another process'}; "
                f"waited {self.waited_s:.0f} s of at most {self.limit_s:.0f} s")


def lock_holder(message: str) -> str | None:
    """``pid N (command line)`` of the process DuckDB's lock error names, or None."""
    found = re.search(r"\(PID (\d+)\)", message)
    if not found:
        return None
    pid = int(found.group(1))
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        command = ""
    return f"pid {pid} ({command[:120]})" if command else f"pid {pid}"


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Catalog:
    """Access to ``catalog.duckdb``. Use ``with catalog.connect() as con:`` for queries."""

    def __init__(self, store_dir: Path, *, read_only: bool, lock_timeout: float = 60.0,
                 on_wait: Callable[["CatalogWait"], None] | None = None):
        self.path = Path(store_dir) / CATALOG_NAME
        self.read_only = read_only
        self.lock_timeout = lock_timeout
        self.on_wait = on_wait  # told when another process holds the catalog (see _open)
        self._con: duckdb.DuckDBPyConnection | None = None
        self._depth = 0

    # -- connections ---------------------------------------------------------------
    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for the duration of the block (re-entrant)."""
        if self._con is None:
            self._con = self._open()
        self._depth += 1
        try:
            yield self._con
        finally:
            self._depth -= 1
            if self._depth == 0 and not getattr(self, "_pinned", False):
                self._con.close()
                self._con = None

    def wal_bytes(self) -> int:
        """The size of DuckDB's write-ahead log: commits not yet merged into the file."""
        wal = self.path.with_name(self.path.name + ".wal")
        return wal.stat().st_size if wal.exists() else 0

    @contextlib.contextmanager
    def pinned(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Keep one connection open across many ``connect()`` blocks (bulk reads)."""
        with self.connect() as con:
            self._pinned = True
            try:
                yield con
            finally:
                self._pinned = False

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _open(self) -> duckdb.DuckDBPyConnection:
        started = time.monotonic()
        deadline = started + self.lock_timeout
        delay = 0.02
        told = 0.0
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=self.read_only)
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower():
                    raise
                waited = time.monotonic() - started
                holder = lock_holder(str(exc))
                if time.monotonic() > deadline:
                    raise CatalogBusyError(self.path.parent, holder, waited) from exc
                # Say at once who holds it, then every few seconds: a writer never waits silently.
                if self.on_wait is not None and (not told or waited - told >= WAIT_REPORT_EVERY_S):
                    told = waited or 1e-9
                    self.on_wait(CatalogWait(str(self.path.parent), holder, waited, self.lock_timeout))
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    @staticmethod
    def limit_memory(con, limit: str | None) -> None:
        """Cap DuckDB's buffer pool (``"128MB"``), or give it its default back (None). The
        setting is the database's, shared by every connection to it in this process."""
        if limit is None:
            con.execute("RESET memory_limit")
        else:
            con.execute("SET memory_limit = ?", [limit])

    def create(self) -> None:
        with self.connect() as con:
            con.execute(DDL)
            con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])

    # -- writes (one batch) --------------------------------------------------------
    @staticmethod
    def write_batch(con, run_id: int, triples: Sequence[Triple], entities: Sequence[EntityRecord],
                    relations: Sequence[RelationRecord], rejected: Sequence[RejectedLine], file: str) -> int:
        """Write one batch's catalog rows inside the caller's transaction. Returns facts written."""
        return Catalog.write_rows(con, run_id, Catalog.facts_table(triples, run_id),
                                  Catalog.entities_table(entities), relations, rejected, file)

    # The table builders are pure, so that an ingest can run them in its parsing worker
    # process and leave only the writes to the committing one (kgstore/_pipeline.py).
    @staticmethod
    def facts_table(triples: Sequence[Triple], run_id: int) -> pa.Table | None:
        """The statements rows of ``triples`` (None when none of them is a fact)."""
        return Catalog.facts_of_columns(triple_columns(triples), run_id)

    @staticmethod
    def facts_of_columns(columns: pa.StructArray, run_id: int) -> pa.Table | None:
        """The statements rows of triples given as :func:`kgstore._columns.triple_columns`."""
        if not len(columns):
            return None
        facts = pc.filter(columns, fact_mask(columns))
        if not len(facts):
            return None
        return pa.Table.from_arrays(facts.flatten() + [pa.array(np.full(len(facts), run_id, np.int32))],
                                    schema=_STATEMENT_SCHEMA)

    @staticmethod
    def entities_table(entities: Sequence[EntityRecord]) -> pa.Table | None:
        """One row per IRI of ``entities`` (None when empty).

        Last record wins per IRI within the batch; across batches, known fields are kept
        unless the new record knows better (COALESCE in the upsert), so split sources merge.
        """
        if not entities:
            return None
        merged: dict[str, EntityRecord] = {}
        for e in entities:
            old = merged.get(e.iri)
            if old is None:
                merged[e.iri] = e
            else:
                merged[e.iri] = EntityRecord(
                    iri=e.iri, id=e.id, label=e.label or old.label,
                    description=e.description or old.description,
                    aliases=tuple(dict.fromkeys(old.aliases + e.aliases)),
                    sitelinks=e.sitelinks if e.sitelinks is not None else old.sitelinks,
                    is_mediator=e.is_mediator or old.is_mediator, kind=e.kind,
                )
        rows = list(merged.values())
        return pa.table({
            "iri": [e.iri for e in rows], "id": [e.id for e in rows],
            "label": [e.label for e in rows], "description": [e.description for e in rows],
            "aliases": pa.array([list(e.aliases) if e.aliases else None for e in rows], pa.list_(pa.string())),
            "sitelinks": pa.array([e.sitelinks for e in rows], pa.int32()),
            "is_mediator": [e.is_mediator for e in rows], "kind": [e.kind for e in rows],
        })

    @staticmethod
    def write_rows(con, run_id: int, facts: pa.Table | None, entities: pa.Table | None,
                   relations: Sequence[RelationRecord], rejected: Sequence[RejectedLine], file: str) -> int:
        """Write rows built by :meth:`facts_table` and :meth:`entities_table` inside the
        caller's transaction. Returns facts written."""
        if facts is not None and facts.num_rows:
            con.register("_facts", facts)
            con.execute("INSERT INTO statements SELECT * FROM _facts")
            con.unregister("_facts")
        if entities is not None and entities.num_rows:
            Catalog._upsert_entity_rows(con, entities)
        if relations:
            Catalog._upsert_relations(con, relations)
        if rejected:
            con.executemany(
                "INSERT INTO rejected VALUES (?, ?, ?, ?, ?)",
                [(run_id, file, r.line_no, r.reason, r.raw[:2000]) for r in rejected],
            )
        return facts.num_rows if facts is not None else 0

    @staticmethod
    def _upsert_entities(con, entities: Sequence[EntityRecord]) -> None:
        if entities:
            Catalog._upsert_entity_rows(con, Catalog.entities_table(entities))

    @staticmethod
    def _upsert_entity_rows(con, table: pa.Table) -> None:
        con.register("_ents", table)
        Catalog.upsert_entities_from(con, "_ents")
        con.unregister("_ents")

    @staticmethod
    def upsert_entities_from(con, source: str) -> None:
        """Upsert the rows of table or view ``source`` (the columns of :meth:`entities_table`,
        one row per IRI) into ``entities``: known fields are kept unless the new row knows better."""
        con.execute(f"""
            INSERT INTO entities (iri, id, label, description, aliases, sitelinks, is_mediator, kind)
            SELECT iri, id, label, description, aliases, sitelinks, is_mediator, kind FROM {source}
            ON CONFLICT (iri) DO UPDATE SET
                label = COALESCE(excluded.label, entities.label),
                description = COALESCE(excluded.description, entities.description),
                aliases = CASE WHEN excluded.aliases IS NULL THEN entities.aliases
                               WHEN entities.aliases IS NULL THEN excluded.aliases
                               ELSE list_distinct(list_concat(entities.aliases, excluded.aliases)) END,
                sitelinks = COALESCE(excluded.sitelinks, entities.sitelinks),
                is_mediator = entities.is_mediator OR excluded.is_mediator,
                kind = excluded.kind
        """)

    @staticmethod
    def _upsert_relations(con, relations: Sequence[RelationRecord]) -> None:
        merged: dict[str, RelationRecord] = {}
        for r in relations:
            old = merged.get(r.iri)
            if old is not None:
                r = RelationRecord(
                    iri=r.iri, id=r.id, label=r.label or old.label, description=r.description or old.description,
                    inverse_label=r.inverse_label or old.inverse_label, datatype=r.datatype or old.datatype,
                    is_mediator_type=r.is_mediator_type or old.is_mediator_type,
                )
            merged[r.iri] = r
        rows = list(merged.values())
        table = pa.table({
            "iri": [r.iri for r in rows], "id": [r.id for r in rows], "label": [r.label for r in rows],
            "description": [r.description for r in rows], "inverse_label": [r.inverse_label for r in rows],
            "datatype": [r.datatype for r in rows], "is_mediator_type": [r.is_mediator_type for r in rows],
        })
        con.register("_rels", table)
        con.execute("""
            INSERT INTO relations (iri, id, label, description, inverse_label, datatype, is_mediator_type)
            SELECT * FROM _rels
            ON CONFLICT (iri) DO UPDATE SET
                label = COALESCE(excluded.label, relations.label),
                description = COALESCE(excluded.description, relations.description),
                inverse_label = COALESCE(excluded.inverse_label, relations.inverse_label),
                datatype = COALESCE(excluded.datatype, relations.datatype),
                is_mediator_type = relations.is_mediator_type OR excluded.is_mediator_type
        """)
        con.unregister("_rels")

    @staticmethod
    def finalize(con, *, label_from_id: bool = False) -> None:
        """Derived columns after an ingest: entities referenced only as objects, relations
        seen only in facts, popularity and usage counts. Idempotent."""
        _dedupe_statements(con)
        # One count of references per node serves both the nodes to add and their popularity
        # (the two scans of the statements table were half of this method's time).
        con.execute("""
            CREATE TEMP TABLE _refs AS SELECT x, count(*) AS n FROM (
                SELECT s AS x FROM statements UNION ALL SELECT o FROM statements WHERE NOT o_literal
            ) GROUP BY x
        """)
        con.execute("""
            INSERT INTO entities (iri, id)
            SELECT x, regexp_extract(x, '[^/#]*$') FROM _refs
            WHERE x NOT IN (SELECT iri FROM entities)
              AND x NOT IN (SELECT iri FROM relations)
            ON CONFLICT DO NOTHING
        """)
        con.execute("""
            INSERT INTO relations (iri, id)
            SELECT DISTINCT p, regexp_extract(p, '[^/#]*$') FROM statements
            WHERE p NOT IN (SELECT iri FROM relations)
            ON CONFLICT DO NOTHING
        """)
        con.execute("UPDATE entities SET popularity = r.n FROM _refs r WHERE entities.iri = r.x")
        con.execute("DROP TABLE _refs")
        con.execute("""
            UPDATE relations SET usage = c.n FROM (SELECT p, count(*) AS n FROM statements GROUP BY p) c
            WHERE relations.iri = c.p
        """)

    # -- ingest runs ---------------------------------------------------------------
    @staticmethod
    def start_run(con, *, file: str, size: int, checksum: str, fmt: str, options: dict) -> int:
        run_id = con.execute("SELECT nextval('run_ids')").fetchone()[0]
        con.execute(
            "INSERT INTO ingest_runs (run_id, file, size, checksum, format, options, status, started) "
            "VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
            [run_id, file, size, checksum, fmt, json.dumps(options, sort_keys=True), _now()],
        )
        return run_id

    @staticmethod
    def checkpoint(con, run_id: int, offset: int, line_no: int, counts: dict) -> None:
        con.execute(
            "UPDATE ingest_runs SET checkpoint_offset = ?, checkpoint_line = ?, counts = ? WHERE run_id = ?",
            [offset, line_no, json.dumps(counts, sort_keys=True), run_id],
        )

    @staticmethod
    def end_run(con, run_id: int, status: str, error: str | None = None) -> None:
        con.execute(
            "UPDATE ingest_runs SET status = ?, error = ?, finished = ? WHERE run_id = ?",
            [status, error, _now(), run_id],
        )

    @staticmethod
    def find_run(con, checksum: str, fmt: str, options: dict) -> dict | None:
        """The latest run of the same file content, format and options."""
        row = con.execute(
            "SELECT run_id, status, checkpoint_offset, checkpoint_line, counts FROM ingest_runs "
            "WHERE checksum = ? AND format = ? AND options = ? ORDER BY run_id DESC LIMIT 1",
            [checksum, fmt, json.dumps(options, sort_keys=True)],
        ).fetchone()
        if row is None:
            return None
        return {"run_id": row[0], "status": row[1], "offset": row[2], "line": row[3], "counts": json.loads(row[4])}

    @staticmethod
    def set_meta(con, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` in the meta table (in the caller's transaction)."""
        con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    @staticmethod
    def get_meta(con, key: str) -> str | None:
        row = con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    @staticmethod
    def forget_facts_of_runs(con, run_ids: Sequence[int]) -> None:
        """Delete the facts that runs ``run_ids`` wrote (a later run read the same source
        again in full: what it did not find there is gone from the source)."""
        if run_ids:
            con.execute(f"DELETE FROM statements WHERE run_id IN ({','.join(str(int(r)) for r in run_ids)})")

    @staticmethod
    def runs_of(con, checksum: str, fmt: str) -> list[int]:
        """The ids of every run of the same source and format, oldest first."""
        return [r[0] for r in con.execute("SELECT run_id FROM ingest_runs WHERE checksum = ? AND format = ? "
                                          "ORDER BY run_id", [checksum, fmt]).fetchall()]

    @staticmethod
    def move_predicate_labels(con) -> None:
        """IRIs used as predicates are relations: a label, description or aliases that a
        source gave them as plain subjects (``<p> rdfs:label "directed by"``, read before
        it was seen as a predicate) become the relation's, and the entity rows go.
        Wikidata's ``wd:P31`` stays an entity: its relation is ``wdt:P31``."""
        con.execute("""
            INSERT INTO relations (iri, id)
            SELECT DISTINCT st.p, regexp_extract(st.p, '[^/#]*$') FROM statements st
            WHERE st.p IN (SELECT iri FROM entities) AND st.p NOT IN (SELECT iri FROM relations)
        """)
        con.execute("""
            UPDATE relations SET label = COALESCE(relations.label, e.label),
                                 description = COALESCE(relations.description, e.description)
            FROM entities e WHERE e.iri = relations.iri
        """)
        con.execute("DELETE FROM entities WHERE iri IN (SELECT iri FROM relations)")

    @staticmethod
    def drop_run(con, run_id: int) -> None:
        """Delete a run that committed nothing (the file was in another format)."""
        con.execute("DELETE FROM ingest_runs WHERE run_id = ?", [run_id])

    @staticmethod
    def forget_runs(con, checksum: str, fmt: str) -> None:
        """--force: drop what earlier runs of this file put in the catalog's tables."""
        ids = [r[0] for r in con.execute(
            "SELECT run_id FROM ingest_runs WHERE checksum = ? AND format = ?", [checksum, fmt]).fetchall()]
        if ids:
            con.execute(f"DELETE FROM statements WHERE run_id IN ({','.join(map(str, ids))})")
            con.execute(f"DELETE FROM rejected WHERE run_id IN ({','.join(map(str, ids))})")
            con.execute(f"UPDATE ingest_runs SET status = 'superseded' WHERE run_id IN ({','.join(map(str, ids))})")


def _dedupe_statements(con) -> None:
    """Make the statements table a set, as Oxigraph is: the same fact read twice (a repeated
    line, or two files that share facts) is kept once, under the earliest run. Checked at
    the end of each file rather than per batch, where it would need a join per batch."""
    # Distinct hashes as many as rows prove the rows distinct, and counting them costs
    # half or less of counting distinct rows; only when hashes repeat are rows compared.
    total, hashes = con.execute(
        "SELECT count(*), count(DISTINCT hash(s, p, o, o_literal, datatype, lang)) FROM statements").fetchone()
    if total == hashes:
        return
    total, distinct = con.execute("""
        SELECT (SELECT count(*) FROM statements),
               (SELECT count(*) FROM (SELECT DISTINCT s, p, o, o_literal, datatype, lang FROM statements))
    """).fetchone()
    if total == distinct:
        return
    con.execute("""
        CREATE TABLE statements_dedup AS
        SELECT s, p, o, o_literal, datatype, lang, min(run_id) AS run_id
        FROM statements GROUP BY s, p, o, o_literal, datatype, lang
    """)
    con.execute("DROP TABLE statements")
    con.execute("ALTER TABLE statements_dedup RENAME TO statements")

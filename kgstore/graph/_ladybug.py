"""The embedded backend: Ladybug (Kùzu's successor), one database file in the store directory.

A sync exports the catalog with DuckDB (Arrow tables in memory, or Parquet files for big
stores), builds a fresh database next to the live one with one ``COPY`` per row set as soon
as it is ready (bulk loading; row-by-row MERGE is ~200x slower), and swaps it in with one
rename, so readers never see a half-built graph and running sync twice gives the same
graph. Queries open the database read-only unless they are allowed to write.
"""
from __future__ import annotations

import glob
import json
import os
import queue
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import GraphError, GraphNotSyncedError, KgstoreError, QueryError
from ._base import ENTITY, HAS_VALUE, LITERAL, REL, GraphCounts, ProgressCallback, PropertyGraph, SyncProgress, \
    SyncReport
from ._export import ExportedFile, ExportedFiles, export_arrow, export_parquet, statement_count
from ._readonly import check_read_only

GRAPH_DIR = "graph"
DB_NAME = "ladybug.db"
META_NAME = "ladybug.json"
# Up to this many statements, the rows travel in memory (~1 GB at the limit): faster than
# Parquet. Beyond, Parquet files keep memory flat, and each table still loads with one COPY
# (several COPYs into one relationship table cost far more than one).
ARROW_MAX_ROWS = 3_000_000

SCHEMA = (
    f"CREATE NODE TABLE {ENTITY}(iri STRING, id STRING, label STRING, description STRING, "
    "popularity INT64, is_mediator BOOLEAN, PRIMARY KEY (iri))",
    f"CREATE NODE TABLE {LITERAL}(key STRING, value STRING, label STRING, datatype STRING, lang STRING, "
    "PRIMARY KEY (key))",
    f"CREATE REL TABLE {REL}(FROM {ENTITY} TO {ENTITY}, pid STRING, label STRING, iri STRING)",
    f"CREATE REL TABLE {HAS_VALUE}(FROM {ENTITY} TO {LITERAL}, pid STRING, label STRING, iri STRING)",
)

# Ladybug's internal row addresses: meaningless outside one database file.
_INTERNAL_KEYS = frozenset({"_ID", "_SRC", "_DST"})


def _ladybug():
    try:
        import ladybug
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise GraphError("the embedded graph needs Ladybug: pip install 'kgstore[graph]'") from exc
    return ladybug


def copy_statement(table: str, path: Path) -> str:
    quoted = str(path).replace("\\", "\\\\").replace("'", "\\'")
    return f"COPY {table} FROM '{quoted}'"


def build_database(db_path: Path, files: Iterable[ExportedFile], *,
                   progress: ProgressCallback | None = None) -> dict[str, float]:
    """Create a database at ``db_path`` with the fixed schema and bulk-load ``files`` (in
    load order; they may still be arriving from the export). Returns seconds per file."""
    lb = _ladybug()
    done = 0
    seconds: dict[str, float] = {}
    db = lb.Database(str(db_path))
    try:
        conn = lb.Connection(db)
        try:
            for ddl in SCHEMA:
                conn.execute(ddl)
            for item in files:
                started = time.perf_counter()
                if progress:
                    progress(SyncProgress(item.row_set.table, done, 0))
                if item.rows and item.table is not None:
                    conn.execute(f"COPY {item.row_set.table} FROM $rows", {"rows": item.table})
                elif item.rows:
                    conn.execute(copy_statement(item.row_set.table, item.path))
                item.table = None  # loaded: let the memory go
                seconds[item.row_set.name] = time.perf_counter() - started
                done += item.rows
            if progress:
                progress(SyncProgress("done", done, done))
        finally:
            conn.close()
    finally:
        db.close()
    return seconds


class LadybugGraph(PropertyGraph):
    name = "ladybug"

    def __init__(self, store_dir: str | os.PathLike, *, arrow_max_rows: int = ARROW_MAX_ROWS):
        """``arrow_max_rows``: stores with at most this many statements are handed from DuckDB
        to Ladybug as Arrow tables in memory; bigger ones through Parquet files on disk."""
        self.store_dir = Path(store_dir)
        self.arrow_max_rows = arrow_max_rows
        self.directory = self.store_dir / GRAPH_DIR
        self.db_path = self.directory / DB_NAME
        self.meta_path = self.directory / META_NAME
        self._db = None
        self._conn = None
        self._writable = False

    def __repr__(self) -> str:
        return f"<LadybugGraph {self.db_path}>"

    # -- sync --------------------------------------------------------------------------
    def sync(self, store, progress: ProgressCallback | None = None, *, full: bool = False) -> SyncReport:
        """Always a full rebuild (see the module's doc for why); ``full`` is accepted for
        the interface's sake."""
        started = time.perf_counter()
        self.close()
        self.directory.mkdir(parents=True, exist_ok=True)
        staging = self.directory / f"staging-{os.getpid()}"
        building = self.directory / (DB_NAME + ".building")
        # a killed sync leaves the half-built file with its WAL and checkpoint files, which
        # Ladybug refuses to open a new database beside
        _remove(staging, building, *_sidecars(building))
        if progress:
            progress(SyncProgress("export", 0, 0))
        # DuckDB exports in a thread while Ladybug loads each row set as soon as it is
        # ready: both release the GIL, so the export costs little extra time.
        ready: queue.Queue = queue.Queue()
        exported: list[ExportedFiles] = []

        in_memory = statement_count(store) <= self.arrow_max_rows

        def export() -> None:
            try:
                if in_memory:
                    exported.append(export_arrow(store, on_table=ready.put))
                else:
                    exported.append(export_parquet(store, staging, on_file=ready.put))
                ready.put(None)
            except BaseException as exc:  # handed to the loading thread, which raises it
                ready.put(exc)

        worker = threading.Thread(target=export, name="kgstore-graph-export", daemon=True)
        worker.start()
        interrupted = False
        try:
            load_started = time.perf_counter()
            stages = build_database(building, _arrivals(ready), progress=progress)
            load_seconds = time.perf_counter() - load_started
            # A WAL left by a crashed writer of the old file must not be replayed onto the new one.
            _remove(*(p for p in _sidecars(self.db_path) if not p.name.startswith(building.name)))
            os.replace(building, self.db_path)
        except RuntimeError as exc:
            raise GraphError(f"loading the Ladybug graph failed: {exc}") from exc
        except KeyboardInterrupt:
            interrupted = True  # don't wait for the export: the (daemon) thread dies with us
            raise
        finally:
            if not interrupted:
                worker.join()
            _remove(staging, building, *_sidecars(building))
        files = exported[0]
        counts = GraphCounts(entities=files.rows(ENTITY), literals=files.rows(LITERAL),
                             edges=files.rows(REL), values=files.rows(HAS_VALUE))
        report = SyncReport(
            backend=self.name, counts=counts, seconds=time.perf_counter() - started,
            export_seconds=files.seconds, load_seconds=load_seconds,
            catalog_state=files.catalog_state, location=str(self.db_path),
            stages={"export": files.seconds, **stages}, upserted=counts.nodes + counts.relationships,
        )
        meta = {**report.as_dict(), "synced_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=2))
        tmp.replace(self.meta_path)
        return report

    # -- reading -------------------------------------------------------------------------
    def is_synced(self) -> bool:
        return self.db_path.exists() and self.meta_path.exists()

    def last_sync(self) -> dict | None:
        if not self.meta_path.exists():
            return None
        return json.loads(self.meta_path.read_text())

    def _connection(self, *, write: bool):
        if not self.is_synced():
            raise GraphNotSyncedError(self.store_dir, self.name)
        if self._conn is not None and (self._writable or not write):
            return self._conn
        self.close()
        lb = _ladybug()
        try:
            self._db = lb.Database(str(self.db_path), read_only=not write)
        except RuntimeError as exc:
            raise GraphError(f"cannot open the Ladybug graph {self.db_path}: {exc}") from exc
        self._conn = lb.Connection(self._db)
        self._writable = write
        return self._conn

    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False) -> list[dict]:
        if not write:
            check_read_only(cypher)
        conn = self._connection(write=write)
        try:
            result = conn.execute(cypher, params or {})
        except RuntimeError as exc:
            raise QueryError(f"Cypher query failed: {exc}") from exc
        if isinstance(result, list):  # several statements: the last one's rows
            result = result[-1]
        columns = result.get_column_names()
        rows = [dict(zip(columns, map(plain, row))) for row in result.get_all()]
        result.close()
        self.last_columns = columns
        return rows

    def counts(self) -> GraphCounts:
        one = lambda q: self.query(q)[0]["n"]  # noqa: E731
        return GraphCounts(
            entities=one(f"MATCH (n:{ENTITY}) RETURN count(n) AS n"),
            literals=one(f"MATCH (n:{LITERAL}) RETURN count(n) AS n"),
            edges=one(f"MATCH ()-[r:{REL}]->() RETURN count(r) AS n"),
            values=one(f"MATCH ()-[r:{HAS_VALUE}]->() RETURN count(r) AS n"),
        )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._db is not None:
            self._db.close()
            self._db = None


def plain(value: Any) -> Any:
    """A query value as JSON-ready Python: nodes and relationships become dicts of their
    properties plus ``_LABEL``; internal row addresses are dropped."""
    if isinstance(value, dict):
        if "_LABEL" in value:
            # A node or relationship: a variable that may bind several tables carries every
            # table's properties, null where absent; drop nulls, as Neo4j does.
            return {k: plain(v) for k, v in value.items() if k not in _INTERNAL_KEYS and v is not None}
        return {k: plain(v) for k, v in value.items() if k not in _INTERNAL_KEYS}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.hex()
    return str(value)  # dates, decimals, UUIDs...


def _arrivals(ready: queue.Queue) -> Iterator[ExportedFile]:
    """Exported files as the export thread announces them; its error, raised here."""
    while True:
        item = ready.get()
        if item is None:
            return
        if isinstance(item, BaseException):
            if isinstance(item, Exception) and not isinstance(item, KgstoreError):
                raise GraphError(f"exporting the catalog for the graph failed: {item}") from item
            raise item
        yield item


def _sidecars(db_path: Path) -> list[Path]:
    """The files Ladybug keeps beside a database file: ``NAME.wal``, ``NAME.wal.checkpoint``..."""
    return list(db_path.parent.glob(glob.escape(db_path.name) + ".*"))


def _remove(*paths: Path) -> None:
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink()

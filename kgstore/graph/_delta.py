"""What changed in the graph's rows since the last sync: the snapshot and the diff.

A server-side mirror (Neo4j) keeps, next to the store, a snapshot of the rows it last sent
(one Parquet file per table, as ``_export`` computes them). The next sync exports the rows
again and lets DuckDB diff the two:

* ``upserts``: rows new or changed since (``now EXCEPT snapshot``: whole rows, so a label
  that changed is sent again);
* ``deletes``: keys present then and gone now (``keys(snapshot) EXCEPT keys(now)``).

Only those travel to the server; the new export becomes the snapshot once the server has
them all (:meth:`Delta.commit`), so an interrupted sync is simply done again. Exporting and
diffing cost DuckDB seconds even for millions of rows; sending costs the server far more.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ._base import ENTITY, HAS_VALUE, LITERAL, REL
from ._export import ROW_SETS, TABLES, export_parquet

# The columns that identify a row of each table: a node's key, or a relationship's ends and
# relation IRI (one relationship per distinct subject, predicate and object).
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    ENTITY: ("iri",), LITERAL: ("key",), REL: ("from", "to", "iri"), HAS_VALUE: ("from", "to", "iri"),
}


def _quoted(names) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _files(directory: Path, table: str) -> list[str]:
    """The Parquet files of ``table`` in ``directory`` (the Entity table comes in two parts)."""
    return [str(directory / f"{rs.name}.parquet") for rs in ROW_SETS
            if rs.table == table and (directory / f"{rs.name}.parquet").exists()]


def _relation(files: list[str]) -> str:
    quoted = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    return f"read_parquet([{quoted}])"


def upsert_sql(now: list[str], before: list[str] | None) -> str:
    """Rows in the ``now`` files and not, identical, in the ``before`` ones."""
    if not before:
        return f"SELECT * FROM {_relation(now)}"
    return f"SELECT * FROM {_relation(now)} EXCEPT SELECT * FROM {_relation(before)}"


def delete_sql(table: str, now: list[str], before: list[str] | None) -> str | None:
    """Keys of ``table`` in the ``before`` files and not in the ``now`` ones."""
    if not before:
        return None
    keys = _quoted(TABLE_KEYS[table])
    return f"SELECT {keys} FROM {_relation(before)} EXCEPT SELECT {keys} FROM {_relation(now)}"


@dataclass
class Delta:
    """The rows to send and delete, per table; iterate them with :meth:`upserts` and
    :meth:`deletes`, then :meth:`commit` once the server holds them."""

    snapshot: Path
    staging: Path
    full: bool  # True: no snapshot was used, every row is an upsert
    upsert_counts: dict[str, int] = field(default_factory=dict)
    delete_counts: dict[str, int] = field(default_factory=dict)
    row_counts: dict[str, int] = field(default_factory=dict)  # rows now, per table
    catalog_state: str = ""
    seconds: float = 0.0

    def _sql(self, kind: str, table: str) -> str | None:
        now = _files(self.staging, table)
        before = None if self.full else _files(self.snapshot, table)
        if not now:
            return None
        return upsert_sql(now, before) if kind == "upsert" else delete_sql(table, now, before)

    def _batches(self, sql: str | None, batch_size: int) -> Iterator[list[dict]]:
        if sql is None:
            return
        import duckdb

        with duckdb.connect() as con:
            reader = con.sql(sql).to_arrow_reader(batch_size)
            for batch in reader:
                if batch.num_rows:
                    yield batch.to_pylist()

    def upserts(self, table: str, batch_size: int) -> Iterator[list[dict]]:
        return self._batches(self._sql("upsert", table), batch_size)

    def deletes(self, table: str, batch_size: int) -> Iterator[list[dict]]:
        return self._batches(self._sql("delete", table), batch_size)

    @property
    def changed(self) -> int:
        return sum(self.upsert_counts.values()) + sum(self.delete_counts.values())

    def commit(self) -> None:
        """Make the rows just sent the snapshot the next sync diffs against."""
        old = self.snapshot.with_name(self.snapshot.name + ".old")
        _remove(old)
        if self.snapshot.exists():
            self.snapshot.rename(old)
        self.staging.rename(self.snapshot)
        _remove(old)

    def discard(self) -> None:
        _remove(self.staging)


def compute_delta(store, snapshot: Path, *, full: bool = False) -> Delta:
    """Export ``store``'s rows next to ``snapshot`` and diff them against it (``full``, or
    no snapshot yet: everything is an upsert)."""
    import duckdb

    started = time.perf_counter()
    staging = snapshot.with_name(snapshot.name + ".staging")
    _remove(staging)
    files = export_parquet(store, staging)
    full = full or not snapshot.is_dir()
    delta = Delta(snapshot, staging, full, catalog_state=files.catalog_state)
    with duckdb.connect() as con:
        for table in TABLES:
            delta.row_counts[table] = files.rows(table)
            for kind, counts in (("upsert", delta.upsert_counts), ("delete", delta.delete_counts)):
                sql = delta._sql(kind, table)
                counts[table] = con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0] if sql else 0
    delta.seconds = time.perf_counter() - started
    return delta


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()

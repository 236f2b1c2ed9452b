"""What the property graph holds, as SQL over the DuckDB catalog, and its export.

Every backend reads the same four row sets, so the graphs they build are the same:

========== ============================================================ =======================
table      rows                                                         columns (in this order)
========== ============================================================ =======================
Entity     catalog entities, plus any statement endpoint missing there  iri id label description
           (e.g. a relation IRI used as an object): two files           popularity is_mediator
Literal    one per distinct (value, datatype, lang) of literal facts    key value label datatype lang
REL        distinct (s, p, o) facts whose object is an IRI              from to pid label iri
HAS_VALUE  distinct (s, p, literal) facts                               from to pid label iri
========== ============================================================ =======================

DuckDB hands them over as Arrow tables in memory, or writes Parquet straight from the joins
(``COPY (SELECT ...) TO``) when they are too big for memory; either is much faster than
pulling rows through Python. Ladybug then bulk-loads each with one ``COPY``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ._base import ENTITY, HAS_VALUE, LITERAL, REL

# A literal's key: its value, datatype and language, hashed so the key stays short.
_LITERAL_KEY = "md5(o || chr(31) || coalesce(datatype, '') || chr(31) || coalesce(lang, ''))"

# The relation's short id (the catalog's, else the IRI's last segment, like
# kgstore.terms.local_name) and its label (else that id), so ``r.label`` is never empty.
_PID = "coalesce(r.id, regexp_extract(f.p, '[^/#]*$'))"
_REL_COLUMNS = f"{_PID} AS pid, coalesce(r.label, {_PID}) AS label, f.p AS iri"


@dataclass(frozen=True)
class RowSet:
    name: str  # also the Parquet file's stem
    table: str  # the node or relationship table it loads into
    sql: str
    # Cheaper SQL giving the same rows when every ingest run has finalized the catalog
    sql_finalized: str | None = None

    def query(self, con) -> str:
        if self.sql_finalized is not None and _finalized(con):
            return self.sql_finalized
        return self.sql


def _finalized(con) -> bool:
    """Whether Catalog.finalize ran after every ingest (it does unless one was interrupted):
    then every statement endpoint is an entity, or a relation IRI used as a node."""
    return con.execute("SELECT count(*) FROM ingest_runs WHERE status NOT IN ('done', 'failed', 'superseded')"
                       ).fetchall()[0][0] == 0


# In load order: nodes before the relationships that point at them. The Entity table comes
# in two parts so that loading the catalog's entities can start while DuckDB still looks
# for endpoints missing from it.
ROW_SETS: tuple[RowSet, ...] = (
    RowSet("Entity", ENTITY, """
        SELECT iri, id, label, description,
               coalesce(popularity, 0)::BIGINT AS popularity, coalesce(is_mediator, FALSE) AS is_mediator
        FROM entities
    """),
    RowSet("Entity-endpoints", ENTITY, """
        SELECT m.iri, r.id, r.label, r.description, 0::BIGINT AS popularity, FALSE AS is_mediator
        FROM (
            SELECT DISTINCT x AS iri FROM (
                SELECT s AS x FROM statements UNION ALL SELECT o FROM statements WHERE NOT o_literal
            ) ends WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.iri = ends.x)
        ) m LEFT JOIN relations r ON r.iri = m.iri
    """, sql_finalized="""
        SELECT r.iri, r.id, r.label, r.description, 0::BIGINT AS popularity, FALSE AS is_mediator
        FROM relations r
        WHERE r.iri IN (SELECT st.s FROM statements st JOIN relations x ON x.iri = st.s UNION ALL
                        SELECT st.o FROM statements st JOIN relations x ON x.iri = st.o WHERE NOT st.o_literal)
          AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.iri = r.iri)
    """),
    RowSet("Literal", LITERAL, f"""
        SELECT {_LITERAL_KEY} AS key, o AS value, o AS label, datatype, lang
        FROM (SELECT DISTINCT o, datatype, lang FROM statements WHERE o_literal)
    """),
    RowSet("REL", REL, f"""
        SELECT f.s AS "from", f.o AS "to", {_REL_COLUMNS}
        FROM (SELECT DISTINCT s, p, o FROM statements WHERE NOT o_literal) f
        LEFT JOIN relations r ON r.iri = f.p
    """),
    RowSet("HAS_VALUE", HAS_VALUE, f"""
        SELECT f.s AS "from", f.key AS "to", {_REL_COLUMNS}
        FROM (SELECT DISTINCT s, p, {_LITERAL_KEY} AS key FROM statements WHERE o_literal) f
        LEFT JOIN relations r ON r.iri = f.p
    """),
)
TABLES = (ENTITY, LITERAL, REL, HAS_VALUE)


@dataclass
class ExportedFile:
    """One exported row set: a Parquet file (``path``) or an in-memory Arrow table (``table``)."""

    row_set: RowSet
    rows: int
    path: Path | None = None
    table: Any = None  # pyarrow.Table


@dataclass
class ExportedFiles:
    directory: Path | None
    files: list[ExportedFile] = field(default_factory=list)
    seconds: float = 0.0
    catalog_state: str = ""

    def rows(self, table: str) -> int:
        """Rows exported for ``table`` (over all its parts)."""
        return sum(f.rows for f in self.files if f.row_set.table == table)


def catalog_state(con) -> str:
    """A cheap fingerprint of the catalog's content: changes whenever an ingest commits."""
    n_st, n_ent, n_rel = con.execute(
        "SELECT (SELECT count(*) FROM statements), (SELECT count(*) FROM entities), "
        "(SELECT count(*) FROM relations)").fetchall()[0]
    last = con.execute("SELECT max(run_id), max(finished) FROM ingest_runs WHERE status <> 'superseded'").fetchall()[0]
    return f"statements={n_st};entities={n_ent};relations={n_rel};last_run={last[0]};finished={last[1]}"


def export_parquet(store, directory: str | Path,
                   on_file: Callable[[ExportedFile], None] | None = None) -> ExportedFiles:
    """Write the row sets of ``store``'s catalog as Parquet files into ``directory``, in load
    order; ``on_file`` hears of each file as soon as it is complete."""
    return _export(store, Path(directory), on_file)


def export_arrow(store, on_table: Callable[[ExportedFile], None] | None = None) -> ExportedFiles:
    """The row sets of ``store``'s catalog as in-memory Arrow tables, in load order."""
    return _export(store, None, on_table)


def _export(store, directory: Path | None, on_item) -> ExportedFiles:
    started = time.perf_counter()
    out = ExportedFiles(directory)
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
    with store.catalog.connect() as con:
        out.catalog_state = catalog_state(con)
        for row_set in ROW_SETS:
            if directory is None:
                table = con.sql(row_set.query(con)).to_arrow_table()
                item = ExportedFile(row_set, table.num_rows, table=table)
            else:
                path = directory / f"{row_set.name}.parquet"
                # COPY takes no parameters: the path goes into the SQL text, quoted.
                written = con.execute(
                    f"COPY ({row_set.query(con)}) TO '{_sql_quote(str(path))}' (FORMAT parquet)").fetchall()
                item = ExportedFile(row_set, int(written[0][0]) if written else 0, path=path)
            out.files.append(item)
            if on_item:
                on_item(item)
    out.seconds = time.perf_counter() - started
    return out


def statement_count(store) -> int:
    with store.catalog.connect() as con:
        return con.execute("SELECT count(*) FROM statements").fetchall()[0][0]


def iter_rows(store, row_set: RowSet, batch_size: int = 5000):
    """The rows of one row set as lists of dicts, ``batch_size`` at a time (for backends that
    load through a driver rather than from files)."""
    with store.catalog.connect() as con:
        reader = con.sql(row_set.query(con)).to_arrow_reader(batch_size)
        for batch in reader:
            if batch.num_rows:
                yield batch.to_pylist()


def count_rows(store) -> dict[str, int]:
    """Rows per table (parts summed)."""
    counts = dict.fromkeys(TABLES, 0)
    with store.catalog.connect() as con:
        for rs in ROW_SETS:
            counts[rs.table] += con.execute(f"SELECT count(*) FROM ({rs.query(con)})").fetchall()[0][0]
    return counts


def _sql_quote(text: str) -> str:
    return text.replace("'", "''")

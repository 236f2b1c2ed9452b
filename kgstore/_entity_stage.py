"""Entity rows of a sync, appended page by page to a table with no index and merged into
``entities`` once, at the end: :func:`stage_entities` and :func:`merge_staged_entities`.

Why: DuckDB's ``INSERT ... ON CONFLICT`` into ``entities`` (its primary key is an ART
index) cost 1.1 s of CPU for 20,000 entities upserted in 15 pages, and the commits that
wrote the index 0.7 s more: half of kgstore's side of a sync from Oxigraph server. An
append to a table without a key is a copy of the Arrow columns.

The merge gives what the upsert per page gave: a label, description or sitelinks count
from a later page wins over an earlier one unless it is NULL; aliases of an entity seen in
one page stay as that page listed them, and of one seen in several are the distinct
aliases of all; ``is_mediator`` is true if any page said so; ``kind`` is the last page's.
Against a row already in ``entities`` (an earlier run) it is the same upsert as before.

The staged rows are committed with the page and its cursor, so a sync killed at any point
resumes with them; the merge runs in the sync's final transaction.
"""
from __future__ import annotations

import pyarrow as pa

from ._catalog import Catalog

STAGE = "sync_entity_stage"


def start_stage(con) -> None:
    """Create the stage table if this is the first sync of the catalog (in the caller's
    transaction)."""
    con.execute(f"""
        CREATE TABLE IF NOT EXISTS {STAGE} (
            page BIGINT, iri VARCHAR, id VARCHAR, label VARCHAR, description VARCHAR, aliases VARCHAR[],
            sitelinks INTEGER, is_mediator BOOLEAN, kind VARCHAR)
    """)


def clear_stage(con) -> None:
    """A new run starts with nothing staged (what an unfinished earlier run left is its own)."""
    start_stage(con)
    con.execute(f"DELETE FROM {STAGE}")


def stage_entities(con, page: int, entities: pa.Table | None) -> None:
    """Append ``entities`` (rows of :meth:`kgstore._catalog.Catalog.entities_table`, one
    per IRI) as page ``page``."""
    if entities is None or not entities.num_rows:
        return
    con.register("_staged", entities)
    con.execute(f"INSERT INTO {STAGE} SELECT ?, iri, id, label, description, aliases, sitelinks, is_mediator, kind "
                "FROM _staged", [page])
    con.unregister("_staged")


def merge_staged_entities(con) -> None:
    """Merge every staged row into ``entities`` (see the module docstring), then empty the stage."""
    con.execute(f"""
        CREATE TEMP TABLE _merged AS
        SELECT iri,
               arg_min(id, page) AS id,
               arg_max(label, page) FILTER (WHERE label IS NOT NULL) AS label,
               arg_max(description, page) FILTER (WHERE description IS NOT NULL) AS description,
               CASE WHEN count(aliases) <= 1 THEN arg_max(aliases, page) FILTER (WHERE aliases IS NOT NULL)
                    ELSE list_distinct(flatten(list(aliases ORDER BY page) FILTER (WHERE aliases IS NOT NULL)))
               END AS aliases,
               arg_max(sitelinks, page) FILTER (WHERE sitelinks IS NOT NULL) AS sitelinks,
               bool_or(is_mediator) AS is_mediator,
               arg_max(kind, page) AS kind
        FROM {STAGE} GROUP BY iri
    """)
    Catalog.upsert_entities_from(con, "_merged")
    con.execute("DROP TABLE _merged")
    con.execute(f"DROP TABLE {STAGE}")


__all__ = ["start_stage", "clear_stage", "stage_entities", "merge_staged_entities", "STAGE"]

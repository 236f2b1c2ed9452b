"""The index's tables in the store's ``catalog.duckdb``.

* ``index_items``: one row per vector: ``label_id`` is its hnswlib label in
  ``STORE/index/<kind>.hnsw``; ``item_key`` says what it stands for (an entity, one of its
  aliases, a triple...) and ``key_hash`` hashes the embedded text together with the model,
  so an incremental build re-embeds only texts it has not embedded before.
* ``index_manifest``: per kind, the model that built it (name and content fingerprint),
  the vector backend (``hnswlib``, ``usearch``, ``pgvector``; NULL: hnswlib) and its graph parameters,
  counts, and the highest label saved to disk (rows above it belong to an interrupted
  build and are dropped when the next one starts).
* ``index_state``: small key/value facts.

The lexical side of entity linking (labels and aliases by normalised key) is not here: it
is ``STORE/index/labels.sqlite`` (``_labels``), a B-tree lookup per mention.
* ``index_descriptions``: cached rewrites of statement-memory templates by a describer (LLM).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

DDL = """
CREATE TABLE IF NOT EXISTS index_items (
    kind VARCHAR NOT NULL,
    label_id BIGINT NOT NULL,
    item_key VARCHAR NOT NULL,
    key_hash VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    iri VARCHAR,
    label VARCHAR,
    extra JSON,
    deleted BOOLEAN DEFAULT FALSE
);
CREATE TABLE IF NOT EXISTS index_manifest (
    kind VARCHAR PRIMARY KEY,
    encoder VARCHAR,
    fingerprint VARCHAR,
    dim INTEGER,
    space VARCHAR,
    M INTEGER,
    ef_construction INTEGER,
    items BIGINT,
    deleted BIGINT,
    saved_max_label BIGINT,
    complete BOOLEAN,
    built_at TIMESTAMP,
    seconds DOUBLE,
    backend VARCHAR
);
CREATE TABLE IF NOT EXISTS index_state (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS index_descriptions (
    describer VARCHAR NOT NULL,
    template VARCHAR NOT NULL,
    text VARCHAR NOT NULL
);
"""

WANT_TABLE = "_index_want"
PENDING_TABLE = "_index_pending"


def ensure_tables(con) -> None:
    con.execute(DDL)
    # stores indexed before the vector backend was a choice (their kinds are hnswlib)
    con.execute("ALTER TABLE index_manifest ADD COLUMN IF NOT EXISTS backend VARCHAR")
    # stores indexed before the names moved to labels.sqlite
    con.execute("DROP TABLE IF EXISTS index_names")


def has_tables(con) -> bool:
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('index_items', 'index_manifest')").fetchone()
    return row[0] == 2


def read_manifests(con) -> dict[str, dict]:
    if not has_tables(con):
        return {}
    cur = con.execute("SELECT * FROM index_manifest")
    cols = [d[0] for d in cur.description]
    return {row[0]: dict(zip(cols, row)) for row in cur.fetchall()}


def write_manifest(con, kind: str, **values) -> None:
    values = {"kind": kind, **values}
    cols = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    updates = ", ".join(f"{c} = excluded.{c}" for c in values if c != "kind")
    con.execute(f"INSERT INTO index_manifest ({cols}) VALUES ({marks}) ON CONFLICT (kind) DO UPDATE SET {updates}",
                list(values.values()))


def get_state(con, key: str) -> str | None:
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'index_state'").fetchone()[0]:
        return None
    row = con.execute("SELECT value FROM index_state WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_state(con, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO index_state VALUES (?, ?)", [key, value])


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def extra_json(extra: dict | None) -> str | None:
    return json.dumps(extra, ensure_ascii=False, separators=(",", ":")) if extra else None

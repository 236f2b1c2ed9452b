"""The label-and-alias lookup tier: ``STORE/index/labels.sqlite``.

Every labelled entity's label and aliases under their lookup key (:func:`name_key`:
case-folded, accents stripped, punctuation collapsed), with the entity's label, description
and popularity beside them, so linking a name needs neither a vector nor the catalog: one
B-tree lookup per key, whatever the store's size.

Built streaming from the catalog through ``Store.entity_names()`` (Arrow batches), and kept
up to date incrementally: an entity whose ``names_hash`` did not change keeps its name rows
(only its popularity and description are refreshed); entities whose names changed are
re-keyed; entities gone from the catalog are dropped. A first build loads without indexes
and sorts them once at the end.

SQLite rather than a DuckDB table: point lookups by key stay at microseconds at tens of
millions of names, the file is the indexer's own (never the catalog's tables), and readers
open it read-only beside a writer (WAL).
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from kgstore.errors import VectorIndexError

from ._verbalize import clean, name_key

__all__ = ["LABELS_NAME", "LabelLookup", "LabelRow", "LabelsSummary", "labels_path", "refresh_labels",
           "names_of"]

LABELS_NAME = "labels.sqlite"
MAX_NGRAM = 24
# The most popular bearers of one name that a lookup returns. A common name can have tens
# of thousands of bearers in a large store (134,254 entities named "river" among 10M
# generated ones): reading them all cost a second a key, and only the most popular can win.
MAX_BEARERS = 200
_SIGNED = 1 << 63

_SCHEMA = """
CREATE TABLE IF NOT EXISTS names (key TEXT NOT NULL, name TEXT NOT NULL, iri TEXT NOT NULL, source TEXT NOT NULL,
                                  popularity INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS entities (iri TEXT NOT NULL, names_hash INTEGER NOT NULL, names TEXT NOT NULL,
                                     label TEXT, description TEXT, popularity INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS names_by_key ON names (key, popularity DESC);
CREATE UNIQUE INDEX IF NOT EXISTS entities_by_iri ON entities (iri);
"""
# An index on (key, popularity DESC) ends in the rowid, so this reads one index range.
_LOOKUP_SQL = """
SELECT n.rowid, n.key, n.name, n.iri, n.source, e.label, e.description, e.popularity
FROM names n JOIN entities e ON e.iri = n.iri WHERE n.key = ?
ORDER BY n.popularity DESC, n.rowid LIMIT ?
"""
_LEGACY_LOOKUP_SQL = """
SELECT n.rowid, n.key, n.name, n.iri, n.source, e.label, e.description, e.popularity
FROM names n JOIN entities e ON e.iri = n.iri WHERE n.key = ?
ORDER BY e.popularity DESC, n.rowid LIMIT ?
"""


def labels_path(store) -> Path:
    return Path(store.path) / "index" / LABELS_NAME


@dataclass
class LabelRow:
    """One name of an entity that matched a lookup key."""
    key: str
    name: str
    iri: str
    source: str  # "label" or "alias"
    label: str
    description: str | None
    popularity: int


@dataclass
class LabelsSummary:
    path: str
    rebuilt: bool = False      # the whole file was (re)loaded
    skipped: bool = False      # the catalog's names had not changed
    entities: int = 0          # entities in the file afterwards
    names: int = 0             # name rows in the file afterwards
    rekeyed: int = 0           # entities whose names were (re)written
    refreshed: int = 0         # entities whose popularity or description changed
    removed: int = 0           # entities gone from the catalog
    seconds: float = 0.0
    bytes: int = 0


def names_of(label: str | None, aliases: Iterable[str] | None) -> list[tuple[str, str, str]]:
    """``(key, name, source)`` for an entity's label and aliases, without duplicates."""
    out, seen = [], set()
    for raw, source in [(label, "label")] + [(a, "alias") for a in (aliases or ())]:
        name = clean(raw)
        key = name_key(name) if name else ""
        if key and (key, name, source) not in seen:
            seen.add((key, name, source))
            out.append((key, name, source))
    return out


def _signed(h: int) -> int:
    return h - (1 << 64) if h >= _SIGNED else h


def _names_have_popularity(path: Path) -> bool:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return "popularity" in {r[1] for r in con.execute("PRAGMA table_info(names)")}
    except sqlite3.Error:
        return False
    finally:
        con.close()


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA cache_size=-131072")  # 128 MB
    con.execute("PRAGMA temp_store=FILE")
    con.executescript(_SCHEMA)
    return con


def _state(con, key: str) -> str | None:
    row = con.execute("SELECT value FROM state WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def _set_state(con, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", [key, value])


def refresh_labels(store, *, batch_rows: int = 50_000, rebuild: bool = False) -> LabelsSummary:
    """Bring ``STORE/index/labels.sqlite`` up to date with the catalog's entity names.

    Nothing is read when the catalog's name signature is the one the file was built from.
    A new (or ``rebuild``) file is loaded in one pass with its indexes built at the end;
    otherwise only entities whose names, popularity or description changed are written."""
    started = time.monotonic()
    path = labels_path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    if rebuild:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    if not rebuild and path.is_file() and not _names_have_popularity(path):
        rebuild = True  # a file from before the names carried popularity: load it afresh
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    summary = LabelsSummary(str(path))
    signature = store.entity_names_signature()
    con = _connect(path)
    try:
        if _state(con, "signature") == signature and _state(con, "complete") == "1":
            summary.skipped = True
        else:
            _set_state(con, "complete", "0")
            indexed = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                                  "AND name = 'entities_by_iri'").fetchone()[0]
            # empty, or a first load that was interrupted (its indexes come last): load it all
            first = not indexed or con.execute("SELECT count(*) FROM entities").fetchone()[0] == 0
            summary.rebuilt = first
            if first:
                con.execute("DROP INDEX IF EXISTS names_by_key")
                con.execute("DROP INDEX IF EXISTS entities_by_iri")
                con.execute("DELETE FROM names")
                con.execute("DELETE FROM entities")
                _load_all(con, store, batch_rows, summary)
                con.executescript(_INDEXES)
            else:
                con.executescript(_INDEXES)
                _update(con, store, batch_rows, summary)
            max_pop = con.execute("SELECT coalesce(max(popularity), 0) FROM entities").fetchone()[0]
            _set_state(con, "max_popularity", str(max_pop))
            _set_state(con, "signature", signature)
            _set_state(con, "complete", "1")
        summary.entities = int(_state(con, "entities") or 0)
        summary.names = int(_state(con, "names") or 0)
        # Readers open the file read-only; a file left in WAL mode needs a -shm file beside it,
        # which a read-only open cannot create (on a full disk, or a read-only mount).
        con.execute("PRAGMA journal_mode=DELETE")
    finally:
        con.close()
    summary.seconds = round(time.monotonic() - started, 3)
    summary.bytes = path.stat().st_size
    return summary


def _batches(store, batch_rows: int):
    for batch in store.entity_names(batch_rows=batch_rows):
        cols = batch.to_pydict()
        yield list(zip(cols["iri"], cols["label"], cols["aliases"], cols["description"], cols["popularity"],
                       cols["names_hash"]))


def _load_all(con, store, batch_rows: int, summary: LabelsSummary) -> None:
    max_tokens, entities, names = 1, 0, 0
    for rows in _batches(store, batch_rows):
        name_rows, entity_rows = [], []
        for iri, label, aliases, description, popularity, h in rows:
            found = names_of(label, aliases)
            for key, name, source in found:
                name_rows.append((key, name, iri, source, int(popularity or 0)))
                max_tokens = max(max_tokens, key.count(" ") + 1)
            entity_rows.append((iri, _signed(h), json.dumps(found, ensure_ascii=False), clean(label),
                                description, int(popularity or 0)))
        con.execute("BEGIN")
        con.executemany("INSERT INTO names VALUES (?, ?, ?, ?, ?)", name_rows)
        con.executemany("INSERT INTO entities VALUES (?, ?, ?, ?, ?, ?)", entity_rows)
        con.execute("COMMIT")
        entities += len(entity_rows)
        names += len(name_rows)
    summary.rekeyed = entities
    _set_state(con, "entities", str(entities))
    _set_state(con, "names", str(names))
    _set_state(con, "max_tokens", str(min(max_tokens, MAX_NGRAM)))


def _update(con, store, batch_rows: int, summary: LabelsSummary) -> None:
    max_tokens = int(_state(con, "max_tokens") or 1)
    names_delta, seen = 0, 0
    con.execute("CREATE TEMP TABLE IF NOT EXISTS _batch (iri TEXT PRIMARY KEY)")
    for rows in _batches(store, batch_rows):
        seen += len(rows)
        con.execute("BEGIN")
        con.execute("DELETE FROM _batch")
        con.executemany("INSERT OR IGNORE INTO _batch VALUES (?)", [(r[0],) for r in rows])
        old = {r[0]: r[1:] for r in con.execute(
            "SELECT e.iri, e.names_hash, e.names, e.description, e.popularity FROM _batch b "
            "JOIN entities e ON e.iri = b.iri")}
        refresh, drop_names, add_names, add_entities, drop_entities = [], [], [], [], []
        repopular: list[tuple[int, str, str]] = []
        for iri, label, aliases, description, popularity, h in rows:
            popularity = int(popularity or 0)
            before = old.get(iri)
            if before is not None and before[0] == _signed(h):
                if before[2] != description or before[3] != popularity:
                    refresh.append((description, popularity, iri))
                    if before[3] != popularity:  # the names carry it too, for the lookup's order
                        repopular += [(popularity, key, iri) for key, _, _ in json.loads(before[1])]
                continue
            if before is not None:
                gone = json.loads(before[1])
                drop_names += [(key, name, iri, source) for key, name, source in gone]
                drop_entities.append((iri,))
                names_delta -= len(gone)
            found = names_of(label, aliases)
            for key, name, source in found:
                add_names.append((key, name, iri, source, popularity))
                max_tokens = max(max_tokens, key.count(" ") + 1)
            names_delta += len(found)
            add_entities.append((iri, _signed(h), json.dumps(found, ensure_ascii=False), clean(label),
                                 description, popularity))
        con.executemany("DELETE FROM names WHERE key = ? AND name = ? AND iri = ? AND source = ?", drop_names)
        con.executemany("DELETE FROM entities WHERE iri = ?", drop_entities)
        con.executemany("INSERT INTO names VALUES (?, ?, ?, ?, ?)", add_names)
        con.executemany("UPDATE names SET popularity = ? WHERE key = ? AND iri = ?", repopular)
        con.executemany("INSERT INTO entities VALUES (?, ?, ?, ?, ?, ?)", add_entities)
        con.executemany("UPDATE entities SET description = ?, popularity = ? WHERE iri = ?", refresh)
        con.execute("COMMIT")
        summary.rekeyed += len(add_entities)
        summary.refreshed += len(refresh)
    total = con.execute("SELECT count(*) FROM entities").fetchone()[0]
    if total > seen:  # entities gone from the catalog: a second pass over the IRIs finds them
        con.execute("BEGIN")
        con.execute("CREATE TEMP TABLE IF NOT EXISTS _seen (iri TEXT PRIMARY KEY)")
        con.execute("DELETE FROM _seen")
        for rows in _batches(store, batch_rows):
            con.executemany("INSERT OR IGNORE INTO _seen VALUES (?)", [(r[0],) for r in rows])
        gone = con.execute("SELECT iri, names FROM entities WHERE iri NOT IN (SELECT iri FROM _seen)").fetchall()
        for iri, names in gone:
            old_names = json.loads(names)
            con.executemany("DELETE FROM names WHERE key = ? AND name = ? AND iri = ? AND source = ?",
                            [(key, name, iri, source) for key, name, source in old_names])
            names_delta -= len(old_names)
        con.executemany("DELETE FROM entities WHERE iri = ?", [(g[0],) for g in gone])
        con.execute("COMMIT")
        summary.removed = len(gone)
    _set_state(con, "entities", str(con.execute("SELECT count(*) FROM entities").fetchone()[0]))
    _set_state(con, "names", str(int(_state(con, "names") or 0) + names_delta))
    _set_state(con, "max_tokens", str(min(max_tokens, MAX_NGRAM)))


class LabelLookup:
    """Read side of ``labels.sqlite``: names by lookup key. ``LabelLookup.open(store)``
    returns None when the file has not been built (``kgstore index`` builds it)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self._con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            self._con.execute("PRAGMA query_only=1")
            state = dict(self._con.execute("SELECT key, value FROM state").fetchall())
        except sqlite3.Error as exc:
            raise VectorIndexError(f"cannot read the label table {path}: {exc}") from exc
        self._lock = threading.Lock()
        self.max_tokens = int(state.get("max_tokens") or 0)
        self.max_popularity = int(state.get("max_popularity") or 0)
        self.entities = int(state.get("entities") or 0)
        # a file built before the names carried popularity (until `kgstore index` reloads it)
        self._sql = _LOOKUP_SQL if _names_have_popularity(path) else _LEGACY_LOOKUP_SQL

    @classmethod
    def open(cls, store) -> "LabelLookup | None":
        path = labels_path(store)
        return cls(path) if path.is_file() else None

    def close(self) -> None:
        self._con.close()

    def lookup(self, keys: Iterable[str]) -> list[LabelRow]:
        """Every name whose key is one of ``keys`` (with its entity's label, description and
        popularity)."""
        keys = list(dict.fromkeys(k for k in keys if k))
        out: list[LabelRow] = []
        with self._lock:
            # Keys in sorted order and each key's bearers in file order, as one IN query gave
            # them before the cap: ranking keeps that order among equal scores.
            for key in sorted(keys):
                rows = sorted(self._con.execute(self._sql, (key, MAX_BEARERS)).fetchall())
                out += [LabelRow(*r[1:]) for r in rows]
        return out

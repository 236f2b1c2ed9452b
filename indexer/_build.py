"""Building and updating the indexes of a store.

Per kind: read the wanted entries from the catalog into ``_index_want``; mark deleted
what is no longer wanted; put what is new into ``_index_pending``; then stream the pending
entries in chunks: vectors for texts embedded before are copied (same text and model,
same vector), the rest are embedded, added to hnswlib, and recorded in ``index_items``.
The catalog connection is held only while reading or writing a chunk, so readers can use
the store between chunks. The hnswlib file (and its row snapshot) is saved atomically
every few minutes and at the end; the manifest records the highest label saved, so a
build that is killed resumes where its file ends.
"""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from kgstore._disk import disk_full_as_error
from kgstore.errors import EncoderMismatchError, VectorIndexError

from ._backends import (VectorBackend, backend_of, choose_backend, create_backend, discard_vectors, open_backend,
                        search_breadth, vector_path)
from ._encoder import Encoder
from ._hnsw import SPACE
from ._labels import refresh_labels
from ._memories import Describe, apply_describer, statement_entries, uri_entries
from ._records import KINDS, BuildProgress, BuildSummary, KindSummary
from ._snapshot import rows_path, write_rows
from ._sources import Entry, entity_entries, relation_entries, triple_entries
from ._tables import (PENDING_TABLE, WANT_TABLE, ensure_tables, extra_json, now, read_manifests,
                      write_manifest)

INDEX_DIR = "index"
SAVE_EVERY_S = 300.0
CHUNK_ROWS = 2048  # pending entries read, embedded and written per catalog connection (at least)
ProgressCallback = Callable[[BuildProgress], None]

_ITEM_SCHEMA = pa.schema([
    ("kind", pa.string()), ("label_id", pa.int64()), ("item_key", pa.string()), ("key_hash", pa.string()),
    ("text", pa.string()), ("iri", pa.string()), ("label", pa.string()), ("extra", pa.string()),
    ("deleted", pa.bool_()),
])


def index_dir(store) -> Path:
    return Path(store.path) / INDEX_DIR


def index_path(store, kind: str, backend: str = "hnswlib") -> Path:
    """Where ``kind``'s vectors live under ``backend`` (see :func:`kind_path` for a built kind)."""
    return vector_path(index_dir(store), kind, backend)


def kind_path(store, kind: str, manifest: dict | None) -> Path:
    """The vector file of a kind built with the backend its manifest records."""
    return index_path(store, kind, backend_of(manifest))


def check_kinds(kinds: Iterable[str] | None) -> list[str]:
    if kinds is None:
        return list(KINDS)
    wanted = list(dict.fromkeys(kinds))
    unknown = [k for k in wanted if k not in KINDS]
    if unknown:
        raise VectorIndexError(f"unknown index kind {unknown[0]!r}; choose from: {', '.join(KINDS)}")
    return [k for k in KINDS if k in wanted]


def text_hash(fingerprint: str, text: str) -> str:
    return hashlib.blake2b(f"{fingerprint}\0{text}".encode("utf-8"), digest_size=12).hexdigest()


def mismatch_message(store, kind: str, manifest: dict, encoder: Encoder) -> str:
    return (f"the {kind} index of {store.path} was built with encoder {manifest['encoder']!r} "
            f"(fingerprint {manifest['fingerprint']}), but this store now uses {encoder.name!r} "
            f"(fingerprint {encoder.fingerprint}); set [index] encoder in {Path(store.path) / 'kgstore.toml'} "
            f"back to {manifest['encoder']!r}, or rebuild with `kgstore index {store.path} --rebuild`")


@disk_full_as_error("indexing")
def build_index(store, *, kinds: Iterable[str] | None = None, rebuild: bool = False, encoder: Encoder | None = None,
                batch_size: int | None = None, progress: ProgressCallback | None = None,
                describe: Describe | None = None, describer: str = "describer") -> BuildSummary:
    """Build or update the indexes of ``store`` (opened for writing).

    Incremental by default: only entries whose text was not embedded before are embedded;
    entries no longer in the catalog are marked deleted. ``rebuild`` drops the chosen kinds
    first (needed after changing the encoder). ``describe(texts) -> texts`` rewrites the
    statement-memory templates (cached per ``describer``).

    At scale (``[index] triples_above``, ``entity_vectors_max``): a store with more
    statements than ``triples_above`` gets no triple index unless ``kinds`` names it or
    one exists (the summary's ``skipped`` says why); entity vectors go to the
    ``entity_vectors_max`` most popular entities.
    """
    store._check_writable()
    started = time.monotonic()
    cfg = store.config.index
    encoder = encoder or Encoder.from_config(cfg, base=Path(store.path))
    named = set(kinds or ())
    kinds = check_kinds(kinds)
    batch_size = batch_size or cfg.batch_size or 64
    summary = BuildSummary(str(store.path), encoder.name, encoder.fingerprint, rebuild)
    with store.catalog.connect() as con:
        ensure_tables(con)
        manifests = read_manifests(con)
        for kind in kinds:
            m = manifests.get(kind)
            if m and m["fingerprint"] != encoder.fingerprint and not rebuild:
                raise EncoderMismatchError(mismatch_message(store, kind, m, encoder))
        if rebuild:
            for kind in kinds:
                con.execute("DELETE FROM index_items WHERE kind = ?", [kind])
                con.execute("DELETE FROM index_manifest WHERE kind = ?", [kind])
                discard_vectors(index_dir(store), kind, cfg)
                rows_path(index_path(store, kind)).unlink(missing_ok=True)
        if "triples" in kinds and "triples" not in named:
            reason = triples_skipped(con, cfg.triples_above)
            if reason:
                kinds.remove("triples")
                summary.skipped["triples"] = reason
    index_dir(store).mkdir(exist_ok=True)
    refresh_labels(store)  # the label-and-alias lookup tier (labels.sqlite), incremental
    loaded: dict[str, VectorBackend] = {}
    for kind in kinds:
        builder = _KindBuilder(store, kind, encoder, batch_size, progress, loaded, describe, describer)
        summary.kinds[kind] = builder.run()
        summary.embed_seconds += builder.embed_seconds
        summary.model_load_seconds += builder.model_load_seconds
    summary.seconds = time.monotonic() - started
    return summary


update_index = build_index


def triples_skipped(con, triples_above: int) -> str | None:
    """Why a build leaves out the triple kind, or None: the store has more statements than
    ``triples_above`` and no triple index yet (one built earlier is kept up to date)."""
    if read_manifests(con).get("triples"):
        return None
    statements = con.execute("SELECT count(*) FROM statements").fetchone()[0]
    if statements <= triples_above:
        return None
    return (f"{statements:,} statements, more than [index] triples_above = {triples_above:,}: "
            "triple searches embed the facts of the entities they reach on the fly; "
            "`--kinds triples` builds the global triple index anyway")


def _entries(store, con, kind: str, describe: Describe | None, describer: str) -> Iterator[list[Entry]]:
    top = store.config.index.entity_vectors_max
    if kind == "entities":
        yield from entity_entries(con, top)
    elif kind == "relations":
        yield from relation_entries(con)
    elif kind == "triples":
        yield from triple_entries(con)
    elif kind == "uris":
        yield from uri_entries(con, top)
    elif kind == "statements":
        for chunk in statement_entries(con, store.config.prefixes):
            yield apply_describer(con, chunk, describe, describer) if describe else chunk


class _KindBuilder:
    def __init__(self, store, kind, encoder: Encoder, batch_size: int, progress, loaded: dict,
                 describe, describer):
        self.store = store
        self.kind = kind
        self.encoder = encoder
        self.batch_size = batch_size
        self.progress = progress
        self.loaded = loaded
        self.describe = describe
        self.describer = describer
        self.cfg = store.config.index
        self.path = index_path(store, kind)
        self.summary = KindSummary(kind)
        self.embed_seconds = 0.0
        self.model_load_seconds = 0.0

    # -- phases -----------------------------------------------------------------------------
    def run(self) -> KindSummary:
        started = time.monotonic()
        catalog = self.store.catalog
        with catalog.connect() as con:
            vf, self.next_label = self._open_file(con)
            self._write_want(con)
            deleted = self._mark_deleted(con, vf) if vf is not None else 0
            total = self._plan_pending(con)
            if vf is None:  # starting afresh: the backend is chosen by how many vectors come
                vf = self._create_file(con, total)
            self.vf = vf
        self.summary.deleted = deleted
        if total:
            self._add_pending(vf, total)
        with catalog.connect() as con:
            items, dead = con.execute(
                "SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted) "
                "FROM index_items WHERE kind = ?", [self.kind]).fetchone()
            changed = total or deleted or not self.path.exists()
            if changed:
                vf.save()
            if changed or not rows_path(self.path).exists():
                write_rows(con, self.kind, rows_path(self.path))
            self.summary.items = items
            self.summary.seconds = time.monotonic() - started
            manifest = read_manifests(con).get(self.kind)
            write_manifest(con, self.kind, encoder=self.encoder.name, fingerprint=self.encoder.fingerprint,
                           dim=vf.dim, space=SPACE, backend=vf.name, M=vf.M, ef_construction=vf.ef_construction,
                           items=items,
                           deleted=dead, saved_max_label=self.next_label - 1, complete=True,
                           built_at=now() if changed or manifest is None else manifest["built_at"],
                           seconds=self.summary.seconds)
            con.execute(f"DROP TABLE IF EXISTS {WANT_TABLE}")
            con.execute(f"DROP TABLE IF EXISTS {PENDING_TABLE}")
        self.loaded[self.kind] = vf
        if self.progress:
            self.progress(BuildProgress(self.kind, "done", total, total, self.summary.embedded))
        return self.summary

    def _open_file(self, con) -> tuple[VectorBackend | None, int]:
        """The kind's vector file, cleaned of whatever an interrupted build left behind;
        ``None`` when the kind starts afresh (:meth:`_create_file` makes it)."""
        manifest = read_manifests(con).get(self.kind)
        dim = self.encoder.dim
        self.path = kind_path(self.store, self.kind, manifest)  # a built kind keeps its backend
        if manifest and self.path.exists():
            saved = manifest["saved_max_label"] if manifest["saved_max_label"] is not None else -1
            vf = open_backend(backend_of(manifest), self.path, dim, ef=search_breadth(self.cfg, manifest["items"]),
                              writable=True, cfg=self.cfg)
            if vf.count > saved + 1 and self._rows_cover(con, saved + 1, vf.count):
                # Killed after the file was replaced but before the manifest said so: the
                # rows of those vectors were committed before the file was saved, so the
                # file is right and the manifest is behind.
                saved = vf.count - 1
                write_manifest(con, self.kind, saved_max_label=saved)
            con.execute("DELETE FROM index_items WHERE kind = ? AND label_id > ?", [self.kind, saved])
            if vf.count != saved + 1:
                raise VectorIndexError(
                    f"{self.path} holds {vf.count} vectors but the catalog expects {saved + 1}; "
                    f"rebuild it with `kgstore index {self.store.path} --kinds {self.kind} --rebuild`")
            dead = [r[0] for r in con.execute(
                "SELECT label_id FROM index_items WHERE kind = ? AND deleted", [self.kind]).fetchall()]
            vf.mark_deleted(dead)  # marks made after the last save were lost with a crash
            return vf, saved + 1
        con.execute("DELETE FROM index_items WHERE kind = ?", [self.kind])
        return None, 0

    def _create_file(self, con, total: int) -> VectorBackend:
        """A new vector file for ``total`` vectors, its backend chosen by ``[index] backend``."""
        backend = choose_backend(self.cfg, total)
        discard_vectors(self.path.parent, self.kind, self.cfg)  # left by a build that never saved
        self.path = index_path(self.store, self.kind, backend)
        vf = create_backend(backend, self.path, self.encoder.dim, self.cfg, vectors=total)
        write_manifest(con, self.kind, encoder=self.encoder.name, fingerprint=self.encoder.fingerprint,
                       dim=self.encoder.dim, space=SPACE, backend=vf.name, M=vf.M, ef_construction=vf.ef_construction,
                       items=0, deleted=0, saved_max_label=-1, complete=False, built_at=now(), seconds=0.0)
        return vf

    def _rows_cover(self, con, first: int, end: int) -> bool:
        """Whether the catalog holds one row for each label in [first, end)."""
        n = con.execute("SELECT count(DISTINCT label_id) FROM index_items WHERE kind = ? AND label_id >= ? "
                        "AND label_id < ?", [self.kind, first, end]).fetchone()[0]
        return n == end - first

    def _write_want(self, con) -> None:
        con.execute(f"CREATE OR REPLACE TABLE {WANT_TABLE} (item_key VARCHAR, key_hash VARCHAR, text VARCHAR, "
                    "iri VARCHAR, label VARCHAR, extra VARCHAR)")
        fp = self.encoder.fingerprint
        read = con.cursor()
        scanned = 0
        try:
            for entries in _entries(self.store, read, self.kind, self.describe, self.describer):
                if not entries:
                    continue
                table = pa.table({
                    "item_key": [e.item_key for e in entries],
                    "key_hash": [text_hash(fp, e.text) for e in entries],
                    "text": [e.text for e in entries],
                    "iri": [e.iri for e in entries],
                    "label": [e.label for e in entries],
                    "extra": [extra_json(e.extra) for e in entries],
                })
                con.register("_want_chunk", table)
                con.execute(f"INSERT INTO {WANT_TABLE} SELECT * FROM _want_chunk")
                con.unregister("_want_chunk")
                scanned += len(entries)
                if self.progress:
                    self.progress(BuildProgress(self.kind, "scan", scanned, 0, 0))
        finally:
            read.close()

    def _mark_deleted(self, con, vf: VectorBackend) -> int:
        gone = [r[0] for r in con.execute(f"""
            SELECT label_id FROM index_items i
            WHERE kind = ? AND NOT deleted
              AND NOT EXISTS (SELECT 1 FROM {WANT_TABLE} w WHERE w.item_key = i.item_key AND w.key_hash = i.key_hash)
        """, [self.kind]).fetchall()]
        if gone:
            vf.mark_deleted(gone)
            con.register("_gone", pa.table({"label_id": pa.array(gone, pa.int64())}))
            con.execute("UPDATE index_items SET deleted = TRUE WHERE kind = ? AND label_id IN "
                        "(SELECT label_id FROM _gone)", [self.kind])
            con.unregister("_gone")
        return len(gone)

    def _plan_pending(self, con) -> int:
        # Vectors can be copied from kinds already built in this run (their files are
        # complete) and from this kind itself (its file holds every saved row).
        sources = sorted(set(self.loaded) | {self.kind})
        con.execute(f"""
            CREATE OR REPLACE TABLE {PENDING_TABLE} AS
            WITH w AS (
                SELECT DISTINCT ON (item_key, key_hash) * FROM {WANT_TABLE}
            ), fresh AS (
                SELECT w.* FROM w WHERE NOT EXISTS (
                    SELECT 1 FROM index_items i
                    WHERE i.kind = $kind AND NOT i.deleted AND i.item_key = w.item_key AND i.key_hash = w.key_hash)
            ), src AS (
                SELECT key_hash, arg_min(kind, label_id) AS src_kind, min(label_id) AS src_label
                FROM (SELECT key_hash, kind, label_id FROM index_items
                      WHERE NOT deleted AND kind IN (SELECT unnest($sources::VARCHAR[])))
                GROUP BY key_hash
            )
            SELECT row_number() OVER (ORDER BY fresh.item_key) AS seq, fresh.*, src.src_kind, src.src_label,
                   count(*) OVER (PARTITION BY fresh.key_hash) AS copies,
                   row_number() OVER (PARTITION BY fresh.key_hash ORDER BY fresh.item_key) = 1 AS first
            FROM fresh LEFT JOIN src USING (key_hash)
        """, {"kind": self.kind, "sources": sources})
        return con.execute(f"SELECT count(*) FROM {PENDING_TABLE}").fetchone()[0]

    def _add_pending(self, vf: VectorBackend, total: int) -> None:
        catalog = self.store.catalog
        chunk = max(CHUNK_ROWS, 16 * self.batch_size)
        vf.reserve(total)
        # Graph insertion runs between encoder batches on all cores: on a small machine a
        # worker thread beside torch only makes the two fight over the same cores.
        threads = self.cfg.threads or os.cpu_count() or 1
        repeated: dict[str, np.ndarray] = {}  # vectors of texts that occur again later in this run
        done = 0
        finished: pa.Table | None = None  # the previous chunk's rows, written with the next read
        last_save = time.monotonic()
        while True:
            # one short connection per chunk: write what was embedded, read what comes next
            with catalog.connect() as con:
                if finished is not None:
                    con.register("_items", finished)
                    con.execute("INSERT INTO index_items SELECT * FROM _items")
                    con.unregister("_items")
                    finished = None
                    if time.monotonic() - last_save > SAVE_EVERY_S and done < total:
                        vf.save()
                        write_rows(con, self.kind, rows_path(self.path))
                        write_manifest(con, self.kind, saved_max_label=self.next_label - 1, complete=False)
                        last_save = time.monotonic()
                if done >= total:
                    break
                rows = con.execute(
                    f"SELECT item_key, key_hash, text, iri, label, extra, src_kind, src_label, copies, first "
                    f"FROM {PENDING_TABLE} WHERE seq > ? AND seq <= ? ORDER BY seq",
                    [done, done + chunk]).fetchall()
            vectors = self._vectors_for(rows, repeated)
            labels = np.arange(self.next_label, self.next_label + len(rows), dtype=np.int64)
            vf.add(vectors, labels, threads=threads)
            finished = pa.table([
                pa.array([self.kind] * len(rows), pa.string()), pa.array(labels, pa.int64()),
                pa.array([r[0] for r in rows], pa.string()), pa.array([r[1] for r in rows], pa.string()),
                pa.array([r[2] for r in rows], pa.string()), pa.array([r[3] for r in rows], pa.string()),
                pa.array([r[4] for r in rows], pa.string()), pa.array([r[5] for r in rows], pa.string()),
                pa.array([False] * len(rows), pa.bool_()),
            ], schema=_ITEM_SCHEMA)
            self.next_label += len(rows)
            done += len(rows)
            self.summary.added += len(rows)
            if self.progress:
                self.progress(BuildProgress(self.kind, "embed", done, total, self.summary.embedded))

    def _vectors_for(self, rows: list[tuple], repeated: dict[str, np.ndarray]) -> np.ndarray:
        out = np.empty((len(rows), self.encoder.dim), dtype=np.float32)
        to_embed: list[int] = []
        copies: dict[str, list[tuple[int, int]]] = {}
        for i, (_, key_hash, text, _, _, _, src_kind, src_label, n_copies, first) in enumerate(rows):
            if src_kind is not None:
                copies.setdefault(src_kind, []).append((i, src_label))
            elif first:
                to_embed.append(i)
        for src_kind, pairs in copies.items():
            # this kind's own earlier rows are all in its file as loaded
            source = self.vf if src_kind == self.kind else self.loaded[src_kind]
            out[[i for i, _ in pairs]] = source.vectors([label for _, label in pairs])
            self.summary.reused += len(pairs)
        if to_embed:
            if not self.encoder.loaded:
                t = time.monotonic()
                self.encoder.model  # noqa: B018 - load now, to time it apart from embedding
                self.model_load_seconds += time.monotonic() - t
            t = time.monotonic()
            out[to_embed] = self.encoder.embed([rows[i][2] for i in to_embed], batch_size=self.batch_size)
            self.embed_seconds += time.monotonic() - t
            self.summary.embedded += len(to_embed)
            for i in to_embed:
                if rows[i][8] > 1:
                    repeated[rows[i][1]] = out[i]
        for i, row in enumerate(rows):
            if row[6] is None and not row[9]:
                out[i] = repeated[row[1]]
                self.summary.reused += 1
        return out


"""Keeping a store current: ``kgstore update`` and ``kgstore delete``.

An entity document (Wikidata JSON, or an entity's Wikidata RDF) is the whole truth about
that entity, so loading a newer one *replaces* what the store holds from it, where
:func:`kgstore.ingest` adds (bulk loads of dumps stay as fast as they are, and split
sources still merge). A file of changes is read by the format's loader in checkpointed
batches; each batch is applied to the triples in one Oxigraph transaction
(:mod:`kgstore._triple_replace`), then to the catalog with its checkpoint in one DuckDB
transaction (:mod:`kgstore._catalog_replace`). Replacing is repeat-safe, so a run killed
anywhere and run again ends with the same store as an uninterrupted one.

The property graph and the semantic index are derived from the catalog: an update marks
them behind (in the same transaction as its first batch), and the front end brings them
current (graph sync, incremental index) and then clears the mark, so a kill there is
caught up by the next run too.
"""
from __future__ import annotations

import json
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator

from ._catalog import Catalog
from ._catalog_replace import REDIRECTS_DDL, CatalogChange, replace_in_catalog
from ._columns import ntriples_bytes, triple_columns
from ._disk import disk_full_as_error
from ._ingest import IngestProgress, _CatalogHold, fingerprint
from ._registry import loader_for
from ._store import Store
from ._triple_replace import TripleChange, replace_in_triples
from .errors import IngestError
from .records import Batch, Checkpoint, LoadOptions
from .terms import SCHEMA, WD

UPDATE_FORMATS = ("wikidata-json", "wikidata-rdf")  # entity documents; Freebase and TSV only append
SCHEMA_ABOUT = SCHEMA + "about"
DERIVED_BEHIND = "derived_behind"  # meta key: the graph and the index have not seen an update yet
SEEN_DDL = "CREATE TABLE IF NOT EXISTS update_seen (run_id INTEGER, iri VARCHAR)"  # documents a run applied
DELETE_CHUNK = 5000


@dataclass
class UpdateSummary:
    file: str
    format: str
    run_id: int
    status: str  # "done", "skipped" (this file was applied before)
    counts: dict = field(default_factory=dict)
    resumed_from_line: int = 0
    seconds: float = 0.0

    @property
    def rejected(self) -> int:
        return int(self.counts.get("rejected", 0))


ProgressCallback = Callable[[IngestProgress], None]


def update_format_check(fmt: str) -> None:
    if fmt not in UPDATE_FORMATS:
        raise IngestError(f"`update` replaces entity documents ({', '.join(UPDATE_FORMATS)}); {fmt} files hold "
                          f"triples with no document to replace: load them with `kgstore ingest` (it adds)")


def store_load_options(store: Store, fmt: str) -> LoadOptions:
    """The options the store's entities were loaded with (its last finished run of an
    entity format): an update must map documents the same way, or replacing an entity
    would drop, say, its statement nodes."""
    with store.catalog.connect() as con:
        row = con.execute("SELECT options FROM ingest_runs WHERE status = 'done' AND format IN (?, ?, ?) "
                          "ORDER BY run_id DESC LIMIT 1", [fmt, *(f"update:{f}" for f in UPDATE_FORMATS)]).fetchone()
    languages = tuple(store.config.languages)
    if row is None:
        return LoadOptions(languages=languages)
    opts = json.loads(row[0])
    return LoadOptions(languages=tuple(opts.get("languages") or languages),
                       properties=frozenset(opts["properties"]) if opts.get("properties") else None,
                       statements=opts.get("statements") or "truthy")


def _holds_statement_nodes(store: Store) -> bool:
    """Whether any load of the store could have written statement nodes: a run with
    ``--statements full``, or of an entity's RDF (which carries them)."""
    with store.catalog.connect() as con:
        rows = con.execute("SELECT format, options FROM ingest_runs").fetchall()
    return any(fmt.endswith("wikidata-rdf") or json.loads(opts or "{}").get("statements") == "full"
               for fmt, opts in rows)


@disk_full_as_error("updating")
def update(store: Store, fmt: str, path: str | os.PathLike, *, options: LoadOptions | None = None,
           drop_missing: bool = False, progress: ProgressCallback | None = None) -> UpdateSummary:
    """Apply the entity documents, deletions and redirects in ``path`` to ``store``.

    Each document replaces everything the store holds from its entity (triples, statement
    nodes, labels, catalog rows and facts, popularity); ``{"id": ..., "missing": ""}`` or
    ``"deleted": true`` deletes the entity; a redirect moves the old id's incoming triples
    to the target, and the old id resolves to the target. A malformed document is
    quarantined (``kgstore rejects``) and its entity's old version stays whole.

    ``drop_missing``: ``path`` is a newer *full* dump, and entities it no longer holds are
    deleted at the end (never do this with a partial file). Re-running a finished file is
    a no-op; an interrupted one resumes from its checkpoint.
    """
    store._check_triples_writable()
    update_format_check(fmt)
    # One catalog connection for the run, given up to readers every half minute
    # (kgstore._ingest._CatalogHold): opening and closing it for each transaction cost
    # 0.3 s each at 100,000 entities, half of an update of 1,000 of them.
    # Its close leaves a small log unmerged (see _CatalogHold): merging rewrites the
    # entities' key index whole, a cost of the store's size, not of the update's.
    with _CatalogHold(store.catalog, defer_checkpoint=True) as hold:
        return _update(store, fmt, path, options=options, drop_missing=drop_missing, progress=progress, hold=hold)


def _update(store: Store, fmt: str, path, *, options: LoadOptions | None, drop_missing: bool,
            progress: ProgressCallback | None, hold) -> UpdateSummary:
    options = options or store_load_options(store, fmt)
    loader = loader_for(fmt)
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    size, checksum = os.path.getsize(path), fingerprint(path)
    run_format = f"update:{fmt}"
    opts = {**options.option_dict(), "drop_missing": drop_missing}
    started = time.monotonic()
    with store.catalog.transaction() as con:
        con.execute(REDIRECTS_DDL)
        con.execute(SEEN_DDL)
        previous = Catalog.find_run(con, checksum, run_format, opts)
        if previous and previous["status"] == "done":
            return UpdateSummary(path, fmt, previous["run_id"], "skipped", previous["counts"])
        if previous:
            run_id, counts = previous["run_id"], Counter(previous["counts"])
            start = Checkpoint(previous["offset"], previous["line"]) if previous["offset"] else None
            con.execute("UPDATE ingest_runs SET status = 'running', error = NULL WHERE run_id = ?", [run_id])
        else:
            run_id = Catalog.start_run(con, file=os.path.abspath(path), size=size, checksum=checksum,
                                       fmt=run_format, options=opts)
            start, counts = None, Counter()
    summary = UpdateSummary(path, fmt, run_id, "failed", resumed_from_line=start.line_no if start else 0)
    # An entity's RDF may span batches: the parts of one file are one document, replaced
    # once. JSON documents are whole: a second one of the same entity is a newer version.
    applier = _BatchApplier(store, run_id, os.path.abspath(path), counts, once_per_run=fmt == "wikidata-rdf",
                            statement_nodes=options.statements == "full" or _holds_statement_nodes(store))
    try:
        position = start
        for batch in loader.batches(path, options, start):
            if _repeats(batch):  # two versions of one entity: apply them one after the other
                for single in _single_documents(loader, path, options, position, batch.checkpoint):
                    applier.apply(single)
            else:
                applier.apply(batch)
            hold.between_commits()
            position = batch.checkpoint
            if progress:
                progress(IngestProgress(batch.raw_position, size, counts, time.monotonic() - started))
        if drop_missing:
            _drop_missing(store, applier, run_id)
        with store.catalog.transaction() as con:
            con.execute("DELETE FROM update_seen WHERE run_id = ?", [run_id])
            Catalog.end_run(con, run_id, "done")
        summary.status = "done"
    except KeyboardInterrupt:
        with store.catalog.transaction() as con:
            Catalog.end_run(con, run_id, "interrupted", "interrupted by the user")
        raise
    finally:
        summary.counts = dict(counts)
        summary.seconds = time.monotonic() - started
    return summary


@disk_full_as_error("deleting from")
def delete_entities(store: Store, refs: Iterable[str]) -> dict:
    """Delete entities (``Q42``, ``wd:Q42`` or IRIs): what the store holds from them goes
    everywhere, as after an update whose documents say they were deleted. Triples other
    entities hold about them stay. Returns counts: ``deleted`` and ``unknown`` (ids the
    store does not hold)."""
    store._check_triples_writable()
    iris, unknown = [], 0
    for ref in dict.fromkeys(refs):
        iri = store.resolve(ref) if not ref.startswith(("http://", "https://")) else ref
        if iri is None or store.entity(iri, max_facts=1) is None:
            unknown += 1
            continue
        iris.append(iri)
    counts: Counter = Counter()
    with store.catalog.transaction() as con:
        run_id = Catalog.start_run(con, file="(kgstore delete)", size=0, checksum="", fmt="delete",
                                   options={"ids": len(iris)})
    applier = _BatchApplier(store, run_id, "(kgstore delete)", counts)
    for chunk in _chunks(iris, DELETE_CHUNK):
        applier.apply(Batch(checkpoint=Checkpoint(0, 0), deleted=chunk))
    with store.catalog.transaction() as con:
        Catalog.end_run(con, run_id, "done")
    return {"deleted": int(counts["deleted"]), "unknown": unknown}


def derived_parts_behind(store: Store) -> bool:
    """Whether an update changed the catalog since the graph and the index last caught up."""
    with store.catalog.connect() as con:
        return Catalog.get_meta(con, DERIVED_BEHIND) is not None


def mark_derived_current(store: Store) -> None:
    with store.catalog.transaction() as con:
        con.execute("DELETE FROM meta WHERE key = ?", [DERIVED_BEHIND])


class _BatchApplier:
    """Applies batches: the triples first (one Oxigraph transaction), then the catalog
    rows with the checkpoint (one DuckDB transaction); the checkpoint never gets ahead of
    the triples, and a rerun of the same batch changes nothing more."""

    def __init__(self, store: Store, run_id: int, file: str, counts: Counter, *, once_per_run: bool = False,
                 statement_nodes: bool = True):
        self.store, self.run_id, self.file, self.counts = store, run_id, file, counts
        self.once_per_run, self.statement_nodes = once_per_run, statement_nodes
        with store.catalog.connect() as con:  # what this run replaced before a kill
            self.replaced = {r[0] for r in con.execute("SELECT iri FROM update_seen WHERE run_id = ?",
                                                       [run_id]).fetchall()} if once_per_run else set()

    def apply(self, batch: Batch) -> None:
        documents = _documents_of(batch)
        replacing = [iri for iri in documents if iri not in self.replaced] if self.once_per_run else documents
        gone = frozenset(replacing) | frozenset(batch.deleted) | frozenset(s for s, _ in batch.redirects)
        redirects = tuple(batch.redirects)
        triple_change = None
        if gone or batch.triples:
            ntriples = ntriples_bytes(triple_columns(batch.triples)) if batch.triples else b""
            triple_change = TripleChange(gone, redirects, ntriples, self.statement_nodes)
        change = CatalogChange(gone=gone, redirects=redirects,
                               facts=Catalog.facts_table(batch.triples, self.run_id),
                               entities=Catalog.entities_table(batch.entities), relations=list(batch.relations),
                               rejected=list(batch.rejected), documents=frozenset(documents))
        after = Counter(self.counts)
        after["documents"] += len(set(documents) - self.replaced) if self.once_per_run else len(documents)
        after["deleted"] += len(set(batch.deleted))
        after["redirected"] += len(redirects)
        after["rejected"] += len(batch.rejected)
        after["triples"] += len(batch.triples)
        # The triples change in a thread while the catalog's rows are written (Oxigraph and
        # DuckDB both release the GIL: a third off a 1% update of 100,000 entities); the
        # catalog commits only once the triples have, and rolls back if they failed.
        with self.store.catalog.transaction() as con, ThreadPoolExecutor(1) as worker:
            triples = worker.submit(replace_in_triples, self.store, triple_change) if triple_change else None
            after["facts"] += replace_in_catalog(con, change, run_id=self.run_id, file=self.file)
            if documents:  # for --drop-missing, and for RDF documents that span batches
                con.execute("INSERT INTO update_seen SELECT ?, unnest(?::VARCHAR[])", [self.run_id, sorted(documents)])
            Catalog.set_meta(con, DERIVED_BEHIND, str(self.run_id))
            if triples is not None:
                triples.result()
            Catalog.checkpoint(con, self.run_id, batch.checkpoint.offset, batch.checkpoint.line_no, dict(after))
        self.counts.clear()
        self.counts.update(after)
        if self.once_per_run:
            self.replaced.update(documents)


def _documents_of(batch: Batch) -> list[str]:
    """The entities a batch holds a whole document of: an entity's RDF names it with
    ``schema:about``; a JSON document makes one entity record."""
    about = [t.o for t in batch.triples if t.p == SCHEMA_ABOUT and not t.literal and t.o.startswith(WD)]
    if about:
        return list(dict.fromkeys(about))
    return list(dict.fromkeys(e.iri for e in batch.entities if e.kind in ("item", "property")))


def _repeats(batch: Batch) -> bool:
    iris = [e.iri for e in batch.entities]
    return len(iris) != len(set(iris))


def _single_documents(loader, path: str, options: LoadOptions, start: Checkpoint | None,
                      end: Checkpoint) -> Iterator[Batch]:
    """The batch that ended at ``end`` read again a document at a time."""
    for single in loader.batches(path, replace(options, batch_size=1), start):
        if single.checkpoint.offset > end.offset:
            return
        yield single
        if single.checkpoint.offset == end.offset:
            return


def _drop_missing(store: Store, applier: _BatchApplier, run_id: int) -> None:
    """The run read a full dump: delete the entities with a document in the store that it
    did not hold (rows that only stand for an object are left to the counts' refresh)."""
    with store.catalog.connect() as con:
        missing = [r[0] for r in con.execute("""
            SELECT iri FROM entities
            WHERE iri NOT IN (SELECT iri FROM update_seen WHERE run_id = ?) AND starts_with(iri, ?)
              AND (label IS NOT NULL OR description IS NOT NULL OR aliases IS NOT NULL OR sitelinks IS NOT NULL
                   OR iri IN (SELECT s FROM statements))
            ORDER BY iri
        """, [run_id, WD]).fetchall()]
    for chunk in _chunks(missing, DELETE_CHUNK):
        applier.apply(Batch(checkpoint=_last_checkpoint(store, run_id), deleted=chunk))


def _last_checkpoint(store: Store, run_id: int) -> Checkpoint:
    with store.catalog.connect() as con:
        offset, line = con.execute("SELECT checkpoint_offset, checkpoint_line FROM ingest_runs WHERE run_id = ?",
                                   [run_id]).fetchone()
    return Checkpoint(offset or 0, line or 0)


def _chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]

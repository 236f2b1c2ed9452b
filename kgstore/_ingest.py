"""Running a loader into a store: checkpointed batches, resume, quarantine of bad lines."""
from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from ._catalog import Catalog
from ._pipeline import PreparedBatch, prepared_batches, use_worker
from ._registry import loader_for
from ._store import Store
from .errors import TooManyErrorsError, TruncatedInputError
from .records import Checkpoint, LoadOptions


@dataclass
class IngestProgress:
    raw_position: int
    total_size: int
    counts: Counter
    seconds: float


@dataclass
class IngestSummary:
    file: str
    format: str
    run_id: int
    status: str  # "done", "skipped" (already loaded), "failed"
    counts: dict = field(default_factory=dict)
    resumed_from_line: int = 0
    seconds: float = 0.0
    error: str | None = None

    @property
    def rejected(self) -> int:
        return int(self.counts.get("rejected", 0))


ProgressCallback = Callable[[IngestProgress], None]


def fingerprint(path: str) -> str:
    """Identifies a file's content cheaply: size plus hashes of its first and last MiB
    (hashing a 100 GB dump in full would take longer than loading it)."""
    size = os.path.getsize(path)
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        if size > (2 << 20):
            f.seek(size - (1 << 20))
            h.update(f.read(1 << 20))
    return h.hexdigest()


def ingest(store: Store, fmt: str, path: str | os.PathLike, *, options: LoadOptions | None = None,
           force: bool = False, max_errors: int | None = None,
           progress: ProgressCallback | None = None) -> IngestSummary:
    """Load ``path`` in format ``fmt`` into ``store``.

    Re-running a finished file is a no-op unless ``force``; re-running an interrupted one
    resumes from its last committed checkpoint. Each batch goes to Oxigraph first and then
    to the catalog together with its checkpoint, in one DuckDB transaction, so a kill at
    any point loses nothing that was committed and repeats nothing in the catalog.
    """
    store._check_writable()
    options = options or LoadOptions(languages=tuple(store.config.languages))
    loader = loader_for(fmt)
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    size = os.path.getsize(path)
    checksum = fingerprint(path)
    opts = options.option_dict()
    started = time.monotonic()

    with store.catalog.transaction() as con:
        if force:
            Catalog.forget_runs(con, checksum, fmt)
            previous = None
        else:
            previous = Catalog.find_run(con, checksum, fmt, opts)
        if previous and previous["status"] == "done":
            return IngestSummary(path, fmt, previous["run_id"], "skipped", previous["counts"])
        if previous:
            run_id = previous["run_id"]
            start = Checkpoint(previous["offset"], previous["line"])
            counts = Counter(previous["counts"])
            con.execute("UPDATE ingest_runs SET status = 'running', error = NULL WHERE run_id = ?", [run_id])
        else:
            run_id = Catalog.start_run(con, file=os.path.abspath(path), size=size, checksum=checksum,
                                       fmt=fmt, options=opts)
            start, counts = None, Counter()

    summary = IngestSummary(path, fmt, run_id, "failed", resumed_from_line=start.line_no if start else 0)
    try:
        # Parsing runs in a worker process for big files (kgstore/_pipeline.py); closing
        # the stream stops it, whatever ends the loop.
        with contextlib.closing(prepared_batches(loader, path, options, start, run_id,
                                                 worker=use_worker(path))) as batches:
            for batch in batches:
                _commit(store, run_id, path, batch, counts)
                if progress:
                    progress(IngestProgress(batch.raw_position, size, counts, time.monotonic() - started))
                if max_errors is not None and counts["rejected"] > max_errors:
                    raise TooManyErrorsError(path, counts["rejected"], max_errors)
        with store.catalog.transaction() as con:
            _finalize(con, loader)
            Catalog.end_run(con, run_id, "done")
        summary.status = "done"
    except (TooManyErrorsError, TruncatedInputError) as exc:
        with store.catalog.transaction() as con:
            _finalize(con, loader)
            Catalog.end_run(con, run_id, "failed", str(exc))
        summary.error = str(exc)
        raise
    except KeyboardInterrupt:
        with store.catalog.transaction() as con:
            Catalog.end_run(con, run_id, "interrupted", "interrupted by the user")
        raise
    finally:
        summary.counts = dict(counts)
        summary.seconds = time.monotonic() - started
    return summary


def _finalize(con, loader) -> None:
    Catalog.finalize(con)
    # A loader may derive more from the whole catalog in the same transaction (Freebase:
    # mediator types declared after their instances, schema labels that came late).
    finalize_catalog = getattr(loader, "finalize_catalog", None)
    if finalize_catalog is not None:
        finalize_catalog(con)


def _commit(store: Store, run_id: int, path: str, batch: PreparedBatch, counts: Counter) -> None:
    store.add_ntriples(batch.ntriples)
    counts.update(batch.counts)
    counts["triples"] += batch.n_triples
    counts["rejected"] += len(batch.rejected)
    with store.catalog.transaction() as con:
        counts["facts"] += Catalog.write_rows(con, run_id, batch.facts, batch.entities, batch.relations,
                                              batch.rejected, os.path.abspath(path))
        Catalog.checkpoint(con, run_id, batch.checkpoint.offset, batch.checkpoint.line_no, dict(counts))

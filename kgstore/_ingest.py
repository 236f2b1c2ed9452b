"""Running a loader into a store: checkpointed batches, resume, quarantine of bad lines."""
from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import duckdb

from ._catalog import Catalog
from ._disk import disk_full_as_error
from ._pipeline import PreparedBatch, prepared_batches, use_worker
from ._registry import loader_for
from ._store import Store
from ._sniff import guess_format, head_lines
from .errors import FormatMismatchError, TooManyErrorsError, TruncatedInputError
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
CommitCallback = Callable[[], None]

# With a parsing worker, catalog commits gather batches up to this many triples, or the
# batches of this many seconds (see _Committer).
GROUP_TRIPLES = 300_000
GROUP_SECONDS = 5.0
# With a parsing worker the catalog stays open across groups for up to this long (see
# _CatalogHold).
CATALOG_HOLD_SECONDS = 30.0
# ... and DuckDB's buffer pool is capped at this much meanwhile (see _CatalogHold).
CATALOG_HOLD_MEMORY = "128MB"
# An update's connection leaves DuckDB's log (WAL) unmerged at its close below this size
# (see _CatalogHold, defer_checkpoint).
DEFERRED_CHECKPOINT_BYTES = 8 * 2**20


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


@disk_full_as_error("loading into")
def ingest(store: Store, fmt: str, path: str | os.PathLike, *, options: LoadOptions | None = None,
           force: bool = False, max_errors: int | None = None,
           progress: ProgressCallback | None = None, on_commit: CommitCallback | None = None) -> IngestSummary:
    """Load ``path`` in format ``fmt`` into ``store``.

    Re-running a finished file is a no-op unless ``force``; re-running an interrupted one
    resumes from its last committed checkpoint. Each batch goes to Oxigraph first and then
    to the catalog together with its checkpoint, in one DuckDB transaction, so a kill at
    any point loses nothing that was committed and repeats nothing in the catalog.

    ``on_commit`` is called after each catalog commit, in this thread, while no catalog
    transaction is in flight: the place to mirror what was just committed elsewhere
    (:class:`kgstore.graph.GraphMirror` does it for the property graph).

    A process that only ingests should call :func:`kgstore.limit_malloc_arenas` before
    it opens the store, as ``kgstore ingest`` does (less peak memory, same speed).
    """
    store._check_triples_writable()
    return load_file(store, fmt, path, options=options, force=force, max_errors=max_errors, progress=progress,
                     on_commit=on_commit, triples=True)


def load_file(store: Store, fmt: str, path: str | os.PathLike, *, options: LoadOptions | None = None,
              force: bool = False, max_errors: int | None = None, progress: ProgressCallback | None = None,
              on_commit: CommitCallback | None = None, triples: bool = True) -> IngestSummary:
    """:func:`ingest`'s work; without ``triples``, the catalog only: the triples are parsed
    but not written (`kgstore sync --from-dump`, whose engine holds them already). The
    caller checks that the store may be written."""
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
    committer = None

    def finalize(con) -> None:
        _finalize(con, loader)

    try:
        worker = use_worker(path)
        committer = _Committer(store, run_id, os.path.abspath(path), counts, grouped=worker, on_commit=on_commit,
                               size=size, position=None if start else 0, triples=triples)

        def report(done: list[list[PreparedBatch]]) -> None:
            for group in done:
                if progress:
                    progress(IngestProgress(group[-1].raw_position, size, counts, time.monotonic() - started))

        # Big files are parsed in a worker process (kgstore/_pipeline.py) and committed in
        # groups (_Committer); closing the stream stops the worker, whatever ends the loop.
        with contextlib.closing(prepared_batches(loader, path, options, start, run_id, worker=worker,
                                                 ntriples=triples)) as batches, \
                (_CatalogHold(store.catalog) if worker else contextlib.nullcontext()) as hold:
            committer.hold = hold
            try:
                for number, batch in enumerate(batches):
                    if number == 0 and start is None:
                        _check_first_batch(batch, path, fmt)
                    report(committer.add(batch))
                    if max_errors is not None and committer.pending["rejected"] > max_errors:
                        report(committer.finish(finalize))
                        raise TooManyErrorsError(path, counts["rejected"], max_errors)
                report(committer.finish(finalize))
            except TruncatedInputError:
                report(committer.finish(finalize))  # what was read before the end, as without grouping
                raise
            except BaseException:
                committer.abandon()
                raise
        with store.catalog.transaction() as con:
            if not committer.finalized:
                _finalize(con, loader)
            Catalog.end_run(con, run_id, "done")
        summary.status = "done"
    except (TooManyErrorsError, TruncatedInputError) as exc:
        with store.catalog.transaction() as con:
            if committer is None or not committer.finalized:
                _finalize(con, loader)
            Catalog.end_run(con, run_id, "failed", str(exc))
        summary.error = str(exc)
        raise
    except FormatMismatchError:
        with store.catalog.transaction() as con:
            Catalog.drop_run(con, run_id)  # nothing was committed: leave no trace of the run
        raise
    except KeyboardInterrupt:
        with store.catalog.transaction() as con:
            Catalog.end_run(con, run_id, "interrupted", "interrupted by the user")
        raise
    finally:
        summary.counts = dict(counts)
        summary.seconds = time.monotonic() - started
    return summary


def _check_first_batch(batch: PreparedBatch, path: str, fmt: str) -> None:
    """A first batch whose every line was rejected means the file is in another format:
    stop before committing anything, and say which format it looks like."""
    if batch.n_triples == 0 and batch.rejected and not batch.counts.get("entities"):
        first = batch.rejected[0]
        raise FormatMismatchError(path, fmt, len(batch.rejected), (first.line_no, first.reason),
                                  guess_format(head_lines(path)))


def _finalize(con, loader) -> None:
    Catalog.finalize(con)
    # A loader may derive more from the whole catalog in the same transaction (Freebase:
    # mediator types declared after their instances, schema labels that came late).
    finalize_catalog = getattr(loader, "finalize_catalog", None)
    if finalize_catalog is not None:
        finalize_catalog(con)


class _CatalogHold:
    """Keeps the catalog's connection open across group commits, reopened every
    :data:`CATALOG_HOLD_SECONDS` (when no transaction is in flight) so that readers
    still get the catalog between commits now and then.

    Opening the catalog loads the entities table's key index, and closing it checkpoints
    (writes the new rows and the index again), both at a cost that grows with the store;
    held, DuckDB checkpoints only when its write-ahead log passes its own threshold. For
    the writes of 400,000 entities in 20 groups alone, 4.9-5.1 CPU s when each commit
    opened and closed the catalog against 4.0 held (3.3-3.6 with a 128 MB log, which
    bench/ingest.py measured at 85-180 MiB more peak memory: not kept). Commits stay
    durable: DuckDB syncs its log at each one, and a killed run's log is replayed when
    the catalog next opens.

    ``defer_checkpoint`` (``kgstore update``): the connection closes without merging a log
    smaller than :data:`DEFERRED_CHECKPOINT_BYTES` into the file; the next writer to close
    the catalog merges it, and readers replay it meanwhile (40 ms for a 1 % update of a
    100,000-entity store). The merge rewrites the entities table's key index whole, once a
    row was added: 0.3 s at 150,000 entities for one new row as for a thousand, so daily
    updates share one merge instead of paying one each (bench/update.py prints it).

    Held, the connection keeps what DuckDB cached for the commits, up to its default limit
    of 80 % of the machine's memory, and that grew with the store. So while held its
    buffer pool is capped at :data:`CATALOG_HOLD_MEMORY`. At 200,000 entities
    (bench/ingest.py, two runs each, alternating, load 2.6-3.9) the committing process's
    maximum fell from 733-780 to 664-705 MiB and the ingest's peak from 955-984 to
    903-945 MiB, at the same CPU. The final catalog pass gets the default back
    (:meth:`_Committer._write`): it scans and joins the whole store, and under a fixed
    cap it would spill to disk on a large one. Capped too, it took 1.04-1.11 CPU s at
    200,000 entities against 0.78-1.00 (264 against 294-303 MiB), and the ingest's peak
    read 850-882 MiB. The cap does not starve the entities table's key index, which DuckDB
    keeps in memory: a bare test inserted 4 million keys under it without an error."""

    def __init__(self, catalog, *, defer_checkpoint: bool = False):
        self.catalog = catalog
        self.defer_checkpoint = defer_checkpoint
        self._held: contextlib.ExitStack | None = None
        self._con = None
        self._since = 0.0

    def __enter__(self) -> "_CatalogHold":
        self._hold()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def _hold(self) -> None:
        self._held = contextlib.ExitStack()
        self._con = self._held.enter_context(self.catalog.pinned())
        Catalog.limit_memory(self._con, CATALOG_HOLD_MEMORY)
        if self.defer_checkpoint:
            self._con.execute("PRAGMA disable_checkpoint_on_shutdown")
        self._since = time.monotonic()

    def release(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            con, self._con = self._con, None
            # The setting is the database's: other connections to it in this process
            # would keep the cap. A connection that cannot take the reset is on its way
            # out with an error of its own, which this must not hide.
            with held, contextlib.suppress(duckdb.Error):
                # (a merge that fails leaves the log to the next writer: its commits stay durable)
                if self.defer_checkpoint and self.catalog.wal_bytes() >= DEFERRED_CHECKPOINT_BYTES:
                    con.execute("CHECKPOINT")
                Catalog.limit_memory(con, None)

    def between_commits(self) -> None:
        """Called with no catalog transaction in flight: give readers their turn when
        the connection has been held long enough."""
        if self._held is not None and time.monotonic() - self._since >= CATALOG_HOLD_SECONDS:
            self.release()
            self._hold()


class _Committer:
    """Commits prepared batches in groups of consecutive ones: a group's triples go to
    Oxigraph, then its catalog rows and its last batch's checkpoint go to DuckDB in one
    transaction. A kill in between resumes from the previous checkpoint and adds the same
    triples to Oxigraph again, which changes nothing.

    Without ``grouped`` a group is one batch, committed before :meth:`add` returns. With
    it (when a worker parses), a group gathers batches up to :data:`GROUP_TRIPLES`
    triples (or :data:`GROUP_SECONDS`), and its DuckDB transaction runs in a thread while
    the next batches are bulk-loaded into Oxigraph (both release the GIL). The last two
    groups (less than a group's bytes of the file left) have no next one to hide behind:
    their transaction writes their rows while Oxigraph loads that same group, and waits
    for the load to succeed before it writes the checkpoint and commits (it rolls back
    if the load fails), so the checkpoint never gets ahead of Oxigraph and the last rows
    are written by the time the last load ends, not after it (at 100,000 entities the
    time from the last load to the final pass fell from 1.5-1.9 s to 0.7 s, load 6). Doing
    so for every group measured 150 MB more peak memory: uncommitted rows are held through
    the whole load, beside Oxigraph's own peak, while the worker still runs. The very last
    group's transaction also runs the final catalog pass (:meth:`finish`) during its load.
    Big commits cost less per triple: DuckDB compresses new rows at each commit and
    recompresses a partly filled row group (122,880 rows) each time, so it spends a third
    of what commits of one batch cost; Oxigraph's bulk load writes and merges fewer files (a
    quarter less CPU for 300,000 triples than for 70,000). Bulk-loading each batch as it
    comes, to keep this core busy while the worker parses, measured slower on a machine
    shared with other work: CPU time is what counts there.

    ``counts`` always describes what the catalog's checkpoint holds; ``pending`` adds the
    batches handed over since. Without ``triples`` nothing goes to Oxigraph (a load is a
    no-op): the same groups and checkpoints, the catalog only.
    """

    def __init__(self, store: Store, run_id: int, file: str, counts: Counter, *, grouped: bool,
                 on_commit: CommitCallback | None = None, size: int = 0, position: int | None = 0,
                 triples: bool = True):
        self.store, self.run_id, self.file, self.counts, self.grouped = store, run_id, file, counts, grouped
        self.triples = triples
        # The file's size, and where in it the next group starts (None: not known, on resume).
        self.size, self._position = size, position
        self.on_commit = on_commit
        self.pending = Counter(counts)
        self._group: list[PreparedBatch] = []
        self._group_triples = 0
        self._submitted = 0
        self._group_started = 0.0
        self.finalized = False
        self._thread: threading.Thread | None = None
        self._in_flight: tuple[list[PreparedBatch], Counter, Callable | None] | None = None
        self._error: BaseException | None = None
        # Set by this thread once Oxigraph holds the group in flight; ``_loaded`` says
        # whether it does (False: roll the catalog transaction back).
        self._load_ended = threading.Event()
        self._loaded = False
        self.hold: _CatalogHold | None = None

    def add(self, batch: PreparedBatch) -> list[list[PreparedBatch]]:
        """Take ``batch``; returns the groups whose catalog transaction ended meanwhile."""
        pending = self.pending
        pending.update(batch.counts)
        pending["triples"] += batch.n_triples
        pending["rejected"] += len(batch.rejected)
        pending["facts"] += batch.facts.num_rows if batch.facts is not None else 0
        if not self._group:
            self._group_started = time.monotonic()
        self._group.append(batch)
        self._group_triples += batch.n_triples
        if not self.grouped:
            group = self._take_group()
            self._load(batch.ntriples)
            self._write(group, Counter(pending))
            self._committed(Counter(pending))
            return [group]
        # The first group is an eighth of a group (at 5,000 entities a batch, the first batch
        # alone), so that Oxigraph starts as soon as the worker has parsed that much; the
        # second is half a group. Smaller groups elsewhere (single batches for the last
        # group's worth of the file, to shorten the last load) measured 1.1 CPU s more in
        # Oxigraph at 100,000 entities (9 loads instead of 6, and more compaction).
        limit = GROUP_TRIPLES >> (3, 1, 0)[min(self._submitted, 2)]
        if self._group_triples >= limit or time.monotonic() - self._group_started >= GROUP_SECONDS:
            return self._submit()
        return []

    def finish(self, finalize: Callable | None = None) -> list[list[PreparedBatch]]:
        """Commit the open group and wait until the catalog holds everything taken.

        ``finalize(con)``, the catalog's pass at the end of an ingest, runs in the open
        group's transaction after its rows, while Oxigraph loads the group, rather than
        after that load (0.5-0.8 s at 100,000 entities); :attr:`finalized` says whether
        it ran (there was an open group, and it committed)."""
        done = self._submit(last=True, finalize=finalize) if self._group else []
        return done + self.drain()

    def abandon(self) -> None:
        """On the way out of an error: let the transaction in flight end (its own error,
        if any, gives way to the one being raised) and drop the open group, whose batches
        the next run reads again from the checkpoint."""
        self.on_commit = None  # on the way out: mirror nothing more
        self._end_load(False)  # a transaction in flight whose load never ended rolls back
        try:
            self.drain()
        except BaseException:  # noqa: BLE001
            pass

    def drain(self) -> list[list[PreparedBatch]]:
        """Wait for the transaction in flight; returns its group (raises its error)."""
        if self._thread is None:
            return []
        self._thread.join()
        self._thread = None
        group, after, finalize = self._in_flight
        self._in_flight = None
        if self._error is not None:
            error, self._error = self._error, None
            if isinstance(error, _LoadFailed):  # the load's own error is on its way up
                return []
            raise error
        self.finalized = self.finalized or finalize is not None
        self._committed(after)
        return [group]

    def _load(self, data: bytes) -> None:
        if self.triples:
            self.store.add_ntriples(data)

    def _take_group(self) -> list[PreparedBatch]:
        group, self._group, self._group_triples = self._group, [], 0
        return group

    def _submit(self, *, last: bool = False, finalize: Callable | None = None) -> list[list[PreparedBatch]]:
        self._submitted += 1
        group = self._take_group()
        # Near the end of the file (less than this group's bytes left) the group is one of
        # the last two: see the class's docstring.
        end = group[-1].raw_position
        last = last or (self._position is not None and self.size - end < end - self._position)
        self._position = end
        data = group[0].ntriples if len(group) == 1 else b"".join(b.ntriples for b in group)
        # The group waits for its catalog transaction with its rows only: its text goes
        # once Oxigraph has it (tens of MB a group, held twice otherwise while joined).
        for batch in group:
            batch.ntriples = b""
        if not last:
            # Oxigraph first: the checkpoint must never get ahead of it. The catalog
            # transaction then runs while the next group gathers and loads.
            self._load(data)
            del data
            done = self.drain()
            self._start_write(group, loaded=True)
            return done
        # The last groups have no next one to overlap with: their rows are written while
        # Oxigraph loads them, and committed once the load has succeeded.
        done = self.drain()  # one catalog transaction at a time, in file order
        self._start_write(group, loaded=None, finalize=finalize)
        try:
            self._load(data)
        except BaseException:
            self._end_load(False)
            raise
        self._end_load(True)
        return done

    def _start_write(self, group: list[PreparedBatch], *, loaded: bool | None,
                     finalize: Callable | None = None) -> None:
        """Start the catalog transaction of ``group`` in a thread; ``loaded`` None means
        that Oxigraph's load of it has not ended yet (see :meth:`_end_load`)."""
        self._in_flight = (group, Counter(self.pending), finalize)
        self._load_ended.clear()
        self._loaded = False
        if loaded is not None:
            self._end_load(loaded)
        self._thread = threading.Thread(target=self._write_in_thread, name="kgstore-ingest-catalog", daemon=True)
        self._thread.start()

    def _end_load(self, loaded: bool) -> None:
        if not self._load_ended.is_set():
            self._loaded = loaded
            self._load_ended.set()

    def _write_in_thread(self) -> None:
        try:
            self._write(*self._in_flight, after_load=self._after_load)
        except BaseException as exc:  # noqa: BLE001 - raised by drain() in the caller's thread
            self._error = exc

    def _after_load(self) -> None:
        """In the catalog thread, before the checkpoint: wait until Oxigraph holds the
        group; if it never will, raise, so that the transaction rolls back."""
        self._load_ended.wait()
        if not self._loaded:
            raise _LoadFailed()

    def _write(self, group: list[PreparedBatch], after: Counter, finalize: Callable | None = None,
               after_load=None) -> None:
        with self.store.catalog.transaction() as con:
            if self.grouped:
                # Beside Oxigraph's bulk load (and the parsing worker), a second DuckDB
                # thread only contends for the cores: one costs a sixth less CPU for the
                # same writes (1.7 against 2.1 CPU s per 100,000 entities). The setting
                # ends with the connection; the final pass gets all threads again.
                con.execute("SET threads = 1")
            for batch in group:
                Catalog.write_rows(con, self.run_id, batch.facts, batch.entities, batch.relations,
                                   batch.rejected, self.file)
            if finalize is not None:
                if self.hold is not None:
                    Catalog.limit_memory(con, None)  # the final pass scans the whole store
                finalize(con)
            if after_load is not None:
                after_load()
            last = group[-1].checkpoint
            Catalog.checkpoint(con, self.run_id, last.offset, last.line_no, dict(after))

    def _committed(self, after: Counter) -> None:
        # Always in the caller's thread, with the catalog transaction joined: on_commit may
        # read the catalog.
        self.counts.clear()
        self.counts.update(after)
        if self.on_commit is not None:
            self.on_commit()
        if self.hold is not None:
            self.hold.between_commits()


class _LoadFailed(Exception):
    """Oxigraph's load of the group in flight failed or was interrupted: its catalog
    transaction rolls back (the load's own error is what the caller sees)."""

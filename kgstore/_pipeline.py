"""Ingest on two cores: a worker process parses, this process commits.

A loader's batches are *prepared* (triples serialised to N-Triples bytes, catalog rows
built as Arrow tables) and then *committed* (Oxigraph bulk load, then a DuckDB
transaction with the checkpoint). Preparing is mostly Python; committing is mostly
native code. With a worker, a forked process runs the loader and prepares batches while
this one commits the ones before (kgstore/_ingest.py); at most :data:`QUEUE_BATCHES`
prepared batches wait between the two, so memory stays flat whatever the file's size.

The worker writes nothing: every write happens in this process, in the loader's order,
with the checkpoints. A kill of either process therefore leaves the store as
consistent as a kill of a single-process ingest, and the next run resumes from the
checkpoint. The worker ignores Ctrl-C (this process handles it), dies with this process,
and is stopped whenever the stream is closed (the end, an error, an interrupt). Its
exceptions come back here and are raised at the same point of the stream of batches as
without a worker. Loaders keep their per-run state inside
``batches()`` (as the protocol asks), so running it in another process changes nothing.

``KGSTORE_INGEST_WORKERS=0`` turns the worker off and ``=1`` forces it even for small
files; by default it is used for files of :data:`WORKER_MIN_BYTES` or more, where
``fork`` exists and there are two cores or more.
"""
from __future__ import annotations

import ctypes
import gc
import multiprocessing as mp
import os
import pickle
import queue
import signal
import threading
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa

from ._catalog import Catalog
from ._columns import ntriples_bytes, triple_columns
from .errors import IngestError, KgstoreError
from .records import Batch, Checkpoint, LoadOptions, Loader, RejectedLine, RelationRecord

WORKER_ENV = "KGSTORE_INGEST_WORKERS"
WORKER_NAME = "kgstore-ingest-parser"
WORKER_MIN_BYTES = 4 << 20
QUEUE_BATCHES = 4
GC_BATCHES = 8
_POLL_SECONDS = 0.5


@dataclass
class PreparedBatch:
    """A :class:`Batch` ready to commit: what Oxigraph and the catalog write, nothing more."""

    checkpoint: Checkpoint
    raw_position: int
    counts: Counter
    ntriples: bytes
    n_triples: int
    facts: pa.Table | None
    entities: pa.Table | None
    relations: list[RelationRecord] = field(default_factory=list)
    rejected: list[RejectedLine] = field(default_factory=list)


def prepare(batch: Batch, run_id: int, *, ntriples: bool = True) -> PreparedBatch:
    """``ntriples`` False: no N-Triples text (the catalog only: `kgstore sync --from-dump`)."""
    columns = triple_columns(batch.triples)
    return PreparedBatch(
        checkpoint=batch.checkpoint, raw_position=batch.raw_position, counts=batch.counts,
        ntriples=ntriples_bytes(columns) if ntriples else b"", n_triples=len(batch.triples),
        facts=Catalog.facts_of_columns(columns, run_id), entities=Catalog.entities_table(batch.entities),
        relations=list(batch.relations), rejected=list(batch.rejected),
    )


def use_worker(path: str) -> bool:
    setting = os.environ.get(WORKER_ENV, "").strip().lower()
    if setting in ("0", "no", "false", "off") or "fork" not in mp.get_all_start_methods():
        return False
    if setting in ("1", "yes", "true", "on"):
        return True
    return (os.cpu_count() or 1) >= 2 and os.path.getsize(path) >= WORKER_MIN_BYTES


class BatchStream:
    """The prepared batches of one ingest, in order: iterate it, and close it (or exhaust
    it) to stop the worker, whether or not iterating has begun."""

    def __init__(self, batches: Iterator[PreparedBatch], stop=None):
        self._batches = batches
        self._stop = stop

    def __iter__(self) -> "BatchStream":
        return self

    def __next__(self) -> PreparedBatch:
        return next(self._batches)

    def close(self) -> None:
        self._batches.close()
        if self._stop is not None:
            self._stop()


def prepared_batches(loader: Loader, path: str, options: LoadOptions, start: Checkpoint | None,
                     run_id: int, *, worker: bool, ntriples: bool = True) -> BatchStream:
    """The loader's batches, prepared; with ``worker``, prepared in a worker process;
    without ``ntriples``, with no N-Triples text (nothing writes the triples)."""
    if not worker:
        return BatchStream(_prepared(loader.batches(path, options, start), run_id, ntriples))
    ctx = mp.get_context("fork")
    reader, writer = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_work, args=(loader, path, options, start, run_id, ntriples, reader, writer, os.getpid()),
                       name=WORKER_NAME, daemon=True)
    proc.start()
    # Only the worker may hold the writing end: then its death, however it comes, is an
    # end of file here rather than a wait for ever.
    writer.close()

    def stop() -> None:
        reader.close()
        _stop(proc)

    return BatchStream(_from_worker(reader, proc), stop=stop)


def _prepared(source: Iterator[Batch], run_id: int, ntriples: bool) -> Iterator[PreparedBatch]:
    try:
        for batch in source:
            yield prepare(batch, run_id, ntriples=ntriples)
    finally:
        close = getattr(source, "close", None)  # a loader's read-ahead thread stops here
        if close is not None:
            close()


# -- this process's side -------------------------------------------------------------------
def _from_worker(reader, proc) -> Iterator[PreparedBatch]:
    while True:
        message = _receive(reader, proc)
        if message[0] == "batch":
            yield message[1]
        elif message[0] == "done":
            return
        else:  # after the batches before it, as the loader raised it
            raise _rebuild(*message[1:])


def _receive(reader, proc) -> tuple:
    try:
        return pickle.loads(reader.recv_bytes())
    except (EOFError, OSError):
        proc.join(timeout=1)
        raise IngestError(f"the ingest's parsing worker process ended unexpectedly (exit code {proc.exitcode}); "
                          "everything committed so far is kept: run the ingest again to resume") from None


def _stop(proc) -> None:
    if proc.is_alive():
        proc.terminate()
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
    proc.join()


# -- the worker process ----------------------------------------------------------------------
def _work(loader, path, options, start, run_id, ntriples, reader, writer, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the committing process's to handle
    _die_with_parent()
    reader.close()
    # A thread writes to the pipe, so that parsing goes on while the committer is busy and
    # a message waits in ``outbox`` rather than blocking the parser.
    outbox: queue.Queue = queue.Queue(maxsize=QUEUE_BATCHES)

    def feed() -> None:
        try:
            while (data := outbox.get()) is not None:
                writer.send_bytes(data)
        except OSError:  # the committer is gone
            os._exit(1)

    feeder = threading.Thread(target=feed, name="kgstore-ingest-feeder", daemon=True)
    feeder.start()

    def send(item) -> None:
        while True:
            try:
                outbox.put(item, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                if os.getppid() != parent:
                    os._exit(1)

    # Parsing makes millions of short-lived containers, on which Python's cyclic garbage
    # collector spends a tenth of the time while finding nothing (JSON makes no cycles):
    # collect every few batches instead (each collection walks the batch the loader still
    # holds), ignoring what was there before the fork.
    gc.freeze()
    gc.disable()
    if getattr(loader, "read_ahead", False):
        loader.read_ahead = False  # its read-ahead thread would only contend for this process's GIL
    try:
        for n, batch in enumerate(loader.batches(path, options, start), 1):
            send(pickle.dumps(("batch", prepare(batch, run_id, ntriples=ntriples)), protocol=pickle.HIGHEST_PROTOCOL))
            del batch
            if n % GC_BATCHES == 0:
                gc.collect()
        send(pickle.dumps(("done",)))
    except BaseException as exc:  # noqa: BLE001 - every error goes back, to be raised there
        send(pickle.dumps(("error", *_portable(exc))))
    send(None)
    feeder.join()
    writer.close()


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (best effort)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _portable(exc: BaseException) -> tuple:
    """The exception as picklable parts. kgstore's errors take their own constructor
    arguments, which ``args`` does not hold, so they travel as class, args and state."""
    parts = (type(exc), exc.args, dict(getattr(exc, "__dict__", {})))
    try:
        pickle.loads(pickle.dumps(parts))
    except Exception:  # noqa: BLE001 - an unpicklable exception travels as text
        parts = (IngestError, (f"the ingest's parsing worker failed: {type(exc).__name__}: {exc}",), {})
    return parts + ("".join(traceback.format_exception(exc)),)


def _rebuild(cls: type, args: tuple, state: dict, trace: str) -> BaseException:
    try:
        exc = cls.__new__(cls)
        exc.args = args
        exc.__dict__.update(state)
    except Exception:  # noqa: BLE001
        exc = IngestError(f"the ingest's parsing worker failed: {cls.__name__}: {args}")
    if not isinstance(exc, KgstoreError):  # a bug: say where it happened
        exc.add_note(f"raised in the ingest's parsing worker process:\n{trace}")
    return exc

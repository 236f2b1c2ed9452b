"""A read query with a time limit and a row cap: :func:`run_bounded`.

pyoxigraph cannot cancel a running query, so the limit is a watchdog: the query runs in a
worker thread of a small fixed pool and the caller stops waiting when the limit passes
(:class:`~kgstore.errors.QueryTimeoutError`). The worker checks the deadline between rows
and stops there, so only one long step that yields no row (a sort, a COUNT over
everything) keeps it busy past the limit. Because the pool is fixed, runaway queries can
occupy at most its workers; later queries wait in its queue and that wait counts
against their own limit, so threads never pile up.

Results are read into a :class:`BoundedResult` (at most ``max_rows`` rows) and written
out again with pyoxigraph's own serializers (:meth:`BoundedResult.serialize`).

:func:`write_bounded` is the server's shortcut when only the written document is wanted:
pyoxigraph writes a SELECT's solutions straight from the live result, in Rust, into a
byte budget too small to hold more than ``max_rows`` rows, so the cap holds without
reading any row into Python. A result that does not fit is run again the way of
:func:`run_bounded`. While pyoxigraph writes, the deadline is checked at each 8 KiB it
hands over rather than at each row.

The server (``kgstore serve``) calls :func:`write_bounded_async`; the QA sandbox calls
:func:`run_bounded`.
"""
from __future__ import annotations

import asyncio
import atexit
import functools
import queue
import threading
import time
import weakref
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import pyoxigraph as ox

from .errors import QueryError, QueryTimeoutError

ResultKind = Literal["solutions", "boolean", "graph"]
Term = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple

DEFAULT_WORKERS = 4


@dataclass(frozen=True)
class BoundedResult:
    """What a bounded query returned.

    ``kind`` is ``"solutions"`` (SELECT: ``variables`` and ``rows``, one tuple of terms or
    None per row, in ``variables`` order), ``"boolean"`` (ASK: ``boolean``) or ``"graph"``
    (CONSTRUCT/DESCRIBE: ``triples``). ``truncated`` says more rows or triples existed
    than ``max_rows``; ``seconds`` is the time the query took, queue wait included."""

    kind: ResultKind
    variables: tuple[str, ...] = ()
    rows: tuple[tuple[Term | None, ...], ...] = ()
    triples: tuple[ox.Triple, ...] = ()
    boolean: bool | None = None
    truncated: bool = False
    seconds: float = 0.0

    def __len__(self) -> int:
        """Rows (SELECT), triples (CONSTRUCT/DESCRIBE) or 1 (ASK)."""
        return {"solutions": len(self.rows), "graph": len(self.triples), "boolean": 1}[self.kind]

    def bindings(self) -> list[dict[str, Term]]:
        """SELECT rows as dicts, unbound variables left out."""
        return [{v: t for v, t in zip(self.variables, row) if t is not None} for row in self.rows]

    def serialize(self, format: ox.QueryResultsFormat | ox.RdfFormat, *,
                  prefixes: dict[str, str] | None = None) -> bytes:
        """The result in ``format`` (a QueryResultsFormat for SELECT/ASK, an RdfFormat for
        CONSTRUCT/DESCRIBE), written by pyoxigraph. ``prefixes`` shorten Turtle output."""
        if self.kind == "graph":
            if not isinstance(format, ox.RdfFormat):
                raise ValueError(f"a graph result is written as RDF, not {format}")
            return ox.serialize(self.triples, format=format, prefixes=prefixes)
        if not isinstance(format, ox.QueryResultsFormat):
            raise ValueError(f"a {self.kind} result is written as query results, not {format}")
        return _replay(self).serialize(format=format)


Format = ox.QueryResultsFormat | ox.RdfFormat


@dataclass(frozen=True)
class WrittenResult:
    """A bounded query's result written out, as :func:`write_bounded` returns it.

    ``body`` is the document in ``format``; both are None when the ``pick`` given to
    :func:`write_bounded` had no format for a result of this ``kind`` (HTTP's 406).
    ``truncated`` and ``seconds`` are as in :class:`BoundedResult`."""

    kind: ResultKind
    format: Format | None
    body: bytes | None
    truncated: bool = False
    seconds: float = 0.0


class QueryPool:
    """A fixed number of worker threads for queries (see the module docstring).

    The threads start with the pool and take calls from one queue, first come first
    served; :meth:`submit` hands a call over for a thread to wait on, and
    :meth:`submit_async` for an event loop to await (the hop the server makes per query:
    no executor machinery, one wake-up each way)."""

    def __init__(self, workers: int = DEFAULT_WORKERS):
        if workers < 1:
            raise ValueError("a query pool needs at least one worker")
        self.workers = workers
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        # The threads hold the queue, not the pool: a pool dropped without shutdown() stops them.
        self._threads = [threading.Thread(target=_serve, args=(self._calls,), name=f"kgstore-query_{i}",
                                          daemon=True) for i in range(workers)]
        for thread in self._threads:
            thread.start()
        weakref.finalize(self, _stop_threads, self._calls, workers)
        _live_pools.add(self)

    def submit(self, fn, *args) -> Future:
        """Run ``fn(*args)`` on a worker; its Future, cancellable while it waits in the queue."""
        future: Future = Future()
        self._put((_settle_future, future, fn, args))
        return future

    def submit_async(self, fn, *args) -> asyncio.Future:
        """Run ``fn(*args)`` on a worker; a future of the running event loop gets its value
        or its error (a call whose future is done by then, cancelled or failed by the
        caller, is skipped if it has not started)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._put((_settle_loop_future, (loop, future), fn, args))
        return future

    def shutdown(self) -> None:
        """Stop taking queries; queued ones are cancelled, running ones finish in the background."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        while True:
            try:
                call = self._calls.get_nowait()
            except queue.Empty:
                break
            if call is not None:
                _cancel(call)
        _stop_threads(self._calls, len(self._threads))

    def _put(self, call) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("this query pool is shut down")
            self._calls.put(call)


def _serve(calls: queue.SimpleQueue) -> None:
    """A worker: run calls until the stop mark (None)."""
    while True:
        call = calls.get()
        if call is None:
            return
        settle, target, fn, args = call
        del call
        settle(target, fn, args)
        del target, fn, args  # nothing of a finished query stays alive in an idle worker


def _stop_threads(calls: queue.SimpleQueue, count: int) -> None:
    for _ in range(count):
        calls.put(None)


def _settle_future(future: Future, fn, args) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        value = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - handed to the caller
        future.set_exception(exc)
    else:
        future.set_result(value)


def _settle_loop_future(target, fn, args) -> None:
    loop, future = target
    if future.done():  # the caller gave up while the call waited in the queue
        return
    try:
        outcome = (True, fn(*args))
    except BaseException as exc:  # noqa: BLE001 - handed to the caller
        outcome = (False, exc)
    try:
        loop.call_soon_threadsafe(_set_outcome, future, outcome)
    except RuntimeError:  # the loop is closed: nobody waits
        pass


def _set_outcome(future: asyncio.Future, outcome) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def _cancel(call) -> None:
    settle, target, _, _ = call
    if settle is _settle_future:
        target.cancel()
    else:
        loop, future = target
        try:
            loop.call_soon_threadsafe(future.cancel)
        except RuntimeError:
            pass


_live_pools: "weakref.WeakSet[QueryPool]" = weakref.WeakSet()


@atexit.register
def _stop_pools() -> None:
    """At exit, let the workers finish the query they run (an abandoned one stops at its
    next row) before the interpreter goes, as the standard library's executors do."""
    pools = list(_live_pools)
    for pool in pools:
        pool.shutdown()
    deadline = time.monotonic() + 10
    for pool in pools:
        for thread in pool._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))


_default_pool: QueryPool | None = None
_default_pool_lock = threading.Lock()


def default_pool() -> QueryPool:
    """The process-wide pool used when :func:`run_bounded` is given none."""
    global _default_pool
    with _default_pool_lock:
        if _default_pool is None:
            _default_pool = QueryPool()
        return _default_pool


def run_bounded(store, sparql: str, *, timeout_s: float, max_rows: int,
                default_graph: Sequence[str] | None = None, named_graphs: Sequence[str] | None = None,
                pool: QueryPool | None = None) -> BoundedResult:
    """Run read query ``sparql`` on ``store`` (a :class:`kgstore.Store`) within ``timeout_s``
    seconds, keeping at most ``max_rows`` rows (or triples).

    The query goes through :meth:`Store.query`: the store's prefixes are predeclared and
    SERVICE/LOAD/updates are refused (:class:`QueryRefusedError`); a malformed query
    raises :class:`QueryError`. ``default_graph``/``named_graphs`` are graph IRIs, as in
    the SPARQL protocol's ``default-graph-uri``/``named-graph-uri``. Past the limit,
    :class:`QueryTimeoutError` is raised and the worker stops at its next row."""
    return _wait(_Job(_evaluate, store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool))


async def run_bounded_async(store, sparql: str, *, timeout_s: float, max_rows: int,
                            default_graph: Sequence[str] | None = None, named_graphs: Sequence[str] | None = None,
                            pool: QueryPool | None = None) -> BoundedResult:
    """:func:`run_bounded` for an event loop: the loop waits without holding a thread."""
    return await _wait_async(_Job(_evaluate, store, sparql, timeout_s, max_rows, default_graph, named_graphs,
                                  pool))


def write_bounded(store, sparql: str, pick: Callable[[ResultKind], Format | None], *, timeout_s: float,
                  max_rows: int, default_graph: Sequence[str] | None = None,
                  named_graphs: Sequence[str] | None = None, prefixes: dict[str, str] | None = None,
                  pool: QueryPool | None = None) -> WrittenResult:
    """:func:`run_bounded`, and the result written in the format ``pick(kind)`` chooses for
    its kind (None: no format fits; nothing is written), all in the worker.

    The document is what ``run_bounded(...).serialize(format, prefixes=prefixes)`` gives,
    row cap included; small SELECT results are written by pyoxigraph straight from the
    live result (see the module docstring)."""
    return _wait(_Job(_write, store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool,
                      extra=(pick, prefixes)))


async def write_bounded_async(store, sparql: str, pick: Callable[[ResultKind], Format | None], *,
                              timeout_s: float, max_rows: int, default_graph: Sequence[str] | None = None,
                              named_graphs: Sequence[str] | None = None, prefixes: dict[str, str] | None = None,
                              pool: QueryPool | None = None) -> WrittenResult:
    """:func:`write_bounded` for an event loop: the loop waits without holding a thread."""
    return await _wait_async(_Job(_write, store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool,
                                  extra=(pick, prefixes)))


def write_inline(store, sparql: str, pick: Callable[[ResultKind], Format | None], *, max_rows: int,
                 prefixes: dict[str, str] | None = None) -> WrittenResult | None:
    """A lookup (:func:`kgstore._lookup_query.is_bounded_lookup`) run and written in the
    calling thread, no pool: its work stops at the write budget of small results (at most
    256 KiB), so it needs no time limit. None when its answer outgrows the budget: the
    caller then runs it through the pool (:func:`write_bounded_async`), which cuts at
    ``max_rows`` within the time limit."""
    started = time.monotonic()
    kind, fmt, body, truncated = _query_written(store, sparql, None, None, pick, max_rows, _NEVER_CANCELLED,
                                                prefixes)
    if fmt is not None and body is None:
        return None
    return WrittenResult(kind, fmt, body, truncated=truncated, seconds=time.monotonic() - started)


_NEVER_CANCELLED = threading.Event()  # nobody abandons a write that stops at its budget


def _wait(job: "_Job"):
    future = job.pool.submit(job.work, *job.args)
    try:
        return future.result(timeout=job.remaining())
    except FutureTimeout:
        future.cancel()  # still queued: never starts
        raise job.abandon() from None


async def _wait_async(job: "_Job"):
    future = job.pool.submit_async(job.work, *job.args)
    timer = asyncio.get_running_loop().call_later(job.remaining(), _expire, future, job)
    try:
        return await future
    except asyncio.CancelledError:
        job.abandon()  # the client went away: stop the worker too
        raise
    finally:
        timer.cancel()


def _expire(future: asyncio.Future, job: "_Job") -> None:
    if not future.done():
        future.set_exception(job.abandon())


class _Job:
    """One query for a pool, with its deadline and the flag that stops its worker. The
    worker runs ``work(store, sparql, max_rows, default_graph, named_graphs, cancelled,
    started, *extra)``."""

    def __init__(self, work, store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool, *,
                 extra: tuple = ()):
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if max_rows < 0:
            raise ValueError("max_rows must be zero or more")
        self.timeout_s = timeout_s
        started = time.monotonic()
        self.deadline = started + timeout_s
        self.cancelled = threading.Event()
        self.pool = pool or default_pool()
        self.work = work
        self.args = (store, sparql, max_rows, default_graph, named_graphs, self.cancelled, started, *extra)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def abandon(self) -> QueryTimeoutError:
        self.cancelled.set()
        return QueryTimeoutError(self.timeout_s)


class _Abandoned(Exception):
    """The caller stopped waiting; the worker stops too (nobody reads this)."""


def _evaluate(store, sparql, max_rows, default_graph, named_graphs, cancelled, started) -> BoundedResult:
    if cancelled.is_set():
        raise _Abandoned  # waited in the queue past its limit
    result = store.query(sparql, default_graph=default_graph, named_graphs=named_graphs)
    try:
        kept = _collect(result, max_rows, cancelled)
    except Exception as exc:
        del result  # see _reading_error
        raise _reading_error(exc) from None
    del result
    return BoundedResult(**kept, seconds=time.monotonic() - started)


def _write(store, sparql, max_rows, default_graph, named_graphs, cancelled, started, pick,
           prefixes) -> WrittenResult:
    if cancelled.is_set():
        raise _Abandoned  # waited in the queue past its limit
    kind, fmt, body, truncated = _query_written(store, sparql, default_graph, named_graphs, pick, max_rows,
                                                cancelled, prefixes)
    if fmt is not None and body is None:  # more rows than the budget holds: the long way
        kept = _evaluate(store, sparql, max_rows, default_graph, named_graphs, cancelled, started)
        body, truncated = kept.serialize(fmt), kept.truncated
    return WrittenResult(kind, fmt, body, truncated=truncated, seconds=time.monotonic() - started)


def _query_written(store, sparql, default_graph, named_graphs, pick, max_rows, cancelled, prefixes):
    """``(kind, format, body, truncated)`` of ``sparql`` run and written from its live
    result (:func:`_write_live`), the result dropped on this thread whatever happens."""
    result = store.query(sparql, default_graph=default_graph, named_graphs=named_graphs)
    try:
        return _write_live(result, pick, max_rows, cancelled, prefixes)
    except Exception as exc:
        raise _reading_error(exc) from None
    finally:
        del result  # dropped here, on the thread that made it, before any error leaves (see _reading_error)


def _reading_error(exc: Exception) -> Exception:
    """The error to raise for ``exc``, met while reading a live result.

    pyoxigraph's result iterators must be dropped on the thread that made them: the
    traceback would carry them (in the frames that read them) to the thread that reads the
    error, so it goes; the frame that holds the result deletes it before raising this."""
    error = exc.with_traceback(None)
    if isinstance(error, OSError):
        return QueryError(f"SPARQL query failed: {error}")
    return error


def _write_live(result, pick, max_rows: int, cancelled: threading.Event, prefixes):
    """``(kind, format, body, truncated)`` of a live result; body None with a format: a
    SELECT whose document outgrows the budget that guarantees at most ``max_rows`` rows."""
    kind: ResultKind = ("boolean" if isinstance(result, ox.QueryBoolean)
                        else "solutions" if isinstance(result, ox.QuerySolutions) else "graph")
    fmt = pick(kind)
    if fmt is None:
        return kind, None, None, False
    if kind == "graph":  # Turtle with the store's prefixes: pyoxigraph writes those from Python triples only
        kept = BoundedResult(**_collect(result, max_rows, cancelled))
        return kind, fmt, kept.serialize(fmt, prefixes=prefixes), kept.truncated
    if not isinstance(fmt, ox.QueryResultsFormat):
        raise ValueError(f"a {kind} result is written as query results, not {fmt}")
    if kind == "boolean":
        return kind, fmt, result.serialize(format=fmt), False
    budget = min(_MIN_ROW_BYTES.get(fmt, 0) * (max_rows + 1) - 1, DIRECT_WRITE_MAX_BYTES)
    sink = _BudgetSink(budget, cancelled)
    try:
        result.serialize(sink, format=fmt)
    except _OverBudget:
        return kind, fmt, None, False
    return kind, fmt, sink.getvalue(), False


# The fewest bytes each results format spends on a row (an empty one: `{},` in JSON,
# `<result></result>` in XML, a line end in CSV and TSV); each document's head adds at
# least one more. A document shorter than (max_rows + 1) of them holds at most max_rows rows.
_MIN_ROW_BYTES = {ox.QueryResultsFormat.JSON: 3, ox.QueryResultsFormat.XML: 17, ox.QueryResultsFormat.CSV: 2,
                  ox.QueryResultsFormat.TSV: 1}
# Past this, a result goes the long way even if the cap would allow more: it bounds the
# work thrown away when a result is run again.
DIRECT_WRITE_MAX_BYTES = 256 * 1024


class _OverBudget(Exception):
    pass


class _BudgetSink:
    """A binary file for pyoxigraph to write to (in 8 KiB pieces, and the rest at the end)
    that stops it past ``budget`` bytes or once the caller gave up."""

    def __init__(self, budget: int, cancelled: threading.Event):
        self.budget = budget
        self.cancelled = cancelled
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        if self.cancelled.is_set():
            raise _Abandoned
        self.size += len(data)
        if self.size > self.budget:
            raise _OverBudget
        self.parts.append(data)
        return len(data)

    def flush(self) -> None:
        pass

    def getvalue(self) -> bytes:
        return self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)


def _collect(result, max_rows: int, cancelled: threading.Event) -> dict:
    """The fields of a BoundedResult read from a live pyoxigraph result."""
    if isinstance(result, ox.QueryBoolean):
        return {"kind": "boolean", "boolean": bool(result)}
    kept: list = []
    truncated = False
    solutions = isinstance(result, ox.QuerySolutions)
    variables = tuple(v.value for v in result.variables) if solutions else ()
    for item in result:
        if cancelled.is_set():
            raise _Abandoned
        if len(kept) == max_rows:
            truncated = True
            break
        kept.append(tuple(item) if solutions else item)  # a solution iterates its values in order
    if solutions:
        return {"kind": "solutions", "variables": variables, "rows": tuple(kept), "truncated": truncated}
    return {"kind": "graph", "triples": tuple(kept), "truncated": truncated}


# Rows kept in Python are written out by pyoxigraph itself: an empty in-memory store answers
# a query that lists the rows in a VALUES block, so every results format comes out exactly
# as pyoxigraph writes it. Blank nodes and triple terms cannot stand in VALUES: rows with
# them are numbered by VALUES instead and a custom function hands back each cell.
_CELL = ox.NamedNode("urn:kgstore:bounded-query:cell")


@functools.cache
def _empty() -> ox.Store:
    return ox.Store()  # in memory; only ever queried, from any thread


def _replay(result: BoundedResult) -> ox.QuerySolutions | ox.QueryBoolean:
    if result.kind == "boolean":
        return _empty().query("ASK {}" if result.boolean else "ASK { FILTER(false) }")
    rows = result.rows
    if not result.variables:
        # SELECT with no variable: an empty solution per row; pyoxigraph has no query that
        # repeats one, so one empty row stands for any number (the count is in len(result)).
        return _empty().query("SELECT * WHERE {}" if rows else "SELECT * WHERE { FILTER(false) }")
    projection = " ".join(f"?{v}" for v in result.variables)
    if not any(isinstance(t, (ox.BlankNode, ox.Triple)) for row in rows for t in row):
        # str() of an IRI or literal is its N-Triples form, which SPARQL reads back as it was.
        data = " ".join("(" + " ".join("UNDEF" if t is None else str(t) for t in row) + ")" for row in rows)
        return _empty().query(f"SELECT {projection} WHERE {{}} VALUES ({projection}) {{ {data} }}")

    def cell(row: ox.Literal, column: ox.Literal) -> Term | None:
        return rows[int(row.value)][int(column.value)]

    row_var = "?kgstore_row"
    while row_var[1:] in result.variables:
        row_var += "_"
    binds = " ".join(f"BIND(<{_CELL.value}>({row_var}, {j}) AS ?{v})" for j, v in enumerate(result.variables))
    numbers = " ".join(map(str, range(len(rows))))
    query = f"SELECT {projection} WHERE {{ VALUES {row_var} {{ {numbers} }} {binds} }}"
    return _empty().query(query, custom_functions={_CELL: cell})


__all__ = ["run_bounded", "run_bounded_async", "write_bounded", "write_bounded_async", "BoundedResult",
           "WrittenResult", "QueryPool", "default_pool", "DEFAULT_WORKERS"]

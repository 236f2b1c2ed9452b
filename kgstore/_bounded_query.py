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

The server (``kgstore serve``) and the QA sandbox both call :func:`run_bounded`.
"""
from __future__ import annotations

import asyncio
import functools
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Literal, Sequence

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


class QueryPool:
    """A fixed number of worker threads for queries (see the module docstring)."""

    def __init__(self, workers: int = DEFAULT_WORKERS):
        if workers < 1:
            raise ValueError("a query pool needs at least one worker")
        self.workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgstore-query")

    def submit(self, fn, *args) -> Future:
        return self._executor.submit(fn, *args)

    def shutdown(self) -> None:
        """Stop taking queries; running ones finish in the background."""
        self._executor.shutdown(wait=False, cancel_futures=True)


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
    job = _Job(store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool)
    try:
        return job.future.result(timeout=job.remaining())
    except FutureTimeout:
        raise job.abandon() from None


async def run_bounded_async(store, sparql: str, *, timeout_s: float, max_rows: int,
                            default_graph: Sequence[str] | None = None, named_graphs: Sequence[str] | None = None,
                            pool: QueryPool | None = None) -> BoundedResult:
    """:func:`run_bounded` for an event loop: the loop waits without holding a thread."""
    job = _Job(store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(job.future), job.remaining())
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        error = job.abandon()  # the limit passed, or the client went away: stop the worker either way
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise error from None


class _Job:
    """One query handed to a pool, with its deadline and the flag that stops its worker."""

    def __init__(self, store, sparql, timeout_s, max_rows, default_graph, named_graphs, pool):
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if max_rows < 0:
            raise ValueError("max_rows must be zero or more")
        self.timeout_s = timeout_s
        started = time.monotonic()
        self.deadline = started + timeout_s
        self.cancelled = threading.Event()
        self.future = (pool or default_pool()).submit(_evaluate, store, sparql, max_rows, default_graph,
                                                      named_graphs, self.cancelled, started)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def abandon(self) -> QueryTimeoutError:
        self.cancelled.set()
        self.future.cancel()  # still queued: never starts
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
        # pyoxigraph's result iterators must be dropped on the thread that made them: the
        # traceback would carry them to the thread that reads the error, so it goes.
        error = exc.with_traceback(None)
        del result
        if isinstance(error, OSError):
            raise QueryError(f"SPARQL query failed: {error}") from None
        raise error from None
    del result
    return BoundedResult(**kept, seconds=time.monotonic() - started)


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


__all__ = ["run_bounded", "run_bounded_async", "BoundedResult", "QueryPool", "default_pool", "DEFAULT_WORKERS"]

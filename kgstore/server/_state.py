"""What one server holds: the store snapshot it serves, the query pool, and the index and
model it loads once.

The snapshot is the store opened read-only when the server started (or at the last
``POST /reload``): a reader sees the data as it was when it opened, so `kgstore ingest`
can write meanwhile and the server picks the new data up on reload. With several worker
processes (``ServeOptions.workers``) they share a :class:`Generation` counter: a reload
in one bumps it, and each other worker opens the store again on its next request.

Two read-only handles share a snapshot because the DuckDB catalog must not be used from
two threads at once: ``lookup`` serves SPARQL (pyoxigraph, any number of threads) and,
one request at a time, /search, /link, /entity and /stats; ``qa`` serves /ask, one
question at a time, on the one model.
"""
from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._bounded_query import QueryPool
from .._store import Store
from ._ask_queue import AskQueue
from ._update_route import ReadGate


@dataclass
class ServeOptions:
    """Settings of one server. ``timeout_s``/``max_rows`` of None take ``[sparql]`` from
    the store's kgstore.toml."""

    host: str = "127.0.0.1"
    port: int = 7878
    token: str | None = None  # when set, every request but /health needs "Authorization: Bearer TOKEN"
    cors_origins: tuple[str, ...] = ()
    timeout_s: float | None = None
    max_rows: int | None = None
    max_body_bytes: int = 1_000_000
    query_workers: int = 4  # threads that run SPARQL; runaway queries occupy at most these
    workers: int = 1  # processes answering on the port (`serve` only; see kgstore.server._run)
    http: str = "uvicorn"  # the HTTP server `serve` runs: uvicorn, or granian (one process)
    # more stores /ask answers from, beside the one served (qa.multistore: an answer reads
    # them all and marks each fact with its store); SPARQL and the lookups serve the first
    ask_stores: tuple[str, ...] = ()


@dataclass
class Snapshot:
    lookup: Store
    qa: Store | None = None
    index: Any = None  # indexer.Index over ``lookup``, opened on first /search or /link
    methods: dict = field(default_factory=dict)  # (name, options) -> QA method over ``qa``
    others: list = field(default_factory=list)  # the ask_stores, opened on the first /ask
    generation: int = 0


class Generation:
    """The snapshot generation the worker processes of one server share: a number in
    shared memory, made before the workers start (they inherit it)."""

    def __init__(self):
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # what uvicorn starts its workers with
        self._value = context.RawValue("q", 0)  # read without a lock: one aligned 64-bit word
        self._lock = context.Lock()

    @property
    def value(self) -> int:
        return self._value.value

    def bump(self) -> int:
        with self._lock:
            self._value.value += 1
            return self._value.value


class ServerState:
    def __init__(self, path: str | os.PathLike, options: ServeOptions, *, llm=None,
                 generation: Generation | None = None):
        self.path = Path(path)
        self.options = options
        self.pool = QueryPool(options.query_workers)
        self._generation = generation
        self._snapshot = Snapshot(lookup=Store.open(self.path, read_only=True),
                                  generation=generation.value if generation else 0)
        self.ask_paths = [Path(p) for p in options.ask_stores]
        for path in self.ask_paths:  # a path that is no store fails at start, not on the first /ask
            Store.open(path, read_only=True).close()
        config = self._snapshot.lookup.config.sparql
        self.timeout_s = options.timeout_s if options.timeout_s is not None else config.timeout_s
        self.max_rows = options.max_rows if options.max_rows is not None else config.max_rows
        self.lookup_lock = threading.Lock()  # one catalog user at a time on ``lookup``
        self.ask_queue = AskQueue()  # /ask requests wait here for the one model
        self._llm = llm
        self._llm_lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self.gate = ReadGate()  # readers of the catalog pause while POST /update runs
        self.update_lock = asyncio.Lock()  # one update at a time
        self._encoder = None
        self._encoder_lock = threading.Lock()

    # -- the snapshot ------------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        """The snapshot to serve a request from (another worker's reload opens a new one here)."""
        snapshot = self._snapshot
        if self._generation is not None and self._generation.value != snapshot.generation:
            return self._follow()
        return snapshot

    def reload(self) -> Snapshot:
        """Open the store again (new data written since) and serve that from now on, in
        every worker. Requests already running finish on the snapshot they started with."""
        with self._reload_lock:
            generation = self._generation.bump() if self._generation else self._snapshot.generation + 1
            self._snapshot = Snapshot(lookup=Store.open(self.path, read_only=True), generation=generation)
            return self._snapshot

    def _follow(self) -> Snapshot:
        """Catch up with a reload made by another worker."""
        with self._reload_lock:
            generation = self._generation.value
            if self._snapshot.generation != generation:
                self._snapshot = Snapshot(lookup=Store.open(self.path, read_only=True), generation=generation)
            return self._snapshot

    def index(self, snapshot: Snapshot):
        """The semantic index of ``snapshot`` (call under ``lookup_lock``)."""
        if snapshot.index is None:
            snapshot.index = self._open_index(snapshot.lookup)
        return snapshot.index

    def _open_index(self, store: Store):
        """An Index over ``store`` using the server's one encoder (its model loads once)."""
        from indexer import Encoder, Index

        with self._encoder_lock:
            if self._encoder is None:
                self._encoder = Encoder.from_config(store.config.index, base=self.path)
        return Index.open(store, encoder=self._encoder)

    # -- QA ----------------------------------------------------------------------------------
    def llm(self):
        """The store's configured model, loaded on the first /ask (or the injected one)."""
        with self._llm_lock:
            if self._llm is None:
                from qa import llm_from_config

                self._llm = llm_from_config(self.snapshot.lookup.config.llm)
            return self._llm

    @property
    def store_names(self) -> list[str]:
        """The names /ask marks facts with when it reads several stores."""
        from qa.multistore import store_names

        return store_names([self.path, *self.ask_paths])

    def method(self, snapshot: Snapshot, name: str, options: dict):
        """The QA method ``name`` with ``options`` on ``snapshot`` (call on your ``ask_queue``
        turn); over the served store and the ``ask_stores`` when there are any."""
        from qa import QAContext, method_class
        from qa.multistore import StoreSource, method_over

        key = (name, tuple(sorted((k, repr(v)) for k, v in options.items())))
        if key not in snapshot.methods:
            if snapshot.qa is None:
                snapshot.qa = Store.open(self.path, read_only=True)
                snapshot.others = [Store.open(path, read_only=True) for path in self.ask_paths]
            sources = []
            for store_name, store in zip(self.store_names, [snapshot.qa, *snapshot.others]):
                context = QAContext(store=store, llm=self.llm())
                if method_class(name).index_kinds or snapshot.others:  # share the server's loaded encoder
                    context.index = self._open_index(store)
                sources.append(StoreSource(store_name, context))
            snapshot.methods[key] = method_over(sources, name, options)  # UnknownOptionError: 400
        return snapshot.methods[key]

    def close(self) -> None:
        self.pool.shutdown()


class BadRequest(Exception):
    """A request the server answers with 400 and this message."""

"""What one server holds: the store snapshot it serves, the query pool, and the index and
model it loads once.

The snapshot is the store opened read-only when the server started (or at the last
``POST /reload``): a reader sees the data as it was when it opened, so `kgstore ingest`
can write meanwhile and the server picks the new data up on reload.

Two read-only handles share a snapshot because the DuckDB catalog must not be used from
two threads at once: ``lookup`` serves SPARQL (pyoxigraph, any number of threads) and,
one request at a time, /search, /link, /entity and /stats; ``qa`` serves /ask, one
question at a time, on the one model.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._bounded_query import QueryPool
from .._store import Store
from ._ask_queue import AskQueue


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


@dataclass
class Snapshot:
    lookup: Store
    qa: Store | None = None
    index: Any = None  # indexer.Index over ``lookup``, opened on first /search or /link
    methods: dict = field(default_factory=dict)  # (name, options) -> QA method over ``qa``
    generation: int = 0


class ServerState:
    def __init__(self, path: str | os.PathLike, options: ServeOptions, *, llm=None):
        self.path = Path(path)
        self.options = options
        self.pool = QueryPool(options.query_workers)
        self.snapshot = Snapshot(lookup=Store.open(self.path, read_only=True))
        config = self.snapshot.lookup.config.sparql
        self.timeout_s = options.timeout_s if options.timeout_s is not None else config.timeout_s
        self.max_rows = options.max_rows if options.max_rows is not None else config.max_rows
        self.lookup_lock = threading.Lock()  # one catalog user at a time on ``lookup``
        self.ask_queue = AskQueue()  # /ask requests wait here for the one model
        self._llm = llm
        self._llm_lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._encoder = None
        self._encoder_lock = threading.Lock()

    # -- the snapshot ------------------------------------------------------------------------
    def reload(self) -> Snapshot:
        """Open the store again (new data written since) and serve that from now on.
        Requests already running finish on the snapshot they started with."""
        with self._reload_lock:
            old = self.snapshot
            fresh = Snapshot(lookup=Store.open(self.path, read_only=True), generation=old.generation + 1)
            self.snapshot = fresh
            return fresh

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

    def method(self, snapshot: Snapshot, name: str, options: dict):
        """The QA method ``name`` with ``options`` on ``snapshot`` (call on your ``ask_queue`` turn)."""
        from qa import QAContext, make_method, method_class

        key = (name, tuple(sorted((k, repr(v)) for k, v in options.items())))
        if key not in snapshot.methods:
            if snapshot.qa is None:
                snapshot.qa = Store.open(self.path, read_only=True)
            context = QAContext(store=snapshot.qa, llm=self.llm())
            if method_class(name).index_kinds:  # share the server's loaded encoder
                context.index = self._open_index(snapshot.qa)
            snapshot.methods[key] = make_method(name, context, **options)  # UnknownOptionError: 400
        return snapshot.methods[key]

    def close(self) -> None:
        self.pool.shutdown()


class BadRequest(Exception):
    """A request the server answers with 400 and this message."""

"""What both retrievers query: one store, in ``ask`` mode (a QA method answers the query
and its evidence facts come back) or ``search`` mode (the semantic index's nearest
entries). The model and the index load on first use and are kept."""
from __future__ import annotations

import os
from typing import Any

from .._store import Store
from ..errors import VectorIndexError
from ._facts import FactRecord, evidence_records, search_records

MODES = ("ask", "search")


class KgstoreSource:
    """``store``: a path (opened read-only here, closed by :meth:`close`) or an open
    :class:`kgstore.Store` (left open). ``k``: the most records a query returns. ``method``:
    the QA method of ask mode (default: the one `kgstore ask` uses), with ``options``;
    ``llm`` replaces the store's configured model (a ``qa.ScriptedLLM`` in tests).
    ``kind``: the index search mode reads (``triples`` or ``entities``, ...)."""

    def __init__(self, store: str | os.PathLike | Store, *, mode: str = "ask", k: int = 10,
                 method: str | None = None, kind: str = "triples", llm: Any = None,
                 options: dict[str, Any] | None = None):
        from indexer import KINDS
        from qa.methods import DEFAULT_METHOD

        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
        if kind not in KINDS:
            raise VectorIndexError(f"unknown index kind {kind!r}; choose from: {', '.join(KINDS)}")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self._owned = not isinstance(store, Store)
        self.store = Store.open(store, read_only=True) if self._owned else store
        self.mode, self.k, self.kind = mode, k, kind
        self.method_name = method or DEFAULT_METHOD
        self.options = dict(options or {})
        self._llm = llm
        self._method = None
        self._index = None

    def records(self, query: str) -> list[FactRecord]:
        """The records for ``query``: its answer's evidence facts (ask) or its nearest
        entries (search), at most ``k``. A refused answer without evidence gives none."""
        if self.mode == "search":
            return search_records(self.index().search(self.kind, query, self.k), self.store.config.prefixes)
        return evidence_records(self.answer(query), self.store.config.prefixes)[:self.k]

    def answer(self, question: str):
        """The ``qa.Answer`` of ``question`` (what ask mode's records come from)."""
        return self.method().answer(question)

    def method(self):
        if self._method is None:
            from qa import QAContext, llm_from_config, make_method

            llm = self._llm if self._llm is not None else llm_from_config(self.store.config.llm)
            self._method = make_method(self.method_name, QAContext(store=self.store, llm=llm, index=self._index),
                                       **self.options)
        return self._method

    def index(self):
        if self._index is None:
            from indexer import Index

            self._index = Index.open(self.store)
        return self._index

    def close(self) -> None:
        """Close the store when it was opened here from a path."""
        if self._owned:
            self.store.close()

"""What both retrievers query: one store or several, in ``ask`` mode (a QA method answers
the query; its evidence facts come back, or an open answer's paragraph as one record) or
``search`` mode (the semantic index's nearest entries; from several stores, the nearest of
all, each marked with its store). The model and the indexes load on first use and are kept."""
from __future__ import annotations

import os
from typing import Any, Sequence

from .._store import Store
from ..errors import VectorIndexError
from ._facts import FactRecord, evidence_records, open_answer_record, search_records

MODES = ("ask", "search")

StoreRef = str | os.PathLike | Store


class KgstoreSource:
    """``store``: a path (opened read-only here, closed by :meth:`close`) or an open
    :class:`kgstore.Store` (left open), or a list of them: several stores answer as one
    (``qa.multistore``), each record marked with the store it came from, a store named
    after its directory. ``k``: the most records a query returns. ``method``: the QA method
    of ask mode (default: the one `kgstore ask` uses), with ``options``; ``llm`` replaces
    the first store's configured model (a ``qa.ScriptedLLM`` in tests). ``kind``: the index
    search mode reads (``triples`` or ``entities``, ...)."""

    def __init__(self, store: StoreRef | Sequence[StoreRef], *, mode: str = "ask", k: int = 10,
                 method: str | None = None, kind: str = "triples", llm: Any = None,
                 options: dict[str, Any] | None = None):
        from indexer import KINDS
        from qa.methods import DEFAULT_METHOD
        from qa.multistore import store_names

        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
        if kind not in KINDS:
            raise VectorIndexError(f"unknown index kind {kind!r}; choose from: {', '.join(KINDS)}")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        refs = list(store) if isinstance(store, (list, tuple)) else [store]
        if not refs:
            raise ValueError("give a store, or a list of stores")
        self._owned: list[Store] = []
        self.stores: list[Store] = []
        try:
            for ref in refs:
                if isinstance(ref, Store):
                    self.stores.append(ref)
                else:
                    self.stores.append(Store.open(ref, read_only=True))  # StoreNotFoundError for a wrong path
                    self._owned.append(self.stores[-1])
        except BaseException:
            self.close()
            raise
        self.store = self.stores[0]
        self.names = store_names([s.path for s in self.stores])
        self.mode, self.k, self.kind = mode, k, kind
        self.method_name = method or DEFAULT_METHOD
        self.options = dict(options or {})
        self._llm = llm
        self._method = None
        self._indexes: list[Any] = [None] * len(self.stores)

    @property
    def several(self) -> bool:
        return len(self.stores) > 1

    def records(self, query: str) -> list[FactRecord]:
        """The records for ``query``: its answer's evidence facts, or an open answer's
        paragraph (ask), or its nearest entries (search), at most ``k``. A refused answer
        without evidence gives none."""
        if self.mode == "search":
            found = []
            for i, (store, name) in enumerate(zip(self.stores, self.names)):
                found += search_records(self.index(i).search(self.kind, query, self.k), store.config.prefixes,
                                        store=name if self.several else None)
            return sorted(found, key=lambda r: -(r.score or 0.0))[:self.k] if self.several else found
        answer = self.answer(query)
        if answer.text is not None:
            return [open_answer_record(answer)]
        return evidence_records(answer, self.store.config.prefixes)[:self.k]

    def answer(self, question: str):
        """The ``qa.Answer`` of ``question`` (what ask mode's records come from)."""
        return self.method().answer(question)

    def method(self):
        if self._method is None:
            from qa import QAContext, llm_from_config
            from qa.multistore import StoreSource, method_over

            llm = self._llm if self._llm is not None else llm_from_config(self.store.config.llm)
            sources = [StoreSource(name, QAContext(store=store, llm=llm, index=self._indexes[i]))
                       for i, (store, name) in enumerate(zip(self.stores, self.names))]
            self._method = method_over(sources, self.method_name, self.options)
        return self._method

    def index(self, i: int = 0):
        if self._indexes[i] is None:
            from indexer import Index

            self._indexes[i] = Index.open(self.stores[i])
        return self._indexes[i]

    def close(self) -> None:
        """Close the stores that were opened here from paths."""
        for store in self._owned:
            store.close()
        self._owned = []

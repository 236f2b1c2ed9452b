"""A LangChain retriever over a kgstore store (needs ``pip install 'kgstore[langchain]'``).

    from kgstore.integrations.langchain import KgstoreRetriever

    retriever = KgstoreRetriever("./mystore")                      # ask mode: the evidence facts
    docs = retriever.invoke("Which countries does the Andes cover?")
    docs[0].page_content        # 'Andes | country | Ecuador'
    docs[0].metadata            # subject/relation/object ids and labels, score, query, answers, refused

    KgstoreRetriever("./mystore", mode="search", k=5).invoke("mountains in Nepal")   # the triple index

    doc, = KgstoreRetriever("./mystore").invoke("Tell me about Douglas Adams")   # an open answer
    doc.page_content            # the paragraph, with its citations [1][2]
    doc.metadata["facts"]       # the facts cited: number, relation, values, store triples

    KgstoreRetriever(["./wikidata", "./freebase"])   # several stores: records marked with their store
"""
from __future__ import annotations

import os
from typing import Any, Literal

from ._extras import missing_extra

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ModuleNotFoundError as exc:
    raise missing_extra(exc, __name__, "langchain") from exc
from pydantic import PrivateAttr

from .._store import Store
from ._source import KgstoreSource


class KgstoreRetriever(BaseRetriever):
    """Documents from a kgstore store, or several. ``mode="ask"`` (default): a QA method
    answers the query and the facts its answer rests on come back, one Document each (none
    when it refuses for want of facts); an open question ("Tell me about X") comes back as
    one Document, the paragraph, its facts in the metadata; ``mode="search"``: the ``k`` nearest entries of the
    ``kind`` index (``triples`` by default). ``store`` is a path (opened read-only;
    :meth:`close` closes it) or an open :class:`kgstore.Store`. See
    :class:`kgstore.integrations.KgstoreSource` for ``method``, ``options`` and ``llm``."""

    store: Any
    mode: Literal["ask", "search"] = "ask"
    k: int = 10
    method: str | None = None
    kind: str = "triples"
    options: dict[str, Any] = {}
    llm: Any = None
    _source: KgstoreSource = PrivateAttr()

    def __init__(self, store: str | os.PathLike | Store | list, **options: Any):
        super().__init__(store=store, **options)
        self._source = KgstoreSource(self.store, mode=self.mode, k=self.k, method=self.method, kind=self.kind,
                                     llm=self.llm, options=self.options)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [Document(page_content=r.text, metadata=r.metadata, id=r.key) for r in self._source.records(query)]

    def close(self) -> None:
        """Close the store when it was opened from a path."""
        self._source.close()


__all__ = ["KgstoreRetriever"]

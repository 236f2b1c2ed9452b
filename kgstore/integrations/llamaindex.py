"""A LlamaIndex retriever over a kgstore store (needs ``pip install 'kgstore[llamaindex]'``).

    from kgstore.integrations.llamaindex import KgstoreRetriever

    retriever = KgstoreRetriever("./mystore")                      # ask mode: the evidence facts
    nodes = retriever.retrieve("Which countries does the Andes cover?")
    nodes[0].node.text          # 'Andes | country | Ecuador'
    nodes[0].node.metadata      # subject/relation/object ids and labels, score, query, answers, refused

    KgstoreRetriever("./mystore", mode="search", k=5).retrieve("mountains in Nepal")  # the triple index

An open question ("Tell me about X") gives one node: the paragraph, its facts in the
metadata (``nodes[0].node.metadata["facts"]``). A list of stores answers from all of them,
each record marked with its store: ``KgstoreRetriever(["./wikidata", "./freebase"])``.

It also plugs into a query engine: ``RetrieverQueryEngine.from_args(retriever, llm=...)``.
"""
from __future__ import annotations

import os
from typing import Any

from ._extras import missing_extra

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ModuleNotFoundError as exc:
    raise missing_extra(exc, __name__, "llamaindex") from exc

from .._store import Store
from ._source import KgstoreSource


class KgstoreRetriever(BaseRetriever):
    """Nodes from a kgstore store: ``NodeWithScore`` of a ``TextNode`` per fact or hit, the
    same records as the LangChain retriever (:mod:`kgstore.integrations.langchain`).
    ``mode="ask"`` (default) or ``"search"``; the options are
    :class:`kgstore.integrations.KgstoreSource`'s. A node's metadata stays out of the text
    a model or an encoder reads: the fact's text already says it."""

    def __init__(self, store: str | os.PathLike | Store | list, *, mode: str = "ask", k: int = 10,
                 method: str | None = None, kind: str = "triples", llm: Any = None,
                 options: dict[str, Any] | None = None, callback_manager=None):
        self._source = KgstoreSource(store, mode=mode, k=k, method=method, kind=kind, llm=llm, options=options)
        super().__init__(callback_manager=callback_manager)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for r in self._source.records(query_bundle.query_str):
            node = TextNode(id_=r.key, text=r.text, metadata=r.metadata,
                            excluded_llm_metadata_keys=list(r.metadata), excluded_embed_metadata_keys=list(r.metadata))
            nodes.append(NodeWithScore(node=node, score=r.score))
        return nodes

    def close(self) -> None:
        """Close the store when it was opened from a path."""
        self._source.close()


__all__ = ["KgstoreRetriever"]

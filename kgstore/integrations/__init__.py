"""Retrievers that put a kgstore store into RAG frameworks, one module per framework,
each imported only when used (its framework is an optional extra):

* :mod:`kgstore.integrations.langchain`: ``KgstoreRetriever``, a LangChain
  ``BaseRetriever`` returning ``Document``s (``pip install 'kgstore[langchain]'``);
* :mod:`kgstore.integrations.llamaindex`: ``KgstoreRetriever``, a LlamaIndex
  ``BaseRetriever`` returning ``NodeWithScore``s (``pip install 'kgstore[llamaindex]'``).

Both ask the store through :class:`KgstoreSource` (``_source``: ask mode, the evidence
facts of an answer; search mode, the semantic index's hits) and build their items from
the same :class:`FactRecord`s (``_facts``), so their text and metadata agree.
"""
from ._facts import FactRecord, evidence_records, search_records
from ._source import MODES, KgstoreSource

__all__ = ["FactRecord", "KgstoreSource", "MODES", "evidence_records", "search_records"]

"""kgstore: a local knowledge-graph store with an embedded semantic index.

Public API::

    from kgstore import Store, ingest, LoadOptions
    with Store.init("./mystore") as store:
        ingest(store, "wikidata-json", "latest-all.json.bz2")
        for row in store.query("SELECT ?x WHERE { wd:Q42 wdt:P69 ?x }"):
            ...
"""
from ._ingest import IngestProgress, IngestSummary, fingerprint, ingest
from ._malloc import limit_malloc_arenas
from ._catalog import CatalogWait
from ._update import UpdateSummary, delete_entities, update
from ._registry import LOADERS, loader_for
from ._prefixed_names import escape_prefixed_dots
from ._store import Edge, EntityView, Fact, Store
from ._query_guard import keywords as query_keywords, refused_operation, too_deeply_nested
from ._literal_text import date_text, literal_text
from ._bounded_query import (BoundedResult, QueryPool, WrittenResult, run_bounded, run_bounded_async, write_bounded,
                             write_bounded_async)
from .config import (EndpointCapabilities, EndpointConfig, GraphConfig, IndexConfig, LLMConfig, SparqlConfig,
                     StoreConfig)
from ._triples import OxigraphTriples, TripleAccess
from .errors import (CatalogBusyError, CypherSyntaxError, DiskFullError, EndpointAuthError, EndpointError, EndpointMismatchError,
                     EndpointQueryError,
                     EndpointTimeoutError, EndpointUnreachableError, EncoderMismatchError, ExportError, GraphError, GraphNotSyncedError, IngestError,
                     InternalError, KgstoreError, LLMUnavailableError,
                     MalformedRecordError, OptionValueError, QAError, QueryError, QueryRefusedError, QuerySyntaxError, QueryTimeoutError,
                     ReadOnlyError, SchemaVersionError, SparqlSyntaxError,
                     StoreClosedError, StoreError, StoreLockedError, StoreNotFoundError, TooManyErrorsError,
                     TruncatedInputError, UnknownFormatError, UnsafeQueryError, VectorExtensionMissingError,
                     VectorIndexError, VectorServerUnreachableError,
                     FormatMismatchError)
from .records import Batch, Checkpoint, EntityRecord, LoadOptions, RejectedLine, RelationRecord, Triple

__version__ = "0.1.0"

# A store over a SPARQL endpoint: imported on first use (httpx is not needed before).
_LAZY = {"sync": "._sync", "SyncSummary": "._sync", "SyncProgress": "._sync", "EndpointTriples": "._endpoint",
         "sync_from_dump": "._sync_dump", "DumpSyncSummary": "._sync_dump"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kgstore' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)


__all__ = [
    "Store", "EntityView", "Fact", "Edge", "ingest", "IngestSummary", "IngestProgress", "fingerprint",
    "update", "UpdateSummary", "delete_entities", "CatalogWait",
    "limit_malloc_arenas",
    "LOADERS", "loader_for", "refused_operation", "too_deeply_nested", "query_keywords", "escape_prefixed_dots", "date_text",
    "literal_text", "run_bounded",
    "run_bounded_async", "write_bounded", "write_bounded_async", "BoundedResult", "WrittenResult", "QueryPool",
    "StoreConfig", "SparqlConfig", "GraphConfig", "IndexConfig",
    "LLMConfig",
    "Batch", "Checkpoint", "EntityRecord", "RelationRecord", "RejectedLine", "LoadOptions", "Triple",
    "KgstoreError", "InternalError", "StoreError", "DiskFullError", "StoreLockedError", "CatalogBusyError", "StoreClosedError", "StoreNotFoundError",
    "SchemaVersionError", "ReadOnlyError", "QueryError", "QueryRefusedError", "QueryTimeoutError", "IngestError",
    "UnknownFormatError", "FormatMismatchError",
    "MalformedRecordError", "TooManyErrorsError", "TruncatedInputError", "GraphError", "VectorIndexError",
    "VectorServerUnreachableError", "VectorExtensionMissingError", "ExportError",
    "EncoderMismatchError", "QAError", "OptionValueError", "LLMUnavailableError", "UnsafeQueryError", "__version__",
    "GraphNotSyncedError", "CypherSyntaxError", "QuerySyntaxError", "SparqlSyntaxError",
    "TripleAccess", "OxigraphTriples", "EndpointTriples", "EndpointConfig", "EndpointCapabilities",
    "sync", "SyncSummary", "SyncProgress", "EndpointError", "EndpointUnreachableError", "EndpointAuthError",
    "EndpointQueryError", "EndpointTimeoutError", "sync_from_dump", "DumpSyncSummary", "EndpointMismatchError",
]

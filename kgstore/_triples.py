"""Where a store's triples live: one interface, :class:`TripleAccess`, with two
implementations, chosen by the store's config when it opens (:func:`open_triples`):

* :class:`OxigraphTriples`: the embedded Oxigraph store in the store's directory (the
  default; read-write);
* :class:`kgstore._endpoint.EndpointTriples`: a SPARQL endpoint over HTTP (Virtuoso,
  Oxigraph server, QLever...), set by ``kgstore init --endpoint``; read-only, always.

Both answer queries with pyoxigraph's own result objects (``QuerySolutions``,
``QueryBoolean``, ``QueryTriples``) holding pyoxigraph terms, so that everything that reads
query results (the CLI, the server, the QA sandbox and methods) works on either unchanged.
The checks every query gets whatever its engine (SERVICE and updates refused) are made by
:meth:`kgstore.Store.query` before it reaches one of these.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pyoxigraph as ox

from ._triple_access import QueryResult, TripleAccess
from .config import StoreConfig
from .errors import QueryError, StoreError, StoreLockedError

OXIGRAPH_DIR = "oxigraph"

class OxigraphTriples:
    """The embedded Oxigraph store in ``store_dir/oxigraph`` (today's behaviour)."""

    def __init__(self, store_dir: Path, *, read_only: bool):
        ox_dir = str(Path(store_dir) / OXIGRAPH_DIR)
        self.location = ox_dir
        self.writable = not read_only
        try:
            self.rdf = ox.Store.read_only(ox_dir) if read_only else ox.Store(ox_dir)
        except OSError as exc:
            if "lock" in str(exc).lower():
                raise StoreLockedError(store_dir) from exc
            raise StoreError(f"cannot open the triple store in {ox_dir}: {exc}") from exc

    def query(self, sparql: str, *, prefixes: dict[str, str], default_graph: Sequence[str] | None = None,
              named_graphs: Sequence[str] | None = None) -> QueryResult:
        from ._prefixed_names import escape_prefixed_dots

        try:
            return self.rdf.query(escape_prefixed_dots(sparql), prefixes=prefixes,
                                  default_graph=_graphs(default_graph), named_graphs=_graphs(named_graphs))
        except ValueError as exc:  # a graph IRI that is not an IRI
            raise QueryError(f"invalid graph IRI: {exc}") from exc
        except SyntaxError as exc:
            raise QueryError(f"SPARQL syntax error: {exc}") from exc
        except OSError as exc:
            raise QueryError(f"SPARQL query failed: {exc}") from exc

    def count(self) -> int:
        return len(self.rdf)

    def load_ntriples(self, data: bytes) -> None:
        self.rdf.bulk_load(data, ox.RdfFormat.N_TRIPLES)

    def update(self, sparql: str, *, prefixes: dict[str, str]) -> None:
        declared = "".join(f"PREFIX {k}: <{v}>\n" for k, v in prefixes.items())
        try:
            self.rdf.update(declared + sparql)
        except SyntaxError as exc:
            raise QueryError(f"SPARQL syntax error: {exc}") from exc

    def close(self) -> None:
        if self.writable:
            try:
                self.rdf.flush()
            except OSError:
                pass
        del self.rdf


def open_triples(store_dir: Path, config: StoreConfig, *, read_only: bool) -> TripleAccess:
    """The triples of the store in ``store_dir``: its endpoint when ``[endpoint] url`` is
    set, else its embedded Oxigraph store."""
    if config.endpoint.url:
        from ._endpoint import EndpointTriples

        return EndpointTriples.from_config(store_dir, config)
    return OxigraphTriples(store_dir, read_only=read_only)


def _graphs(iris: Sequence[str] | None) -> list[ox.NamedNode] | None:
    return None if iris is None else [ox.NamedNode(iri) for iri in iris]


__all__ = ["TripleAccess", "OxigraphTriples", "open_triples", "QueryResult", "OXIGRAPH_DIR"]

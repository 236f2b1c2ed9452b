"""The interface a store needs from the place its triples live (:class:`TripleAccess`) and
the results a query gives (:data:`QueryResult`): one home for what the embedded Oxigraph
store (:mod:`kgstore._triples`) and a SPARQL endpoint (:mod:`kgstore._endpoint`) both
implement, so neither imports the other."""
from __future__ import annotations

from typing import Protocol, Sequence

import pyoxigraph as ox

QueryResult = ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples


class TripleAccess(Protocol):
    """What a store needs from the place its triples live."""

    #: Where the triples are, for messages: a directory or an endpoint URL.
    location: str
    #: True when :meth:`load_ntriples` and :meth:`update` can write.
    writable: bool

    def query(self, sparql: str, *, prefixes: dict[str, str], default_graph: Sequence[str] | None = None,
              named_graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a read query (already checked by the store) with ``prefixes`` predeclared."""

    def count(self) -> int:
        """How many triples (quads) the store reads."""

    def load_ntriples(self, data: bytes) -> None:
        """Add N-Triples text (bulk, repeat-safe)."""

    def update(self, sparql: str, *, prefixes: dict[str, str]) -> None:
        """Run a SPARQL update."""

    def close(self) -> None:
        """Flush what was written and let go of files or connections."""


__all__ = ["QueryResult", "TripleAccess"]

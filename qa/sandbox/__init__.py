"""Sandboxes for query text a model wrote. Nothing a model writes reaches a store unchecked.

* :mod:`qa.sandbox.cypher`: Cypher ``CREATE`` statements run in an isolated in-memory
  graph (``cypherast``) and decoded into pseudo-triples.
* :mod:`qa.sandbox.sparql`: SPARQL parsed by pyoxigraph, allowed only as ``SELECT``/``ASK``
  without ``SERVICE``/``LOAD``/updates, then run on the store read-only with a LIMIT, a
  row cap and a time limit.

Both raise :class:`~kgstore.errors.QuerySyntaxError` (line, column) for text that does not
parse and :class:`~kgstore.errors.UnsafeQueryError` for text that tries something not allowed.
"""
from .cypher import PseudoEdge, PseudoGraph, PseudoNode, PseudoTriple, clean_cypher, run_pseudo_graph
from .sparql import CheckedQuery, SparqlRows, check_sparql, run_sparql

__all__ = ["run_pseudo_graph", "clean_cypher", "PseudoGraph", "PseudoNode", "PseudoEdge", "PseudoTriple",
           "check_sparql", "run_sparql", "CheckedQuery", "SparqlRows"]

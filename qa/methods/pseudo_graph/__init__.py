"""pseudo-graph: the method and its own parts.

* ``_method``: :class:`PseudoGraphMethod`, the method step by step.
* ``_chain``: multi-hop pseudo-graphs, which pseudo-triples to look up first and which
  store entities a looked-up hop leads to.
* ``_pruning``: retrieved triples pruned into the ground graph.

The steps it shares with other methods are in :mod:`qa.steps`.
"""
from ._method import PseudoGraphMethod

__all__ = ["PseudoGraphMethod"]

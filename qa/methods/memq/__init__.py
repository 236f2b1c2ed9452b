"""memq, memory-augmented query reconstruction: the method and its own parts.

* ``_method``: :class:`MemQMethod`, the method step by step, and the rules that rebuild
  SPARQL from a plan.
* ``_plan``: plans in words, the numbered steps the model writes, parsed.

The steps it shares with other methods are in :mod:`qa.steps`.
"""
from ._method import MemQMethod

__all__ = ["MemQMethod"]

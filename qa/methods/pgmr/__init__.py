"""pgmr, post-generation memory retrieval: the method and its own parts.

* ``_method``: :class:`PGMRMethod`, the method step by step.
* ``_placeholders``: SPARQL with ``[ENT: name]`` and ``[REL: words]`` placeholders, parsed
  and rendered with resolutions.

The steps it shares with other methods are in :mod:`qa.steps`.
"""
from ._method import DEFAULT_THRESHOLD, PGMRMethod

__all__ = ["PGMRMethod", "DEFAULT_THRESHOLD"]

"""prograg, progressive retrieval and reasoning: the method and its own parts.

* ``_method``: :class:`ProgRAGMethod`, the method step by step.
* ``_decomposition``: the question decomposed into chains of sub-questions.
* ``_progressive``: one hop of progressive retrieval, and the lettered options the model
  picks by.
* ``_reasoning_paths``: reasoning paths from a topic entity, their prefixes, and packing
  them into a token budget.
* ``_graph_scores``: personalized PageRank over the explored neighbourhood, and the nucleus
  cut.
* ``_uncertainty``: how unsure the model was of a choice, from the logits of its first token.

The steps it shares with other methods are in :mod:`qa.steps`.
"""
from ._method import ProgRAGMethod

__all__ = ["ProgRAGMethod"]

"""queryagent, the query agent: the method and its own parts.

* ``_method``: :class:`QueryAgentMethod`, the loop of actions step by step.
* ``_state``: the agent's state and actions, and the SPARQL the state stands for.
* ``_grammar``: the grammar of one step, generated from the state as it is now.
* ``_checks``: the deterministic checks on each action before it touches the store.
* ``_tools``: the toolbox, each action applied to the state, with the checks that need
  the store.

The steps it shares with other methods are in :mod:`qa.steps`.
"""
from ._method import QueryAgentMethod

__all__ = ["QueryAgentMethod"]

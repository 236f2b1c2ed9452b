"""The steps two or more QA methods share, one module a step. A part that only one method
uses lives in that method's package under :mod:`qa.methods` instead.

* ``_retrieval``: linking and retrieval, the one place qa reads the semantic index and the
  catalog (triple search, entities by name, statement memories, the URI memory, labels).
* ``_resolution``: names the model wrote resolved to store IRIs, with scores (pgmr, memq,
  queryagent).
* ``_examples``: in-context examples read from the store's own paths (pgmr, memq,
  queryagent, prograg).
* ``_paths``: the relation paths the store has from one entity, up to three hops.
* ``_path_grounding``: a drafted chain grounded in those paths (pgmr, memq, queryagent).
* ``_sparql_build``: SPARQL built from resolved pieces, run in the sandbox, answers and
  evidence read from its rows.
* ``_retry``: the generate, check, retry-with-the-error loop (pgmr, memq, pseudo-graph).
* ``_graph_text``: triples as prompt text and back.
* ``_gbnf``: grammars generated in code, as GBNF and as the equivalent regex (queryagent,
  and :mod:`qa.llm` for forced openings).
* ``_grounding``: answer text tied to store terms; the one notion of "the same name"
  (:mod:`qa.eval` scores with it too).
* ``_answering``: the answer step every method ends with, and refusal.
* ``_result``: the records every method returns (``Answer``, ``Evidence``, ``Refusal``,
  ``TokenUsage``; exported by :mod:`qa`).

Internal to qa: the methods import the step modules themselves; nothing is exported here.
"""

__all__: list[str] = []

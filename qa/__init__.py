"""Question answering over a kgstore store: the LLM layer, QA methods by name, grounding
of answers in store facts, and the evaluation harness.

    from kgstore import Store
    from qa import QAContext, make_method, llm_from_config

    with Store.open("./mystore", read_only=True) as store:
        method = make_method("pseudo-graph", QAContext(store, llm_from_config(store.config.llm)))
        result = method.answer("Who covers more countries, the Andes or the Himalayas?")
        result.answers, result.answer_iris, result.evidence, result.refused

Every method returns the same :class:`Answer` record; ``qa.eval`` scores any of them.

Where each step lives:

* ``methods/``: the methods by name (``__init__``: the registry, ``make_method``) and what
  every method is (``_base``: the context, the per-question run, the base class). A method
  with parts of its own is a package, ``_method`` the method and the rest its own parts:

  - ``pgmr/``: ``_placeholders`` (SPARQL with ``[ENT]``/``[REL]`` placeholders)
  - ``memq/``: ``_plan`` (plans in words)
  - ``prograg/``: ``_decomposition``, ``_progressive``, ``_reasoning_paths``,
    ``_graph_scores``, ``_uncertainty``
  - ``queryagent/``: ``_state``, ``_grammar``, ``_checks``, ``_tools``
  - ``pseudo_graph/``: ``_chain``, ``_pruning``
  - ``cascade.py`` and ``baselines.py`` (io, qsm) have none.

* ``shapes/``: questions other than chains, around a method's chains: the shape read
  from the question (``_detect``), the entities it names and the namesake meant
  (``_mentions``), entities' facts by relation (``_attributes``), yes/no (``_boolean``),
  comparisons and superlatives (``_order``) and counts (``_count``). The methods that
  build queries (pgmr, memq, queryagent) and the cascade answer through it.
* ``steps/``: what two or more methods share, one module a step: linking and retrieval
  (``_retrieval``), resolution of names to IRIs (``_resolution``), in-context examples
  (``_examples``), relation paths (``_paths``) and grounding a drafted chain in them
  (``_path_grounding``), SPARQL building (``_sparql_build``), the retry loop (``_retry``),
  triples as prompt text (``_graph_text``), grammars in code (``_gbnf``), grounding
  answers in store terms (``_grounding``), answering and refusal (``_answering``),
  literal values as people read them (``_values``), and the result records (``_result``).
* ``llm/``: the model backends, the packaged model and the completion cache.
* ``prompts/``: the prompt and grammar files, by name.
* ``sandbox/``: the Cypher and SPARQL sandboxes that text a model wrote runs in.
* ``eval/``: benchmark readers, scores, reports and sweeps.

A module only one method uses lives in that method's package; a module two or more use
is a step.
"""
from .llm import LLM, Completion, ScriptedLLM, llm_from_config
from .methods import METHODS, MethodRun, QAContext, QAMethod, make_method, method_class, method_names
from .steps._grounding import iris_missing_from_store, marked_answers, normalise_label
from .steps._result import Answer, Evidence, Refusal, TokenUsage
from .steps._values import LiteralValue, literal_value
from .shapes import QuestionShape, detect_shape

__all__ = [
    "Answer", "Evidence", "Refusal", "TokenUsage", "LiteralValue", "literal_value", "QuestionShape", "detect_shape",
    "LLM", "Completion", "ScriptedLLM", "llm_from_config",
    "METHODS", "MethodRun", "QAContext", "QAMethod", "make_method", "method_class", "method_names",
    "iris_missing_from_store", "marked_answers", "normalise_label",
]

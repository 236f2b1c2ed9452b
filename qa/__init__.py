"""Question answering over a kgstore store: the LLM layer, QA methods by name, grounding
of answers in store facts, and the evaluation harness.

    from kgstore import Store
    from qa import QAContext, make_method, llm_from_config

    with Store.open("./mystore", read_only=True) as store:
        method = make_method("pseudo-graph", QAContext(store, llm_from_config(store.config.llm)))
        result = method.answer("Who covers more countries, the Andes or the Himalayas?")
        result.answers, result.answer_iris, result.evidence, result.refused

Every method returns the same :class:`Answer` record; ``qa.eval`` scores any of them.
"""
from ._grounding import iris_missing_from_store, marked_answers, normalise_label
from ._result import Answer, Evidence, Refusal, TokenUsage
from .llm import LLM, Completion, ScriptedLLM, llm_from_config
from .methods import METHODS, MethodRun, QAContext, QAMethod, make_method, method_class, method_names

__all__ = [
    "Answer", "Evidence", "Refusal", "TokenUsage",
    "LLM", "Completion", "ScriptedLLM", "llm_from_config",
    "METHODS", "MethodRun", "QAContext", "QAMethod", "make_method", "method_class", "method_names",
    "iris_missing_from_store", "marked_answers", "normalise_label",
]

"""QA methods by name. The registry is lazy: naming a method imports only its module.

Adding a method: write a :class:`QAMethod` subclass and add one line to ``METHODS``.
"""
from __future__ import annotations

import importlib

from kgstore.errors import UnknownMethodError

from ._base import MethodRun, QAContext, QAMethod

METHODS: dict[str, tuple[str, str]] = {
    # name: (module:class, one line for --help)
    "io": ("qa.methods.baselines:IOMethod", "baseline: the LLM answers alone, from its own knowledge"),
    "qsm": ("qa.methods.baselines:QSMMethod",
            "baseline: the question is matched against the triple index; the LLM answers from the top triples"),
    "pseudo-graph": ("qa.methods.pseudo_graph:PseudoGraphMethod",
                     "pseudo-graph Cypher, semantic query, pruning, atomic verification, grounded answer"),
}


def method_names() -> list[str]:
    return list(METHODS)


def method_class(name: str) -> type[QAMethod]:
    entry = METHODS.get(name)
    if entry is None:
        raise UnknownMethodError(name, list(METHODS))
    module_name, _, attr = entry[0].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def make_method(name: str, context: QAContext, **params) -> QAMethod:
    """An instance of method ``name``; ``params`` are the method's own keyword options."""
    return method_class(name)(context, **params)


__all__ = ["METHODS", "MethodRun", "QAContext", "QAMethod", "make_method",
           "method_class", "method_names"]

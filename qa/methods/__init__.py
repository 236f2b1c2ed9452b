"""QA methods by name. The registry is lazy: naming a method imports only its module (or
its package, for a method with parts of its own).

Adding a method: write a :class:`QAMethod` subclass and add one line to ``METHODS``. Its
own parts go in a package beside it (``pgmr/``: ``__init__`` exports the class,
``_method`` holds it); steps it shares with other methods go in :mod:`qa.steps`.
"""
from __future__ import annotations

import importlib
import inspect

from kgstore.errors import UnknownMethodError, UnknownOptionError

from ._base import MethodRun, QAContext, QAMethod

METHODS: dict[str, tuple[str, str]] = {
    # name: (module:class, one line for --help)
    "io": ("qa.methods.baselines:IOMethod", "baseline: the LLM answers alone, from its own knowledge"),
    "qsm": ("qa.methods.baselines:QSMMethod",
            "baseline: the question is matched against the triple index; the LLM answers from the top triples"),
    "pseudo-graph": ("qa.methods.pseudo_graph:PseudoGraphMethod",
                     "pseudo-graph Cypher, semantic query, pruning, atomic verification, grounded answer"),
    "pgmr": ("qa.methods.pgmr:PGMRMethod",
             "SPARQL with placeholders, resolved in the URI memory, executed (post-generation memory retrieval)"),
    "memq": ("qa.methods.memq:MemQMethod",
             "a plan in words, each step recalled from the statement memories, rebuilt into SPARQL, executed"),
    "prograg": ("qa.methods.prograg:ProgRAGMethod",
                "progressive retrieval: sub-question chains, per-hop relation and fact choice, uncertainty gate"),
    "queryagent": ("qa.methods.queryagent:QueryAgentMethod",
                   "the model builds the query one action at a time over a toolbox; checks correct it selectively"),
    "cascade": ("qa.methods.cascade:CascadeMethod",
                "pgmr first; pseudo-graph when pgmr finds no query that returns rows"),
}


# What `kgstore ask` (and the server's /ask) run when no method is named: the best measured
# (README, "Scoring methods"). pgmr answers most sets best; where it finds no query that
# returns rows, pseudo-graph still reads the facts, and a name the store lacks stays refused.
DEFAULT_METHOD = "cascade"


def method_names() -> list[str]:
    return list(METHODS)


def method_class(name: str) -> type[QAMethod]:
    entry = METHODS.get(name)
    if entry is None:
        raise UnknownMethodError(name, list(METHODS))
    module_name, _, attr = entry[0].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def method_options(name: str) -> dict[str, object]:
    """The options method ``name`` takes (``-o KEY=VALUE``), with their defaults."""
    signature = inspect.signature(method_class(name).__init__)
    return {p.name: p.default for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY}


def methods_help() -> str:
    """One line per method for ``--help``, from the registry."""
    return "; ".join(f"{name} ({line})" for name, (_, line) in METHODS.items())


def make_method(name: str, context: QAContext, **params) -> QAMethod:
    """An instance of method ``name``; ``params`` are the method's own keyword options.
    An option it does not take raises :class:`~kgstore.errors.UnknownOptionError`
    listing the ones it does."""
    known = method_options(name)
    unknown = [k for k in params if k not in known]
    if unknown:
        raise UnknownOptionError(name, unknown, known)
    return method_class(name)(context, **params)


__all__ = ["METHODS", "DEFAULT_METHOD", "MethodRun", "QAContext", "QAMethod", "make_method", "method_class", "method_names",
           "method_options", "methods_help"]

"""Several stores answering as one: what `kgstore ask STORE1 STORE2 ... QUESTION`, `serve`,
`mcp` and the retrievers call with more than one store. It answers like a
:class:`~qa.QAMethod` (``answer(question)`` gives an :class:`~qa.Answer`), with every
fact, evidence triple and answer marked with its store:

* an open question (``qa.open.read_open``): one paragraph from the union of the stores'
  verified facts about the entity (``_open``);
* a precise question: the named method on each store, the answers merged (``_precise``).
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Sequence

from kgstore.errors import LLMUnavailableError, QAError

from ..methods import MethodRun, make_method
from ..open import METHOD as OPEN_METHOD, read_open
from ..steps._result import Answer, Refusal
from ._open import open_answer_over
from ._precise import merge_answers
from ._sources import StoreSource


class SeveralStores:
    """Method ``name`` (with ``options``) over ``sources``, in their order: the first store
    that holds an open question's subject leads, and precise answers list the stores'
    answers in this order."""

    def __init__(self, sources: Sequence[StoreSource], name: str, options: dict[str, Any] | None = None):
        if len(sources) < 2:
            raise ValueError("SeveralStores reads two stores or more; one store takes make_method")
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise ValueError(f"two stores share a name: {names}")
        self.sources = list(sources)
        self.name = name
        # each store's own method, made now so that a bad option fails before any question
        self.methods = [make_method(name, s.context, **dict(options or {})) for s in sources]

    @property
    def store_names(self) -> list[str]:
        return [s.name for s in self.sources]

    def answer(self, question: str, *, allow_parametric: bool = False) -> Answer:
        """The answer to ``question`` from every store, each fact marked with its store."""
        reading = read_open(question)
        if reading is None:
            return self._precise(question, allow_parametric)
        started = time.perf_counter()
        run = MethodRun(self.sources[0].context.llm)
        try:
            with contextlib.ExitStack() as pinned:
                for source in self.sources:  # one catalog connection a store for the question's lookups
                    pinned.enter_context(source.store.reading())
                result = open_answer_over(self.sources, question, reading, run)
        except LLMUnavailableError:
            raise
        except QAError as exc:
            run.record("error", type=type(exc).__name__, message=str(exc))
            result = Answer(question=question, method=OPEN_METHOD, refusal=Refusal("error", f"{type(exc).__name__}: {exc}"))
        result.seconds = time.perf_counter() - started
        result.tokens = run.tokens
        result.trace = run.trace
        return result

    def _precise(self, question: str, allow_parametric: bool) -> Answer:
        """Each store's method in turn; the model's own answer (``allow_parametric``) only on
        the last store, and only when no store answered from its facts."""
        started = time.perf_counter()
        answered = []
        for i, (source, method) in enumerate(zip(self.sources, self.methods)):
            last = i == len(self.sources) - 1
            parametric = allow_parametric and last and all(a.refused for _, a in answered)
            answered.append((source, method.answer(question, allow_parametric=parametric)))
        result = merge_answers(question, self.name, answered)
        result.seconds = time.perf_counter() - started
        return result


def method_over(sources: Sequence[StoreSource], name: str, options: dict[str, Any] | None = None):
    """What answers from ``sources``: method ``name`` itself over one store (its answers
    exactly as before, unmarked), :class:`SeveralStores` over more."""
    if len(sources) == 1:
        return make_method(name, sources[0].context, **dict(options or {}))
    return SeveralStores(sources, name, options)

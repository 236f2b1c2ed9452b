"""Greedy decoding under a grammar, asking the grammar only when the model's own choice breaks it.

llama-cpp-python samples through llama.cpp's chain: logits processors, then the grammar,
which tests every one of the vocabulary's 151,936 tokens against the grammar's stacks at
every step, then greedy. At temperature 0 only the best allowed token matters, and the
model's best token is allowed at almost every step of a constrained answer (it has read
the format in the prompt). So the best token is tested alone and the whole vocabulary
only when it fails: llama.cpp's own `common_sampler` does the same ("grammar_first" off).

The tokens are the chain's: the grammar only ever sets a logit to -inf, so the best
allowed token is the best token whenever that one is allowed, and greedy's tie rule
(the first of equal logits) is numpy's argmax's. Sampling with a temperature, or with
penalties that depend on history, keeps llama-cpp-python's own chain.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import numpy as np

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


def use_grammar_last_greedy(llama_cpp, llm) -> bool:
    """Route ``llm``'s greedy, grammar-constrained generations through :class:`GrammarLastGreedy`.

    Returns False (and changes nothing) when this llama-cpp-python lacks the hooks used."""
    stock = getattr(llm, "_init_sampler", None)
    if stock is None or not all(hasattr(llama_cpp, name) for name in (
            "llama_get_logits_ith", "llama_sampler_init_grammar", "llama_sampler_apply",
            "llama_sampler_accept", "llama_sampler_free", "llama_token_data", "llama_token_data_array")):
        return False

    def init_sampler(**options):
        grammar = options.get("grammar")
        if (grammar is None or options.get("temp") != 0 or options.get("repeat_penalty", 1.0) != 1.0
                or options.get("frequency_penalty", 0.0) or options.get("presence_penalty", 0.0)):
            return stock(**options)
        return GrammarLastGreedy(llama_cpp, llm, grammar, options.get("logits_processor") or [])

    llm._init_sampler = init_sampler
    return True


class GrammarLastGreedy:
    """One generation's sampler: what llama-cpp-python's ``Llama.sample`` calls as ``sample(ctx, idx)``."""

    def __init__(self, llama_cpp, llm, grammar, processors: Sequence[Callable[[Any, np.ndarray], Any]]):
        self._lib = llama_cpp
        self._llm = llm
        self._processors = list(processors)
        self._n_vocab = llm.n_vocab()
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self._grammar:
            raise ValueError("llama.cpp could not build the grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._everything: np.ndarray | None = None
        self.full_checks = 0  # steps where the model's best token broke the grammar
        self.steps = 0

    def sample(self, ctx, idx: int = -1) -> int:
        pointer = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,)).copy()
        for processor in self._processors:
            logits[:] = processor(self._llm._input_ids, logits)
        token = int(np.argmax(logits))
        if not self._allowed(token, logits[token]):
            token = self._best_allowed(logits)
            self.full_checks += 1
        self.steps += 1
        self._lib.llama_sampler_accept(self._grammar, token)
        return token

    def _allowed(self, token: int, logit: float) -> bool:
        self._one[0].id, self._one[0].logit, self._one[0].p = token, logit, 0.0
        self._apply(ctypes.cast(self._one, ctypes.POINTER(self._lib.llama_token_data)), 1)
        return self._one[0].logit != -np.inf

    def _best_allowed(self, logits: np.ndarray) -> int:
        if self._everything is None:  # the grammar only masks logits: ids and p stay as set here
            self._everything = np.zeros(self._n_vocab, dtype=_TOKEN_DATA)
            self._everything["id"] = np.arange(self._n_vocab, dtype=np.int32)
        everything = self._everything
        everything["logit"] = logits
        self._apply(everything.ctypes.data_as(ctypes.POINTER(self._lib.llama_token_data)), self._n_vocab)
        return int(everything["id"][int(np.argmax(everything["logit"]))])

    def _apply(self, data, size: int) -> None:
        candidates = self._lib.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(candidates))

    def close(self) -> None:
        if self._grammar:
            self._lib.llama_sampler_free(self._grammar)
            self._grammar = None

    def __del__(self):
        self.close()

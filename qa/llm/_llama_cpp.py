"""The embedded backend: llama.cpp through llama-cpp-python, loading one GGUF per process."""
from __future__ import annotations

import ctypes
import json
import os
import re
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from kgstore.errors import LLMRequestError, LLMUnavailableError

from ._base import LLM, Completion, TokenLogprobs
from ._forced_opening import split_forced_opening
from ._grammar_sampling import use_grammar_last_greedy

# Loaded models, keyed by everything that changes what Llama() builds. Loading takes
# seconds and ~1 GB, so every LlamaCppLLM in a process shares one.
_MODELS: dict[tuple, Any] = {}
_LOAD_LOCK = threading.Lock()
GOMP_SPINCOUNT = "1000"


def _import_llama_cpp():
    # OpenMP workers that wait by sleeping cost a quiet machine 0.6x its tokens/s; spinning
    # ones steal the cores of a busy one (0.6x there). A short spin before sleeping keeps
    # both (bench/omp_wait_policy.py). Read once, when libgomp loads; a user's setting stands.
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", GOMP_SPINCOUNT)
    try:
        import llama_cpp
    except ImportError as exc:
        raise LLMUnavailableError(
            "llama-cpp-python is not installed; `pip install 'kgstore[llm]'` builds it from source "
            "(6-12 minutes on 2 cores), or set [llm] backend = \"openai\" to use a local server",
            transient=False) from exc
    return llama_cpp


class LlamaCppLLM(LLM):
    """A GGUF model run in-process. The chat template comes from the GGUF's metadata."""

    name = "llama-cpp"

    def __init__(self, model_path: str | os.PathLike, *, n_ctx: int = 4096, n_threads: int = 0, seed: int = 0):
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise LLMUnavailableError(f"no model file at {self.model_path}", transient=False)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.seed = seed
        self._lock = threading.Lock()  # one generation at a time per model

    @property
    def model(self):
        key = (str(self.model_path.resolve()), self.n_ctx, self.n_threads, self.seed)
        with _LOAD_LOCK:
            llm = _MODELS.get(key)
            if llm is None:
                llama_cpp = _import_llama_cpp()
                try:
                    llm = llama_cpp.Llama(
                        model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                        n_threads_batch=self.n_threads, seed=self.seed, verbose=False)
                except (ValueError, RuntimeError) as exc:
                    raise LLMUnavailableError(f"llama.cpp could not load {self.model_path}: {exc}",
                                              transient=False) from exc
                llm.save_state = _state_saver(llama_cpp, llm)
                llm.set_cache(llama_cpp.LlamaRAMCache(capacity_bytes=PREFIX_CACHE_BYTES))
                use_grammar_last_greedy(llama_cpp, llm)
                _MODELS[key] = llm
        return llm

    def _complete(self, messages, *, schema, grammar, max_tokens, temperature, logprobs, stop,
                  stop_repeated_lines) -> Completion:
        llm = self.model
        kwargs: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature, "stop": stop or None,
                                  "seed": self.seed}
        opening = ""
        if schema is not None:
            kwargs["grammar"] = _json_schema_grammar(json.dumps(schema, sort_keys=True))
        elif grammar is not None:
            # The recorder's steps must be the output's tokens, so with logprobs the opening is generated.
            split = split_forced_opening(grammar, keep=lambda text: _all_but_last_token(llm, text)) \
                if not logprobs else None
            if split is not None:
                opening, grammar = split
            kwargs["grammar"] = _gbnf_grammar(grammar)
        recorder = _LogprobRecorder(logprobs) if logprobs else None
        processors = [p for p in (recorder, _RepetitionStop(llm) if stop_repeated_lines else None) if p]
        if processors:
            kwargs["logits_processor"] = processors
        with self._lock:
            started = time.perf_counter()
            try:
                if opening:
                    response = _continue_after(llm, messages, opening, kwargs)
                else:
                    response = llm.create_chat_completion(messages=messages, **kwargs)
            except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
                raise LLMRequestError(f"llama.cpp rejected the request: {exc}") from exc
            seconds = time.perf_counter() - started
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=opening + (choice["message"]["content"] or ""),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=seconds,
            # The recorder also saw the step that chose end-of-generation, which is not a token of the text.
            top_logprobs=recorder.steps(llm)[:int(usage.get("completion_tokens", 0))] if recorder else None,
            finish_reason=choice.get("finish_reason"),
        )

    def describe(self):
        return {"name": self.model_path.name, "backend": "llama-cpp", "n_ctx": self.n_ctx,
                "n_threads": self.n_threads, "seed": self.seed}


PREFIX_CACHE_BYTES = 512 << 20


# Reading in a few tokens saves under a second and gives the model a prompt boundary it
# did not have; pgmr's "SELECT" (1 token) and pseudo-graph's Cypher fence (5) stay generated.
MIN_OPENING_TOKENS = 8


def _all_but_last_token(llm, text: str) -> str:
    """``text`` without its last token (see :mod:`._forced_opening`), or "" when that
    leaves fewer than ``MIN_OPENING_TOKENS``."""
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    if len(tokens) - 1 < MIN_OPENING_TOKENS:
        return ""
    return llm.detokenize(tokens[:-1]).decode("utf-8", errors="replace")


def _continue_after(llm, messages, opening: str, kwargs: dict):
    """The chat completion of ``messages`` whose answer starts with ``opening``, read in as
    prompt after the chat template's assistant header (see :mod:`._forced_opening`).

    The chat handler renders the template and then calls ``llm.create_completion`` with the
    prompt's tokens; for this one call that method appends the opening's tokens first, so
    the template, its stop strings and the sampling options stay llama-cpp-python's own."""
    opening_tokens = llm.tokenize(opening.encode("utf-8"), add_bos=False, special=False)
    create_completion = llm.create_completion

    def after_opening(prompt, **options):
        return create_completion(prompt=list(prompt) + opening_tokens, **options)

    llm.create_completion = after_opening
    try:
        return llm.create_chat_completion(messages=messages, **kwargs)
    finally:
        del llm.create_completion


def _state_saver(llama_cpp, llm):
    """``llm.save_state`` without the logits buffer, for the RAM cache of evaluated prompts
    (each prompt file's fixed head, the system turn and few-shot examples, is then evaluated
    once per process even when prompts alternate).

    llama-cpp-python saves the whole logits buffer with each state (n_batch x vocab floats,
    ~300 MB here), and the cache saves a state after every completion: copying it cost 0.7 s
    a completion. Generation never reads those logits back without logits_all, so a state
    here holds one broadcastable row of zeros and its KV cells (~30 MB per 1k tokens)."""
    n_vocab = llm.n_vocab()

    def save_state():
        size = int(llama_cpp.llama_state_get_size(llm.ctx))
        buffer = (ctypes.c_uint8 * size)()
        n_bytes = int(llama_cpp.llama_state_get_data(llm.ctx, buffer, size))
        if n_bytes > size:
            raise LLMRequestError("llama.cpp could not copy its state")
        return llama_cpp.llama.LlamaState(
            input_ids=llm.input_ids.copy(), scores=np.zeros((1, n_vocab), dtype=np.single),
            n_tokens=llm.n_tokens, llama_state=ctypes.string_at(buffer, n_bytes),
            llama_state_size=n_bytes, seed=llm._seed)

    return save_state


@lru_cache(maxsize=32)
def _json_schema_grammar(schema_json: str):
    llama_cpp = _import_llama_cpp()
    try:
        return llama_cpp.LlamaGrammar.from_json_schema(schema_json, verbose=False)
    except Exception as exc:  # the converter raises assorted errors on schemas it cannot express
        raise LLMRequestError(f"the JSON schema cannot be turned into a grammar: {exc}") from exc


@lru_cache(maxsize=32)
def _gbnf_grammar(text: str):
    llama_cpp = _import_llama_cpp()
    try:
        return llama_cpp.LlamaGrammar.from_string(text, verbose=False)
    except Exception as exc:
        raise LLMRequestError(f"the GBNF grammar does not parse: {exc}") from exc


class _LogprobRecorder:
    """A logits processor that keeps the top-n log-probabilities (and raw logits) of every step.

    llama-cpp-python only returns logprobs from models loaded with logits_all=True, which
    costs n_ctx x vocab floats (2.5 GB here); seeing the raw logits as they pass costs nothing.
    The distribution recorded is the model's own, before grammar or sampling constraints.
    The chosen token of a step is read from the next step's input; the last step is never
    fed back, so its chosen token is taken to be the most likely one.
    """

    def __init__(self, n: int):
        self.n = n
        self._steps: list[list] = []  # [top ids, top logprobs, chosen id, chosen logprob, top raw logits]
        self._previous: np.ndarray | None = None

    def __call__(self, input_ids, scores):
        logits = np.asarray(scores, dtype=np.float64)
        shift = logits.max()
        logp = logits - (shift + np.log(np.exp(logits - shift).sum()))
        if self._previous is not None and len(input_ids):
            chosen = int(input_ids[-1])
            self._steps[-1][2:4] = [chosen, float(self._previous[chosen])]
        top = np.argpartition(logp, -self.n)[-self.n:]
        top = top[np.argsort(logp[top])[::-1]]
        self._steps.append([top, logp[top], int(top[0]), float(logp[top[0]]), logits[top]])
        self._previous = logp
        return scores

    def steps(self, llm) -> list[TokenLogprobs]:
        return [TokenLogprobs(token=_piece(llm, chosen), logprob=chosen_lp,
                              top={_piece(llm, int(i)): float(lp) for i, lp in zip(ids, lps)},
                              top_logits={_piece(llm, int(i)): float(x) for i, x in zip(ids, raw)})
                for ids, lps, chosen, chosen_lp, raw in self._steps]


class _RepetitionStop:
    """A logits processor against the loops small models fall into when copying lists.

    Once the output ends with a complete line it already holds, end-of-generation is the
    only choice; once the current line ends with the same few words three times over
    (``horror; horror; horror;``), a newline is (so a grammar that wants each line to
    end can still be satisfied)."""

    LOOP = re.compile(r"(.{3,120}?)\1{2,}$")

    def __init__(self, llm):
        self.llm = llm
        self.eos = llm.token_eos()
        self.newline = llm.tokenize(b"\n", add_bos=False, special=False)[0]
        self.prompt_len: int | None = None

    def __call__(self, input_ids, scores):
        if self.prompt_len is None:
            self.prompt_len = len(input_ids)
            return scores
        generated = input_ids[self.prompt_len:]
        if len(generated) == 0:
            return scores
        text = self.llm.detokenize(list(generated)).decode("utf-8", errors="ignore")
        if text.endswith("\n"):
            done = [ln.strip() for ln in text.split("\n") if ln.strip()]
            if len(done) > 1 and done[-1] in done[:-1]:
                return self._only(scores, self.eos)
            return scores
        if self.LOOP.search(text[text.rfind("\n") + 1:][-400:]):
            return self._only(scores, self.newline)
        return scores

    @staticmethod
    def _only(scores, token: int):
        forced = np.full_like(scores, -np.inf)
        forced[token] = 0.0
        return forced


def _piece(llm, token_id: int) -> str:
    return llm.detokenize([token_id]).decode("utf-8", errors="replace")

"""A model whose answers are remembered: the same messages and options give the same
completion without calling the model again.

At temperature 0 a local model is deterministic, so a threshold sweep, which changes
only what happens after the model has written, needs each prompt answered once whatever
the number of values swept (log-probabilities and logits included, so a gate on the
model's uncertainty sweeps as cheaply). With ``path`` the completions are kept in a JSONL file, so an
interrupted sweep resumes without asking again.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from ._base import LLM, Completion, TokenLogprobs


class CachingLLM(LLM):
    def __init__(self, inner: LLM, path: str | Path | None = None, *, reuse: bool = True):
        """``reuse=False`` only records: each call reaches the model (a run whose latency
        is measured) and its completion is kept for a later run that reuses it."""
        self.inner = inner
        self.name = inner.name
        self.path = Path(path) if path else None
        self.reuse = reuse
        self.hits = 0
        self._cache: dict[str, dict] = {}
        if self.path and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self._cache[row["key"]] = row["completion"]

    def _complete(self, messages, *, schema, grammar, max_tokens, temperature, logprobs, stop,
                  stop_repeated_lines) -> Completion:
        options = {"schema": schema, "grammar": grammar, "max_tokens": max_tokens, "temperature": temperature,
                   "logprobs": logprobs, "stop": stop, "stop_repeated_lines": stop_repeated_lines}
        # the model's own settings are part of the key: another model, another answer
        key = hashlib.sha256(json.dumps([self.inner.describe(), messages, options], sort_keys=True,
                                        default=str).encode()).hexdigest()
        cached = self._cache.get(key)
        # a call for logprobs reuses only an entry that kept them (older entries did not)
        if self.reuse and cached is not None and temperature == 0 and (
                logprobs is None or cached.get("top_logprobs") is not None):
            self.hits += 1
            return _completion(cached)
        completion = self.inner.complete(messages, schema=schema, grammar=grammar, max_tokens=max_tokens,
                                         temperature=temperature, logprobs=logprobs, stop=stop,
                                         stop_repeated_lines=stop_repeated_lines)
        stored = asdict(completion)
        self._cache[key] = stored
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"key": key, "completion": stored}, ensure_ascii=False) + "\n")
        return completion

    def describe(self):
        return {**self.inner.describe(), "cached": True}


def _completion(stored: dict) -> Completion:
    steps = stored.get("top_logprobs")
    return Completion(**{**stored, "top_logprobs": None if steps is None else [TokenLogprobs(**s) for s in steps]})

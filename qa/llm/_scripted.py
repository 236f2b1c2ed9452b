"""ScriptedLLM: a backend that replays fixed responses, for unit tests of control flow.

It is not a model: it never looks at the prompt except to record it, so tests can assert
exactly what a method sent and in which order.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

from ._base import LLM, Completion

Responder = Callable[[list[dict[str, str]]], str]


class ScriptedLLM(LLM):
    """Returns ``responses`` in order (strings, or callables given the messages, or whole
    :class:`Completion` records when a test needs log-probabilities or logits).

    Every call is kept in ``calls`` as a dict with the messages and the options used.
    Running out of responses raises AssertionError, which makes an unexpected extra call
    fail the test loudly.
    """

    name = "scripted"

    def __init__(self, responses: Sequence[str | Responder | Completion]):
        self.responses = list(responses)
        self.calls: list[dict] = []

    def _complete(self, messages, *, schema, grammar, max_tokens, temperature, logprobs, stop,
                  stop_repeated_lines) -> Completion:
        started = time.perf_counter()
        self.calls.append({"messages": messages, "schema": schema, "grammar": grammar,
                           "max_tokens": max_tokens, "temperature": temperature, "stop": stop,
                           "stop_repeated_lines": stop_repeated_lines})
        if not self.responses:
            raise AssertionError(f"ScriptedLLM ran out of responses at call {len(self.calls)}: "
                                 f"{messages[-1]['content'][:200]!r}")
        response = self.responses.pop(0)
        if isinstance(response, Completion):
            return response
        text = response(messages) if callable(response) else response
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=len(text.split()),
                          seconds=time.perf_counter() - started, finish_reason="stop")

    @property
    def prompts(self) -> list[str]:
        """The last user message of each call, in order."""
        return [c["messages"][-1]["content"] for c in self.calls]

    def describe(self):
        return {"name": self.name, "backend": "scripted"}

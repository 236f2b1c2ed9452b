"""The one small interface every LLM backend implements, and the record it returns."""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

from kgstore.errors import LLMRequestError, OptionValueError

Message = Mapping[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}
Prompt = Union[str, Sequence[Message]]


@dataclass(frozen=True)
class TokenLogprobs:
    """The chosen token and the most likely alternatives at one generation step.

    ``top`` holds their log-probabilities; ``top_logits`` the same tokens' raw logits
    (before normalisation) where the backend exposes them (llama.cpp does; an
    OpenAI-compatible server does not, and leaves it empty). Measures that are not
    shift-invariant, such as the evidential uncertainty of top-k logits, need the raw ones."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)
    top_logits: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    top_logprobs: list[TokenLogprobs] | None = None
    finish_reason: str | None = None

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0

    def json(self) -> Any:
        """The text parsed as JSON (use with a ``schema``); LLMRequestError when it is not JSON."""
        try:
            return json.loads(self.text)
        except ValueError as exc:
            raise LLMRequestError(
                f"the model's output is not valid JSON ({exc}); finish reason {self.finish_reason!r}: "
                f"{self.text[:200]!r}") from exc


CompletionResult = Completion  # the name the design notes use


def as_messages(prompt: Prompt) -> list[dict[str, str]]:
    """A plain string is one user message; message lists are copied and checked."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    messages = []
    for m in prompt:
        role, content = m.get("role"), m.get("content")
        if role not in ("system", "user", "assistant") or not isinstance(content, str):
            raise ValueError(f"a message needs role system/user/assistant and string content, got {dict(m)!r}")
        messages.append({"role": role, "content": content})
    if not messages:
        raise ValueError("the prompt has no messages")
    return messages


class LLM(ABC):
    """A chat model. ``complete`` is the only call QA methods make.

    ``schema`` (a JSON Schema dict) or ``grammar`` (GBNF text) constrain the output; at most
    one of them. ``logprobs=n`` asks for the top ``n`` alternatives at each generated token.
    ``stop_repeated_lines`` ends generation when the model repeats a line it already wrote,
    and ends the line when it repeats a ``;``-separated value within it (small models
    copying lists tend to loop); backends that cannot watch the output ignore it, so
    callers still drop repeats from the text.
    """

    name: str = "llm"

    def complete(self, prompt: Prompt, *, schema: Mapping[str, Any] | None = None, grammar: str | None = None,
                 max_tokens: int = 256, temperature: float = 0.0, logprobs: int | None = None,
                 stop: Sequence[str] | None = None, stop_repeated_lines: bool = False) -> Completion:
        if schema is not None and grammar is not None:
            raise ValueError("pass either schema or grammar, not both")
        if max_tokens < 1:
            raise OptionValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if logprobs is not None and not 0 < logprobs <= 20:
            raise ValueError(f"logprobs must be between 1 and 20, got {logprobs}")
        return self._complete(as_messages(prompt), schema=dict(schema) if schema is not None else None,
                              grammar=grammar, max_tokens=max_tokens, temperature=temperature,
                              logprobs=logprobs, stop=list(stop or ()), stop_repeated_lines=stop_repeated_lines)

    @abstractmethod
    def _complete(self, messages: list[dict[str, str]], *, schema: dict | None, grammar: str | None,
                  max_tokens: int, temperature: float, logprobs: int | None, stop: list[str],
                  stop_repeated_lines: bool) -> Completion:
        ...

    def describe(self) -> dict[str, Any]:
        """What a report should say about this model (name, backend, settings)."""
        return {"name": self.name}

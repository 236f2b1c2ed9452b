"""An OpenAI-compatible HTTP backend (Ollama, llama_cpp.server, vLLM, any /v1/chat/completions).

Only local endpoints are called unless the store's config sets ``allow_remote = true``:
questions and store facts leave the machine only when the user says so.
"""
from __future__ import annotations

import ipaddress
import os
import time
from urllib.parse import urlparse

from kgstore.errors import LLMRequestError, LLMUnavailableError

from ._base import LLM, Completion, TokenLogprobs


def is_local_url(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAICompatibleLLM(LLM):
    name = "openai"

    def __init__(self, base_url: str, *, model: str = "local", api_key: str | None = None,
                 timeout_s: float = 120.0, seed: int | None = 0, allow_remote: bool = False):
        if not urlparse(base_url).scheme in ("http", "https") or not urlparse(base_url).hostname:
            raise LLMUnavailableError(f"[llm] base_url {base_url!r} is not an http(s) URL", transient=False)
        if not allow_remote and not is_local_url(base_url):
            raise LLMUnavailableError(
                f"[llm] base_url {base_url} is not on this machine; kgstore sends questions and store facts "
                "only to local endpoints unless you set allow_remote = true in the store's kgstore.toml",
                transient=False)
        try:
            import openai
        except ImportError as exc:
            raise LLMUnavailableError("the openai client is not installed: `pip install 'kgstore[llm]'`",
                                      transient=False) from exc
        self._openai = openai
        self.base_url = base_url
        self.model = model
        self.seed = seed
        # Local servers ignore the key but the client insists on one.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s,
                                     max_retries=0)

    def _complete(self, messages, *, schema, grammar, max_tokens, temperature, logprobs, stop,
                  stop_repeated_lines) -> Completion:
        # stop_repeated_lines cannot be watched over HTTP; callers drop repeats afterwards.
        openai = self._openai
        kwargs = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                  "temperature": temperature}
        if stop:
            kwargs["stop"] = stop
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if schema is not None:
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "output", "schema": schema, "strict": True}}
        if grammar is not None:
            # llama.cpp's server reads "grammar"; vLLM reads "guided_grammar".
            kwargs["extra_body"] = {"grammar": grammar, "guided_grammar": grammar}
        if logprobs:
            kwargs.update(logprobs=True, top_logprobs=logprobs)
        started = time.perf_counter()
        try:
            response = self._client.chat.completions.create(**kwargs)
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise LLMUnavailableError(f"the LLM endpoint {self.base_url} is unreachable: {exc}") from exc
        except openai.RateLimitError as exc:
            raise LLMUnavailableError(f"the LLM endpoint {self.base_url} is busy: {exc}") from exc
        except openai.InternalServerError as exc:
            raise LLMUnavailableError(f"the LLM endpoint {self.base_url} failed: {exc}") from exc
        except openai.APIStatusError as exc:
            raise LLMRequestError(f"the LLM endpoint {self.base_url} refused the request "
                                  f"(HTTP {exc.status_code}): {exc.message}") from exc
        seconds = time.perf_counter() - started
        choice = response.choices[0]
        usage = response.usage
        steps = None
        if logprobs and choice.logprobs and choice.logprobs.content:
            steps = [TokenLogprobs(token=t.token, logprob=t.logprob,
                                   top={a.token: a.logprob for a in (t.top_logprobs or [])})
                     for t in choice.logprobs.content]
        return Completion(
            text=choice.message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            seconds=seconds, top_logprobs=steps, finish_reason=choice.finish_reason)

    def describe(self):
        return {"name": self.model, "backend": "openai", "base_url": self.base_url}


def api_key_from_env(var: str) -> str | None:
    return os.environ.get(var) if var else None

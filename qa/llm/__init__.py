"""The LLM layer: one ``complete`` interface, an embedded llama.cpp backend, an
OpenAI-compatible HTTP backend, and a scripted backend for unit tests."""
from ._cache import CachingLLM
from ._base import LLM, Completion, CompletionResult, Message, Prompt, TokenLogprobs, as_messages
from ._factory import BACKENDS, llm_from_config
from ._model_files import (PACKAGED_MODEL_NAME, PACKAGED_MODEL_SHA256, model_cache_dir, packaged_model_path,
                           verify_model_file)
from ._scripted import ScriptedLLM

__all__ = [
    "LLM", "Completion", "CompletionResult", "Message", "Prompt", "TokenLogprobs", "as_messages",
    "BACKENDS", "llm_from_config",
    "PACKAGED_MODEL_NAME", "PACKAGED_MODEL_SHA256", "model_cache_dir", "packaged_model_path", "verify_model_file",
    "ScriptedLLM", "CachingLLM",
    "LlamaCppLLM", "OpenAICompatibleLLM",
]


def __getattr__(name):
    # The backends import heavy or optional libraries; load them only when named.
    if name == "LlamaCppLLM":
        from ._llama_cpp import LlamaCppLLM

        return LlamaCppLLM
    if name == "OpenAICompatibleLLM":
        from ._openai import OpenAICompatibleLLM

        return OpenAICompatibleLLM
    raise AttributeError(name)

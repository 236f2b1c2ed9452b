"""Build the configured LLM backend from a store's ``[llm]`` config section."""
from __future__ import annotations

from typing import Callable

from kgstore.config import LLMConfig
from kgstore.errors import LLMUnavailableError

from ._base import LLM

BACKENDS = ("llama-cpp", "openai")


def llm_from_config(config: LLMConfig, *, progress: Callable[[int, int], None] | None = None) -> LLM:
    """The backend ``config.backend`` names. For llama-cpp with no ``model_path``, the
    packaged model is assembled into the cache on first use (``progress(done, total)``)."""
    if config.backend == "llama-cpp":
        from ._llama_cpp import LlamaCppLLM
        from ._model_files import packaged_model_path

        path = config.model_path or packaged_model_path(progress=progress)
        return LlamaCppLLM(path, n_ctx=config.n_ctx, n_threads=config.n_threads, seed=config.seed)
    if config.backend == "openai":
        from ._openai import OpenAICompatibleLLM, api_key_from_env

        return OpenAICompatibleLLM(config.base_url, model=config.model, api_key=api_key_from_env(config.api_key_env),
                                   timeout_s=config.timeout_s, seed=config.seed,
                                   allow_remote=getattr(config, "allow_remote", False))
    raise LLMUnavailableError(f"[llm] backend {config.backend!r} is unknown; choose one of: {', '.join(BACKENDS)}",
                              transient=False)

"""The server's one model: loaded on the first ``ask`` (not at start, so an agent that
only queries never waits for it), and telling whoever listens about each call it takes,
so that a long answer can report its progress."""
from __future__ import annotations

import threading
from typing import Callable

from qa.llm import LLM


class WarmModel(LLM):
    """Stands for the model ``load()`` returns: loads it once, on first use, then passes
    every completion to it and tells ``listener`` (when set) the number of the call."""

    def __init__(self, load: Callable[[], LLM]):
        self._load = load
        self._model: LLM | None = None
        self._lock = threading.Lock()
        self.calls = 0
        self.listener: Callable[[int], None] | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._model.name if self._model is not None else "llm"

    def model(self) -> LLM:
        """The model, loaded here on the first call (seconds for the packaged one)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _complete(self, messages, **options):
        self.calls += 1
        if self.listener is not None:
            self.listener(self.calls)
        return self.model()._complete(messages, **options)

    def describe(self):
        return self.model().describe()

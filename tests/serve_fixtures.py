"""A real uvicorn server on 127.0.0.1 (a free port) in a background thread, started and
stopped by the fixtures of the server tests."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from kgstore.server import MAX_CONNECTIONS, ServeOptions, create_app  # noqa: E402


class LiveServer:
    def __init__(self, store_path, options: ServeOptions | None = None, *, llm=None):
        self.app = create_app(store_path, options or ServeOptions(), llm=llm)
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning",
                                limit_concurrency=MAX_CONNECTIONS, timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="live-server", daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    @property
    def state(self):
        return self.app.state.kg

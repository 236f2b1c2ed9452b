"""Running the server (what `kgstore mcp` calls): over stdio for a client that spawns it
(Claude Desktop, Cursor, the SDK's ``stdio_client``), or over streamable HTTP."""
from __future__ import annotations

import os
from typing import Callable

from ._server import McpOptions, StoreServer

HTTP_PATH = "/mcp"


def serve_stdio(store_path: str | os.PathLike, options: McpOptions | None = None, *, llm=None) -> None:
    """Serve the store over stdin/stdout until the client closes them."""
    import anyio

    store_server = StoreServer(store_path, options, llm=llm)
    try:
        anyio.run(store_server.server.run_stdio_async)
    finally:
        store_server.close()


def serve_http(store_path: str | os.PathLike, options: McpOptions | None = None, *, host: str = "127.0.0.1",
               port: int = 7879, token: str | None = None, llm=None,
               announce: Callable[[str], None] | None = None) -> None:
    """Serve the store over streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted.
    With ``token``, every request needs ``Authorization: Bearer TOKEN`` (401 otherwise).
    On loopback the SDK also refuses requests whose Host or Origin header is not local
    (DNS rebinding)."""
    import uvicorn

    from ._auth import BearerToken

    options = options or McpOptions()
    store_server = StoreServer(store_path, options, llm=llm)
    try:
        app = store_server.server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
        if token:
            app = BearerToken(app, token)
        if announce:
            announce(f"Serving {store_path} read-only over MCP (streamable HTTP) at http://{host}:{port}{HTTP_PATH}"
                     f"{' (token required)' if token else ''}; Ctrl-C stops.")
        uvicorn.run(app, host=host, port=port, log_level=options.log_level.lower(), timeout_graceful_shutdown=5)
    finally:
        store_server.close()

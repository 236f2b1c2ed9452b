"""Running the app on uvicorn (what `kgstore serve` calls)."""
from __future__ import annotations

import os
from typing import Callable

from ._app import create_app
from ._state import ServeOptions

# Connections served at once; past it uvicorn answers 503 instead of queueing without end.
MAX_CONNECTIONS = 64


def serve(store_path: str | os.PathLike, options: ServeOptions | None = None, *, log_level: str = "info",
          announce: Callable[[str], None] | None = None) -> None:
    """Serve the store at ``store_path`` until interrupted (Ctrl-C). ``announce`` gets a
    line saying where, once the store is open."""
    import uvicorn

    options = options or ServeOptions()
    app = create_app(store_path, options)
    if announce:
        announce(f"Serving {store_path} read-only at http://{options.host}:{options.port}/ "
                 "(the page at /, SPARQL at /sparql); Ctrl-C stops.")
    uvicorn.run(app, host=options.host, port=options.port, log_level=log_level,
                limit_concurrency=MAX_CONNECTIONS, timeout_graceful_shutdown=5)

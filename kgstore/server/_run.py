"""Running the app on uvicorn (what `kgstore serve` calls)."""
from __future__ import annotations

import functools
import os
from typing import Callable

from .._store import Store
from ._app import create_app
from ._state import Generation, ServeOptions

# Connections served at once (per worker); past it uvicorn answers 503 instead of queueing without end.
MAX_CONNECTIONS = 64


def serve(store_path: str | os.PathLike, options: ServeOptions | None = None, *, log_level: str = "info",
          announce: Callable[[str], None] | None = None) -> None:
    """Serve the store at ``store_path`` until interrupted (Ctrl-C). ``announce`` gets a
    line saying where, once the store is open.

    With ``options.workers`` above 1, that many processes answer on the one port, each
    with its own event loop, query pool and snapshot (a reload reaches them all, see
    ``_state``): SPARQL is served on as many cores. Each also loads its own model on its
    first /ask, and /ask/queue shows the queue of the worker that answers it."""
    import uvicorn

    options = options or ServeOptions()
    settings = dict(host=options.host, port=options.port, log_level=log_level, limit_concurrency=MAX_CONNECTIONS,
                    timeout_graceful_shutdown=5,
                    access_log=log_level in ("info", "debug", "trace"))  # no line to write: skip composing it
    where = (f"Serving {store_path} read-only at http://{options.host}:{options.port}/ "
             "(the page at /, SPARQL at /sparql)")
    if options.workers <= 1:
        app = create_app(store_path, options)
        if announce:
            announce(f"{where}; Ctrl-C stops.")
        uvicorn.run(app, **settings)
        return
    from uvicorn.supervisors import Multiprocess

    with Store.open(store_path, read_only=True):  # a missing or broken store fails here, once
        pass
    factory = functools.partial(create_app, store_path, options, generation=Generation())
    config = uvicorn.Config(factory, factory=True, workers=options.workers, **settings)
    if announce:
        announce(f"{where}, {options.workers} worker processes; Ctrl-C stops.")
    Multiprocess(config, sockets=[config.bind_socket()]).run()

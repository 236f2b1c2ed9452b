"""Running the app on uvicorn, or on granian (`--http granian`): what `kgstore serve` calls."""
from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict
from typing import Callable

from .._store import Store
from ..errors import KgstoreError
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
    if options.http == "granian":
        _serve_on_granian(store_path, options, log_level=log_level, announce=announce)
        return
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


def _serve_on_granian(store_path, options: ServeOptions, *, log_level: str,
                      announce: Callable[[str], None] | None) -> None:
    """The same app on granian, whose HTTP runs in Rust threads beside the event loop. One
    worker process: a second would not see /reload's generation (uvicorn's workers inherit
    it; granian's import the app anew)."""
    try:
        from granian.constants import Interfaces
        from granian.server import Server
    except ModuleNotFoundError as exc:
        raise KgstoreError("`kgstore serve --http granian` needs granian: pip install granian "
                           "(or serve with the default --http uvicorn)") from exc
    if options.workers > 1:
        raise KgstoreError("--http granian serves with one process; leave --workers at 1, or use "
                           "--http uvicorn for several")
    with Store.open(store_path, read_only=True):  # a missing or broken store fails here, once
        pass
    os.environ[_GRANIAN_APP_ENV] = json.dumps({"store": os.fspath(store_path), "options": asdict(options)})
    server = Server("kgstore.server._run:granian_app", address=options.host, port=options.port,
                    interface=Interfaces.ASGI, workers=1, factory=True, websockets=False,
                    backpressure=MAX_CONNECTIONS, log_level=log_level,  # the CLI's choices are granian's too
                    log_access=log_level in ("info", "debug"))
    if announce:
        announce(f"Serving {store_path} read-only at http://{options.host}:{options.port}/ (the page at /, "
                 "SPARQL at /sparql) on granian; Ctrl-C stops.")
    server.serve()


_GRANIAN_APP_ENV = "KGSTORE_GRANIAN_APP"


def granian_app():
    """The app for granian's worker process, from what ``_serve_on_granian`` left in its
    environment (granian imports its app by name)."""
    spec = json.loads(os.environ[_GRANIAN_APP_ENV])
    options = spec["options"]
    options["cors_origins"] = tuple(options["cors_origins"])
    options["ask_stores"] = tuple(options.get("ask_stores", ()))
    return create_app(spec["store"], ServeOptions(**options))

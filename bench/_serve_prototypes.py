"""Prototype servers for bench/serve_levers.py: each answers GET /sparql (1-hop lookups)
and /health another way, so that one lever at a time can be measured against `kgstore
serve`. They are measuring instruments, not product code: no token, no body limit, no
time limit where the query runs inline (see the notes by each).

Each is an import target for granian (``pip install granian``), with the store in the
environment variable ``KG_STORE``:

* ``asgi_app``: kgstore's own Starlette app, unchanged (the HTTP server is the lever);
* ``asgi_fast_app``: /sparql answered by a bare ASGI function in front of Starlette, the
  query still handed to the query pool (Starlette's routing and request objects are the
  lever);
* ``asgi_inline_app``: the same, the query run on the event loop (the pool hop is the
  lever; a slow query would stall every request, so the time limit could not hold);
* ``rsgi_app``: granian's own interface, the query inline on the loop (the ASGI bridge is
  the lever; the same stall);
* ``wsgi_app``: granian's WSGI threads, the query run in the thread that holds the request
  (no loop, no hop: a slow query holds only its own thread).
"""
from __future__ import annotations

import os
import threading
from urllib.parse import parse_qs

from kgstore import write_bounded_async
from kgstore._bounded_query import _write  # the pool's own work function, called inline
from kgstore.server import create_app
from kgstore.server._protocol import choose_format

_HEALTH = b'{"status":"ok"}'
asgi_app = create_app(os.environ["KG_STORE"])
_state = asgi_app.state.kg
_never = threading.Event()  # inline runs are never abandoned


def _inline(query: str, accept: str | None):
    snapshot = _state.snapshot
    return _write(snapshot.lookup, query, _state.max_rows, None, None, _never, 0.0,
                  lambda kind: choose_format(accept, kind), snapshot.lookup.config.prefixes)


async def _pooled(query: str, accept: str | None):
    snapshot = _state.snapshot
    return await write_bounded_async(snapshot.lookup, query, lambda kind: choose_format(accept, kind),
                                     timeout_s=_state.timeout_s, max_rows=_state.max_rows,
                                     prefixes=snapshot.lookup.config.prefixes, pool=_state.pool)


def _asgi_front(inline: bool):
    async def app(scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/sparql" or scope["method"] != "GET":
            return await asgi_app(scope, receive, send)
        accept = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"accept"), None)
        query = parse_qs(scope["query_string"].decode("latin-1"))["query"][0]
        written = _inline(query, accept) if inline else await _pooled(query, accept)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", written.format.media_type.encode()),
                                (b"content-length", str(len(written.body)).encode()), (b"vary", b"Accept")]})
        await send({"type": "http.response.body", "body": written.body})
    return app


asgi_fast_app = _asgi_front(inline=False)
asgi_inline_app = _asgi_front(inline=True)


async def rsgi_app(scope, proto):
    if scope.path == "/health":
        proto.response_bytes(200, [("content-type", "application/json")], _HEALTH)
        return
    written = _inline(parse_qs(scope.query_string)["query"][0], scope.headers.get("accept"))
    proto.response_bytes(200, [("content-type", written.format.media_type), ("vary", "Accept")], written.body)


def wsgi_app(environ, start_response):
    if environ["PATH_INFO"] == "/health":
        start_response("200 OK", [("content-type", "application/json")])
        return [_HEALTH]
    written = _inline(parse_qs(environ["QUERY_STRING"])["query"][0], environ.get("HTTP_ACCEPT"))
    start_response("200 OK", [("content-type", written.format.media_type), ("vary", "Accept")])
    return [written.body]

"""SPARQL lookups answered where they arrive: one home for the rule, and the app's front
door, which answers GET lookups before Starlette's middleware, routing and request objects.

A one-pattern lookup on the embedded store (:func:`kgstore._lookup_query.is_bounded_lookup`)
runs in the event loop, its work stopped by the small-result write budget
(:func:`kgstore._bounded_query.write_inline`): handing it to the query pool and back cost
more than the lookup itself, and each ASGI layer it passed through cost about as much
again. Everything else, and any lookup that is refused, errs, outgrows the budget, carries
a body, comes from a browser of another origin or lacks the token, goes on to the app,
whose /sparql route answers it and its errors.
"""
from __future__ import annotations

import hmac
from urllib.parse import parse_qs

from .._bounded_query import WrittenResult, write_inline
from .._lookup_query import is_bounded_lookup
from ._protocol import SparqlRequest, choose_format, parse_request

SPARQL_PATHS = ("/sparql", "/query")


def bearer_ok(token: str | None, authorization: str | None) -> bool:
    """Whether a request with this Authorization header may read data (no token set: all)."""
    if not token:
        return True
    return hmac.compare_digest((authorization or "").encode(), f"Bearer {token}".encode())


def inline_lookup(state, request: SparqlRequest, accept: str | None) -> WrittenResult | None:
    """The written answer of ``request`` when it is a lookup the server runs where it
    arrives, else None (the caller then uses the query pool). Errors are the store's."""
    snapshot = state.snapshot
    if request.default_graphs is not None or request.named_graphs is not None:
        return None
    if snapshot.lookup.endpoint_url is not None or not is_bounded_lookup(request.query):
        return None  # an endpoint's answer would wait on the network, on the loop
    return write_inline(snapshot.lookup, request.query, lambda kind: choose_format(accept, kind),
                        max_rows=state.max_rows, prefixes=snapshot.lookup.config.prefixes)


def front_door_lookup(state, scope) -> WrittenResult | None:
    """The written answer of a GET lookup that the front door may answer alone, else None
    (the app then takes the request from the start)."""
    if scope["method"] != "GET" or scope["path"] not in SPARQL_PATHS or state.gate.updating:
        return None  # during an update through the server, the app's route waits for it
    accept = authorization = None
    for name, value in scope["headers"]:
        if name == b"accept":
            accept = value.decode("latin-1")
        elif name == b"authorization":
            authorization = value.decode("latin-1")
        elif name == b"origin" and state.options.cors_origins:
            return None  # CORS headers are the app's
        elif (name == b"content-length" and value != b"0") or name == b"transfer-encoding":
            return None  # a body to check against the size limit
    if not bearer_ok(state.options.token, authorization):
        return None  # the app answers 401
    try:
        request = parse_request("GET", None, parse_qs(scope["query_string"].decode("latin-1"),
                                                      keep_blank_values=True), b"")
        written = inline_lookup(state, request, accept)
    except Exception:  # a bad request, a refusal, a store error or a bug: the route answers it (or logs the bug)
        return None
    return written if written is not None and written.format is not None else None


async def send_written(send, written: WrittenResult) -> None:
    """Send a lookup's answer with the headers the /sparql route gives it."""
    media_type = written.format.media_type
    if media_type.startswith("text/") and "charset=" not in media_type.lower():
        media_type += "; charset=utf-8"  # as Starlette's Response writes it
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(written.body)).encode()),
                            (b"content-type", media_type.encode()), (b"vary", b"Accept")]})
    await send({"type": "http.response.body", "body": written.body})


__all__ = ["bearer_ok", "front_door_lookup", "inline_lookup", "send_written", "SPARQL_PATHS"]

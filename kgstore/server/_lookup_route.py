"""SPARQL lookups answered where they arrive: one home for the rule, and a pure ASGI path
for GET lookups that skips Starlette's routing and request objects.

A one-pattern lookup on the embedded store (:func:`kgstore._lookup_query.is_bounded_lookup`)
runs in the event loop, its work stopped by the small-result write budget
(:func:`kgstore._bounded_query.write_inline`): handing it to the query pool and back cost
more than the lookup itself. Everything else, and any lookup that outgrows the budget or
fails, takes the /sparql route as before, which answers it and its errors.
"""
from __future__ import annotations

from urllib.parse import parse_qs

from .._bounded_query import WrittenResult, write_inline
from .._lookup_query import is_bounded_lookup
from ..errors import QueryError, StoreClosedError
from ._protocol import ProtocolError, SparqlRequest, choose_format, parse_request

SPARQL_PATHS = ("/sparql", "/query")


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


class LookupFastPath:
    """Pure ASGI middleware, inside the token and body checks: a GET lookup that succeeds
    is answered here, with the headers the route gives it; anything else goes on."""

    def __init__(self, app, *, state):
        self.app = app
        self.state = state

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] in SPARQL_PATHS:
            written = self._answer(scope)
            if written is not None:
                media_type = written.format.media_type
                if media_type.startswith("text/") and "charset=" not in media_type.lower():
                    media_type += "; charset=utf-8"  # as Starlette's Response writes it
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-length", str(len(written.body)).encode()),
                                        (b"content-type", media_type.encode()), (b"vary", b"Accept")]})
                await send({"type": "http.response.body", "body": written.body})
                return
        await self.app(scope, receive, send)

    def _answer(self, scope) -> WrittenResult | None:
        try:
            request = parse_request("GET", None, parse_qs(scope["query_string"].decode("latin-1"),
                                                          keep_blank_values=True), b"")
        except ProtocolError:
            return None  # the route says what is wrong
        accept = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"accept"), None)
        try:
            written = inline_lookup(self.state, request, accept)
        except (QueryError, StoreClosedError):
            return None  # the route answers with the error
        return written if written is not None and written.format is not None else None


__all__ = ["LookupFastPath", "inline_lookup", "SPARQL_PATHS"]

"""The ASGI app: the SPARQL 1.1 Protocol on /sparql, JSON endpoints for what SPARQL
cannot do (/search, /link, /entity/{id}, /ask, /ask/methods, /ask/queue, /prefixes,
/stats, /health, /reload), their OpenAPI description on /openapi.json (see ``_openapi``)
and the web page on / (see ``_pages``).

Blocking work never runs on the event loop: SPARQL goes to the query pool
(:func:`kgstore.write_bounded_async`: the worker runs the query and writes the document),
except a one-pattern lookup on the embedded store, whose work stops at a small write budget
(``_lookup_route``: GET lookups are answered at the front door, before the middleware).
Catalog and index lookups go to a thread one at a time, and /ask to a thread one question
at a time (requests queue for the model).
"""
from __future__ import annotations

import contextlib
import json
import os
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .._bounded_query import write_bounded_async
from ..errors import (EndpointError, KgstoreError, LLMUnavailableError, OptionValueError, QueryError, QueryRefusedError,
                      QueryTimeoutError, QAError, StoreClosedError, StoreLockedError, VectorIndexError)
from ._ask_queue import MAX_TICKET_CHARS
from ._ask_request import parse_ask
from ._catch_all import CatchAll
from ._convertors import ANY_TEXT
from ._entity_detail import entity_detail
from ._lookup_route import bearer_ok, front_door_lookup, inline_lookup, send_written
from ._openapi import ENTITY_LIMIT_DEFAULT, ENTITY_LIMIT_MAX, INCOMING_MAX, K_MAX, openapi_document
from ._pages import is_page_path, page_routes
from ._protocol import ProtocolError, choose_format, offered_media_types, parse_request
from ._state import BadRequest, Generation, ServeOptions, ServerState
from ._update_route import UPDATE_BODY_LIMIT, UpdateRefused, check_update_request, keep_body, run_update

TRUNCATED_HEADER = "X-Kgstore-Truncated"
MAX_ROWS_HEADER = "X-Kgstore-Max-Rows"
KINDS = ("entities", "relations", "uris", "statements", "triples")  # = indexer.KINDS, without importing torch

# Status for each error of kgstore.errors (the most specific class listed wins).
_STATUS: list[tuple[type[Exception], int]] = [
    (QueryRefusedError, 403), (QueryTimeoutError, 503), (QueryError, 400), (BadRequest, 400),
    (VectorIndexError, 409), (LLMUnavailableError, 503), (QAError, 400), (StoreClosedError, 503),
    (StoreLockedError, 503),
    (EndpointError, 502),  # the SPARQL endpoint behind the store failed: a gateway's error
    (KgstoreError, 500),
]


def create_app(store_path: str | os.PathLike, options: ServeOptions | None = None, *, llm=None,
               generation: Generation | None = None) -> Starlette:
    """The app serving the store at ``store_path``. ``llm`` replaces the store's configured
    model for /ask (tests pass a ``qa.ScriptedLLM``); ``generation`` is shared by the
    worker processes of one server (``serve`` makes it)."""
    state = ServerState(store_path, options or ServeOptions(), llm=llm, generation=generation)
    routes = [
        Route("/sparql", _sparql, methods=["GET", "POST"]),
        # The paths of `oxigraph serve`, so clients configured for it work here too.
        Route("/query", _sparql, methods=["GET", "POST"]),
        Route("/update", _update, methods=["GET", "POST"]),
        Route("/search", _search, methods=["GET"]),
        Route("/link", _link, methods=["GET"]),
        Route(f"/entity/{{ref:{ANY_TEXT}}}", _entity, methods=["GET"]),
        Route("/ask", _ask, methods=["POST"]),
        Route("/ask/methods", _ask_methods, methods=["GET"]),
        Route("/ask/queue", _ask_queue, methods=["GET"]),
        Route("/prefixes", _prefixes, methods=["GET"]),
        Route("/stats", _stats, methods=["GET"]),
        Route("/health", _health, methods=["GET"]),
        Route("/reload", _reload, methods=["POST"]),
        Route("/openapi.json", _openapi, methods=["GET"]),
        *page_routes(),
    ]
    middleware = []
    if state.options.cors_origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=list(state.options.cors_origins),
                                     allow_methods=["GET", "POST"], allow_headers=["Authorization", "Content-Type"],
                                     expose_headers=[TRUNCATED_HEADER, MAX_ROWS_HEADER]))
    middleware.append(Middleware(CatchAll))  # inside CORS, so that a 500 carries its headers too
    middleware.append(Middleware(_Guard, token=state.options.token, max_body_bytes=state.options.max_body_bytes))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        state.close()

    app = _App(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.kg = state
    return app


class _App(Starlette):
    """Starlette, with a front door: a GET lookup that may be answered alone (token,
    no body, no CORS) is answered before the middleware stack (see ``_lookup_route``)."""

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            written = front_door_lookup(self.state.kg, scope)
            if written is not None:
                return await send_written(send, written)
        await super().__call__(scope, receive, send)


def _state(request: Request) -> ServerState:
    return request.app.state.kg


def _status_of(exc: Exception) -> int:
    return next(status for cls, status in _STATUS if isinstance(exc, cls))


# -- SPARQL ------------------------------------------------------------------------------------
async def _sparql(request: Request) -> Response:
    state = _state(request)
    accept = request.headers.get("accept")
    try:
        body = await request.body() if request.method == "POST" else b""
        parsed = parse_request(request.method, request.headers.get("content-type"),
                               _multi(request.query_params.multi_items()), body)
        async with state.gate.reading():  # an update through this server: wait for its new data
            snapshot = state.snapshot
            written = inline_lookup(state, parsed, accept)  # a one-pattern lookup, run here (see _lookup_route)
            if written is None:
                # The worker runs the query and writes the document: the loop only sends it.
                written = await write_bounded_async(snapshot.lookup, parsed.query,
                                                    lambda kind: choose_format(accept, kind),
                                                    timeout_s=state.timeout_s, max_rows=state.max_rows,
                                                    default_graph=parsed.default_graphs,
                                                    named_graphs=parsed.named_graphs,
                                                    prefixes=snapshot.lookup.config.prefixes, pool=state.pool)
    except ProtocolError as exc:
        return PlainTextResponse(exc.message + "\n", status_code=exc.status)
    except (QueryError, StoreClosedError, EndpointError) as exc:
        return PlainTextResponse(str(exc) + "\n", status_code=_status_of(exc))
    if written.format is None:
        return PlainTextResponse(f"none of the accepted media types can be written for this query; "
                                 f"offered: {', '.join(offered_media_types(written.kind))}\n", status_code=406)
    headers = {"Vary": "Accept"}
    if written.truncated:
        headers[TRUNCATED_HEADER] = "true"
        headers[MAX_ROWS_HEADER] = str(state.max_rows)
    return Response(written.body, media_type=written.format.media_type, headers=headers)


async def _update(request: Request) -> Response:
    """Entity documents in the body replace their entities (see ``_update_route``); a
    SPARQL update is refused."""
    state = _state(request)
    file_format = request.query_params.get("format", "wikidata-json")
    try:
        check_update_request(request.method, request.headers.get("content-type"), state.options.token,
                             state.options.workers, file_format)
        body = await request.body()
        path = await anyio.to_thread.run_sync(keep_body, state.path, body, file_format)
        async with state.update_lock:
            async with state.gate.updating_alone():
                summary = await anyio.to_thread.run_sync(run_update, state.path, path, file_format)
                snapshot = await anyio.to_thread.run_sync(state.reload)
    except UpdateRefused as exc:
        return JSONResponse({"error": str(exc), "type": "UpdateRefused"}, status_code=exc.status)
    except KgstoreError as exc:
        return _error(exc)
    return _json({**summary, "snapshot": snapshot.generation})


def _multi(items) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in items:
        out.setdefault(key, []).append(value)
    return out


# -- JSON endpoints -----------------------------------------------------------------------------
async def _lookup(request: Request, work, *, not_found: str | None = None) -> Response:
    """Run ``work(state, snapshot)`` in a thread, one at a time (the catalog is not
    thread-safe), and answer its value as JSON, or the error as JSON; a None value is
    404 with ``not_found`` as the message."""
    state = _state(request)
    snapshot = state.snapshot

    def locked():
        with state.lookup_lock:
            return work(state, snapshot)

    try:
        async with state.gate.reading():  # an update through this server: wait for its new data
            snapshot = state.snapshot
            value = await anyio.to_thread.run_sync(locked)
    except (KgstoreError, BadRequest) as exc:
        return _error(exc)
    if value is None and not_found:
        return JSONResponse({"error": not_found, "type": "NotFound"}, status_code=404)
    return _json(value)


async def _search(request: Request) -> Response:
    text = request.query_params.get("q", "")
    kind = request.query_params.get("kind", "triples")
    try:
        k = _int_param(request, "k", 10, 1, K_MAX)
        if kind not in KINDS:
            raise BadRequest(f"unknown kind {kind!r}; choose from: {', '.join(KINDS)}")
        if not text.strip():
            raise BadRequest("q= (the text to search for) is required")
    except BadRequest as exc:
        return _error(exc)
    return await _lookup(request, lambda state, snap: [h.to_dict() for h in state.index(snap).search(kind, text, k)])


async def _link(request: Request) -> Response:
    text = request.query_params.get("q", "")
    try:
        k = _int_param(request, "k", 10, 1, K_MAX)
        if not text.strip():
            raise BadRequest("q= (a mention or a question) is required")
    except BadRequest as exc:
        return _error(exc)
    return await _lookup(request, lambda state, snap: [c.to_dict() for c in state.index(snap).link_text(text, k)])


async def _entity(request: Request) -> Response:
    ref = request.path_params["ref"]
    try:
        limit = _int_param(request, "limit", ENTITY_LIMIT_DEFAULT, 1, ENTITY_LIMIT_MAX)
        incoming = _int_param(request, "incoming", 0, 0, INCOMING_MAX)
        qualifiers = _bool_param(request, "qualifiers")
    except BadRequest as exc:
        return _error(exc)

    def work(state, snap):
        return entity_detail(snap.lookup, ref, max_facts=limit, incoming=incoming, qualifiers=qualifiers,
                             prefixes=snap.lookup.config.prefixes)

    return await _lookup(request, work, not_found=f"no entity {ref!r} in this store")


async def _prefixes(request: Request) -> Response:
    """The prefixes every query of this store has predeclared (kgstore.toml)."""
    return _json(_state(request).snapshot.lookup.config.prefixes)


async def _stats(request: Request) -> Response:
    return await _lookup(request, lambda state, snap: {**snap.lookup.stats(), "snapshot": snap.generation})


async def _health(request: Request) -> Response:
    state = _state(request)
    return _json({"status": "ok", "store": str(state.path), "snapshot": state.snapshot.generation,
                  "timeout_s": state.timeout_s, "max_rows": state.max_rows,
                  **({"ask_stores": state.store_names} if state.ask_paths else {})})


async def _reload(request: Request) -> Response:
    state = _state(request)
    try:
        snapshot = await anyio.to_thread.run_sync(state.reload)
    except KgstoreError as exc:
        return _error(exc)
    triples = await anyio.to_thread.run_sync(snapshot.lookup.triple_count)
    return _json({"status": "reloaded", "snapshot": snapshot.generation, "triples": triples})


async def _ask(request: Request) -> Response:
    """The JSON of `kgstore ask --format json`. Requests queue for the one model; an
    optional ``"ticket"`` (a short string the client picks) lets ``GET /ask/queue?ticket=``
    say where the request stands meanwhile."""
    state = _state(request)
    try:
        ask = parse_ask(await request.body())
        async with state.ask_queue.turn(ask.ticket), state.gate.reading():
            snapshot = state.snapshot
            answer = await anyio.to_thread.run_sync(
                lambda: state.method(snapshot, ask.method, ask.options).answer(
                    ask.question, allow_parametric=ask.allow_parametric))
    except OptionValueError as exc:
        return _error(BadRequest(f"method {ask.method} cannot run with the options {ask.options}: {exc}"))
    except (KgstoreError, BadRequest) as exc:
        return _error(exc)
    except (ValueError, TypeError) as exc:
        if not ask.options:  # the method's own bug: the catch-all below answers it
            raise
        # A value of the right type the method still cannot work with ("answer_tokens": 0).
        return _error(BadRequest(f"method {ask.method} cannot run with the options {ask.options}: {exc}"))
    return Response(json.dumps(answer.to_dict(trace=True), ensure_ascii=False, default=str),
                    media_type="application/json")


async def _ask_methods(request: Request) -> Response:
    """The QA methods /ask takes, with one line on each, and the default."""
    from qa import METHODS
    from qa.methods import DEFAULT_METHOD

    return _json({"default": DEFAULT_METHOD,
                  "methods": [{"name": name, "description": line} for name, (_, line) in METHODS.items()]})


async def _ask_queue(request: Request) -> Response:
    """How many questions run and wait for the model; with ?ticket=, where that one stands."""
    ticket = request.query_params.get("ticket")
    if ticket is not None and len(ticket) > MAX_TICKET_CHARS:  # no /ask takes it: it cannot be in the queue
        return _error(BadRequest(f"ticket= must be at most {MAX_TICKET_CHARS} characters"))
    return _json(_state(request).ask_queue.status(ticket))


async def _openapi(request: Request) -> Response:
    """The OpenAPI description of this server (``_openapi``)."""
    from qa.methods import DEFAULT_METHOD, method_names, method_options

    methods = {name: method_options(name) for name in method_names()}
    return _json(openapi_document(kinds=KINDS, methods=methods, default_method=DEFAULT_METHOD))


def _bool_param(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false", "1", "0"):
        raise BadRequest(f"{name}= must be true or false, not {raw!r}")
    return raw in ("true", "1")


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name}= must be an integer, not {raw!r}") from None
    if not low <= value <= high:
        raise BadRequest(f"{name}= must be between {low} and {high}")
    return value


def _json(value: Any) -> Response:
    return Response(json.dumps(value, ensure_ascii=False, default=str), media_type="application/json")


def _error(exc: Exception) -> Response:
    return JSONResponse({"error": str(exc), "type": type(exc).__name__}, status_code=_status_of(exc))


# -- token and body size ----------------------------------------------------------------------------
class _Guard:
    """Pure ASGI middleware: the bearer token (all paths but /health and the page's files,
    which hold no data) and the body size limit (Content-Length checked up front, chunked
    bodies counted as they arrive)."""

    def __init__(self, app, *, token: str | None, max_body_bytes: int):
        self.app = app
        self.token = token
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if (self.token and scope["path"] != "/health" and scope["method"] != "OPTIONS"
                and not is_page_path(scope["path"])):
            if not bearer_ok(self.token, headers.get("authorization")):
                response = PlainTextResponse("a valid 'Authorization: Bearer TOKEN' header is required\n",
                                             status_code=401, headers={"WWW-Authenticate": "Bearer"})
                return await response(scope, receive, send)
        # A change feed for POST /update (behind the token) may be far larger than a query.
        limit = max(self.max_body_bytes, UPDATE_BODY_LIMIT) if scope["path"] == "/update" else self.max_body_bytes
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            return await self._too_large(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _BodyTooLarge:
            await self._too_large(scope, receive, send)

    async def _too_large(self, scope, receive, send):
        response = PlainTextResponse(f"the request body is larger than the limit of {self.max_body_bytes} bytes\n",
                                     status_code=413, headers={"Connection": "close"})
        await response(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


__all__ = ["create_app", "TRUNCATED_HEADER", "MAX_ROWS_HEADER"]

"""The last line: an exception no handler answered (a bug) becomes the JSON error shape of
every other error, status 500, and its traceback goes to the server's log only.

Starlette's own catch-all (``exception_handlers={Exception: ...}``) answers too but then
re-raises, and uvicorn closes the connection: a client reusing it for its next request
got "connection reset". Here the exception stops, and the connection stays usable.
"""
from __future__ import annotations

import logging

from starlette.responses import JSONResponse

log = logging.getLogger("kgstore.server")

BUG_MESSAGE = "the server failed to answer this request (a bug: its log has the details)"


class CatchAll:
    """Pure ASGI middleware; put it outside every middleware that may raise."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def watched(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            log.exception("unhandled error answering %s %s", scope.get("method"), scope.get("path"))
            if started:  # half an answer is out: only closing the connection can say so
                raise
            await JSONResponse({"error": BUG_MESSAGE, "type": "InternalError"}, status_code=500)(scope, receive, send)

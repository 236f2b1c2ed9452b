"""The token of ``kgstore mcp --http --token``: every HTTP request must carry
``Authorization: Bearer TOKEN``, or gets 401 with the sentence `kgstore serve` answers."""
from __future__ import annotations

import hmac

from starlette.responses import PlainTextResponse


class BearerToken:
    """Pure ASGI middleware in front of the MCP app (lifespan events pass through)."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k.lower() == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                response = PlainTextResponse("a valid 'Authorization: Bearer TOKEN' header is required\n",
                                             status_code=401, headers={"WWW-Authenticate": "Bearer"})
                return await response(scope, receive, send)
        return await self.app(scope, receive, send)

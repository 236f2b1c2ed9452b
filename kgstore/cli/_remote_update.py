"""The client side of `kgstore serve`'s POST /update, for `kgstore update --server URL
FILE`: the file goes to the server, which applies it and serves the new data without a
restart. Failures become errors of the tree, as for `kgstore ask --server`."""
from __future__ import annotations

import click
import httpx

from ..errors import RemoteError, ServerRefusedError, ServerTimeoutError, ServerUnreachableError
from ._common import emit_mapping
from ._remote import CONNECT_TIMEOUT_S, _error_of, check_server_url

UPDATE_TIMEOUT_S = 3600.0  # a big feed takes minutes; the server answers when it is applied


def post_update(url: str, path: str, *, token: str | None, file_format: str, fmt: str) -> dict:
    """Send ``path`` to the server at ``url`` and print its summary."""
    url = check_server_url(url)
    headers = {"Content-Type": "application/x-ndjson"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    with open(path, "rb") as f:
        body = f.read()
    try:
        response = httpx.post(f"{url}/update", params={"format": file_format}, content=body, headers=headers,
                              timeout=httpx.Timeout(UPDATE_TIMEOUT_S, connect=CONNECT_TIMEOUT_S))
    except httpx.TimeoutException as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            raise ServerUnreachableError(url, f"no connection within {CONNECT_TIMEOUT_S:g} s") from exc
        raise ServerTimeoutError(url, UPDATE_TIMEOUT_S) from exc
    except httpx.HTTPError as exc:
        raise ServerUnreachableError(url, str(exc) or type(exc).__name__) from exc
    if response.status_code != 200:
        message, error_type = _error_of(response)
        raise ServerRefusedError(url, response.status_code, message, error_type=error_type,
                                 token_sent=token is not None)
    try:
        doc = response.json()
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or "status" not in doc:
        raise RemoteError(url, f"the server at {url} answered /update with something other than kgstore's "
                               "update summary; is it a `kgstore serve`?")
    emit_mapping(doc, fmt, title=f"Update summary ({url})")
    return doc

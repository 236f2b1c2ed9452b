"""The client side of `kgstore serve`'s POST /ask, for `kgstore ask --server URL`: the
question goes to a server whose model is already loaded, and every failure becomes an
error of the tree (unreachable, too slow, refused with the server's reason)."""
from __future__ import annotations

import click
import httpx

from ..terms import DEFAULT_PREFIXES
from ..errors import RemoteError, ServerRefusedError, ServerTimeoutError, ServerUnreachableError

CONNECT_TIMEOUT_S = 10.0  # a server that is up accepts at once; only the answer is slow


def check_server_url(url: str) -> str:
    """``url`` without a trailing slash, or a usage error when it is no http(s) URL."""
    try:
        parsed = httpx.URL(url)
        parsed.port  # noqa: B018  (a port out of range raises here)
    except (httpx.InvalidURL, ValueError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise click.BadParameter(f"{url!r} is not an http(s) URL; give the address `kgstore serve` printed, "
                                 "such as http://127.0.0.1:7878", param_hint="--server")
    return url.rstrip("/")


class AskClient:
    """Sends questions to the server at ``url``; ``timeout_s`` bounds the wait for each answer
    (questions queue there for its one model). Use as a context manager."""

    def __init__(self, url: str, *, token: str | None = None, timeout_s: float = 300.0):
        self.url = check_server_url(url)
        self.token = token
        self.timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S))

    def __enter__(self) -> "AskClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def ask(self, question: str, *, method: str | None = None, options: dict | None = None,
            allow_parametric: bool = False) -> dict:
        """The server's answer: the JSON document of `kgstore ask --format json`."""
        body: dict = {"question": question, "options": options or {}, "allow_parametric": allow_parametric}
        if method is not None:
            body["method"] = method  # else the server's default
        try:
            response = self._http.post(f"{self.url}/ask", json=body)
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                raise ServerUnreachableError(self.url, f"no connection within {CONNECT_TIMEOUT_S:g} s") from exc
            raise ServerTimeoutError(self.url, self.timeout_s) from exc
        except httpx.HTTPError as exc:
            raise ServerUnreachableError(self.url, str(exc) or type(exc).__name__) from exc
        if response.status_code != 200:
            message, error_type = _error_of(response)
            raise ServerRefusedError(self.url, response.status_code, message, error_type=error_type,
                                     token_sent=self.token is not None)
        try:
            doc = response.json()
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or "answers" not in doc:
            raise RemoteError(self.url, f"the server at {self.url} answered /ask with something other than "
                                        "kgstore's answer JSON; is it a `kgstore serve`?")
        return doc


    def prefixes(self) -> dict[str, str]:
        """The server store's prefixes (GET /prefixes), to write its IRIs short; the
        standard ones when the server does not say."""
        try:
            response = self._http.get(f"{self.url}/prefixes", timeout=CONNECT_TIMEOUT_S)
            doc = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            doc = None
        if isinstance(doc, dict) and all(isinstance(v, str) for v in doc.values()):
            return {**DEFAULT_PREFIXES, **doc}
        return dict(DEFAULT_PREFIXES)


def _error_of(response: httpx.Response) -> tuple[str, str | None]:
    """The server's reason: ``{"error": ..., "type": ...}`` from its JSON endpoints, or the
    text of a plain-text answer (the token check, the body size limit)."""
    try:
        doc = response.json()
    except ValueError:
        return response.text.strip()[:500], None
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        return doc["error"], doc.get("type")
    return response.text.strip()[:500], None

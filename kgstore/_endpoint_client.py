"""The HTTP client of a SPARQL endpoint (the SPARQL 1.1 Protocol's query operation, read
only): :class:`EndpointClient`.

* One ``httpx.Client`` per store: a pool of keep-alive connections, shared by threads.
  The long answers of `kgstore sync` (:meth:`EndpointClient.stream`) go through
  ``http.client`` instead, one connection each (kgstore/_endpoint_stream.py says why).
* Every request has a time limit (``timeout_s``); when the endpoint honours a per-query
  timeout parameter (probed at init: Virtuoso's ``timeout``, in ms) it is sent too, so
  that the endpoint stops working when the client stops waiting.
* Retries, with exponential backoff, only for what is transient: no connection (refused,
  reset before an answer, connect timeout) and 502/503/504. A read timeout is not
  retried (the query would time out again), nor is any other status.
* Errors go through the error tree: :class:`EndpointUnreachableError` (with the URL),
  :class:`EndpointAuthError` (401/403), :class:`EndpointQueryError` (the endpoint's own
  words), :class:`EndpointTimeoutError`. Virtuoso answers 200 with *incomplete* rows when
  its own timeout strikes (``X-SQL-State: S1TAT``): that is a timeout here, never an answer.
* Only queries are ever sent: this module has no way to send an update.
"""
from __future__ import annotations

import base64
import contextlib
import io
import socket
import time
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence
from urllib.parse import urlencode

import httpx

from ._endpoint_stream import AnswerFile, NotConnected, open_answer
from .errors import EndpointAuthError, EndpointQueryError, EndpointTimeoutError, EndpointUnreachableError

RESULTS_JSON = "application/sparql-results+json"
FORM = "application/x-www-form-urlencoded"
# Virtuoso's marker of results cut short by its timeout ("anytime query").
_INCOMPLETE_STATE = "S1TAT"
_RETRY_STATUSES = (502, 503, 504)
_NOT_CONNECTED = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError)


@dataclass(frozen=True)
class EndpointAnswer:
    """One successful answer: its body, media type (no parameters) and headers."""

    body: bytes
    media_type: str
    headers: Mapping[str, str]
    seconds: float


@dataclass(frozen=True)
class EndpointAuth:
    """Credentials: a Bearer ``token``, or ``user`` and ``password`` (HTTP basic)."""

    token: str = ""
    user: str = ""
    password: str = ""


class EndpointClient:
    def __init__(self, url: str, *, auth: EndpointAuth | None = None, timeout_s: float = 30.0,
                 connect_timeout_s: float = 5.0, retries: int = 3, backoff_s: float = 0.5,
                 max_result_bytes: int = 512 * 1024 * 1024, connections: int = 8, timeout_param: str = ""):
        self.url = url
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.max_result_bytes = max_result_bytes
        self.timeout_param = timeout_param
        headers = {"User-Agent": "kgstore"}
        basic = None
        if auth is not None and auth.token:
            headers["Authorization"] = f"Bearer {auth.token}"
        elif auth is not None and auth.user:
            basic = httpx.BasicAuth(auth.user, auth.password)
        # what stream() sends itself, past httpx
        self._headers = dict(headers)
        if basic is not None:
            pair = f"{auth.user}:{auth.password}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        self._client = httpx.Client(
            headers=headers, auth=basic, follow_redirects=False, trust_env=False,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections))

    def query(self, sparql: str, *, accept: str = RESULTS_JSON, default_graphs: Sequence[str] = (),
              named_graphs: Sequence[str] = (), timeout_s: float | None = None,
              params: Mapping[str, str] | None = None) -> EndpointAnswer:
        """POST ``sparql`` (form-encoded, as the protocol allows for any query) and return
        the answer; raises the errors of the module docstring. ``params`` are more form
        fields, sent as they are."""
        limit = timeout_s if timeout_s is not None else self.timeout_s
        form: list[tuple[str, str]] = [("query", sparql)]
        form += [("default-graph-uri", g) for g in default_graphs]
        form += [("named-graph-uri", g) for g in named_graphs]
        if self.timeout_param:
            form.append((self.timeout_param, str(max(1, int(limit * 1000)))))
        form += list((params or {}).items())
        attempt = 0
        while True:
            try:
                return self._once(form, accept, limit)
            except _Transient as exc:
                if attempt >= self.retries:
                    raise EndpointUnreachableError(self.url, exc.detail) from None
                time.sleep(self.backoff_s * (2 ** attempt))
                attempt += 1

    def _once(self, form, accept: str, limit: float) -> EndpointAnswer:
        started = time.monotonic()
        timeout = httpx.Timeout(limit, connect=self._client.timeout.connect)
        try:
            with self._client.stream("POST", self.url, content=urlencode(form).encode("ascii"),
                                     headers={"Accept": accept, "Content-Type": FORM},
                                     timeout=timeout) as response:
                status = response.status_code
                if status in _RETRY_STATUSES:
                    raise _Transient(f"it answered {status} {response.reason_phrase}")
                body = self._read(response, started, limit)
        except _NOT_CONNECTED as exc:
            raise _Transient(_detail(exc)) from None
        except httpx.TimeoutException:
            raise EndpointTimeoutError(self.url, limit) from None
        except httpx.ReadError as exc:  # the connection broke while the answer came
            raise EndpointUnreachableError(self.url, f"the connection broke during the query: {_detail(exc)}") from None
        except httpx.HTTPError as exc:
            raise EndpointUnreachableError(self.url, _detail(exc)) from None
        text = lambda: body.decode("utf-8", errors="replace")  # noqa: E731
        if status in (401, 403):
            raise EndpointAuthError(self.url, status, text())
        if status != 200:
            raise EndpointQueryError(self.url, status, text())
        if response.headers.get("x-sql-state", "").strip() == _INCOMPLETE_STATE:
            raise EndpointTimeoutError(self.url, limit, incomplete=True)
        media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        return EndpointAnswer(body, media, dict(response.headers), time.monotonic() - started)

    def _read(self, response: httpx.Response, started: float, limit: float) -> bytes:
        parts, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_result_bytes:
                raise EndpointQueryError(self.url, response.status_code,
                                         f"the result is larger than max_result_bytes ({self.max_result_bytes:,} "
                                         "bytes, [endpoint] in kgstore.toml); narrow the query or add a LIMIT")
            if time.monotonic() - started > limit:
                raise EndpointTimeoutError(self.url, limit)  # a trickle of bytes must not outlast the limit
            parts.append(chunk)
        return b"".join(parts)

    @contextlib.contextmanager
    def stream(self, sparql: str, *, accept: str, default_graphs: Sequence[str] = ()) -> Iterator[io.BufferedIOBase]:
        """POST ``sparql`` and yield the answer's body as a file to read as it comes (for
        answers too long to hold: `kgstore sync`; read through ``http.client``, which
        kgstore/_endpoint_stream.py says why). The time limit applies to each wait for
        more bytes, not to the whole answer; connecting is retried as in :meth:`query`.
        A connection that breaks while reading raises :class:`EndpointUnreachableError`."""
        form = urlencode([("query", sparql)] + [("default-graph-uri", g) for g in default_graphs]).encode("ascii")
        headers = {**self._headers, "Accept": accept, "Content-Type": FORM}
        attempt = 0
        while True:
            try:
                connection, response = open_answer(self.url, form, headers, timeout_s=self.timeout_s,
                                                   connect_timeout_s=self._client.timeout.connect)
                if response.status not in _RETRY_STATUSES:
                    break
                detail = f"it answered {response.status} {response.reason}"
                connection.close()
            except NotConnected as exc:
                detail = str(exc)
            except socket.timeout:
                raise EndpointTimeoutError(self.url, self.timeout_s) from None
            if attempt >= self.retries:
                raise EndpointUnreachableError(self.url, detail)
            time.sleep(self.backoff_s * (2 ** attempt))
            attempt += 1
        try:
            if response.status != 200:
                said = response.read().decode("utf-8", errors="replace")
                if response.status in (401, 403):
                    raise EndpointAuthError(self.url, response.status, said)
                raise EndpointQueryError(self.url, response.status, said)
            yield AnswerFile(response, self.url)
        finally:
            connection.close()

    def close(self) -> None:
        self._client.close()


class _Transient(Exception):
    """A failure worth another try (see the module docstring)."""

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(detail)


def _detail(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["EndpointClient", "EndpointAnswer", "EndpointAuth", "RESULTS_JSON"]

"""A long answer of a SPARQL endpoint read as a file, through the standard library's
``http.client``: :func:`open_answer` (what :meth:`EndpointClient.stream` uses for
`kgstore sync`).

Why not httpx, as the rest of the client: Oxigraph server writes its answers in chunks of
about 1 KB, and httpx (h11) spends Python on each chunk; for the 34 MB answer of a sync of
288,713 triples that was 0.36 s of CPU against 0.08–0.11 s here, and pyoxigraph's small
reads through a Python ``readinto`` cost as much again. Here the socket is read by
``http.client`` into a buffer of ``BUFFER_BYTES``, so the parser's reads are served in C.

Failures are told apart as the client needs them: :class:`NotConnected` (worth another
try: refused, reset or closed before an answer, a connect timeout), a read timeout before
the answer (:class:`socket.timeout`, for the caller to raise as a timeout), and, once the
answer flows, :class:`kgstore.errors.EndpointUnreachableError` from the file's reads.
"""
from __future__ import annotations

import http.client
import io
import socket
from urllib.parse import urlsplit

from .errors import EndpointUnreachableError

BUFFER_BYTES = 1 << 20


class NotConnected(Exception):
    """No answer began: the endpoint refused, reset or closed the connection, or did not accept it in time."""


def open_answer(url: str, body: bytes, headers: dict[str, str], *, timeout_s: float,
                connect_timeout_s: float) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """POST ``body`` to ``url`` and return the connection and the response, its headers
    read (raises :class:`NotConnected`, or :class:`socket.timeout` when the answer does not
    begin within ``timeout_s``). The caller closes the connection."""
    parts = urlsplit(url)
    make = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = make(parts.hostname, parts.port, timeout=connect_timeout_s)
    try:
        connection.connect()
    except (ConnectionError, socket.timeout, OSError) as exc:
        connection.close()
        raise NotConnected(_detail(exc)) from None
    connection.sock.settimeout(timeout_s)  # from now on the limit is on each wait for bytes
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", path, body=body, headers=headers)
        return connection, connection.getresponse()
    except socket.timeout:
        connection.close()
        raise
    except (ConnectionError, http.client.HTTPException, OSError) as exc:
        connection.close()
        raise NotConnected(_detail(exc)) from None


class AnswerFile(io.BufferedReader):
    """The body of ``response`` as a buffered file; ``error`` is what broke the stream, kept
    for the reader: a parser that calls ``readinto`` may hand the error on as its own
    (pyoxigraph raises OSError)."""

    def __init__(self, response: http.client.HTTPResponse, url: str):
        super().__init__(_RawAnswer(response, url), BUFFER_BYTES)

    @property
    def error(self) -> EndpointUnreachableError | None:
        return self.raw.error


class _RawAnswer(io.RawIOBase):
    def __init__(self, response: http.client.HTTPResponse, url: str):
        self._response = response
        self._url = url
        self.error: EndpointUnreachableError | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            return self._response.readinto(buffer)
        except socket.timeout:
            self.error = EndpointUnreachableError(self._url, "it stopped sending in the middle of an answer")
        except (http.client.HTTPException, OSError) as exc:
            self.error = EndpointUnreachableError(self._url, "the connection broke during the answer: "
                                                             + _detail(exc))
        raise self.error from None


def _detail(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["open_answer", "AnswerFile", "NotConnected", "BUFFER_BYTES"]

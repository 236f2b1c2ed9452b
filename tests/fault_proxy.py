"""A loopback HTTP proxy in front of a real SPARQL endpoint, for the faults an engine will
not make on demand: it asks for HTTP basic auth, and it answers 503 (a server busy or
restarting) to its first ``fail_first`` requests. Every other request goes to the engine
as it came, and the engine's answer comes back as it went.

Each request's status is kept in ``statuses``, so a test can count the retries.
"""
from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


class FaultProxy:
    def __init__(self, upstream: str, *, user: str, password: str, fail_first: int = 0):
        self.upstream = upstream
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.fail_first = fail_first
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/sparql"

    def __enter__(self) -> "FaultProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _decide(self, authorization: str | None) -> int | None:
        """The status to answer with instead of the engine's (401, 503), or None."""
        with self._lock:
            if authorization != self.expected:
                status = 401
            elif sum(1 for s in self.statuses if s == 503) < self.fail_first:
                status = 503
            else:
                status = None
            self.statuses.append(status or 200)
            return status

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = proxy._decide(self.headers.get("Authorization"))
                if status is not None:
                    text = b"unauthorised" if status == 401 else b"busy, try again"
                    self.send_response(status)
                    if status == 401:
                        self.send_header("WWW-Authenticate", 'Basic realm="sparql"')
                    self.send_header("Content-Length", str(len(text)))
                    self.end_headers()
                    self.wfile.write(text)
                    return
                answer = httpx.post(proxy.upstream, content=body, timeout=30, trust_env=False,
                                    headers={k: v for k, v in self.headers.items()
                                             if k.lower() in ("content-type", "accept")})
                if proxy.statuses and answer.status_code != 200:
                    with proxy._lock:
                        proxy.statuses[-1] = answer.status_code
                self.send_response(answer.status_code)
                for name in ("Content-Type",):
                    if name in answer.headers:
                        self.send_header(name, answer.headers[name])
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args):  # quiet: the test reads statuses instead
                pass

        return Handler

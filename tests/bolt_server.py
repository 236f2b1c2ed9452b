"""A live Bolt server for the tests and bench/graph.py: ArcadeDB (``arcadedb-embedded``, in
the ``test`` extra) with its Bolt plugin, in a child process.

ArcadeDB runs in a JVM that starts once per Python process (JPype), so it gets a process
of its own: ``python tests/bolt_server.py ROOT BOLT_PORT HTTP_PORT DATABASE`` (password in
``$KGSTORE_BOLT_PASSWORD``) starts the server bound to 127.0.0.1, creates DATABASE, prints
``ready`` and serves until its standard input closes.

    with BoltServer.start(tmp_dir) as server:     # free ports, generated password
        server.uri, server.user, server.password, server.database

``BoltServer.start`` waits until the official ``neo4j`` driver gets an answer over Bolt,
and stopping ends the child by its pid (closing its stdin first, so it stops cleanly).
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PASSWORD_ENV = "KGSTORE_BOLT_PASSWORD"
USER = "root"  # ArcadeDB's administrator; Neo4j's would be "neo4j"
DATABASE = "neo4j"  # the name the kgstore config uses by default, so nothing else changes
READY = "ready"


def free_port() -> int:
    """A TCP port nothing listens on now, on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class BoltServer:
    uri: str
    user: str
    password: str
    database: str
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    startup_seconds: float = 0.0
    pid: int = field(init=False, default=0)

    @classmethod
    def start(cls, root: str | os.PathLike, *, timeout: float = 120.0, heap: str = "1g") -> "BoltServer":
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        port, http_port = free_port(), free_port()
        password = secrets.token_urlsafe(18)
        log_path = root / "server.log"
        env = {**os.environ, PASSWORD_ENV: password, "KGSTORE_BOLT_HEAP": heap}
        started = time.perf_counter()
        log = open(log_path, "wb")
        # cwd=root: ArcadeDB writes its ./log folder into the working directory.
        process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(root / "databases"), str(port), str(http_port),
             DATABASE],
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=root, env=env)
        log.close()
        server = cls(f"bolt://127.0.0.1:{port}", USER, password, DATABASE, process, log_path)
        server.pid = process.pid
        try:
            server._wait_until_ready(started + timeout)
        except BaseException:
            server.stop()
            raise
        server.startup_seconds = time.perf_counter() - started
        return server

    def _wait_until_ready(self, deadline: float) -> None:
        import neo4j

        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Bolt server exited with {self.process.returncode}:\n{self.log_tail()}")
            if READY in self.log_path.read_text(errors="replace"):
                try:
                    with neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self.password)) as driver:
                        driver.verify_connectivity()
                        with driver.session(database=self.database) as session:
                            if session.run("RETURN 1 AS n").single()["n"] == 1:
                                return
                except Exception:  # noqa: BLE001 - not answering yet
                    pass
            if time.perf_counter() > deadline:
                raise TimeoutError(f"the Bolt server did not answer on {self.uri}:\n{self.log_tail()}")
            time.sleep(0.2)

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the child: close its stdin (it stops the server and exits), then SIGTERM
        and SIGKILL by its pid if it lingers."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        for sig, wait in ((None, timeout), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            if sig is not None:
                try:
                    os.kill(process.pid, sig)
                except ProcessLookupError:
                    return
            try:
                process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> "BoltServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _serve(root: str, port: int, http_port: int, database: str, heap: str) -> None:
    """The child: start ArcadeDB with the Bolt plugin on 127.0.0.1 only, until stdin closes."""
    import arcadedb_embedded as arcadedb

    server = arcadedb.ArcadeDBServer(os.path.abspath(root), os.environ[PASSWORD_ENV], config={
        "host": "127.0.0.1",  # every listener: HTTP and Bolt
        "http_port": http_port,
        "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
        "bolt_port": port,
        "bolt_defaultDatabase": database,
    }, jvm_kwargs={"heap_size": heap})
    server.start()
    try:
        server.create_database(database)
        print(READY, flush=True)
        sys.stdin.read()  # until the parent closes it (or dies)
    finally:
        server.stop()


if __name__ == "__main__":
    _serve(*sys.argv[1:2], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], os.environ.get("KGSTORE_BOLT_HEAP", "1g"))

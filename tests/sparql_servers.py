"""Live SPARQL engines for the endpoint tests and bench/remote.py: Oxigraph server (the
``oxigraph`` binary of the PyPI package ``oxigraph``) and Virtuoso 7 (Debian's
``virtuoso-opensource``). Each runs in a child process on a free loopback port with a
private data directory, is bulk-loaded with N-Triples files, and is stopped by its pid.

No mocks: these are the engines a user runs. Both bind 127.0.0.1 only.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

VIRTUOSO_INSTALL_HINT = ("Virtuoso is not installed: on Debian/Ubuntu run "
                         "`sudo apt-get install -y virtuoso-opensource` (CI installs it in .ci/run)")
OXIGRAPH_INSTALL_HINT = "the oxigraph server is not installed: pip install oxigraph (in the test extra)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def oxigraph_binary() -> str | None:
    """The ``oxigraph`` CLI of the PyPI package, next to this interpreter or on PATH."""
    here = Path(sys.executable).with_name("oxigraph")
    return str(here) if here.is_file() else shutil.which("oxigraph")


def virtuoso_binaries() -> tuple[str, str] | None:
    server, isql = shutil.which("virtuoso-t"), shutil.which("isql-vt")
    return (server, isql) if server and isql else None


@dataclass
class EngineServer:
    """One running engine. ``url`` is its SPARQL endpoint; ``graph`` the named graph the
    data was loaded into."""

    name: str
    directory: Path
    graph: str
    port: int
    process: subprocess.Popen | None = None
    log: Path = field(init=False)

    def __post_init__(self):
        self.log = self.directory / f"{self.name}.log"

    @property
    def url(self) -> str:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self, *, wait_s: float = 60.0) -> "EngineServer":
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self.directory)
        self.wait_until_answering(wait_s)
        return self

    def wait_until_answering(self, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}; see {self.log}:\n"
                                   + self.log.read_text(errors="replace")[-2000:])
            try:
                r = httpx.get(self.url, params={"query": "ASK {}"}, timeout=2.0,
                              headers={"Accept": "application/sparql-results+json"})
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not answer at {self.url} within {wait_s:g} s")
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the process by its pid (SIGTERM, then SIGKILL after 20 s)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)  # in case a test paused it
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)


class OxigraphServer(EngineServer):
    """``oxigraph serve-read-only --location D --bind 127.0.0.1:PORT``; data loaded before it
    starts with ``oxigraph load`` (the store directory is locked while it serves). Its
    ``--timeout-s`` is the only query timeout it has (no per-request one): without it a
    query the client gave up on runs on."""

    timeout_s: int = 30

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/query"

    def command(self) -> list[str]:
        return [oxigraph_binary(), "serve-read-only", "--location", str(self.directory / "db"),
                "--bind", f"127.0.0.1:{self.port}", "--timeout-s", str(self.timeout_s)]

    def load(self, files: list[Path], graph: str | None = None) -> None:
        for f in files:
            subprocess.run([oxigraph_binary(), "load", "--location", str(self.directory / "db"), "--file", str(f),
                            "--graph", graph or self.graph], check=True, capture_output=True, timeout=600)

    def load_more(self, files: list[Path], graph: str) -> None:
        """Load into another graph: the store is locked while it serves, so stop, load, start."""
        self.stop()
        self.load(files, graph)
        self.start()

    @classmethod
    def create(cls, directory: Path, files: list[Path], graph: str) -> "OxigraphServer":
        directory.mkdir(parents=True, exist_ok=True)
        server = cls("oxigraph", directory, graph, free_port())
        server.load(files)
        return server.start()


_VIRTUOSO_INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
MaxCheckpointRemap = 2000
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
MaxClientConnections = 10
CheckpointInterval = 60
CaseMode = 2
DirsAllowed = ., {d}, {data}
NumberOfBuffers = 20000
MaxDirtyBuffers = 15000
ThreadsPerQuery = 2
AsyncQueueMaxThreads = 4
MaxQueryMem = 512M

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = /var/lib/virtuoso-opensource-7/vsp
MaxClientConnections = 8
ServerThreads = 8
MaxKeepAlives = 8
KeepAliveTimeout = 10
Charset = UTF-8
EnabledGzipContent = 0

[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime = 60
"""


class VirtuosoServer(EngineServer):
    """``virtuoso-t +foreground +configfile INI`` with a private database directory; data
    bulk-loaded through ``isql-vt`` (``ld_dir`` + ``rdf_loader_run()`` + ``checkpoint``)."""

    sql_port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/sparql"

    def command(self) -> list[str]:
        return [virtuoso_binaries()[0], "+foreground", "+configfile", str(self.directory / "virtuoso.ini")]

    def isql(self, *statements: str, timeout: float = 600) -> str:
        script = "".join(s.rstrip().rstrip(";") + ";\n" for s in statements)
        done = subprocess.run([virtuoso_binaries()[1], f"127.0.0.1:{self.sql_port}", "dba", "dba"],
                              input=script, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0 or "*** Error" in done.stdout:
            raise RuntimeError(f"isql-vt failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done.stdout

    def load(self, files: list[Path], graph: str | None = None) -> None:
        for f in files:
            self.isql(f"ld_dir('{f.parent}', '{f.name}', '{graph or self.graph}')")
        self.isql("rdf_loader_run()", "checkpoint")

    def load_more(self, files: list[Path], graph: str) -> None:
        """Load into another graph while it serves (the files' folder must be in DirsAllowed)."""
        self.load(files, graph)

    @classmethod
    def create(cls, directory: Path, files: list[Path], graph: str, *, max_rows: int = 10_000) -> "VirtuosoServer":
        directory.mkdir(parents=True, exist_ok=True)
        server = cls("virtuoso", directory, graph, free_port())
        server.sql_port = free_port()
        data_dirs = sorted({str(f.parent) for f in files}) or [str(directory)]
        (directory / "virtuoso.ini").write_text(_VIRTUOSO_INI.format(
            d=directory, data=", ".join(data_dirs), sql_port=server.sql_port, http_port=server.port,
            max_rows=max_rows))
        server.start(wait_s=120)
        server.load(files)
        return server

"""Benchmark: the levers for a faster /sparql, each against direct ``Store.query`` in the
same rounds (issue 42, part 3). Loopback only; every server is stopped at the end.

`bench/serve.py` measures `kgstore serve` as it ships. This script puts one lever at a time
beside it, with the same 1-hop lookups and the same ratio (rate / direct ``Store.query``'s
rate in the same round, median of ``--repeat`` rounds), the server's CPU per request (all
its processes, from /proc) and the bench client's own CPU per request:

* ``kgstore``: `kgstore serve` (uvicorn, Starlette, the query pool);
* with granian installed (``pip install granian``, not a kgstore dependency), the
  prototypes of ``bench/_serve_prototypes.py``: kgstore's app on granian (``asgi``), /sparql
  in front of Starlette (``asgi-fast``), the query run on the loop (``asgi-inline``),
  granian's own interface (``rsgi``) and its WSGI threads (``wsgi``), each with
  ``--granian-workers`` processes;
* ``--client http.client`` (the standard library, as in bench/serve.py) or ``--client
  lean`` (one socket, the request written at once, the response read by Content-Length):
  the client runs on the same two cores, so what it spends is taken from the servers.

    python bench/serve_levers.py --store bench-qa/metaqa [--levers kgstore,wsgi] [--client lean]
"""
from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve as bench_serve  # noqa: E402 - the helpers of bench/serve.py, one home

REPO = bench_serve.REPO
GRANIAN = {"asgi": ("asgi", "asgi_app"), "asgi-fast": ("asgi", "asgi_fast_app"),
           "asgi-inline": ("asgi", "asgi_inline_app"), "rsgi": ("rsgi", "rsgi_app"), "wsgi": ("wsgi", "wsgi_app")}


class LeanConnection:
    """One keep-alive connection that writes each request at once and reads the response by
    its Content-Length: the least a client can spend per request in Python."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = b""

    def get(self, target: str) -> bytes:
        self.sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Accept: application/sparql-results+json\r\n\r\n".encode())
        data = self.pending
        while b"\r\n\r\n" not in data:
            data += self._recv()
        head, _, body = data.partition(b"\r\n\r\n")
        lower = head.lower()
        start = lower.index(b"content-length:") + len(b"content-length:")
        length = int(lower[start:lower.index(b"\r\n", start) if b"\r\n" in lower[start:] else None])
        while len(body) < length:
            body += self._recv()
        self.pending = body[length:]
        if head[9:12] != b"200":
            raise RuntimeError(f"HTTP {head[9:12].decode()}: {body[:200]!r}")
        return body[:length]

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return chunk


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True, help="a MetaQA store")
    ap.add_argument("--levers", default="kgstore," + ",".join(GRANIAN),
                    help="comma-separated: kgstore and the granian prototypes " + ", ".join(GRANIAN))
    ap.add_argument("--client", choices=("http.client", "lean"), default="http.client")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--phase", type=float, default=4.0, help="seconds of each throughput phase")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--granian-workers", type=int, default=1)
    args = ap.parse_args()
    levers = [name.strip() for name in args.levers.split(",") if name.strip()]
    unknown = [name for name in levers if name != "kgstore" and name not in GRANIAN]
    if unknown:
        ap.error(f"unknown lever(s) {', '.join(unknown)}; choose from kgstore, {', '.join(GRANIAN)}")
    granian = Path(sys.executable).with_name("granian")
    if any(name in GRANIAN for name in levers) and not granian.exists():
        ap.error(f"the granian levers need granian ({granian} is missing): pip install granian")

    from kgstore import Store

    store = Store.open(args.store, read_only=True)
    subjects = bench_serve._subjects(store, 500)
    print(f"store {args.store}; {args.clients} clients ({args.client}); granian workers {args.granian_workers}; "
          f"load average {bench_serve._load()}")
    servers: dict[str, tuple[subprocess.Popen, int]] = {}
    local = threading.local()

    def get(port: int, path: str, params: dict) -> bytes:
        if args.client == "lean":
            conns = local.__dict__.setdefault("lean", {})
            conn = conns.get(port) or conns.setdefault(port, LeanConnection(port))
            return conn.get(f"{path}?{urlencode(params)}")
        return bench_serve.keep_alive_get(local, port, path, params)

    ops = {"direct": lambda rng: bench_serve._direct_lookup(store, bench_serve.ONE_HOP.format(s=rng.choice(subjects)))}
    try:
        for name in levers:
            port = bench_serve._free_port()
            servers[name] = (_start(name, args.store, port, granian, args.granian_workers), port)
            ops[name] = _op(get, port, "/sparql", lambda rng: {"query": bench_serve.ONE_HOP.format(
                s=rng.choice(subjects))})
            ops[f"{name} /health"] = _op(get, port, "/health", lambda rng: {})
        for server, port in servers.values():
            bench_serve._wait_ready(port, server)
        rates, server_cpu, client_cpu = ({name: [] for name in ops} for _ in range(3))
        for round_ in range(args.repeat):
            for name in (list(ops) if round_ % 2 == 0 else list(reversed(ops))):
                server = servers.get(name.split(" ")[0], (None, 0))[0]
                before = bench_serve._cpu_seconds(server.pid) if server else 0.0
                mine = _own_cpu()
                tally = bench_serve._run_for(args.phase, args.clients, ops[name])
                if tally.errors:
                    raise SystemExit(f"{name}: {tally.errors} errors, the first: {tally.first_error}")
                count = max(1, tally.count)
                rates[name].append(tally.count / tally.seconds)
                server_cpu[name].append(((bench_serve._cpu_seconds(server.pid) - before) if server else 0.0)
                                        / count * 1e6)
                client_cpu[name].append((_own_cpu() - mine) / count * 1e6)
            print(f"round {round_ + 1} done (load average {bench_serve._load()})")
    finally:
        for server, _ in servers.values():
            bench_serve._stop_server(server)
        store.close()
    print(f"medians of {args.repeat} rounds of {args.phase:.0f} s; ratio = rate / direct Store.query's in the "
          f"same round; CPU per request (µs): the server's processes, and this process (client; for direct, "
          f"the query itself)")
    print("| lever | requests/s | ratio | server CPU | client CPU |")
    print("|---|---:|---:|---:|---:|")
    for name in ops:
        ratio = statistics.median(r / d for r, d in zip(rates[name], rates["direct"]))
        print(f"| {name} | {statistics.median(rates[name]):,.0f} | {ratio:.2f} | "
              f"{statistics.median(server_cpu[name]):.0f} | {statistics.median(client_cpu[name]):.0f} |")
    print(f"load average {bench_serve._load()}")
    return 0


def _op(get, port: int, path: str, params):
    return lambda rng: get(port, path, params(rng)) and path


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _start(name: str, store: str, port: int, granian: Path, workers: int) -> subprocess.Popen:
    if name == "kgstore":
        return bench_serve._start_server(store, port)
    interface, target = GRANIAN[name]
    env = {**os.environ, "KG_STORE": store, "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO / "bench"), str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([str(granian), "--interface", interface, "--host", "127.0.0.1", "--port", str(port),
                             "--workers", str(workers), "--log-level", "warning", "--no-ws",
                             f"_serve_prototypes:{target}"], env=env)


if __name__ == "__main__":
    sys.exit(main())

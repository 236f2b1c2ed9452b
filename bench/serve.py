"""Benchmark: `kgstore serve` under a bounded load, on loopback only.

Starts `kgstore serve STORE` on 127.0.0.1 (a free port) in a subprocess, then, in the same
run, ``--clients`` client threads (one keep-alive connection each) run:

1. throughput rounds (``--repeat``, phases of ``--phase`` seconds, alternating order,
   because the machine is shared): 1-hop SPARQL lookups through ``Store.query`` in this
   process (results written as SPARQL JSON, as the server sends them), the same lookups
   through /sparql, and /health, which does no store work (the HTTP ceiling of this server
   and client); with ``--oxigraph BINARY`` (from ``pip install oxigraph``) also the same
   lookups through ``oxigraph serve-read-only`` on the same store, for scale. The ratio of
   each to direct ``Store.query`` in the same round is printed, median of the rounds
   (target for /sparql: >= 0.6), with the p99 latency and the CPU time the server spent
   per request (all its processes; Linux), which depends less on the load than the rates;
2. mixed: 1-hop lookups and /search (kind=triples) mixed (``--search-share``) for
   ``--seconds`` seconds: requests/s, p50/p99 latency per kind and errors (targets: p99 of
   1-hop lookups under 200 ms, 0 errors).

Everything stops by itself: each phase is time-bounded and the servers are stopped at the
end (killed if they do not stop within 10 s). The last line sums up: the /sparql ratio and
the p99 of 1-hop lookups in the mix, against their targets.

    python bench/serve.py --store /work/stores/metaqa-serve     # a MetaQA store, indexed
    python bench/serve.py --store S --workers 2                  # `kgstore serve --workers 2`
    (kgstore init S; kgstore ingest S tsv ../shared/data/qa/metaqa/kb_partial.txt; kgstore index S)
"""
from __future__ import annotations

import argparse
import http.client
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
ONE_HOP = "SELECT ?p ?o WHERE {{ <{s}> ?p ?o }}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", required=True, help="a MetaQA store (with `kgstore index` for /search)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30.0, help="length of the mixed phase")
    ap.add_argument("--phase", type=float, default=5.0, help="length of each throughput phase")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds of throughput phases (alternating order; the medians count: the machine is shared)")
    ap.add_argument("--search-share", type=float, default=0.2, help="share of /search requests in the mix")
    ap.add_argument("--entities", type=int, default=500, help="distinct subjects to look up")
    ap.add_argument("--workers", type=int, default=1, help="`kgstore serve --workers N`: server processes")
    ap.add_argument("--http", choices=("uvicorn", "granian"), default="uvicorn",
                    help="`kgstore serve --http`: the HTTP server (granian: pip install granian)")
    ap.add_argument("--client", choices=("http.client", "raw"), default="http.client",
                    help="the bench's HTTP client: the standard library's (110-170 µs of CPU a request on these "
                         "cores), or raw: one socket per thread, the request bytes written and the answer read by "
                         "its Content-Length (about a third of that), so that less of the two shared cores goes "
                         "to the client")
    ap.add_argument("--oxigraph", metavar="BINARY",
                    help="also time `oxigraph serve-read-only` (the `oxigraph` PyPI package's binary) on the "
                         "same store and lookups, for scale")
    args = ap.parse_args()

    from kgstore import Store

    store = Store.open(args.store, read_only=True)
    subjects = _subjects(store, args.entities)
    searches = [_label(s) for s in subjects]
    has_index = (Path(args.store) / "index" / "triples.hnsw").is_file()
    print(f"store {args.store}: {store.triple_count():,} triples; {len(subjects)} subjects to look up; "
          f"{args.clients} clients ({args.client}); {args.workers} server process(es) on {args.http}; load average {_load()}")
    port = _free_port()
    servers = [_start_server(args.store, port, workers=args.workers, http=args.http)]
    ox_port = None
    if args.oxigraph:
        ox_port = _free_port()
        servers.append(subprocess.Popen([args.oxigraph, "serve-read-only", "--location",
                                         str(Path(args.store) / "oxigraph"), "--bind", f"127.0.0.1:{ox_port}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    local = threading.local()

    fetch = keep_alive_get if args.client == "http.client" else raw_get

    def get(path: str, params: dict, *, to: int = port) -> bytes:
        return fetch(local, to, path, params)

    def lookup(rng) -> str:
        return ONE_HOP.format(s=rng.choice(subjects))

    ops = {
        "direct": lambda rng: _direct_lookup(store, lookup(rng)),
        "/sparql": lambda rng: get("/sparql", {"query": lookup(rng)}) and "/sparql",
        # No store work at all: what HTTP alone costs with this server and client.
        "/health": lambda rng: get("/health", {}) and "/health",
    }
    if ox_port:
        ops["oxigraph"] = lambda rng: get("/query", {"query": lookup(rng)}, to=ox_port) and "oxigraph"

    def mixed(rng):
        if has_index and rng.random() < args.search_share:
            get("/search", {"kind": "triples", "q": rng.choice(searches), "k": 5})
            return "search"
        get("/sparql", {"query": lookup(rng)})
        return "sparql"

    try:
        _wait_ready(port, servers[0])
        if ox_port:
            _wait_ready(ox_port, servers[1], path="/query?query=ASK%7B%7D")
        if has_index:  # the encoder loads on the first /search: not part of the figures
            t0 = time.perf_counter()
            get("/search", {"kind": "triples", "q": searches[0], "k": 5})
            print(f"first /search (loads the encoder): {time.perf_counter() - t0:.1f} s")
        rates: dict[str, list[float]] = {name: [] for name in ops}
        p99: dict[str, list[float]] = {name: [] for name in ops}
        cpu: dict[str, list[float]] = {name: [] for name in ops}  # server CPU µs per request
        errors = 0
        for round_ in range(args.repeat):
            names = list(ops) if round_ % 2 == 0 else list(reversed(ops))
            line = []
            for name in names:
                server = servers[1] if name == "oxigraph" else servers[0]
                before = _cpu_seconds(server.pid)
                tally = _run_for(args.phase, args.clients, ops[name])
                spent = _cpu_seconds(server.pid) - before
                errors += tally.errors
                rates[name].append(tally.count / tally.seconds)
                p99[name].append(tally.p(99))
                cpu[name].append(spent / max(1, tally.count) * 1e6)
                line.append(f"{name} {rates[name][-1]:.0f}/s")
            print(f"round {round_ + 1}: " + ", ".join(line) + f"  (load average {_load()})")
        mix = _run_for(args.seconds, args.clients, mixed)
    finally:
        for server in servers:
            _stop_server(server)
        store.close()

    print(f"throughput, medians of {args.repeat} rounds of {args.phase:.0f} s "
          f"(ratio = the same round's rate / direct Store.query's; CPU = the server's, per request):")
    ratios = {name: statistics.median(r / d for r, d in zip(rates[name], rates["direct"])) for name in ops}
    for name in ops:
        target = "  (target >= 0.6)" if name == "/sparql" else ""
        print(f"  {name:8s} {statistics.median(rates[name]):8.1f}/s  p99 {statistics.median(p99[name]):6.1f} ms"
              + ("" if name == "direct" else f"  CPU {statistics.median(cpu[name]):5.0f} µs"
                                             f"  ratio {ratios[name]:.2f}{target}"))
    total = mix.count + mix.errors
    print(f"mixed, {args.clients} clients, {mix.seconds:.0f} s: {total / mix.seconds:.1f} requests/s, "
          f"errors {mix.errors + errors} (target 0)")
    for kind in sorted(mix.latencies):
        lat = mix.latencies[kind]
        print(f"  {kind:7s} {len(lat):6d} requests  p50 {_pct(lat, 50):7.1f} ms  p99 {_pct(lat, 99):7.1f} ms"
              + ("  (target p99 < 200 ms)" if kind == "sparql" else ""))
    if mix.first_error:
        print(f"  first error: {mix.first_error}")
    lookups_p99 = _pct(mix.latencies.get("sparql", []), 99)
    print(f"/sparql: ratio {ratios['/sparql']:.2f} of direct Store.query (target >= 0.6), p99 of 1-hop lookups "
          f"{lookups_p99:.1f} ms (target < 200 ms); load average {_load()}")
    return 0 if mix.errors == 0 and errors == 0 else 1


class _Tally:
    def __init__(self):
        self.latencies: dict[str, list[float]] = {}
        self.errors = 0
        self.first_error: str | None = None
        self.seconds = 0.0
        self.lock = threading.Lock()

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def p(self, q: float) -> float:
        return _pct([x for v in self.latencies.values() for x in v], q)


def _run_for(seconds: float, clients: int, op) -> _Tally:
    """``clients`` threads call ``op(rng)`` (returns a kind) until ``seconds`` pass."""
    tally = _Tally()
    deadline = time.monotonic() + seconds

    def worker(seed: int):
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                kind = op(rng)
            except Exception as exc:  # noqa: BLE001 - counted and shown, the load goes on
                with tally.lock:
                    tally.errors += 1
                    tally.first_error = tally.first_error or f"{type(exc).__name__}: {exc}"
                continue
            ms = (time.perf_counter() - started) * 1000
            with tally.lock:
                tally.latencies.setdefault(kind, []).append(ms)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 60)
    tally.seconds = time.monotonic() - started
    return tally


def keep_alive_get(local: threading.local, port: int, path: str, params: dict) -> bytes:
    """GET ``path`` on 127.0.0.1:``port`` over this thread's keep-alive connection (one per
    client thread and server), through the standard library's http.client: it spends less
    of the two cores than httpx would. Anything but 200 raises."""
    conns = local.__dict__.setdefault("conns", {})
    conn = conns.get(port) or conns.setdefault(port, http.client.HTTPConnection("127.0.0.1", port, timeout=30))
    conn.request("GET", f"{path}?{urlencode(params)}", headers={"Accept": "application/sparql-results+json"})
    response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: HTTP {response.status}: {body[:200]!r}")
    return body


def raw_get(local: threading.local, port: int, path: str, params: dict) -> bytes:
    """The same GET as :func:`keep_alive_get`, over this thread's own socket, reading no
    more of the answer than its status, its length (Content-Length, or chunks as Oxigraph's
    server streams them) and its body."""
    conns = local.__dict__.setdefault("raw", {})
    conn = conns.get(port)
    if conn is None:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = conns[port] = _RawReader(sock)
    conn.sock.sendall(f"GET {path}?{urlencode(params)} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Accept: application/sparql-results+json\r\n\r\n".encode())
    head = conn.until(b"\r\n\r\n").decode("latin-1")
    status = int(head[9:12])
    fields = {name.strip().lower(): value.strip() for name, _, value in
              (line.partition(":") for line in head.split("\r\n")[1:])}
    if "content-length" in fields:
        body = conn.exactly(int(fields["content-length"]))
    elif fields.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while size := int(conn.until(b"\r\n").split(b";")[0], 16):
            parts.append(conn.exactly(size))
            conn.exactly(2)
        conn.until(b"\r\n")  # no trailers: the empty line after the last chunk
        body = b"".join(parts)
    else:
        raise RuntimeError(f"{path}: HTTP {status} without a length")
    if status != 200:
        raise RuntimeError(f"{path}: HTTP {status}: {body[:200]!r}")
    return body


class _RawReader:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.data = b""

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.data += chunk

    def until(self, mark: bytes) -> bytes:
        while (end := self.data.find(mark)) < 0:
            self._more()
        out, self.data = self.data[:end], self.data[end + len(mark):]
        return out

    def exactly(self, n: int) -> bytes:
        while len(self.data) < n:
            self._more()
        out, self.data = self.data[:n], self.data[n:]
        return out


def _direct_lookup(store, query: str) -> str:
    import pyoxigraph as ox

    store.query(query).serialize(format=ox.QueryResultsFormat.JSON)  # what the server sends
    return "direct"


def _subjects(store, n: int) -> list[str]:
    rows = store.query("SELECT DISTINCT ?s WHERE { ?s ?p ?o } LIMIT 20000")
    subjects = sorted(r["s"].value for r in rows)
    return random.Random(0).sample(subjects, min(n, len(subjects)))


def _label(iri: str) -> str:
    return iri.rsplit("/", 1)[-1].replace("_", " ")


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[min(98, max(0, int(q) - 1))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(store: str, port: int, *, workers: int = 1, http: str = "uvicorn") -> subprocess.Popen:
    code = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1"}
    extra = (["--workers", str(workers)] if workers != 1 else []) + (["--http", http] if http != "uvicorn" else [])
    return subprocess.Popen([sys.executable, "-c", code, "serve", store, "--host", "127.0.0.1", "--port", str(port),
                             "--log-level", "warning", *extra], env=env)


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` and its descendants (worker processes),
    from /proc; 0 where there is none (the figure then reads 0)."""
    stats = {}
    for path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        stats[int(path.parent.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))  # ppid, utime + stime
    tree, total = {pid}, 0
    for child, (parent, _) in sorted(stats.items()):  # parents are older, so mostly listed first
        if parent in tree:
            tree.add(child)
    for member in tree:
        total += stats.get(member, (0, 0))[1]
    return total / os.sysconf("SC_CLK_TCK")


def _wait_ready(port: int, server: subprocess.Popen, *, path: str = "/health") -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"a server exited with {server.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:  # not listening yet
            time.sleep(0.2)
    raise SystemExit("a server did not start within 60 s")


def _stop_server(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())

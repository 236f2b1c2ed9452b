"""Benchmark: `kgstore serve` under a bounded load, on loopback only.

Starts `kgstore serve STORE` on 127.0.0.1 (a free port) in a subprocess, then in the same
run:

1. direct: ``--clients`` threads run 1-hop SPARQL lookups through ``Store.query`` (results
   written as SPARQL JSON, as the server sends them) for ``--phase`` seconds;
2. /sparql: as many HTTP clients (httpx, keep-alive) run the same lookups through the
   server for ``--phase`` seconds; the ratio of the two throughputs is printed
   (target >= 0.5);
   then the same clients on /health, which does no store work: the HTTP ceiling of this
   server and client, for scale;
3. mixed: the clients run 1-hop lookups and /search (kind=triples) mixed (``--search-share``)
   for ``--seconds`` seconds; requests/s, p50/p99 latency per kind and errors are printed
   (targets: p99 of 1-hop lookups under 200 ms, 0 errors).

With ``--oxigraph BINARY`` (from ``pip install oxigraph``), the same lookups also go through
``oxigraph serve-read-only`` on the same store, for scale.

Everything stops by itself: each phase is time-bounded and the server is stopped at the end
(killed if it does not stop within 10 s).

    python bench/serve.py --store /work/stores/metaqa-serve     # a MetaQA store, indexed
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
    ap.add_argument("--phase", type=float, default=10.0, help="length of each throughput phase")
    ap.add_argument("--search-share", type=float, default=0.2, help="share of /search requests in the mix")
    ap.add_argument("--entities", type=int, default=500, help="distinct subjects to look up")
    ap.add_argument("--oxigraph", metavar="BINARY",
                    help="also time `oxigraph serve-read-only` (the `oxigraph` PyPI package's binary) on the "
                         "same store and lookups, for scale")
    args = ap.parse_args()

    import httpx

    from kgstore import Store

    with Store.open(args.store, read_only=True) as store:
        subjects = _subjects(store, args.entities)
        has_index = (Path(args.store) / "index" / "triples.hnsw").is_file()
        print(f"store {args.store}: {store.triple_count():,} triples; {len(subjects)} subjects to look up; "
              f"load average {_load()}")
        direct = _run_for(args.phase, args.clients, lambda rng: _direct_lookup(store, rng.choice(subjects)))
    print(f"direct Store.query:  {direct.count / direct.seconds:8.1f} queries/s "
          f"(p50 {direct.p(50):.1f} ms, p99 {direct.p(99):.1f} ms, {args.clients} threads, {direct.seconds:.0f} s)")

    port = _free_port()
    server = _start_server(args.store, port)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30, limits=httpx.Limits(max_connections=args.clients * 2)) as client:
            _wait_ready(client, server)
            searches = [_label(s) for s in subjects]
            if has_index:  # the encoder loads on the first /search: not part of the figures
                t0 = time.perf_counter()
                client.get("/search", params={"kind": "triples", "q": searches[0], "k": 5}).raise_for_status()
                print(f"first /search (loads the encoder): {time.perf_counter() - t0:.1f} s")

            # One keep-alive connection per client thread, through the standard library's
            # http.client: it spends less of the two cores than httpx, which the server needs.
            local = threading.local()

            def get(path: str, params: dict) -> bytes:
                conn = getattr(local, "conn", None)
                if conn is None:
                    conn = local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", f"{path}?{urlencode(params)}",
                             headers={"Accept": "application/sparql-results+json"})
                response = conn.getresponse()
                body = response.read()
                if response.status != 200:
                    raise RuntimeError(f"{path}: HTTP {response.status}: {body[:200]!r}")
                return body

            def sparql(rng):
                get("/sparql", {"query": ONE_HOP.format(s=rng.choice(subjects))})
                return "sparql"

            def mixed(rng):
                if has_index and rng.random() < args.search_share:
                    get("/search", {"kind": "triples", "q": rng.choice(searches), "k": 5})
                    return "search"
                return sparql(rng)

            served = _run_for(args.phase, args.clients, sparql)
            ratio = (served.count / served.seconds) / (direct.count / direct.seconds)
            print(f"/sparql over HTTP:   {served.count / served.seconds:8.1f} queries/s "
                  f"(p50 {served.p(50):.1f} ms, p99 {served.p(99):.1f} ms, errors {served.errors}); "
                  f"ratio to direct {ratio:.2f} (target >= 0.5)")
            # The same clients on /health (no store work): what HTTP alone costs in this stack.
            bare = _run_for(args.phase, args.clients, lambda rng: get("/health", {}) and "health")
            print(f"/health over HTTP:   {bare.count / bare.seconds:8.1f} requests/s "
                  f"(the HTTP ceiling of this server and client; ratio to direct "
                  f"{(bare.count / bare.seconds) / (direct.count / direct.seconds):.2f})")
            mix = _run_for(args.seconds, args.clients, mixed)
    finally:
        _stop_server(server)
    if args.oxigraph:
        _time_oxigraph(args, subjects, direct)
    total = mix.count + mix.errors
    print(f"mixed, {args.clients} clients, {mix.seconds:.0f} s: {total / mix.seconds:.1f} requests/s, "
          f"errors {mix.errors} (target 0)")
    for kind in sorted(mix.latencies):
        lat = mix.latencies[kind]
        print(f"  {kind:7s} {len(lat):6d} requests  p50 {_pct(lat, 50):7.1f} ms  p99 {_pct(lat, 99):7.1f} ms"
              + ("  (target p99 < 200 ms)" if kind == "sparql" else ""))
    if mix.first_error:
        print(f"  first error: {mix.first_error}")
    print(f"load average {_load()}")
    return 0 if mix.errors == 0 and served.errors == 0 else 1


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


def _time_oxigraph(args, subjects: list[str], direct: "_Tally") -> None:
    """The same lookups through Oxigraph's own (Rust) server on the same store."""
    port = _free_port()
    server = subprocess.Popen([args.oxigraph, "serve-read-only", "--location", str(Path(args.store) / "oxigraph"),
                               "--bind", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    local = threading.local()

    def lookup(rng):
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        query = ONE_HOP.format(s=rng.choice(subjects))
        conn.request("GET", f"/query?{urlencode({'query': query})}",
                     headers={"Accept": "application/sparql-results+json"})
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {body[:200]!r}")
        return "oxigraph"

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("oxigraph serve-read-only did not start")
                    return
                time.sleep(0.2)
        tally = _run_for(args.phase, args.clients, lookup)
        print(f"oxigraph serve:      {tally.count / tally.seconds:8.1f} queries/s "
              f"(p50 {tally.p(50):.1f} ms, p99 {tally.p(99):.1f} ms, errors {tally.errors}); "
              f"ratio to direct {(tally.count / tally.seconds) / (direct.count / direct.seconds):.2f}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _direct_lookup(store, subject: str) -> str:
    store.query(ONE_HOP.format(s=subject)).serialize(format=__import__("pyoxigraph").QueryResultsFormat.JSON)
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


def _start_server(store: str, port: int) -> subprocess.Popen:
    code = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", code, "serve", store, "--host", "127.0.0.1", "--port", str(port),
                             "--log-level", "warning"], env=env)


def _wait_ready(client, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if client.get("/health").status_code == 200:
                return
        except Exception:  # noqa: BLE001 - not listening yet
            time.sleep(0.2)
    raise SystemExit("the server did not start within 60 s")


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

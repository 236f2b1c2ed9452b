"""Soak: `kgstore serve` under mixed load for a long while, on loopback only.

Starts `kgstore serve` on 127.0.0.1 (a free port) in a subprocess, over a copy of the
store (so the ingest below never touches the original), and runs ``--clients`` loopback
clients for ``--minutes``:

* the load clients (one keep-alive connection each, as in ``bench/serve.py``, whose
  server and percentile helpers this reuses) draw from a mix of 1-hop SPARQL lookups,
  a 2-hop SPARQL query, /search, /link and /entity;
* with ``--ask-every S`` one of the clients is an asker instead: it POSTs a question to
  /ask (the store's configured model: the real one), waits for the answer, sleeps S
  seconds, and asks again;
* at ``--ingest-at`` minutes another process ingests a second file into the store
  (``--second``; by default a generated TSV of ``--second-lines`` lines), and when it is
  done the soak POSTs /reload, so the rest runs on the new snapshot.

Every minute it records, per endpoint, the requests, throughput and p50/p99 latency, the
errors, the server's RSS (sampled every 5 s) and the load average. At the end it prints
a table, writes all of it as JSON (``--out``) and checks three targets, each printed as
PASS or FAIL:

1. no errors: every answer is 200, but for the documented 503 of a query past its
   time limit (counted apart);
2. the server's RSS after the first 2 minutes grows by no more than 10 % over the rest
   (n/a for runs of 3 minutes or less);
3. the p99 latency of 1-hop lookups stays under 200 ms in every minute.

The exit status is 1 if a target fails, 0 otherwise. Everything stops by itself: the
clients stop at the deadline, the ingest is waited for, the server is stopped (killed if
it does not stop within 10 s) and the copy of the store is removed (unless ``--keep``).

    python bench/soak.py --minutes 20 --clients 8 --ask-every 45 --out soak.json
    python bench/soak.py --store /work/stores/metaqa-serve --minutes 20 --ask-every 45 --out soak.json
"""
from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve as serve_bench  # noqa: E402  (bench/serve.py: the server and percentile helpers)

REPO = serve_bench.REPO
SAMPLE = REPO / "data" / "sample-wikidata.json"
ONE_HOP = serve_bench.ONE_HOP
TWO_HOP = "SELECT ?p1 ?m ?p2 ?o WHERE {{ <{s}> ?p1 ?m . ?m ?p2 ?o }} LIMIT 100"
# Share of each kind in the load clients' mix.
MIX = {"sparql-1hop": 0.50, "sparql-2hop": 0.10, "search": 0.15, "link": 0.10, "entity": 0.15}
QUESTIONS = ("Which countries does the Andes cover?", "What is the highest point of the Himalayas?",
             "In which country is Mount Everest?", "Which mountain range is Aconcagua in?")
RSS_GROWTH_LIMIT = 0.10
P99_LIMIT_MS = 200.0
WARMUP_MINUTES = 2  # RSS growth is measured from the end of this minute


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", help="an existing store to serve (copied first); without it, one is built from "
                                    "--sample (ingested and indexed)")
    ap.add_argument("--sample", default=str(SAMPLE), help="the Wikidata JSON file to build the store from")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=8, help="loopback clients, the asker included")
    ap.add_argument("--ask-every", type=float, default=0.0, metavar="S",
                    help="one client asks /ask (the store's real model), then waits S seconds; 0: no /ask")
    ap.add_argument("--ask-method", default="io", help="the QA method of the questions")
    ap.add_argument("--ingest-at", type=float, default=5.0, metavar="MINUTE",
                    help="when to ingest the second file and then POST /reload; negative: never")
    ap.add_argument("--second", help="the second file to ingest (default: a generated TSV)")
    ap.add_argument("--second-format", default="tsv")
    ap.add_argument("--second-lines", type=int, default=20_000, help="lines of the generated TSV")
    ap.add_argument("--entities", type=int, default=500, help="distinct subjects to look up")
    ap.add_argument("--out", help="write the records and the verdict here, as JSON")
    ap.add_argument("--workdir", help="where to put the store's copy (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    if args.clients < 1 or args.minutes <= 0 or (args.ask_every > 0 and args.clients < 2):
        ap.error("--minutes must be > 0 and --clients >= 1 (>= 2 with --ask-every)")

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="kgstore-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        report = run(args, workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print_report(report)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
        print(f"records written to {args.out}")
    return 0 if all(t["verdict"] != "FAIL" for t in report["targets"].values()) else 1


# -- the run ---------------------------------------------------------------------------------------------
@dataclass
class Minute:
    """What one minute of the run saw."""
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    time_limits: int = 0  # documented 503s of queries past their time limit
    rss_mb: list[float] = field(default_factory=list)
    first_errors: list[str] = field(default_factory=list)


class Recorder:
    """Per-minute records, shared by the client threads."""

    def __init__(self, minutes: int):
        self.started = time.monotonic()
        self.minutes = [Minute() for _ in range(minutes)]
        self.lock = threading.Lock()

    def _minute(self) -> Minute:
        index = int((time.monotonic() - self.started) // 60)
        return self.minutes[min(index, len(self.minutes) - 1)]

    def ok(self, kind: str, ms: float) -> None:
        with self.lock:
            self._minute().latencies.setdefault(kind, []).append(ms)

    def error(self, kind: str, what: str) -> None:
        with self.lock:
            minute = self._minute()
            minute.errors[kind] = minute.errors.get(kind, 0) + 1
            if len(minute.first_errors) < 5:
                minute.first_errors.append(f"{kind}: {what}")

    def time_limit(self) -> None:
        with self.lock:
            self._minute().time_limits += 1

    def rss(self, mb: float) -> None:
        with self.lock:
            self._minute().rss_mb.append(mb)


class Client:
    """One keep-alive HTTP connection to the server (http.client: cheaper on the shared
    cores than httpx)."""

    def __init__(self, port: int, timeout: float = 60.0):
        self.port = port
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, bytes]:
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers=headers or {})
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A keep-alive connection the server closed while idle: one retry on a new one.
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def run(args, workdir: Path) -> dict:
    minutes = math.ceil(args.minutes)
    seconds = args.minutes * 60
    store = workdir / "store"
    if args.store:
        print(f"copying {args.store} to {store}")
        shutil.copytree(args.store, store)
    else:
        build_store(Path(args.sample), store)
    targets = load_targets(store, args.entities)
    second = Path(args.second) if args.second else write_second_file(workdir / "second.tsv", args.second_lines)
    port = serve_bench._free_port()
    server = serve_bench._start_server(str(store), port)
    report: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "store": args.store or args.sample,
                    "minutes": args.minutes, "clients": args.clients, "ask_every_s": args.ask_every,
                    "ask_method": args.ask_method, "subjects": len(targets.subjects),
                    "load_average_start": os.getloadavg()[0]}
    try:
        serve_bench._wait_ready(port, server)
        warm(port, targets)
        recorder = Recorder(minutes)
        deadline = time.monotonic() + seconds
        stop = threading.Event()
        threads = [threading.Thread(target=rss_sampler, args=(server.pid, recorder, stop), daemon=True)]
        load_clients = args.clients - (1 if args.ask_every > 0 else 0)
        threads += [threading.Thread(target=load_client, args=(port, targets, recorder, deadline, seed))
                    for seed in range(load_clients)]
        if args.ask_every > 0:
            threads.append(threading.Thread(target=asker, args=(port, args, recorder, deadline)))
        ingest = {}
        if args.ingest_at >= 0 and args.ingest_at * 60 < seconds:
            threads.append(threading.Thread(target=ingest_then_reload,
                                            args=(store, second, args.second_format, port, recorder,
                                                  args.ingest_at * 60, ingest)))
        load_by_minute = []
        threads.append(threading.Thread(target=load_sampler, args=(recorder, deadline, load_by_minute),
                                        daemon=True))
        for thread in threads:
            thread.start()
        for thread in threads:
            if not thread.daemon:
                thread.join(timeout=seconds + 900)  # an /ask or the ingest may still run at the deadline
        stop.set()
        health = final_health(port)
    finally:
        serve_bench._stop_server(server)
    report.update(summarize(recorder, load_by_minute, seconds))
    report["ingest"] = ingest
    report["health_at_end"] = health
    report["load_average_end"] = os.getloadavg()[0]
    report["targets"] = verdicts(report, minutes)
    return report


# -- setup ---------------------------------------------------------------------------------------------------
def kgstore_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`kgstore ARGS` in a child process (as bench/serve.py starts the server)."""
    code = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, check=check, capture_output=True,
                          text=True, timeout=1800)


def build_store(sample: Path, store: Path) -> None:
    started = time.perf_counter()
    kgstore_cli("init", str(store))
    kgstore_cli("ingest", str(store), "wikidata-json", str(sample))
    kgstore_cli("index", str(store))
    print(f"built {store} from {sample} (ingested and indexed) in {time.perf_counter() - started:.0f} s")


@dataclass
class Targets:
    subjects: list[str]
    texts: list[str]  # labels: what /search and /link are asked


def load_targets(store: Path, n: int) -> Targets:
    """Subjects to look up and labels to search for, read from the store before the
    server starts (then closed: nothing but the server and the ingest holds it)."""
    from kgstore import Store

    with Store.open(store, read_only=True) as s:
        subjects = serve_bench._subjects(s, n)
        rows = s.query("SELECT ?l WHERE { ?s rdfs:label ?l } LIMIT 5000")
        texts = sorted({r["l"].value for r in rows})
    texts = texts or [serve_bench._label(iri) for iri in subjects]
    return Targets(subjects, random.Random(0).sample(texts, min(len(texts), n)))


def write_second_file(path: Path, lines: int) -> Path:
    """A TSV of ``lines`` facts about new entities (subject, relation, object), for the
    ingest that runs during the soak."""
    rng = random.Random(1)
    relations = ("located in", "part of", "neighbour of", "named after", "crossed by")
    with path.open("w") as f:
        for i in range(lines):
            f.write(f"Soak place {i}\t{rng.choice(relations)}\tSoak place {rng.randrange(lines)}\n")
    return path


def warm(port: int, targets: Targets) -> None:
    """Load the encoder before the clock starts (the first /search loads it)."""
    started = time.perf_counter()
    status, body = Client(port, timeout=300).request("GET", "/search?" + urlencode({"q": targets.texts[0], "k": 5}))
    print(f"first /search (loads the encoder): HTTP {status} in {time.perf_counter() - started:.1f} s")


# -- the clients ----------------------------------------------------------------------------------------------
def load_client(port: int, targets: Targets, recorder: Recorder, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    client = Client(port)
    kinds, weights = zip(*MIX.items())
    json_accept = {"Accept": "application/sparql-results+json"}
    while time.monotonic() < deadline:
        kind = rng.choices(kinds, weights)[0]
        if kind in ("sparql-1hop", "sparql-2hop"):
            query = (ONE_HOP if kind == "sparql-1hop" else TWO_HOP).format(s=rng.choice(targets.subjects))
            path, headers = "/sparql?" + urlencode({"query": query}), json_accept
        elif kind == "search":
            path, headers = "/search?" + urlencode({"q": rng.choice(targets.texts), "k": 5}), None
        elif kind == "link":
            path, headers = "/link?" + urlencode({"q": rng.choice(targets.texts), "k": 5}), None
        else:
            path, headers = "/entity/" + quote(rng.choice(targets.subjects), safe="") + "?limit=50", None
        call(client, recorder, kind, "GET", path, headers=headers)
    client.close()


def asker(port: int, args, recorder: Recorder, deadline: float) -> None:
    """One client that asks the real model a question, waits for the answer, then sleeps."""
    client = Client(port, timeout=900)  # questions queue for the one model; the first loads it
    rng = random.Random(99)
    while time.monotonic() < deadline:
        body = json.dumps({"question": rng.choice(QUESTIONS), "method": args.ask_method}).encode()
        call(client, recorder, "ask", "POST", "/ask", body=body, headers={"Content-Type": "application/json"})
        time.sleep(min(args.ask_every, max(0.0, deadline - time.monotonic())))
    client.close()


def call(client: Client, recorder: Recorder, kind: str, method: str, path: str, *, body: bytes | None = None,
         headers: dict | None = None) -> None:
    started = time.perf_counter()
    try:
        status, text = client.request(method, path, body=body, headers=headers)
    except Exception as exc:  # noqa: BLE001 - a failed request is a record, the load goes on
        client.close()
        recorder.error(kind, f"{type(exc).__name__}: {exc}")
        return
    ms = (time.perf_counter() - started) * 1000
    if status == 200:
        recorder.ok(kind, ms)
    elif status == 503 and b"time limit" in text:
        recorder.time_limit()
    else:
        recorder.error(kind, f"HTTP {status}: {text[:200]!r}")


def ingest_then_reload(store: Path, second: Path, fmt: str, port: int, recorder: Recorder, at_s: float,
                       out: dict) -> None:
    """At ``at_s`` seconds: `kgstore ingest` the second file (another process, the store's
    one writer), then POST /reload."""
    time.sleep(max(0.0, at_s - (time.monotonic() - recorder.started)))
    out["started_s"] = round(time.monotonic() - recorder.started, 1)
    t0 = time.perf_counter()
    done = kgstore_cli("ingest", str(store), fmt, str(second), check=False)
    out["ingest_s"] = round(time.perf_counter() - t0, 1)
    out["ingest_exit"] = done.returncode
    if done.returncode != 0:
        recorder.error("ingest", done.stderr.strip()[-300:])
        return
    client = Client(port, timeout=120)
    t0 = time.perf_counter()
    status, body = client.request("POST", "/reload")
    out["reload_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    out["reload"] = json.loads(body) if status == 200 else body.decode(errors="replace")[:300]
    if status != 200:
        recorder.error("reload", f"HTTP {status}: {body[:200]!r}")
    client.close()


def rss_sampler(pid: int, recorder: Recorder, stop: threading.Event) -> None:
    while not stop.wait(5.0):
        mb = rss_mb(pid)
        if mb is not None:
            recorder.rss(mb)


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def load_sampler(recorder: Recorder, deadline: float, out: list) -> None:
    """The 1-minute load average at the end of each minute (the machine may be shared)."""
    while time.monotonic() < deadline:
        time.sleep(min(60.0 - (time.monotonic() - recorder.started) % 60, max(0.0, deadline - time.monotonic())))
        out.append(round(os.getloadavg()[0], 2))


def final_health(port: int) -> bool:
    try:
        status, body = Client(port, timeout=30).request("GET", "/health")
        return status == 200 and json.loads(body).get("status") == "ok"
    except Exception:  # noqa: BLE001 - a server that does not answer is the finding
        return False


# -- the figures -------------------------------------------------------------------------------------------
def summarize(recorder: Recorder, load_by_minute: list[float], seconds: float) -> dict:
    records = []
    for i, minute in enumerate(recorder.minutes):
        length = min(60.0, seconds - 60 * i)  # the last minute may be a part of one
        endpoints = {kind: {"requests": len(lat), "per_s": round(len(lat) / length, 2),
                            "p50_ms": round(serve_bench._pct(lat, 50), 1),
                            "p99_ms": round(serve_bench._pct(lat, 99), 1)}
                     for kind, lat in sorted(minute.latencies.items())}
        records.append({"minute": i + 1, "endpoints": endpoints, "errors": dict(minute.errors),
                        "time_limit_503s": minute.time_limits, "first_errors": minute.first_errors,
                        "rss_mb": round(minute.rss_mb[-1], 1) if minute.rss_mb else None,
                        "rss_max_mb": round(max(minute.rss_mb), 1) if minute.rss_mb else None,
                        "load_average": load_by_minute[i] if i < len(load_by_minute) else None})
    return {"per_minute": records}


def verdicts(report: dict, minutes: int) -> dict:
    records = report["per_minute"]
    errors = sum(sum(r["errors"].values()) for r in records)
    out = {"errors": {"value": errors, "verdict": "PASS" if errors == 0 and report["health_at_end"] else "FAIL",
                      "target": "0 errors other than documented time-limit 503s; /health OK at the end",
                      "time_limit_503s": sum(r["time_limit_503s"] for r in records)}}
    rss = [r["rss_mb"] for r in records if r["rss_mb"] is not None]
    if minutes > WARMUP_MINUTES + 1 and len(rss) > WARMUP_MINUTES:
        base = records[WARMUP_MINUTES - 1]["rss_mb"]
        peak = max(r["rss_max_mb"] for r in records[WARMUP_MINUTES:] if r["rss_max_mb"] is not None)
        growth = (peak - base) / base
        out["rss_growth"] = {"value": round(growth * 100, 1), "base_mb": base, "peak_mb": peak,
                             "verdict": "PASS" if growth <= RSS_GROWTH_LIMIT else "FAIL",
                             "target": f"RSS after minute {WARMUP_MINUTES} grows <= {RSS_GROWTH_LIMIT:.0%}"}
    else:
        out["rss_growth"] = {"value": None, "verdict": "n/a",
                             "target": f"needs more than {WARMUP_MINUTES + 1} minutes"}
    p99s = [r["endpoints"].get("sparql-1hop", {}).get("p99_ms") for r in records]
    worst = max((p for p in p99s if p is not None), default=None)
    out["p99_1hop"] = {"value": worst, "per_minute": p99s,
                       "verdict": "PASS" if worst is not None and worst < P99_LIMIT_MS else "FAIL",
                       "target": f"p99 of 1-hop lookups < {P99_LIMIT_MS:.0f} ms in every minute"}
    return out


def print_report(report: dict) -> None:
    kinds = ["sparql-1hop", "sparql-2hop", "search", "link", "entity", "ask"]
    print(f"\nsoak {report['date']}: {report['minutes']} min, {report['clients']} clients, store {report['store']}; "
          f"load average {report['load_average_start']:.2f} at the start, {report['load_average_end']:.2f} at the end")
    print("per minute: requests/s and p99 ms per endpoint, errors, time-limit 503s, server RSS, load average")
    header = (f"{'min':>3} " + " ".join(f"{k:>17}" for k in kinds)
              + f" {'err':>4} {'503t':>4} {'RSS MB':>7} {'load':>5}")
    print(header)
    for r in report["per_minute"]:
        cells = []
        for k in kinds:
            e = r["endpoints"].get(k)
            if not e:
                cells.append(f"{'-':>17}")
            elif k == "ask":  # a few a minute: the count says more than a rate
                cells.append(f"{e['requests']:5d} asked {e['p99_ms']:5.0f}ms")
            else:
                cells.append(f"{e['per_s']:7.1f}/s {e['p99_ms']:6.0f}ms")
        print(f"{r['minute']:>3} " + " ".join(cells) + f" {sum(r['errors'].values()):>4} {r['time_limit_503s']:>4} "
              f"{r['rss_mb'] or float('nan'):>7.1f} {r['load_average'] or float('nan'):>5.2f}")
        for line in r["first_errors"]:
            print(f"      error: {line}")
    if report.get("ingest"):
        print(f"ingest of the second file: {report['ingest']}")
    print(f"/health at the end: {'OK' if report['health_at_end'] else 'NO ANSWER'}")
    for name, target in report["targets"].items():
        print(f"{target['verdict']:>4}  {name}: {target['value']}  ({target['target']})")


if __name__ == "__main__":
    sys.exit(main())

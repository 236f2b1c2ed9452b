"""Ingest benchmark: kgstore's Wikidata JSON ingest against pyoxigraph's raw bulk_load.

    python bench/ingest.py                      # N = 50,000, 100,000 and 200,000 entities
    python bench/ingest.py --entities 100000 --gzip --keep bench/out/100k

In one run it

1. generates, deterministically, a Wikidata JSON dump of N entities shaped like the real
   samples in ../shared/data/formats/wikidata_json/ (see bench/_wikidata_gen.py), and the
   N-Triples a correct truthy, English-only load must produce (written by the generator
   from what it generated, not by kgstore's loader);
2. times (a) ``kgstore.ingest(store, "wikidata-json", dump)`` into a fresh store, and
   (b) ``pyoxigraph.Store(dir).bulk_load(path=expected.nt)`` into a fresh on-disk store,
   each in its own subprocess, sampling the process tree's resident memory (the sum over
   the process and its children, e.g. the parsing worker) to report peak RSS;
3. checks (a)'s store: its triple count equals the number of distinct expected triples,
   the catalog holds one statements row per expected wdt: fact, and a sample of expected
   triples is there (ASK) while a sample of triples a correct load must not give
   (deprecated-rank values, non-English labels) is not.

It prints triples/s for both, the ratio a/b, peak RSS and CPU seconds (split between
the committing process and the parsing worker), and exits non-zero when a check fails.
With several sizes it then prints a summary (is peak RSS flat as N grows?) and, from
the rates at the largest N, an estimate for a full dump of 110M entities on this
machine and on 16 cores. ``--keep DIR`` keeps the generated files and stores (and reuses the
generated files when a later run asks for the same N, seed and compression). On a machine
shared with other work, ``--repeat R`` times each job R times, alternating, and keeps
each one's fastest run; the CPU seconds show the cost when the wall clock is noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _wikidata_gen as gen  # noqa: E402

SEED = 20240501


# -- child processes: the two timed jobs -------------------------------------------------
def _cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children (the parsing worker)."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


def _child_ingest(store_dir: str, dump: str) -> dict:
    import resource

    from kgstore import Store, ingest, limit_malloc_arenas
    from kgstore.records import LoadOptions

    limit_malloc_arenas()  # as `kgstore ingest` does, before the store opens
    Store.init(store_dir).close()
    cpu = _cpu_seconds()
    own = resource.getrusage(resource.RUSAGE_SELF)
    main_thread = time.thread_time()
    started = time.perf_counter()
    with Store.open(store_dir) as store:
        summary = ingest(store, "wikidata-json", dump, options=LoadOptions(languages=("en",)))
    seconds = time.perf_counter() - started
    main_thread = time.thread_time() - main_thread
    total = _cpu_seconds() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    committing = (after.ru_utime + after.ru_stime) - (own.ru_utime + own.ru_stime)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    # This process commits; the parsing worker is its (waited-for) child. Its main thread
    # runs the loop and Oxigraph's parser; Oxigraph's other threads and DuckDB run beside it.
    return {"seconds": seconds, "cpu": total, "cpu_committing": committing, "cpu_parsing": total - committing,
            "cpu_main_thread": main_thread, "max_rss_committing_mib": after.ru_maxrss / 1024,
            "max_rss_parsing_mib": children.ru_maxrss / 1024, "status": summary.status, "counts": summary.counts}


def _child_bulk_load(ox_dir: str, nt: str) -> dict:
    import pyoxigraph as ox

    cpu = _cpu_seconds()
    started = time.perf_counter()
    store = ox.Store(ox_dir)
    store.bulk_load(path=nt, format=ox.RdfFormat.N_TRIPLES)
    store.flush()
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "cpu": _cpu_seconds() - cpu, "triples": len(store)}


CHILD_JOBS = {"ingest": _child_ingest, "bulk_load": _child_bulk_load}


# -- memory of a process tree --------------------------------------------------------------
def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
    return out


class TreeMemory(threading.Thread):
    """Samples the summed RSS of a process and its descendants (sums count pages shared
    by a forked worker twice, so this errs high)."""

    def __init__(self, pid: int, every: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak_kib = 0
        self.peak_processes = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = _descendants(self.pid)
            total = sum(_rss_kib(p) for p in pids)
            if total > self.peak_kib:
                self.peak_kib, self.peak_processes = total, len(pids)
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def run_child(job: str, *args: str) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", job, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    memory = TreeMemory(proc.pid)
    memory.start()
    out, _ = proc.communicate()
    memory.stop()
    if proc.returncode != 0:
        raise SystemExit(f"{job} failed with exit code {proc.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mib"] = memory.peak_kib / 1024
    return result


# -- generation (cached under --keep) ------------------------------------------------------
def generate(workdir: Path, entities: int, gzipped: bool) -> tuple[Path, Path, gen.GeneratedDump, float]:
    dump = workdir / ("dump.json.gz" if gzipped else "dump.json")
    nt = workdir / "expected.nt"
    meta = workdir / "generated.json"
    key = {"entities": entities, "seed": SEED, "gzip": gzipped, "generator": gen.VERSION}
    if meta.exists() and dump.exists() and nt.exists():
        saved = json.loads(meta.read_text())
        if saved.get("key") == key:
            return dump, nt, gen.GeneratedDump(**saved["result"]), 0.0
    started = time.perf_counter()
    result = gen.generate_files(entities, str(dump), str(nt), gzipped=gzipped, seed=SEED,
                                progress=lambda n: print(f"\r  generated {n:,} entities", end="", flush=True))
    seconds = time.perf_counter() - started
    print("\r", end="")
    meta.write_text(json.dumps({"key": key, "result": result.__dict__}))
    return dump, nt, result, seconds


# -- verification ----------------------------------------------------------------------------
def verify(store_dir: Path, expected: gen.GeneratedDump) -> list[str]:
    import pyoxigraph as ox

    from kgstore import Store

    problems = []
    with Store.open(store_dir, read_only=True) as store:
        count = len(store.rdf)
        if count != expected.expected_triples:
            problems.append(f"store holds {count:,} triples, expected {expected.expected_triples:,}")
        with store.catalog.connect() as con:
            facts = con.execute("SELECT count(*) FROM statements").fetchone()[0]
        if facts != expected.expected_facts:
            problems.append(f"catalog holds {facts:,} statements rows, expected {expected.expected_facts:,} wdt: facts")
        for line, want in [(s, True) for s in expected.samples] + [(a, False) for a in expected.absent]:
            triple = next(iter(ox.parse(line.encode("utf-8"), ox.RdfFormat.N_TRIPLES)))
            found = bool(store.rdf.query("ASK { ?s ?p ?o }", substitutions={
                ox.Variable("s"): triple.subject, ox.Variable("p"): triple.predicate,
                ox.Variable("o"): triple.object}))
            if found != want:
                problems.append(("missing: " if want else "must not be there: ") + line)
    return problems


# -- one size ------------------------------------------------------------------------------
def measure(workdir: Path, entities: int, gzipped: bool, repeat: int) -> dict:
    """Generate (or reuse) the dump of ``entities``, time (a) and (b), check (a)'s store."""
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"kgstore ingest benchmark: {entities:,} entities{' (gzip)' if gzipped else ''} in {workdir}")
    dump, nt, expected, gen_seconds = generate(workdir, entities, gzipped)
    print(f"  dump: {dump.stat().st_size / 2**20:,.1f} MiB on disk ({expected.json_bytes / 2**20:,.1f} MiB of JSON, "
          f"{expected.json_bytes / max(1, expected.entities):,.0f} bytes/entity); expected: "
          f"{expected.expected_triples:,} triples ({expected.expected_facts:,} wdt: facts)"
          + (f"; generated in {gen_seconds:.1f} s" if gen_seconds else "; reused"))
    a = b = None
    for attempt in range(max(1, repeat)):
        for name in ("store", "raw-oxigraph"):
            shutil.rmtree(workdir / name, ignore_errors=True)
        print(f"  (a) kgstore ingest ...  (load average {os.getloadavg()[0]:.1f})", end="", flush=True)
        ra = run_child("ingest", str(workdir / "store"), str(dump))
        print(f" {ra['seconds']:.1f} s;  (b) pyoxigraph bulk_load ... (load average {os.getloadavg()[0]:.1f})",
              end="", flush=True)
        rb = run_child("bulk_load", str(workdir / "raw-oxigraph"), str(nt))
        print(f" {rb['seconds']:.1f} s  (load average {os.getloadavg()[0]:.1f})", flush=True)
        a = ra if a is None or ra["seconds"] < a["seconds"] else a
        b = rb if b is None or rb["seconds"] < b["seconds"] else b
    problems = verify(workdir / "store", expected)

    a_rate = expected.expected_triples / a["seconds"]
    b_rate = b["triples"] / b["seconds"]
    print()
    print(f"  {'':28}{'seconds':>10}{'triples/s':>12}{'peak RSS':>12}{'CPU s':>8}")
    for name, r, rate in (("(a) kgstore ingest", a, a_rate), ("(b) pyoxigraph bulk_load", b, b_rate)):
        print(f"  {name:28}{r['seconds']:>10.1f}{rate:>12,.0f}{r['peak_rss_mib']:>9,.0f} MiB{r['cpu']:>8.1f}")
    print(f"  ratio a/b: {a_rate / b_rate:.2f}   (entities/s in (a): {expected.entities / a['seconds']:,.0f}; "
          f"CPU seconds b/a: {b['cpu'] / a['cpu']:.2f}; load average now: {os.getloadavg()[0]:.1f})")
    print(f"  (a)'s CPU seconds: {a['cpu_committing']:.1f} committing (Oxigraph, DuckDB; "
          f"{a['cpu_main_thread']:.1f} in its main thread), {a['cpu_parsing']:.1f} parsing (the worker process); "
          f"max RSS: {a['max_rss_committing_mib']:,.0f} MiB committing, {a['max_rss_parsing_mib']:,.0f} MiB parsing")
    print(f"  ingest counts: {json.dumps(a['counts'], sort_keys=True)}")
    if problems:
        print(f"  CHECK FAILED ({len(problems)} problems):")
        for p in problems[:20]:
            print(f"    {p}")
    else:
        print(f"  check: OK ({expected.expected_triples:,} triples, {len(expected.samples)} present and "
              f"{len(expected.absent)} absent triples spot-checked)")
    return {"entities": entities, "a": a, "b": b, "ratio": a_rate / b_rate, "ok": not problems,
            "json_bytes": expected.json_bytes, "load": os.getloadavg()[0]}


# -- the estimate for a full dump ------------------------------------------------------------
FULL_DUMP_ENTITIES = 110_000_000  # latest-all.json.bz2, take 110M entities
BIG_MACHINE_CORES = 16


def bz2_seconds_per_byte(sample: Path, size: int = 32 << 20) -> float:
    """CPU seconds Python's bz2 takes per decompressed byte, on the start of ``sample``."""
    import bz2
    import gzip

    with (gzip.open if sample.suffix == ".gz" else open)(sample, "rb") as f:
        data = f.read(size)
    packed = bz2.compress(data, 9)
    started = time.process_time()
    bz2.decompress(packed)
    return (time.process_time() - started) / len(data)


def estimate(result: dict, sample: Path, smallest: dict | None = None) -> None:
    """What a full dump would take, from the measured rates at the largest size.

    On this machine: the measured entities per second. On 16 cores, assuming the same
    speed per core and disk, the two processes stop sharing two cores (with each other
    and with other work), and the slower of the two sets the pace:

    - the parsing worker is one Python thread: its CPU seconds per entity;
    - the committing process runs Oxigraph's bulk load (a parsing thread and its own
      workers) and DuckDB in a thread beside it: its CPU seconds per entity spread over
      as many cores as the raw bulk_load used here (its CPU seconds over its wall-clock
      seconds), the parallelism Oxigraph showed it can reach.

    More cores never make it slower, so the estimate is at most the rate here. Its floor
    is the slower of the two single threads that cannot spread (the parsing worker, and
    the committing process's main thread), were Oxigraph's and DuckDB's threads to get
    every core they want. A .bz2 dump adds its decompression to the parsing process:
    Python's bz2 is single-threaded, so a dump decompressed first (``lbzip2 -d``,
    ``pbzip2 -d``, in parallel) or re-packed as .gz avoids most of it.
    """
    n, a, b = result["entities"], result["a"], result["b"]
    here = a["seconds"] / n
    committing, parsing = a["cpu_committing"] / n, a["cpu_parsing"] / n
    oxigraph_cores = max(1.0, b["cpu"] / b["seconds"])
    bz2_cost = bz2_seconds_per_byte(sample) * result["json_bytes"] / n
    big = min(here, max(committing / oxigraph_cores, parsing))
    floor = min(big, max(a["cpu_main_thread"] / n, parsing))
    big_bz2 = min(here + bz2_cost, max(committing / oxigraph_cores, parsing + bz2_cost))

    def hours(per_entity: float) -> str:
        return f"{per_entity * FULL_DUMP_ENTITIES / 3600:,.1f} h"

    print(f"\nEstimate for a full dump ({FULL_DUMP_ENTITIES / 1e6:.0f}M entities of this shape, rates measured at "
          f"N = {n:,}; Oxigraph's and DuckDB's cost per triple grows with the store, so these err short):")
    print(f"  this machine ({os.cpu_count()} cores, load average {result['load']:.1f}): {hours(here)} for a plain "
          f".json ({n / a['seconds']:,.0f} entities/s); reading the .bz2 directly adds about "
          f"{hours(bz2_cost)} of decompression on the parsing side")
    if smallest is not None and smallest["entities"] < n:
        def per_entity(r: dict, job: str, key: str) -> float:
            return r[job][key] / r["entities"]

        print(f"  (CPU per entity grew x{per_entity(result, 'a', 'cpu_committing') / per_entity(smallest, 'a', 'cpu_committing'):.2f} "
              f"committing, x{per_entity(result, 'a', 'cpu_parsing') / per_entity(smallest, 'a', 'cpu_parsing'):.2f} parsing "
              f"and x{per_entity(result, 'b', 'cpu') / per_entity(smallest, 'b', 'cpu'):.2f} for raw bulk_load from "
              f"N = {smallest['entities']:,} to {n:,}: a full dump costs more per entity than this)")
    pace = "committing" if committing / oxigraph_cores >= parsing else "parsing"
    print(f"  {BIG_MACHINE_CORES} cores, same speed per core: {hours(big)} for a plain .json, at most the "
          f"{hours(here)} measured here and at least {hours(floor)} (the slower single thread); the {pace} process "
          f"sets the pace: {committing * 1e3:.2f} CPU-ms per entity committing, spread over the "
          f"{oxigraph_cores:.2f} cores the raw bulk_load used here, against {parsing * 1e3:.2f} parsing; "
          f"{hours(big_bz2)} reading the .bz2 directly (bz2: {bz2_cost * 1e3:.2f} CPU-ms per entity, "
          f"on the parsing process)")


# -- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", default="50000,100000,200000", metavar="N[,N...]",
                        help="entities in the dump; several sizes, comma-separated, are measured one after "
                             "the other (default 50000,100000,200000)")
    parser.add_argument("--gzip", action="store_true", help="write and ingest a .json.gz dump")
    parser.add_argument("--keep", metavar="DIR", help="keep (and reuse) generated files and stores in DIR "
                                                      "(one subfolder per size)")
    parser.add_argument("--repeat", type=int, default=1, metavar="R",
                        help="time (a) and (b) R times each, alternating, and keep each one's fastest run "
                             "(for a machine shared with other work; default 1)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        job, *rest = args.child
        print(json.dumps(CHILD_JOBS[job](*rest)))
        return 0

    try:
        sizes = [int(x.replace("_", "")) for x in args.entities.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--entities takes numbers separated by commas, not {args.entities!r}")
    if not sizes or min(sizes) < 1:
        parser.error("--entities needs at least one size of 1 or more")
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kgstore-bench-"))
    results = []
    try:
        for n in sizes:
            workdir = base / f"{n}" if len(sizes) > 1 or not args.keep else base
            results.append(measure(workdir, n, args.gzip, args.repeat))
            print()
        if len(results) > 1:
            print("Summary (peak RSS of the ingest's process tree should stay flat as N grows):")
            print(f"  {'N':>9}{'ratio a/b':>11}{'CPU b/a':>9}{'peak RSS (a)':>14}{'check':>7}{'load':>6}")
            for r in results:
                print(f"  {r['entities']:>9,}{r['ratio']:>11.2f}{r['b']['cpu'] / r['a']['cpu']:>9.2f}"
                      f"{r['a']['peak_rss_mib']:>10,.0f} MiB{'OK' if r['ok'] else 'FAILED':>7}{r['load']:>6.1f}")
        reference = max(results, key=lambda r: r["entities"])
        reference_dir = base / f"{reference['entities']}" if len(sizes) > 1 or not args.keep else base
        estimate(reference, next(reference_dir.glob("dump.json*")), smallest=min(results, key=lambda r: r["entities"]))
        return 0 if all(r["ok"] for r in results) else 1
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

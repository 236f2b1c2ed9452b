"""Vector backends side by side: hnswlib float32 (in RAM) against usearch f16, bf16 and i8
(on disk, memory-mapped), through the index's own backend classes.

    python bench/ann_backends.py                         # clustered synthetic, N = 100,000
    python bench/ann_backends.py --data metaqa --n 20000  # real MiniLM vectors of MetaQA triples
    python bench/ann_backends.py --n 1000000             # when the machine is quiet
    python bench/ann_backends.py --backends hnswlib-f32,pgvector --n 50000   # pgvector vs hnswlib

For each backend: build time (add all, then save), peak RSS of the build, file size;
then, in a fresh process that opens the file as a search does (hnswlib loads it into RAM,
usearch maps it), 1,000 single-query searches (k = 10), twice: recall@10 against exact
search (numpy brute force over the float32 vectors) and against hnswlib's own results
(``vs_hnswlib@10``), latency p50/p99 of the second pass,
p99 of the first (``cold``: a mapped file's pages come from disk or the page cache on
first touch), and RSS after the queries (mapped pages that were touched count in RSS but
are the kernel's to drop).
Parameters are the store defaults (M 16, ef_construction 200, ef 64). Ratios are against
hnswlib in the same run. Every build and search runs in a process of its own, so one
backend's memory does not count against the next.

``pgvector`` (only when named in ``--backends``): the vectors in a Postgres table with a
pgvector HNSW index (``vector_cosine_ops``, same M and ef_construction; ``hnsw.ef_search``
= ef), through the index's own :class:`~indexer._backends_pgvector.PgVectorTable`: a
COPY, then ``CREATE INDEX`` at the save. The server is ``KGSTORE_PG_DSN`` when set, else a
``pgserver`` started in a temporary folder (Unix socket) and stopped at the end. Its RSS
columns are the client's only (the server's memory is not counted); ``disk_mb`` is the
table with its index (``pg_total_relation_size``); a search is a round trip to the server.

Data:

* ``synthetic`` (default): 384-dimensional unit vectors in 2,000 clusters (a centre plus
  Gaussian noise, nearest-neighbour cosines 0.6-0.9, as MiniLM's are), seeded; queries are
  fresh points of the same clusters.
* ``metaqa``: real all-MiniLM-L6-v2 vectors of MetaQA triple texts ("Kismet | directed by |
  William Dieterle", ../shared/data/qa/metaqa/kb_partial.txt); queries are the texts of
  1,000 other triples. N is capped by the file (134,741 lines).

Results go to bench/out/ann_backends.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DIM = 384
M, EF_CONSTRUCTION, EF, K = 16, 200, 64, 10
BACKENDS = ("hnswlib-f32", "usearch-f16", "usearch-bf16", "usearch-i8")
CHOICES = BACKENDS + ("pgvector",)


# -- data ----------------------------------------------------------------------------------
def synthetic(n: int, queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def points(count: int) -> np.ndarray:
        out = np.empty((count, DIM), np.float32)
        for start in range(0, count, 100_000):
            m = min(100_000, count - start)
            noise = rng.standard_normal((m, DIM)).astype(np.float32) * (0.9 / np.sqrt(DIM))
            block = centres[rng.integers(0, len(centres), m)] + noise
            out[start:start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
        return out

    return points(n), points(queries)


def metaqa(n: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    from indexer import Encoder

    kb = REPO.parent / "shared" / "data" / "qa" / "metaqa" / "kb_partial.txt"
    lines = list(dict.fromkeys(kb.read_text(encoding="utf-8").splitlines()))
    if n + queries > len(lines):
        raise SystemExit(f"--data metaqa has {len(lines)} distinct triples; ask for at most {len(lines) - queries}")
    texts = [" | ".join(part.replace("_", " ") if i == 1 else part for i, part in enumerate(line.split("|")))
             for line in lines[:n + queries]]
    vectors = Encoder().embed(texts, batch_size=256)
    return vectors[:n], vectors[n:]


def exact_top_k(data: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = np.empty((len(queries), k), np.int64)
    for start in range(0, len(queries), 100):
        sims = queries[start:start + 100] @ data.T
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[start:start + 100] = np.take_along_axis(top, order, axis=1)
    return out


# -- workers (each in a process of its own) ------------------------------------------------
def rss_mb(field: str = "VmRSS") -> float:
    """Resident memory now (VmRSS) or at its peak (VmHWM) of this process: ru_maxrss would
    carry over the parent's peak (the model, for --data metaqa) into the worker."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def pg_config():
    from kgstore.config import IndexConfig

    return IndexConfig(backend="pgvector", dsn=os.environ["KGSTORE_PG_DSN"], M=M, ef_construction=EF_CONSTRUCTION,
                       ef=EF)


def backend_file(name: str, path: Path):
    from indexer._backends_usearch import UsearchFile
    from indexer._hnsw import VectorFile

    if name == "pgvector":
        from indexer._backends import create_backend

        return create_backend("pgvector", path, DIM, pg_config())
    if name == "hnswlib-f32":
        return VectorFile.create(path, DIM, M=M, ef_construction=EF_CONSTRUCTION, ef=EF, capacity=1024)
    return UsearchFile.create(path, DIM, dtype=name.split("-")[1], M=M, ef_construction=EF_CONSTRUCTION, ef=EF)


def build_worker(name: str, data_path: Path, out: Path) -> dict:
    import hnswlib  # noqa: F401  - libraries and data in RAM before the baseline: not counted
    import usearch.index  # noqa: F401

    import indexer._backends_usearch  # noqa: F401
    import indexer._hnsw  # noqa: F401

    data = np.load(data_path)
    base = rss_mb()
    started = time.perf_counter()
    vf = backend_file(name, out)
    threads = os.cpu_count() or 1
    vf.reserve(len(data))
    for start in range(0, len(data), 50_000):  # streamed as a build adds chunks
        vf.add(data[start:start + 50_000], np.arange(start, min(start + 50_000, len(data))), threads=threads)
    vf.save()
    seconds = time.perf_counter() - started
    peak = rss_mb("VmHWM")
    if name == "pgvector":
        size = vf.disk_bytes()
        vf.close()
        return {"build_s": seconds, "build_rss_mb": peak - base, "disk_mb": size / 2**20}
    return {"build_s": seconds, "build_rss_mb": peak - base, "disk_mb": out.stat().st_size / 2**20}


def search_worker(name: str, index_path: Path, queries_path: Path, truth_path: Path) -> dict:
    import hnswlib  # noqa: F401
    import usearch.index  # noqa: F401

    from indexer._backends import open_backend

    queries, truth = np.load(queries_path), np.load(truth_path)
    base = rss_mb()
    started = time.perf_counter()
    vf = open_backend(name.split("-")[0], index_path, DIM, ef=EF, cfg=pg_config() if name == "pgvector" else None)
    open_s = time.perf_counter() - started
    passes = []
    found = np.full((len(queries), K), -1, np.int64)  # what the second pass found, for comparing backends
    for _ in range(2):  # the first pass reads a mapped file from disk (cold), the second does not
        times, hits = [], 0
        for i, (q, expected) in enumerate(zip(queries, truth)):
            t = time.perf_counter()
            labels, _ = vf.search(q, K)
            times.append(time.perf_counter() - t)
            hits += len(set(map(int, labels[0])) & set(map(int, expected)))
            found[i, :labels.shape[1]] = labels[0].astype(np.int64)
        passes.append((np.array(times) * 1000, hits / (K * len(queries))))
    np.save(Path(str(index_path) + ".found.npy"), found)
    (cold, _), (warm, recall) = passes
    return {"open_s": open_s, "recall@10": recall, "p50_ms": float(np.percentile(warm, 50)),
            "p99_ms": float(np.percentile(warm, 99)), "cold_p99_ms": float(np.percentile(cold, 99)),
            "search_rss_mb": rss_mb() - base, "memory_mapped": bool(vf.memory_mapped)}


def postgres_for(tmp: Path):
    """A pgserver for the run (returned, to stop), unless KGSTORE_PG_DSN names a server."""
    if os.environ.get("KGSTORE_PG_DSN"):
        return None
    import pgserver

    server = pgserver.get_server(tmp / "pgdata", cleanup_mode="stop")
    os.environ["KGSTORE_PG_DSN"] = server.get_uri()  # the workers inherit it
    return server


def run_worker(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"worker {args[:2]} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- report --------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=("synthetic", "metaqa"), default="synthetic")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--backends", default=",".join(BACKENDS),
                    help=f"comma-separated, from: {', '.join(CHOICES)} (pgvector: only when named)")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "ann_backends.json"))
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        kind, name, *paths = args.worker
        result = build_worker(name, *map(Path, paths)) if kind == "build" else search_worker(name, *map(Path, paths))
        print(json.dumps(result))
        return

    names = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in names if b not in CHOICES]
    if unknown or "hnswlib-f32" not in names:
        raise SystemExit(f"--backends: unknown {unknown}" if unknown else "--backends: hnswlib-f32 is the baseline")
    names = ["hnswlib-f32"] + [n for n in dict.fromkeys(names) if n != "hnswlib-f32"]  # the baseline runs first
    load = os.getloadavg()
    started = time.perf_counter()
    data, queries = (synthetic if args.data == "synthetic" else metaqa)(args.n, args.queries)
    print(f"{args.data}: {len(data):,} vectors, {len(queries):,} queries ({time.perf_counter() - started:.1f} s); "
          f"load average {load[0]:.2f}", flush=True)
    truth = exact_top_k(data, queries, K)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="ann_backends_") as tmp:
        tmp = Path(tmp)
        np.save(tmp / "data.npy", data)
        np.save(tmp / "queries.npy", queries)
        np.save(tmp / "truth.npy", truth)
        del data
        server = postgres_for(tmp) if "pgvector" in names else None
        try:
            for name in names:
                suffix = {"hnswlib": ".hnsw", "usearch": ".usearch", "pgvector": ".pgvector"}[name.split("-")[0]]
                path = tmp / f"{name}{suffix}"
                row = run_worker("build", name, str(tmp / "data.npy"), str(path))
                row.update(run_worker("search", name, str(path), str(tmp / "queries.npy"), str(tmp / "truth.npy")))
                found = np.load(Path(str(path) + ".found.npy"))
                if name == "hnswlib-f32":
                    baseline = found
                # recall@10 against hnswlib's own results on the same vectors and queries
                row["vs_hnswlib@10"] = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, baseline)]))
                rows[name] = row
                print(f"  {name}: {row}", flush=True)
                if name == "pgvector":
                    from indexer._backends import discard_vectors

                    discard_vectors(tmp, "pgvector", pg_config())
        finally:
            if server is not None:
                server.cleanup()
    base = rows["hnswlib-f32"]
    cols = [("recall@10", "{:.3f}"), ("vs_hnswlib@10", "{:.3f}"), ("p50_ms", "{:.3f}"), ("p99_ms", "{:.3f}"), ("cold_p99_ms", "{:.3f}"),
            ("build_s", "{:.1f}"),
            ("build_rss_mb", "{:.0f}"), ("search_rss_mb", "{:.0f}"), ("disk_mb", "{:.1f}")]
    print(f"\nN = {args.n:,} ({args.data}), {args.queries:,} queries, k = {K}, M = {M}, "
          f"ef_construction = {EF_CONSTRUCTION}, ef = {EF}; load average at start {load[0]:.2f}, "
          f"at end {os.getloadavg()[0]:.2f}")
    print("| backend | " + " | ".join(c for c, _ in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, row in rows.items():
        cells = []
        for col, fmt in cols:
            cell = fmt.format(row[col])
            if name != "hnswlib-f32" and col not in ("recall@10", "vs_hnswlib@10") and base[col]:
                cell += f" ({row[col] / base[col]:.2f}x)"
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.backends != ",".join(BACKENDS) and args.out == ap.get_default("out"):
        out = out.with_name(f"ann_backends_{'_'.join(n.split('-')[0] for n in dict.fromkeys(names))}.json")
    out.write_text(json.dumps({"data": args.data, "n": args.n, "queries": args.queries, "load_start": load[0],
                               "load_end": os.getloadavg()[0], "results": rows}, indent=2))


if __name__ == "__main__":
    main()

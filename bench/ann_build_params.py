"""HNSW build parameters on a built store's own entity vectors: does a larger M or
ef_construction lift recall@10 where the default build falls short (issue 30: 0.856 at
ef 64 on the 10M store's 160k entity vectors)?

    python bench/ann_build_params.py STORE [--queries 1000] [--params 16:200,32:200,32:400]
                                           [--out bench/out/ann_build_params.json]

The vectors are the ones the store's entity index holds (read back from its file); the
queries are the generated mentions that ``bench/index_scale.py`` links (label, alias and
typo/case variants, the same seed), embedded as a search embeds them. For each M:ef_construction
pair an hnswlib index (cosine) is built from those vectors in this process, and searched
at ef 64, 128 and 256. A hit counts as ``index_scale.ann_quality`` counts it: a returned
vector whose exact score reaches the 10th best exact score (generated names tie). The
first pair is the store's default, the baseline of each ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from index_scale import load_avg, mentions, peak_rss_mb  # noqa: E402


def entity_vectors(store, index):
    import numpy as np
    from indexer import kind_path
    from indexer._backends import backend_of, open_backend  # bench: the index's own classes

    manifest = index.info()["entities"]
    vf = open_backend(backend_of(manifest), kind_path(store, "entities", manifest), index.encoder.dim,
                      ef=store.config.index.ef, cfg=store.config.index)
    return np.concatenate([vf.vectors(np.arange(i, min(i + 100_000, vf.count))) for i in range(0, vf.count, 100_000)])


def recall(built, data, queries, tenth, ef: int) -> tuple[float, float]:
    import numpy as np
    built.set_ef(ef)
    hits, lat = 0, []
    for q, bar in zip(queries, tenth):
        t = time.perf_counter()
        got, _ = built.knn_query(q[None, :], k=10)
        lat.append(time.perf_counter() - t)
        hits += int(np.sum(data[got[0]] @ q >= bar - 1e-5))
    lat.sort()
    return hits / (10 * len(queries)), 1000 * lat[len(lat) // 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--params", default="16:200,32:200,32:400", help="M:ef_construction pairs, the first the baseline")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "ann_build_params.json"))
    args = ap.parse_args(argv)
    import hnswlib
    import numpy as np
    from indexer import Index
    from kgstore import Store

    store = Store.open(args.store, read_only=True)
    index = Index.open(store)
    data = entity_vectors(store, index).astype(np.float32)
    cases = mentions(store, args.queries)
    queries = index.embed([m for _, m, _ in cases[:args.queries]]).astype(np.float32)
    tenth = []
    for i in range(0, len(queries), 100):
        tenth.extend(np.partition(queries[i:i + 100] @ data.T, -10, axis=1)[:, -10])
    report = {"store": args.store, "vectors": len(data), "queries": len(queries), "cores": os.cpu_count(),
              "load_before": load_avg(), "builds": []}
    print(f"{len(data):,} entity vectors, {len(queries):,} mentions; load {load_avg()}", flush=True)
    for pair in args.params.split(","):
        m, efc = (int(x) for x in pair.split(":"))
        built = hnswlib.Index(space="cosine", dim=data.shape[1])
        built.init_index(max_elements=len(data), M=m, ef_construction=efc, random_seed=100)
        t = time.perf_counter()
        built.add_items(data, np.arange(len(data)))
        seconds = time.perf_counter() - t
        row = {"M": m, "ef_construction": efc, "build_s": round(seconds, 1), "load": load_avg(), "by_ef": {}}
        for ef in (64, 128, 256):
            r, p50 = recall(built, data, queries, tenth, ef)
            row["by_ef"][ef] = {"recall_at_10": round(r, 4), "search_ms_p50": round(p50, 3)}
        report["builds"].append(row)
        print(f"M {m:>2} ef_construction {efc:>3}: build {seconds:6.1f} s; " + "; ".join(
            f"ef {ef}: recall@10 {v['recall_at_10']:.3f}, p50 {v['search_ms_p50']:.2f} ms"
            for ef, v in row["by_ef"].items()) + f" (load {row['load']})", flush=True)
        del built
    report["peak_rss_mb"] = round(peak_rss_mb(), 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

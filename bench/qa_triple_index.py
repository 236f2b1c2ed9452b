"""QA with and without the global triple index (issue 30): the same questions, the same
method and model, on two copies of one store, one with its triple index and one without
(above ``[index] triples_above``, where triple searches embed the reached entities'
facts on the fly).

    python bench/qa_triple_index.py --dataset metaqa --hops 1 --limit 30 \\
        --indexed /tmp/w30/metaqa --unindexed /tmp/w30/metaqa-nt
    python bench/qa_triple_index.py --dataset pathquestion --hops 2 --limit 30 \\
        --indexed /tmp/w30/pq2h --unindexed /tmp/w30/pq2h-nt

The two stores must hold the same data and the same other index kinds (copy the store,
then remove its triple kind, or build the copy with a low ``triples_above``). The model's
completions are cached in ``OUT/llm-cache.jsonl`` and reused: the store with the index runs
first, so its latencies are the model's; where the other store's retrieval gives the same
facts, its prompts are the same and come from the cache, so its latency is mostly
retrieval (``--only`` runs one store, in either order). Answers are kept per question
(``--resume`` continues). Prints Hits@1, refusals,
latency p50 and the load average; writes ``OUT/summary.json``.
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


def load_avg() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="metaqa")
    parser.add_argument("--hops", type=int, default=1)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--method", default="pseudo-graph")
    parser.add_argument("--indexed", required=True, help="the store with its triple index")
    parser.add_argument("--unindexed", required=True, help="the same store without one")
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data" / "qa"))
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "qa_triple_index"))
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--only", choices=("indexed", "unindexed"), default=None,
                        help="run one store only (the other later, with --resume: the cache is shared)")
    args = parser.parse_args(argv)

    from indexer import Index
    from kgstore import Store
    from qa import QAContext, make_method
    from qa.eval import read_dataset, run_eval, select_items
    from qa.llm import CachingLLM, llm_from_config

    out = Path(args.out) / f"{args.dataset}-{args.hops}hop-{args.method}"
    out.mkdir(parents=True, exist_ok=True)
    items = select_items(read_dataset(args.dataset, hops=args.hops, split=args.split,
                                      data_dir=Path(args.data_dir)).items, args.limit or None)
    llm = None
    report = {"dataset": f"{args.dataset} {args.hops}-hop {args.split}", "questions": len(items),
              "method": args.method, "runs": {}}
    for name, path in (("triple index", args.indexed), ("on the fly", args.unindexed)):
        if args.only and args.only != ("indexed" if name == "triple index" else "unindexed"):
            continue
        with Store.open(path, read_only=True) as store:
            if llm is None:
                llm = CachingLLM(llm_from_config(store.config.llm), out / "llm-cache.jsonl", reuse=True)
            index = Index.open(store)
            assert index.triples_on_the_fly == (name == "on the fly"), f"{path}: the wrong kind of store for {name}"
            method = make_method(args.method, QAContext(store, llm, index))
            hits_before, load_start, started = llm.hits, load_avg(), time.perf_counter()
            run = run_eval(method, items, store=store, results_path=out / f"results-{name.replace(' ', '-')}.jsonl",
                           resume=args.resume)
            wall = time.perf_counter() - started
        s = run.summary
        report["runs"][name] = {
            "store": str(path), "questions": s.get("questions"), "hits_at_1": s.get("hits@1"), "f1": s.get("f1"),
            "refusal_rate": s.get("refusal_rate"), "latency_p50_s": s.get("latency_p50_s"),
            "latency_p90_s": s.get("latency_p90_s"), "wall_s": round(wall, 1),
            "llm_cache_hits": llm.hits - hits_before, "load_avg_start": load_start, "load_avg_end": load_avg()}
        print(f"{name:>12}: {s.get('questions')} questions, Hits@1 {s.get('hits@1')}, refusals "
              f"{s.get('refusal_rate')}, p50 {s.get('latency_p50_s')} s, {wall:.0f} s in all, "
              f"{llm.hits - hits_before} cached completions "
              f"(load {load_start} -> {load_avg()})", flush=True)
    summary = out / (f"summary-{args.only}.json" if args.only else "summary.json")
    summary.write_text(json.dumps(report, indent=2))
    print(f"wrote {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Count a run's failures by kind, from the traces `kgstore eval` saved, with the composing
step's own kinds: what to change next.

    python bench/compose_failures.py OUT_DIR/results-METHOD.jsonl [...] [--show KIND]

For every question: right, or its failure kind (``refused: REASON``, ``wrong answer``,
``constraint dropped``… as the harness names them). For the questions the cascade
composed (``trace.cascade.composed``), one more kind says where composing went wrong:

* ``compose: no mention``: the reading linked nothing;
* ``compose: gold not offered``: no option shown held a gold answer first;
* ``compose: gold offered, not chosen``: an option held it, and another won.

``--show KIND`` prints the questions of that kind with the options shown.
"""
from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path


def normalised(text: str) -> str:
    return " ".join(str(text).lower().split())


def compose_kind(row: dict) -> str | None:
    trace = row.get("trace") or {}
    composed = trace.get("compose")
    if not composed or not (trace.get("cascade") or {}).get("composed"):
        return None
    if row.get("hits@1"):
        return "compose: right"
    if not composed.get("reading", {}).get("mentions"):
        return "compose: no mention"
    gold = {normalised(g) for g in row.get("gold") or []}
    offered = [o for o in composed.get("options", []) if o["answers"] and normalised(o["answers"][0]) in gold]
    return "compose: gold offered, not chosen" if offered else "compose: gold not offered"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--show", default=None, metavar="KIND", help="print the questions of this kind")
    args = parser.parse_args()
    for path in args.results:
        if not path.is_file():
            print(f"{path}: no such file (the results of `kgstore eval --out DIR` are DIR/results-METHOD.jsonl)")
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if not rows:
            print(f"{path}: no results")
            continue
        kinds = collections.Counter("right" if r.get("hits@1") else (r.get("failure") or "wrong answer") for r in rows)
        composing = collections.Counter(k for k in map(compose_kind, rows) if k)
        seconds = sorted(r.get("seconds", 0.0) for r in rows)
        n = len(rows)
        print(f"{path}: {n} questions, Hits@1 {kinds['right'] / n:.3f}, "
              f"refused {sum(1 for r in rows if r.get('refused')) / n:.3f}, p50 {seconds[n // 2]:.1f} s")
        for kind, count in kinds.most_common():
            print(f"  {kind:40s} {count}")
        for kind, count in composing.most_common():
            print(f"  {kind:40s} {count}")
        if args.show:
            for r in rows:
                if args.show in {compose_kind(r), r.get("failure")}:
                    print(f"\n{r['question']}  gold {r.get('gold', [])[:3]}  answered {r.get('answers', [])[:3]}")
                    for o in ((r.get("trace") or {}).get("compose") or {}).get("options", []):
                        print(f"    {o['score']:.3f} p={o.get('model_p')} {o['text'][:100]} -> {o['answers'][:2]}")


if __name__ == "__main__":
    main()

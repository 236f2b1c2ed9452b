"""Seconds per question of the cascade at this tree against a baseline revision, measured in
one run, one after the other on the same questions (issue 49's speed target: p50 per question
grows by no more than 20%).

    python bench/qa_speed.py STORE --base REV [--hops 2] [--limit 20] [--out DIR]

STORE is a MetaQA store (``kgstore ingest STORE tsv kb_partial.txt`` and ``kgstore index
STORE``). The baseline is checked out with ``git worktree`` into DIR and run with the same
virtual environment; each side makes its own model calls (no cache), so run it with the
cores free. Prints each side's Hits@1, p50 and mean seconds, model calls and the load average
before and after, then the p50 ratio (this tree / baseline).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared/data/qa"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(tree: Path, store: str, hops: int, limit: int, out: Path) -> dict:
    """``kgstore eval`` of the cascade with the code of ``tree``; its rows' figures."""
    out.mkdir(parents=True, exist_ok=True)
    before = load()
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(tree))
    cmd = [sys.executable, "-c", "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()", "eval", store, "-d", "metaqa", "--hops", str(hops), "-m", "cascade",
           "--limit", str(limit), "--data-dir", str(DATA), "--out", str(out)]
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in (out / "results-cascade.jsonl").read_text().splitlines() if line.strip()]
    seconds = [r["seconds"] for r in rows]
    return {"questions": len(rows), "hits@1": sum(r.get("hits@1") == 1 for r in rows) / max(1, len(rows)),
            "p50": statistics.median(seconds), "mean": statistics.fmean(seconds),
            "calls": sum(r["tokens"]["calls"] for r in rows), "load": f"{before} -> {load()}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--base", required=True, help="the baseline revision (a commit, tag or branch)")
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--out", default="bench-qa/speed", help="where the runs and the baseline's checkout go")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    base_tree = out / "base-tree"
    if not base_tree.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), args.base], cwd=REPO, check=True)
    store = str(Path(args.store).resolve())
    try:
        base = run(base_tree, store, args.hops, args.limit, out / "base")
        head = run(REPO, store, args.hops, args.limit, out / "head")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=REPO, check=False)
    for name, r in (("baseline " + args.base, base), ("this tree", head)):
        print(f"{name}: {r['questions']} questions, Hits@1 {r['hits@1']:.3f}, p50 {r['p50']:.1f} s, "
              f"mean {r['mean']:.1f} s, {r['calls']} model calls, load {r['load']}")
    print(f"p50 ratio (this tree / baseline): {head['p50'] / base['p50']:.2f} (target <= 1.20)")


if __name__ == "__main__":
    main()

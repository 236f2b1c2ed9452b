"""How many WebQSP questions have a gold answer within reach of a name the question types.

    python bench/webqsp_reach.py QUESTIONS.jsonl [--kb KB.fb] [--results results-cascade.jsonl]

``answerable`` in ``../shared/data/qa/webqsp/questions.jsonl`` means every gold answer is
*named* somewhere in ``kb.fb``; it does not mean the answer is connected to the question's
topic (the retrieved paths often stop short: "when did william mckinley died" has the date
only as the start of another man's term). This script gives the ceiling a reader of the
store can reach: a question is *in reach* when a gold answer lies within ``--hops`` hops
(mediator nodes passed through for free, either direction) of an entity whose name the
question contains, or of the subject of one of the question's own mediator nodes (their
ids carry the question id). With ``--results`` it splits an eval's misses by reach.

The figure is loose both ways: a hub near the typed name (a country) puts answers in reach
that no path of the question's reaches ("who was president in 1988 in the united states":
Reagan is a governor of California in ``kb.fb``, never a president), while a name typed as
a demonym or a short form ("italians", "the eu") starts nowhere.
"""
from __future__ import annotations

import argparse
import json
import re
import unicodedata
from collections import defaultdict
from pathlib import Path

DEFAULT_KB = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa" / "webqsp" / "kb.fb"
TRIPLE = re.compile(r'^(\S+) (\S+) (.+) \.$')


def plain(text: str) -> str:
    """Lower case, accents dropped, punctuation as spaces: how a search box reads a name."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def load(kb: Path):
    names: dict[str, str] = {}
    edges: dict[str, set[str]] = defaultdict(set)
    for line in kb.read_text(encoding="utf-8").splitlines():
        m = TRIPLE.match(line.strip())
        if not m:
            continue
        s, p, o = m.groups()
        if p == "<name>":
            names[s] = json.loads(o)
            continue
        edges[s].add(o)
        edges[o].add(s)
    return names, edges


def reach(starts: set[str], edges, hops: int) -> set[str]:
    """Nodes within ``hops`` entity hops; a mediator (blank node) costs nothing."""
    seen = set(starts)
    frontier = set(starts)
    for _ in range(hops):
        nxt: set[str] = set()
        stack = list(frontier)
        while stack:
            node = stack.pop()
            for other in edges.get(node, ()):
                if other in seen:
                    continue
                seen.add(other)
                if other.startswith("_:"):
                    stack.append(other)  # through the mediator in the same hop
                else:
                    nxt.add(other)
        frontier = nxt
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--kb", type=Path, default=DEFAULT_KB)
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--results", type=Path, help="an eval's results-*.jsonl, to split its misses by reach")
    args = parser.parse_args()
    names, edges = load(args.kb)
    by_plain: dict[str, set[str]] = defaultdict(set)
    for node, name in names.items():
        key = plain(name)
        if len(key) >= 3:
            by_plain[key].add(node)
    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    in_reach: dict[str, bool] = {}
    for row in rows:
        q = f" {plain(row['question'])} "
        starts = {n for key, nodes in by_plain.items() if f" {key} " in q for n in nodes}
        tag = "_:c" + row["id"].replace("-", "_") + "_"
        starts |= {s for node in edges if node.startswith(tag) for s in edges[node] if not s.startswith("_:")}
        gold = {plain(a) for a in row["answers"]}
        near = reach(starts, edges, args.hops)
        in_reach[row["id"]] = any(plain(names.get(n, "")) in gold for n in near)
    total = len(rows)
    hit = sum(in_reach.values())
    print(f"{args.questions}: {total} questions, gold within {args.hops} hops of a typed name: {hit} ({hit / total:.3f})")
    if args.results:
        misses = defaultdict(int)
        for line in args.results.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r.get("hits@1"):
                misses["right"] += 1
            else:
                misses["miss, in reach" if in_reach.get(r["id"], True) else "miss, out of reach"] += 1
        for kind, n in sorted(misses.items()):
            print(f"  {kind:24} {n}")


if __name__ == "__main__":
    main()

"""Memory growth (issue 11): pgmr on a small MetaQA store and on the same store grown with
FB15k-237 as distractors, on the same questions.

    python bench/qa_memory_growth.py [WORKDIR] [--questions 30] [--method pgmr]

1. The base store holds the MetaQA triples (kb_partial.txt) that touch the topic entities
   of the first N "spread" MetaQA 1-hop dev questions.
2. The grown store holds those and FB15k-237's training triples with entity names
   (kgbert_entity2text.txt) and each relation's last path segment as its label, loaded
   through the same triple-file loader, so the URI and relation memories grow too.
3. Both are indexed (entities, uris, relations) and `kgstore eval` runs the method on the
   same N questions on each; it prints the growth in entities and the drop in Hits@1.

Everything is written under WORKDIR (default ./bench-growth), nothing into the repository;
the stores are built once, and a second run reuses the first one's answers (the script
always passes `kgstore eval --resume`).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qa.eval import read_dataset, select_items  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
KGSTORE = [str(Path(sys.executable).with_name("kgstore"))]  # the CLI installed beside this Python


def base_triples(questions: int) -> list[str]:
    items = select_items(read_dataset("metaqa", hops=1, data_dir=DATA / "qa").items, questions, sample="spread")
    topics = {item.topic for item in items}
    lines = []
    for line in open(DATA / "qa" / "metaqa" / "kb_partial.txt", encoding="utf-8"):
        parts = line.rstrip("\n").split("|")
        if len(parts) == 3 and (parts[0] in topics or parts[2] in topics):
            lines.append(line if line.endswith("\n") else line + "\n")
    return lines


def distractor_triples() -> list[str]:
    """FB15k-237 with names: ``/film/film/genre`` is labelled ``genre``."""
    fb = DATA / "kg" / "fb15k237"
    names = dict(line.rstrip("\n").split("\t", 1) for line in open(fb / "kgbert_entity2text.txt", encoding="utf-8"))
    out = []
    for line in open(fb / "derived_train_mid.tsv", encoding="utf-8"):
        s, r, o = line.rstrip("\n").split("\t")
        if s in names and o in names and "|" not in names[s] + names[o]:
            out.append(f"{names[s]}|{r.rstrip('/').split('/')[-1].split('.')[-1]}|{names[o]}\n")
    return out


def kgstore(*args: str) -> str:
    done = subprocess.run(KGSTORE + list(args), check=True, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return done.stdout


def build(work: Path, name: str, lines: list[str]) -> dict:
    store = work / name
    if not store.exists():
        (work / f"{name}.txt").write_text("".join(lines), encoding="utf-8")
        kgstore("init", str(store))
        kgstore("ingest", str(store), "tsv", str(work / f"{name}.txt"))
    kgstore("index", str(store), "--kinds", "entities,uris,relations")
    return json.loads(kgstore("stats", str(store), "--format", "json"))


def evaluate(work: Path, name: str, method: str, questions: int) -> dict:
    out = work / f"eval-{name}"
    kgstore("eval", str(work / name), "-d", "metaqa", "--hops", "1", "-m", method, "--limit", str(questions),
            "--sample", "spread", "--resume", "--out", str(out), "--data-dir", str(DATA / "qa"))
    return json.loads((out / "report.json").read_text())["summary"][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", nargs="?", default="bench-growth")
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--method", default="pgmr")
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    base = base_triples(args.questions)
    stats = {"base": build(work, "base", base), "grown": build(work, "grown", base + distractor_triples())}
    growth = stats["grown"]["entities"] / stats["base"]["entities"]
    print(f"base: {stats['base']['triples']:,} triples, {stats['base']['entities']:,} entities; "
          f"grown: {stats['grown']['triples']:,} triples, {stats['grown']['entities']:,} entities ({growth:.1f}x)")
    scores = {name: evaluate(work, name, args.method, args.questions) for name in ("base", "grown")}
    for name, s in scores.items():
        print(f"{name:6s} Hits@1 {s['hits@1']:.3f}  refusals {s['refusal_rate']:.3f}  "
              f"hallucinated {s['hallucinated_identifier_rate']:.3f}  p50 {s['latency_p50_s']:.1f} s")
    print(f"drop: {scores['base']['hits@1'] - scores['grown']['hits@1']:.3f} with {growth:.1f}x the entities "
          f"(load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()

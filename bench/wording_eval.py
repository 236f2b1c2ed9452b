"""Score a method on the wording sets of bench/wording_sets.py, shape by shape, with the
topic in brackets and with no brackets, and print one table (issue 41's acceptance table).

    python bench/wording_eval.py STORE SETS_DIR OUT_DIR [--split dev-train] [--limit 20]
                                 [-m cascade] [--shapes count,boolean] [--variants brackets,plain]
                                 [--table-only] [--reuse EARLIER_OUT_DIR]

Each shape file runs as ``kgstore eval STORE --questions FILE -m METHOD --limit N --resume
--out OUT_DIR/<split>/<variant>/<shape>`` (its LLM cache and results stay there, so a rerun
asks only what is new), then the table reads every report.json: Hits@1, refusals, wrong
"no" answers among the yes/no questions, and the failures by kind (qa/eval/_failures.py).
Run it when nothing else runs: the model takes about 5-15 s a question on 2 cores. The load
average is printed with the table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KGSTORE = str(Path(sys.executable).with_name("kgstore"))


def run_shape(store: Path, questions: Path, out: Path, method: str, limit: int, reuse: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cmd = [KGSTORE, "eval", str(store), "--questions", str(questions), "-m", method, "--limit", str(limit),
           "--resume", "--out", str(out)]
    if reuse is not None:
        # an earlier run's completions answer the prompts it saw: only new prompts reach the model
        cache = reuse / "llm-cache.jsonl"
        if cache.is_file() and not (out / "llm-cache.jsonl").is_file():
            shutil.copyfile(cache, out / "llm-cache.jsonl")
        cmd.append("--replay")
    started = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if done.returncode != 0:
        print(f"  {questions}: kgstore eval failed ({done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
    else:
        print(f"  {questions.parent.name}/{questions.stem}: {time.time() - started:.0f} s", file=sys.stderr)


def read_row(report: Path) -> dict | None:
    if not report.is_file():
        return None
    doc = json.loads(report.read_text())
    run = doc["runs"][0]
    records = [r for r in run["questions"] if not r.get("unscorable")]
    n = len(records)
    if not n:
        return None
    yes_no = [r for r in records if {str(g).lower() for g in r.get("gold", [])} & {"yes", "no", "true", "false"}]
    failures = Counter(r.get("failure") for r in records if r.get("failure"))
    return {"n": n, "hits@1": sum(r["hits@1"] for r in records) / n,
            "refused": sum(1 for r in records if r["refused"]) / n,
            "wrong_no": (sum(1 for r in yes_no if r.get("failure") == "wrong no") / len(yes_no)) if yes_no else None,
            "p50": run["summary"].get("latency_p50_s"), "failures": dict(failures.most_common())}


def table(out: Path, split: str, shapes: list[str], variants: list[str]) -> str:
    head = "| shape | " + " | ".join(f"{v} Hits@1 | {v} refused" for v in variants) + " | failures (by kind) |"
    lines = [head, "|" + "---|" * (2 + 2 * len(variants))]
    for shape in shapes:
        cells, kinds = [], Counter()
        for variant in variants:
            row = read_row(out / split / variant / shape / "report.json")
            if row is None:
                cells += ["–", "–"]
                continue
            cells += [f"{row['hits@1']:.2f} (n={row['n']})", f"{row['refused']:.2f}"]
            kinds.update(row["failures"])
        said = ", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "–"
        lines.append(f"| {shape} | " + " | ".join(cells) + f" | {said} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("sets", type=Path, help="the OUT_DIR of bench/wording_sets.py")
    parser.add_argument("out", type=Path)
    parser.add_argument("--split", default="dev-train", choices=["dev-train", "dev-test"])
    parser.add_argument("--limit", type=int, default=20, help="questions per shape and variant (0: all)")
    parser.add_argument("-m", "--method", default="cascade")
    parser.add_argument("--shapes", default="", help="comma-separated shapes (default: every file)")
    parser.add_argument("--variants", default="brackets,plain")
    parser.add_argument("--table-only", action="store_true", help="print the table from the reports; ask nothing")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="an earlier OUT_DIR: its LLM caches answer the prompts they hold (--replay)")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    shapes = [s for s in args.shapes.split(",") if s] or sorted(
        p.stem for p in (args.sets / args.split / variants[0]).glob("*.jsonl"))
    if not args.table_only:
        for variant in variants:
            for shape in shapes:
                questions = args.sets / args.split / variant / f"{shape}.jsonl"
                if questions.is_file():
                    run_shape(args.store, questions, args.out / args.split / variant / shape, args.method,
                              args.limit, args.reuse / args.split / variant / shape if args.reuse else None)
    print(f"{args.method} on {args.split} ({time.strftime('%Y-%m-%d %H:%M')}, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    print(table(args.out, args.split, shapes, variants))


if __name__ == "__main__":
    main()

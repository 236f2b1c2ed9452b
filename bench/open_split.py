"""How questions are split into open and precise (``qa.open.read_open``), measured.

    python bench/open_split.py [--sets DIR] [--data ../shared/data/qa] [--show N]

prints, for the open wordings of ``bench/open_wording_sets.py`` (dev-train and dev-test,
plain and bracketed; made in a temporary folder unless ``--sets`` points at them), the
share read as open, and for QALD-10 (English questions) and LC-QuAD 2.0 (its crowd
questions and paraphrases), which are all precise, the share read as precise.
``--show N`` prints up to N misread questions of each set.

Then, for the chain benchmarks' dev questions (MetaQA 1-3 hop, PathQuestion, WorldCup2014,
SimpleQuestions-Wikidata, WebQSP), the share that ``QAMethod.answer`` would now route to an
open answer: the most their held-out figures can move.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qa.open import read_open  # noqa: E402


def qald_questions(path: Path) -> list[str]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [q["string"] for item in doc["questions"] for q in item["question"]
            if q.get("language") == "en" and q.get("string")]


def lcquad_questions(path: Path) -> list[str]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    texts = [row.get(key) for row in rows for key in ("question", "paraphrased_question")]
    return [t for t in texts if isinstance(t, str) and len(t.strip()) > 5]


def tab_questions(path: Path, column: int = 0) -> list[str]:
    return [ln.split("\t")[column] for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def chain_sets(data: Path) -> dict[str, list[str]]:
    sets = {f"MetaQA {h}-hop dev": tab_questions(data / "metaqa" / f"{h}-hop" / "vanilla_qa_dev.txt") for h in (1, 2, 3)}
    sets["PathQuestion 2H+3H"] = tab_questions(data / "pathquestion" / "PQ-2H.txt") + tab_questions(
        data / "pathquestion" / "PQ-3H.txt")
    sets["WorldCup2014 P1+P2"] = tab_questions(data / "wc2014" / "WC-P1.txt") + tab_questions(data / "wc2014" / "WC-P2.txt")
    sets["SQWD valid"] = tab_questions(data / "sqwd" / "valid.tsv", -1)
    rows = [json.loads(ln) for ln in (data / "webqsp" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if ln.strip()]
    sets["WebQSP"] = [r.get("question") or r.get("ProcessedQuestion") or r.get("RawQuestion") or "" for r in rows]
    return sets


def line(name: str, questions: list[str], *, want_open: bool, show: int) -> None:
    wrong = [q for q in questions if (read_open(q) is not None) != want_open]
    share = 1 - len(wrong) / len(questions) if questions else float("nan")
    print(f"| {name} | {len(questions)} | {'open' if want_open else 'precise'} | {share:.3f} |")
    for q in wrong[:show]:
        print(f"|   misread: {q} | | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "qa")
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sets = args.sets
        if sets is None:
            sets = Path(tmp)
            subprocess.run([sys.executable, str(ROOT / "bench" / "open_wording_sets.py"), str(sets)], check=True,
                           stdout=subprocess.DEVNULL)
        print("| set | questions | should read as | share read so |")
        print("|---|---|---|---|")
        for split in ("dev-train", "dev-test"):
            for variant in ("plain", "brackets"):
                path = sets / split / variant / "open.jsonl"
                qs = [json.loads(ln)["question"] for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
                line(f"open {split} {variant}", qs, want_open=True, show=args.show)
        line("QALD-10 (en)", qald_questions(args.data / "qald10" / "qald_10.json"), want_open=False, show=args.show)
        line("LC-QuAD 2.0", lcquad_questions(args.data / "lcquad2" / "train.json"), want_open=False, show=args.show)
        print("\n| chain benchmark | questions | routed to an open answer | examples |")
        print("|---|---|---|---|")
        for name, questions in chain_sets(args.data).items():
            routed = [q for q in questions if read_open(q) is not None]
            print(f"| {name} | {len(questions)} | {len(routed) / len(questions):.4f} | "
                  f"{'; '.join(routed[:2])} |")


if __name__ == "__main__":
    main()

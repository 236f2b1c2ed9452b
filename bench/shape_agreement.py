"""How often the shape read from a question's words agrees with its gold query's shape,
on LC-QuAD 2.0 and QALD-10, without any store.

    python bench/shape_agreement.py [--split train|test|all] [--show N] [--ceiling]
                                    [--lcquad PATH] [--qald PATH]

The gold shape is :func:`qa.eval._shapes.query_shape` of the gold SPARQL, with ``round
trip`` and ``literal`` folded into ``chain``: six shapes (count, boolean, comparison,
superlative, constraint, chain). The question's shape is
:func:`qa.shapes.question_shape` of its English text. A yes/no comparison ("is X taller
than Y") is right whether read as boolean or comparison.

Each dataset is split in two halves by the parity of the SHA-1 of the question text:
``dev-train`` (rules may be tuned on it) and ``dev-test`` (the honest figure). For each
half the script prints, per shape, n, the number agreed and the ratio, then overall,
then the most frequent disagreements (gold → read) with ``--show`` examples each.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parents[2] / "shared/data/qa"
sys.path.insert(0, str(REPO))

from qa.eval._shapes import query_shape  # noqa: E402
from qa.shapes._detect import detect_shape  # noqa: E402
from qa.shapes._question_shape import QUESTION_SHAPES, constraint_cue, question_shape  # noqa: E402

_FOLD = {"round trip": "chain", "literal": "chain"}
_PLACEHOLDERS = {"[]", "n/a", "na", "none", "null", "-", "?"}


def gold_shape(sparql: str) -> str:
    shape = query_shape(sparql or "")
    return _FOLD.get(shape, shape)


def _usable(text) -> bool:
    return isinstance(text, str) and len(text.strip()) >= 10 and text.strip().lower() not in _PLACEHOLDERS


def load_lcquad(path: Path) -> list[tuple[str, str]]:
    """(question, gold query) pairs: the paraphrase, or the question where the paraphrase
    is empty, too short or a placeholder."""
    out = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        text = item.get("paraphrased_question")
        if not _usable(text):
            text = item.get("question")
        if not isinstance(text, str) or not text.strip():
            continue
        out.append((text.strip(), item.get("sparql_wikidata") or ""))
    return out


def load_qald(path: Path) -> list[tuple[str, str]]:
    """(English question, gold query) pairs."""
    out = []
    for item in json.loads(path.read_text(encoding="utf-8"))["questions"]:
        text = next((q.get("string") for q in item.get("question", []) if q.get("language") == "en"), None)
        if not isinstance(text, str) or not text.strip():
            continue
        out.append((text.strip(), (item.get("query") or {}).get("sparql") or ""))
    return out


def half(question: str) -> str:
    """``dev-train`` or ``dev-test``, by the parity of the question's SHA-1."""
    return "dev-train" if hashlib.sha1(question.encode("utf-8")).digest()[-1] % 2 == 0 else "dev-test"


def agrees(question: str, read: str, gold: str) -> bool:
    """The read shape is the gold one; a yes/no comparison may be read either way."""
    if read == gold:
        return True
    if {read, gold} == {"boolean", "comparison"}:
        return read == "boolean" or detect_shape(question).yes_no
    return False


def evaluate(pairs: list[tuple[str, str]]) -> list[dict]:
    rows = []
    for question, sparql in pairs:
        gold, read = gold_shape(sparql), question_shape(question)
        rows.append({"question": question, "gold": gold, "read": read, "half": half(question),
                     "ok": agrees(question, read, gold)})
    return rows


def report(name: str, rows: list[dict], show: int, top: int) -> list[str]:
    lines = []
    per = defaultdict(lambda: [0, 0])
    for r in rows:
        per[r["gold"]][0] += 1
        per[r["gold"]][1] += r["ok"]
    n, ok = len(rows), sum(r["ok"] for r in rows)
    lines.append(f"### {name} (n={n})")
    lines.append("")
    lines.append("| gold shape | n | agreed | ratio |")
    lines.append("|---|---:|---:|---:|")
    for shape in QUESTION_SHAPES:
        if shape in per:
            t, a = per[shape]
            lines.append(f"| {shape} | {t} | {a} | {a / t:.2f} |")
    lines.append(f"| **overall** | {n} | {ok} | {ok / n if n else 0:.2f} |")
    lines.append("")
    wrong = Counter((r["gold"], r["read"]) for r in rows if not r["ok"])
    if wrong:
        lines.append("Disagreements (gold → read):")
        lines.append("")
        for (gold, read), count in wrong.most_common(top):
            lines.append(f"- {gold} → {read}: {count}")
            if show:
                examples = [r["question"] for r in rows if not r["ok"] and (r["gold"], r["read"]) == (gold, read)]
                for q in examples[:show]:
                    lines.append(f"    - {q}")
        lines.append("")
    return lines


_COUNT_WORDS = re.compile(r"\bhow (?:many|much)\b|\bnumber of\b|\bcount\b|\bamount of\b|\bhow often\b", re.I)


def ceiling(name: str, rows: list[dict]) -> list[str]:
    """What the words carry: how many gold counts write a count word at all, and how the
    constraint cues split between gold constraints and gold chains (a cue a chain carries
    as often as a constraint cannot tell them apart)."""
    counts = [r for r in rows if r["gold"] == "count"]
    worded = sum(bool(_COUNT_WORDS.search(r["question"])) for r in counts)
    lines = [f"### {name}: what the words carry", ""]
    if counts:
        lines.append(f"- gold count: {worded} of {len(counts)} questions write a count word "
                     f"(how many, how much, number of, count, amount of, how often): at most "
                     f"{worded / len(counts):.2f} can be read as counts from their words.")
    # agreement on the questions whose words carry their shape: counts that write a count
    # word, constraints with a constraint cue, chains with none (issue 49's acceptance)
    carried = [r for r in counts if _COUNT_WORDS.search(r["question"])]
    carried += [r for r in rows if r["gold"] == "constraint" and constraint_cue(r["question"]) != "none"]
    carried += [r for r in rows if r["gold"] == "chain" and constraint_cue(r["question"]) == "none"]
    for shape in ("count", "constraint", "chain"):
        these = [r for r in carried if r["gold"] == shape]
        if these:
            agreed = sum(r["ok"] for r in these)
            lines.append(f"- gold {shape} whose words carry it: {agreed} of {len(these)} read so "
                         f"({agreed / len(these):.2f})")
    if carried:
        agreed = sum(r["ok"] for r in carried)
        lines.append(f"- all whose words carry their shape: {agreed} of {len(carried)} ({agreed / len(carried):.2f})")
    cues = Counter((constraint_cue(r["question"]), r["gold"]) for r in rows if r["gold"] in ("constraint", "chain"))
    if cues:
        lines += ["", "| cue in the words | gold constraint | gold chain |", "|---|---:|---:|"]
        for cue in sorted({c for c, _ in cues}, key=lambda c: (c == "none", c)):
            lines.append(f"| {cue} | {cues[(cue, 'constraint')]} | {cues[(cue, 'chain')]} |")
    return lines + [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lcquad", type=Path, default=DATA / "lcquad2/train.json",
                    help="LC-QuAD 2.0 JSON list (default: %(default)s)")
    ap.add_argument("--qald", type=Path, default=DATA / "qald10/qald_10.json",
                    help="QALD-10 JSON (default: %(default)s)")
    ap.add_argument("--split", choices=("train", "test", "all"), default="all",
                    help="which half to print: dev-train, dev-test, or both (default)")
    ap.add_argument("--show", type=int, default=0, metavar="N",
                    help="examples to print per disagreement (default: 0)")
    ap.add_argument("--top", type=int, default=12, metavar="K",
                    help="disagreement kinds to list per table (default: %(default)s)")
    ap.add_argument("--ceiling", action="store_true",
                    help="also print what the words carry: count words in gold counts, constraint cues "
                         "in gold constraints and chains")
    args = ap.parse_args(argv)
    halves = {"train": ["dev-train"], "test": ["dev-test"], "all": ["dev-train", "dev-test"]}[args.split]
    datasets = []
    for label, path, loader in (("LC-QuAD 2.0", args.lcquad, load_lcquad), ("QALD-10", args.qald, load_qald)):
        if not path.exists():
            print(f"{label}: {path} not found, skipped", file=sys.stderr)
            continue
        datasets.append((label, evaluate(loader(path))))
    if not datasets:
        return 1
    for label, rows in datasets:
        for h in halves:
            print("\n".join(report(f"{label}, {h}", [r for r in rows if r["half"] == h], args.show, args.top)))
            if args.ceiling:
                print("\n".join(ceiling(f"{label}, {h}", [r for r in rows if r["half"] == h])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Split the WebQSP test questions of ``../shared/data/qa/webqsp/`` into two halves by a
hash of the question: ``dev-train`` (tune on it) and ``dev-test`` (report on it, never tune).

    python bench/webqsp_split.py OUT_DIR [--data DIR] [--all]

writes ``OUT_DIR/dev-train.jsonl`` and ``OUT_DIR/dev-test.jsonl`` in the ``kgstore eval
--questions`` JSONL form, answerable questions only (``--all`` keeps the others too: their
answers are not all in ``kb.fb``). The half a question falls in depends only on its text, so
the split is the same on every machine and for any slice of the test split. Nothing is
copied into the repository: the files go to OUT_DIR.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa" / "webqsp"


def half(question: str) -> str:
    """``dev-train`` or ``dev-test``: the lowest bit of the question's SHA-256."""
    digest = hashlib.sha256(question.strip().lower().encode("utf-8")).digest()
    return "dev-test" if digest[-1] & 1 else "dev-train"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding questions.jsonl")
    parser.add_argument("--all", action="store_true", help="keep unanswerable questions too")
    args = parser.parse_args()
    source = args.data / "questions.jsonl"
    if not source.exists():
        raise SystemExit(f"no {source}: pass --data DIR, the folder holding WebQSP's questions.jsonl")
    halves: dict[str, list[dict]] = {"dev-train": [], "dev-test": []}
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if not row.get("answerable") and not args.all:
            continue
        halves[half(row["question"])].append(
            {"id": row["id"], "question": row["question"], "answers": row["answers"], "type": "chain"})
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in halves.items():
        with open(args.out_dir / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{name}: {len(rows)} questions -> {args.out_dir / (name + '.jsonl')}")


if __name__ == "__main__":
    main()

"""Write the dev sets of open questions ("Tell me about X"), each asked in many wordings.

    python bench/open_wording_sets.py OUT_DIR

writes ``OUT_DIR/<split>/<variant>/open.jsonl``, one JSON object a line::

    {"question": "Describe [Nepal].", "subject": "Nepal", "wording": 4, "id": "open-train-12"}

Splits: the wordings with an even index make ``dev-train`` (the ones the issue lists, which
the reading in ``qa/open/_reading.py`` was written against); those with an odd index make
``dev-test``, written before that reading was tuned and never tuned on. The two splits
share no wording and no subject. Variants: ``brackets`` writes the subject in square
brackets, ``plain`` without them. ``bench/open_split.py`` prints how each set is read.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

WORDINGS = [
    "Tell me about {x}.",                          # dev-train
    "Can you tell me something about {x}?",        # dev-test
    "What do you know about {x}?",
    "What can you tell me about {x}?",
    "Describe {x}.",
    "Give me a short biography of {x}.",
    "Who was {x}?",
    "Please describe {x} briefly.",
    "What is {x} known for?",
    "What is {x} famous for?",
    "Why is {x} famous?",
    "Why is {x} so well known?",
    "Give me an overview of {x}'s career.",
    "I'd like to know more about {x}.",
    "Summarize {x}.",
    "Who is {x}?",
]
SUBJECTS = {
    "dev-train": ["Douglas Adams", "Mount Everest", "Nepal", "Marie Curie", "Kyoto", "Johann Sebastian Bach",
                  "Lake Victoria", "Ada Lovelace", "Buenos Aires", "Frida Kahlo"],
    "dev-test": ["Leonardo da Vinci", "Amazon River", "Nelson Mandela", "Iceland", "Toni Morrison", "Mont Blanc",
                 "Alan Turing", "Istanbul", "Wangari Maathai", "Sahara"],
}


def open_questions(split: str, variant: str) -> list[dict]:
    """The questions of one split and variant, in a fixed order."""
    parity = 0 if split == "dev-train" else 1
    rows = []
    for w, wording in enumerate(WORDINGS):
        if w % 2 != parity:
            continue
        for subject in SUBJECTS[split]:
            x = f"[{subject}]" if variant == "brackets" else subject
            rows.append({"question": wording.format(x=x), "subject": subject, "wording": w,
                         "id": f"open-{split.removeprefix('dev-')}-{len(rows)}"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    for split in SUBJECTS:
        for variant in ("plain", "brackets"):
            path = args.out_dir / split / variant / "open.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = open_questions(split, variant)
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            print(f"{path}: {len(rows)} questions")


if __name__ == "__main__":
    main()

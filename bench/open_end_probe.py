"""Count questions with an open-ended year ("How many of [X]'s films were released in 1991
or later?"), from the MetaQA KB's own facts, as JSONL for ``kgstore eval --questions``.

    python bench/open_end_probe.py OUT.jsonl [--kb FILE] [--n 12] [--seed 7]

Directors with five or more films, every film dated; the year is the median of their
films' years (each film's first in the KB); "or later" or "or earlier" at random. Gold counts a film when any of its
release years meets the bound (a MetaQA title can stand for films of several years).
"""
from __future__ import annotations

import argparse
import collections
import json
import random
from pathlib import Path

KB = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa" / "metaqa" / "kb_partial.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--kb", type=Path, default=KB)
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    directed: dict[str, set[str]] = collections.defaultdict(set)
    years: dict[str, set[int]] = collections.defaultdict(set)
    first_year: dict[str, int] = {}  # the year the KB gives first, for the median
    for line in args.kb.read_text(encoding="utf-8").splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1] == "directed_by":
            directed[parts[2]].add(parts[0])
        elif len(parts) == 3 and parts[1] == "release_year" and parts[2].isdigit():
            years[parts[0]].add(int(parts[2]))
            first_year.setdefault(parts[0], int(parts[2]))
    rng = random.Random(args.seed)
    people = sorted(p for p, films in directed.items() if len(films) >= 5 and all(f in years for f in films))
    with args.out.open("w", encoding="utf-8") as out:
        for person in rng.sample(people, min(args.n, len(people))):
            dated = sorted(first_year[f] for f in directed[person])
            year, later = dated[len(dated) // 2], rng.random() < 0.5
            gold = sum(1 for f in directed[person] if any(y >= year if later else y <= year for y in years[f]))
            words = "or later" if later else "or earlier"
            out.write(json.dumps({"question": f"How many of [{person}]'s films were released in {year} {words}?",
                                  "answers": [str(gold)], "type": "count"}) + "\n")


if __name__ == "__main__":
    main()

"""Hits@1 of a `kgstore eval --questions` run on SQWD valid questions, split by whether the
question's topic shares its label with another item of the KB (a namesake) or not.

    cut -f1,2 ../shared/data/qa/sqwd/valid.tsv | head -200 > sqwd200.tsv
    kgstore eval STORE --questions sqwd200.tsv -m cascade --limit 200 --out OUT
    python bench/sqwd_namesakes.py OUT
    python bench/sqwd_namesakes.py --write-namesakes namesakes.tsv   # only those questions

The eval names each question ``<file stem>:<line>``; the line of valid.tsv gives the topic
QID, and the KB's ``rdfs:label`` triples give the labels other items share.
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SQWD = REPO.parent / "shared" / "data" / "qa" / "sqwd"
LABEL = re.compile(r'^<http://www\.wikidata\.org/entity/(Q\d+)> <http://www\.w3\.org/2000/01/rdf-schema#label> "(.*)"@en \.$')


def item_labels(kb: Path) -> dict[str, str]:
    labels = {}
    with gzip.open(kb, "rt", encoding="utf-8") as f:
        for line in f:
            m = LABEL.match(line.strip())
            if m:
                labels[m.group(1)] = m.group(2)
    return labels


def topics(valid: Path) -> dict[int, str]:
    """line number (from 1) → topic QID."""
    return {n: line.split("\t")[2] for n, line in enumerate(valid.read_text(encoding="utf-8").splitlines(), start=1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="the eval's --out folder (results-METHOD.jsonl)")
    ap.add_argument("--write-namesakes", metavar="FILE",
                    help="write the valid questions whose topic has a namesake, as question<TAB>answers")
    ap.add_argument("--data", default=str(SQWD))
    args = ap.parse_args()
    labels = item_labels(Path(args.data) / "kb.nt.gz")
    shared = Counter(labels.values())
    valid = Path(args.data) / "valid.tsv"
    topic_of = topics(valid)
    if args.write_namesakes:
        lines = valid.read_text(encoding="utf-8").splitlines()
        picked = [lines[n - 1].split("\t")[:2] for n, topic in topic_of.items() if shared[labels.get(topic, "")] > 1]
        Path(args.write_namesakes).write_text("".join(f"{q}\t{a}\n" for q, a in picked), encoding="utf-8")
        print(f"{len(picked)} namesake questions → {args.write_namesakes}")
    if not args.out:
        return
    for results in sorted(Path(args.out).glob("results-*.jsonl")):
        groups: dict[str, list[float]] = {"namesake": [], "other": []}
        for line in results.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            topic = topic_of[int(row["id"].rsplit(":", 1)[1])]
            group = "namesake" if shared[labels.get(topic, "")] > 1 else "other"
            groups[group].append(row["hits@1"])
        method = results.stem.removeprefix("results-")
        for group, hits in groups.items():
            if hits:
                print(f"{method}\t{group}\tn={len(hits)}\tHits@1={sum(hits) / len(hits):.3f}")


if __name__ == "__main__":
    main()

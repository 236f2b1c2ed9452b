"""One-hop questions from the facts of a generated Wikidata-like store, for timing ``ask``
on stores of different sizes with the same kind of question (issue 30: "ask on a 10M
store answers with a p50 no more than 2 s above its p50 on a small store").

    python bench/scale_questions.py STORE OUT.jsonl [--n 30] [--seed 0]
    kgstore eval STORE --questions OUT.jsonl -m cascade --out DIR

Subjects are drawn at random among the store's ``wd:Q<n>`` items (n up to the number of
entities), each asked about one of its item-valued facts whose property and value are
labelled: "what is the <property label> of [<subject label>]" (or "what is [X] an
instance of"), gold: every labelled value of that property. A subject is used only when no other entity bears its label (so the
question has one reading) and the label is not a lone word.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from shape_sets import unique_names  # noqa: E402

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def item_facts(store, iri: str) -> dict[str, list[str]]:
    """Property id -> labelled item values of ``iri`` (English labels)."""
    rows = store.query(f"SELECT ?p ?o WHERE {{ <{iri}> ?p ?o . ?o <{RDFS_LABEL}> ?l . "
                       f"FILTER(STRSTARTS(STR(?p), \"{WDT}\")) }}")
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["p"].value[len(WDT):], []).append(r["o"].value)
    return out


def phrase(relation: str, name: str) -> str:
    """A question from a property label: "what is [X] an instance of" for labels that end
    in a preposition or read as a verb, "what is the country of [X]" for nouns."""
    if relation.endswith((" of", " in", " by")) or relation.startswith("located "):
        article = "" if relation.startswith("located ") else ("an " if relation[0] in "aeiou" else "a ")
        return f"what is [{name}] {article}{relation}"
    return f"what is the {relation} of [{name}]"


def questions(store, n: int, rng: random.Random, entities: int) -> list[dict]:
    out, tried = [], 0
    while len(out) < n and tried < 200 * n:
        tried += 1
        iri = f"{WD}Q{rng.randint(1, entities)}"
        names = unique_names(store, [iri])
        name = names.get(iri)
        if not name or " " not in name.strip():
            continue
        facts = item_facts(store, iri)
        if not facts:
            continue
        pid = rng.choice(sorted(facts))
        relation = store.labels([WD + pid]).get(WD + pid)
        values = store.labels(facts[pid])
        if not relation or not values:
            continue
        out.append({"question": phrase(relation, name),
                    "answers": sorted(set(values.values())), "type": "chain",
                    "sparql": f"SELECT ?x WHERE {{ <{iri}> <{WDT}{pid}> ?x }}"})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from kgstore import Store

    with Store.open(args.store, read_only=True) as store:
        entities = int(store.entity_names_signature().split(":")[0])
        qs = questions(store, args.n, random.Random(args.seed), entities)
    Path(args.out).write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs))
    print(f"wrote {len(qs)} questions to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

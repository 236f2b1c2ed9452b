"""Write dev sets of question shapes from a store's own facts, so every gold answer is
correct by construction (issue 29, section 3).

    python bench/shape_sets.py STORE OUT_DIR --kb metaqa [--n 40] [--seed 0]
    python bench/shape_sets.py STORE OUT_DIR --kb wikidata-sample

Writes ``OUT_DIR/<shape>.jsonl``, one ``{"question", "answers", "type", "sparql"}`` a line,
for ``kgstore eval STORE --questions OUT_DIR/<shape>.jsonl``:

* ``count``: "how many films did [X] direct" (gold: the number of facts);
* ``boolean``: "did [X] direct [Y]", half of them *no* (the subject holds the relation
  with other values, so the store can say no);
* ``comparison``: "which film came out earlier, [A] or [B]" (values differ);
* ``superlative``: "what is the most recent film directed by [X]" (a unique extreme);
* ``constraint``: "which films were directed by [X] and starred [Y]" (a strict intersection);
* ``round_trip`` (MetaQA only): real MetaQA 2-hop dev questions that go there and back
  ("the director of [X] also directed which movies"), read from the dev file, not written.

The phrasings live here, per knowledge base, and several per relation: they are test data.
Nothing here reaches a method.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgstore import Store  # noqa: E402

KGR = "http://kgstore.local/relation/"

# MetaQA: relation → (subject noun, object noun, count phrasings over the object, yes/no
# phrasings (subject s, object o), superlative phrasings, constraint phrase)
METAQA = {
    "directed_by": {
        "count": ["how many films did [{o}] direct", "how many movies were directed by [{o}]",
                  "what is the number of films directed by [{o}]"],
        "boolean": ["did [{o}] direct [{s}]", "was [{s}] directed by [{o}]", "is [{o}] the director of [{s}]"],
        "superlative": ["what is the most recent film directed by [{o}]", "which is the earliest movie directed by [{o}]",
                        "what is the oldest film that [{o}] directed", "what is the latest movie [{o}] directed"],
        "constraint": "directed by [{o}]",
    },
    "written_by": {
        "count": ["how many films did [{o}] write", "how many movies were written by [{o}]",
                  "what is the number of films written by [{o}]"],
        "boolean": ["did [{o}] write [{s}]", "was [{s}] written by [{o}]", "is [{o}] a writer of [{s}]"],
        "superlative": ["what is the most recent film written by [{o}]", "which is the earliest movie written by [{o}]",
                        "what is the latest film [{o}] wrote"],
        "constraint": "written by [{o}]",
    },
    "starred_actors": {
        "count": ["how many films did [{o}] act in", "how many movies star [{o}]",
                  "in how many films did [{o}] appear"],
        "boolean": ["did [{o}] act in [{s}]", "does [{s}] star [{o}]", "is [{o}] in the cast of [{s}]"],
        "superlative": ["what is the most recent film starring [{o}]", "which is the earliest movie [{o}] acted in",
                        "what is the oldest film starring [{o}]"],
        "constraint": "starring [{o}]",
    },
    "has_genre": {
        "boolean": ["is [{s}] a [{o}] film", "does [{s}] belong to the genre [{o}]"],
    },
    "in_language": {
        "boolean": ["is [{s}] in [{o}]", "was [{s}] made in the [{o}] language"],
    },
}
COMPARISONS = ["which film came out earlier, [{a}] or [{b}]", "which movie was released later, [{a}] or [{b}]",
               "which is the older film, [{a}] or [{b}]", "which film is more recent, [{a}] or [{b}]",
               "was [{a}] released before [{b}]", "which of [{a}] and [{b}] was released first"]
ROUND_TRIP_TYPES = {"movie_to_director_to_movie", "movie_to_actor_to_movie", "movie_to_writer_to_movie",
                    "actor_to_movie_to_actor", "writer_to_movie_to_writer", "director_to_movie_to_director"}


def facts(store, relation: str) -> list[tuple[str, str]]:
    rows = store.query(f"SELECT ?s ?o WHERE {{ ?s <{KGR}{relation}> ?o }}")
    return [(r["s"].value, r["o"].value) for r in rows]


def labelled(store, iris) -> dict[str, str]:
    return store.labels(iris)


def metaqa_sets(store, n: int, rng: random.Random, data: Path) -> dict[str, list[dict]]:
    by_rel = {rel: facts(store, rel) for rel in list(METAQA) + ["release_year"]}
    names = labelled(store, {x for pairs in by_rel.values() for pair in pairs for x in pair})
    year = {}
    for s, o in by_rel["release_year"]:
        try:  # a literal year, or an entity named as one
            year.setdefault(s, set()).add(int(names.get(o, o)))
        except ValueError:
            pass
    year = {s: ys.pop() for s, ys in year.items() if len(ys) == 1}
    subjects = defaultdict(lambda: defaultdict(set))  # rel → object → subjects
    objects = defaultdict(lambda: defaultdict(set))  # rel → subject → objects
    for rel in METAQA:
        for s, o in by_rel[rel]:
            subjects[rel][o].add(s)
            objects[rel][s].add(o)
    # a name two entities share cannot be a question's only clue; names with brackets confuse the markup
    label_count = defaultdict(int)
    for iri, label in names.items():
        label_count[label] += 1
    good = lambda iri: iri in names and label_count[names[iri]] == 1 and "[" not in names[iri] and "]" not in names[iri]

    out = defaultdict(list)
    rels = [r for r in METAQA if "count" in METAQA[r]]
    # counts: 2-12 facts, each relation in turn
    pool = {r: sorted(o for o, ss in subjects[r].items() if 2 <= len(ss) <= 12 and good(o)) for r in rels}
    for i in range(n):
        rel = rels[i % len(rels)]
        o = rng.choice(pool[rel])
        q = rng.choice(METAQA[rel]["count"]).format(o=names[o])
        out["count"].append({"question": q, "answers": [len(subjects[rel][o])], "type": "count",
                             "sparql": f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{ ?x <{KGR}{rel}> <{o}> }}"})
    # yes/no: half yes (a fact), half no (the subject holds the relation with other values)
    brels = list(METAQA)
    for i in range(n):
        rel = brels[i % len(brels)]
        pairs = [(s, o) for s, o in by_rel[rel] if good(s) and good(o) and len(objects[rel][s]) <= 4]
        s, o = rng.choice(pairs)
        answer = i % 2 == 0
        if not answer:
            others = [x for x in subjects[rel] if x not in objects[rel][s] and good(x) and len(subjects[rel][x]) >= 2]
            o = rng.choice(others)
        q = rng.choice(METAQA[rel]["boolean"]).format(s=names[s], o=names[o])
        out["boolean"].append({"question": q, "answers": [answer], "type": "boolean",
                               "sparql": f"ASK {{ <{s}> <{KGR}{rel}> <{o}> }}"})
    # comparisons of release years
    films = sorted(f for f in year if good(f))
    for i in range(n):
        while True:
            a, b = rng.sample(films, 2)
            if year[a] != year[b]:
                break
        template = COMPARISONS[i % len(COMPARISONS)]
        later = "later" in template or "more recent" in template
        if template.startswith("was "):
            answers = [year[a] < year[b]]
        else:
            pick = max((a, b), key=year.get) if later else min((a, b), key=year.get)
            answers = [names[pick]]
        out["comparison"].append({"question": template.format(a=names[a], b=names[b]), "answers": answers,
                                  "type": "comparison"})
    # superlatives over release years: a unique extreme among 3-10 films
    for i in range(n):
        rel = rels[i % len(rels)]
        for _ in range(1000):
            o = rng.choice(pool[rel])
            dated = [f for f in subjects[rel][o] if f in year]
            if len(dated) >= 3 and len(dated) == len(subjects[rel][o]):
                break
        template = rng.choice(METAQA[rel]["superlative"])
        latest = any(w in template for w in ("recent", "latest"))
        extreme = max(year[f] for f in dated) if latest else min(year[f] for f in dated)
        winners = [f for f in dated if year[f] == extreme]
        if len(winners) != 1:
            continue
        out["superlative"].append({"question": template.format(o=names[o]), "answers": [names[winners[0]]],
                                   "type": "superlative"})
    # two constraints: films directed/written by X and starring Y, the intersection strictly smaller
    for i in range(n * 20):
        if len(out["constraint"]) >= n:
            break
        first = rng.choice(["directed_by", "written_by"])
        o1 = rng.choice(pool[first])
        films1 = subjects[first][o1]
        actors = [a for f in films1 for a in objects["starred_actors"].get(f, ()) if good(a)]
        if not actors:
            continue
        o2 = rng.choice(actors)
        both = films1 & subjects["starred_actors"][o2]
        if not both or both == films1 or both == subjects["starred_actors"][o2]:
            continue
        q = f"which films were {METAQA[first]['constraint'].format(o=names[o1])} and {METAQA['starred_actors']['constraint'].format(o=names[o2])}"
        out["constraint"].append({"question": q, "answers": sorted(names[f] for f in both), "type": "constraint"})
    # round trips: real MetaQA 2-hop dev questions of the there-and-back types
    dev = data / "metaqa" / "2-hop"
    questions = (dev / "vanilla_qa_dev.txt").read_text().splitlines()
    types = (dev / "qa_dev_qtype.txt").read_text().splitlines()
    trips = [(q, t) for q, t in zip(questions, types) if t.strip() in ROUND_TRIP_TYPES]
    for line, _ in rng.sample(trips, min(n, len(trips))):
        q, answers = line.split("\t")
        out["round_trip"].append({"question": q, "answers": answers.split("|"), "type": "round trip"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("out")
    ap.add_argument("--kb", choices=("metaqa",), default="metaqa")
    ap.add_argument("--n", type=int, default=40, help="questions per shape (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "qa"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with Store.open(args.store, read_only=True) as store:
        sets = metaqa_sets(store, args.n, random.Random(args.seed), Path(args.data))
    for shape, items in sets.items():
        with open(out / f"{shape}.jsonl", "w") as f:
            for item in items:
                f.write(json.dumps(item) + "\n")
        print(f"{shape}: {len(items)} questions → {out / (shape + '.jsonl')}")


if __name__ == "__main__":
    main()

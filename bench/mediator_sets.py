"""Dev sets of questions through mediator nodes, from a store's own facts: a film, the
performance node (a Freebase CVT, a blank node) and on it the actor and the character,
which is a string value, not an entity (issue 41, section 1, mediators).

    python bench/mediator_sets.py STORE OUT_DIR [--n 40] [--seed 0] [--tuning]

For a store of ``../shared/data/kg/freebase_movies_30k/`` (``kgstore ingest STORE freebase
30kmoviedata.nq.gz``). Writes ``OUT_DIR/<split>/<variant>/<shape>.jsonl`` as
bench/wording_sets.py does (``dev-train`` takes the even wordings, ``dev-test`` the odd;
``brackets`` puts the film in brackets, ``plain`` writes no brackets), one
``{"question", "answers", "type", "id", "wording"}`` a line:

* ``who_played``: who played a character in a film (gold: the actor; a character one
  actor plays in that film);
* ``which_character``: which character an actor played in a film (gold: the character's
  name, a string value);
* ``how_many_films``: in how many films an actor played a character (gold: the number of
  films, namesakes included; before 2026-11-28 a film with a namesake was left out of the
  count, which made 9 of the 80 golds one short: 7 of dev-test's 40, 2 of dev-train's).

Names are used only where one entity bears them (films and actors), and a character
name only where it is at least two words (a single first name is too often shared). The
wordings live here as test data; nothing here reaches a method.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgstore import Store  # noqa: E402

FB = "http://rdf.freebase.com/ns/"
WORDINGS = {
    "who_played": ["Who played {c} in {f}?", "Which actor played {c} in {f}?", "In {f}, who was {c}?",
                   "Who was cast as {c} in {f}?", "Name the actor who portrayed {c} in {f}.",
                   "{f}: who played the part of {c}?", "Who plays {c} in the film {f}?",
                   "Tell me who acted as {c} in {f}."],
    "which_character": ["Which character did {a} play in {f}?", "Who did {a} play in {f}?",
                        "What role did {a} have in {f}?", "In {f}, which character was played by {a}?",
                        "What was the name of {a}'s character in {f}?", "{a} appeared in {f} as whom?",
                        "Whom did {a} portray in {f}?", "What part did {a} play in {f}?"],
    "how_many_films": ["In how many films did {a} play {c}?", "How many movies feature {a} as {c}?",
                       "How many times did {a} play {c} in a film?", "{a} played {c} in how many films?",
                       "Count the films in which {a} played the role of {c}.",
                       "In how many pictures was {a} cast as {c}?", "How many films have {a} as {c}?",
                       "What number of films did {a} play {c} in?"],
}
# More wordings, for tuning only (``--tuning``): written after the first measurement of the
# dev-test half, asked of films and actors neither half uses, all written as dev-train.
TUNING_WORDINGS = {
    "who_played": ["Which actor was {c} in {f}?", "Who portrayed {c} in {f}?", "Who took the role of {c} in {f}?",
                   "Who is the actor behind {c} in {f}?"],
    "which_character": ["Which role did {a} play in {f}?", "Who was {a} in {f}?",
                        "As which character did {a} appear in {f}?", "What character does {a} portray in {f}?"],
    "how_many_films": ["How many films did {a} appear in as {c}?", "{a} portrayed {c} in how many movies?",
                       "In how many movies did {a} take the role of {c}?", "Count the movies where {a} plays {c}."],
}
QUERY = f"""SELECT ?f ?fn ?a ?an ?c WHERE {{
  ?f <{FB}film.film.starring> ?p . ?p <{FB}film.performance.character> ?c . ?p <{FB}film.performance.actor> ?a .
  ?f <{FB}type.object.name> ?fn . ?a <{FB}type.object.name> ?an
}}"""
NAMES = f"SELECT ?n (COUNT(DISTINCT ?x) AS ?k) WHERE {{ ?x <{FB}type.object.name> ?n }} GROUP BY ?n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=40, help="questions per shape and split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tuning", action="store_true",
                        help="write TUNING_WORDINGS, of films and actors neither dev half uses, as dev-train")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with Store.open(args.store, read_only=True) as store:
        bearers = Counter()
        for row in store.query(NAMES):
            bearers[row["n"].value.lower()] += int(row["k"].value)
        rows = [(r["f"].value, r["fn"].value, r["a"].value, r["an"].value, r["c"].value) for r in store.query(QUERY)]
    unique = lambda name: bearers[name.lower()] == 1 and "[" not in name and "?" not in name  # noqa: E731
    # a count names no film: every film counts, namesakes too (the draw below still takes
    # its pairs from uniquely named films, as it always did, so the questions stay the same)
    every_film = defaultdict(set)
    for f, fn, a, an, c in rows:
        if unique(an) and len(c.split()) >= 2 and not c.isupper():
            every_film[(an, c)].add(f)
    rows = [r for r in rows if unique(r[1]) and unique(r[3]) and len(r[4].split()) >= 2 and not r[4].isupper()]
    by_film_character = defaultdict(set)
    by_actor_film = defaultdict(set)
    films_by_actor_character = defaultdict(set)
    for f, fn, a, an, c in rows:
        by_film_character[(fn, c)].add(an)
        by_actor_film[(an, fn)].add(c)
        films_by_actor_character[(an, c)].add(fn)
    pools = {
        "who_played": [({"c": c, "f": fn}, sorted(actors)) for (fn, c), actors in by_film_character.items()
                       if len(actors) == 1],
        "which_character": [({"a": an, "f": fn}, sorted(chars)) for (an, fn), chars in by_actor_film.items()
                            if len(chars) == 1],
        "how_many_films": [({"a": an, "c": c}, [str(len(films))]) for (an, c), films in films_by_actor_character.items()
                           if len(films) >= 2] + [({"a": an, "c": c}, ["1"]) for (an, c), films in
                                                  sorted(films_by_actor_character.items())[:200] if len(films) == 1],
    }
    counts = {}
    for shape, pool in pools.items():
        pool = sorted(pool, key=lambda x: json.dumps(x, sort_keys=True))
        rng.shuffle(pool)
        for split, parity in (("dev-train", 0),) if args.tuning else (("dev-train", 0), ("dev-test", 1)):
            table = TUNING_WORDINGS if args.tuning else WORDINGS
            wordings = [i for i in range(len(table[shape])) if args.tuning or i % 2 == parity]
            chosen = pool[2 * args.n:][:args.n] if args.tuning else pool[parity::2][:args.n]
            for variant in ("brackets", "plain"):
                folder = args.out / split / variant
                folder.mkdir(parents=True, exist_ok=True)
                with open(folder / f"{shape}.jsonl", "w", encoding="utf-8") as out:
                    for k, (slots, gold) in enumerate(chosen):
                        w = wordings[k % len(wordings)]
                        filled = dict(slots)
                        if variant == "brackets" and "f" in filled:
                            filled["f"] = f"[{filled['f']}]"
                        elif variant == "brackets":
                            filled["a"] = f"[{filled['a']}]"
                        question = table[shape][w].format(**filled)
                        if shape == "how_many_films":
                            gold = [str(len(every_film[(slots["a"], slots["c"])]))]
                        out.write(json.dumps({"question": question, "answers": gold,
                                              "type": "count" if shape == "how_many_films" else "chain",
                                              "id": f"{shape}-{split}-{k}", "wording": w}, ensure_ascii=False) + "\n")
            counts[(shape, split)] = len(chosen)
    print("shape            dev-train  dev-test")
    for shape in pools:
        print(f"{shape:16} {counts[(shape, 'dev-train')]:9} {counts.get((shape, 'dev-test'), 0):9}")


if __name__ == "__main__":
    main()

"""Write dev sets of shapes *combined*, composed from the MetaQA KB's own facts, so every
gold answer is correct by construction (issue 49, "Shape combinations").

    python bench/combination_sets.py OUT_DIR [--kb FILE] [--n 24] [--seed 0]

writes ``OUT_DIR/<split>/<variant>/<kind>.jsonl`` in the form of ``bench/wording_sets.py``
(``{"question", "answers", "type", "id", "wording", "combination"}``), for
``kgstore eval STORE --questions FILE``. Each kind combines an aggregation, a constraint or a
comparison with a relation, and most use relations the wording sets never ask about
(languages, tags, two roles at once):

* ``superlative_constrained``: the newest / oldest of P's films *of a genre, in a language,
  with a tag* ("which of [X]'s comedies is the newest"); a unique extreme;
* ``superlative_value``: the *year* of P's first / last film in a role ("in what year did
  [X] first direct a film"); the answer is the year, not the film;
* ``count_constrained``: how many of P's films are of a genre / in a language / have a tag;
  1 <= count < all;
* ``negation``: P's films *not* of a genre / without a tag / not starring Q; non-empty, a
  strict subset (not "not in a language": the KB gives few films a language, and "not in
  English" would take in English films it gives none);
* ``conjunction_boolean``: did P both write and direct F (both roles held, or exactly one:
  half yes, half no);
* ``conjunction_list``: the films P both wrote and directed / directed and acted in;
  non-empty, a strict subset of each role's films;
* ``equality``: were A and B released in the same year / made in the same language /
  directed by the same person (half yes, half no);
* ``difference``: how many years apart A and B came out (a number > 0); how many more
  films P directed than Q (a number > 0);
* ``comparison_vs``: "A vs B: which is older / newer" (the years differ).

Splits keep half the combinations *and* half the wordings out of tuning: a kind's
combinations alternate between ``dev-train`` and ``dev-test`` (the first to dev-train), each
with its own four wordings, so dev-test holds combinations and wordings dev-train never
shows (the aggregation is the same; the relation and the words are new). ``brackets`` puts the first-named film or person in square brackets; ``plain`` is the
same questions without them.

Names are those ``bench/wording_sets.py`` accepts (a label no other KB entity bears, at most
one release year, …). A person is asked about by "X's films" only when every film they wrote or acted in they
also directed.
The wordings live only here, as test data written for this file; nothing here reaches a
method.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

from wording_sets import DEFAULT_KB, ENTITY_SLOTS, GENRES, KB, SPLITS, VARIANTS, draw, render, write, yn

# a tag is asked about when it names a topic: used 30+ times, no genre, person or rating
# ("bd-r", "r") and no digits (the KB's tags mix all of them)
TAG_USES = 30
_RATING = re.compile(r"^(bd-r|r|pg|pg-13|nc-17|g)$")


ROLE_VERB = {"directed_by": ("direct", "directed"), "written_by": ("write", "wrote"),
             "starred_actors": ("act in", "acted in")}

# kind → combination → wordings. Combinations alternate between the splits in this order,
# wordings within a combination too; {sup} is "newest"/"oldest", {first} "first"/"last".
WORDINGS: dict[str, dict[str, list[str]]] = {
    "superlative_constrained": {
        "genre": ["Which of the {g_pl} [{p}] directed is the {sup}?", "What is the {sup} of the {g_pl} directed by [{p}]?",
                  "Among the {g_pl} [{p}] directed, which one is the {sup}?",
                  "Name the {sup} of the {g_pl} [{p}] has directed."],
        "language": ["Which of the {lang}-language films [{p}] directed is the {sup}?",
                     "What is the {sup} film in {lang} directed by [{p}]?",
                     "Of the films [{p}] directed in {lang}, which is the {sup}?",
                     "[{p}] directed several films in {lang}: which one is the {sup}?"],
        "tag": ["Which film tagged {tag} directed by [{p}] is the {sup}?",
                "Of the films [{p}] directed that are tagged {tag}, which is the {sup}?",
                "What is the {sup} {tag} film that [{p}] directed?",
                "Among the films directed by [{p}] with the tag {tag}, which came out {sup_adv}?"],
    },
    "superlative_value": {
        "directed_by": ["In what year did [{p}] {first} direct a film?", "When did [{p}] direct a film for the {first} time?",
                        "What year was [{p}]'s {first} film as a director released?",
                        "Which year did [{p}]'s {first} directed film come out?"],
        "written_by": ["In which year did [{p}] {first} write a film?", "When was the {first} film written by [{p}] released?",
                       "What year did [{p}]'s {first} screenplay reach the screen?",
                       "In what year did the {first} movie [{p}] wrote come out?"],
        "starred_actors": ["In what year did [{p}] {first} act in a film?", "When did [{p}] appear in a film for the {first} time?",
                           "What year did the {first} film starring [{p}] come out?",
                           "Which year saw [{p}]'s {first} screen role?"],
    },
    "count_constrained": {
        "genre": ["How many {g_pl} did [{p}] direct?", "Of the films [{p}] directed, how many are {g_pl}?",
                  "Count the {g_pl} directed by [{p}].", "What number of [{p}]'s films are {g_pl}?"],
        "language": ["How many of [{p}]'s films are in {lang}?", "How many {lang}-language films did [{p}] direct?",
                     "Count the films [{p}] directed in {lang}.", "What is the number of films in {lang} directed by [{p}]?"],
        "tag": ["How many of [{p}]'s films are tagged {tag}?", "How many films directed by [{p}] have the tag {tag}?",
                "Count [{p}]'s films with the tag {tag}.", "What number of films by [{p}] are tagged {tag}?"],
    },
    "negation": {
        "genre": ["Which of [{p}]'s films are not {g_pl}?", "What films did [{p}] direct that aren't {g_pl}?",
                  "List the films directed by [{p}] other than the {g_pl}.", "Which [{p}] films are not {g_pl}?"],
        "tag": ["Which of [{p}]'s films are not tagged {tag}?", "What films did [{p}] direct that lack the tag {tag}?",
                "List the films directed by [{p}] without the tag {tag}.", "Which [{p}] films aren't tagged {tag}?"],
        "costar": ["Which of [{p}]'s films don't star {q}?", "What films did [{p}] direct without {q} in the cast?",
                   "List the films directed by [{p}] that {q} did not act in.",
                   "Which [{p}] films have no role for {q}?"],
    },
    "conjunction_boolean": {
        "written_by+directed_by": ["Did [{p}] both write and direct {f}?", "Was [{f}] written and directed by {p}?",
                                   "Is [{p}] both the writer and the director of {f}?",
                                   "Did [{p}] write {f} and also direct it?"],
        "directed_by+starred_actors": ["Did [{p}] both direct and act in {f}?", "Was [{f}] directed by {p}, who also starred in it?",
                                       "Is [{p}] both the director of {f} and one of its actors?",
                                       "Did [{p}] direct {f} and appear in it too?"],
    },
    "conjunction_list": {
        "written_by+directed_by": ["Which films did [{p}] both write and direct?", "What movies were written and directed by [{p}]?",
                                   "List the films [{p}] wrote and also directed.",
                                   "Which of [{p}]'s films did they both write and direct?"],
        "directed_by+starred_actors": ["Which films did [{p}] both direct and act in?", "In which of the films [{p}] directed did they also act?",
                                       "List the movies [{p}] directed and starred in.",
                                       "What films have [{p}] as both director and actor?"],
    },
    "equality": {
        "release_year": ["Were [{a}] and {b} released in the same year?", "Did [{a}] and {b} come out the same year?",
                         "Is [{a}] from the same year as {b}?", "Were [{a}] and {b} made in the same year?"],
        "in_language": ["Are [{a}] and {b} in the same language?", "Were [{a}] and {b} made in the same language?",
                        "Is [{a}] in the same language as {b}?", "Do [{a}] and {b} share a language?"],
        "directed_by": ["Do [{a}] and {b} have the same director?", "Were [{a}] and {b} directed by the same person?",
                        "Is the director of [{a}] also the director of {b}?", "Did one person direct both [{a}] and {b}?"],
    },
    "difference": {
        "count": ["How many more films did [{a}] direct than {b}?", "By how many films does [{a}] outnumber {b} as a director?",
                  "[{a}] directed how many more movies than {b}?", "What is the difference between the number of films [{a}] and {b} directed?"],
        "release_year": ["How many years apart were [{a}] and {b} released?", "How many years passed between [{a}] and {b}?",
                         "How far apart in years are [{a}] and {b}?", "What is the gap in years between [{a}] and {b}?"],
    },
    "comparison_vs": {
        "older": ["[{a}] vs {b}: which is older?", "[{a}] versus {b}, which came first?",
                  "[{a}] or {b} - which one is the older film?", "Older film: [{a}] or {b}?"],
        "newer": ["[{a}] vs {b}: which is newer?", "[{a}] versus {b}, which came out later?",
                  "[{a}] or {b} - which one is more recent?", "Newer film: [{a}] or {b}?"],
    },
}
YES_NO = {"conjunction_boolean", "equality"}


def wordings_of(kind: str, split: str) -> list[tuple[int, str, str]]:
    """(wording index, combination, text) of ``kind`` in ``split``: the combinations at even
    positions, with all their wordings, go to dev-train, the odd ones to dev-test. A
    combination's wordings name its relation, so dev-test's wordings are never dev-train's."""
    parity = SPLITS.index(split)
    out, index = [], 0
    for c, (combo, texts) in enumerate(WORDINGS[kind].items()):
        for text in texts:
            if c % 2 == parity:
                out.append((index, combo, text))
            index += 1
    return out


def check_wordings() -> None:
    for kind, combos in WORDINGS.items():
        for split in SPLITS:
            assert len({t for _, _, t in wordings_of(kind, split)}) >= 4, (kind, split)
        for texts in combos.values():
            assert len(texts) >= 4, kind
            for text in texts:
                slots = re.findall(r"\{(\w+)\}", text)
                first = next(s for s in slots if s in ENTITY_SLOTS)
                assert text.count("[") == text.count("]") == 1 and f"[{{{first}}}]" in text, text


class Combinations:
    """make(combination, rng, want) → (values, answers, topic) or None (draw again)."""

    def __init__(self, kb: KB):
        self.kb = kb
        k = kb
        # "X's films" are the films X directed when X holds no other role outside them
        self.directors = sorted(p for p in k.inv["directed_by"] if k.named(p) and all(
            k.films_of(r, p) <= k.films_of("directed_by", p) for r in ("written_by", "starred_actors")))
        # (the superlative's wordings all say "directed": any director of 4-60 films)
        self.prolific = sorted(p for p in k.inv["directed_by"] if k.named(p) and 4 <= len(k.films_of("directed_by", p)) <= 60)
        self.people = {rel: sorted(p for p in k.inv[rel] if k.named(p, pair=True)) for rel in ROLE_VERB}
        self.pair_films = sorted(f for f in k.year if k.named(f, pair=True))
        self.languages = sorted({x for xs in k.fwd["in_language"].values() for x in xs})
        uses = Counter(t for ts in k.fwd["has_tags"].values() for t in ts)
        genres = {g.casefold() for g in GENRES} | {x.casefold() for xs in k.fwd["has_genre"].values() for x in xs}
        people = {p.casefold() for rel in ROLE_VERB for p in k.inv[rel]}
        self.tags = {t for t, n in uses.items() if n >= TAG_USES and len(t) >= 4 and not re.search(r"\d", t)
                     and t.casefold() not in genres and t.casefold() not in people and not _RATING.match(t)}

    def _director(self, rng, lo=3, hi=30):
        p = rng.choice(self.directors)
        films = self.kb.films_of("directed_by", p)
        return (p, films) if lo <= len(films) <= hi else (None, None)

    def _split_by(self, films, relation, allowed=None):
        """value → the films holding it (the store's closed world: a film the KB gives no
        language is not "in French", and is one of the films "not in French")."""
        by = {}
        for f in films:
            for v in self.kb.fwd[relation].get(f, set()):
                if allowed is None or v in allowed:
                    by.setdefault(v, set()).add(f)
        return by

    def _constraint(self, combo, films, rng, least=1):
        """(values for the wording, the films meeting a constraint of ``combo``) with
        0 < met < all, or None."""
        k = self.kb
        if combo == "genre":
            by = self._split_by(films, "has_genre", set(GENRES))
            fill = lambda g: {"g_pl": GENRES[g][1]}  # noqa: E731
        elif combo == "language":
            by = self._split_by(films, "in_language")
            fill = lambda lang: {"lang": lang}  # noqa: E731
        elif combo == "tag":
            by = self._split_by(films, "has_tags", self.tags)
            fill = lambda t: {"tag": t}  # noqa: E731
        else:  # costar
            by = {}
            for f in films:
                for q in k.fwd["starred_actors"].get(f, ()):
                    if k.named(q, pair=True):
                        by.setdefault(q, set()).add(f)
            fill = lambda q: {"q": q}  # noqa: E731
        if not by:
            return None
        options = sorted(v for v, fs in by.items() if least <= len(fs) < len(films))
        if not options:
            return None
        v = rng.choice(options)
        return fill(v), by[v]

    def superlative_constrained(self, combo, rng, want):
        p = rng.choice(self.prolific)  # two or more films meeting a constraint
        films = self.kb.films_of("directed_by", p)
        got = self._constraint(combo, films, rng, least=2)
        if not got or not self.kb.all_dated(got[1]):
            return None
        values, met = got
        pick = max if want else min
        best = pick(self.kb.year[f] for f in met)
        winners = [f for f in met if self.kb.year[f] == best]
        return len(winners) == 1 and ({"p": p, **values, "sup": "newest" if want else "oldest",
                                       "sup_adv": "last" if want else "first"}, winners, p)

    def superlative_value(self, combo, rng, want):
        p = rng.choice(self.people[combo])
        films = self.kb.films_of(combo, p)
        if not 2 <= len(films) <= 30 or not self.kb.all_dated(films) or not self.kb.only_role(p, combo):
            return None
        years = [self.kb.year[f] for f in films]
        return len(set(years)) > 1 and ({"p": p, "first": "first" if want else "last"},
                                        [str(min(years) if want else max(years))], p)

    def count_constrained(self, combo, rng, want):
        p, films = self._director(rng)
        got = p and self._constraint(combo, films, rng)
        if not got:
            return None
        values, met = got
        return {"p": p, **values}, [str(len(met))], p

    def negation(self, combo, rng, want):
        p, films = self._director(rng)
        got = p and self._constraint(combo, films, rng)
        if not got:
            return None
        values, met = got
        return {"p": p, **values}, sorted(films - met), p

    def _two_roles(self, combo):
        first, second = combo.split("+")
        return first, second

    def conjunction_boolean(self, combo, rng, want):
        k = self.kb
        first, second = self._two_roles(combo)
        p = rng.choice(self.people[first])
        one, two = k.films_of(first, p), k.films_of(second, p)
        both, either = one & two, (one ^ two)
        pool = sorted(f for f in (both if want else either) if k.named(f, pair=True))
        if not pool or not both or not 2 <= len(one | two) <= 40:
            return None  # a "no" only for someone who does hold both roles somewhere
        return {"p": p, "f": rng.choice(pool)}, yn(want), None

    def conjunction_list(self, combo, rng, want):
        k = self.kb
        first, second = self._two_roles(combo)
        p = rng.choice(self.people[first])
        one, two = k.films_of(first, p), k.films_of(second, p)
        both = one & two
        return (both and both != one and both != two and len(one | two) <= 60
                and ({"p": p}, sorted(both), p))

    def equality(self, combo, rng, want):
        k = self.kb
        a, b = rng.sample(self.pair_films, 2)
        if combo == "release_year":
            va, vb = {k.year[a]}, {k.year[b]}
        else:
            va, vb = k.fwd[combo].get(a, set()), k.fwd[combo].get(b, set())
            if len(va) != 1 or len(vb) != 1:
                return None
        if want and va != vb:
            # a film of the same value as a, other than a
            same = [f for f in self.pair_films if f != a and
                    ({k.year[f]} if combo == "release_year" else k.fwd[combo].get(f, set())) == va]
            if not same:
                return None
            b = rng.choice(same)
        elif not want and va == vb:
            return None
        return {"a": a, "b": b}, yn(want), a

    def difference(self, combo, rng, want):
        k = self.kb
        if combo == "count":
            a, b = rng.sample(self.people["directed_by"], 2)
            na, nb = len(k.films_of("directed_by", a)), len(k.films_of("directed_by", b))
            if na <= nb or not (k.only_role(a, "directed_by") and k.only_role(b, "directed_by")) or na > 40:
                return None
            return {"a": a, "b": b}, [str(na - nb)], a
        a, b = rng.sample(self.pair_films, 2)
        gap = abs(k.year[a] - k.year[b])
        return gap > 0 and ({"a": a, "b": b}, [str(gap)], a)

    def comparison_vs(self, combo, rng, want):
        k = self.kb
        a, b = rng.sample(self.pair_films, 2)
        if k.year[a] == k.year[b]:
            return None
        pick = min if combo == "older" else max
        return {"a": a, "b": b}, [pick((a, b), key=k.year.get)], a


def build(kb: KB, n: int, seed: int) -> dict[str, dict[str, list[dict]]]:
    """kind → split → items (each with both variants' questions)."""
    check_wordings()
    combos = Combinations(kb)
    out: dict[str, dict[str, list[dict]]] = {}
    for kind in WORDINGS:
        rng = random.Random(f"{seed}:{kind}")
        make = getattr(combos, kind)
        used, number, out[kind] = set(), 0, {}
        for split in SPLITS:
            mine = wordings_of(kind, split)
            items = []
            for i in range(n):
                index, combo, text = mine[(i // 2 if kind in YES_NO else i) % len(mine)]
                got = draw(make, combo, text, rng, i % 2 == 0, used)
                if got is None:
                    print(f"warning: {kind} ({combo}) wording {index} found no question", file=sys.stderr)
                    continue
                values, answers = got
                brackets, plain = render(text, values)
                items.append({"question": {"brackets": brackets, "plain": plain}, "answers": answers,
                              "type": kind, "id": f"{kind}-{number}", "wording": index, "combination": combo})
                number += 1
            out[kind][split] = items
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="where <split>/<variant>/<kind>.jsonl go")
    ap.add_argument("--kb", default=str(DEFAULT_KB), help=f"the MetaQA KB file (default: {DEFAULT_KB})")
    ap.add_argument("--n", type=int, default=24, help="questions per kind per split (default 24)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    args = ap.parse_args()
    kb_path = Path(args.kb)
    if not kb_path.is_file():
        ap.error(f"no KB file at {kb_path} (give one with --kb)")
    sets = build(KB(kb_path), args.n, args.seed)
    out_dir = Path(args.out_dir)
    write(sets, out_dir)
    print(f"{'kind':<26}{'dev-train':>10}{'dev-test':>10}  combinations (dev-train | dev-test)")
    for kind, splits in sets.items():
        shown = " | ".join(",".join(sorted(Counter(i["combination"] for i in splits[s]))) for s in SPLITS)
        print(f"{kind:<26}" + "".join(f"{len(splits[s]):>10}" for s in SPLITS) + f"  {shown}")
    total = sum(len(items) for splits in sets.values() for items in splits.values())
    print(f"{total} questions per variant ({', '.join(VARIANTS)}) → {out_dir}/<split>/<variant>/<kind>.jsonl")


if __name__ == "__main__":
    main()

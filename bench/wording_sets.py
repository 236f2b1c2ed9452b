"""Write dev sets of question shapes, each asked in many wordings, from the MetaQA KB's own
facts, so every gold answer is correct by construction.

    python bench/wording_sets.py OUT_DIR [--kb FILE] [--n 40] [--seed 0] [--tuning]

reads the MetaQA KB (``subject|relation|object`` lines; default
``../shared/data/qa/metaqa/kb_partial.txt`` beside the repository, read at run time and never
copied) and writes ``OUT_DIR/<split>/<variant>/<shape>.jsonl``, one JSON object a line::

    {"question": "Which dramas did [Ralph Thomas] direct?", "answers": ["A Tale of Two Cities", "The 39 Steps"],
     "type": "entity_constraint", "id": "entity_constraint-3", "wording": 0}

``wording`` is the index of the wording in this file's list for the shape; ``id`` is unique
across both splits. Answers are film or person names, ``["yes"]``/``["no"]``, a count as one
string (``["7"]``), or a year as a string (``["1994"]``).

Splits: every shape has at least 6 wordings; those with an even index make ``dev-train``,
those with an odd index ``dev-test``, so the two splits share no wording (a method tuned on
dev-train meets unseen wordings in dev-test). A question's topic entity is not reused across
splits within a shape. ``--n`` questions per shape per split (default 40); ``--seed`` makes
the draw (deterministic for a given KB, n and seed).

Variants: ``brackets`` puts the topic entity (the first-named film or person) in square
brackets, as MetaQA writes ``[Tom Hanks]``, other names plain; ``plain`` is the same
questions with the brackets removed.

Shapes:

* ``count``: how many films a person directed / wrote / acted in (2..15 facts);
* ``boolean``: did P direct F, is F a comedy, was P in F's cast, did F come out in Y; half
  yes, half no, and a no only where the film has other values for the relation;
* ``comparison``: which of two films is older / newer (gold: the name), or "did A come out
  after B" (gold: yes/no); the years differ;
* ``comparison_constant``: did F come out before / after a year (yes and no; never the
  film's own year);
* ``superlative_value``: the latest / earliest film of a director, writer or actor (a
  unique extreme, all of the person's films dated);
* ``superlative_count``: which of two or three people directed / wrote / acted in more
  (or fewer) films (all counts differ);
* ``entity_constraint``: P's films of a genre (each of P's films has a genre in the KB), or
  films by P (director/writer) starring Q; the answer set non-empty and a strict subset of
  each person's films;
* ``value_constraint``: P's films before / after / since / in a year, between two years,
  in a decade (thresholds never a year of P's films, so "after 2000" reads one way only;
  the answer set non-empty and a strict subset);
* ``count_constraint``: how many of P's films came out before / after a year or in a decade,
  or are of a genre (1 <= count < all);
* ``round_trip``: the other films of F's only director / writer (2..20, F left out);
* ``value``: F's release year.

Names: a film or person is named only by a label that no other KB entity bears (compared
case-insensitively, tags and genres included), that is not both a film and a person, that
does not read as a value (``1984``), has no brackets or question mark, and (films) has at
most one release year: MetaQA merges namesake films, so a film with two years is two films.
Two-name questions also skip names holding a comma, " or " or " and ". Genres are asked by
common nouns ("comedies", "a western").

The wordings live only here, as test data: they were written for this file, not taken from
any dataset, and nothing here reaches a method.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

DEFAULT_KB = Path(__file__).resolve().parents[2] / "shared/data/qa/metaqa/kb_partial.txt"
SPLITS = ("dev-train", "dev-test")  # even wording index, odd wording index
VARIANTS = ("brackets", "plain")
PEOPLE = ("directed_by", "written_by", "starred_actors")
ENTITY_SLOTS = ("p", "q", "f", "a", "b", "c")  # placeholders that name KB entities (years and genres do not)

# genre → (with an article, plural)
GENRES = {
    "Drama": ("a drama", "dramas"), "Comedy": ("a comedy", "comedies"),
    "Horror": ("a horror movie", "horror movies"), "Action": ("an action film", "action films"),
    "Thriller": ("a thriller", "thrillers"), "Crime": ("a crime film", "crime films"),
    "Adventure": ("an adventure film", "adventure films"), "War": ("a war film", "war films"),
    "Documentary": ("a documentary", "documentaries"), "Western": ("a western", "westerns"),
    "Musical": ("a musical", "musicals"), "Fantasy": ("a fantasy film", "fantasy films"),
    "Mystery": ("a mystery", "mysteries"), "Animation": ("an animated film", "animated films"),
    "Romance": ("a romance", "romances"), "Family": ("a family film", "family films"),
    "Short": ("a short film", "short films"), "Sport": ("a sports movie", "sports movies"),
    "Biography": ("a biopic", "biopics"), "History": ("a historical film", "historical films"),
}
COMMON_GENRES = ["Drama", "Comedy", "Horror", "Action", "Thriller", "Crime", "Adventure", "War",
                 "Documentary", "Western", "Musical", "Fantasy", "Mystery", "Romance"]


# ---------------------------------------------------------------------------------------------
# Wordings: per shape, per kind (what the question asks), in the order written. The topic
# entity, the first-named film or person, is the one in brackets.

def interleave(groups: dict[str, list[str]]) -> list[tuple[str, str]]:
    """One list of (kind, wording) in which every kind with 2+ wordings has some at even
    indices (dev-train) and some at odd ones (dev-test): a kind's wordings alternate between
    the two halves, starting with the shorter; each half then takes the kinds in turn."""
    halves = ([], [])  # even, odd; the even half never shorter, never longer by more than one
    for kind, texts in groups.items():
        for text in texts:  # to the shorter half (ties: even): a kind's first two land apart
            halves[0 if len(halves[0]) == len(halves[1]) else 1].append((kind, text))
    out = []
    for half in halves:  # round-robin over kinds within the half, each kind's wordings in order
        rounds = defaultdict(list)
        seen = Counter()
        for kind, text in half:
            rounds[seen[kind]].append((kind, text))
            seen[kind] += 1
        half[:] = [item for r in sorted(rounds) for item in rounds[r]]
    for i in range(len(halves[0])):
        out.append(halves[0][i])
        if i < len(halves[1]):
            out.append(halves[1][i])
    return out


WORDINGS: dict[str, list[tuple[str, str]]] = {
    "count": interleave({
        "directed_by": ["How many films did [{p}] direct?", "[{p}] has directed how many movies?",
                        "What's the number of pictures directed by [{p}]?",
                        "Tell me how many movies [{p}] directed.", "How many films were directed by [{p}]?"],
        "written_by": ["How many movies has [{p}] written?", "Count the films written by [{p}].",
                       "[{p}] wrote how many films?", "How many screenplays did [{p}] write?",
                       "On how many films does [{p}] have a writing credit?"],
        "starred_actors": ["How many films has [{p}] acted in?", "In how many movies does [{p}] appear?",
                           "[{p}] starred in how many pictures?", "Give me the number of films featuring [{p}].",
                           "How many movies was [{p}] in?"],
    }),
    "boolean": interleave({
        "directed_by": ["Did [{p}] direct {f}?", "Was [{f}] directed by {p}?", "Is [{p}] the director of {f}?",
                        "Is it true that [{f}] was directed by {p}?", "[{p}] directed {f}, didn't they?"],
        "has_genre": ["Is [{f}] {g_a}?", "Would you call [{f}] {g_a}?", "Does [{f}] count as {g_a}?",
                      "Is [{f}] classed as {g_a}?", "[{f}]: is that {g_a}?"],
        "starred_actors": ["Was [{p}] in the cast of {f}?", "Did [{p}] act in {f}?", "Does [{f}] star {p}?",
                           "Is [{p}] one of the actors in {f}?", "Did [{f}] feature {p}?"],
        "release_year": ["Did [{f}] come out in {y}?", "Was [{f}] released in {y}?", "Is [{f}] a {y} film?",
                         "Was [{f}] made in {y}?", "[{f}] came out in {y}, right?"],
    }),
    "comparison": interleave({
        "earlier": ["Which is older, [{a}] or {b}?", "[{a}] or {b}: which one was released first?",
                    "Of [{a}] and {b}, which movie was made earlier?", "Which came out first, [{a}] or {b}?"],
        "later": ["[{a}] or {b}: which was made later?", "Which is newer, [{a}] or {b}?",
                  "Which film is more recent, [{a}] or {b}?", "Between [{a}] and {b}, which one came out last?"],
        "after_yn": ["Did [{a}] come out after {b}?", "Was [{a}] released later than {b}?", "Is [{a}] newer than {b}?"],
        "before_yn": ["Is [{a}] older than {b}?", "Did [{a}] come out before {b}?", "Was [{a}] made earlier than {b}?"],
    }),
    "comparison_constant": interleave({
        "before": ["Did [{f}] come out before {y}?", "Is [{f}] from earlier than {y}?",
                   "Was [{f}] made prior to {y}?", "Was [{f}] released before {y}?", "Does [{f}] predate {y}?"],
        "after": ["Was [{f}] released after {y}?", "Did [{f}] come out later than {y}?",
                  "Was [{f}] made after {y}?", "Is [{f}] more recent than {y}?", "Did [{f}] hit theaters after {y}?"],
    }),
    "superlative_value": interleave({
        "directed_by:latest": ["What is the most recent film [{p}] directed?", "What's the newest movie directed by [{p}]?",
                               "Name the latest picture [{p}] directed."],
        "directed_by:earliest": ["Which was the first film [{p}] directed?", "What is the earliest movie directed by [{p}]?",
                                 "Which film did [{p}] direct first?"],
        "written_by:latest": ["What's the latest film written by [{p}]?", "Which was the last movie [{p}] wrote?",
                              "Of the films [{p}] wrote, which came out most recently?"],
        "written_by:earliest": ["What was the first movie [{p}] wrote?", "Which is the oldest film written by [{p}]?",
                                "Tell me the earliest film with a writing credit for [{p}]."],
        "starred_actors:latest": ["What's the most recent movie [{p}] appeared in?",
                                  "Which film starring [{p}] came out last?", "What is [{p}]'s newest film as an actor?"],
        "starred_actors:earliest": ["What was [{p}]'s first film as an actor?", "Which is the earliest picture [{p}] acted in?",
                                    "Of the movies starring [{p}], which is the oldest?"],
    }),
    "superlative_count": interleave({
        "directed_by:more": ["Who directed more films, [{a}] or {b}?", "[{a}] or {b}: who has more directing credits?",
                             "Who has made more movies as a director, [{a}] or {b}?"],
        "directed_by:most3": ["Which of [{a}], {b} and {c} directed the most films?",
                              "Who directed the most movies: [{a}], {b} or {c}?"],
        "starred_actors:more": ["Who has acted in more movies, [{a}] or {b}?", "Between [{a}] and {b}, who appeared in more films?",
                                "Who's been in more pictures, [{a}] or {b}?"],
        "starred_actors:fewer": ["Who acted in fewer films, [{a}] or {b}?", "[{a}] or {b}: who has fewer acting credits?"],
        "written_by:more": ["Who wrote more films, [{a}] or {b}?", "Which writer has more films to their name, [{a}] or {b}?",
                            "[{a}] or {b}, who wrote more movies?"],
        "starred_actors:most3": ["Who has appeared in the most films: [{a}], {b} or {c}?",
                                 "Of [{a}], {b} and {c}, which actor starred in the most movies?"],
    }),
    "entity_constraint": interleave({
        "genre:directed_by": ["Which {g_pl} did [{p}] direct?", "List the {g_pl} directed by [{p}].",
                              "Of the films [{p}] directed, which are {g_pl}?"],
        "genre:starred_actors": ["Which of [{p}]'s films are {g_pl}?", "What {g_pl} has [{p}] acted in?",
                                 "Name the {g_pl} starring [{p}]."],
        "directed_by+starred_actors": ["Which movies did [{p}] direct with {q} in the cast?",
                                       "What films starring [{q}] were directed by {p}?",
                                       "Which [{p}] films feature {q}?"],
        "written_by+starred_actors": ["Which films written by [{p}] star {q}?",
                                      "What movies did [{p}] write that {q} appeared in?",
                                      "Show me films with [{q}] in the cast that {p} wrote."],
        "genre:written_by": ["Which {g_pl} did [{p}] write?", "Give me the {g_pl} written by [{p}]."],
    }),
    "value_constraint": interleave({
        "directed_by:before": ["Which films did [{p}] direct before {y}?", "What did [{p}] direct before {y}?"],
        "written_by:after": ["List the films [{p}] wrote after {y}.", "Which movies written by [{p}] came out after {y}?"],
        "starred_actors:in": ["Which movies starring [{p}] came out in {y}?", "What films was [{p}] in in {y}?"],
        "directed_by:since": ["What movies has [{p}] directed since {y}?", "Which films has [{p}] made as a director since {y}?"],
        "starred_actors:between": ["Which films did [{p}] act in between {y1} and {y2}?",
                                   "Give me [{p}]'s movies as an actor from {y1} to {y2}."],
        "directed_by:decade": ["Which films did [{p}] direct in the {d}?", "Name the movies [{p}] directed during the {d}."],
        "written_by:before": ["Which pictures written by [{p}] were released before {y}?", "What had [{p}] written before {y}?"],
        "starred_actors:after": ["Tell me which films [{p}] starred in after {y}.", "[{p}] appeared in which movies after {y}?"],
        "written_by:decade": ["Which of [{p}]'s screenplays came out in the {d}?", "What films did [{p}] write in the {d}?"],
    }),
    "count_constraint": interleave({
        "starred_actors:before": ["How many films did [{p}] act in before {y}?",
                                  "In how many movies released before {y} did [{p}] appear?"],
        "genre:directed_by": ["How many {g_pl} did [{p}] direct?", "[{p}] directed how many {g_pl}?"],
        "directed_by:after": ["How many pictures has [{p}] directed since {y}?", "How many movies did [{p}] direct after {y}?"],
        "genre:starred_actors": ["Tell me how many {g_pl} [{p}] starred in.", "How many of [{p}]'s films are {g_pl}?"],
        "written_by:decade": ["How many films did [{p}] write in the {d}?", "Count the movies written by [{p}] in the {d}."],
        "written_by:before": ["How many of the films [{p}] wrote were released before {y}?",
                              "How many screenplays had [{p}] written before {y}?"],
        "directed_by:decade": ["[{p}] directed how many films in the {d}?", "How many movies did [{p}] make in the {d}?"],
    }),
    "round_trip": interleave({
        "directed_by": ["Which films share a director with [{f}]?", "What other movies were made by the director of [{f}]?",
                        "The director of [{f}] also directed which films?", "What else did [{f}]'s director direct?",
                        "Name the other films by whoever directed [{f}].", "List movies directed by the same person as [{f}]."],
        "written_by": ["What other films did the writer of [{f}] write?", "Which movies have the same screenwriter as [{f}]?",
                       "Whoever wrote [{f}] also wrote which films?", "Give me other films written by [{f}]'s writer."],
    }),
    "value": interleave({
        "release_year": ["When was [{f}] released?", "What year did [{f}] come out?", "In which year was [{f}] made?",
                         "[{f}] came out in what year?", "Tell me the release year of [{f}].", "When did [{f}] hit theaters?",
                         "Which year is [{f}] from?", "What's the release year for [{f}]?"],
    }),
}

# More wordings, for tuning only (``--tuning``): every one of them goes to ``dev-train``, and
# none of them is a dev-test wording. Written after the first measurement of the dev-test
# half, in the ways QALD-10's yes/no questions are put ("Was X a chemist?", "Did X ever win
# …?"), so that tuning meets wordings it was not written from.
TUNING_WORDINGS: dict[str, list[tuple[str, str]]] = {
    "boolean": [
        ("directed_by", "Was [{p}] the director of {f}?"), ("directed_by", "Has [{p}] ever directed {f}?"),
        ("directed_by", "Did [{f}] have {p} as its director?"), ("directed_by", "Was it [{p}] who directed {f}?"),
        ("has_genre", "Is [{f}] considered {g_a}?"), ("has_genre", "Can [{f}] be called {g_a}?"),
        ("has_genre", "Would [{f}] be classified as {g_a}?"),
        ("starred_actors", "Is [{p}] in {f}?"), ("starred_actors", "Has [{p}] appeared in {f}?"),
        ("starred_actors", "Did [{p}] star in {f}?"), ("starred_actors", "Was [{p}] among the cast of {f}?"),
        ("starred_actors", "Does [{f}] have {p} in it?"),
        ("release_year", "Was [{f}] a {y} release?"), ("release_year", "Did [{f}] premiere in {y}?"),
        ("release_year", "Is [{f}] from {y}?"), ("release_year", "Did [{f}] hit theaters in {y}?"),
    ],
    "comparison": [
        ("earlier", "Which was released earlier, [{a}] or {b}?"), ("earlier", "Was [{a}] or {b} made first?"),
        ("earlier", "Which of [{a}] and {b} came out first?"), ("later", "Which one is more recent: [{a}] or {b}?"),
        ("later", "Which was released later, [{a}] or {b}?"), ("after_yn", "Was [{a}] made after {b}?"),
        ("after_yn", "Did [{a}] come out later than {b}?"), ("before_yn", "Did [{a}] come before {b}?"),
        ("before_yn", "Was [{a}] released earlier than {b}?"),
    ],
    "value_constraint": [
        ("directed_by:before", "Which movies did [{p}] direct prior to {y}?"),
        ("written_by:after", "What has [{p}] written after {y}?"),
        ("starred_actors:in", "Which films with [{p}] are from {y}?"),
        ("directed_by:since", "Which films did [{p}] direct from {y} onwards?"),
        ("starred_actors:between", "Which [{p}] movies came out from {y1} through {y2}?"),
        ("directed_by:decade", "What did [{p}] direct in the {d}?"),
    ],
    "round_trip": [
        ("directed_by", "Which movies were directed by the person who directed [{f}]?"),
        ("directed_by", "What are the other films of [{f}]'s director?"),
        ("directed_by", "Find films by the same director as [{f}]."),
        ("directed_by", "What films come from the director of [{f}]?"),
        ("written_by", "What else did the screenwriter of [{f}] write?"),
        ("written_by", "Which films were written by the person who wrote [{f}]?"),
        ("written_by", "Name other screenplays by [{f}]'s writer."),
        ("written_by", "Which movies share a writer with [{f}]?"),
    ],
}
YES_NO_KINDS = {("comparison", "after_yn"), ("comparison", "before_yn")}


def check_wordings() -> None:
    """Each shape: 6+ wordings, every kind in both splits, and exactly one bracketed name,
    the first entity named."""
    for shape, ws in WORDINGS.items():
        assert len(ws) >= 6, shape
        for parity in (0, 1):
            kinds = {k for i, (k, _) in enumerate(ws) if i % 2 == parity}
            assert kinds == {k for k, _ in ws}, (shape, parity)
        for _, text in ws:
            slots = re.findall(r"\{(\w+)\}", text)
            first = next(s for s in slots if s in ENTITY_SLOTS)
            assert text.count("[") == text.count("]") == 1 and f"[{{{first}}}]" in text, text


# ---------------------------------------------------------------------------------------------
# The KB

_NUMBER = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?$")  # canonical numerals: values, not entities
_READS_AS_VALUE = re.compile(r"^[\W\d_]*$")


class KB:
    def __init__(self, path: Path):
        self.fwd = defaultdict(lambda: defaultdict(set))  # relation → subject → objects
        self.inv = defaultdict(lambda: defaultdict(set))  # relation → object → subjects
        entities = set()
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("|")
                if len(parts) != 3:
                    continue
                s, rel, o = (x.strip() for x in parts)
                self.fwd[rel][s].add(o)
                self.inv[rel][o].add(s)
                entities.add(s)
                if not _NUMBER.match(o):
                    entities.add(o)
        self.films = {s for rel in self.fwd for s in self.fwd[rel]}
        self.persons = {p for rel in PEOPLE for p in self.inv[rel]}
        self.bearers = Counter(e.casefold() for e in entities)
        self.years = {f: {int(y) for y in ys if y.isdigit()} for f, ys in self.fwd["release_year"].items()}
        self.year = {f: next(iter(ys)) for f, ys in self.years.items() if len(ys) == 1}
        self.last_year = max(self.year.values())  # no question asks about a year past the KB's

    def named(self, x: str, *, pair: bool = False) -> bool:
        """x has a label no other entity bears, and reads as a name (see the module doc)."""
        if (self.bearers[x.casefold()] != 1 or (x in self.films and x in self.persons)
                or _READS_AS_VALUE.match(x) or any(c in x for c in "[]?") or len(self.years.get(x, ())) > 1):
            return False
        return not pair or ("," not in x and not re.search(r"\b(or|and)\b", x, re.IGNORECASE))

    def films_of(self, rel: str, p: str) -> set[str]:
        return self.inv[rel].get(p, set())

    def all_dated(self, films) -> bool:
        return bool(films) and all(f in self.year for f in films)

    def only_role(self, p: str, rel: str) -> bool:
        return all(p not in self.inv[r] for r in PEOPLE if r != rel)


# ---------------------------------------------------------------------------------------------
# Generators: make(kind, rng, want) → (values, answers, topic) or None (try another draw)

def yn(b: bool) -> list[str]:
    return ["yes" if b else "no"]


def thresholds(years: set[int], lo: int, hi: int) -> list[int]:
    """Years in [lo, hi] that are no film's year, round ones first when there are any."""
    cands = [t for t in range(lo, hi + 1) if t not in years]
    round_ = [t for t in cands if t % 5 == 0]
    return round_ or cands


class Sets:
    def __init__(self, kb: KB):
        self.kb = kb
        k = kb
        self.person_pool = {rel: sorted(p for p in k.inv[rel] if k.named(p)) for rel in PEOPLE}
        self.pair_pool = {rel: [p for p in self.person_pool[rel] if k.named(p, pair=True)] for rel in PEOPLE}
        self.dated_films = sorted(f for f in k.year if k.named(f))
        self.pair_films = [f for f in self.dated_films if k.named(f, pair=True)]
        self.films_with = {rel: sorted(f for f in k.fwd[rel] if k.named(f)) for rel in PEOPLE + ("has_genre",)}

    def person(self, rng, rel, lo, hi, *, dated=False, pool=None):
        p = rng.choice(pool or self.person_pool[rel])
        films = self.kb.films_of(rel, p)
        if not lo <= len(films) <= hi or (dated and not self.kb.all_dated(films)):
            return None, None
        return p, films

    # -- shapes ------------------------------------------------------------------------------
    def count(self, kind, rng, want):
        p, films = self.person(rng, kind, 2, 15)
        return p and ({"p": p}, [str(len(films))], p)

    def boolean(self, kind, rng, want):
        k = self.kb
        if kind in ("directed_by", "starred_actors"):
            f = rng.choice(self.films_with[kind])
            have = k.fwd[kind][f]
            if want:
                cands = sorted(p for p in have if k.named(p))
                p = rng.choice(cands) if cands else None
            else:
                p = rng.choice(self.person_pool[kind])
                if p in have or len(k.films_of(kind, p)) < 2:
                    return None
            return p and ({"p": p, "f": f}, yn(want), None)  # topic: the wording's first-named
        if kind == "has_genre":
            f = rng.choice(self.films_with["has_genre"])
            have = k.fwd["has_genre"][f]
            if not have <= set(GENRES):
                return None
            g = rng.choice(sorted(have)) if want else rng.choice([g for g in COMMON_GENRES if g not in have])
            return {"f": f, "g_a": GENRES[g][0]}, yn(want), f
        f = rng.choice(self.dated_films)  # release_year
        y = k.year[f] if want else k.year[f] + rng.choice([-6, -4, -3, -2, -1, 1, 2, 3, 5, 7])
        return y <= k.last_year and ({"f": f, "y": y}, yn(want), f)

    def comparison(self, kind, rng, want):
        a, b = rng.sample(self.pair_films, 2)
        ya, yb = self.kb.year[a], self.kb.year[b]
        if ya == yb:
            return None
        if kind in ("after_yn", "before_yn"):
            if (ya > yb) != (want if kind == "after_yn" else not want):
                a, b = b, a
            return {"a": a, "b": b}, yn(want), a
        pick = min if kind == "earlier" else max
        return {"a": a, "b": b}, [pick((a, b), key=self.kb.year.get)], a

    def comparison_constant(self, kind, rng, want):
        f = rng.choice(self.dated_films)
        y = self.kb.year[f]
        later = want if kind == "before" else not want  # the threshold lies after the film's year
        ts = thresholds({y}, y + 1, min(y + 15, self.kb.last_year)) if later else thresholds({y}, y - 15, y - 1)
        if not ts:
            return None
        t = rng.choice(ts)
        return {"f": f, "y": t}, yn(want), f

    def superlative_value(self, kind, rng, want):
        rel, end = kind.split(":")
        p, films = self.person(rng, rel, 3, 25, dated=True)
        if not p:
            return None
        pick = max if end == "latest" else min
        best = pick(self.kb.year[f] for f in films)
        winners = [f for f in films if self.kb.year[f] == best]
        return len(winners) == 1 and ({"p": p}, winners, p)

    def superlative_count(self, kind, rng, want):
        rel, how = kind.split(":")
        people = rng.sample(self.pair_pool[rel], 3 if how == "most3" else 2)
        counts = [len(self.kb.films_of(rel, p)) for p in people]
        if len(set(counts)) != len(counts) or min(counts) < 2 or max(counts) > 60:
            return None
        pick = min if how == "fewer" else max
        winner = people[counts.index(pick(counts))]
        return dict(zip("abc", people)), [winner], people[0]

    def genre_person(self, kind, rng):
        """(relation, person, films) for a "genre:<relation>" kind: a person of 3..40 films
        along it, each film's genre known; None when the draw does not fit."""
        k = self.kb
        rel = kind.split(":")[1]
        p, films = self.person(rng, rel, 3, 40)
        if (not p or (rel == "starred_actors" and not k.only_role(p, rel))
                or not all(k.fwd["has_genre"].get(f) for f in films)):  # each film's genre known
            return None
        return rel, p, films

    def entity_constraint(self, kind, rng, want):
        k = self.kb
        if kind.startswith("genre:"):
            found = self.genre_person(kind, rng)
            if found is None:
                return None
            rel, p, films = found
            by_genre = defaultdict(set)
            for f in films:
                for g in k.fwd["has_genre"].get(f, ()):
                    by_genre[g].add(f)
            gs = sorted(g for g, fs in by_genre.items() if g in GENRES and fs != films)
            if not gs:
                return None
            g = rng.choice(gs)
            return {"p": p, "g_pl": GENRES[g][1]}, sorted(by_genre[g]), p
        rel1, rel2 = kind.split("+")
        p, films = self.person(rng, rel1, 3, 40, pool=self.pair_pool[rel1])
        if not p:
            return None
        qs = sorted({q for f in films for q in k.fwd[rel2].get(f, ()) if q != p and k.named(q, pair=True)})
        if not qs:
            return None
        q = rng.choice(qs)
        both = films & k.films_of(rel2, q)
        if both == films or both == k.films_of(rel2, q):
            return None
        return {"p": p, "q": q}, sorted(both), None  # topic: set by the wording (first named)

    def _year_filter(self, ctype, years: set[int], rng):
        """(values, predicate) for a year constraint that splits ``years`` strictly, or None."""
        lo, hi = min(years), max(years)
        if lo == hi:
            return None
        if ctype in ("before", "after", "since"):
            ts = thresholds(years, lo + 1, hi - 1)
            if not ts:
                return None
            t = rng.choice(ts)
            return {"y": t}, ((lambda y: y < t) if ctype == "before" else (lambda y: y > t))
        if ctype == "in":
            t = rng.choice(sorted(years))
            return {"y": t}, (lambda y: y == t)
        if ctype == "decade":
            d = rng.choice(sorted({y // 10 * 10 for y in years}))
            if lo // 10 * 10 == d and hi // 10 * 10 == d:
                return None
            return {"d": f"{d}s"}, (lambda y: d <= y < d + 10)
        # between: bounds no film's year, some years inside and some outside
        ts = [t for t in range(lo - 4, hi + 5) if t not in years]
        pairs = [(a, b) for i, a in enumerate(ts) for b in ts[i + 1:]
                 if b - a >= 3 and any(a < y < b for y in years) and any(not a < y < b for y in years)]
        round_ = [(a, b) for a, b in pairs if a % 5 == 0 and b % 5 == 0]
        if not (round_ or pairs):
            return None
        a, b = rng.choice(round_ or pairs)
        return {"y1": a, "y2": b}, (lambda y: a < y < b)

    def value_constraint(self, kind, rng, want):
        rel, ctype = kind.split(":")
        p, films = self.person(rng, rel, 3, 30, dated=True)
        if not p:
            return None
        years = {self.kb.year[f] for f in films}
        got = self._year_filter(ctype, years, rng)
        if not got:
            return None
        values, keep = got
        answers = sorted(f for f in films if keep(self.kb.year[f]))
        if not answers or len(answers) == len(films):
            return None
        return {"p": p, **values}, answers, p

    def count_constraint(self, kind, rng, want):
        k = self.kb
        if kind.startswith("genre:"):
            found = self.genre_person(kind, rng)
            if found is None:
                return None
            rel, p, films = found
            counts = Counter(g for f in films for g in k.fwd["has_genre"].get(f, ()) if g in GENRES)
            gs = sorted(g for g, c in counts.items() if c < len(films))
            if not gs:
                return None
            g = rng.choice(gs)
            return {"p": p, "g_pl": GENRES[g][1]}, [str(counts[g])], p
        rel, ctype = kind.split(":")
        p, films = self.person(rng, rel, 3, 30, dated=True)
        if not p:
            return None
        got = self._year_filter(ctype, {k.year[f] for f in films}, rng)
        if not got:
            return None
        values, keep = got
        n = sum(1 for f in films if keep(k.year[f]))
        return 1 <= n < len(films) and ({"p": p, **values}, [str(n)], p)

    def round_trip(self, kind, rng, want):
        f = rng.choice(self.films_with[kind])
        people = self.kb.fwd[kind][f]
        if len(people) != 1:
            return None
        others = self.kb.films_of(kind, next(iter(people))) - {f}
        return 2 <= len(others) <= 20 and ({"f": f}, sorted(others), f)

    def value(self, kind, rng, want):
        f = rng.choice(self.dated_films)
        return {"f": f}, [str(self.kb.year[f])], f


# ---------------------------------------------------------------------------------------------

def render(text: str, values: dict) -> tuple[str, str]:
    """(the brackets variant, the plain variant) of one question."""
    q = text.format(**values)
    return q, text.replace("[", "").replace("]", "").format(**values)


def draw(make, kind: str, text: str, rng, want: bool, used: set, tries: int = 5000) -> tuple[dict, list] | None:
    """(values, answers) of one question of ``kind`` worded as ``text``, from ``make``, whose
    topic (the wording's first-named entity unless ``make`` names one) is not yet in
    ``used`` (it is added); None when ``tries`` draws find none."""
    for _ in range(tries):
        got = make(kind, rng, want)
        if not got:
            continue
        values, answers, topic = got
        if topic is None:  # the wording's first-named entity
            topic = values[next(s for s in re.findall(r"\{(\w+)\}", text) if s in ENTITY_SLOTS)]
        if topic in used:
            continue
        used.add(topic)
        return values, answers
    return None


def build(kb: KB, n: int, seed: int, *, tuning: bool = False) -> dict[str, dict[str, list[dict]]]:
    """shape → split → items (each with both variants' questions); with ``tuning``, the
    :data:`TUNING_WORDINGS`, all of them in ``dev-train``."""
    check_wordings()
    sets = Sets(kb)
    out = {}
    for shape, wordings in (TUNING_WORDINGS if tuning else WORDINGS).items():
        rng = random.Random(f"{seed}:{shape}" + (":tuning" if tuning else ""))
        make = getattr(sets, shape)
        used, number, out[shape] = set(), 0, {}
        for parity, split in enumerate(SPLITS[:1] if tuning else SPLITS):
            mine = [(i, kind, text) for i, (kind, text) in enumerate(wordings) if tuning or i % 2 == parity]
            uses, items = Counter(), []
            for k in range(n):
                if shape in ("boolean", "comparison_constant"):  # half yes, half no, each wording both
                    i, kind, text = mine[(k // 2) % len(mine)]
                    want = k % 2 == 0
                else:
                    i, kind, text = mine[k % len(mine)]
                    want = uses[i] % 2 == 0  # yes/no wordings alternate
                uses[i] += 1
                got = draw(make, kind, text, rng, want, used)
                if got is None:
                    print(f"warning: {shape} wording {i} found no question", file=sys.stderr)
                    continue
                values, answers = got
                brackets, plain = render(text, values)
                items.append({"question": {"brackets": brackets, "plain": plain}, "answers": answers,
                              "type": shape, "id": f"{shape}-{number}", "wording": i})
                number += 1
            out[shape][split] = items
    return out


def write(sets: dict, out_dir: Path) -> None:
    for shape, splits in sets.items():
        for split, items in splits.items():
            for variant in VARIANTS:
                d = out_dir / split / variant
                d.mkdir(parents=True, exist_ok=True)
                with open(d / f"{shape}.jsonl", "w", encoding="utf-8") as f:
                    for item in items:
                        f.write(json.dumps({**item, "question": item["question"][variant]}, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="where <split>/<variant>/<shape>.jsonl go")
    ap.add_argument("--kb", default=str(DEFAULT_KB), help=f"the MetaQA KB file (default: {DEFAULT_KB})")
    ap.add_argument("--n", type=int, default=40, help="questions per shape per split (default 40)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    ap.add_argument("--tuning", action="store_true",
                    help="write the further wordings kept for tuning (TUNING_WORDINGS), all as dev-train")
    args = ap.parse_args()
    kb_path = Path(args.kb)
    if not kb_path.is_file():
        ap.error(f"no KB file at {kb_path} (give one with --kb)")
    sets = build(KB(kb_path), args.n, args.seed, tuning=args.tuning)
    out_dir = Path(args.out_dir)
    write(sets, out_dir)
    print(f"{'shape':<22}{'wordings':>9}{'dev-train':>11}{'dev-test':>10}")
    for shape, splits in sets.items():
        wordings = (TUNING_WORDINGS if args.tuning else WORDINGS)[shape]
        print(f"{shape:<22}{len(wordings):>9}" + "".join(f"{len(splits.get(s, [])):>{w}}" for s, w in zip(SPLITS, (11, 10))))
    total = sum(len(items) for splits in sets.values() for items in splits.values())
    print(f"{total} questions per variant ({', '.join(VARIANTS)}) → {out_dir}/<split>/<variant>/<shape>.jsonl")


if __name__ == "__main__":
    main()

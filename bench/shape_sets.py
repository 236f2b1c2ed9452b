"""Write dev sets of question shapes from a store's own facts, so every gold answer is
correct by construction (issue 29, section 3).

    python bench/shape_sets.py STORE OUT_DIR --kb metaqa [--n 40] [--seed 0]
    python bench/shape_sets.py STORE OUT_DIR --kb wikidata [--n 40] [--seed 0]

Writes ``OUT_DIR/<shape>.jsonl``, one ``{"question", "answers", "type", "sparql"}`` a line,
for ``kgstore eval STORE --questions OUT_DIR/<shape>.jsonl`` (a shape that got no question
writes no file). ``--kb metaqa`` (a MetaQA store):

* ``count``: "how many films did [X] direct" (gold: the number of facts);
* ``boolean``: "did [X] direct [Y]", half of them *no* (the subject holds the relation
  with other values, so the store can say no);
* ``comparison``: "which film came out earlier, [A] or [B]" (values differ);
* ``superlative``: "what is the most recent film directed by [X]" (a unique extreme);
* ``constraint``: "which films were directed by [X] and starred [Y]" (a strict intersection);
* ``round_trip`` (MetaQA only): real MetaQA 2-hop dev questions that go there and back
  ("the director of [X] also directed which movies"), read from the dev file, not written.

``--kb wikidata``: value questions on any Wikidata store ingested with ``--statements full``
(e.g. data/sample-wikidata-values.json), its facts found by the type of their values
(statement nodes ``p:``/``ps:``, precisions and units on the ``psv:``/``pqv:`` value nodes;
deprecated statements never count, a plain value is the best rank's):

* ``date``: "when was [X] born" (gold: the date at the precision stored: ``1952-03-11``,
  ``1952-03``, or a year as a typed ``xsd:gYear`` term, since a bare ``1952`` reads as a number);
* ``quantity``: "how high is [X]" (gold: the amount, in the unit most of the property's
  statements use; subjects with several best-rank values are left out);
* ``qualifier``: "what was the population of [X] in 2011" (statements dated by point in
  time), "who was [X]'s spouse in 1995" (a year strictly inside one start/end span and no
  other), "when did [X] marry [Y]" / "when did [X] receive [Y]" (a time qualifier of the
  only statement for the pair, at its precision);
* ``value_comparison``: "which is higher, [A] or [B]", "who was born earlier, [A] or [B]"
  (gold: the name; dates compared at the coarser precision of the two, values differ).

Entities are named in brackets, only by a label no other entity bears. A property without
a phrasing of its own is asked as "what is the <label> of [X]" (and the like).

The phrasings live here, per knowledge base, and several per relation: they are test data.
Nothing here reaches a method.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pyoxigraph as ox

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


def is_latest(template: str) -> bool:
    return any(w in template for w in ("recent", "latest"))


def superlative_winners(template: str, films: list[str], year: dict[str, int]) -> list[str]:
    extreme = (max if is_latest(template) else min)(year[f] for f in films)
    return [f for f in films if year[f] == extreme]


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
        winners = superlative_winners(template, dated, year)
        if len(winners) != 1:  # a tie at this end: ask for the other end (no new draw, so later sets stay)
            template = next(t for t in METAQA[rel]["superlative"] if is_latest(t) != is_latest(template))
            winners = superlative_winners(template, dated, year)
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
        # sorted: a set's order changes with the process's string hashing, and the draw must not
        actors = [a for f in sorted(films1) for a in sorted(objects["starred_actors"].get(f, ())) if good(a)]
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


# Wikidata (any store ingested with --statements full): phrasings keyed by property id,
# {s} the subject, {o} an object, {y} a year. A property without a phrasing gets the
# fallback "what is the <label> of [X]" (and the like for the other shapes).
WD, WDT, P, PS = ("http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/",
                  "http://www.wikidata.org/prop/", "http://www.wikidata.org/prop/statement/")
PSV, PQV = "http://www.wikidata.org/prop/statement/value/", "http://www.wikidata.org/prop/qualifier/value/"
WIKIBASE = "http://wikiba.se/ontology#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DEPRECATED, PREFERRED = WIKIBASE + "DeprecatedRank", WIKIBASE + "PreferredRank"
MAX_STATEMENTS = 200_000  # read per property: plenty for dev sets, bounded on a full dump
OPEN_END_YEARS = 5  # a statement with a start and no end is asked about up to this many years on

WD_VALUE = {  # the value of a time or quantity property
    "P569": ["when was [{s}] born", "what is the date of birth of [{s}]", "what is [{s}]'s date of birth"],
    "P570": ["when did [{s}] die", "what is the date of death of [{s}]", "what is [{s}]'s date of death"],
    "P571": ["when was [{s}] founded", "what is the inception date of [{s}]"],
    "P577": ["when was [{s}] published", "what is the publication date of [{s}]"],
    "P2044": ["how high is [{s}]", "what is the elevation of [{s}]", "how high above sea level is [{s}]"],
    "P2046": ["what is the area of [{s}]", "how large is [{s}]", "how big is [{s}] in area"],
    "P1082": ["what is the population of [{s}]", "how many people live in [{s}]", "how many inhabitants does [{s}] have"],
    "P2048": ["how tall is [{s}]", "what is the height of [{s}]"],
    "P2043": ["how long is [{s}]", "what is the length of [{s}]"],
}
WD_AT_TIME = {  # the value of a statement qualified by point in time (P585) in year {y}
    "P1082": ["what was the population of [{s}] in {y}", "how many people lived in [{s}] in {y}",
              "what was [{s}]'s population in {y}"],
    "P166": ["what award did [{s}] receive in {y}", "which prize was [{s}] awarded in {y}"],
    "P2046": ["what was the area of [{s}] in {y}"],
}
WD_DURING = {  # the object of a statement whose start (P580) and end (P582) times hold year {y}
    "P26": ["who was [{s}]'s spouse in {y}", "who was [{s}] married to in {y}", "who was the spouse of [{s}] in {y}"],
    "P54": ["which team did [{s}] play for in {y}", "what club was [{s}] playing for in {y}",
            "which sports team was [{s}] a member of in {y}"],
    "P6": ["who was the head of government of [{s}] in {y}"],
    "P35": ["who was the head of state of [{s}] in {y}"],
    "P39": ["what position did [{s}] hold in {y}"],
    "P108": ["who was [{s}]'s employer in {y}", "where did [{s}] work in {y}"],
}
WD_WHEN = {  # a time qualifier of the statement (subject, property, object)
    ("P26", "P580"): ["when did [{s}] marry [{o}]", "when did [{s}] and [{o}] get married",
                      "when did [{s}] get married to [{o}]"],
    ("P26", "P582"): ["when did [{s}]'s marriage to [{o}] end"],
    ("P54", "P580"): ["when did [{s}] start playing for [{o}]", "when did [{s}] join [{o}]"],
    ("P54", "P582"): ["when did [{s}] leave [{o}]", "when did [{s}] stop playing for [{o}]"],
    ("P166", "P585"): ["when did [{s}] receive [{o}]", "when was [{s}] awarded [{o}]", "when did [{s}] win [{o}]"],
    ("P39", "P580"): ["when did [{s}] become [{o}]", "when did [{s}] take office as [{o}]"],
    ("P108", "P580"): ["when did [{s}] start working for [{o}]"],
}
WD_COMPARE = {  # (phrasing, "max" or "min": which value the answer holds); {n}: a class both belong to
    "P2044": [("which is higher, [{a}] or [{b}]", "max"), ("which {n} is higher, [{a}] or [{b}]", "max"),
              ("which is lower, [{a}] or [{b}]", "min"), ("which of [{a}] and [{b}] is higher above sea level", "max")],
    "P2046": [("which {n} is larger, [{a}] or [{b}]", "max"), ("which is larger in area, [{a}] or [{b}]", "max"),
              ("which {n} is smaller, [{a}] or [{b}]", "min"), ("which has the smaller area, [{a}] or [{b}]", "min")],
    "P569": [("who was born earlier, [{a}] or [{b}]", "min"), ("who was born first, [{a}] or [{b}]", "min"),
             ("who was born later, [{a}] or [{b}]", "max"), ("which of [{a}] and [{b}] was born first", "min")],
    "P570": [("who died earlier, [{a}] or [{b}]", "min"), ("who died first, [{a}] or [{b}]", "min"),
             ("who died later, [{a}] or [{b}]", "max")],
    "P2048": [("which is taller, [{a}] or [{b}]", "max"), ("which {n} is taller, [{a}] or [{b}]", "max")],
    "P2043": [("which is longer, [{a}] or [{b}]", "max"), ("which {n} is longer, [{a}] or [{b}]", "max")],
}
_PRECISIONS = {9: "year", 10: "month", 11: "day"}  # Wikidata time precisions a gold can be written at
_DATETIME = re.compile(r"^(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)")
_READS_AS_VALUE = re.compile(r"^[\W\d_]*$|^(yes|no|true|false)$|^(\d{1,2}\s+)?[A-Za-z]+\.?\s+(\d{1,2},?\s+)?\d{3,4}$",
                             re.IGNORECASE)  # digits, booleans, "March 1968": names the scorer would read as values


@dataclass
class Statement:
    """One statement node: subject, property id, value (a pyoxigraph term), rank, the
    value's time precision or quantity unit, and its time qualifiers (property id → list
    of (xsd:dateTime lexical form, precision))."""
    s: str
    pid: str
    node: str
    value: object
    rank: str
    precision: int | None = None
    unit: str | None = None
    times: dict = field(default_factory=dict)

    @property
    def key(self) -> str:  # the value, to tell values apart
        return self.value.value


def wd_properties(store) -> dict[str, str]:
    """Property id → its Wikibase type (Time, Quantity, WikibaseItem, ...) as the property
    entities declare it; in a dump that declares no time or quantity property (a few
    entities without their properties), every property typed by its statements' values."""
    rows = store.query(f"SELECT ?p ?t WHERE {{ ?p <{WIKIBASE}propertyType> ?t }}")
    types = {r["p"].value[len(WD):]: r["t"].value[len(WIKIBASE):] for r in rows if r["p"].value.startswith(WD + "P")}
    if any(kind in ("Time", "Quantity") for kind in types.values()):
        return types
    rows = store.query(f'SELECT DISTINCT ?p WHERE {{ ?s ?p ?o FILTER(STRSTARTS(STR(?p), "{WDT}P")) }}')
    for pid in sorted(r["p"].value[len(WDT):] for r in rows):
        for kind, pattern in (("Time", f"?st <{PSV}{pid}> ?n . ?n <{WIKIBASE}timeValue> ?x"),
                              ("Quantity", f"?st <{PSV}{pid}> ?n . ?n <{WIKIBASE}quantityAmount> ?x"),
                              ("WikibaseItem", f"?st <{PS}{pid}> ?x FILTER(isIRI(?x))")):
            if store.query(f"ASK {{ {pattern} }}"):
                types[pid] = kind
                break
    return types


def wd_statements(store, pid: str, *, timed_only: bool = False) -> tuple[list[Statement], bool]:
    """The statements of property ``pid`` that are not deprecated, with their time
    qualifiers (``timed_only``: only those with a time qualifier), and whether reading
    stopped at MAX_STATEMENTS."""
    timed = (f"FILTER EXISTS {{ ?st ?pqv ?tn . ?tn <{WIKIBASE}timeValue> ?t "
             f'FILTER(STRSTARTS(STR(?pqv), "{PQV}")) }}') if timed_only else ""
    rows = store.query(f"""SELECT ?s ?st ?v ?rank ?prec ?unit WHERE {{
        ?s <{P}{pid}> ?st . ?st <{PS}{pid}> ?v . {timed}
        OPTIONAL {{ ?st <{WIKIBASE}rank> ?rank }}
        OPTIONAL {{ ?st <{PSV}{pid}> ?n . OPTIONAL {{ ?n <{WIKIBASE}timePrecision> ?prec }}
                   OPTIONAL {{ ?n <{WIKIBASE}quantityUnit> ?unit }} }}
    }} LIMIT {MAX_STATEMENTS}""")
    out, truncated = {}, False
    for n, r in enumerate(rows, start=1):
        truncated = n >= MAX_STATEMENTS
        rank = r["rank"].value if r["rank"] is not None else WIKIBASE + "NormalRank"
        if rank == DEPRECATED or r["st"].value in out:
            continue
        out[r["st"].value] = Statement(r["s"].value, pid, r["st"].value, r["v"], rank,
                                       int(r["prec"].value) if r["prec"] is not None else None,
                                       r["unit"].value if r["unit"] is not None else None)
    if not out:
        return [], truncated
    rows = store.query(f"""SELECT ?st ?pqv ?t ?prec WHERE {{
        ?s <{P}{pid}> ?st . ?st ?pqv ?n . ?n <{WIKIBASE}timeValue> ?t .
        OPTIONAL {{ ?n <{WIKIBASE}timePrecision> ?prec }} FILTER(STRSTARTS(STR(?pqv), "{PQV}"))
    }}""")
    for r in rows:
        st = out.get(r["st"].value)
        if st is not None and isinstance(r["t"], ox.Literal):
            times = st.times.setdefault(r["pqv"].value[len(PQV):], [])
            entry = (r["t"].value, int(r["prec"].value) if r["prec"] is not None else None)
            if entry not in times:
                times.append(entry)
    return list(out.values()), truncated


def best_rank(statements: list[Statement]) -> list[Statement]:
    """The preferred statements if there are any, else all (none is deprecated): truthy."""
    return [s for s in statements if s.rank == PREFERRED] or statements


def wd_date(lexical: str, precision: int | None) -> tuple[tuple, str] | None:
    """An xsd:dateTime at a Wikidata precision as ((year, month, day), year|month|day), or
    None where no gold can say it (years before 1 or after 9999, decades and coarser)."""
    m = _DATETIME.match(lexical)
    if not m or precision is None or precision < 9 or int(m["y"]) < 1:
        return None
    name = _PRECISIONS.get(min(precision, 11))
    y, mo, d = int(m["y"]), int(m["m"]), int(m["d"])
    return (y, mo if name != "year" else None, d if name == "day" else None), name


def date_answer(date: tuple[tuple, str]):
    """A gold date at its precision: "1952-03-11", "1952-03", or a typed xsd:gYear (a bare
    "1952" would read as a number)."""
    (y, m, d), name = date
    if name == "day":
        return f"{y:04d}-{m:02d}-{d:02d}"
    if name == "month":
        return f"{y:04d}-{m:02d}"
    return {"type": "literal", "value": f"{y:04d}", "datatype": XSD + "gYear"}


def date_select(var: str, name: str) -> str:
    """The projection of a gold query giving ``?var`` (an xsd:dateTime) at precision ``name``."""
    if name == "day":
        return f"?{var}"
    width, datatype = (7, "gYearMonth") if name == "month" else (4, "gYear")
    return f"(STRDT(SUBSTR(STR(?{var}), 1, {width}), xsd:{datatype}) AS ?v)"


def number_answer(lexical: str):
    value = Decimal(lexical)
    return int(value) if value == value.to_integral_value() else float(value)


def sq(iri: str) -> str:
    """``iri`` in a gold query: wd:Q42 where it can, else <iri>."""
    local = iri[len(WD):] if iri.startswith(WD) else ""
    return f"wd:{local}" if re.fullmatch(r"[QPL]\d+", local) else f"<{iri}>"


def unique_names(store, iris) -> dict[str, str]:
    """The labels of ``iris`` that no other entity bears (in any of the store's
    languages), have no brackets and do not read as a value."""
    names = store.labels(iris)
    langs = list(getattr(store.config, "languages", ["en"])) + ["mul"]
    bearers = defaultdict(set)
    labels = sorted(set(names.values()))
    for i in range(0, len(labels), 200):
        values = " ".join(f"{json.dumps(label, ensure_ascii=False)}@{lang}" for label in labels[i:i + 200]
                          for lang in langs)
        for r in store.query(f"SELECT ?l ?e WHERE {{ VALUES ?l {{ {values} }} ?e <{RDFS_LABEL}> ?l }}"):
            bearers[r["l"].value].add(r["e"].value)
    return {iri: name for iri, name in names.items() if len(bearers[name] | {iri}) == 1
            and "[" not in name and "]" not in name and not _READS_AS_VALUE.match(name.strip())}


def round_robin(pools: dict, n: int, rng: random.Random, make) -> list[dict]:
    """Up to ``n`` questions, taking each pool in turn (a random candidate, not taken again)
    and asking ``make(key, candidate)`` for a question (None: try another)."""
    pools = {key: list(cands) for key, cands in sorted(pools.items()) if cands}
    out = []
    while pools and len(out) < n:
        for key in list(pools):
            if len(out) >= n:
                break
            cands = pools[key]
            item = make(key, cands.pop(rng.randrange(len(cands))))
            if item is not None:
                out.append(item)
            if not cands:
                del pools[key]
    return out


def wikidata_sets(store, n: int, rng: random.Random) -> dict[str, list[dict]]:
    types = wd_properties(store)
    plabels = {iri[len(WD):]: label for iri, label in store.labels([WD + p for p in types]).items()}
    stmts, partial = {}, set()  # pid → statements: time and quantity properties, item properties' timed ones
    for pid, kind in sorted(types.items()):
        if kind in ("Time", "Quantity", "WikibaseItem"):
            stmts[pid], truncated = wd_statements(store, pid, timed_only=kind == "WikibaseItem")
            if truncated or kind == "WikibaseItem":
                partial.add(pid)
    stmts = {pid: sts for pid, sts in stmts.items() if sts}
    if not stmts:
        print("no statement nodes (p:/ps:) with time or quantity values in the store: "
              "ingest the Wikidata dump with --statements full", file=sys.stderr)
    complete = {}  # pid → the subjects all of whose statements of pid were read (item properties: timed only)
    for pid, sts in stmts.items():
        read = Counter(st.s for st in sts)
        if pid not in partial:
            complete[pid] = set(read)
            continue
        complete[pid], subjects = set(), sorted(read)
        for i in range(0, len(subjects), 500):
            values = " ".join(sq(s) for s in subjects[i:i + 500])
            for r in store.query(f"SELECT ?s (COUNT(DISTINCT ?st) AS ?n) WHERE {{ VALUES ?s {{ {values} }} "
                                 f"?s p:{pid} ?st . MINUS {{ ?st wikibase:rank wikibase:DeprecatedRank }} }} GROUP BY ?s"):
                if int(r["n"].value) == read[r["s"].value]:
                    complete[pid].add(r["s"].value)
    by_subject = {pid: defaultdict(list) for pid in stmts}  # pid → subject → statements
    for pid, sts in stmts.items():
        for st in sts:
            by_subject[pid][st.s].append(st)
    mentioned = {st.s for sts in stmts.values() for st in sts}
    mentioned |= {st.value.value for sts in stmts.values() for st in sts if isinstance(st.value, ox.NamedNode)}
    names = unique_names(store, mentioned)

    def label(pid: str) -> str:
        return plabels.get(pid, pid)

    # one value per subject (the best rank's, when they agree): dates at their precision,
    # quantities in the unit most statements of the property use
    single = {}  # pid → subject → the statement
    for pid, subjects in by_subject.items():
        if types[pid] not in ("Time", "Quantity"):
            continue
        units = Counter(st.unit for sts in subjects.values() for st in sts)
        unit = units.most_common(1)[0][0] if units else None
        for s, sts in subjects.items():
            top = best_rank(sts)
            if s not in names or s not in complete[pid] or len({st.key for st in top}) != 1 or len({st.precision for st in top}) != 1:
                continue
            st = top[0]
            if types[pid] == "Time" and wd_date(st.key, st.precision) is None:
                continue
            if types[pid] == "Quantity" and st.unit != unit:
                continue
            single.setdefault(pid, {})[s] = st

    out = {}
    # date.jsonl and quantity.jsonl: the value of a time or quantity property
    def value_question(pid, s):
        st = single[pid][s]
        q = rng.choice(WD_VALUE.get(pid, [f"what is the {label(pid)} of [{{s}}]"])).format(s=names[s])
        if types[pid] == "Time":
            date = wd_date(st.key, st.precision)
            return {"question": q, "answers": [date_answer(date)], "type": "literal",
                    "sparql": f"SELECT {date_select('d', date[1])} WHERE {{ {sq(s)} wdt:{pid} ?d }}"}
        return {"question": q, "answers": [number_answer(st.key)], "type": "literal",
                "sparql": f"SELECT ?v WHERE {{ {sq(s)} wdt:{pid} ?v }}"}
    for shape, kind in (("date", "Time"), ("quantity", "Quantity")):
        pools = {pid: sorted(subjects) for pid, subjects in single.items() if types[pid] == kind}
        out[shape] = round_robin(pools, n, rng, value_question)

    # qualifier.jsonl: a value at a point in time, an object during a year, the time of a statement
    pools = defaultdict(list)
    for pid, subjects in by_subject.items():
        literal = types[pid] != "WikibaseItem"
        for s, sts in subjects.items():
            if s not in names or s not in complete[pid]:
                continue
            # at a point in time: when every statement is dated (P585), the values of each year
            years = defaultdict(set)
            for st in sts:
                for lexical, prec in st.times.get("P585", []):
                    date = wd_date(lexical, prec)
                    if date:
                        years[date[0][0]].add(st.key)
            dated = (all(st.times.get("P585") for st in sts) and types[pid] != "Time"
                     and len({st.unit for st in sts}) == 1)
            if dated and len(years) >= (2 if literal else 1):  # a literal's time must matter
                pools["at_time", pid] += [(s, y, min(values)) for y, values in sorted(years.items())
                                          if len(values) == 1 and (literal or min(values) in names)]
            if literal:
                continue
            # during a year: every statement has a start (P580) and, where it ended, an end (P582)
            spans = []
            for st in sts:
                start = [wd_date(*t) for t in st.times.get("P580", [])]
                end = [wd_date(*t) for t in st.times.get("P582", [])]
                if len(start) != 1 or not start[0] or len(end) > 1 or (end and not end[0]):
                    spans = None
                    break
                spans.append((st.value.value, start[0][0][0], end[0][0][0] if end else None))
            for o, sy, ey in spans or ():
                last = ey - 1 if ey is not None else sy + OPEN_END_YEARS
                for y in range(sy + 1, last + 1):
                    holders = {o2 for o2, sy2, ey2 in spans if sy2 <= y and (ey2 is None or y <= ey2)}
                    if holders == {o} and o in names:
                        pools["during", pid].append((s, y, o))
            # the time of a statement: its only value of a time qualifier, one statement for the pair
            per_object = Counter(st.value.value for st in sts)
            for st in sts:
                o = st.value.value
                if per_object[o] != 1 or o not in names:
                    continue
                for qpid, values in sorted(st.times.items()):
                    date = wd_date(*values[0]) if len(values) == 1 else None
                    if date and ((pid, qpid) in WD_WHEN or qpid in ("P580", "P582", "P585")):
                        pools["when", pid, qpid].append((s, o, date))

    def qualifier_question(key, cand):
        if key[0] == "at_time":
            (_, pid), (s, y, value) = key, cand
            q = rng.choice(WD_AT_TIME.get(pid, [f"what was the {label(pid)} of [{{s}}] in {{y}}"])).format(s=names[s], y=y)
            sparql = (f"SELECT ?v WHERE {{ {sq(s)} p:{pid} ?st . ?st ps:{pid} ?v ; pq:P585 ?t . FILTER(YEAR(?t) = {y}) "
                      f"MINUS {{ ?st wikibase:rank wikibase:DeprecatedRank }} }}")
            if types[pid] == "WikibaseItem":
                return {"question": q, "answers": [names[value]], "type": "chain", "sparql": sparql}
            return {"question": q, "answers": [number_answer(value)], "type": "literal", "sparql": sparql}
        if key[0] == "during":
            (_, pid), (s, y, o) = key, cand
            q = rng.choice(WD_DURING.get(pid, [f"what was the {label(pid)} of [{{s}}] in {{y}}"])).format(s=names[s], y=y)
            return {"question": q, "answers": [names[o]], "type": "chain",
                    "sparql": f"SELECT ?o WHERE {{ {sq(s)} p:{pid} ?st . ?st ps:{pid} ?o ; pq:P580 ?start . "
                              f"OPTIONAL {{ ?st pq:P582 ?end }} FILTER(YEAR(?start) <= {y} && (!BOUND(?end) || YEAR(?end) >= {y})) "
                              f"MINUS {{ ?st wikibase:rank wikibase:DeprecatedRank }} }}"}
        (_, pid, qpid), (s, o, date) = key, cand
        fallback = f"what is the {label(qpid)} of [{{s}}]'s {label(pid)} [{{o}}]"
        q = rng.choice(WD_WHEN.get((pid, qpid), [fallback])).format(s=names[s], o=names[o])
        return {"question": q, "answers": [date_answer(date)], "type": "literal",
                "sparql": f"SELECT {date_select('t', date[1])} WHERE {{ {sq(s)} p:{pid} ?st . ?st ps:{pid} {sq(o)} ; "
                          f"pq:{qpid} ?t }}"}
    out["qualifier"] = round_robin(pools, n, rng, qualifier_question)

    # value_comparison.jsonl: which of two holds the greater or smaller value (dates compared
    # at the coarser precision of the two; values dated by a point in time are not compared)
    classes = defaultdict(set)
    compared = {pid: {s: st for s, st in subjects.items() if "P585" not in st.times}
                for pid, subjects in single.items()}
    wanted = sorted({s for subjects in compared.values() for s in subjects})
    for i in range(0, len(wanted), 500):
        values = " ".join(sq(s) for s in wanted[i:i + 500])
        for r in store.query(f"SELECT ?s ?c WHERE {{ VALUES ?s {{ {values} }} ?s wdt:P31 ?c }}"):
            classes[r["s"].value].add(r["c"].value)
    class_names = store.labels({c for cs in classes.values() for c in cs})

    def sort_key(pid, st):
        if types[pid] == "Quantity":
            return Decimal(st.key), "exact"
        (y, m, d), name = wd_date(st.key, st.precision)
        return (y, m or 0, d or 0), name

    candidates = {pid: sorted(subjects) for pid, subjects in compared.items()}

    def comparison_question(pid, a):
        templates = WD_COMPARE.get(pid) or (
            [(f"which has the greater {label(pid)}, [{{a}}] or [{{b}}]", "max"),
             (f"which has the smaller {label(pid)}, [{{a}}] or [{{b}}]", "min")] if types[pid] == "Quantity" else
            [(f"which has the earlier {label(pid)}, [{{a}}] or [{{b}}]", "min"),
             (f"which has the later {label(pid)}, [{{a}}] or [{{b}}]", "max")])
        for _ in range(50):
            b = rng.choice(candidates[pid])
            (va, pa), (vb, pb) = sort_key(pid, compared[pid][a]), sort_key(pid, compared[pid][b])
            if types[pid] == "Time":
                depth = min(("year", "month", "day").index(p) for p in (pa, pb)) + 1
                va, vb = va[:depth], vb[:depth]
            if b == a or va == vb:
                continue
            common = [class_names[c] for c in classes[a] & classes[b] if c in class_names]
            usable = [t for t in templates if "{n}" not in t[0] or len(common) == 1]
            template, pick = rng.choice(usable)
            winner = a if (va > vb) == (pick == "max") else b
            order = "DESC" if pick == "max" else "ASC"
            return {"question": template.format(a=names[a], b=names[b], n=common[0] if common else ""),
                    "answers": [names[winner]], "type": "comparison",
                    "sparql": f"SELECT ?x WHERE {{ VALUES ?x {{ {sq(a)} {sq(b)} }} ?x wdt:{pid} ?v }} "
                              f"ORDER BY {order}(?v) LIMIT 1"}
        return None
    pools = {pid: subjects for pid, subjects in candidates.items() if len(subjects) >= 2}
    out["value_comparison"] = round_robin(pools, n, rng, comparison_question)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("out")
    ap.add_argument("--kb", choices=("metaqa", "wikidata"), default="metaqa")
    ap.add_argument("--n", type=int, default=40, help="questions per shape (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "qa"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with Store.open(args.store, read_only=True) as store:
        if args.kb == "wikidata":
            sets = wikidata_sets(store, args.n, random.Random(args.seed))
        else:
            sets = metaqa_sets(store, args.n, random.Random(args.seed), Path(args.data))
    for shape, items in sets.items():
        if not items:  # an empty file is no questions file
            print(f"{shape}: 0 questions (no file written)")
            continue
        with open(out / f"{shape}.jsonl", "w") as f:
            for item in items:
                f.write(json.dumps(item) + "\n")
        print(f"{shape}: {len(items)} questions → {out / (shape + '.jsonl')}")


if __name__ == "__main__":
    main()

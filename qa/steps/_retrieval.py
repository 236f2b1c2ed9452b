"""The one place qa reads the semantic index and the catalog, through their public read
methods: triple search results as Evidence, entity popularity for pruning, statement
memories and the URI memory as records, and entity linking by name."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from ._result import Evidence


def search_triples(index, text: str, k: int) -> list[Evidence]:
    """The ``k`` store triples nearest ``text`` in the triple index, best first, as Evidence."""
    return [hit_evidence(hit) for hit in index.search("triples", text, k)]


def search_triples_many(index, texts: list[str], k: int) -> list[list[Evidence]]:
    """:func:`search_triples` for several texts, embedded in one batch."""
    return [[hit_evidence(h) for h in hits] for hits in index.search_many("triples", texts, k)]


def search_triples_about(index, texts: list[str], about: list[list[str]], k: int) -> list[list[Evidence]]:
    """:func:`search_triples_many` among the triples of given entities (``about[i]`` for ``texts[i]``)."""
    return [[hit_evidence(h) for h in hits] for hits in index.search_about("triples", texts, about, k)]


def hit_evidence(hit) -> Evidence:
    """One triple-index hit (an ``indexer.SearchHit`` of kind "triples") as Evidence."""
    x = hit.extra
    p = x["p"]
    if isinstance(p, (list, tuple)):  # two hops through a mediator node
        p = " / ".join(p)
    return Evidence(s=x["s"], p=p, o=x["o"], s_label=x.get("s_label"), p_label=x.get("p_label"),
                    o_label=x.get("o_label"), literal=bool(x.get("o_literal")), datatype=x.get("datatype"),
                    score=float(hit.score), via=x.get("via"))


def edge_evidence(edge) -> Evidence:
    """One direct fact (a ``kgstore.Edge`` from :func:`entity_edges`) as Evidence."""
    return Evidence(s=edge.s, p=edge.p, o=edge.o, s_label=edge.s_label, p_label=edge.p_label,
                    o_label=None if edge.o_literal else edge.o_label, literal=edge.o_literal,
                    datatype=edge.datatype)


def similarities(index, query: str, texts: Sequence[str]) -> list[float]:
    """The cosine of each of ``texts`` to ``query`` in the index's embedding space (each
    distinct text embedded once, with the query, in one batch)."""
    if not texts:
        return []
    distinct = list(dict.fromkeys(texts))
    vectors = index.embed([query] + distinct)
    by_text = dict(zip(distinct, (vectors[1:] @ vectors[0]).tolist()))
    return [float(by_text[t]) for t in texts]


def entity_popularity(store, iris: Iterable[str]) -> dict[str, int]:
    """Catalog popularity (statements as subject plus as object) of each IRI; 0 if unknown."""
    return store.popularity(iris)


def store_labels(store, iris: Iterable[str]) -> dict[str, str]:
    """Catalog labels of entity and relation IRIs (those that have one)."""
    return store.labels(iris)


def entity_edges(store, iri: str, *, limit: int = 50):
    """An entity's direct facts both ways (``kgstore.Edge``), each relation represented
    before any relation repeats."""
    return store.edges(iri, direction="both", limit=limit)


def is_mediator(store, iri: str) -> bool:
    """Whether ``iri`` is a mediator (CVT) node in the catalog: a node that only joins facts."""
    view = store.entity(iri, max_facts=1)
    return bool(view and view.is_mediator)


@dataclass(frozen=True)
class StatementMemory:
    """A statement memory hit: the text it was found by, the SPARQL ``pattern`` over
    ``?e1``/``?e2`` (and ``?m`` through a mediator), the variable it ``answer``s, the
    variables ``given``, its relation IRIs and the similarity ``score``."""

    text: str
    pattern: str
    answer: str
    given: tuple[str, ...]
    relations: tuple[str, ...]
    hops: int
    score: float


@dataclass(frozen=True)
class MemoryTerm:
    """A URI-memory or relation hit: an IRI, its label, what it is (``entity`` or
    ``relation``), the text matched, whether that text was the relation read backwards
    (``inverse``), and the similarity ``score``."""

    iri: str
    label: str
    type: str
    text: str
    score: float
    inverse: bool = False


def search_statements(index, texts: Sequence[str], k: int) -> list[list[StatementMemory]]:
    """The ``k`` statement memories nearest each text, best first."""
    out = []
    for hits in index.search_many("statements", list(texts), k):
        out.append([StatementMemory(h.text, h.extra["pattern"], h.extra["answer"], tuple(h.extra.get("given", ())),
                                    tuple(h.extra.get("relations", ())), int(h.extra.get("hops", 1)), float(h.score))
                    for h in hits])
    return out


def search_uris(index, texts: Sequence[str], k: int, *, type: str | None = None) -> list[list[MemoryTerm]]:
    """The ``k`` URI-memory entries nearest each text (``type`` "entity" or "relation" to
    keep one kind), best first, one hit per IRI. Over-fetches to fill ``k`` after filtering."""
    out = []
    for hits in index.search_many("uris", list(texts), k * 4 if type else k):
        seen, terms = set(), []
        for h in hits:
            kind = (h.extra or {}).get("type", "entity")
            if (type and kind != type) or h.iri in seen:
                continue
            seen.add(h.iri)
            terms.append(MemoryTerm(h.iri, h.label, kind, h.text, float(h.score)))
        out.append(terms[:k])
    return out


def search_relations(index, texts: Sequence[str], k: int) -> list[list[MemoryTerm]]:
    """The ``k`` relation-index entries nearest each text, best first: a relation's own
    label or its inverse phrasing (``inverse=True``), each relation once per reading."""
    out = []
    for hits in index.search_many("relations", list(texts), k * 2):
        seen, terms = set(), []
        for h in hits:
            inverse = "inverse" in (h.extra or {})
            if (h.iri, inverse) in seen:
                continue
            seen.add((h.iri, inverse))
            terms.append(MemoryTerm(h.iri, h.label, "relation", h.text, float(h.score), inverse))
        out.append(terms[:k])
    return out


def exact_entities(index, name: str, k: int) -> list[tuple[str, str]]:
    """Store entities named exactly ``name`` (label or alias, case and punctuation aside),
    as (IRI, label), most likely first, at most ``k``."""
    return [(c.iri, c.label) for c in index.link(name, k=k, vectors=False) if c.match in ("exact", "label", "alias")]


_BRACKETED = re.compile(r"\[[^\[\]]+\]")


def bracketed_spans(question: str) -> list[tuple[int, int]]:
    """The (start, end) of each name the question marks in brackets ("did [X] direct [Y]"),
    brackets included; none when it marks none."""
    return [(m.start(), m.end()) for m in _BRACKETED.finditer(question)]


def bracketed_names(question: str) -> list[str]:
    """The names the question marks in brackets, without the brackets."""
    return [question[start + 1:end - 1].strip() for start, end in bracketed_spans(question)]


def within_brackets(span: tuple[int, int], marked: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` lies inside one of the ``marked`` names (always, when none is marked)."""
    return not marked or any(start <= span[0] and span[1] <= end for start, end in marked)


def respects_brackets(span: tuple[int, int], marked: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` lies inside one marked name or outside all of them: a bracket is a
    name's boundary, so a span that crosses one ("[Big] Fish") is no name the question writes."""
    return all(span[1] <= start or end <= span[0] or (start <= span[0] and span[1] <= end)
               for start, end in marked)


def written_as_name(question: str, span: tuple[int, int]) -> bool:
    """Whether the words at ``span`` are written as a name: with a capital (not only the
    capital English gives the question's first word) or a digit."""
    raw = question[span[0]:span[1]]
    if span[0] == len(question) - len(question.lstrip()):
        raw = raw[1:]
    return any(c.isupper() or c.isdigit() for c in raw)


def written_in_lower_case(question: str, name: str) -> bool:
    """Whether ``question`` writes ``name`` (or its plural) only in lower case and outside
    brackets: a common word ("movie" in "sports movies"), not a name."""
    found = [m for m in re.finditer(rf"\b{re.escape(name)}(?:e?s)?\b", question, re.I)]
    marked = bracketed_spans(question)
    return bool(found) and all(m.group() == m.group().lower() and not within_brackets(m.span(), marked or [(-1, -1)])
                               for m in found)


def names_written(question: str, span: tuple[int, int], marked: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` is a name the question writes. Brackets say "this is a name"; they
    never mean "nothing else is": "Does Tom Hanks appear in [Big]?" names Tom Hanks. Outside
    the brackets of a question that marks some, only words written as names count, so
    "who starred together with [X]" does not name the film *Together*."""
    if not marked:
        return True
    if within_brackets(span, marked):
        return True
    return respects_brackets(span, marked) and written_as_name(question, span)


def question_entities(index, question: str, k: int = 5):
    """Entity mentions in ``question`` matched by name (``indexer.Candidate`` with a
    ``span``), best first: every name it writes (:func:`names_written`), bracketed or not."""
    marked = bracketed_spans(question)
    return [c for c in index.link_question(question, k=k)
            if c.match in ("exact", "label", "alias") and (not c.span or names_written(question, c.span, marked))]


def written_names(index, question: str) -> list[str]:
    """The names a question that marks names in brackets writes: the bracketed ones and
    those outside written as names (:func:`names_written`); none when it marks none, since
    then every linked name counts."""
    marked = bracketed_spans(question)
    if not marked:
        return []
    outside = [question[c.span[0]:c.span[1]] for c in question_entities(index, question, k=20)
               if c.span and not within_brackets(c.span, marked)]
    return bracketed_names(question) + list(dict.fromkeys(outside))


def outermost_names(index, question: str) -> list[str]:
    """The names linked in ``question`` that no longer linked name holds ("I Am the Law",
    not "the Law" inside it), as written."""
    spans = [c.span for c in question_entities(index, question, k=20) if c.span]
    outer = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    return list(dict.fromkeys(question[a:b] for a, b in outer))


# A word of letters, digits, inner apostrophes, dots and hyphens; a name's words start with a
# capital in any script ("Émilien"), which ``str.isupper`` tells and ``re`` cannot
_NAME_WORD = re.compile(r"[\w'’.&-]+")
# Punctuation around a word that is not part of it ("[Bride", "Linklater?")
AROUND_WORD = "\"“”()[],;:?!"
# Words a capitalised run may hold that are not the name itself: the question's own first
# word ("Who", "Is"), articles and joining words ("The Queen" named "Queen")
_NOT_NAME_WORDS = frozenset("""a an and at by did do does for from has have in is of on or the to was were what
when where which who whom whose why how are be can""".split())


# Lower-case words a name may hold between its capitalised words ("Children of Men", "The
# Lord of the Rings", "Pride and Prejudice", "Leonardo da Vinci")
_JOINING_WORDS = frozenset("of the and de da del der di du la le van von y".split())


_NUMBER_IN_NAME = re.compile(r"#?\d{1,3}")


def capitalised_runs(question: str) -> list[tuple[int, int]]:
    """The (start, end) of each run of two or more capitalised words, such as a person's
    or a film's name ("Bride Linklater", "The Lord"), through the lower-case joining words
    a name may hold ("Children of Men"); the question's first word does not count, since
    English capitalises it whatever it is."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", question)]
    runs, current, joining = [], [], []
    for i, (start, end) in enumerate(words):
        word = question[start:end].strip(AROUND_WORD)
        if i > 0 and word[:1].isupper() and _NAME_WORD.fullmatch(word):
            current += joining + [(start, end)]
            joining = []
            # a comma or other punctuation after a word ends the name ("in Nepal, China")
            if question[start:end].rstrip(AROUND_WORD) != question[start:end] and \
                    question[end - 1] in ",;:?!)":
                runs, current = _close_run(runs, current), []
            continue
        if current and word in _JOINING_WORDS and question[start:end] == word:
            joining.append((start, end))
            continue
        if current and not joining and _NUMBER_IN_NAME.fullmatch(word):
            # a number ends a name ("Clown #3", "Apollo 13"), without the punctuation after it
            number = (start, start + len(question[start:end].rstrip(AROUND_WORD)))
            runs, current = _close_run(runs, current + [number]), []
            continue
        runs, current, joining = _close_run(runs, current), [], []
    return _close_run(runs, current)


def _close_run(runs: list[tuple[int, int]], current: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``runs`` with ``current`` (capitalised words and the joining words between them)
    added when it holds two or more words."""
    if len(current) >= 2:
        runs.append((current[0][0], current[-1][1]))
    return runs


def names_not_held(question: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The capitalised names in ``question`` (:func:`capitalised_runs`) with a word that no
    span of a store name covers (``spans``: the character spans of the names the linker
    found), articles and joining words aside. "who directed Bride Linklater", with a store
    that holds the tag *bride* and no Linklater, names "Bride Linklater", which the store
    does not hold: the tag is a part of that name, not the name."""
    covered = set()
    for start, end in spans:
        covered.update(range(start, end))
    out = []
    for start, end in capitalised_runs(question):
        for word in re.finditer(r"[\w'’.&-]+", question[start:end]):
            core = re.sub(r"['’]s$", "", word.group()).rstrip(".")  # "Adams's" is Adams
            first = start + word.start()
            if core and core.lower() not in _NOT_NAME_WORDS and \
                    not all(i in covered for i in range(first, first + len(core))):
                out.append(question[start:end].strip(AROUND_WORD))
                break
    return out


def written_literals(store, question: str,
                     covered: Sequence[tuple[int, int]] = ()) -> dict[str, tuple[tuple[int, int], str]]:
    """The names ``question`` writes (:func:`capitalised_runs`, brackets stripped) that no
    span of ``covered`` holds whole and the store holds as literal values ("Princess Fiona",
    a character on a film performance), each with its span and SPARQL term."""
    runs = {}
    for a, b in capitalised_runs(question):
        text = question[a:b]
        start = a + len(text) - len(text.lstrip(AROUND_WORD))
        end = b - (len(text) - len(text.rstrip(AROUND_WORD)))
        if start < end and not any(s <= start and end <= e for s, e in covered):
            runs[question[start:end]] = (start, end)
    return {name: (runs[name], term) for name, term in literal_names(store, list(runs)).items()}


def question_names_not_held(index, question: str) -> list[str]:
    """:func:`names_not_held` with the spans of the store names the linker finds in
    ``question`` (by name only: a nearest neighbour is not the name); a name the store holds
    as a literal value (a character on a film performance) is held too."""
    absent = names_not_held(question, [c.span for c in question_entities(index, question, k=20) if c.span])
    if not absent:
        return []
    held = literal_names(index.store, absent)
    return [name for name in absent if name not in held]


def literal_names(store, names: Sequence[str]) -> dict[str, str]:
    """Which of ``names`` the store holds as a literal value, as a string or in one of its
    languages: each with its SPARQL term (``"Indiana Jones"@en``). Exact terms only, so
    each is an index lookup, not a scan."""
    out = {}
    for name in dict.fromkeys(names):
        # a name that ends a sentence carries its full stop ("… the role of Ricky Roma.")
        for written in dict.fromkeys([name.strip(), name.strip().rstrip(".")]):
            text = written.replace("\\", "\\\\").replace('"', '\\"')
            term = _literal_term(store, text) if text else None
            if term:
                out[name] = term
                break
    return out


def _literal_term(store, text: str) -> str | None:
    """The SPARQL term of ``text`` (escaped) as the store holds it: a plain string or in
    one of the store's languages; None when it holds neither."""
    # dumps keep stray spaces inside values ("Ellen Griswold "): the name with one after it
    # is the same name
    for written in (text, text + " "):
        for term in [f'"{written}"'] + [f'"{written}"@{lang}' for lang in store.config.languages]:
            found = _holds_literal(store, term)
            if found is None:
                return None
            if found:
                return term
    return None


def _holds_literal(store, term: str) -> bool | None:
    """Whether the store holds the literal ``term`` as an object; None when it cannot be asked."""
    from ..sandbox import run_sparql
    from kgstore.errors import QueryError, UnsafeQueryError

    try:
        return run_sparql(store, f"ASK {{ ?s ?p {term} }}", timeout_s=2.0).boolean
    except (QueryError, UnsafeQueryError):
        return None
    return None

"""Entity linking: from a mention (or a whole question) to ranked entity candidates.

Lexical evidence comes from the lookup tier (``labels.sqlite``, see ``_labels``: labels and
aliases under a normalised key: case-folded, accents and punctuation stripped); semantic
evidence from the entity vector index; a popularity prior (facts per entity) breaks ties
between namesakes. Three tiers, each optional (``tiers=``): ``exact`` names, ``normalized``
keys, ``vectors``.

For a whole question, every word n-gram is looked up at once; spans are then ranked by
what makes a span a likely *topic* mention: it has a content word (not only stopwords or
words of relation labels, like "directed" or "actors"), it is capitalised or numeric as
written (titles of common words such as "You and Me" count when written as names), it has
more content words, its label matches the question's text exactly,
it is longer, and its entity is more popular.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ._labels import MAX_NGRAM, LabelRow
from ._records import Candidate
from ._verbalize import clean, fold, name_key, stem

TIERS = ("exact", "normalized", "vectors")

__all__ = ["TIERS", "MAX_NGRAM", "STOPWORDS", "MATCH_WEIGHT", "NameRow", "Span", "check_tiers", "prior",
           "match_kind", "combine", "question_spans", "schema_stems", "rank_question", "content_words"]
_WORD = re.compile(r"[^\W_]+")
_PUNCT_RUN = re.compile(r"[^\w\s]+|_+")

# Words that on their own never make a topic mention: function words and question words.
STOPWORDS = frozenset("""
a an the this that these those of in on at to for by with from into onto about as and or but nor not no
is are was were be been being am has have had do does did done can could will would shall should may might must
who whom whose what which when where why how whoever whatever
i me my we us our you your he him his she her it its they them their s t
there here also some any all each every other another such than then so very just only
name names list give tell show find
""".split())

MATCH_WEIGHT = {"exact": 1.0, "label": 0.9, "alias": 0.8, "vector": 0.0}


# -- scoring -------------------------------------------------------------------------------
NameRow = LabelRow  # one matching name of an entity, as the lookup tier returns it


def check_tiers(tiers) -> frozenset[str]:
    """The linking tiers to use: any of ``exact`` (a label or alias written as in the
    mention), ``normalized`` (the same lookup key: case, accents, punctuation aside) and
    ``vectors`` (nearest neighbours in the entity index); None means all three."""
    if tiers is None:
        return frozenset(TIERS)
    chosen = frozenset(tiers)
    unknown = chosen - set(TIERS)
    if unknown:
        raise ValueError(f"unknown linking tier(s) {sorted(unknown)}; choose from {list(TIERS)}")
    return chosen


def prior(popularity: int, max_popularity: int) -> float:
    if max_popularity <= 0:
        return 0.0
    return math.log1p(max(popularity, 0)) / math.log1p(max_popularity)


def match_kind(mention: str, row: NameRow) -> str:
    if row.source == "alias":
        return "alias"
    return "exact" if clean(mention) == row.name else "label"


def combine(match: str, similarity: float | None, popularity_prior: float) -> float:
    """Lexical match dominates (any name match outranks a vector-only neighbour);
    similarity and popularity order candidates within a tier."""
    sim = max(0.0, similarity or 0.0)
    return round(0.55 * MATCH_WEIGHT[match] + 0.3 * sim + 0.15 * popularity_prior, 6)


# -- questions -------------------------------------------------------------------------------
@dataclass
class Span:
    start: int
    end: int
    key: str
    words: list[str]


def question_spans(question: str, max_tokens: int = MAX_NGRAM) -> list[Span]:
    """Every word n-gram (up to ``max_tokens`` words) with its lookup key, plus runs of
    punctuation (names such as ``$``)."""
    tokens = [(m.start(), m.end(), name_key(m.group())) for m in _WORD.finditer(question)]
    spans = []
    for i in range(len(tokens)):
        for j in range(i + 1, min(len(tokens), i + max_tokens) + 1):
            words = [t[2] for t in tokens[i:j]]
            spans.append(Span(tokens[i][0], tokens[j - 1][1], " ".join(words), words))
    for m in _PUNCT_RUN.finditer(question):
        spans.append(Span(m.start(), m.end(), m.group(), [m.group()]))
    return spans


# A demonym or adjective made from a name ("Asian", "Andean", "Nepalese", "Canadian",
# "Italian"), read back to the name's possible forms: (suffix, replacements). Each form is
# looked up among the store's names like any other span, so only a name the store holds
# is found; the first that matches wins in ranking like an exact name would.
_DEMONYM_ENDINGS = (("ese", ("", "a")), ("ian", ("", "a", "y", "ia")), ("ean", ("es", "e", "a")),
                    ("ish", ("", "land")), ("an", ("a", "", "o", "e", "es")), ("i", ("",)), ("n", ("",)))


def demonym_keys(span: Span, raw: str) -> list[Span]:
    """Lookup spans for the name a demonym at the end of ``span`` is made from ("South
    American" → "south america", "Andean" → "andes"): only for a word written with a
    capital, as English writes demonyms."""
    last = raw.split()[-1] if raw.split() else ""
    if not last[:1].isupper() or not span.words:
        return []
    word = span.words[-1]
    out: list[Span] = []
    for ending, replacements in _DEMONYM_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            for r in replacements:
                stem = word[:len(word) - len(ending)] + r
                words = span.words[:-1] + [stem]
                if stem != word and " ".join(words) not in {o.key for o in out}:
                    out.append(Span(span.start, span.end, " ".join(words), words))
    return out


def schema_stems(relation_labels) -> frozenset[str]:
    """Stems of the words in relation labels: in a question they name the relation asked
    about ("directed", "actors"), not the topic."""
    words = set()
    for label in relation_labels:
        for w in _WORD.findall(fold(label or "")):
            words.add(stem(w))
    return frozenset(words)


def rank_question(question: str, spans_by_key: dict[str, list[Span]], rows: list[NameRow],
                  stems: frozenset[str], max_popularity: int, k: int, *, exact_only: bool = False) -> list[Candidate]:
    """Candidates from the names found in ``question``; ``exact_only``: only names written
    in the question as they are in the store (the ``exact`` tier alone)."""
    ranked = []
    for row in rows:
        for span in spans_by_key.get(row.key, ()):
            content = [w for w in span.words if w not in STOPWORDS and stem(w) not in stems]
            raw = question[span.start:span.end]
            # a capital marks a name as written, except on a question word opening the question
            opening = span.start == 0 and span.words[0] in STOPWORDS
            capitalised = any(c.isupper() or c.isdigit() for c in (raw[1:] if opening else raw))
            exact = any(question.startswith(row.name, start) for start in _starts(question, span.start))
            if exact_only and not exact:
                continue
            # titles made of common words ("You and Me", "May") count when written as names
            strong = bool(content) or (capitalised and exact)
            p = prior(row.popularity, max_popularity)
            key = (strong, capitalised, len(content), len(row.name) if exact else 0, len(span.words), p)
            match = "alias" if row.source == "alias" else ("exact" if exact else "label")
            score = (0.35 * strong + 0.15 * capitalised + 0.1 * min(len(content), 4) / 4
                     + 0.15 * exact + 0.1 * min(len(span.words), 6) / 6 + 0.15 * p)
            ranked.append((key, score, Candidate(row.iri, row.label, 0.0, raw, match, row.popularity,
                                                 row.description, None, (span.start, span.end))))
    ranked.sort(key=lambda item: item[0], reverse=True)
    # a name written twice, once inside a longer name ("Zulu Dawn and Zulu"), is mentioned
    # where it stands alone: that occurrence is the candidate's span
    found = {c.span for _, _, c in ranked}
    alone = {}
    for _, _, cand in ranked:
        if cand.iri not in alone and not any(o != cand.span and o[0] <= cand.span[0] and cand.span[1] <= o[1]
                                             for o in found):
            alone[cand.iri] = cand
    out: list[Candidate] = []
    seen: set[str] = set()
    ceiling = 1.0
    for _, score, cand in ranked:
        if cand.iri in seen:
            continue
        seen.add(cand.iri)
        cand = alone.get(cand.iri, cand)
        # scores follow the ranking: never above the candidate ranked before
        ceiling = min(ceiling, round(score, 6))
        out.append(Candidate(cand.iri, cand.label, ceiling, cand.mention, cand.match, cand.popularity,
                             cand.description, None, cand.span))
        if len(out) >= k:
            break
    return out


def _starts(question: str, start: int) -> list[int]:
    """Where a label matching the span at ``start`` may begin as written: the span itself,
    or punctuation glued before it ("+1", "$9.99")."""
    starts = [start]
    while start > 0 and not question[start - 1].isspace() and not question[start - 1].isalnum():
        start -= 1
        starts.append(start)
    return starts


def content_words(question: str, stems: frozenset[str]) -> str:
    """The question without stopwords and relation words: what to embed when no name matched."""
    words = [w for w in _WORD.findall(question) if fold(w) not in STOPWORDS and stem(fold(w)) not in stems]
    return " ".join(words) or question

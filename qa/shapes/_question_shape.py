"""A question's shape in six kinds, from its English words alone (no store). Pure function.

:func:`question_shape` maps what :func:`qa.shapes._detect.detect_shape` reads (chain,
count, boolean, comparison, superlative) and the value constraints
:func:`qa.steps._query_graph.read_value_constraints` finds onto six shapes: ``count``,
``boolean``, ``comparison``, ``superlative``, ``constraint`` and ``chain``. A yes/no
comparison ("is X taller than Y") is ``comparison``.

Beyond the reader's own kinds:

* **count** also for "how often …"; a count asked at a point in time ("how many people
  lived in X in 2005") is a number held at a date, a **chain**, and one about an extreme
  ("how many years did the second oldest dog live") a **superlative**;
* **superlative** also for an extreme written without "the …est" ("has the maximum
  number of", "the overall fastest"), an ordinal that picks one answer by its order
  ("the first album of X", "the last painting that Y painted"), and a superlative no
  list names, told by its "-est" after a determiner or a copula ("the strongest …",
  "which island is closest to …", :mod:`._word_forms`);
* a chain is read as a **constraint** when English restricts its answers beyond the one
  relation from the topic:

  - the answer's name is restricted ("… that starts with the letter s", "… whose name
    contains the word x");
  - a quantity the question writes ("that have 13155 inhabitants"), or a year or a date
    inside a relative clause ("… that started in 1983", "… who was born on May 26th,
    1799"); a bare "in 1996" dates the fact asked for, and is not a constraint on the
    answer;
  - the answer's class is named by the wh-phrase opening the question ("which river
    flows …", "what political party had …"), or by a request ("name a film …", "tell me
    the company which …", "what is the label signed by X");
  - a relative clause restricts the answer by a second thing ("the publisher of X,
    which has …", "which actor starring in X also starred in Y", "among the founders of
    X, who …").

  A question that asks two things at once ("what country is X from, and what's his
  sport") and one asked at a date ("which award did X receive in 2007") stay chains.
"""
from __future__ import annotations

import re

from ..steps._query_graph import read_value_constraints
from ._detect import detect_shape, without_names
from ._word_forms import IRREGULAR_PAST, superlative_form

QUESTION_SHAPES = ("count", "boolean", "comparison", "superlative", "constraint", "chain")

_TOKEN = re.compile(r"[a-z0-9][a-z0-9'.-]*|[,;:?!()\"“”]")

_AUXILIARIES = {"is", "are", "was", "were", "be", "been", "do", "does", "did", "has", "have", "had", "can", "could",
                "will", "would", "should", "may", "might", "must", "shall", "'s"}
_DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "his", "her", "its", "their", "my", "your",
                "our", "some", "any", "all", "each", "every", "both"}
_PREPOSITIONS = {"of", "in", "on", "at", "by", "for", "from", "to", "with", "into", "onto", "about", "during",
                 "after", "before", "through", "under", "over", "as", "among", "between", "within", "without",
                 "since", "until", "up", "out", "off", "near", "like", "than", "per", "against", "across"}
_PRONOUNS = {"i", "you", "he", "she", "it", "we", "they", "me", "him", "us", "them", "one", "ones", "else",
             "other", "others", "someone", "something", "anything", "everything"}
_WH_QUESTION = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
# a wh-word with "is" contracted opens a question as well ("… and what's his party")
_WH_CONTRACTED = {w + "'s" for w in ("what", "who", "where", "when", "how")}
# words that open a restrictive relative clause ("where" and "when" open a place or a time:
# "the studio where X was filmed" is a hop of a chain)
_RESTRICTIVE = {"that", "which", "who", "whom", "whose", "having"}
# nouns after a wh-word that ask for a value, a manner or a relation's own range, not for a
# thing of a class ("what year …", "what kind of …", "what language did X speak")
_VALUE_NOUNS = {"year", "years", "date", "dates", "day", "days", "month", "months", "time", "times", "century",
                "centuries", "decade", "decades", "age", "ages", "percentage", "percent", "proportion", "amount",
                "number", "numbers", "quantity", "manner", "way", "ways", "kind", "kinds", "type", "types", "sort",
                "sorts", "extent", "size", "height", "length", "width", "depth", "weight", "area", "value",
                "level", "period", "point", "place", "name", "names", "title", "part", "role", "language",
                "languages", "colour", "color", "colours", "colors", "position"}

# the answer's name restricted by its letters or words
_NAME_STRING = re.compile(
    r"\b(?:start|starts|started|starting|begin|begins|began|beginning|end|ends|ending|finish|finishes)\s+"
    r"(?:off\s+)?with\b"
    r"|\b(?:contain|contains|containing|include|includes|including|has|have|having|with|carries|carry|consists of)"
    r"\s+(?:the\s+|a\s+)?(?:word|words|letter|letters|phrase|string|term)\b"
    r"|\b(?:word|letter|phrase)\s+\S+\s+in\s+(?:its|their|it's|the|his|her)\s+(?:name|title)\b",
    re.I)
# a request for things, or a "what is the …" that names them
_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:(?:tell|give|show|let)\s+me(?:\s+know)?|name|list|find|mention|"
                      r"identify|title|state|say|disclose\s+to\s+me|(?:what|which|who)\s+(?:is|are|was|were))\s+"
                      r"(?:about\s+)?(?:the\s+names?\s+of\s+)?(a|an|the|some|all(?:\s+the)?)\s+", re.I)
# a year or a date: a fact asked at a time
_YEAR_OR_DATE = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
# a month and a day written before a year ("May 26th, 1799", "26 May 1799")
_DATE_BEFORE_YEAR = re.compile(
    r"(?:\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\s+"
    r"\d{1,2}(?:st|nd|rd|th)?|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|may|"
    r"june|july|august|september|october|november|december))\s*,?\s*(?:in\s+)?$", re.I)
# "how often did X …": a count of events
_HOW_OFTEN = re.compile(r"\bhow often\b", re.I)
_COUNT_OPENING = re.compile(r"\bhow many\b|\b(?:the|what) (?:total )?number of\b", re.I)
# an extreme written without "the …est": "has the maximum number of", "with the foremost",
# "the overall fastest"
_EXTREME = re.compile(r"\b(?:has|have|had|with)\s+(?:the\s+)?(?:max|maximum|min|minimum|foremost)\b"
                      r"|\bthe\s+(?:overall|very|absolute)\s+[a-z]+est\b", re.I)
# an ordinal that picks one of a chain's answers by order: "the first album of X", "the
# second game developed by Y" (case-sensitive: "the Third Reich" is a name)
_ORDINAL = re.compile(r"\b(?:[Tt]he|[Ii]ts|[Tt]heir|[Hh]is|[Hh]er)\s+(first|last|second|third|fourth|fifth|latest|"
                      r"earliest)\s+([a-z][a-z-]*)")
# nouns an ordinal makes a name of, or words that end the phrase ("the first name")
_NOT_ORDERED = {"name", "names", "aid", "time", "times", "language", "lady", "person", "half", "quarter", "edition",
                "century", "round", "place", "one", "ones", "of", "and", "or", "to", "in", "on", "at", "for"}


def _words(question: str) -> list[str]:
    return _TOKEN.findall(question.lower().replace("’", "'"))


def _is_noun_like(w: str, nxt: str) -> bool:
    """``w`` (after a wh-word) reads as a noun, not a verb, an auxiliary or a function word."""
    if not w or not w[0].isalpha() or w in _AUXILIARIES or w in _DETERMINERS or w in _PREPOSITIONS or \
            w in _PRONOUNS or w in _WH_QUESTION or w in _RESTRICTIVE or w in ("not", "and", "or", "if"):
        return False
    if (w.endswith("ed") or w in IRREGULAR_PAST) and nxt not in _AUXILIARIES:
        return False  # "what caused …", "what came first …": a verb
    if w.endswith("s") and not w.endswith("ss") and nxt in _DETERMINERS | _PREPOSITIONS:
        return False  # "what makes the …", "what lives in …"
    return True


def typed_answer(words: list[str]) -> bool:
    """The answer's class is named by the wh-phrase that opens the question (or a clause
    after a comma): "which river flows …", "what political party had …". A wh-phrase after
    a preposition ("in which country", "for what purpose") says where, when or why the
    relation holds, and one at the end ("… is available on which platform?") names the
    relation's own range: chains."""
    starts = [0] + [i + 1 for i, w in enumerate(words) if w in (",", ";", ":")]
    for i in starts:
        if i + 1 >= len(words) or words[i] not in ("which", "what"):
            continue
        nxt = words[i + 1]
        after = words[i + 2] if i + 2 < len(words) else ""
        if nxt in _VALUE_NOUNS or nxt == "of" or after in ("?", ""):
            continue
        if _is_noun_like(nxt, after):
            return True
    return False


def named_by_request(question: str) -> bool:
    """A request for things of a class restricted by a clause: "name a film with …", "tell
    me the company which …", "what is the label signed by X", "who is the actor that …"
    (not "tell me the capital of X", a chain)."""
    m = _REQUEST.match(question.lower())
    if not m:
        return False
    if m.group(1) in ("a", "an") and not m.group(0).lstrip().startswith(("what", "which", "who")):
        return True  # "name a film …": one of a class
    rest = _words(question[m.end():])
    if rest and rest[0] in _VALUE_NOUNS:
        return False  # "what was the year that …": a value
    for j, w in enumerate(rest[:6]):
        if w in _RESTRICTIVE or w == "with":
            return j > 0
        if w in ("of", "for", "'s", ",") or w in _AUXILIARIES:
            return False
        nxt = rest[j + 1] if j + 1 < len(rest) else ""
        if j > 0 and (w.endswith("ed") or w.endswith("ing")) and nxt in ("by", "in", "at", "on", "with", "near"):
            return True  # "the label signed by X", "the sports located in Y"
    return False


def relative_restricts(words: list[str]) -> bool:
    """A relative clause or an "also" that restricts the answer by a second thing: "the
    publisher of X, which has …", "the actor that voiced X and was born in Y", "which
    actor starring in X also starred in Y", "among the founders of X, who …"."""
    if "also" in words and words[0] in ("which", "what", "who", "whose"):
        return True
    if words and words[0] in ("among", "amongst"):
        return True
    for i, w in enumerate(words):
        if i >= 3 and w in _RESTRICTIVE and words[i - 1] not in ("those", "one", "ones", "and", "or") and \
                words[i - 1] not in _PREPOSITIONS:
            return True
    return False


def two_questions(words: list[str]) -> bool:
    """Two questions in one ("what country is X from, and what sport does he play"): each
    is its own chain."""
    for i, w in enumerate(words[1:-1], start=1):
        if w == "and" and (words[i + 1] in _WH_QUESTION | _WH_CONTRACTED or
                           (words[i + 1] in _PREPOSITIONS and i + 2 < len(words) and words[i + 2] in _WH_QUESTION)):
            return True
    return False


def _value_restricts(question: str) -> bool:
    """A quantity the question writes, or a year (or a date) inside a relative clause."""
    values = read_value_constraints(question)
    if any(not c.year for c in values):
        return True
    # years the value reader leaves out are still a time: "born on May 26th, 1799"
    starts = [c.span[0] for c in values] + [m.start() for m in _YEAR_OR_DATE.finditer(question)]
    for start in starts:
        # a year that ends a written date counts from the date's start ("born on May 26th, 1799")
        date = _DATE_BEFORE_YEAR.search(question[:start])
        before = _words(question[:date.start() if date else start])
        # "… that started in 1983"; not the opening "which" of "which prize did X get in 1987"
        if any(w in _RESTRICTIVE and i > 0 and before[i - 1] not in _PREPOSITIONS
               for i, w in enumerate(before) if i >= len(before) - 6):
            return True
    return False


def _ordered_in_count(question: str) -> bool:
    """A count question about an extreme one ("according to the highest estimate", "the
    second oldest dog")."""
    return detect_shape(_COUNT_OPENING.sub(" ", question)).kind == "superlative"


def _unlisted_superlative(question: str) -> bool:
    """A superlative no word list names, told by its ending after a determiner or a copula
    ("the strongest …", "which planet is closest to …"); with options ("X or Y") it
    compares them, which the comparison reader decides."""
    words = _words(without_names(question))
    if "or" in words:
        return False
    return any(superlative_form(w) and i and words[i - 1] in ("the", "its", "their", "his", "her", "is", "are",
                                                              "was", "were")
               for i, w in enumerate(words))


def _ordinal_pick(question: str) -> bool:
    return any(m.group(2) not in _NOT_ORDERED for m in _ORDINAL.finditer(question))


def constraint_cue(question: str) -> str:
    """Which of the reader's signs of a constraint the question's words carry: a value or a
    name's letters, a class named by the opening wh-phrase, a request for things of a
    class, a restricting relative clause; else ``none``."""
    words = _words(question)
    if _NAME_STRING.search(question) or _value_restricts(question):
        return "a value or a name's letters"
    if typed_answer(words):
        return "a class after which/what"
    if named_by_request(question):
        return "a request for things of a class"
    if relative_restricts(words):
        return "a restricting clause"
    return "none"


def question_shape(question: str) -> str:
    """One of :data:`QUESTION_SHAPES` for ``question``, read from its words alone (the
    rules of the module docstring)."""
    shape = detect_shape(question)
    words = _words(question)
    if shape.kind == "count":
        if _ordered_in_count(question):
            return "superlative"
        if two_questions(words) or any(c.year and c.op == "=" for c in read_value_constraints(question)):
            return "chain"  # "… and how many matches has he played"; "how many people lived in X in 2005"
        return "count"
    if shape.kind != "chain":
        return shape.kind
    if _HOW_OFTEN.search(question):
        return "count"
    if _EXTREME.search(question) or _ordinal_pick(question) or _unlisted_superlative(question):
        return "superlative"
    if _NAME_STRING.search(question) or _value_restricts(question):
        return "constraint"
    if two_questions(words) or _YEAR_OR_DATE.search(question):
        return "chain"
    if typed_answer(words) or named_by_request(question) or relative_restricts(words):
        return "constraint"
    return "chain"


__all__ = ["question_shape", "constraint_cue", "QUESTION_SHAPES"]

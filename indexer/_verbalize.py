"""Texts for the semantic index, from catalog rows. Pure functions: no I/O, no store.

Each kind of index entry has one verbalizer here, so what gets embedded can be read (and
tested) in one place:

* entities: ``label (description)``; aliases the same way, pointing at the same entity;
* relations: ``label: description``, plus the inverse phrasing when the catalog has one;
* triples: ``subject | relation | object``; through a mediator (CVT/statement node) the
  two hops read as one: ``Kismet | starring / actor | Marlene Dietrich``;
* URI memory: ``label, description`` (what ``[ENT: Justin Bieber; Canadian singer]`` looks like);
* statement memories: see :mod:`indexer._memories`, built from :func:`relation_phrases`.
"""
from __future__ import annotations

import re
import unicodedata

from kgstore.terms import local_name

MAX_LITERAL_CHARS = 200
_SPLIT_ID = re.compile(r"[._/:#]+")
_WORD = re.compile(r"[^\W_]+")  # word characters; "_" separates words (ludwig_ii)


def clean(text: str | None) -> str:
    """One line, single spaces."""
    return " ".join(text.split()) if text else ""


def fallback_label(iri: str) -> str:
    """A readable stand-in for an unlabelled IRI: its local name with separators as spaces
    (``film.performance.actor`` → ``film performance actor``; ``Q42`` stays ``Q42``)."""
    name = local_name(iri).replace("_", " ")
    return clean(_SPLIT_ID.sub(" ", name)) or iri


def literal_text(value: str) -> str:
    value = clean(value)
    if len(value) > MAX_LITERAL_CHARS:
        value = value[:MAX_LITERAL_CHARS - 1] + "…"
    return value


def entity_text(label: str, description: str | None = None) -> str:
    label, description = clean(label), clean(description)
    return f"{label} ({description})" if description else label


def relation_text(label: str, description: str | None = None) -> str:
    label, description = clean(label), clean(description)
    return f"{label}: {description}" if description else label


def inverse_relation_text(inverse_label: str, label: str, description: str | None = None) -> str:
    """The relation read backwards, e.g. ``child: inverse of father`` ."""
    inverse_label, description = clean(inverse_label), clean(description)
    tail = f"inverse of {clean(label)}"
    return f"{inverse_label}: {tail}; {description}" if description else f"{inverse_label}: {tail}"


def uri_text(label: str, description: str | None = None) -> str:
    label, description = clean(label), clean(description)
    return f"{label}, {description}" if description else label


def triple_text(subject: str, relation: str, obj: str) -> str:
    return f"{clean(subject)} | {clean(relation)} | {clean(obj)}"


def mediated_triple_text(subject: str, first: str, second: str, obj: str) -> str:
    """Two hops through a mediator node as one statement: ``s | r1 / r2 | o``."""
    return f"{clean(subject)} | {clean(first)} / {clean(second)} | {clean(obj)}"


# -- relation phrases for statement memories ------------------------------------------------
_PREPOSITIONS = frozenset("by in of at on to from with for as into about under over".split())
_AUXILIARIES = frozenset("has have had is are was were does do did".split())
_IRREGULAR_ACTIVE = {"written": "wrote", "given": "gave", "taken": "took", "made": "made", "known": "knew",
                     "born": "bore", "drawn": "drew", "sung": "sang", "spoken": "spoke", "shot": "shot",
                     "won": "won", "held": "held", "led": "led", "built": "built", "sold": "sold",
                     "told": "told", "found": "found", "played": "played", "produced": "produced"}


def relation_phrases(label: str, inverse_label: str | None = None) -> tuple[str, str]:
    """Template sentences for ``?e1 <label> ?e2``: one asking for ``?e2`` (forward) and one
    asking for ``?e1`` (backward).

    Labels come in two shapes and read best with different templates: noun phrases
    (``spouse`` → "?e2 is the spouse of ?e1") and verb/preposition phrases (``directed by``
    → "?e1 directed by ?e2", backwards "?e2 directed ?e1").
    """
    label = clean(label).lower() if clean(label).isupper() else clean(label)
    words = label.split()
    if not words:
        return "?e1 is related to ?e2", "?e2 is related to ?e1"
    first, last = words[0].lower(), words[-1].lower()
    verbish = first in _AUXILIARIES or first in _PREPOSITIONS or last in _PREPOSITIONS or (
        first.endswith("ed") and len(first) > 4)
    if not verbish:
        forward = f"?e2 is the {label} of ?e1"
        backward = f"?e1 has {label} ?e2"
    else:
        forward = f"?e1 {label} ?e2"
        rest = " ".join(words[1:])
        if first in ("has", "have") and rest:
            # "has genre" reads backwards as "?e2 is the genre of ?e1"
            backward = f"?e2 is the {rest} of ?e1"
        elif first in _PREPOSITIONS and rest:
            backward = f"?e2 is the {rest} of ?e1"
        elif last == "by" and len(words) >= 2:
            participle = words[-2].lower()
            active = _IRREGULAR_ACTIVE.get(participle, participle if participle.endswith("ed") else None)
            backward = f"?e2 {active} ?e1" if active else f"?e1 is {label} ?e2"
        else:
            backward = f"?e2 is what ?e1 {label}"
    if inverse_label and clean(inverse_label):
        inv = clean(inverse_label)
        inv_words = inv.split()
        inv_verbish = inv_words[0].lower() in _AUXILIARIES or inv_words[-1].lower() in _PREPOSITIONS
        backward = f"?e2 {inv} ?e1" if inv_verbish else f"?e1 is the {inv} of ?e2"
    return forward, backward


def mediated_phrases(in_label: str | None, out_a: str, out_b: str | None = None) -> str:
    """Template sentence for patterns through a mediator node ``?m``.

    * ``in_label`` and ``out_a``: ``?e1 in ?m . ?m a ?e2`` → "?e2 is the {a} of the {in} of ?e1"
    * plus ``out_b``: ``?e1 in ?m . ?m a ?e2 . ?m b ?e3`` → "?e1 has {in} with {a} ?e2 and {b} ?e3"
    * no ``in_label`` (mediators only point outwards): ``?m a ?e1 . ?m b ?e2`` →
      "?e2 is the {b} of the statement whose {a} is ?e1"
    """
    a = clean(out_a)
    if in_label is None:
        return f"?e2 is the {clean(out_b)} of the statement whose {a} is ?e1"
    i = clean(in_label)
    if out_b is None:
        return f"?e2 is the {a} of the {i} of ?e1"
    return f"?e1 has {i} with {a} ?e2 and {clean(out_b)} ?e3"


# -- names for entity linking --------------------------------------------------------------
def fold(text: str) -> str:
    """Case-folded, accents stripped (``Amélie`` → ``amelie``)."""
    text = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in text if not unicodedata.combining(c))


def name_key(name: str) -> str:
    """The lookup key of a name: folded word tokens joined by single spaces, punctuation
    dropped (``Ocean's Eleven`` → ``ocean s eleven``). A name with no word characters
    (``$``) keys as itself, stripped."""
    tokens = _WORD.findall(fold(name))
    return " ".join(tokens) if tokens else name.strip()


_SUFFIXES = ("ings", "ing", "ers", "ors", "ies", "er", "or", "ed", "en", "es", "s")


def stem(word: str) -> str:
    """A crude stem, enough to tell that "directors", "directed" and "director" (or "written"
    and "writer") are one word."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            # "movies" and "countries" keep the letter that "movie" and "country" end on
            word = word[: -len(suffix)] + ("i" if suffix == "ies" else "")
            break
    else:
        # a singular's silent "e" or final "y" after a consonant is what its plural
        # loses or changes ("zone" of "zones", "country" of "countries")
        if len(word) > 3 and word[-1] == "e":
            word = word[:-1]
        elif len(word) > 3 and word[-1] == "y" and word[-2] not in "aeiou":
            word = word[:-1] + "i"
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    return word

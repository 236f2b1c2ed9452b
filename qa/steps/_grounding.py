"""Tie LLM answer text to store terms, and check that answer IRIs exist in the store.

Labels are compared after :func:`normalise_label`; the same function scores answers in
``qa.eval``, so "grounded" and "correct" use one notion of "the same name".
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

from ._result import Evidence
from ._values import LiteralValue

_ARTICLE = re.compile(r"^(?:the|a|an) ")
_NON_WORD = re.compile(r"[^\w\s]|_")
_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ANSWER_MARK = re.compile(r"\{([^{}]+)\}")
_LIST_SPLIT = re.compile(r"\s*(?:;|,|\band\b|\|)\s*")


def normalise_label(text: str) -> str:
    """Case, accents, underscores, punctuation and a leading article do not count:
    ``"The_Little Colonel!"`` and ``"little colonel"`` are the same name."""
    text = unicodedata.normalize("NFKD", str(text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    if _NUMBER.fullmatch(text.strip()):
        number = float(text)
        return str(int(number)) if number.is_integer() else str(number)
    text = _SPACES.sub(" ", _NON_WORD.sub(" ", text)).strip()
    return _ARTICLE.sub("", text)


def names_a_word_of(question: str, name: str) -> bool:
    """Whether ``question`` writes at least one word of ``name`` (as :func:`normalise_label`
    compares words; a word of three letters or more, or the whole name): "lincoln" names
    *Abraham Lincoln*; a name none of whose words the question writes was made up by
    whoever drafted it."""
    asked = set(normalise_label(question).split())
    words = normalise_label(name).split()
    return bool(words) and (" ".join(words) in normalise_label(question)
                            or any(len(w) >= 3 and w in asked for w in words))


def marked_answers(text: str) -> list[str]:
    """The spans the model marked as answers with ``{...}``, in order, without duplicates."""
    seen, out = set(), []
    for span in _ANSWER_MARK.findall(text):
        span = span.strip().strip('"').strip()
        if span and normalise_label(span) not in seen:
            seen.add(normalise_label(span))
            out.append(span)
    return out


@dataclass(frozen=True)
class StoreTerm:
    """A store entity (``iri`` set) or literal (``iri`` None) an answer was matched to;
    a literal read from the store carries its typed ``value``."""

    label: str
    iri: str | None
    value: "LiteralValue | None" = None


def evidence_terms(evidence: Iterable[Evidence]) -> dict[str, StoreTerm]:
    """Normalised label → the term, for every subject and object in ``evidence``."""
    terms: dict[str, StoreTerm] = {}
    for e in evidence:
        if e.s_label:
            terms.setdefault(normalise_label(e.s_label), StoreTerm(e.s_label, e.s))
        if e.literal:
            terms.setdefault(normalise_label(e.o), StoreTerm(e.o, None))
        elif e.o_label:
            terms.setdefault(normalise_label(e.o_label), StoreTerm(e.o_label, e.o))
    terms.pop("", None)
    return terms


def ground_answers(answers: Sequence[str], evidence: Sequence[Evidence]) -> tuple[list[StoreTerm], list[str]]:
    """Map answer strings to terms in ``evidence``: (grounded terms in order, unmatched strings).

    A string that matches nothing as a whole but is a list ("Chile, Peru and Bolivia") is
    matched item by item; items that match nothing ("composer, conductor" where the store
    says "conducting") are unmatched, and the others still count.
    """
    terms = evidence_terms(evidence)
    grounded: list[StoreTerm] = []
    unmatched: list[str] = []
    for answer in answers:
        term = terms.get(normalise_label(answer))
        if term is not None:
            pieces = [term]
        else:
            items = [p for p in _LIST_SPLIT.split(answer) if p.strip()]
            pieces = [terms.get(normalise_label(p)) for p in items] if len(items) > 1 else [None]
        if len(pieces) > 1:
            unmatched += [item for item, p in zip(items, pieces) if p is None]
        elif pieces[0] is None:
            unmatched.append(answer)
        for p in pieces:
            if p is not None and p not in grounded:
                grounded.append(p)
    return grounded, unmatched


def evidence_mentioning(evidence: Sequence[Evidence], terms: Sequence[StoreTerm]) -> list[Evidence]:
    """The evidence triples whose subject or object is one of ``terms``."""
    iris = {t.iri for t in terms if t.iri}
    literals = {normalise_label(t.value.lexical if t.value else t.label) for t in terms if t.iri is None}
    return [e for e in evidence
            if e.s in iris or (not e.literal and e.o in iris) or (e.literal and normalise_label(e.o) in literals)]


def iris_missing_from_store(store, iris: Iterable[str | None]) -> list[str]:
    """The IRIs among ``iris`` that name nothing in the store (neither in the catalog nor
    in any triple). An answer with such an IRI would be a hallucinated identifier."""
    return store.missing_iris(iris)


def terms_by_label(store, labels: Sequence[str]) -> list[StoreTerm | None]:
    """Store entities whose label or alias equals each label (most popular first), for
    methods that have no evidence to ground in (the IO baseline)."""
    return [StoreTerm(found[1], found[0]) if found else None for found in store.entities_by_label(labels)]

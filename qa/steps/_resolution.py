"""Resolving names the model wrote to store identifiers, with scores a threshold can judge:
what pgmr's placeholders and memq's bracketed entities share.

An entity name resolves in the URI memory (``label, description`` → IRI); an exact label
or alias match counts as 1.0, since a name the store holds is the surest evidence there
is. A relation's words resolve among the relations, both readings: the one whose text
matched (its label as written, or an inverse phrasing read backwards) at its score, and
the other reading a little lower, so executing the query decides between them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ._grounding import normalise_label
from ._retrieval import MemoryTerm, exact_entities, search_relations, search_uris

BACKWARD_PENALTY = 0.05
# How near the words a name wraps around an entity's label must come to one of the store's
# relations for the name to count as that entity plus a relation. Measured with this
# encoder: kinship words ("mom", "dad", "heir") reach 0.47-0.67 on a family KB, and the
# leftover of an invented title ("The Devil's Benz" around *Devil*) 0.28-0.33.
RELATION_WORDS_MIN = 0.45


@dataclass(frozen=True)
class Choice:
    """One candidate for a name: what it resolves to, its label and score, and (for a
    relation) whether it is read backwards."""

    iri: str
    label: str
    score: float
    backward: bool = False
    # the words of the name around the entity's label, when the name wrote a relation
    # into it ("heir" in "[ENT: X's heir]"): the first hop from the entity
    relation_words: str = ""

    def to_dict(self) -> dict:
        out = {"iri": self.iri, "label": self.label, "score": round(self.score, 4)}
        if self.backward:
            out["backward"] = True
        if self.relation_words:
            out["relation_words"] = self.relation_words
        return out


def entity_choices(index, names: Sequence[str], k: int, *, question: str = "") -> dict[str, list[Choice]]:
    """Up to ``k`` candidate entities per name, best first: exact name matches (1.0, most
    popular first), then URI-memory neighbours at their cosine. With the ``question``, a
    neighbour whose whole label the question writes and the name contains counts as exact
    too: a small model often writes a relation into the name ("[ENT: X's heir]"), and the
    entity the question names is still X. So does one whose label the name begins and the
    question writes whole: the draft's grammar caps a name's length, and a long title is
    cut there ("As I Was Moving Ahead ... Glimpses of" for "... Glimpses of Beauty"). And one
    the name follows with a word saying its kind, as the question writes it ("[ENT:
    Norwegian language]" for *Norwegian* in "Norwegian-language films", :func:`kind_after`)."""
    names = list(dict.fromkeys(names))
    if not names:
        return {}
    asked = f" {normalise_label(question)} " if question else ""
    out = {}
    for name, found in zip(names, search_uris(index, names, k, type="entity")):
        exact = [Choice(iri, label, 1.0) for iri, label in exact_entities(index, name, k)]
        seen = {c.iri for c in exact}
        near = [Choice(t.iri, t.label, t.score) for t in found if t.iri not in seen]
        if asked and not exact:
            rests = [relation_in_name(c.label, name, asked) if not cut_short(c.label, name, asked) else ""
                     for c in near]
            kinds = names_a_relation(index, [kind_after(c.label, name, asked) for c in near])
            rests = names_a_relation(index, rests)
            near = [Choice(c.iri, c.label, 1.0, relation_words=rest) if rest is not None
                    else Choice(c.iri, c.label, 1.0) if kind is not None else c
                    for c, rest, kind in zip(near, rests, kinds)]
            near.sort(key=lambda c: -c.score)
        out[name] = (exact + near)[:k]
    return out


def cut_short(label: str, name: str, asked: str) -> bool:
    """Whether ``name`` is the first two or more words of ``label`` but not all of it, and the
    question (``asked``, as in :func:`relation_in_name`) writes the label whole."""
    words, named = normalise_label(label).split(), normalise_label(name).split()
    return 2 <= len(named) < len(words) and words[:len(named)] == named and f" {' '.join(words)} " in asked


def kind_after(label: str, name: str, asked: str) -> str | None:
    """The one word ``name`` adds after ``label`` ("language" of "Norwegian language" for
    *Norwegian*), when the question (``asked``, as in :func:`relation_in_name`) writes the
    name whole ("Norwegian-language films"); None otherwise. The word says what kind of
    thing the label names; it counts only where it is near one of the store's relations
    (:func:`names_a_relation`), so a name with a word more ("Mothra Aleandro") stays
    another name."""
    words, named = normalise_label(label).split(), normalise_label(name).split()
    if not words or len(named) != len(words) + 1 or named[:-1] != words or f" {' '.join(named)} " not in asked:
        return None
    return named[-1]


def relation_in_name(label: str, name: str, asked: str) -> str | None:
    """The relation words written into ``name`` around ``label`` as a possessive ("heir"
    for "X's heir", "dad" for "dad of X"), when the question (``asked``: its normalised
    words, padded with spaces) writes the label whole; None otherwise. Only a possessive
    counts: a name with a word more ("Mothra Aleandro") is another name, which the store
    may not hold."""
    words, named = normalise_label(label).split(), normalise_label(name).split()
    n = len(words)
    if not words or f" {' '.join(words)} " not in asked or len(named) <= n:
        return None
    if named[:n] == words and named[n] == "s":
        return " ".join(named[n + 1:])
    if named[-n:] == words and named[-n - 1] == "of":
        return " ".join(named[:-n - 1])
    return None


def names_a_relation(index, rests: list[str | None]) -> list[str | None]:
    """``rests`` with each non-empty one that comes near none of the store's relations
    (below :data:`RELATION_WORDS_MIN`) turned to None: words around a label name a
    relation only if the store has one like them."""
    words = sorted({r for r in rests if r})
    if not words:
        return rests
    near = {w: bool(found) and found[0].score >= RELATION_WORDS_MIN
            for w, found in zip(words, search_relations(index, words, 1))}
    return [r if not r or near[r] else None for r in rests]


def relation_choices(index, words: Sequence[str], k: int) -> list[list[Choice]]:
    """Up to ``2k`` (relation, reading) candidates per relation phrase, best first."""
    if not words:
        return []
    return [readings(found, k) for found in search_relations(index, list(words), k)]


def readings(found: Sequence[MemoryTerm], k: int) -> list[Choice]:
    out: dict[tuple[str, bool], Choice] = {}
    for t in found:
        for backward, penalty in ((t.inverse, 0.0), (not t.inverse, BACKWARD_PENALTY)):
            score = t.score - penalty
            if (t.iri, backward) not in out or out[(t.iri, backward)].score < score:
                out[(t.iri, backward)] = Choice(t.iri, t.label, score, backward)
    return sorted(out.values(), key=lambda c: -c.score)[:2 * k]


def weak_choice(kind: str, name: str, found: Sequence[Choice], threshold: float) -> str | None:
    """Why ``name`` resolves to nothing usable, or None when its best candidate reaches
    ``threshold``: "[ENT: Joel Zwickberg] found nothing (best 'Joel Zwick' at 0.712 < 0.8)"."""
    best = found[0] if found else None
    if best is not None and best.score >= threshold:
        return None
    got = "nothing" if best is None else f"{best.label!r} at {best.score:.3f}"
    return f"[{kind}: {name}] found nothing (best {got} < {threshold})"


__all__ = ["Choice", "entity_choices", "relation_choices", "readings", "weak_choice", "BACKWARD_PENALTY"]

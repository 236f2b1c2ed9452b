"""The entities a question names, in the order it names them, one per mention, with the
namesake chosen by the rest of the question.

Linking finds every name in the question (``Index.link_question``); a name several store
entities share ("Paris" the city and the Texas town) gives one candidate per entity for
the same words. The question's other words choose: each candidate's label and description
are read against the question without the name, and a candidate that is better known
(more facts) wins a tie. What was meant is reported with the answer: label, description
and IRI.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from ..steps._retrieval import respects_brackets
from ._word_forms import IRREGULAR_PAST, singulars

# Linking scores a name written with content words (not only stopwords or relation words)
# at 0.35 and up; weaker spans are words such as "country" that also name a relation.
STRONG_MENTION = 0.35
# How much the description's fit to the question counts against popularity among namesakes
DESCRIPTION_WEIGHT = 1.0
POPULARITY_WEIGHT = 0.15


@dataclass(frozen=True)
class Mention:
    """A named entity in the question: its ``span``, the words as written, the chosen
    entity (``iri``, ``label``, ``description``) and the ``namesakes`` passed over."""

    span: tuple[int, int]
    text: str
    iri: str
    label: str
    description: str | None = None
    namesakes: tuple[str, ...] = ()

    @property
    def written_as_name(self) -> bool:
        """The question writes it with a capital or a digit, as names are written."""
        return any(c.isupper() or c.isdigit() for c in self.text)

    def to_dict(self) -> dict:
        return {"mention": self.text, "iri": self.iri, "label": self.label, "description": self.description,
                **({"namesakes": list(self.namesakes)} if self.namesakes else {})}


def shape_words_only(text: str) -> bool:
    """Whether ``text``, written in lower case, holds only the words that give a question
    its shape ("more", "the most", "first"): a title such as *More* is not named by them."""
    from ._detect import COMPARATIVES, SUPERLATIVES

    words = text.split()
    return bool(words) and text == text.lower() and all(
        w in COMPARATIVES or w in SUPERLATIVES or w in ("the", "a", "an", "than", "recent", "recently") for w in words)


# words after which a participle modifies a noun ("which animated films", "an acclaimed
# drama"), not a verb of the sentence
_BEFORE_AN_ADJECTIVE = frozenset("""a an the which what this that these those some any its his her their all
many few more most very other""".split())


def reads_as_verb(question: str, span: tuple[int, int]) -> bool:
    """The word at ``span``, in lower case, is a verb of the question ("did [X] play the
    role", "[X] played Y"), not a name: a past form not after a determiner.
    A store may hold a title so named (a film *Played*), which the question does not mean."""
    word = question[span[0]:span[1]]
    past = len(word) >= 5 and word.endswith("ed") and not word.endswith(("eed", "dred"))  # not "speed", "hundred"
    if word != word.lower() or not word.isalpha() or not (past or word in IRREGULAR_PAST):
        return False
    before = re.findall(r"[\w'-]+", question[:span[0]].lower())
    return not before or before[-1] not in _BEFORE_AN_ADJECTIVE


def question_mentions(index, question: str, marked: Sequence[tuple[int, int]], *, k: int = 20) -> list[Mention]:
    """The entities ``question`` names, in question order, overlapping spans resolved to
    the stronger (longer, better-ranked) one, namesakes chosen by context; ``marked`` are
    the spans of the names it writes in brackets
    (:func:`qa.steps._retrieval.bracketed_spans`)."""
    found = [c for c in index.link_question(question, k=k)
             if c.span and c.score >= STRONG_MENTION and c.match in ("exact", "label", "alias")]
    taken: list[tuple[int, int]] = []
    groups: dict[tuple[int, int], list] = {}
    for c in found:  # best first: a span overlapping a better one is dropped
        if c.span in groups:
            groups[c.span].append(c)
            continue
        if any(c.span[0] < end and start < c.span[1] for start, end in taken):
            continue
        taken.append(c.span)
        groups[c.span] = [c]
    # brackets say "this is a name" and never "nothing else is": a span inside a bracket or
    # outside them all is a mention ("Is [X] a comedy?" names the genre too); one across a
    # bracket's edge is not
    groups = {span: cs for span, cs in groups.items() if respects_brackets(span, marked)
              and not shape_words_only(question[span[0]:span[1]]) and not reads_as_verb(question, span)}
    mentions = []
    for span in sorted(groups):
        candidates = groups[span]
        chosen = choose_namesake(index, question, span, candidates) if len(candidates) > 1 else candidates[0]
        mentions.append(Mention(span, question[span[0]:span[1]], chosen.iri, chosen.label, chosen.description,
                                tuple(c.iri for c in candidates if c.iri != chosen.iri)))
    return mentions


_PLURAL_WORD = re.compile(r"\b[a-z][a-z-]{3,}(?:ies|es|s)\b")


def plural_mentions(index, question: str, mentions: Sequence[Mention]) -> list[Mention]:
    """Entities named by a plural the question writes in lower case ("which comedies did X
    direct": the genre Comedy), where no mention covers the word; the store decides, by an
    exact name. They are what a question's answers may be constrained by, not options."""
    taken = [m.span for m in mentions]
    out = []
    for m in _PLURAL_WORD.finditer(question):
        span = (m.start(), m.end())
        if any(span[0] < end and start < span[1] for start, end in taken):
            continue
        for form in singulars(m.group()):
            found = [c for c in index.link(form, k=3, vectors=False) if c.match in ("exact", "label", "alias")]
            if found:
                best = found[0]
                out.append(Mention(span, m.group(), best.iri, best.label, best.description,
                                   tuple(c.iri for c in found[1:])))
                break
    return out


def other_forms(index, mention: Mention) -> list[Mention]:
    """Entities named by the other number of ``mention``'s last word ("sports" → Sport,
    "comedy" → Comedies), by an exact name: a store may hold a genre and a tag that
    differ by a plural."""
    words = mention.text.split()
    if not words:
        return []
    last = words[-1]
    forms = singulars(last.lower()) + [last + "s"]
    out = []
    for form in forms:
        name = " ".join(words[:-1] + [form])
        for c in index.link(name, k=3, vectors=False):
            if c.match in ("exact", "label", "alias") and c.iri != mention.iri and c.iri not in {m.iri for m in out}:
                out.append(Mention(mention.span, mention.text, c.iri, c.label, c.description))
    return out


def with_other_forms(index, mention: Mention) -> Mention:
    """``mention`` with the entities named by the other number of its last word among its
    namesakes: a constraint written "sports" may mean the tag "sports" or the genre "Sport",
    and the store's ties say which the answers hold."""
    forms = tuple(o.iri for o in other_forms(index, mention) if o.iri not in mention.namesakes)
    return replace(mention, namesakes=mention.namesakes + forms) if forms else mention


def choose_namesake(index, question: str, span: tuple[int, int], candidates: Sequence):
    """Among entities sharing the name at ``span``, the one whose "label, description"
    reads closest to the rest of the question, popularity breaking near ties."""
    rest = (question[:span[0]] + " " + question[span[1]:]).strip()
    texts = [f"{c.label}, {c.description}" if c.description else c.label for c in candidates]
    vectors = index.embed([rest] + texts)
    fits = (vectors[1:] @ vectors[0]).tolist()
    ceiling = max(max(c.popularity for c in candidates), 1)
    scores = [DESCRIPTION_WEIGHT * fit + POPULARITY_WEIGHT * c.popularity / ceiling
              for c, fit in zip(candidates, fits)]
    return candidates[max(range(len(candidates)), key=lambda i: scores[i])]


__all__ = ["Mention", "question_mentions", "reads_as_verb", "plural_mentions", "other_forms", "with_other_forms", "choose_namesake", "STRONG_MENTION"]

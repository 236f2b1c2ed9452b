"""The words of a question a shape step asks with: pure functions of the question and of
what :mod:`._reading` has already found in it (names, constants, shape).

Each takes something out of the question or reads a cue from it: the chain without its
constants ("which films did X direct before 1980" → "which films did X direct") and
without its modifiers ("which crime films" → "which films"), what it asks of the things
it names, what a comparison compares, what a superlative orders by, and the year or the
beginning or end a question about dated statements asks for. :func:`read_chain_words`
reads them all at once, for the shape reading.
"""
from __future__ import annotations

import re
from typing import Sequence

from ..steps._query_graph import ValueConstraint
from ._detect import QuestionShape
from ._mentions import Mention

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_WHEN = re.compile(r"^\s*(when|in what year|in which year|what year|since when|until when)\b", re.I)

_EMPTY_BRACKETS = re.compile(r"\[\s*\]")


def read_chain_words(question: str, shape: QuestionShape, mentions: Sequence[Mention],
                     values: Sequence[ValueConstraint], listing: str, plain: str) -> dict:
    """What the shape steps ask with, read from ``question`` and what was found in it: the
    fields of :class:`._reading.ShapeReading` named in its docstring, by name."""
    def asked_as_chain(text: str) -> str:
        # a plural ("comedies") is a head noun, not a modifier: only the mentions are cut
        return without_modifiers(without_constraints(text, values) if values else text, list(mentions))

    left = without_mentions(question, mentions)
    year = _YEAR.search(left)
    at_time = _YEAR.sub(" ", left)
    return {"chains": {text: asked_as_chain(text) for text in dict.fromkeys((question, listing, plain))},
            "asked_of_names": left,
            "asked_of_constant": without_mentions(without_constraints(question, values), mentions),
            "measured": _measure_text(question, shape, mentions),
            "ordered_by": " ".join(w for w in (_verb_before(question, shape.cue), shape.cue, shape.phrase) if w),
            "dated": bool(_YEAR.search(question) or _WHEN.search(question)),
            "year": int(year.group(1)) if year else None,
            "asks_when": bool(_WHEN.search(question)),
            "asked_at_time": at_time,
            "time_role": asked_role(at_time),
            "adjacent": frozenset((a.span, b.span) for a in mentions for b in mentions
                                  if a.span[1] <= b.span[0] and not question[a.span[1]:b.span[0]].strip(" []"))}


_DANGLING = re.compile(r"\s+(?:from|in|during|since|after|before|between|of|on|at|by|that|which|and|or|"
                       r"are|is|was|were|came out|come out|released|made)\s*([?.!]?)\s*$", re.I)


def without_constraints(question: str, constraints: Sequence[ValueConstraint]) -> str:
    """``question`` without the words of its value constraints, as the chain they filter:
    "which films did X direct before 1980" → "which films did X direct"."""
    text = question
    for c in constraints:
        # by the words, not the span: the text may be the question reworded around them
        # ("how many films …" asked as "which films …")
        at = text.lower().find(c.words.lower()) if c.words else -1
        if at >= 0:
            text = text[:at] + text[at + len(c.words):]
    text = " ".join(text.split())
    text = re.sub(r"\s+([?.!,])", r"\1", text)
    for _ in range(2):
        text = _DANGLING.sub(r"\1", text)
    return text


def without_modifiers(text: str, mentions: list[Mention]) -> str:
    """``text`` without the common words that modify the noun after them ("what crime
    films has X acted in" → "what films has X acted in"): the chain is asked without them,
    and they constrain its answers after. Found by their words, so ``text`` may be the
    question reworded ("how many crime films …" asked as "which crime films …")."""
    modifiers = []
    for m in mentions:
        if m.written_as_name:
            continue
        # the word after it in lower case: one before a name ("play Leonard Chess") is a verb
        found = re.search(rf"\b{re.escape(m.text)}\b(?=\s+((?-i:[a-z][a-z-]*)))", text, re.I)
        following = found.group(1).lower() if found else ""
        # the noun it modifies: not a function word, not a verb form ("bordering", "directed"),
        # inside the phrase that says what is asked for ("which crime films", "how many comedy
        # movies"); after a verb it is the topic ("which movie did george barnes work on")
        if found and following not in _FUNCTION_WORDS and not following.endswith(("ing", "ed")) \
                and _in_asked_phrase(text, found.start()):
            modifiers.append(m)
    if modifiers and len(modifiers) == len(mentions):
        # a modifier constrains a chain that starts from another name: with none left, one of
        # them is the topic's name written in lower case ("where was sasha vujačić born"),
        # the one of the most words, else the last ("which comedy films did madonna direct")
        topic = max(reversed(modifiers), key=lambda m: len(m.text.split()))
        modifiers = [m for m in modifiers if m is not topic]
    for m in modifiers:
        found = re.search(rf"\b{re.escape(m.text)}\b", text, re.I)
        if found:
            text = text[:found.start()] + text[found.end():]
    return " ".join(text.split())


# words that open the phrase naming what is asked for, and words it may hold before a modifier
_ASKING = frozenset("which what how name list give tell show find".split())
_ASKED_PHRASE = _ASKING | frozenset("many much me us the a an all some any of other is are was were".split())


def _in_asked_phrase(text: str, at: int) -> bool:
    """Whether the words before ``at``, back to the last wh-word or request, are all of
    the asked phrase ("which", "how many", "name the", "what is the")."""
    words = re.findall(r"[\w'-]+", text[:at].lower())
    for word in reversed(words):
        if word in _ASKING:
            return True
        if word not in _ASKED_PHRASE:
            return False
    return False


_FUNCTION_WORDS = frozenset("""a an the of in on at by for to with from and or but is are was were be been has have
had do does did that which who whom whose what when where why how than as""".split())


def without_mentions(question: str, mentions: Sequence[Mention]) -> str:
    """``question`` with the named entities' words taken out: what it asks about them."""
    out, last = [], 0
    for m in sorted(mentions, key=lambda m: m.span):
        out.append(question[last:m.span[0]])
        last = m.span[1]
    out.append(question[last:])
    # a name written in brackets leaves its brackets behind; they mark the name, they are
    # not words the encoder should weigh ("did [] direct" reads unlike "did direct")
    return " ".join(_EMPTY_BRACKETS.sub(" ", "".join(out)).split())



_NOT_VERBS = {"the", "a", "an", "which", "what", "who", "is", "are", "was", "were", "has", "have", "had", "of",
              "in", "with", "its", "their", "his", "her", "did", "does", "do"}


def _verb_before(question: str, cue: str | None) -> str:
    """The content word just before the superlative ("borders" in "which country borders
    the fewest countries"): what the counted or ordered relation does."""
    if not cue:
        return ""
    words = [w.strip(",;:?!.").lower() for w in question.split()]
    first = cue.split()[0]
    if first not in words:
        return ""
    before = [w for w in words[:words.index(first)] if w and w not in _NOT_VERBS]
    # a verb's inflection ("borders", "directed"), not a noun ("which Asian country has …")
    return before[-1] if before and before[-1].endswith(("s", "ed")) else ""


def _measure_text(question: str, shape: QuestionShape, mentions: Sequence[Mention]) -> str:
    """The words naming what is compared, without the options' names; the whole question
    without them when the comparative names nothing ("is India larger than Nepal")."""
    # the options' names; a common word that names an entity ("countries") is what is compared
    named = [m for m in mentions if m.written_as_name] or list(mentions)
    names = {w.lower() for m in named for w in m.text.split()}
    phrase = " ".join(w for w in shape.phrase.split() if w not in names)
    return phrase or without_mentions(question, mentions)


# how English asks for a beginning or an end ("when did X marry Y", "… leave Y")
_ASKS_END = re.compile(r"\b(end(ed|s)?|leave|left|divorc\w*|stop(ped)?|quit|retire[ds]?|ceased?|separat\w*|"
                       r"until|last)\b", re.I)
_ASKS_START = re.compile(r"\b(marr\w*|wed(ded)?|join(ed|s)?|sign(ed|s)?|start(ed|s)?|begin|began|begun|becom\w*|"
                         r"became|first|enter(ed|s)?|since|elected|appointed|mov(e|ed) to)\b", re.I)


def asked_role(asked: str) -> str | None:
    """Whether the question asks for a beginning ("start") or an end ("end"), or neither."""
    return "end" if _ASKS_END.search(asked) else "start" if _ASKS_START.search(asked) else None


__all__ = ["read_chain_words", "without_constraints", "without_modifiers", "without_mentions", "asked_role"]

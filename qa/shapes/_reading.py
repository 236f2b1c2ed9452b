"""The question as the shapes read it: once, where it enters :func:`qa.shapes.answer_in_shape`.

Every reader of the question's words runs here, in one pass, and the record it fills is
what every shape step takes: the entities and constants the question names, its shape
and answer form, the chains it may ask of a method (itself, the list a count counts, the
chain without its superlative; each without constants and modifiers), the constraints it
writes, and what it asks of the things it names. No step after this one goes back to the
question's words; the encoder and the model still read ``question`` whole, as text.

The readers run a module at a time, in the order their inputs allow: the brackets; the
names linked, and the plurals; how each name is written, and the names the store holds
only as values; the shape; the constants and the answer's form; then the words each
shape step asks with.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ..steps._query_graph import EntityConstraint, ValueConstraint, answer_form, read_value_constraints
from ..steps._retrieval import bracketed_spans, within_brackets, written_as_name, written_literals
from ._detect import QuestionShape, detect_shape, listing_question, without_names, without_superlative
from ._mentions import Mention, plural_mentions, question_mentions
from ._words import read_chain_words

# a mention written as a number ("2010", "8,000", "1970s"), which a comparison word before
# it makes a constant
_NUMBER = re.compile(r"\d[\d,.]*'?s?")


@dataclass
class ShapeReading:
    """The question, read once for every shape step.

    ``mentions`` the entities it names, in question order (a constant's words are no
    name); ``values`` the constants it writes; ``shape`` and ``form`` what it asks and
    the form of the answer; ``nouns`` the entities its lower-case plurals name
    ("comedies"); ``literals`` the names it writes that the store holds only as values.
    ``chains`` maps each chain a shape may ask of a method (the question, the list a
    count counts, the chain without its superlative) to the words it is asked in;
    ``asked_of_names`` is the question without its names (what a yes/no question asks of
    them), ``asked_of_constant`` also without its constants, ``measured`` what a
    comparison compares, ``ordered_by`` what a superlative orders by; ``dated``, ``year``,
    ``asks_when``, ``asked_at_time`` and ``time_role`` what the statement nodes' dates may
    answer; ``adjacent`` the pairs of names written one right after the other ("a
    [Comedy] film"). ``composing()`` is the reading of :mod:`qa.compose`, read when first
    needed."""

    question: str
    mentions: list[Mention]
    values: list[ValueConstraint]
    shape: QuestionShape
    form: str
    nouns: list[Mention] = field(default_factory=list)
    literals: list[EntityConstraint] = field(default_factory=list)
    chains: dict[str, str] = field(default_factory=dict)
    listing: str = ""
    plain: str = ""
    asked_of_names: str = ""
    asked_of_constant: str = ""
    measured: str = ""
    ordered_by: str = ""
    dated: bool = False
    year: int | None = None
    asks_when: bool = False
    asked_at_time: str = ""
    time_role: str | None = None
    adjacent: frozenset = frozenset()
    # composing builds on the shapes, so its reading (qa.compose.QuestionReading) is only named
    composing: Callable[[], object] | None = field(default=None, repr=False, compare=False)

    def asked(self, chain: str | None = None) -> str:
        """The words ``chain`` (the question itself when None) is asked of a method in."""
        return self.chains.get(chain or self.question, chain or self.question)


def read_shape(store, index, question: str, composing: Callable[[], object] | None = None) -> ShapeReading:
    """``question`` read once (see the module's docstring)."""
    marked = bracketed_spans(question)
    # the shape's words must be the question's own, not a title's ("The Fastest Gun Alive")
    linked = question_mentions(index, question, marked)
    nouns = plural_mentions(index, question, linked)
    as_names = {m.span for m in linked if written_as_name(question, m.span)}
    literals = [EntityConstraint("", name, name, span, True, literal=term)
                for name, (span, term) in written_literals(store, question, [m.span for m in linked]).items()]
    # a title's words are not the question's ("The Fastest Gun Alive"), but a common word
    # the store also holds as a name ("film", "the last movie" in lower case) still is
    shape = detect_shape(question, [m.span for m in linked
                                    if (marked and within_brackets(m.span, marked)) or m.span in as_names])
    # a number the store also holds as a name (a film called "2010") is a constant after a
    # comparison word ("before 2010"): only a name written in brackets stays a name
    # ("a 1908 film": a common word the store also holds as a name, "film", is not blanked)
    blanked = without_names(question, [m.span for m in linked if not _NUMBER.fullmatch(m.text) and m.span in as_names])
    listing = listing_question(question)
    plain = without_superlative(question, shape.cue) if shape.cue else question
    values = read_value_constraints(blanked)
    form = answer_form(question, shape.kind, shape.yes_no)
    mentions = [m for m in linked if not any(c.span[0] < m.span[1] and m.span[0] < c.span[1] for c in values)]
    return ShapeReading(question, mentions, values, shape, form, nouns=nouns, literals=literals, listing=listing,
                        plain=plain, composing=composing,
                        **read_chain_words(question, shape, mentions, values, listing, plain))


__all__ = ["ShapeReading", "read_shape"]

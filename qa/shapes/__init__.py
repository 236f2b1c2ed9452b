"""Question shapes beyond chains: counts, yes/no, comparisons and superlatives.

A method that answers chains gets the other shapes by answering through
:func:`answer_in_shape`: the question's shape is read from its English form
(:mod:`._detect`); a yes/no question is a check of facts between the entities it names
(:mod:`._boolean`); a comparison orders those entities by a value the store holds
(:mod:`._order`); a count and a superlative are the method's own chain answer, counted
(:mod:`._count`) or ordered (:mod:`._order`). A chain asked at a time ("… in 2011") or
for a fact's date ("when did X start playing for Y") is first tried on the store's
statement nodes (:mod:`._qualifiers`). The entities a question names, and which
namesake it means, come from :mod:`._mentions`; entities' facts grouped by relation from
:mod:`._attributes`.
"""
from __future__ import annotations

from typing import Callable

from ..steps._result import Answer
from ._boolean import answer_boolean
from ._count import count_answer, counted_query, is_one_number
from ._detect import QuestionShape, detect_shape, is_superlative, listing_question, without_superlative
from ._mentions import Mention, question_mentions
from ._order import answer_comparison, answer_superlative
from ._qualifiers import answer_with_qualifiers, needs_qualifiers


def answer_in_shape(store, index, question: str, run, method: str, chain: Callable[..., Answer], *,
                    timeout_s: float = 5.0) -> Answer:
    """``question`` answered in its shape; ``chain()`` is the method's own answer to it,
    asked for when the shape builds on a chain (or is one), and ``chain(text)`` its answer
    to the chain a count counts ("which films …" for "how many films …")."""
    shape = detect_shape(question)
    mentions: list[Mention] = []
    if shape.kind != "chain":
        # the shape's words must be the question's own, not a title's ("The Fastest Gun Alive")
        mentions = question_mentions(index, question)
        shape = detect_shape(question, [m.span for m in mentions])
    run.record("shape", **shape.to_dict())
    if shape.kind in ("boolean", "comparison"):
        run.record("shape", mentions=[m.to_dict() for m in mentions])
        answer = (answer_boolean(store, index, question, mentions, method, run, timeout_s=timeout_s)
                  if shape.kind == "boolean" else
                  answer_comparison(store, index, question, shape, mentions, method, run, timeout_s=timeout_s))
        if answer is not None:
            return answer
        if shape.kind == "comparison" and is_superlative(shape.cue):
            # "which of the countries bordering Nepal is the largest": the options are a chain's answers
            run.record("shape", fallback="superlative: the question names one entity, not the options")
            return _superlative(store, index, question, shape, method, run, chain, timeout_s)
        run.record("shape", fallback="chain: the question names too few entities for its shape")
        return chain()
    if shape.kind in ("chain", "count") and needs_qualifiers(question):
        mentions = mentions or question_mentions(index, question)
        answer = answer_with_qualifiers(store, index, question, mentions, method, run, timeout_s=timeout_s)
        # "how many people lived in X in 2001" is the number a dated statement holds
        if answer is not None and (shape.kind == "chain" or is_one_number(answer)):
            return answer
    if shape.kind == "count":
        listing = listing_question(question)
        run.record("shape", chain_question=listing)
        counted = chain(listing)
        counted.question = question
        return count_answer(store, counted, run, timeout_s=timeout_s)
    if shape.kind == "superlative":
        return _superlative(store, index, question, shape, method, run, chain, timeout_s)
    return chain()


def _superlative(store, index, question: str, shape: QuestionShape, method: str, run, chain, timeout_s: float):
    """The chain asked without the superlative, its answers ordered by it."""
    plain = without_superlative(question, shape.cue) if shape.cue else question
    run.record("shape", chain_question=plain)
    answers = chain(plain)
    answers.question = question
    return answer_superlative(store, index, question, shape, answers, method, run, timeout_s=timeout_s)


__all__ = ["answer_in_shape", "detect_shape", "QuestionShape", "question_mentions", "Mention",
           "answer_boolean", "answer_comparison", "answer_with_qualifiers", "answer_superlative", "count_answer", "counted_query"]

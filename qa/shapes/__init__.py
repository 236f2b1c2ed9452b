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

Composed query graphs (:mod:`qa.compose`) come before the word rules where the store can
enumerate what is meant: a comparison of two named things (order, equality, difference,
counts), the first or last of a chain (inside a constraint too). A composed pick answers
when the model judges it an answer and its form is the question's; else the rules read on.
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Callable

from ..steps._constraints import NONE_MEETS, apply_constraints, check_value
from ..steps._mediators import beside_the_constraint, walk_through_mediators
from ..steps._query_graph import (EntityConstraint, QueryGraph, ValueConstraint, answer_form, form_fits,
                                  read_value_constraints, without_constraints)
from ..steps._result import Answer, Refusal
from ..steps._retrieval import (bracketed_spans, store_labels, written_literals,
                               within_brackets, written_as_name)
from ._attributes import Attribute, entity_attributes
from ._boolean import answer_boolean, yes_no_answer
from ._count import count_answer, counted_query, is_one_number
from ._detect import QuestionShape, detect_shape, is_superlative, listing_question, without_names, without_superlative
from ._mentions import Mention, plural_mentions, question_mentions, with_other_forms, without_mentions
from ._order import answer_comparison, answer_superlative
from ._qualifiers import answer_with_qualifiers, needs_qualifiers
from ._question_shape import question_shape

if TYPE_CHECKING:  # composing reads the shapes' attributes: imported where used
    from ..compose import QuestionReading


def answer_in_shape(store, index, question: str, run, method: str, chain: Callable[..., Answer], *,
                    timeout_s: float = 5.0, read: Callable[[str], "QuestionReading"] | None = None) -> Answer:
    """``question`` answered in its shape; ``chain()`` is the method's own answer to it,
    asked for when the shape builds on a chain (or is one), and ``chain(text)`` its answer
    to the chain a count counts ("which films …" for "how many films …"). Every answer
    is read as a query graph (:mod:`qa.steps._query_graph`): the constraints the question
    writes are applied to the chain's answers, and the answer's form is checked against
    the question's. ``read(question)`` is the question as composing reads it, once for
    every method that answers it (read here when not given)."""
    # the shape's words must be the question's own, not a title's ("The Fastest Gun Alive")
    mentions = question_mentions(index, question)
    # a number the store also holds as a name (a film called "2010") is a constant after a
    # comparison word ("before 2010"): only a name written in brackets stays a name
    # ("a 1908 film": a common word the store also holds as a name, "film", is not blanked)
    values = read_value_constraints(without_names(question, [m.span for m in mentions if not _bare_number(m)
                                                             and written_as_name(question, m.span)]))
    mentions = [m for m in mentions if not any(c.span[0] < m.span[1] and m.span[0] < c.span[1] for c in values)]
    # a title's words are not the question's ("The Fastest Gun Alive"), but a common word
    # the store also holds as a name ("film", "the last movie" in lower case) still is
    marked = bracketed_spans(question)
    spans = [m.span for m in mentions
             if (marked and within_brackets(m.span, marked)) or written_as_name(question, m.span)]
    shape = detect_shape(question, spans)
    run.record("shape", **shape.to_dict())
    graph = QueryGraph(question, answer_form(question, shape.kind, shape.yes_no), constraints=values)
    graph.aggregation = {"count": "count", "superlative": "argmax" if shape.kind == "superlative" and
                         shape.direction(dates=False) == "max" else "argmin"}.get(shape.kind)
    answer = _answer_shape(store, index, question, shape, mentions, graph, run, method, chain, timeout_s, read)
    if graph.grounded:
        answer.constraints = [g.to_dict() for g in graph.shown]
    run.record("query_graph", **graph.to_dict())
    return _checked_form(answer, graph, run)


def _answer_shape(store, index, question: str, shape: QuestionShape, mentions: list[Mention], graph: QueryGraph,
                  run, method: str, chain, timeout_s: float, read) -> Answer:
    from ..compose import read_question

    values = graph.constraints
    # the question as composing reads it, once, when first needed (its cue words are read
    # outside titles: "After Office Hours" compares nothing)
    reading = functools.cache(lambda: read(question) if read else read_question(index, question))
    # two named things compared ("how many years apart were A and B released", "A vs B:
    # which is newer"): the comparisons the store can compute of them are composed
    # candidates; a picked one answers, else the shape's own reading goes on
    compared = len(mentions) >= 2 and reading().compares
    # and the first or last of a chain, maybe inside a constraint ("the oldest of X's films
    # in Danish"): orderings are composed candidates too; one composing serves both
    stages = ((COMPARISON_STAGES if compared and shape.kind in ("chain", "count", "superlative") else frozenset())
              | (ORDERING_STAGES if shape.kind == "superlative" else frozenset()))
    if stages:
        answer = composed(store, index, reading(), run, method, timeout_s, stages, graph.answer_form)
        if answer is not None:
            return answer

    def constrained(text: str | None = None) -> Answer:
        """The chain asked without its value constraints, then constrained by them and by
        the entities the question names beside the chain's own."""
        asked = text or question
        nouns = plural_mentions(index, question, mentions)
        if values:
            asked = without_constraints(asked, values)
        asked = without_modifiers(asked, mentions)  # a plural ("comedies") is a head noun, not a modifier
        if asked != (text or question):
            run.record("shape", constrained_chain_question=asked)
        answer = walk_through_mediators(store, index, chain(asked), question, run, timeout_s=timeout_s)
        answer.question = question
        literals = literal_constraints(store, question, mentions)
        inside = [m for m in mentions if any(c.span[0] <= m.span[0] and m.span[1] <= c.span[1] for c in literals)]
        named = [with_other_forms(index, m) for m in mentions + nouns if m not in inside]
        graph.constraints = values + entity_constraints(store, named, answer) + literals
        constrained_answer = apply_constraints(store, index, answer, graph, run, timeout_s=timeout_s)
        return beside_the_constraint(store, index, constrained_answer, graph.grounded, question, run,
                                     timeout_s=timeout_s)

    if values and mentions and (shape.kind == "boolean" or (shape.kind == "comparison" and shape.yes_no)):
        # "was X born after 1950", "did X come out in 1999", "is Everest over 8,000 m tall"
        answer = answer_against_constant(store, index, question, mentions, values, method, run,
                                         timeout_s=timeout_s)
        if answer is not None:
            return answer
    if shape.kind in ("boolean", "comparison"):
        run.record("shape", mentions=[m.to_dict() for m in mentions])
        answer = (answer_boolean(store, index, question, mentions, method, run, timeout_s=timeout_s)
                  if shape.kind == "boolean" else
                  answer_comparison(store, index, question, shape, mentions, method, run, timeout_s=timeout_s))
        if answer is not None and answer.refused and answer.refusal.reason == "no_answer" and compared:
            # no fact joins the named things ("are A and B in the same language"): a
            # comparison of them may be composed, else the method's; the form check keeps a yes/no
            run.record("shape", fallback="composed comparison: no fact joins the named things it compares")
            return composed(store, index, reading(), run, method, timeout_s, COMPARISON_STAGES, graph.answer_form,
                            comparisons_only=True) or constrained()
        if (answer is None or answer.refused) and shape.kind == "comparison" and is_superlative(shape.cue):
            # "which of the countries bordering Nepal is the largest", "which of X's
            # English-language films is the newest": the options are a chain's answers, not
            # the things named; the first or last of a chain, composed, else the chain ordered
            run.record("shape", fallback="superlative: the named things are not the options")
            return (composed(store, index, reading(), run, method, timeout_s, ORDERING_STAGES, graph.answer_form)
                    or _superlative(store, index, question, shape, method, run, constrained, timeout_s))
        if answer is not None:
            return answer
        run.record("shape", fallback="chain: the question names too few entities for its shape")
        return constrained()
    if shape.kind in ("chain", "count") and needs_qualifiers(question):
        answer = answer_with_qualifiers(store, index, question, mentions, method, run, timeout_s=timeout_s)
        # "how many people lived in X in 2001" is the number a dated statement holds
        if answer is not None and (shape.kind == "chain" or is_one_number(answer)):
            return answer
    if shape.kind == "count":
        listing = listing_question(question)
        run.record("shape", chain_question=listing)
        counted = constrained(listing)
        if counted.refused and counted.refusal.reason == NONE_MEETS:
            # "how many of X's films came out before 1950": none did, and the count is 0
            counted = Answer(question=question, method=counted.method, query=counted.query, meant=counted.meant)
        return count_answer(store, counted, run, timeout_s=timeout_s)
    if shape.kind == "superlative":
        return _superlative(store, index, question, shape, method, run, constrained, timeout_s)
    answer = constrained()
    if shape.kind == "chain" and not answer.refused and any(isinstance(g.constraint, ValueConstraint)
                                                            for g in graph.dropped):
        # "who did X play for in 2012": no answer holds the year, but a node the store
        # passes through may (a roster from 2010 on); a composed value constraint, else the
        # answer with the constraint reported as dropped
        run.record("shape", fallback="composed: a value the question writes was dropped")
        tied = composed(store, index, reading(), run, method, timeout_s, VALUE_STAGES, graph.answer_form)
        if tied is not None:
            graph.grounded = []  # the composed query holds the constraint
            return tied
    return answer


# Common nouns that say what kind of thing is asked for, not which: "which films", "what
# people". A store may hold an entity so named (a tag "film"), which would cut the answers.
GENERIC_NOUNS = frozenset("""film films movie movies picture pictures flick flicks show shows people person persons
human humans thing things one ones work works item items entity entities title titles name names place places
kind kinds type types sort sorts answer answers""".split())


def literal_constraints(store, question: str, mentions: list[Mention]) -> list[EntityConstraint]:
    """Names the question writes that no entity bears but the store holds as literal values
    ("Indiana Jones", a character on a film performance): each constrains the answers
    through the node that holds it."""
    # a run one mention covers whole is that entity; one a mention covers only in part
    # ("Leonard Chess" around the entity Chess) may be a value the store holds whole
    return [EntityConstraint("", name, name, span, True, literal=term)
            for name, (span, term) in written_literals(store, question, [m.span for m in mentions]).items()]


def _bare_number(mention: Mention) -> bool:
    """A mention written as a number ("2010", "8,000", "1970s"), which a comparison word
    before it makes a constant."""
    return re.fullmatch(r"\d[\d,.]*'?s?", mention.text) is not None


def entity_constraints(store, mentions: list[Mention], chain: Answer) -> list[EntityConstraint]:
    """The entities the question names that the chain's query does not run through: each
    constrains the answers ("comedies", "Asian", "starring Y"); a generic noun written in
    lower case ("films") does not. A name several entities bear keeps them all as namesakes."""
    query = chain.query or ""
    kept = [m for m in mentions if f"<{m.iri}>" not in query and not any(f"<{n}>" in query for n in m.namesakes)
            and (m.written_as_name or m.text.lower() not in GENERIC_NOUNS)]
    labels = store_labels(store, [n for m in kept for n in m.namesakes])
    return [EntityConstraint(m.iri, m.label, m.text, m.span, m.written_as_name,
                             namesakes=tuple((n, labels.get(n, n)) for n in m.namesakes)) for m in kept]


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


def answer_against_constant(store, index, question: str, mentions: list[Mention], values: list[ValueConstraint],
                            method: str, run, *, timeout_s: float = 5.0) -> Answer | None:
    """Yes or no for a value compared with a constant ("was X born after 1950"): the first
    entity's value along the relation of the constant's kind that fits the question's
    words; a refusal when it holds no such value; None when it names no entity."""
    subject = mentions[0]
    asked = without_mentions(without_constraints(question, values), mentions)
    verdicts, facts, checks = [], [], []
    for c in values:
        verdict, found, said = check_value(store, index, subject.iri, subject.label, c, asked, timeout_s=timeout_s)
        checks.append({"constraint": c.words, "verdict": verdict, "relation" if verdict is not None else "why": said})
        verdicts.append(verdict)
        facts += found
    run.record("boolean", subject=subject.to_dict(), asked=asked, against_constant=checks)
    meant = [m.to_dict() for m in mentions]
    if any(v is None for v in verdicts):
        why = next(c["why"] for c in checks if c["verdict"] is None)
        return Answer(question=question, method=method, shape="boolean", meant=meant,
                      refusal=Refusal("no_answer", f"the store cannot say: {why}"))
    return yes_no_answer(question, method, all(verdicts), facts, shape="boolean", meant=meant)


# the composed stages that answer a comparison of two named things, and a first or last
COMPARISON_STAGES = frozenset({"comparison"})
ORDERING_STAGES = frozenset({"superlative", "constrained superlative", "superlative value"})
# and a constant the question writes, compared with a value on the chain's nodes
VALUE_STAGES = frozenset({"value constraint", "time span"})


def composed(store, index, reading: "QuestionReading", run, method: str, timeout_s: float, stages: frozenset[str],
             form: str, *, comparisons_only: bool = False) -> Answer | None:
    """The answer of the query graph the model picks among the store's composed candidates
    (:mod:`qa.compose`; only the comparisons of two named things with ``comparisons_only``)
    when its stage is one of ``stages`` and its answer has the question's ``form``, else None."""
    from ..compose import ComposeOptions, compose_answer

    picked = compose_answer(store, index, reading.question, run, method, reading=reading,
                            options=ComposeOptions(timeout_s=timeout_s, comparisons_only=comparisons_only))
    # taken only when the model judged the pick an answer (the shape's own reading stands
    # where it is unsure); the first of the values themselves (a year) answers only a
    # question asking for a value
    answer = picked.answer if picked else None
    taken = (answer is not None and not answer.refused and picked.stage in stages and picked.p >= 0.5
             and not (picked.stage == "superlative value" and form != "value")
             and form_fits(form, answer.answers, answer.values, False) is None)
    run.record("shape", composed=picked.stage if picked else None, taken=taken)
    return answer if taken else None


def _checked_form(answer: Answer, graph: QueryGraph, run) -> Answer:
    """The answer, or a refusal when its form is not the question's: a "which" question
    never gets a bare count, a "how many" never a list, a yes/no question never a value."""
    if answer.refused:
        return answer
    counted = bool(answer.query and "COUNT(" in answer.query.upper() and answer.shape != "count")
    wrong = form_fits(graph.answer_form, answer.answers, answer.values, counted)
    if wrong is None:
        return answer
    run.record("answer_form", expected=graph.answer_form, wrong=wrong, answers=answer.answers[:5])
    return Answer(question=answer.question, method=answer.method, shape=answer.shape, meant=answer.meant,
                  constraints=answer.constraints, query=answer.query,
                  refusal=Refusal("wrong_form", f"the answer found does not fit the question: {wrong}"))


def _superlative(store, index, question: str, shape: QuestionShape, method: str, run, chain, timeout_s: float):
    """The chain asked without the superlative, its answers ordered by it."""
    plain = without_superlative(question, shape.cue) if shape.cue else question
    run.record("shape", chain_question=plain)
    answers = chain(plain)
    answers.question = question
    return answer_superlative(store, index, question, shape, answers, method, run, timeout_s=timeout_s)


__all__ = ["answer_in_shape", "answer_against_constant", "entity_constraints", "detect_shape", "QuestionShape", "question_mentions", "Mention",
           "answer_boolean", "answer_comparison", "answer_with_qualifiers", "answer_superlative", "count_answer", "counted_query"]
__all__ += ["question_shape", "entity_attributes", "Attribute"]

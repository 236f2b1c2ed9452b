"""Question shapes beyond chains: counts, yes/no, comparisons and superlatives.

A method that answers chains gets the other shapes by answering through
:func:`answer_in_shape`. The question is read there once (:mod:`._reading`), and every
step below takes that reading, never the question's words: its shape is read from its
English form (:mod:`._detect`), the words each step asks with from :mod:`._words`. A yes/no question is a check of facts between the entities it names
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
from typing import TYPE_CHECKING, Callable

from ..steps._constraints import NONE_MEETS, apply_constraints, check_value
from ..steps._mediators import beside_the_constraint, walk_through_mediators
from ..steps._query_graph import EntityConstraint, QueryGraph, ValueConstraint, form_fits
from ..steps._result import Answer, Refusal
from ..steps._retrieval import store_labels
from ._attributes import Attribute, entity_attributes
from ._boolean import answer_boolean, yes_no_answer
from ._count import count_answer, counted_query, is_one_number
from ._detect import QuestionShape, detect_shape, is_superlative
from ._mentions import Mention, question_mentions, with_other_forms
from ._order import answer_comparison, answer_superlative
from ._qualifiers import answer_with_qualifiers
from ._question_shape import question_shape
from ._reading import ShapeReading, read_shape
from ._words import without_modifiers

if TYPE_CHECKING:  # composing reads the shapes' attributes: imported where used
    from ..compose import QuestionReading


def answer_in_shape(store, index, question: str, run, method: str, chain: Callable[..., Answer], *,
                    timeout_s: float = 5.0, read: Callable[[str], "QuestionReading"] | None = None) -> Answer:
    """``question`` answered in its shape; ``chain(text)`` is the method's own answer to a
    chain, asked for when the shape builds on one (or is one): the question's, or the chain
    a count counts ("which films …" for "how many films …"), in the words the reading
    gives it (without constants and modifiers). The question is
    read here, once (:func:`._reading.read_shape`), and every later step takes that
    reading. Every answer is read as a query graph (:mod:`qa.steps._query_graph`): the
    constraints the question writes are applied to the chain's answers, and the answer's
    form is checked against the question's. ``read(question)`` is the question as
    composing reads it, once for every method that answers it (read here when not given)."""
    from ..compose import read_question

    # composing's reading of it, when first needed (its cue words are read outside titles:
    # "After Office Hours" compares nothing)
    composing = functools.cache(lambda: read(question) if read else read_question(index, question))
    reading = read_shape(store, index, question, composing)
    run.record("shape", **reading.shape.to_dict())
    graph = QueryGraph(question, reading.form, constraints=list(reading.values))
    graph.aggregation = {"count": "count", "superlative": "argmax" if reading.shape.kind == "superlative" and
                         reading.shape.direction(dates=False) == "max" else "argmin"}.get(reading.shape.kind)
    answer = _answer_shape(store, index, reading, graph, run, method, chain, timeout_s)
    if graph.grounded:
        answer.constraints = [g.to_dict() for g in graph.shown]
    run.record("query_graph", **graph.to_dict())
    return _checked_form(answer, graph, run)


def _answer_shape(store, index, reading: ShapeReading, graph: QueryGraph, run, method: str, chain,
                  timeout_s: float) -> Answer:
    shape, mentions, values = reading.shape, reading.mentions, reading.values
    # two named things compared ("how many years apart were A and B released", "A vs B:
    # which is newer"): the comparisons the store can compute of them are composed
    # candidates; a picked one answers, else the shape's own reading goes on
    compared = len(mentions) >= 2 and reading.composing().compares
    # and the first or last of a chain, maybe inside a constraint ("the oldest of X's films
    # in Danish"): orderings are composed candidates too; one composing serves both
    stages = ((COMPARISON_STAGES if compared and shape.kind in ("chain", "count", "superlative") else frozenset())
              | (ORDERING_STAGES if shape.kind == "superlative" else frozenset()))
    unsure = None  # an ordering the model picked but was unsure of
    if stages:
        answer, taken = composed_pick(store, index, reading.composing(), run, method, timeout_s, stages,
                                      graph.answer_form)
        if taken:
            return answer
        unsure = answer if shape.kind == "superlative" else None

    def constrained(text: str | None = None) -> Answer:
        """The chain asked without its value constraints, then constrained by them and by
        the entities the question names beside the chain's own."""
        asked = reading.asked(text)
        if asked != (text or reading.question):
            run.record("shape", constrained_chain_question=asked)
        answer = walk_through_mediators(store, index, chain(asked), reading.question, run, timeout_s=timeout_s)
        answer.question = reading.question
        literals = reading.literals
        inside = [m for m in mentions if any(c.span[0] <= m.span[0] and m.span[1] <= c.span[1] for c in literals)]
        named = [with_other_forms(index, m) for m in mentions + reading.nouns if m not in inside]
        graph.constraints = list(values) + entity_constraints(store, named, answer) + literals
        constrained_answer = apply_constraints(store, index, answer, graph, run, timeout_s=timeout_s)
        return beside_the_constraint(store, index, constrained_answer, graph.grounded, reading.question, run,
                                     timeout_s=timeout_s)

    if values and mentions and (shape.kind == "boolean" or (shape.kind == "comparison" and shape.yes_no)):
        # "was X born after 1950", "did X come out in 1999", "is Everest over 8,000 m tall"
        answer = answer_against_constant(store, index, reading, method, run, timeout_s=timeout_s)
        if answer is not None:
            return answer
    composing = reading.composing() if len(mentions) >= 2 and shape.kind == "boolean" else None
    equated = composing is not None and (composing.compares or composing.asks_sharers or composing.conjoins)
    if equated:
        # "are A and B in the same language", "do A and B share an actor": the values of two
        # named things compared, not a fact joining them. Where one joins them (A's language
        # is B, a namesake of a film too; Paris's country is France), that fact is no answer:
        # the store's comparisons of the two go first (none where, as in "did X both write
        # and direct Y", they hold no relation alike), the check of joining facts after
        tied = composed(store, index, composing, run, method, timeout_s, COMPARISON_STAGES, graph.answer_form,
                        comparisons_only=True)
        if tied is not None:
            return tied
    if shape.kind in ("boolean", "comparison"):
        run.record("shape", mentions=[m.to_dict() for m in mentions])
        answer = (answer_boolean(store, index, reading, method, run, timeout_s=timeout_s)
                  if shape.kind == "boolean" else
                  answer_comparison(store, index, reading, method, run, timeout_s=timeout_s))
        if answer is not None and answer.refused and answer.refusal.reason == "no_answer" and compared:
            # no fact joins the named things ("are A and B in the same language"): a
            # comparison of them may be composed, else the method's; the form check keeps a yes/no
            run.record("shape", fallback="composed comparison: no fact joins the named things it compares")
            tied = None if equated else composed(  # a yes/no's was tried above
                store, index, reading.composing(), run, method, timeout_s, COMPARISON_STAGES, graph.answer_form,
                comparisons_only=True)
            return tied or constrained()
        if (answer is None or answer.refused) and shape.kind == "comparison" and is_superlative(shape.cue):
            # "which of the countries bordering Nepal is the largest", "which of X's
            # English-language films is the newest": the options are a chain's answers, not
            # the things named; the first or last of a chain, composed, else the chain ordered
            run.record("shape", fallback="superlative: the named things are not the options")
            return (composed(store, index, reading.composing(), run, method, timeout_s, ORDERING_STAGES,
                             graph.answer_form)
                    or _superlative(store, index, reading, method, run, constrained, timeout_s))
        if answer is not None:
            return answer
        run.record("shape", fallback="chain: the question names too few entities for its shape")
        return constrained()
    if shape.kind in ("chain", "count") and reading.dated:
        answer = answer_with_qualifiers(store, index, reading, method, run, timeout_s=timeout_s)
        # "how many people lived in X in 2001" is the number a dated statement holds
        if answer is not None and (shape.kind == "chain" or is_one_number(answer)):
            return answer
    if shape.kind == "count":
        run.record("shape", chain_question=reading.listing)
        counted = constrained(reading.listing)
        if counted.refused and counted.refusal.reason == NONE_MEETS:
            # "how many of X's films came out before 1950": none did, and the count is 0
            counted = Answer(question=reading.question, method=counted.method, query=counted.query,
                             meant=counted.meant)
        return count_answer(store, counted, run, timeout_s=timeout_s)
    if shape.kind == "superlative":
        return _superlative(store, index, reading, method, run, constrained, timeout_s, unsure=unsure)
    answer = constrained()
    if shape.kind == "chain" and not answer.refused and any(isinstance(g.constraint, ValueConstraint)
                                                            for g in graph.dropped):
        # "who did X play for in 2012": no answer holds the year, but a node the store
        # passes through may (a roster from 2010 on); a composed value constraint, else the
        # answer with the constraint reported as dropped
        run.record("shape", fallback="composed: a value the question writes was dropped")
        tied = composed(store, index, reading.composing(), run, method, timeout_s, VALUE_STAGES, graph.answer_form)
        if tied is not None:
            graph.grounded = []  # the composed query holds the constraint
            return tied
        named = _number_as_name(store, index, reading, graph, answer, run, chain, timeout_s)
        if named is not None:
            return named
    return answer


def _number_as_name(store, index, reading: ShapeReading, graph: QueryGraph, answer: Answer, run, chain,
                    timeout_s: float) -> Answer | None:
    """The chain asked of the whole question, where a number it writes that no answer holds
    as a year is a name the store holds ("which character did X play in 1776", the film
    *1776*): its answer where it narrows the chain's (the store then says the name is
    meant), else None."""
    written = " ".join(g.constraint.words for g in graph.dropped if isinstance(g.constraint, ValueConstraint))
    if not any(m.text.isdigit() and m.best.match == "exact" and m.text in written.split()
               for m in reading.composing().mentions):
        return None
    run.record("shape", fallback="a number the question writes, read as the name the store holds")
    named = walk_through_mediators(store, index, chain(reading.question), reading.question, run, timeout_s=timeout_s)
    if named.refused or not named.answers or not set(named.answers) < set(answer.answers):
        return None
    named.question = reading.question
    graph.grounded = []  # the number is a name in the query, not a constraint on it
    return named


# Common nouns that say what kind of thing is asked for, not which: "which films", "what
# people". A store may hold an entity so named (a tag "film"), which would cut the answers.
GENERIC_NOUNS = frozenset("""film films movie movies picture pictures flick flicks show shows people person persons
human humans thing things one ones work works item items entity entities title titles name names place places
kind kinds type types sort sorts answer answers""".split())


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


def answer_against_constant(store, index, reading: ShapeReading, method: str, run, *,
                            timeout_s: float = 5.0) -> Answer | None:
    """Yes or no for a value compared with a constant ("was X born after 1950"): the first
    entity's value along the relation of the constant's kind that fits the question's
    words; a refusal when it holds no such value; None when it names no entity."""
    subject = reading.mentions[0]
    asked = reading.asked_of_constant
    verdicts, facts, checks = [], [], []
    for c in reading.values:
        verdict, found, said = check_value(store, index, subject.iri, subject.label, c, asked, timeout_s=timeout_s)
        checks.append({"constraint": c.words, "verdict": verdict, "relation" if verdict is not None else "why": said})
        verdicts.append(verdict)
        facts += found
    run.record("boolean", subject=subject.to_dict(), asked=asked, against_constant=checks)
    meant = [m.to_dict() for m in reading.mentions]
    if any(v is None for v in verdicts):
        why = next(c["why"] for c in checks if c["verdict"] is None)
        return Answer(question=reading.question, method=method, shape="boolean", meant=meant,
                      refusal=Refusal("no_answer", f"the store cannot say: {why}"))
    return yes_no_answer(reading.question, method, all(verdicts), facts, shape="boolean", meant=meant)


# the composed stages that answer a comparison of two named things, and a first or last
COMPARISON_STAGES = frozenset({"comparison"})
ORDERING_STAGES = frozenset({"superlative", "constrained superlative", "superlative value"})
# and a constant the question writes, compared with a value on the chain's nodes
VALUE_STAGES = frozenset({"value constraint", "time span"})
# below this the model denies a composed pick rather than doubts it: no fallback for a shape
UNSURE_FLOOR = 0.25


def composed(store, index, reading: "QuestionReading", run, method: str, timeout_s: float, stages: frozenset[str],
             form: str, *, comparisons_only: bool = False) -> Answer | None:
    """The answer of the query graph the model picks among the store's composed candidates
    (:mod:`qa.compose`; only the comparisons of two named things with ``comparisons_only``)
    when its stage is one of ``stages`` and its answer has the question's ``form``, else None."""
    answer, taken = composed_pick(store, index, reading, run, method, timeout_s, stages, form,
                                  comparisons_only=comparisons_only)
    return answer if taken else None


def composed_pick(store, index, reading: "QuestionReading", run, method: str, timeout_s: float,
                  stages: frozenset[str], form: str, *, comparisons_only: bool = False) -> tuple[Answer | None, bool]:
    """(the composed pick's answer, whether it is taken): :func:`composed`, with the pick
    the model was unsure of kept for a caller whose own reading may find nothing better."""
    from ..compose import ComposeOptions, compose_answer

    # the shape says which stages answer it: the pick falls through to the best of those
    # shown (a superlative's orderings: the model says yes to "X's films" for "the oldest of
    # X's horror films"), but a comparison read from a cue word alone ("or", "than") is
    # only taken where the model picks it
    asked = None if stages == COMPARISON_STAGES and not comparisons_only else stages
    picked = compose_answer(store, index, reading.question, run, method, reading=reading,
                            options=ComposeOptions(timeout_s=timeout_s, comparisons_only=comparisons_only,
                                                   stages=asked))
    # taken only when the model judged the pick an answer (a refinement as the chain it
    # refines: "A vs B, which is newer" on the release year it judged an answer); the
    # shape's own reading stands where it is unsure; the first of the values themselves (a
    # year) answers only a question asking for a value
    answer = picked.answer if picked else None
    fits = (answer is not None and not answer.refused and picked.stage in stages
            and not (picked.stage == "superlative value" and form != "value")
            and form_fits(form, answer.answers, answer.values, False) is None)
    taken = fits and picked.p >= 0.5
    run.record("shape", composed=picked.stage if picked else None, taken=taken)
    # a pick of another stage or form, or one the model denied, is nothing to fall back on
    return (answer if fits and picked.p >= UNSURE_FLOOR else None), taken


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


def _superlative(store, index, reading: ShapeReading, method: str, run, chain, timeout_s: float, *,
                 unsure: Answer | None = None):
    """The chain asked without the superlative, its answers ordered by it; where nothing
    the store holds orders them, the composed ordering the model was ``unsure`` of (the
    first of X's films in Dutch at p 0.495 answers "the oldest" better than all of them)."""
    run.record("shape", chain_question=reading.plain)
    answers = chain(reading.plain)
    answers.question = reading.question
    ordered = answer_superlative(store, index, reading, answers, method, run, timeout_s=timeout_s)
    if ordered is answers and unsure is not None and len(answers.answers) != 1:
        run.record("shape", fallback="the composed ordering: nothing orders the chain's answers")
        return unsure
    return ordered


__all__ = ["answer_in_shape", "read_shape", "ShapeReading", "without_modifiers", "answer_against_constant", "entity_constraints", "detect_shape", "QuestionShape", "question_mentions", "Mention",
           "answer_boolean", "answer_comparison", "answer_with_qualifiers", "answer_superlative", "count_answer", "counted_query"]
__all__ += ["question_shape", "entity_attributes", "Attribute"]

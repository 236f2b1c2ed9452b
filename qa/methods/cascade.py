"""A cascade: a SPARQL method first, then the query graph composed from the store, then
pseudo-graph when neither could build a query.

An executed query answers exactly or not at all, so the SPARQL method goes first. When
it refused because it found no query that returns rows (the question's shape is beyond a
few triple patterns, such as comparing two entities), pseudo-graph reads the store's facts
instead. Before that, the store enumerates the query graphs around the entities the
question mentions and the model picks one (:mod:`qa.compose`): a draft that named an
entity the question never mentions, or that linked a name as typed too weakly, is no
longer the only road. When the question names something the store lacks, the SPARQL method's refusal
stands: nothing else would find it either, and a namesake's facts would only mislead.
"""
from __future__ import annotations

import re

from ..compose import ANSWER_LIMIT, compose_answer
from ..steps._result import Answer
from ..steps._values import answers_a_value
from ._base import FINAL_REFUSALS, MethodRun, QAContext, QAMethod


class CascadeMethod(QAMethod):
    name = "cascade"
    description = "pgmr first; pseudo-graph when pgmr finds no query that returns rows"
    index_kinds = ("entities", "uris", "relations", "triples")
    shapes = True  # around the whole cascade: its methods answer the chain inside a shape
    checks_names = True

    def __init__(self, context: QAContext, *, first: str = "pgmr", then: str = "pseudo-graph",
                 compose: bool = True, compose_first: bool = False):
        super().__init__(context)
        self.compose = compose
        # the composed query graph before the first method's draft (a measurement of
        # composing alone; the draft's method still answers what nothing composed answers)
        self.compose_first = compose_first
        from . import make_method

        self.first = make_method(first, context)
        self.then = make_method(then, context)

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        if self.compose_first:
            picked = compose_answer(self.store, self.context.get_index(), question, run, self.name,
                                    reading=self.context.read(question))
            if picked is not None and not picked.answer.refused:
                run.record("cascade", composed=True)
                return picked.answer
        first = self.first.answer(question, in_shape=False)
        run.record("cascade", first=self.first.name, first_refusal=first.refusal.reason if first.refusal else None)
        run.tokens.merge(first.tokens)
        run.trace[self.first.name] = first.trace
        if not first.refused and self.compose and not self.compose_first:
            refined = self.refined(question, first, run)
            if refined is not None:
                return refined
        if first.refused and self.compose and not self.compose_first:
            # a name the draft wrote that the store lacks is not found again in its parts
            absent = tuple(re.findall(r"\[ENT: ([^\]]+)\] found nothing", first.refusal.message or ""))
            reading = self.context.read(question)
            if first.refusal.reason in FINAL_REFUSALS:
                # a name the store lacks is looked for as typed, where it is written; the
                # question's other words ("movies") would answer about something else
                reading = reading.about(absent, self.context.get_index())
            picked = compose_answer(self.store, self.context.get_index(), question, run, self.name,
                                    reading=reading, absent=absent, votes=tuple(first.draft_relations))
            if picked is not None and not picked.answer.refused and reading.set_aside:
                picked = self.whole_or_about(question, run, picked, absent)
            if picked is not None and not picked.answer.refused:
                run.record("cascade", composed=True)
                return picked.answer
        if not first.refused or first.refusal.reason in FINAL_REFUSALS:
            if first.refused and allow_parametric:
                return self.refuse(question, run, first.refusal.reason, first.refusal.message, allow_parametric)
            first.method = self.name
            return first
        second = self.then.answer(question, allow_parametric=allow_parametric, in_shape=False)
        run.tokens.merge(second.tokens)
        run.trace[self.then.name] = second.trace
        second.method = self.name
        return second

    def whole_or_about(self, question: str, run: MethodRun, about, absent: tuple[str, ...]):
        """Of the pick composed about the name the draft was refused for alone (``about``)
        and the one composed from the whole question, the one the model judges likelier to
        answer it. The draft may have refused for a name it wrote short ("[ENT: Arsenal]" of
        *Arsenal F.C.*) while the question's topic was another it left a variable ("who did
        nasri play for before arsenal"): the name set aside may be the one asked about."""
        run.trace["compose_about"] = run.trace.pop("compose", {})
        whole = compose_answer(self.store, self.context.get_index(), question, run, self.name,
                               reading=self.context.read(question), absent=absent)
        if whole is None or whole.answer.refused or whole.p <= about.p:
            run.trace["compose_whole"] = run.trace.pop("compose", {})
            run.trace["compose"] = run.trace.pop("compose_about")
            return about
        return whole

    def refined(self, question: str, first: Answer, run: MethodRun) -> Answer | None:
        """The composed answer when it narrows the first method's: a constraint or an
        ordering the draft left out ("who played meg in season 1 of family guy" answered
        with the whole cast), or when it has the form the question asks for and the
        draft's has not. Composed only for a question that could carry one (a second
        mention, a constant, an ordering word) or whose answer misfits, so a plain chain
        costs nothing more."""
        index = self.context.get_index()
        reading = self.context.read(question)
        # a question asking when, answered with things none of which is a time ("when did
        # X die": a cause of death), is answered by the composed pick of that form
        misfit = reading.form == "value" and not answers_a_value(first.answers, first.values)
        if not (reading.may_constrain or misfit) or not first.answer_iris:
            return None
        # only a pick that could narrow the draft's answers is taken (below): where no
        # candidate could, the model is not asked (a word the store holds as a tag, "films",
        # "together", is a second mention of most chain questions)
        answered = len(first.answers)
        picked = compose_answer(self.store, index, question, run, self.name, reading=reading,
                                worth=None if misfit else (lambda c: could_narrow(c, answered)))
        composed, stage = (picked.answer, picked.stage) if picked else (None, None)
        if misfit and composed is not None and not composed.refused and answers_a_value(composed.answers,
                                                                                      composed.values):
            run.record("cascade", refined=True, form="value")
            return composed
        # a negated constraint, two roles at once or a comparison the model picked stands
        # on its own: the draft that left the "not" out answers the very things the
        # question excludes, one that asks one role answers the other's, and a draft has
        # no query that compares two things
        usable = composed is not None and not composed.refused and composed.answer_iris and stage not in (None, "chain")
        renamed = usable and _namesakes_only(reading, first, composed)
        narrowed = usable and ((_answer_keys(composed) < _answer_keys(first) and not renamed)
                               or stage in NARROWING_STAGES)
        run.record("cascade", refined=bool(narrowed), **({"namesakes_only": True} if renamed else {}))
        return composed if narrowed else None


# the composed stages the cascade takes on their own, narrower or not
NARROWING_STAGES = frozenset({"negation", "conjunction", "comparison"})


def could_narrow(candidate, answered: int) -> bool:
    """Whether the cascade could take ``candidate`` as narrowing a draft that gave
    ``answered`` answers (:meth:`CascadeMethod.refined`): a negation, two roles at once or a
    comparison, or another refinement of fewer answers (as many as a composed answer lists)."""
    return candidate.stage in NARROWING_STAGES or (
        candidate.stage != "chain" and min(candidate.size, ANSWER_LIMIT) < answered)


def _answer_keys(answer: Answer) -> set[str]:
    """An answer's members: IRIs, and values (a year) by their text."""
    return {iri or f"value: {text}" for iri, text in zip(answer.answer_iris, answer.answers)}


def _namesakes_only(reading, first: Answer, composed: Answer) -> bool:
    """Whether every entity the composed query names that the draft's does not is a
    namesake of one the draft's names: the tag *horror* where the draft tied the answer to
    the genre *Horror*, both written "horror". Fewer answers then come from reading the
    name otherwise, not from a constraint the draft left out (the draft's own pick stands)."""
    drafted, picked = _iris(first.query), _iris(composed.query)
    added = (picked - drafted) & {e.iri for m in reading.mentions for e in m.entities}  # its entities, not relations
    groups = [g for g in reading.written_mentions if g & added]
    return bool(added) and all(any(iri in g and g & drafted for g in groups) for iri in added)


def _iris(query: str | None) -> set[str]:
    """The IRIs a built query's patterns name (not those its answer is kept from, one
    ``FILTER(?answer != …)`` a line)."""
    lines = (line for line in (query or "").splitlines() if not line.strip().startswith("FILTER("))
    return set(re.findall(r"<([^<>\s]+)>", "\n".join(lines)))


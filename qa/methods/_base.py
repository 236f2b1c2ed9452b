"""What every QA method shares: the context it runs in, the per-question run that counts
tokens and records the trace, and the base class that times and packages the answer."""
from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from kgstore.errors import (InternalError, KgstoreError, LLMUnavailableError, OptionValueError, QAError, VectorIndexError,
                            showing_tracebacks)

from ..llm import LLM, Completion
from ..open import open_answer, read_open
from ..prompts import render_prompt
from ..shapes import answer_in_shape
from ..steps import _sparql_build as sb
from ..steps._answering import refuse
from ..steps._result import Answer, Refusal, TokenUsage
from ..steps._retrieval import question_names_not_held


# refusals that mean "the store has no such thing": nothing composed would find it either,
# and a namesake's facts would only mislead
FINAL_REFUSALS = frozenset({"not_in_store"})

_INDEX_NOUNS = {"triples": "triple", "entities": "entity", "relations": "relation", "statements": "statement memory",
                "uris": "URI memory"}


@dataclass
class QAContext:
    """The store and the services a method may use. The semantic index is opened on
    first use, so methods that never search (IO) never load the encoder."""

    store: Any
    llm: LLM
    index: Any = None
    # the readings of the question being asked (qa.compose.read_question), shared by the
    # methods a cascade runs, its shapes and composing; forgotten when the question is
    # answered, since the store may change before the next one
    _readings: dict = field(default_factory=dict, repr=False)
    _asking: int = field(default=0, repr=False)

    def read(self, question: str):
        """``question`` read once with the store's index: its linked names, its constants and
        its cue words (:class:`qa.compose.QuestionReading`)."""
        reading = self._readings.get(question)
        if reading is None:
            from ..compose import read_question  # composing builds on the methods' steps

            reading = self._readings[question] = read_question(self.get_index(), question)
        return reading

    @contextmanager
    def asking(self):
        """One question, however many methods answer it: its readings last until it ends."""
        self._asking += 1
        try:
            yield
        finally:
            self._asking -= 1
            if not self._asking:
                self._readings.clear()

    def get_index(self, kinds: tuple[str, ...] = ()):
        """The store's semantic index; raises when one of ``kinds`` cannot be searched (not
        built; a store too large for a triple index still searches triples, on the fly)."""
        if self.index is None:
            from indexer import Index

            self.index = Index.open(self.store)
        missing = [k for k in kinds if not self.index.can_search(k)]
        if missing:
            raise VectorIndexError(f"the store {self.store.path} has no {' or '.join(_INDEX_NOUNS.get(k, k) for k in missing)} index yet; "
                                   f"build it with `kgstore index {self.store.path}`")
        return self.index


class MethodRun:
    """One question's worth of work: LLM calls (counted, traced) and named trace steps."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.tokens = TokenUsage()
        self.trace: dict[str, Any] = {}

    def record(self, step: str, **data: Any) -> None:
        self.trace.setdefault(step, {}).update(data)

    def ask(self, step: str, prompt: str, values: dict[str, Any], **options: Any) -> Completion:
        """Fill prompt file ``prompt`` with ``values``, complete it, and trace the exchange
        (the last user turn and the output; the fixed few-shot turns are in the prompt file)."""
        messages = render_prompt(prompt, **values)
        completion = self.llm.complete(messages, **options)
        self.tokens.add(completion.prompt_tokens, completion.completion_tokens)
        calls = self.trace.setdefault(step, {}).setdefault("llm", [])
        calls.append({"prompt_file": prompt, "input": messages[-1]["content"], "output": completion.text,
                      "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
                      "seconds": round(completion.seconds, 3), "finish_reason": completion.finish_reason})
        return completion


# a year a name writes ("2004 NBA Finals", "The London 2012 Summer Olympics")
_NAMED_YEAR = re.compile(r"(?<![\w.])(1\d{3}|20\d{2})(?![\w.])")


def named_years(answer: Answer) -> list[int] | None:
    """The year each of ``answer``'s entities is named by ("2004 NBA Finals"), or None
    unless it lists two or more entities and every one's name writes exactly one year."""
    if answer.refused or answer.text is not None or len(answer.answers) < 2 or not all(answer.answer_iris):
        return None
    years = [_NAMED_YEAR.findall(label) for label in answer.answers]
    return [int(found[0]) for found in years] if all(len(found) == 1 for found in years) else None


def in_named_year_order(answer: Answer, ascending: bool) -> Answer:
    """``answer`` with its entities in the order of the year each one's name writes, first
    or last first as ``ascending`` says: for a question that asks for the first or the last
    of several ("when did the detroit pistons last win the championship"), where events the
    store holds no date for are named by their year (:func:`named_years`). The list is kept
    whole; only which comes first changes. Otherwise ``answer`` as it is."""
    years = named_years(answer)
    if years is None:
        return answer
    order = sorted(range(len(years)), key=lambda i: years[i], reverse=not ascending)
    if order == list(range(len(years))):
        return answer

    def reordered(aligned: list) -> list:  # the lists aligned with the answers, where they are
        return [aligned[i] for i in order] if len(aligned) == len(order) else aligned

    return replace(answer, answers=reordered(answer.answers), answer_iris=reordered(answer.answer_iris),
                   values=reordered(answer.values), answer_stores=reordered(answer.answer_stores))


class QAMethod(ABC):
    """A question-answering method. Subclasses set ``name``/``description`` and implement
    ``_answer``; ``answer`` adds timing, token counts and the trace, and turns a method's
    own failure on one question into a refusal with reason "error" (an unreachable model
    still raises, because no later question would fare better)."""

    name: ClassVar[str]
    description: ClassVar[str]
    index_kinds: ClassVar[tuple[str, ...]] = ()  # the index kinds the method searches
    # whether the method answers counts, yes/no, comparisons and superlatives (qa.shapes)
    # around its chains; the methods that build queries do
    shapes: ClassVar[bool] = False
    # whether the method refuses, before anything else, a question that writes a name the
    # store does not hold (qa.steps._retrieval.question_names_not_held); the methods that
    # link names to build queries do
    checks_names: ClassVar[bool] = False
    # whether a refusal of the method's own query is followed by the query graph composed
    # from the store (qa.compose): the methods that build queries share that step, so their
    # draft is never the only road; a cascade composes around the method it runs
    composes: ClassVar[bool] = False

    def __init__(self, context: QAContext):
        self.context = context

    @property
    def store(self):
        return self.context.store

    def answer(self, question: str, *, allow_parametric: bool = False, in_shape: bool | None = None) -> Answer:
        """The answer to ``question``; ``in_shape=False`` answers it as a chain even in a
        method that reads shapes (a method running another inside its own shape)."""
        started = time.perf_counter()
        if self.index_kinds:
            self.context.get_index(self.index_kinds)  # fail before the model spends a minute on the question
        run = MethodRun(self.context.llm)
        try:
            # one catalog connection for the question's many lookups, one reading of it
            with self.context.asking(), self.store.reading():
                result = self._answer_checked(question, run, allow_parametric, in_shape)
                result = self.in_asked_order(question, result, run)
        except (LLMUnavailableError, OptionValueError):
            raise  # every question would fail alike: the caller says it
        except QAError as exc:
            run.record("error", type=type(exc).__name__, message=str(exc))
            result = Answer(question=question, method=self.name,
                            refusal=Refusal("error", f"{type(exc).__name__}: {exc}"))
        except KgstoreError:
            raise  # the store or the index failed: every question would, so the caller says it
        except Exception as exc:
            # a bug met on this question: it is refused, with the traceback in the trace, and
            # an eval goes on to the next (KGSTORE_DEBUG=1 raises it)
            if showing_tracebacks():
                raise
            fault = InternalError(exc)
            run.record("error", type="InternalError", message=str(fault), where=fault.where)
            result = Answer(question=question, method=self.name, refusal=Refusal("error", str(fault)))
        result.seconds = time.perf_counter() - started
        result.tokens = run.tokens
        result.trace = run.trace
        return result

    def in_asked_order(self, question: str, answer: Answer, run: MethodRun) -> Answer:
        """``answer`` with the first or the last of its entities first, as the question's
        ordering word asks, where every one is named by its year and the store holds no date
        to order them by (the first answer is the one a reader takes)."""
        if not self.index_kinds or named_years(answer) is None:
            return answer
        ascending = self.context.read(question).order_ascending
        if ascending is None:
            return answer
        ordered = in_named_year_order(answer, ascending)
        if ordered is not answer:
            run.record("order", by="the year each answer's name writes", ascending=ascending)
        return ordered

    def _answer_checked(self, question: str, run: MethodRun, allow_parametric: bool, in_shape: bool | None) -> Answer:
        """The answer, after the name check of methods that link names. An open question
        ("Tell me about X") gets a paragraph from verified store facts (:mod:`qa.open`),
        whatever the method; a precise one goes on to the method."""
        reading = read_open(question) if in_shape is not False else None
        if reading is not None:
            opened = open_answer(self.context, question, run, reading=reading)
            if not (opened.refusal and opened.refusal.reason == "not_in_store" and reading.form != "request"):
                return opened
            # no entity bears the subject's name as written ("what is william taft famous
            # for"; "who was John Cullum in 1776", a role in the film *1776*): the precise path
            # links names as typed and reads what is asked of the one it finds (a request,
            # "tell me about X", asks for no relation it could read)
            run.record("open", handed_on=opened.refusal.message)
        # a method run inside another's shape (in_shape=False: the cascade's) was checked there
        checked = self.checks_names and in_shape is not False
        absent = question_names_not_held(self.context.get_index(), question) if checked else []
        if absent:
            run.record("names", not_held=absent)
            return self.refuse(question, run, "not_in_store",
                               f"not in the store: no entity is named {absent[0]!r}", allow_parametric)
        # run inside another method (in_shape=False), the caller composes around it
        composing = self.composes and in_shape is not False
        if self.shapes if in_shape is None else in_shape:
            return answer_in_shape(self.store, self.context.get_index(), question, run, self.name,
                                   lambda text: self._answer_or_composed(text, run, allow_parametric, composing),
                                   read=self.context.read)
        return self._answer_or_composed(question, run, allow_parametric, composing)

    def _answer_or_composed(self, question: str, run: MethodRun, allow_parametric: bool, composing: bool) -> Answer:
        """The method's answer; where it refused for want of a query that answers (not for a
        name the store lacks), the query graph the model picks among the store's composed
        candidates, when one answers (trace ``composed``)."""
        answer = self._answer(question, run, allow_parametric=allow_parametric)
        if not (composing and answer.refused and answer.refusal.reason not in FINAL_REFUSALS):
            return answer
        from ..compose import compose_answer  # composing builds on the methods' steps

        picked = compose_answer(self.store, self.context.get_index(), question, run, self.name,
                                reading=self.context.read(question))
        if picked is None or picked.answer.refused:
            return answer
        run.record("composed", after=answer.refusal.reason, stage=picked.stage, p=picked.p)
        return picked.answer

    def refuse(self, question: str, run: MethodRun, reason: str, message: str, allow_parametric: bool) -> Answer:
        """No answer from the store: the refusal, or with ``allow_parametric`` the model's own."""
        return refuse(self.store, question, self.name, run, reason, message, allow_parametric=allow_parametric)

    def query_answer(self, question: str, run: MethodRun, found, why: str, *, allow_parametric: bool,
                     limit: int, timeout_s: float) -> Answer:
        """The answer of the executed query ``found`` (the built query, its rows), or the
        ``no_rows`` refusal saying ``why`` when no query returned rows: how every method
        that builds SPARQL ends."""
        if found is None:
            return self.refuse(question, run, "no_rows", why, allow_parametric)
        built, rows = found
        return sb.query_answer(self.store, question, self.name, built, rows, limit=limit, timeout_s=timeout_s)

    @abstractmethod
    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        ...

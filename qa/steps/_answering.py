"""The answer step every method ends with: marked answers read from the model, answers
grounded to store terms with the evidence they rest on, and refusal with the
``--allow-parametric`` fallback.

A method that asks the model to answer calls :func:`ask_for_answers`; a method whose
answers are rows of an executed query (the SPARQL methods) calls :func:`rows_answer`.
Either way a method that cannot answer returns :func:`refuse`, which alone decides
whether the model's own knowledge may stand in.
"""
from __future__ import annotations

from typing import Sequence

from ..prompts import grammar_text
from ._graph_text import answer_terms_grammar
from ._grounding import StoreTerm, evidence_mentioning, marked_answers, normalise_label, terms_by_label
from ._result import Answer, Evidence, Refusal

_UNKNOWN = {"unknown", "none", "n a", "no answer", "not known"}


def answers_in(text: str) -> list[str]:
    """The answers the model marked in ``{}``; a bare one-line reply counts as one answer
    (small models sometimes forget the braces). ``{unknown}`` and the like mean none."""
    marks = marked_answers(text)
    if not marks:
        line = text.strip().rstrip(".").strip()
        if line and "\n" not in line and len(line) <= 80:
            marks = [line]
    return [m for m in marks if normalise_label(m) not in _UNKNOWN]


def ask_for_answers(run, step: str, prompt: str, values: dict, *, max_tokens: int,
                    terms: Sequence[str] | None = None, shape: str = "answer_marks") -> list[str]:
    """The model's answer: one line with the answers marked in ``{}`` (a grammar makes sure
    there is a mark), read by :func:`answers_in`. With ``terms``, each mark is one of them
    or ``unknown``; ``shape`` is the grammar file of the reply's form."""
    grammar = grammar_text(shape) if terms is None else answer_terms_grammar(terms, shape=shape)
    completion = run.ask(step, prompt, values, max_tokens=max_tokens, temperature=0.0, grammar=grammar)
    return answers_in(completion.text)


def parametric_answers(question: str, run, *, max_tokens: int = 80) -> list[str]:
    return ask_for_answers(run, "parametric", "parametric_answer", {"question": question}, max_tokens=max_tokens)


def parametric_result(store, question: str, method: str, answers: list[str]) -> Answer:
    """An answer from the model's own knowledge: flagged, with IRIs only where a store
    entity carries exactly that label."""
    terms = terms_by_label(store, answers)
    return Answer(question=question, method=method, answers=list(answers),
                  answer_iris=[t.iri if t else None for t in terms], parametric=True)


def refuse(store, question: str, method: str, run, reason: str, message: str, *,
           allow_parametric: bool) -> Answer:
    """No answer from the store. With ``allow_parametric`` the model answers from its own
    knowledge instead (flagged); otherwise the refusal, with its reason code and message."""
    if allow_parametric:
        answers = parametric_answers(question, run)
        if answers:
            run.record("parametric", reason=reason, note=message)
            return parametric_result(store, question, method, answers)
    return Answer(question=question, method=method, refusal=Refusal(reason, message))


def supporting_evidence(ground: list[Evidence], fixed, grounded: list[StoreTerm]) -> list[Evidence]:
    """The ground triples the answer rests on: those the fixed graph kept (same subject and
    object names) and those that mention an answer."""
    kept_pairs = {(normalise_label(s), normalise_label(o)) for s, _, o in fixed}
    mentioning = {id(e) for e in evidence_mentioning(ground, grounded)}
    out, seen = [], set()
    for e in ground:
        pair = (normalise_label(e.s_label or e.s), normalise_label(e.o_label or e.o))
        key = (e.s, e.p, e.o)
        if (pair in kept_pairs or id(e) in mentioning) and key not in seen:
            seen.add(key)
            out.append(e)
    return out


def rows_answer(question: str, method: str, terms: Sequence[StoreTerm], evidence: Sequence[Evidence]) -> Answer:
    """An answer whose terms are the rows of an executed query (store terms by
    construction), with the instantiated patterns as evidence."""
    return Answer(question=question, method=method, answers=[t.label for t in terms],
                  answer_iris=[t.iri for t in terms], evidence=list(evidence),
                  values=[t.value.to_dict() if t.value else None for t in terms])


__all__ = ["answers_in", "ask_for_answers", "parametric_answers", "parametric_result", "refuse",
           "supporting_evidence", "rows_answer"]

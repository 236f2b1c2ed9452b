"""The two baselines of the research, run through the same harness as every method.

* **IO**: the LLM answers alone, from its own knowledge (answers are always parametric).
* **QSM**: the question itself is matched against the triple index; the LLM answers from
  the top triples. Answers found among those triples carry their IRIs; answers that are
  not are still returned (that is what QSM does) but flagged parametric. On a store too
  large for a triple index, the question's entities are linked and their own triples
  searched instead (``indexer.Index.search``), so QSM still runs there.
"""
from __future__ import annotations

from ..steps._answering import ask_for_answers, parametric_answers, parametric_result
from ..steps._graph_text import labelled, triple_lines
from ..steps._grounding import ground_answers
from ..steps._result import Answer, Refusal
from ..steps._retrieval import search_triples
from ._base import MethodRun, QAContext, QAMethod


class IOMethod(QAMethod):
    name = "io"
    description = "baseline: the LLM answers alone, from its own knowledge"

    def __init__(self, context: QAContext, *, answer_tokens: int = 80):
        super().__init__(context)
        self.answer_tokens = answer_tokens

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        answers = parametric_answers(question, run, max_tokens=self.answer_tokens)
        if not answers:
            return Answer(question=question, method=self.name,
                          refusal=Refusal("no_answer", "the model did not give an answer"))
        return parametric_result(self.store, question, self.name, answers)


class QSMMethod(QAMethod):
    name = "qsm"
    description = "baseline: the question is matched against the triple index; the LLM answers from the top triples"
    index_kinds = ("triples",)

    def __init__(self, context: QAContext, *, top_k: int = 20, answer_tokens: int = 80):
        super().__init__(context)
        self.top_k = top_k
        self.answer_tokens = answer_tokens

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        hits = search_triples(self.context.get_index(), question, self.top_k)
        run.record("semantic_query", top_k=self.top_k, query=question,
                   hits=[[e.text(), round(e.score or 0.0, 4)] for e in hits])
        marks = ask_for_answers(run, "answer", "facts_answer",
                                {"facts": triple_lines(labelled(hits), counts=True), "question": question},
                                max_tokens=self.answer_tokens)
        if not marks:
            return Answer(question=question, method=self.name,
                          refusal=Refusal("no_answer", "the model found no answer in the top triples"))
        answers, iris, grounded = [], [], []
        for mark in marks:  # one by one, to keep the model's order (best first)
            terms, _ = ground_answers([mark], hits)
            for term in terms or [None]:
                label = term.label if term else mark
                if label not in answers:
                    answers.append(label)
                    iris.append(term.iri if term else None)
            grounded += terms
        run.record("grounding", marked=marks, grounded=[t.label for t in grounded])
        mentioned = {t.iri for t in grounded if t.iri}
        evidence = [e for e in hits if e.s in mentioned or e.o in mentioned] or hits
        return Answer(question=question, method=self.name, answers=answers, answer_iris=iris,
                      evidence=evidence, parametric=not grounded)

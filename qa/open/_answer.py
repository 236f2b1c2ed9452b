"""The open answer, step by step: the ground graph (:mod:`._ground`), the writing
(:mod:`._writer`), the check (:mod:`._checker`), and the record every front end shows: the
paragraph, its sentences with the facts each cites, and the evidence."""
from __future__ import annotations

from ..steps._result import Answer, Refusal
from ._checker import settle
from ._facts import GroundGraph, Sentence
from ._ground import DEFAULT_THRESHOLD, ground_graph
from ._reading import OpenReading, read_open
from ._writer import write

METHOD = "open"


def open_answer(context, question: str, run, *, reading: OpenReading | None = None, max_facts: int = 8,
                threshold: float = DEFAULT_THRESHOLD, verify: bool = True, cover: bool = True,
                subject: tuple[str, str] | None = None) -> Answer:
    """A paragraph about the entity ``question`` asks about, from verified store facts only,
    or a refusal when the store holds nothing about it."""
    reading = reading or read_open(question)
    if reading is None:
        raise ValueError(f"not an open question: {question!r}")
    run.record("reading", **reading.to_dict())
    graph = ground_graph(context.store, context.get_index(("triples",)), question, reading, run,
                         max_facts=max_facts, threshold=threshold, verify_sketch=verify, subject=subject)
    if graph is None:
        return open_refusal(question, "not_in_store", f"not in the store: no entity is named {reading.subject!r}")
    return written_answer(question, graph, run, cover=cover)


def written_answer(question: str, graph: GroundGraph, run, *, cover: bool = True) -> Answer:
    """The paragraph the model writes from ``graph``'s facts, checked sentence by sentence;
    a refusal when the graph has no facts or no sentence passed."""
    if not graph.facts:
        return open_refusal(question, "empty_ground_graph",
                            f"not in the store: the store holds no facts about {graph.subject_label!r}")
    drafts = write(run, question, graph.facts)
    sentences = settle(drafts, graph.facts, question, cover=cover, topic=graph.subject_label)
    run.record("check", sentences=[s.to_dict() for s in sentences])
    if not sentences:
        return open_refusal(question, "no_answer", "no sentence written from the store facts passed the check")
    return answer_record(question, graph, sentences)


def paragraph(sentences: list[Sentence]) -> str:
    """The sentences as one paragraph, each followed by its citations: ``... Kathmandu [2].``"""
    out = []
    for s in sentences:
        body = s.text[:-1] if s.text.endswith(".") else s.text
        out.append(body + " " + "".join(f"[{n}]" for n in s.facts) + ".")
    return " ".join(out)


def answer_record(question: str, graph: GroundGraph, sentences: list[Sentence]) -> Answer:
    cited = {n for s in sentences for n in s.facts}
    facts = [f for f in graph.facts if f.n in cited]
    text = paragraph(sentences)
    return Answer(question=question, method=METHOD, answers=[text], answer_iris=[None],
                  evidence=[e for f in facts for e in f.evidence], text=text,
                  sentences=[s.to_dict() for s in sentences], facts=[f.to_dict() for f in facts])


def open_refusal(question: str, reason: str, message: str) -> Answer:
    """An open answer's refusal: ``not_in_store``, ``empty_ground_graph`` or ``no_answer``."""
    return Answer(question=question, method=METHOD, refusal=Refusal(reason, message))

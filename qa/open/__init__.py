"""Open answers: a paragraph written from verified store facts, for questions that ask
about an entity as a whole ("Tell me about X"), one module a job, in the order they run:

* ``_reading``: telling an open question from a precise one (:func:`read_open`);
* ``_ground``: the ground graph: the subject, the sketch, its facts verified against the
  triple index, the subject's most telling facts;
* ``_writer``: the model writes sentences that cite the facts they rest on;
* ``_checker``: every name, number and date of a sentence must come from its cited facts or
  the question, else a plain verbalization stands instead;
* ``_verbalize``: facts as template sentences;
* ``_facts``: the records (facts, ground graph, sentences);
* ``_answer``: the steps in order, and the :class:`~qa.steps._result.Answer` they make.

``QAMethod.answer`` routes an open question here (``qa/methods/_base.py``); a precise
question keeps its method's path.
"""
from ._answer import METHOD, answer_record, open_answer, open_refusal, paragraph, written_answer
from ._checker import Check, check_sentence, claims, settle
from ._facts import Fact, GroundGraph, Sentence
from ._ground import (DEFAULT_THRESHOLD, SubjectEvidence, ground_graph, link_subject, number_facts, sketch,
                      subject_evidence)
from ._reading import OpenReading, is_open, read_open
from ._verbalize import fact_sentence, facts_sentence, verbalize
from ._writer import Draft, parse_drafts, write

__all__ = [
    "OpenReading", "is_open", "read_open",
    "Fact", "GroundGraph", "Sentence", "ground_graph", "link_subject", "sketch", "subject_evidence",
    "SubjectEvidence", "number_facts", "DEFAULT_THRESHOLD",
    "Draft", "parse_drafts", "write", "Check", "check_sentence", "claims", "settle",
    "fact_sentence", "facts_sentence", "verbalize", "open_answer", "paragraph",
    "answer_record", "open_refusal", "written_answer", "METHOD",
]

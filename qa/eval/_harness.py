"""Run a QA method over benchmark questions and score every answer the same way.

Each scored question is appended to a JSONL file as soon as it is done, so a long run
that stops (Ctrl-C, a reboot) resumes where it left off with ``resume=True``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..steps._grounding import iris_missing_from_store, normalise_label
from ..steps._result import Answer
from ._datasets import QAItem
from ._failures import failure_kind
from ._metrics import f1, hits_at_1, summarise
from ._results_log import ResultsLog
from ._typed import predicted_values, typed_f1, typed_hits_at_1, value_from_dict


_IRI = re.compile(r"<([^<>\s]+)>")


@dataclass
class EvalRun:
    method: str
    records: list[dict]
    summary: dict
    params: dict = field(default_factory=dict)


# SPARQL's own vocabulary: XML Schema datatypes, and the casts named after them
# (``xsd:double(?v)`` in a filter), are no identifiers of the store.
_XSD = "http://www.w3.org/2001/XMLSchema#"


def query_iris(query: str | None) -> list[str]:
    """The IRIs a final query names (``<...>`` terms), but XML Schema's: they count as
    identifiers too."""
    return [iri for iri in _IRI.findall(query or "") if not iri.startswith(_XSD)]


def edge_hits(path: Sequence[str], query: str | None) -> float | None:
    """The share of a gold path's relations that the executed query names (matched on
    the IRIs' local names; a benchmark's ``_inverse`` relation is the relation read
    backwards). None when the benchmark gives no path or the method executed no query."""
    if not path or not query:
        return None
    named = {normalise_label(_local(iri)) for iri in query_iris(query)}
    wanted = [normalise_label(r.removesuffix("_inverse")) for r in path]
    return sum(1 for r in wanted if r in named) / len(wanted)


def _local(iri: str) -> str:
    return re.split(r"[/#]", iri.rstrip("/#"))[-1]


def score_answer(item: QAItem, answer: Answer, *, missing_iris: Sequence[str]) -> dict:
    """The per-question record of the report (no trace: that lives in the JSONL only).
    An item with typed gold values (a questions file) is scored by kind (see _typed.py);
    a benchmark's item by its labels."""
    record = {
        "id": item.id, "question": item.question, "gold": list(item.gold), "qtype": item.qtype,
        "answers": list(answer.answers), "answer_iris": list(answer.answer_iris),
        "refused": answer.refused, "refusal_reason": answer.refusal.reason if answer.refusal else None,
        "parametric": answer.parametric,
        "hits@1": hits_at_1(answer.answers, item.gold), "f1": f1(answer.answers, item.gold),
        "hallucinated_iris": list(missing_iris),
        "query": answer.query,
        "edge_hits": edge_hits(item.path, answer.query),
        "evidence_size": len(answer.evidence),
        "seconds": round(answer.seconds, 3), "tokens": answer.tokens.to_dict(),
        "constraints": list(answer.constraints),
    }
    if item.gold_values is not None:
        datatypes = {e.o: e.datatype for e in answer.evidence if e.literal and e.datatype}
        predicted = predicted_values(answer.answers, answer.answer_iris, datatypes, answer.values)
        record["predicted_values"] = [v.to_dict() for v in predicted]
        record = rescore(item, record)
    return {**record, "failure": failure_kind(record)}


def rescore(item: QAItem, record: dict) -> dict:
    """``record`` (a typed item's, as written before) scored against ``item``'s gold values
    now: a resumed run whose gold changed (``--gold-from-sparql``) scores the saved answers
    against the new gold without asking again."""
    predicted = [value_from_dict(v) for v in record.get("predicted_values") or []]
    gold = list(item.gold_values or ())
    scored = {**record, "gold": list(item.gold), "gold_values": [v.to_dict() for v in gold], "shape": item.shape,
              "hits@1": typed_hits_at_1(predicted, gold), "f1": typed_f1(predicted, gold)}
    return {**scored, "failure": failure_kind(scored)}


def unscorable_record(item: QAItem) -> dict:
    """The record of a question that cannot be scored (no gold, or its gold query failed):
    not asked, left out of every score, listed with the reason."""
    return {"id": item.id, "question": item.question, "gold": list(item.gold), "qtype": item.qtype,
            "shape": item.shape, "sparql": item.sparql, "unscorable": item.unscorable}


def run_eval(method, items: Sequence[QAItem], *, store, allow_parametric: bool = False,
             results_path: Path | None = None, resume: bool = False,
             progress: Callable[[int, int, dict], None] | None = None) -> EvalRun:
    """Answer and score ``items`` with ``method`` (a QAMethod). ``progress(done, total, record)``
    is called after each question."""
    log = ResultsLog(results_path, resume=resume) if results_path is not None else None
    done = {rec["id"]: rec for rec in log.records if "id" in rec} if log else {}
    records = []
    for n, item in enumerate(items, start=1):
        record = done.get(item.id)
        if item.unscorable is not None:
            record = unscorable_record(item)
        elif record is None or "answers" not in record:
            answer = method.answer(item.question, allow_parametric=allow_parametric)
            named = list(answer.answer_iris) + query_iris(answer.query)
            record = score_answer(item, answer, missing_iris=iris_missing_from_store(store, named))
            if log is not None:
                log.append({**record, "trace": answer.trace})
        else:
            record = {k: v for k, v in record.items() if k != "trace"}
            if item.gold_values is not None:
                record = rescore(item, record)
        records.append(record)
        if progress:
            progress(n, len(items), record)
    return EvalRun(method=method.name, records=records, summary=summarise(records))

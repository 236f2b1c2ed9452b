"""Scores for one answer and summaries over many. Pure functions."""
from __future__ import annotations

import math
from typing import Sequence

from ..steps._grounding import normalise_label
from ._failures import failure_counts


def hits_at_1(answers: Sequence[str], gold: Sequence[str]) -> float:
    """1.0 when the first answer is a gold answer (labels compared after normalisation)."""
    if not answers:
        return 0.0
    return 1.0 if normalise_label(answers[0]) in {normalise_label(g) for g in gold} else 0.0


def f1(answers: Sequence[str], gold: Sequence[str]) -> float:
    """F1 of the answer set against the gold set (0 for an empty answer)."""
    predicted = {normalise_label(a) for a in answers} - {""}
    truth = {normalise_label(g) for g in gold} - {""}
    overlap = len(predicted & truth)
    if not predicted or not truth or not overlap:
        return 0.0
    precision, recall = overlap / len(predicted), overlap / len(truth)
    return 2 * precision * recall / (precision + recall)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(rank), math.ceil(rank)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def summarise(records: Sequence[dict]) -> dict:
    """Aggregate per-question records (as the harness writes them) into the report's metrics.
    Unscorable records (no gold, or a gold query that failed) are counted, never scored;
    records with a ``shape`` also get Hits@1 and F1 per shape (``by_shape``)."""
    unscorable = sum(1 for r in records if r.get("unscorable"))
    records = [r for r in records if not r.get("unscorable")]
    extra = {"unscorable": unscorable} if unscorable else {}
    shapes = by_shape(records)
    if shapes:
        extra["by_shape"] = shapes
    failures = failure_counts(records)
    if failures:
        extra["failures"] = failures
    n = len(records)
    if n == 0:
        return {"questions": 0, **extra}
    seconds = [r["seconds"] for r in records]
    tokens = [r["tokens"]["total"] for r in records]
    answered = [r for r in records if not r["refused"]]
    return {
        "questions": n,
        "hits@1": sum(r["hits@1"] for r in records) / n,
        "f1": sum(r["f1"] for r in records) / n,
        "refusal_rate": sum(1 for r in records if r["refused"]) / n,
        "hits@1_answered": (sum(r["hits@1"] for r in answered) / len(answered)) if answered else None,
        "hallucinated_identifier_rate": sum(1 for r in records if r["hallucinated_iris"]) / n,
        "parametric_rate": sum(1 for r in records if r.get("parametric")) / n,
        "error_rate": sum(1 for r in records if r.get("refusal_reason") == "error") / n,
        "latency_p50_s": percentile(seconds, 50),
        "latency_p90_s": percentile(seconds, 90),
        "tokens_mean": sum(tokens) / n,
        "tokens_total": sum(tokens),
        "prompt_tokens_total": sum(r["tokens"]["prompt"] for r in records),
        "completion_tokens_total": sum(r["tokens"]["completion"] for r in records),
        "llm_calls_mean": sum(r["tokens"]["calls"] for r in records) / n,
        "edge_hit_rate": _mean([r["edge_hits"] for r in records if r.get("edge_hits") is not None]),
        **extra,
    }


def by_shape(records: Sequence[dict]) -> dict[str, dict]:
    """Questions, Hits@1 and F1 per shape, over the scorable records that have one; shapes
    in the order of :data:`qa.eval.SHAPES`, then any other (a file's own types)."""
    from ._shapes import SHAPES

    groups: dict[str, list[dict]] = {}
    for r in records:
        if r.get("shape") and not r.get("unscorable"):
            groups.setdefault(r["shape"], []).append(r)
    order = [s for s in SHAPES if s in groups] + sorted(s for s in groups if s not in SHAPES)
    return {s: {"questions": len(groups[s]), "hits@1": sum(r["hits@1"] for r in groups[s]) / len(groups[s]),
                "f1": sum(r["f1"] for r in groups[s]) / len(groups[s])} for s in order}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None

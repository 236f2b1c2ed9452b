"""Why an answer failed, by kind, from its scored record. Pure functions.

The kinds say what the next change should target:

* ``refused: <reason>``: no answer (``not_in_store``, ``no_rows``, ``wrong_form`` …);
* ``wrong no``: "no" where the gold answer is yes (worse than a refusal: a false claim);
* ``wrong yes``: "yes" where the gold answer is no;
* ``wrong count``: a count question ("how many …", or of the count shape) answered with
  another number than the gold one (a false claim, like a wrong "no");
* ``constraint dropped``: the question wrote a constraint (a value, or a name) that no
  relation of the store could carry on the answers, and the answer says so;
* ``hallucinated identifier``: an answer or query names an IRI the store lacks;
* ``wrong answer``: anything else that missed.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from ..steps._grounding import normalise_label

FAILURE_KINDS = ("wrong no", "wrong yes", "wrong count", "constraint dropped", "hallucinated identifier",
                 "wrong answer")


def failure_kind(record: dict) -> str | None:
    """The kind of failure of one scored record, or None when its first answer is right."""
    if record.get("unscorable") or record.get("hits@1") == 1.0:
        return None
    if record.get("refused"):
        return f"refused: {record.get('refusal_reason') or 'unknown'}"
    answers = [normalise_label(a) for a in record.get("answers") or []]
    gold = {normalise_label(g) for g in record.get("gold") or []} | {
        normalise_label(str(v.get("value"))) for v in record.get("gold_values") or [] if v.get("kind") == "boolean"}
    if answers[:1] == ["no"] and gold & {"yes", "true"}:
        return "wrong no"
    if answers[:1] == ["yes"] and gold & {"no", "false"}:
        return "wrong yes"
    if _asks_a_count(record) and len(answers) == 1 and _number(answers[0]) and gold and all(map(_number, gold)):
        return "wrong count"
    if any(not c.get("applied") for c in record.get("constraints") or []):
        return "constraint dropped"
    if record.get("hallucinated_iris"):
        return "hallucinated identifier"
    return "wrong answer"


def _asks_a_count(record: dict) -> bool:
    return record.get("shape") == "count" or bool(re.search(r"\bhow many\b|\bnumber of\b", record.get("question") or "",
                                                              re.I))


def _number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def failure_counts(records: Iterable[dict]) -> dict[str, int]:
    """How many records failed by each kind, most frequent first."""
    counts = Counter(r["failure"] for r in records if r.get("failure"))
    return dict(counts.most_common())


__all__ = ["FAILURE_KINDS", "failure_kind", "failure_counts"]

"""Understanding a question by composing query graphs from the store and choosing among
them, instead of reading its shape from English word rules.

The steps, in order:

1. ``_reading``: the question read once (:class:`QuestionReading`): linked mentions, the
   constants it writes, its cue words. Nothing later reads the question string again.
2. ``_candidates``: query graphs the store can answer, enumerated in stages (core chains
   through mediators, then constraints, then aggregations), each one executed.
3. ``_verbalize``: each candidate in words (pure).
4. ``_choose``: the encoder shortlists, the model picks one by number, the pick is checked.

:func:`compose_answer` runs them all and returns the standard :class:`qa.Answer`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..steps import _sparql_build as sb
from ..steps._result import Answer
from ._candidates import EntityTie, Ordering, QueryCandidate, SpanTie, ValueTie
from ._comparisons import Comparison, comparisons
from ._choose import ComposeOptions, Composed, choose, enumerate_candidates, onward_judged, rank, relations_of
from ._reading import COMPARISON_CUES, LinkedEntity, Mention, QuestionReading, read_question, written_like
from ._names import confirmed_names
from ._verbalize import verbalize


# the most answers a composed answer lists
ANSWER_LIMIT = 50


@dataclass(frozen=True)
class Picked:
    """A composed answer with what was picked for it: the candidate's ``stage`` ("chain",
    "entity constraint", "comparison" …) and ``p``, the model's probability that it answers
    the question as the choice weighed it (a refinement's is its chain's where that is
    higher; 1.0 when it was the only option, and not judged)."""

    answer: Answer
    stage: str
    p: float


def compose_answer(store, index, question: str, run, method: str, *,
                   options: ComposeOptions = ComposeOptions(), reading: QuestionReading | None = None,
                   absent: tuple[str, ...] = (), votes: tuple[str, ...] = (),
                   worth: Callable[[QueryCandidate], bool] | None = None):
    """The answer to ``question`` from the query graph the model picks among the store's
    candidates (a :class:`Picked`), or None when the store offers no candidate that returns
    an answer.
    ``absent``: names the store was found to lack, whose words name nothing else.
    ``votes``: relations a refused draft resolved to (:attr:`Answer.draft_relations`).
    ``worth(candidate)``: whether a caller that takes only some picks could take it; where
    no candidate is, nothing is judged and the answer is None."""
    read = reading or read_question(index, question)
    reading = read.without_absent(absent, index)
    near = read.near_absent(absent, index)
    if near:
        # a name the store lacks written another way ("vince scully"), if the model says so
        reading = reading.with_mentions(confirmed_names(run, reading, near, threshold=options.name_threshold))
    run.record("compose", reading=reading.to_dict(), **({"votes": list(votes)} if votes else {}))
    candidates = enumerate_candidates(store, index.embed, reading, options)
    if worth is not None and not any(worth(c) for c in candidates):
        run.record("compose", candidates=len(candidates), judged=False)
        return None
    scores = rank(index.embed, reading, candidates, options, votes=frozenset(votes))
    composed = choose(run, reading, candidates, scores, options)
    chosen_p = composed.chosen_p if composed else None
    run.record("compose", candidates=len(candidates),
               options=[{"text": verbalize(c), "answers": list(c.answers[:3]), "size": c.size, "stage": c.stage,
                         "score": round(s, 4), "model_p": mp, "weighed_p": round(wp, 4)}
                        for c, s, mp, wp in zip(composed.options, composed.scores, composed.model_p,
                                                composed.weighed or composed.model_p)] if composed else [],
               chosen=verbalize(composed.chosen) if composed else None,
               # the model's probability that the pick answers the question, as the choice
               # weighed it (a refinement judged as the chain it refines)
               chosen_p=chosen_p,
               stage=composed.chosen.stage if composed else None)
    if composed is None:
        return None
    if isinstance(composed.chosen, Comparison):  # computed from the two entities' facts
        return Picked(composed.chosen.answer(question, method), composed.chosen.stage, chosen_p)
    query = composed.chosen.query()
    rows, _ = sb.execute(store, query, timeout_s=options.timeout_s, max_rows=2000)
    if not rows:
        return None
    if not query.count and not query.tail:
        # a list's most prominent members first (the store's facts about each): the first
        # answer is the one a reader takes
        known = store.popularity(r["answer"].value for r in rows if hasattr(r["answer"], "value"))
        rows.sort(key=lambda r: -known.get(getattr(r["answer"], "value", ""), 0))
    return Picked(sb.query_answer(store, question, method, query, rows, limit=ANSWER_LIMIT,
                                   timeout_s=options.timeout_s),
                  composed.chosen.stage, chosen_p)


__all__ = ["compose_answer", "confirmed_names", "ANSWER_LIMIT", "Picked", "read_question", "QuestionReading", "Mention", "LinkedEntity", "QueryCandidate",
           "EntityTie", "ValueTie", "SpanTie", "Ordering", "ComposeOptions", "Composed", "enumerate_candidates", "rank",
           "onward_judged", "relations_of", "choose", "verbalize", "written_like", "Comparison", "comparisons", "COMPARISON_CUES"]

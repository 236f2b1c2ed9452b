"""Choosing among query-graph candidates: the encoder shortlists, the model picks, the
store checks.

The encoder reads each candidate's words against the question (and its answers against
what the question asks for); the best few go to the model as numbered options, one
constrained choice; the pick is executed again as the final query. A pick that returns
nothing an answer may be falls through to the next option.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..steps._paths import PathScorer, path_text, relation_paths
from ._candidates import (QueryCandidate, core_candidates, counted, entity_ties, execute, ordered_relations,
                          orderings, value_ties)
from ._reading import QuestionReading
from ._verbalize import option_line, verbalize

# words that ask for the first or last of several, read as a feature (never a rule): an
# ordering candidate is enumerated only for a question that has one
_ORDER_CUES = frozenset("first last earliest latest newest oldest most least highest lowest biggest largest "
                        "smallest longest shortest youngest".split())


@dataclass(frozen=True)
class ComposeOptions:
    """How wide the search is: topics tried, hops, the beam, the cores kept for stage two,
    the shortlist shown to the model, and the query time limit."""

    topics: int = 4
    max_hops: int = 2
    beam: int = 6
    cores: int = 6
    shortlist: int = 6
    timeout_s: float = 5.0
    answer_weight: float = 0.5
    link_weight: float = 0.3
    hop_cost: float = 0.05


@dataclass
class Composed:
    """The chosen candidate and the options the model chose among (for the trace)."""

    chosen: QueryCandidate
    options: list[QueryCandidate]
    scores: list[float]
    model_p: list[float]


def enumerate_candidates(store, embed: Callable, reading: QuestionReading,
                         options: ComposeOptions = ComposeOptions()) -> list[QueryCandidate]:
    """Every executed candidate for ``reading``: core chains from each topic, then their
    constraints and aggregations, each one that returns an answer."""
    scorer = PathScorer(embed, reading.text, [], hops_hint=())
    cores: list[tuple[float, QueryCandidate]] = []
    for _, topic in reading.topics(limit=options.topics):
        paths = relation_paths(store, topic.label, topic.iri, scorer.prefix_scores, max_hops=options.max_hops,
                               beam=options.beam, timeout_s=options.timeout_s)
        if not paths:
            continue
        scores = scorer.scores(paths)
        named = [m.best.iri for m in reading.mentions]
        for score, candidate in zip(scores, core_candidates(topic, paths, named)):
            # a shorter chain first where the words fit as well (a longer one repeats its words)
            cores.append((score + options.link_weight * topic.score - options.hop_cost * candidate.path.hops,
                          candidate))
    cores.sort(key=lambda pair: -pair[0])
    executed: list[QueryCandidate] = []
    for _, candidate in cores:
        done = execute(store, candidate, timeout_s=options.timeout_s)
        if done is not None:
            executed.append(done)
        if len(executed) >= options.cores * 2:
            break
    out = list(executed)
    wants_order = bool(reading.cues & _ORDER_CUES) or any(w.endswith("est") for w in reading.cues)
    wants_count = {"how", "many"} <= reading.cues or "number" in reading.cues
    for base in executed[:options.cores]:
        grown = entity_ties(store, base, reading.others(base.topic), timeout_s=options.timeout_s)
        if reading.values or (wants_order and base.size > 1):
            relations = ordered_relations(store, base, timeout_s=options.timeout_s)
            grown += value_ties(base, reading.values, relations)
            if wants_order and base.size > 1:
                grown += orderings(base, relations)
        for candidate in grown:
            done = execute(store, candidate, timeout_s=options.timeout_s)
            if done is not None and (done.size < base.size or done.ordering is None):
                out.append(done)
    if wants_count:
        out += [c for c in (execute(store, counted(c), timeout_s=options.timeout_s) for c in list(out)) if c]
    return out


def rank(embed: Callable, reading: QuestionReading, candidates: Sequence[QueryCandidate],
         options: ComposeOptions = ComposeOptions()) -> list[float]:
    """Each candidate's score: its words against the question, its answers against what
    the question asks for, and how sure the link of its topic is."""
    if not candidates:
        return []
    texts = [verbalize(c) for c in candidates]
    answer_texts = [", ".join(c.answers[:3]) for c in candidates]
    distinct = list(dict.fromkeys(texts + answer_texts))
    vectors = embed([reading.text] + distinct)
    sims = dict(zip(distinct, (vectors[1:] @ vectors[0]).tolist()))
    return [sims[t] + options.answer_weight * sims[a] + options.link_weight * c.topic.score
            - options.hop_cost * c.path.hops for c, t, a in zip(candidates, texts, answer_texts)]


def choose(run, reading: QuestionReading, candidates: Sequence[QueryCandidate], scores: Sequence[float],
           options: ComposeOptions = ComposeOptions(), *, step: str = "compose") -> Composed | None:
    """The model's pick among the best ``options.shortlist`` candidates; None when there
    are none."""
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    # the best of every stage and chain length gets a seat (a superlative's words read like
    # its chain's, a longer chain repeats a shorter one's words, and the encoder alone would
    # fill the list with one kind); the rest go by score
    kinds = {}
    for i in order:
        kinds.setdefault((candidates[i].stage, candidates[i].path.hops), i)
    seats = list(kinds.values())
    shortlist = []
    seen: set[str] = set()
    for i in seats[:options.shortlist] + order:
        text = verbalize(candidates[i])
        if text not in seen:
            seen.add(text)
            shortlist.append(i)
        if len(shortlist) >= options.shortlist:
            break
    shortlist.sort(key=lambda i: -scores[i])
    if not shortlist:
        return None
    shown = [candidates[i] for i in shortlist]
    picked = 0
    if len(shown) > 1:
        listing = "\n".join(option_line(n + 1, c) for n, c in enumerate(shown))
        grammar = "root ::= " + " | ".join(f'"{n + 1}"' for n in range(len(shown))) + "\n"
        done = run.ask(step, "compose_choose", {"question": reading.text, "options": listing},
                       grammar=grammar, max_tokens=2, temperature=0.0, logprobs=20)
        try:
            picked = int(done.text.strip()) - 1
        except ValueError:
            picked = 0
        picked = picked if 0 <= picked < len(shown) else 0
        model_p = option_probabilities(done, len(shown))
    else:
        model_p = [1.0]
    return Composed(shown[picked], shown, [float(scores[i]) for i in shortlist], model_p)


def option_probabilities(completion, n: int) -> list[float]:
    """The model's probability of each of ``n`` numbered options, from the alternatives at
    its first token (renormalised over the numbers shown); uniform when it gave none."""
    steps = completion.top_logprobs or []
    if not steps:
        return [1.0 / n] * n
    top = steps[0].top
    logits = [top.get(str(i + 1), top.get(f" {i + 1}")) for i in range(n)]
    if all(v is None for v in logits):
        return [1.0 / n] * n
    floor = min(v for v in logits if v is not None) - 5.0
    weights = np.exp(np.array([v if v is not None else floor for v in logits]) - max(v for v in logits if v is not None))
    return (weights / weights.sum()).round(4).tolist()


__all__ = ["ComposeOptions", "Composed", "enumerate_candidates", "rank", "choose"]

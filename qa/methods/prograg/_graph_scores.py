"""Scores over a small explored neighbourhood of the store, and the nucleus cut. Pure functions.

The research scores candidate triples with a trained GNN; nothing here can be trained, so
the structural score is a graph statistic: **personalized PageRank** from the topic entity
over the edges read so far (undirected, each fact one unit of weight). An entity reached
from the topic by many short paths, through entities with few other facts, scores high;
one reached once through a hub scores low.
"""
from __future__ import annotations

import math
from typing import Hashable, Iterable, Mapping, Sequence


def personalized_pagerank(edges: Iterable[tuple[Hashable, Hashable]], seeds: Sequence[Hashable], *,
                          damping: float = 0.85, iterations: int = 30) -> dict[Hashable, float]:
    """The stationary visit probability of a walk on the undirected graph ``edges`` that
    restarts at ``seeds`` (uniformly) with probability ``1 - damping`` each step. A walk at
    a node with no edges returns to the seeds. Scores sum to 1."""
    neighbours: dict[Hashable, list[Hashable]] = {}
    for a, b in edges:
        if a == b:
            continue
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    seeds = list(dict.fromkeys(seeds))
    if not seeds:
        return {}
    for s in seeds:
        neighbours.setdefault(s, [])
    restart = {s: 1.0 / len(seeds) for s in seeds}
    rank = dict(restart)
    for _ in range(iterations):
        nxt = {n: 0.0 for n in neighbours}
        stranded = 0.0
        for node, mass in rank.items():
            near = neighbours[node]
            if not near:
                stranded += mass
                continue
            share = damping * mass / len(near)
            for other in near:
                nxt[other] += share
        for s, weight in restart.items():  # mass is 1: (1 - damping) restarts, and what was stranded
            nxt[s] += (1.0 - damping + damping * stranded) * weight
        rank = nxt
    total = sum(rank.values()) or 1.0
    return {n: v / total for n, v in rank.items()}


def scaled(values: Mapping[Hashable, float]) -> dict[Hashable, float]:
    """``values`` divided by their maximum (0..1); all zero stays zero."""
    top = max(values.values(), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in values.items()}


def nucleus(scores: Mapping[Hashable, float], *, top_p: float = 0.9, at_least: int = 5, at_most: int = 10,
            temperature: float = 0.1) -> list[Hashable]:
    """The smallest set of best-scoring keys whose softmax(score / temperature) mass
    reaches ``top_p``, widened to ``at_least`` and cut to ``at_most`` keys; best first.
    Ties keep the input order."""
    order = sorted(scores, key=lambda k: -scores[k])
    if not order:
        return []
    top = scores[order[0]]
    weights = [math.exp((scores[k] - top) / temperature) for k in order]
    total = sum(weights)
    kept, mass = 0, 0.0
    for w in weights:
        kept += 1
        mass += w / total
        if mass >= top_p:
            break
    return order[:min(max(kept, at_least), at_most)]


__all__ = ["nucleus", "personalized_pagerank", "scaled"]

"""Relation paths the store actually has, from one entity, up to three hops.

A small model writes the structure of a multi-hop query badly (two patterns hanging off the
topic entity where the question walks a chain; a relation in the wrong direction) but
chooses well among real alternatives. So the store enumerates what is possible: from the
topic entity, the relations (either direction) leaving the entities reached so far, hop by
hop, as relation *types* (``directed by →``, ``← directed by``, ``has genre →``) rather
than as instances, with how many distinct entities each path reaches. A beam keeps the
prefixes that read closest to the question, so a hub's hundreds of relations stay cheap.

Every path returned is real: its query returns rows by construction. Scoring and the
choice among paths belong to the method; this module enumerates, renders and builds.
"""
from __future__ import annotations

import itertools

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError
from kgstore.terms import is_fact_predicate, is_true

from ..sandbox import run_sparql
from ._examples import ExamplePath, Hop, hop_phrase
from ._grounding import normalise_label
from ._retrieval import entity_popularity, store_labels
from ._sparql_build import BuiltQuery, TriplePattern, exclude_filter

MAX_HOPS = 3
# Entities a prefix may reach before its next hop is read from a sample of them: paths
# through a hub ("<- has genre" of Drama) still count, but cost a bounded query.
FRONTIER_SAMPLE = 300
# A prefix that reaches more entities than this is a walk into a hub (a class's instances):
# it stays a path, but is not walked on. Running its extensions enumerates every one of
# those entities (a round trip through a class of 300k instances timed out at 5 s on a
# 10M-entity store), and what they reach says little about the named entity.
MAX_WALKED_ON = 100_000
# An entity with more facts than this is a hub: the relations into it are read from this
# many of its facts (in the store's order), as kgstore reads a hub's facts for `entity`.
# At 10M entities, reading all 300k facts into one class cost 0.3-0.6 s a hop.
HUB_FACTS = 10_000
# Hubs of one frontier read that way (a path into a set of hubs, such as countries), and the
# characters of the other frontier IRIs listed beside them (the sandbox's queries stay
# under 10,000 characters)
HUB_SAMPLES = 8
LISTED_CHARS = 6_000
# Answers of a path shown to the encoder to judge whether they are what the question asks for.
ANSWER_SAMPLE = 3


@dataclass(frozen=True)
class RelationPath:
    """A path of relation types from ``start_iri``: ``steps`` of (relation IRI, backward),
    their ``labels``, the distinct entities (or values) it ``reaches`` and whether those
    are literals (a path ending in values is not walked further)."""

    start: str
    start_iri: str
    steps: tuple[tuple[str, bool], ...]
    labels: tuple[str, ...]
    reaches: int = 0
    literal: bool = False
    # the last hop was read from a hub's sample (:data:`HUB_FACTS`): ``reaches`` is a lower
    # bound, and the path is not walked on (from a hub's many, as from MAX_WALKED_ON)
    sampled: bool = False

    @property
    def hops(self) -> int:
        return len(self.steps)

    @property
    def round_trip(self) -> bool:
        """The path leaves the named entity along a relation and comes back along the same
        one (``directed by →`` then ``← directed by``): to the others in the same role,
        such as a film's director's other films or an actor's co-stars, and maybe one hop
        on from them ("the years of the films whose actors also appear in X"). Not a
        zig-zag that goes back a second time, to where the first hop led."""
        turns = self._turns()
        return bool(turns) and turns[0] and not any(turns[1:])

    @property
    def ends_walking_back(self) -> bool:
        """The last hop walks back along the relation of the hop before it (``plays in club
        →`` then ``← plays in club``): it ends on others that share what the hop before
        reached (a round trip of two hops ends so)."""
        turns = self._turns()
        return bool(turns) and turns[-1]

    def _turns(self) -> list[bool]:
        """Per pair of adjacent hops, whether the second walks back along the first's relation."""
        return [a[0] == b[0] and a[1] != b[1] for a, b in zip(self.steps, self.steps[1:])]

    def goes_on_from(self, other: "RelationPath") -> bool:
        """Whether this path is ``other`` walked one hop further (its steps, then one more)."""
        return self.hops == other.hops + 1 and self.steps[:other.hops] == other.steps

    def example(self) -> ExamplePath:
        """The path as the examples write it (question text, placeholder SPARQL, plan)."""
        return ExamplePath(self.start, tuple(Hop(label, back) for label, (_, back) in zip(self.labels, self.steps)))

    def property_path(self) -> str:
        return "/".join(("^" if back else "") + f"<{iri}>" for iri, back in self.steps)

    def query(self, *, answer: str = "?answer", exclude: Sequence[str] = ()) -> BuiltQuery:
        """The path as a query for its last entity, ``answer``: one pattern per hop through
        ``?m1``, ``?m2``; ``exclude`` keeps those IRIs (the question's own entities) out of
        the answer and out of the middles after the first."""
        middles = [f"?m{i + 1}" if f"?m{i + 1}" != answer else f"?hop{i + 1}" for i in range(self.hops - 1)]
        nodes = [f"<{self.start_iri}>"] + middles + [answer]
        patterns = [TriplePattern(nodes[i + 1], f"<{iri}>", nodes[i]) if back else
                    TriplePattern(nodes[i], f"<{iri}>", nodes[i + 1]) for i, (iri, back) in enumerate(self.steps)]
        # a path does not pass through the question's own entities again: "the films
        # directed by X's director" are the director's other films, not X
        filters = [f for var in middles[1:] + [answer] for f in exclude_filter(var, exclude)]
        return BuiltQuery(answer, [[patterns]], filters)


def frontier_query(start_iri: str, prefix: RelationPath) -> str:
    """SPARQL for (a sample of) the entities ``prefix`` reaches, the start excluded."""
    return (f"SELECT DISTINCT ?x WHERE {{ <{start_iri}> {prefix.property_path()} ?x . "
            f"FILTER(isIRI(?x) && ?x != <{start_iri}>) }} LIMIT {FRONTIER_SAMPLE}")


def next_hops_query(start_iri: str, prefix: RelationPath | None, hubs: Sequence[str] = (),
                    others: Sequence[str] = ()) -> str:
    """SPARQL for the relations leaving what ``prefix`` reaches (the start itself when
    None), each direction, with the distinct entities or values each one reaches (``?n``),
    how many of them are literals, and whether they were read from a sample (``?sampled``).

    When the frontier holds ``hubs``, the facts into it are a sample: into each of the first
    :data:`HUB_SAMPLES` hubs its first :data:`HUB_FACTS`, and into ``others`` (the rest of
    the frontier, as many as fit in the query) all of them."""
    if prefix is None:
        frontier = f"VALUES ?x {{ <{start_iri}> }}"
    else:
        frontier = f"{{ {frontier_query(start_iri, prefix)} }}"
    # isLiteral only on the outgoing side: a subject is never a literal, and testing each of
    # a hub's incoming subjects cost 2 s of the 2.2 s at 10M entities (300k facts into one
    # class), against 0.27 s for the same rows this way
    outgoing = "{ ?x ?p ?y . BIND(false AS ?back) BIND(IF(isLiteral(?y), 1, 0) AS ?lit) BIND(0 AS ?hub) }"
    if not hubs:
        branches = [f"{{ {frontier}\n  {outgoing}\n  UNION {{ ?y ?p ?x . BIND(true AS ?back) BIND(0 AS ?lit) "
                    "BIND(0 AS ?hub) } }"]
    else:
        branches = [f"{{ {frontier} {outgoing} }}"]
        if others:
            branches.append(f"{{ VALUES ?x {{ {' '.join(f'<{x}>' for x in others)} }} ?y ?p ?x . "
                            "BIND(true AS ?back) BIND(0 AS ?lit) BIND(1 AS ?hub) }")
        branches += [f"{{ {{ SELECT ?y ?p WHERE {{ ?y ?p <{hub}> }} LIMIT {HUB_FACTS} }} "
                     "BIND(true AS ?back) BIND(0 AS ?lit) BIND(1 AS ?hub) }" for hub in hubs[:HUB_SAMPLES]]
    union = "\n  UNION ".join(branches)
    return ("SELECT ?p ?back (COUNT(DISTINCT ?y) AS ?n) (SUM(?lit) AS ?lits) (MAX(?hub) AS ?sampled) WHERE {\n"
            f"  {union}\n"
            f"  FILTER(?y != <{start_iri}>)\n"
            "} GROUP BY ?p ?back")


def frontier_hubs(store, start_iri: str, prefix: RelationPath | None, *,
                  timeout_s: float) -> tuple[list[str], list[str]]:
    """The hubs among the entities ``prefix`` reaches (more than :data:`HUB_FACTS` facts
    in the catalog), and when there are any, the other entities, as many as
    :data:`LISTED_CHARS` of IRIs hold."""
    if prefix is None:
        frontier = [start_iri]
    else:
        rows = run_sparql(store, frontier_query(start_iri, prefix), timeout_s=timeout_s,
                          max_rows=FRONTIER_SAMPLE).rows
        frontier = [row["x"].value for row in rows if isinstance(row.get("x"), ox.NamedNode)]
    facts = entity_popularity(store, frontier)
    hubs = [x for x in frontier if facts.get(x, 0) > HUB_FACTS]
    if not hubs:
        return [], []
    others, room = [], LISTED_CHARS
    for x in frontier:
        if x not in hubs and len(x) + 3 <= room:
            others.append(x)
            room -= len(x) + 3
    return hubs, others


def next_hops(store, start: str, start_iri: str, prefix: RelationPath | None, *,
              timeout_s: float) -> list[RelationPath]:
    """The one-hop extensions of ``prefix`` (or the one-hop paths from the start)."""
    try:
        # a hub's facts are many, and only their relations matter here: read from a sample
        hubs, others = frontier_hubs(store, start_iri, prefix, timeout_s=timeout_s)
        rows = run_sparql(store, next_hops_query(start_iri, prefix, hubs, others), timeout_s=timeout_s,
                          max_rows=2000).rows
    except (QueryError, UnsafeQueryError):
        return []
    found = []
    for row in rows:
        p = row.get("p")
        if not isinstance(p, ox.NamedNode) or not is_fact_predicate(p.value):
            continue
        back = is_true(row["back"])
        n, lits = int(row["n"].value), int(row["lits"].value)
        if (back and lits) or n == 0:  # a literal has no outgoing facts; n == 0 leads only back to the start
            continue
        found.append((p.value, back, n, lits == n, int(row["sampled"].value) > 0))
    labels = store_labels(store, [p for p, *_ in found])
    base_steps, base_labels = (prefix.steps, prefix.labels) if prefix else ((), ())
    out = []
    for p, back, n, literal, sampled in found:
        label = labels.get(p)
        if not label:
            continue
        out.append(RelationPath(start, start_iri, base_steps + ((p, back),), base_labels + (label,), n, literal,
                                sampled))
    return out


def relation_paths(store, start: str, start_iri: str, score: Callable[[Sequence[RelationPath]], Sequence[float]],
                   *, max_hops: int = MAX_HOPS, beam: int = 8, timeout_s: float = 5.0) -> list[RelationPath]:
    """Every path of one to ``max_hops`` hops from ``start_iri`` that the beam visits:
    at each depth only the ``beam`` best-scoring prefixes (by ``score``) are extended,
    and of those only the ones reaching at most :data:`MAX_WALKED_ON` entities, none of
    them read from a hub's sample."""
    found: list[RelationPath] = []
    frontier: list[RelationPath | None] = [None]
    for _ in range(max_hops):
        layer = [path for prefix in frontier for path in next_hops(store, start, start_iri, prefix,
                                                                    timeout_s=timeout_s)]
        if not layer:
            break
        found += layer
        scores = score(layer)
        ranked = sorted(range(len(layer)), key=lambda i: -scores[i])
        walkable = [layer[i] for i in ranked if not layer[i].literal]
        frontier = [path for path in walkable[:beam] if path.reaches <= MAX_WALKED_ON and not path.sampled]
        # a hop onto mediators (CVT nodes) says little in its own words ("location adjoin
        # s"): what it joins is read one hop on, so the others the beam left are walked too
        # (as many again); a mediator is never an answer, so stopping there finds nothing
        # (asked lazily: each ask is a query, and the walk stops at ``beam`` more)
        frontier += itertools.islice((path for path in walkable[beam:] if path.reaches <= MAX_WALKED_ON
                                      and not path.sampled
                                      and reaches_mediators(store, start_iri, path, timeout_s=timeout_s)), beam)
        if not frontier:
            break
    return found


def reaches_mediators(store, start_iri: str, path: RelationPath, *, timeout_s: float) -> bool:
    """Whether the first few nodes ``path`` reaches from the start are mediator (CVT) nodes."""
    try:
        rows = run_sparql(store, f"SELECT DISTINCT ?x WHERE {{ <{start_iri}> {path.property_path()} ?x . "
                                 f"FILTER(isIRI(?x)) }} LIMIT 3", timeout_s=timeout_s, max_rows=3).rows
    except (QueryError, UnsafeQueryError):
        return False
    reached = [row["x"].value for row in rows if isinstance(row.get("x"), ox.NamedNode)]
    return bool(reached) and len(store.mediators(reached)) == len(reached)


def reading_text(label: str, backward: bool) -> str:
    """One hop read as a short phrase ("what is the country of it", "it has country what")."""
    return hop_phrase(Hop(label, backward), "it", "what")


class PathScorer:
    """Scores relation paths against a question and the relation words the model wrote for
    it (its draft), embedding each text once.

    - While enumerating (:meth:`prefix_scores`): the mean over hops of each hop's reading
      against the question and its best match among the draft's words, so the beam keeps
      prefixes whose every hop is relevant.
    - To rank whole paths (:meth:`scores`): how well the path's relations and the draft's
      words cover each other (a soft F1: each word's best relation, each relation's best
      word), which ignores the model's structure and hop order, the parts a small model gets
      wrong; plus the whole path read as text against the question; plus how well the
      path's first hop matches the draft's relation on the named entity and its last hop the
      draft's relation on the answer (a small model gets the chain's ends right more often
      than its middle); plus a bonus when the path has as many hops as the draft wrote patterns.
    """

    def __init__(self, embed: Callable[[list[str]], "np.ndarray"], question: str, words: Sequence[str], *,
                 hops_hint: Iterable[int], ends: tuple[str | None, str | None] = (None, None),
                 cover_weight: float = 1.0, text_weight: float = 1.0, ends_weight: float = 1.0,
                 hops_bonus: float = 0.1):
        self.embed = embed
        self.question = question
        self.words = list(words)
        self.ends = ends
        vectors = embed([question] + self.words + [e or "" for e in ends])
        self.question_v, self.words_v = vectors[0], vectors[1:1 + len(self.words)]
        self.ends_v = vectors[1 + len(self.words):]
        self.ends_weight = ends_weight
        self.hops_hint = set(hops_hint)
        self.cover_weight, self.text_weight, self.hops_bonus = cover_weight, text_weight, hops_bonus
        self._reading: dict[tuple[str, bool], float] = {}
        self._label: dict[str, "np.ndarray"] = {}
        self._text: dict[str, float] = {}  # a path's words against the question's, kept by :meth:`scores`

    def _labels(self, labels: Sequence[str]) -> None:
        new = [label for label in dict.fromkeys(labels) if label not in self._label]
        if new:
            self._label.update(zip(new, self.embed(new)))

    def prefix_scores(self, paths: Sequence[RelationPath]) -> list[float]:
        readings = [r for r in dict.fromkeys((label, back) for p in paths
                                             for label, (_, back) in zip(p.labels, p.steps)) if r not in self._reading]
        if readings:
            self._labels([label for label, _ in readings])
            vectors = self.embed([reading_text(label, back) for label, back in readings])
            for (label, back), v in zip(readings, vectors):
                q_sim = float(v @ self.question_v)
                w_sim = float((self.words_v @ self._label[label]).max()) if self.words else q_sim
                self._reading[(label, back)] = (q_sim + w_sim) / 2
        return [sum(self._reading[(label, back)] for label, (_, back) in zip(p.labels, p.steps)) / p.hops
                for p in paths]

    def scores(self, paths: Sequence[RelationPath]) -> list[float]:
        self._labels([label for p in paths for label in p.labels])
        words = [path_text(p) for p in paths]
        texts = self.embed(words) if paths else []
        out = []
        for p, said, text_v in zip(paths, words, texts):
            self._text[said] = float(text_v @ self.question_v)
            score = self.text_weight * self._text[said]
            if self.words:
                sims = self.words_v @ np.stack([self._label[label] for label in p.labels]).T
                # a cosine below zero is no match, not a negative one: unclamped, a recall and
                # a precision both just under zero made the F1's denominator its floor, and a
                # relation unlike every drafted word scored in the hundred thousands
                recall = max(float(sims.max(axis=1).mean()), 0.0)
                precision = max(float(sims.max(axis=0).mean()), 0.0)
                score += self.cover_weight * soft_f1(recall, precision)
            ends = [(self.ends_v[0], p.labels[0]) if self.ends[0] else None,
                    (self.ends_v[1], p.labels[-1]) if self.ends[1] else None]
            ends = [float(v @ self._label[label]) for v, label in filter(None, ends)]
            if ends:
                score += self.ends_weight * sum(ends) / len(ends)
            if p.hops in self.hops_hint:
                score += self.hops_bonus
            out.append(score)
        return out

    def question_fit(self, path: RelationPath) -> float:
        """How well ``path``, read as words, fits the question alone, without the draft:
        the part of :meth:`scores` a draft one hop short of the answer cannot pull down
        (the draft's words cover the hops it wrote, and its last relation is not the
        path's). Only for paths :meth:`scores` has scored."""
        return self._text[path_text(path)]

    def answer_scores(self, samples: Sequence[Sequence[str]], *, topic: str = "") -> list[float]:
        """How much each path's answers read like answers to the question: the question,
        with the ``topic`` entity's words taken out, against a few of the answers joined
        ("Tom Hanks, Tawny Kitaen"). An encoder trained on question-answer pairs tells a
        list of people from a list of films or of places, which is what tells a path of the
        right length from its neighbours, whose words may match the question as well. The
        topic's words go because answers that share them (relatives sharing a family name)
        would otherwise win on the name alone."""
        texts = [", ".join(sample[:ANSWER_SAMPLE]) for sample in samples]
        present = list(dict.fromkeys(t for t in texts if t))
        if not present:
            return [0.0] * len(texts)
        vectors = self.embed([without_words(self.question, topic)] + present)
        sims = dict(zip(present, (vectors[1:] @ vectors[0]).tolist()))
        return [float(sims.get(t, 0.0)) for t in texts]


def soft_f1(recall: float, precision: float) -> float:
    """The harmonic mean of two match strengths in [0, 1]; 0 where either is 0."""
    return 2 * recall * precision / (recall + precision) if recall > 0 and precision > 0 else 0.0


def without_words(text: str, name: str) -> str:
    """``text`` without the words of ``name``, compared as :func:`normalise_label` compares
    names (case, accents, underscores and punctuation aside)."""
    drop = set(normalise_label(name).split())
    kept = [w for w in text.split() if not set(normalise_label(w).split()) <= drop]
    return " ".join(kept) or text


def path_text(path: RelationPath) -> str:
    """The path as plain words for the encoder: the start, then each hop's reading."""
    given, parts = path.start, []
    for label, (_, back) in zip(path.labels, path.steps):
        parts.append(hop_phrase(Hop(label, back), given, "what"))
        given = "it"
    return "; ".join(parts)


def best_paths(scores: Sequence[float], n: int) -> list[int]:
    """Indices of the ``n`` best-scoring paths, best first."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])[:n]


def path_options(paths: Sequence[RelationPath], scores: Sequence[float], n: int) -> list[int]:
    """The ``n`` best paths and the best path of each length, best first: the words of a
    question often fit a path one hop too short or too long better than the right one, so
    every length keeps a candidate for the answer check."""
    chosen = best_paths(scores, n)
    for hops in sorted({p.hops for p in paths}):
        best = max((i for i, p in enumerate(paths) if p.hops == hops), key=lambda i: scores[i])
        if best not in chosen:
            chosen.append(best)
    return sorted(chosen, key=lambda i: -scores[i])


__all__ = ["RelationPath", "MAX_HOPS", "next_hops", "next_hops_query", "relation_paths", "reading_text",
           "PathScorer", "path_text", "best_paths", "path_options", "ANSWER_SAMPLE"]

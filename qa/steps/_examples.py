"""In-context examples built from the store a method runs on, never from benchmark data.

Around the entities a question names, the store's own facts give real paths: one hop
(``Kismet -directed by-> William Dieterle``) and two (``Joel Zwick <-directed by- My Big Fat
Greek Wedding -in language-> English``). Each path reads as a question from the relation's
template phrases (the ones the statement memories use) and as the structures the methods
write: a SPARQL query with placeholders (pgmr) and a plan in words (memq). The paths
closest in meaning to the question are the examples: a small model copies close
demonstrations and does not transfer far ones.

Pure functions over edges, and :func:`store_examples`, which reads them from the store.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from indexer import relation_phrases

from ._retrieval import entity_edges, question_entities

# The answer's variable says what it is; a small model keeps the chain's end and its middle
# apart better than with ?x and ?y.
_ANSWER, _MIDDLE = "?answer", "?m"


@dataclass(frozen=True)
class Hop:
    """One step of a path: relation label and whether it is walked against the stored
    direction (``backward``: from the fact's object to its subject)."""

    relation: str
    backward: bool
    inverse_label: str | None = None


@dataclass(frozen=True)
class ExamplePath:
    """A real path in the store from ``start`` (a named entity, ``start_iri``) through ``hops``."""

    start: str
    hops: tuple[Hop, ...]
    start_iri: str = ""

    def question(self) -> str:
        """The path as a question, from the relations' template phrases: the answer is
        "what"; in a two-hop path the middle entity is ``?y``."""
        parts = []
        given = self.start
        for i, hop in enumerate(self.hops):
            last = i == len(self.hops) - 1
            answer = "what" if last else _middle(i, len(self.hops))
            parts.append(hop_phrase(hop, given, answer))
            given = answer
        return parts[0] + "?" if len(parts) == 1 else f"{parts[-1]}, where {', '.join(parts[:-1])}?"

    def sparql(self) -> str:
        """The path as placeholder SPARQL: ``SELECT ?x WHERE { [ENT: Kismet] [REL: directed by] ?x }``."""
        node = f"[ENT: {self.start}]"
        patterns = []
        for i, hop in enumerate(self.hops):
            nxt = _ANSWER if i == len(self.hops) - 1 else _middle(i, len(self.hops))
            s, o = (nxt, node) if hop.backward else (node, nxt)
            patterns.append(f"{s} [REL: {hop.relation}] {o}")
            node = nxt
        return f"SELECT DISTINCT {_ANSWER} WHERE {{ {' . '.join(patterns)} }}"

    def plan(self) -> str:
        """The path as a plan in words, one step per hop, then the answer step."""
        lines = []
        given = f"[{self.start}]"
        for i, hop in enumerate(self.hops):
            var = _ANSWER if i == len(self.hops) - 1 else _middle(i, len(self.hops))
            lines.append(f"{i + 1}. Find {hop_phrase(hop, given, 'what')}, assign it to {var}.")
            given = var
        lines.append(f"{len(self.hops) + 1}. The answer is {_ANSWER}.")
        return "\n".join(lines)


def _middle(i: int, hops: int) -> str:
    """The variable after hop ``i``: ``?m`` when there is one middle, ``?m1``, ``?m2`` when more."""
    return _MIDDLE if hops <= 2 else f"{_MIDDLE}{i + 1}"


def hop_phrase(hop: Hop, given: str, answer: str) -> str:
    """The relation's template phrase with ``given`` at the known end and ``answer`` at
    the end asked for: forward asks for the object, backward for the subject."""
    forward, backward = relation_phrases(hop.relation, hop.inverse_label)
    if hop.backward:  # asking for ?e1 given ?e2
        if backward.startswith("?e2 is what ?e1"):  # "Tom Hanks is what what starred actors" reads badly
            return f"{answer} {hop.relation} {given}"
        return backward.replace("?e1", answer).replace("?e2", given)
    return forward.replace("?e1", given).replace("?e2", answer)


def example_paths(start: str, start_iri: str, edges: Sequence, second: dict[str, Sequence] | None = None,
                  *, max_paths: int = 60) -> list[ExamplePath]:
    """One-hop paths from ``start`` over its ``edges`` (``kgstore.Edge``), one per relation
    and direction, and two-hop paths through the entities ``second`` holds edges for
    (IRI → edges), never coming back to the start."""
    paths: dict[tuple, ExamplePath] = {}
    for e in edges:
        first = _hop(e, start_iri)
        if first is None:
            continue
        paths.setdefault((first,), ExamplePath(start, (first,), start_iri))
        middle = e.s if first.backward else e.o
        for e2 in (second or {}).get(middle, ()):
            if start_iri in (e2.s, e2.o) or (e2.s, e2.p, e2.o) == (e.s, e.p, e.o):
                continue
            hop2 = _hop(e2, middle)
            if hop2 is not None:
                paths.setdefault((first, hop2), ExamplePath(start, (first, hop2), start_iri))
        if len(paths) >= max_paths:
            break
    return list(paths.values())


def _hop(edge, from_iri: str) -> Hop | None:
    label = edge.p_label
    if not label:
        return None
    if edge.s == from_iri:
        return Hop(label, False)
    if edge.o == from_iri and not edge.o_literal:
        return Hop(label, True)
    return None


def hop_texts(path: ExamplePath) -> list[str]:
    """Each hop of ``path`` as its own short phrase, for scoring a path hop by hop."""
    return [hop_phrase(h, path.start if i == 0 else "it", "what") for i, h in enumerate(path.hops)]


def path_similarity(paths: Sequence[ExamplePath], hop_similarity: dict[str, float]) -> list[float]:
    """A path's similarity to the question: the mean over its hops. Every hop must be
    relevant: a two-hop path that repeats the question's one relation ("the countries
    that share a country with the Andes") would otherwise outrank the one-hop path itself."""
    return [sum(hop_similarity[t] for t in hop_texts(p)) / len(p.hops) for p in paths]


def closest(paths: Sequence[ExamplePath], similarity: Sequence[float], n: int) -> list[ExamplePath]:
    """The ``n`` paths most similar to the question, at most one per relation sequence, so
    the examples show different relations: half of them one hop, half two hops (when there
    are), so the model sees both shapes with the relations nearest the question. Returned
    most similar first."""
    order = sorted(range(len(paths)), key=lambda i: -similarity[i])
    chosen: list[int] = []
    seen: set[tuple] = set()
    quota = {1: n - n // 2, 2: n // 2}
    for i in order:
        key = tuple(h.relation for h in paths[i].hops)
        hops = len(paths[i].hops)
        if key in seen or quota.get(hops, 0) == 0:
            continue
        seen.add(key)
        quota[hops] -= 1
        chosen.append(i)
    for i in order:  # too few of one shape: fill up with the other
        if len(chosen) >= n:
            break
        key = tuple(h.relation for h in paths[i].hops)
        if i not in chosen and key not in seen:
            seen.add(key)
            chosen.append(i)
    return [paths[i] for i in sorted(chosen, key=lambda i: -similarity[i])]


def store_paths(store, index, question: str, *, entities: int = 2, middles: int = 8) -> list[ExamplePath]:
    """Real one- and two-hop paths from the entities the question names (by name)."""
    paths = []
    for cand in question_entities(index, question, k=3)[:entities]:
        edges = entity_edges(store, cand.iri, limit=60)
        ends = list(dict.fromkeys((e.o if e.s == cand.iri else e.s) for e in edges if not e.o_literal))[:middles]
        second = {m: entity_edges(store, m, limit=20) for m in ends}
        paths += example_paths(cand.label, cand.iri, edges, second)
    return paths


def question_similarity(index, question: str, paths: Sequence[ExamplePath]) -> list[float]:
    """Each path's :func:`path_similarity` to ``question``, its hops embedded in one batch."""
    texts = list(dict.fromkeys(t for p in paths for t in hop_texts(p)))
    vectors = index.embed([question] + texts)
    return path_similarity(paths, dict(zip(texts, (vectors[1:] @ vectors[0]).tolist())))


def store_examples(store, index, question: str, run, n: int, render: Callable[[ExamplePath], str]) -> str:
    """The ``n`` store paths whose hops read closest to ``question``, closest first, each
    written by ``render``; the choice goes to the trace under "examples"."""
    paths = store_paths(store, index, question)
    if not paths:
        run.record("examples", paths=0)
        return "(no examples: the question names no store entity by name)"
    chosen = closest(paths, question_similarity(index, question, paths), n)
    run.record("examples", paths=len(paths), shown=[p.question() for p in chosen])
    return "\n\n".join(render(p) for p in chosen)


__all__ = ["Hop", "ExamplePath", "example_paths", "closest", "hop_phrase", "hop_texts", "path_similarity",
           "question_similarity", "store_paths", "store_examples"]

"""The ground graph of an open answer, as the pseudo-graph paper builds it:

1. **Subject**: the entity the question names, by exact label or alias; none, and the
   answer is a refusal.
2. **Sketch**: the model writes, as Cypher, the facts a short paragraph should state
   (``open_sketch``; the Cypher sandbox decodes them into pseudo-triples).
3. **Verification** (two-step pruning): each sketched fact is looked up among the
   subject's own triples in the triple index (entity pruning), and the hits under the
   similarity threshold are dropped (fact pruning). What remains holds the store's values,
   never the model's guesses.
4. **Telling facts**: the subject's facts along the relations the store holds most
   (catalog usage), its description, then its neighbours' facts when it has few: a short
   sketch must not make a thin answer.

With ``verify=False`` (the paper's ablation) the sketched facts are kept as the model
wrote them, values and all, and no store fact joins them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from kgstore.errors import CypherSyntaxError, UnsafeQueryError

from ..prompts import grammar_text
from ..sandbox import run_pseudo_graph
from ..steps._graph_text import relation_words
from ..steps._result import Evidence
from ..steps._retrieval import edge_evidence, exact_entities, search_triples_about
from ._facts import Fact, GroundGraph, value_text
from ._reading import OpenReading

DESCRIPTION = "http://schema.org/description"
DEFAULT_THRESHOLD = 0.55  # as the pseudo-graph method's pruning, for MiniLM


def link_subject(index, reading: OpenReading) -> tuple[str, str] | None:
    """(IRI, label) of the store entity the question names, most likely namesake first."""
    names = [reading.subject]
    if reading.subject.lower().startswith("the "):
        names.append(reading.subject[4:])
    for name in names:
        found = exact_entities(index, name, 3)
        if found:
            return found[0]
    return None


def sketch(run, question: str, *, max_tokens: int = 90) -> list[tuple[str, str, str]]:
    """The facts the model would state, as (subject, relation, object) pseudo-triples.

    A sketch cut off at ``max_tokens`` keeps its complete facts (each a line of about 20
    tokens; the subject's telling facts are added anyway). Unterminated, the statement
    failed to parse and every fact was lost."""
    completion = run.ask("sketch", "open_sketch", {"question": question}, max_tokens=max_tokens, temperature=0.0,
                         grammar=grammar_text("pseudo_graph_cypher"))
    text = completion.text if completion.finish_reason != "length" else complete_lines(completion.text)
    try:
        graph = run_pseudo_graph(text)
    except (CypherSyntaxError, UnsafeQueryError) as exc:
        run.record("sketch", error=str(exc), triples=[])
        return []
    triples = [tuple(t) for t in graph.triples if t[1] != "name"]
    run.record("sketch", triples=[list(t) for t in triples])
    return triples


def complete_lines(cypher: str) -> str:
    """A CREATE statement cut off mid-line, up to its last complete pattern line."""
    lines = cypher.replace("```cypher", "").replace("```", "").strip().splitlines()
    while lines and not lines[-1].rstrip().endswith((")", "),")):
        lines.pop()
    if lines:
        lines[-1] = lines[-1].rstrip().rstrip(",")
    return "\n".join(lines)


def verify(index, subject_iri: str, subject_label: str, triples: Sequence[tuple[str, str, str]], run, *,
           top_k: int = 3, threshold: float = DEFAULT_THRESHOLD, step: str = "verification") -> list[Evidence]:
    """The store triples that back the sketched facts: each looked up among the subject's
    triples, its hits at or above ``threshold`` kept, best first, each once."""
    if not triples:
        return []
    texts = [f"{subject_label} | {relation_words(r)} | {o}" for _, r, o in triples]
    found = search_triples_about(index, texts, [[subject_iri]] * len(texts), top_k)
    kept: dict[tuple, Evidence] = {}
    trace = []
    for text, hits in zip(texts, found):
        good = [e for e in hits if (e.score or 0.0) >= threshold]
        trace.append({"query": text, "kept": [[e.text(), round(e.score or 0.0, 4)] for e in good],
                      "dropped": [[e.text(), round(e.score or 0.0, 4)] for e in hits if e not in good]})
        for e in good:
            if _readable(e):
                kept.setdefault((e.s, e.p, e.o), e)
    run.record(step, threshold=threshold, lookups=trace)
    return list(kept.values())


def telling_facts(store, subject_iri: str, *, limit: int = 60) -> list[Evidence]:
    """The subject's direct facts, along the relations the store holds most first, then
    the facts that point at it; values without a name (a bare IRI, a web address) left out."""
    edges = [edge_evidence(e) for e in store.edges(subject_iri, direction="both", limit=limit)]
    edges = [e for e in edges if _readable(e)]
    # a fact pointing back along a relation the subject states already (a border both
    # ways) says nothing new
    stated = {(e.p, e.o) for e in edges if e.s == subject_iri}
    edges = [e for e in edges if e.s == subject_iri or (e.p, e.s) not in stated]
    usage = store.relation_usage(e.p for e in edges)
    return sorted(edges, key=lambda e: (e.s != subject_iri, -usage.get(e.p, 0), e.p_label or e.p))


def description_fact(store, subject_iri: str, subject_label: str) -> Evidence | None:
    view = store.entity(subject_iri, max_facts=1)
    if view is None or not view.description:
        return None
    return Evidence(s=subject_iri, p=DESCRIPTION, o=view.description, s_label=subject_label,
                    p_label="description", literal=True)


def neighbour_facts(store, evidence: Sequence[Evidence], subject_iri: str, *, per_entity: int = 8
                    ) -> list[Evidence]:
    """The outgoing facts of the entities the subject's facts lead to (one hop on), through
    relations with one value only: the city an airport serves says something about the
    airport; one of the seven countries a mountain range crosses does not."""
    values: dict[str, list[str]] = {}
    for e in evidence:
        if e.s == subject_iri and not e.literal:
            values.setdefault(e.p, []).append(e.o)
    out: list[Evidence] = []
    for iri in dict.fromkeys(objects[0] for objects in values.values() if len(objects) == 1):
        out += [edge_evidence(x) for x in store.edges(iri, direction="out", limit=per_entity)]
    return [e for e in out if _readable(e) and e.o != subject_iri]


@dataclass(frozen=True)
class SubjectEvidence:
    """What one store holds about the subject, each triple with where it came from
    (``sketch`` or ``telling``): ``own``, its verified sketch facts, description and
    telling facts, in that order; ``neighbours``, the facts of the entities it leads to."""

    own: list[tuple[Evidence, str]]
    neighbours: list[tuple[Evidence, str]]


def subject_evidence(store, index, iri: str, label: str, sketched: Sequence[tuple[str, str, str]], run, *,
                     threshold: float = DEFAULT_THRESHOLD, store_name: str | None = None) -> SubjectEvidence:
    """The sketch verified against ``store``'s triple index, the subject's description and
    telling facts, and its neighbours' facts; with ``store_name`` every triple is marked
    with it (an answer from several stores)."""
    step = "verification" if store_name is None else f"verification {store_name}"
    verified = verify(index, iri, label, sketched, run, threshold=threshold, step=step)
    described = description_fact(store, iri, label)
    own = telling_facts(store, iri)
    items = ([(e, "sketch") for e in verified] + ([(described, "telling")] if described else [])
             + [(e, "telling") for e in own])
    neighbours = [(e, "telling") for e in neighbour_facts(store, own, iri)]
    if store_name is not None:
        items = [(replace(e, store=store_name), source) for e, source in items]
        neighbours = [(replace(e, store=store_name), source) for e, source in neighbours]
    return SubjectEvidence(items, neighbours)


def number_facts(gathered: Sequence[SubjectEvidence], *, max_facts: int = 8, max_values: int = 8) -> list[Fact]:
    """The numbered facts of one store's evidence or several's: each relation of a subject
    one fact, descriptions first, the stores taken in turn so that each is heard within
    ``max_facts``; the neighbours' facts only when the subjects' own leave room. A triple
    two stores both hold counts once, for the first."""
    seen: set[tuple[str, str, str]] = set()
    own, neighbours = [], []
    for g in gathered:
        own.append(_grouped(_unseen(g.own, seen)))
        neighbours.append(_grouped(_unseen(g.neighbours, seen)))
    groups = _in_turn([_first_description(groups) for groups in own])
    if len(groups) < max_facts:
        taken = {g[0] for g in groups}
        groups += [g for g in _in_turn(neighbours) if g[0] not in taken]
    facts = []
    for n, (evidence, same, source) in enumerate(_said_once(_first_description(groups))[:max_facts], 1):
        first = evidence[:max_values]
        facts.append(Fact(n, first[0].s_label or first[0].s, first[0].p_label or first[0].p,
                          tuple(value_text(e) for e in first), tuple(first) + tuple(same), source, first[0].store))
    return facts


def _said_once(groups) -> list[tuple[list[Evidence], list[Evidence], str]]:
    """Each group as (its evidence, the evidence of later groups of other stores that say
    the same: the same relation's name and values about a subject of the same name, a
    place of birth both stores hold), its source; the groups that say it again dropped."""
    out: list[tuple[list[Evidence], list[Evidence], str]] = []
    said: dict[tuple, int] = {}
    for _, source, evidence in groups:
        key = (evidence[0].s_label or evidence[0].s, evidence[0].p_label or evidence[0].p,
               tuple(sorted(value_text(e) for e in evidence)))
        if key in said and out[said[key]][0][0].store != evidence[0].store:
            out[said[key]][1].extend(evidence)
            continue
        said.setdefault(key, len(out))
        out.append((evidence, [], source))
    return out


def ground_graph(store, index, question: str, reading: OpenReading, run, *, max_facts: int = 8,
                 max_values: int = 8, threshold: float = DEFAULT_THRESHOLD, verify_sketch: bool = True,
                 subject: tuple[str, str] | None = None) -> GroundGraph | None:
    """The numbered facts an open answer may state; None when the store holds no entity
    of the subject's name. ``subject`` skips linking (the caller knows the entity)."""
    subject = subject or link_subject(index, reading)
    if subject is None:
        run.record("ground_graph", subject=None)
        return None
    iri, label = subject
    sketched = sketch(run, question)
    if not verify_sketch:
        facts = [Fact(n, label, relation_words(r), (o,), (), "sketch-unverified")
                 for n, (_, r, o) in enumerate(sketched[:max_facts], 1)]
        run.record("ground_graph", subject=iri, facts=[f.text() for f in facts])
        return GroundGraph(iri, label, facts)
    gathered = subject_evidence(store, index, iri, label, sketched, run, threshold=threshold)
    facts = number_facts([gathered], max_facts=max_facts, max_values=max_values)
    run.record("ground_graph", subject=iri, facts=[f"{f.text()}  ({f.source})" for f in facts])
    return GroundGraph(iri, label, facts)


def _unseen(items: Sequence[tuple[Evidence, str]], seen: set[tuple[str, str, str]]) -> list[tuple[Evidence, str]]:
    out = []
    for e, source in items:
        if (e.s, e.p, e.o) not in seen:
            seen.add((e.s, e.p, e.o))
            out.append((e, source))
    return out


def _in_turn(lists: Sequence[list]) -> list:
    """The lists' items taken in turn, one from each: ``[a1, b1, a2, b2, a3]``."""
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        out += [x[i] for x in lists if i < len(x)]
    return out


def _grouped(items: Sequence[tuple[Evidence, str]]) -> list[tuple[tuple, str, list[Evidence]]]:
    """Evidence grouped by (store, subject, relation), in first-seen order, each triple
    once: (that key, source of the first, evidence)."""
    groups: dict[tuple, tuple[str, list[Evidence]]] = {}
    seen: set[tuple] = set()
    for e, source in items:
        if (e.s, e.p, e.o) in seen:
            continue
        seen.add((e.s, e.p, e.o))
        groups.setdefault((e.store, e.s, e.p), (source, []))[1].append(e)
    return [(key, source, evidence) for key, (source, evidence) in groups.items()]


def _first_description(groups):
    """The description first: it says what the subject is, which a paragraph opens with."""
    return sorted(groups, key=lambda g: g[0][2] != DESCRIPTION)


def _readable(e: Evidence) -> bool:
    """A fact people can read: no web address or nameless node as its value."""
    value = e.o if e.literal else e.o_label
    if e.literal and "wktLiteral" in (e.datatype or "") or (value or "").startswith("Point("):
        return False  # coordinates
    return bool(value) and bool(e.s_label) and not value.startswith(("http://", "https://"))

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


def sketch(run, question: str, *, max_tokens: int = 110) -> list[tuple[str, str, str]]:
    """The facts the model would state, as (subject, relation, object) pseudo-triples."""
    completion = run.ask("sketch", "open_sketch", {"question": question}, max_tokens=max_tokens, temperature=0.0,
                         grammar=grammar_text("pseudo_graph_cypher"))
    try:
        graph = run_pseudo_graph(completion.text)
    except (CypherSyntaxError, UnsafeQueryError) as exc:
        run.record("sketch", error=str(exc), triples=[])
        return []
    triples = [tuple(t) for t in graph.triples if t[1] != "name"]
    run.record("sketch", triples=[list(t) for t in triples])
    return triples


def verify(index, subject_iri: str, subject_label: str, triples: Sequence[tuple[str, str, str]], run, *,
           top_k: int = 3, threshold: float = DEFAULT_THRESHOLD) -> list[Evidence]:
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
    run.record("verification", threshold=threshold, lookups=trace)
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
    verified = verify(index, iri, label, sketched, run, threshold=threshold)
    described = description_fact(store, iri, label)
    own = telling_facts(store, iri)
    groups = _grouped([(e, "sketch") for e in verified] + ([(described, "telling")] if described else [])
                      + [(e, "telling") for e in own])
    if len(groups) < max_facts:
        groups += [g for g in _grouped([(e, "telling") for e in neighbour_facts(store, own, iri)])
                   if (g[0], g[1]) not in {(x[0], x[1]) for x in groups}]
    groups = _first_description(groups)[:max_facts]
    facts = [Fact(n, evidence[0].s_label or evidence[0].s, evidence[0].p_label or evidence[0].p,
                  tuple(value_text(e) for e in evidence[:max_values]), tuple(evidence[:max_values]), source)
             for n, (_, _, source, evidence) in enumerate(groups, 1)]
    run.record("ground_graph", subject=iri, facts=[f"{f.text()}  ({f.source})" for f in facts])
    return GroundGraph(iri, label, facts)


def _grouped(items: Sequence[tuple[Evidence, str]]) -> list[tuple[str, str, str, list[Evidence]]]:
    """Evidence grouped by (subject, relation), in first-seen order, each triple once:
    (subject, relation, source of the first, evidence)."""
    groups: dict[tuple[str, str], tuple[str, list[Evidence]]] = {}
    seen: set[tuple] = set()
    for e, source in items:
        if (e.s, e.p, e.o) in seen:
            continue
        seen.add((e.s, e.p, e.o))
        groups.setdefault((e.s, e.p), (source, []))[1].append(e)
    return [(s, p, source, evidence) for (s, p), (source, evidence) in groups.items()]


def _first_description(groups):
    """The description first: it says what the subject is, which a paragraph opens with."""
    return sorted(groups, key=lambda g: g[1] != DESCRIPTION)


def _readable(e: Evidence) -> bool:
    """A fact people can read: no web address or nameless node as its value."""
    value = e.o if e.literal else e.o_label
    if e.literal and "wktLiteral" in (e.datatype or "") or (value or "").startswith("Point("):
        return False  # coordinates
    return bool(value) and bool(e.s_label) and not value.startswith(("http://", "https://"))

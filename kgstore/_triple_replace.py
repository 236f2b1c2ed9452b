"""Replacing entities in the triples (Oxigraph): an entity document is the whole truth
about the triples it owns, so a newer one takes the place of everything the older one put
there, in one transaction.

What an entity owns: the triples whose subject it is, and under ``--statements full`` its
statement nodes (``wds:``, reached through ``p:Pn``) with their qualifiers, ranks and
references. Value nodes (``wdv:``) and reference nodes (``wdref:``) are named after their
content, so several statements can share one: they go only when no triple points at them
any more, as a fresh load of the new data would not have them. Triples that other
entities hold about an entity stay, because they are those entities' own; a redirect is
the one exception: its old id's incoming triples move to the target.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from .terms import SCHEMA, WD, WDREF, WDS, WDV, WIKIDATA_ENTITY_DATA

SCHEMA_ABOUT = SCHEMA + "about"

_SHARED_NODES = (WDV, WDREF)


@dataclass(frozen=True)
class TripleChange:
    """What one batch of an update does to the triples."""

    gone: frozenset[str]  # entity IRIs whose own triples go (replaced, deleted or redirected away)
    redirects: tuple[tuple[str, str], ...]  # (from IRI, to IRI): incoming triples move
    ntriples: bytes  # the new documents' triples, N-Triples


@dataclass
class TripleChangeReport:
    removed: int = 0  # triples the gone entities owned, and shared nodes nobody uses now
    moved: int = 0  # incoming triples moved by redirects
    statement_nodes: int = 0


def replace_in_triples(store, change: TripleChange) -> TripleChangeReport:
    """Apply ``change`` to ``store``'s Oxigraph store as one SPARQL update, which Oxigraph
    runs in one transaction: a reader sees every entity of the batch old or new, never
    half-replaced. Repeat-safe: running it again changes nothing."""
    rdf: ox.Store = store.rdf
    report = TripleChangeReport()
    owned: list[ox.Quad] = []
    owners = set(change.gone)
    shared: set[str] = set()
    graph = ox.DefaultGraph()
    subjects = sorted(change.gone)
    # An entity's RDF also describes its document (data:Q42: version, dates, sitelink
    # count) and its sitelinks' articles, each `schema:about` it: those are its own too.
    about = ox.NamedNode(SCHEMA_ABOUT)
    for iri in list(subjects):
        described = {q.subject.value for q in rdf.quads_for_pattern(None, about, ox.NamedNode(iri), graph)
                     if isinstance(q.subject, ox.NamedNode)}
        if iri.startswith(WD):
            described.add(WIKIDATA_ENTITY_DATA + iri[len(WD):])
        subjects += sorted(described - owners)
        owners |= described
    for iri in subjects:
        for quad in rdf.quads_for_pattern(ox.NamedNode(iri), None, None, graph):
            owned.append(quad)
            obj = quad.object
            if isinstance(obj, ox.NamedNode) and obj.value.startswith(WDS) and obj.value not in owners:
                owners.add(obj.value)
                report.statement_nodes += 1
                for inner in rdf.quads_for_pattern(obj, None, None, graph):
                    owned.append(inner)
                    value = inner.object
                    if isinstance(value, ox.NamedNode) and value.value.startswith(_SHARED_NODES):
                        shared.add(value.value)
    removed_incoming: list[ox.Quad] = []
    moved: list[str] = []
    targets = dict(change.redirects)
    for source, target in change.redirects:
        for quad in rdf.quads_for_pattern(None, None, ox.NamedNode(source), graph):
            if quad.subject.value in owners:
                continue  # the subject's own triples go with it (and come back from its new document)
            removed_incoming.append(quad)
            moved.append(f"{quad.subject} {quad.predicate} <{final_target(target, targets)}> .")
    report.removed, report.moved = len(owned), len(moved)
    # In this order: a moved triple may be about a shared node that nothing uses any
    # more (a reference of a replaced statement), which must then go too.
    operations = []
    if owned or removed_incoming:
        operations.append("DELETE DATA {\n" + "\n".join(_line(q) for q in owned + removed_incoming) + "\n}")
    if moved:
        operations.append("INSERT DATA {\n" + "\n".join(moved) + "\n}")
    if shared:
        values = " ".join(f"<{iri}>" for iri in sorted(shared))
        operations.append(f"DELETE {{ ?v ?p ?o }} WHERE {{ VALUES ?v {{ {values} }} ?v ?p ?o "
                          f"FILTER NOT EXISTS {{ ?x ?y ?v }} }}")
    inserted = _redirected(change.ntriples, targets)
    if inserted.strip():
        operations.append("INSERT DATA {\n" + inserted + "\n}")
    if operations:
        store.update(" ;\n".join(operations))
    return report


def _line(quad: ox.Quad) -> str:
    return f"{quad.subject} {quad.predicate} {quad.object} ."


def final_target(target: str, targets: dict[str, str]) -> str:
    """Where a chain of redirects in one batch ends (A to B, B to C: A to C)."""
    seen = set()
    while target in targets and target not in seen:
        seen.add(target)
        target = targets[target]
    return target


def _redirected(ntriples: bytes, targets: dict[str, str]) -> str:
    """The new documents' triples, an object that was redirected away in the same batch
    pointing at its target: the redirect is the newer truth."""
    text = ntriples.decode("utf-8")
    for source in targets:
        text = text.replace(f"> <{source}> .\n", f"> <{final_target(source, targets)}> .\n")
    return text

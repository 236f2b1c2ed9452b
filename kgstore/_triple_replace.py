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



@dataclass(frozen=True)
class TripleChange:
    """What one batch of an update does to the triples."""

    gone: frozenset[str]  # entity IRIs whose own triples go (replaced, deleted or redirected away)
    redirects: tuple[tuple[str, str], ...]  # (from IRI, to IRI): incoming triples move
    ntriples: bytes  # the new documents' triples, N-Triples
    # Whether the store holds statement nodes (loaded with ``--statements full``): looking
    # for them among a truthy store's triples cost a third of the replace (bench/update.py).
    statement_nodes: bool = True


@dataclass
class TripleChangeReport:
    shared_nodes: int = 0  # value and reference nodes checked for other users
    described: int = 0  # subjects `schema:about` a gone entity (its dataset record, articles)


def replace_in_triples(store, change: TripleChange) -> TripleChangeReport:
    """Apply ``change`` to ``store``'s Oxigraph store as one SPARQL update, which Oxigraph
    runs in one transaction: a reader sees every entity of the batch old or new, never
    half-replaced. Repeat-safe: running it again changes nothing.

    The matching runs in Oxigraph (a pattern per kind of owned triple over the batch's
    entities as VALUES): reading the owned triples into Python first cost twice as much."""
    report = TripleChangeReport()
    targets = dict(change.redirects)
    if not change.gone and not change.ntriples:
        return report
    entities = _values(sorted(change.gone))
    operations = []
    if change.gone:
        # An entity's RDF also describes its document (data:Q42: version, dates, sitelink
        # count) and its sitelinks' articles, each `schema:about` it: those are its own too.
        described = {WIKIDATA_ENTITY_DATA + iri[len(WD):] for iri in change.gone if iri.startswith(WD)}
        described |= _column(store, f"SELECT DISTINCT ?d WHERE {{ VALUES ?s {{ {entities} }} "
                                    f"?d <{SCHEMA_ABOUT}> ?s FILTER(isIRI(?d)) }}")
        report.described = len(described)
        shared: set[str] = set()
        if change.statement_nodes:
            statement_nodes = (f"VALUES ?s {{ {entities} }} ?s ?p ?n "
                               f"FILTER(isIRI(?n) && STRSTARTS(STR(?n), \"{WDS}\"))")
            shared = _column(store, f"SELECT DISTINCT ?v WHERE {{ {statement_nodes} ?n ?q ?v "
                                    f"FILTER(isIRI(?v) && (STRSTARTS(STR(?v), \"{WDV}\") "
                                    f"|| STRSTARTS(STR(?v), \"{WDREF}\"))) }}")
            report.shared_nodes = len(shared)
            operations.append(f"DELETE {{ ?n ?q ?v }} WHERE {{ {statement_nodes} ?n ?q ?v }}")
        owners = _values(sorted(change.gone | described))
        operations.append(f"DELETE {{ ?s ?p ?o }} WHERE {{ VALUES ?s {{ {owners} }} ?s ?p ?o }}")
        # Redirects move what others hold about the old id (its own triples went above).
        if targets:
            moves = " ".join(f"(<{source}> <{final_target(target, targets)}>)" for source, target in targets.items())
            operations.append(f"DELETE {{ ?x ?p ?from }} INSERT {{ ?x ?p ?to }} WHERE {{ "
                              f"VALUES (?from ?to) {{ {moves} }} ?x ?p ?from }}")
        # After the moves: a moved triple may be about a shared node nothing uses any more.
        if shared:
            operations.append(f"DELETE {{ ?v ?p ?o }} WHERE {{ VALUES ?v {{ {_values(sorted(shared))} }} ?v ?p ?o "
                              f"FILTER NOT EXISTS {{ ?x ?y ?v }} }}")
    inserted = _redirected(change.ntriples, targets)
    if inserted.strip():
        operations.append("INSERT DATA {\n" + inserted + "\n}")
    store.update(" ;\n".join(operations))
    return report


def _values(iris) -> str:
    return " ".join(f"<{iri}>" for iri in iris)


def _column(store, sparql: str) -> set[str]:
    return {row[0].value for row in store.rdf.query(sparql)}


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

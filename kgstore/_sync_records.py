"""Rows of a SPARQL endpoint as what the catalog is made of: :func:`triples_of_solutions`
reads ``?s ?p ?o`` solutions (parsed by pyoxigraph) into :class:`kgstore.Triple`\\ s, and
:func:`catalog_records` gives the entity and relation records of a page of them, by the
rules of the Wikidata RDF loader (labels, descriptions and aliases in the store's languages,
``wdt:`` relations labelled from their ``wd:P`` property, property datatypes). Pure.

Two things an RDF dump of another vocabulary brings are read too, because a store over an
endpoint has no loader of its own to read them: a label with no language tag counts as one
in the store's first language, and Freebase's and schema.org's names, descriptions and
aliases count as ``rdfs:label``, ``schema:description`` and ``skos:altLabel``.
"""
from __future__ import annotations

import hashlib
from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from .records import EntityRecord, RelationRecord, Triple
from .terms import (FB, FB_DESCRIPTION, FB_NAME, RDFS_LABEL, SCHEMA, SCHEMA_DESCRIPTION, SKOLEM, SKOS,
                    SKOS_ALTLABEL, WDT, XSD)

XSD_STRING = XSD + "string"
_AS_LABEL = {RDFS_LABEL: RDFS_LABEL, SKOS + "prefLabel": RDFS_LABEL, SCHEMA + "name": RDFS_LABEL,
             FB_NAME: RDFS_LABEL, SCHEMA_DESCRIPTION: SCHEMA_DESCRIPTION, FB_DESCRIPTION: SCHEMA_DESCRIPTION,
             SKOS_ALTLABEL: SKOS_ALTLABEL, FB + "common.topic.alias": SKOS_ALTLABEL}
_WIKIBASE_ROOT = "http://wikiba.se/"
_EVERY, _FIRST = 2, 1  # _candidates: every triple of the predicate, the first only
_new = tuple.__new__  # Triple(...) without the Python-level __new__, on the hot path
_NamedNode, _BlankNode, _Literal = ox.NamedNode, ox.BlankNode, ox.Literal


def blank_node_prefix(endpoint: str) -> str:
    """Skolem IRIs for the endpoint's blank nodes (objects only: subjects are paged by IRI)."""
    return f"{SKOLEM}{hashlib.blake2s(('sparql-endpoint:' + endpoint).encode(), digest_size=6).hexdigest()}/"


def triples_of_solutions(solutions: Iterable, bnode_prefix: str) -> Iterator[Triple]:
    """Triples of ``?s ?p ?o`` solutions parsed by pyoxigraph (rows whose subject is not an
    IRI are skipped; literals as the loaders write them: no ``xsd:string`` datatype)."""
    for s, p, o in solutions:
        if type(s) is not _NamedNode or type(p) is not _NamedNode:
            continue
        to = type(o)
        if to is _NamedNode:
            yield _new(Triple, (s.value, p.value, o.value, False, None, None))
        elif to is _Literal:
            lang = o.language
            if lang:
                yield _new(Triple, (s.value, p.value, o.value, True, None, lang))
            else:
                dt = o.datatype.value
                yield _new(Triple, (s.value, p.value, o.value, True, None if dt == XSD_STRING else dt, None))
        elif to is _BlankNode:
            yield _new(Triple, (s.value, p.value, bnode_prefix + o.value, False, None, None))


def triples_of_quads(quads: Iterable, bnode_prefix: str) -> Iterator[Triple]:
    """The same of quads parsed by pyoxigraph from N-Triples (the answer of a CONSTRUCT)."""
    return triples_of_solutions(((q.subject, q.predicate, q.object) for q in quads), bnode_prefix)


def catalog_records(triples: Sequence[Triple] | None, languages: Sequence[str], *,
                    columns: pa.StructArray | None = None) -> tuple[list[EntityRecord], list[RelationRecord]]:
    """Entity and relation records of ``triples`` (see the module docstring). With
    ``columns`` (the same triples as :func:`kgstore._columns.triple_columns`) only the rows
    that can make a record are looked at in Python (:func:`_candidates`), and ``triples``
    may be None."""
    from loaders.wikidata_rdf import catalog_records as wikidata_records

    first = languages[0] if languages else "en"
    named = []
    for t in (triples if columns is None else _candidates(triples, columns)):
        as_ = _AS_LABEL.get(t.p)
        if as_ is None or not t.literal:
            if t.p.startswith(WDT) or t.p.startswith(_WIKIBASE_ROOT):
                named.append(t)
            continue
        if as_ != t.p or t.lang is None:
            t = _new(Triple, (t.s, as_, t.o, True, None, t.lang or first))
        named.append(t)
    return wikidata_records(named, tuple(languages))


def _candidates(triples: Sequence[Triple] | None, columns: pa.StructArray) -> list[Triple]:
    """The triples of a page that :func:`catalog_records` reads, in page order: every one
    whose predicate is a label, description or alias predicate or Wikibase's, and the first
    of each ``wdt:`` predicate (of those only the predicate makes a record). The predicates
    are told apart once each: a page has few of them. A page of Wikidata-shaped triples
    was about 60% ``wdt:`` facts, looked at one by one before."""
    encoded = pc.dictionary_encode(columns.field("p"))
    kinds = np.array([_EVERY if x in _AS_LABEL or x.startswith(_WIKIBASE_ROOT) else _FIRST if x.startswith(WDT)
                      else 0 for x in encoded.dictionary.to_pylist()], np.int8)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    wanted = np.flatnonzero(kinds[codes] == _EVERY)
    if (kinds == _FIRST).any():
        present, first_rows = np.unique(codes, return_index=True)
        wanted = np.union1d(wanted, first_rows[kinds[present] == _FIRST])
    if triples is not None:
        return [triples[i] for i in wanted]
    picked = pc.take(columns, pa.array(wanted, pa.int64())).flatten()
    return [_new(Triple, row) for row in zip(*(c.to_pylist() for c in picked))]


__all__ = ["triples_of_solutions", "triples_of_quads", "catalog_records", "blank_node_prefix"]

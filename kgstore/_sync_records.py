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

import pyoxigraph as ox

from .records import EntityRecord, RelationRecord, Triple
from .terms import (FB, FB_DESCRIPTION, FB_NAME, RDFS_LABEL, SCHEMA, SCHEMA_DESCRIPTION, SKOLEM, SKOS,
                    SKOS_ALTLABEL, XSD)

XSD_STRING = XSD + "string"
_AS_LABEL = {RDFS_LABEL: RDFS_LABEL, SKOS + "prefLabel": RDFS_LABEL, SCHEMA + "name": RDFS_LABEL,
             FB_NAME: RDFS_LABEL, SCHEMA_DESCRIPTION: SCHEMA_DESCRIPTION, FB_DESCRIPTION: SCHEMA_DESCRIPTION,
             SKOS_ALTLABEL: SKOS_ALTLABEL, FB + "common.topic.alias": SKOS_ALTLABEL}
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


def catalog_records(triples: Sequence[Triple],
                    languages: Sequence[str]) -> tuple[list[EntityRecord], list[RelationRecord]]:
    """Entity and relation records of ``triples`` (see the module docstring)."""
    from loaders.wikidata_rdf import catalog_records as wikidata_records

    first = languages[0] if languages else "en"
    named = []
    for t in triples:
        as_ = _AS_LABEL.get(t.p)
        if as_ is None or not t.literal:
            if t.p.startswith("http://www.wikidata.org/prop/direct/") or t.p.startswith("http://wikiba.se/"):
                named.append(t)
            continue
        if as_ != t.p or t.lang is None:
            t = _new(Triple, (t.s, as_, t.o, True, None, t.lang or first))
        named.append(t)
    return wikidata_records(named, tuple(languages))


__all__ = ["triples_of_solutions", "catalog_records", "blank_node_prefix"]

"""IRIs and prefixes of the vocabularies kgstore writes (N-Triples text: kgstore/_columns.py). Pure functions."""
from __future__ import annotations

import hashlib
import re

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PQ = "http://www.wikidata.org/prop/qualifier/"
PR = "http://www.wikidata.org/prop/reference/"
PSV = "http://www.wikidata.org/prop/statement/value/"
PQV = "http://www.wikidata.org/prop/qualifier/value/"
WDS = "http://www.wikidata.org/entity/statement/"
WDNO = "http://www.wikidata.org/prop/novalue/"
WDV = "http://www.wikidata.org/value/"
WDREF = "http://www.wikidata.org/reference/"
WIKIDATA_ENTITY_DATA = "https://www.wikidata.org/wiki/Special:EntityData/"
WIKIBASE = "http://wikiba.se/ontology#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SCHEMA = "http://schema.org/"
SKOS = "http://www.w3.org/2004/02/skos/core#"
PROV = "http://www.w3.org/ns/prov#"
GEO = "http://www.opengis.net/ont/geosparql#"
FB = "http://rdf.freebase.com/ns/"
KG = "http://kgstore.local/entity/"
KGR = "http://kgstore.local/relation/"
KGS = "http://kgstore.local/vocab#"
SKOLEM = "http://kgstore.local/.well-known/genid/"

RDFS_LABEL = RDFS + "label"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
RDF_TYPE = RDF + "type"
SCHEMA_DESCRIPTION = SCHEMA + "description"
SKOS_ALTLABEL = SKOS + "altLabel"
FB_NAME = FB + "type.object.name"
FB_DESCRIPTION = FB + "common.topic.description"

DEFAULT_PREFIXES: dict[str, str] = {
    "wd": WD, "wdt": WDT, "p": P, "ps": PS, "pq": PQ, "pr": PR, "psv": PSV, "pqv": PQV,
    "wds": WDS, "wdno": WDNO, "wikibase": WIKIBASE, "rdf": RDF, "rdfs": RDFS, "xsd": XSD,
    "schema": SCHEMA, "skos": SKOS, "prov": PROV, "geo": GEO, "fb": FB, "kg": KG, "kgr": KGR,
    "kgs": KGS,
}

# Triples with these predicates describe an entity; they go to the catalog's entity
# columns, not to the statements table (they still live in Oxigraph).
ANNOTATION_PREDICATES = frozenset({
    RDFS_LABEL, SCHEMA_DESCRIPTION, SKOS_ALTLABEL, FB_NAME, FB_DESCRIPTION,
    SCHEMA + "name", FB + "common.topic.alias", SKOS + "prefLabel",
})
# Wikidata's full statement model (statement nodes, qualifiers, references, ranks) is kept
# in Oxigraph only; the statements table holds the direct (truthy) facts.
STATEMENT_NODE_PREFIXES = (P, WIKIBASE, PROV, WDS, WDNO, SCHEMA + "about", SCHEMA + "version",
                           SCHEMA + "dateModified", SCHEMA + "isPartOf", SCHEMA + "inLanguage")


def is_fact_predicate(p: str) -> bool:
    if p in ANNOTATION_PREDICATES:
        return False
    # P is a prefix of PS/PQ/PR too, so one check covers the whole p: family; but WDT
    # (".../prop/direct/") also starts with P and must stay a fact.
    if p.startswith(WDT):
        return True
    return not p.startswith(STATEMENT_NODE_PREFIXES)


# Wikidata's RDF also describes its own bookkeeping: statement, value and reference nodes,
# the dataset record of each entity, the dump, sitelink articles, "no value" classes. None
# of it is a fact about the world, so the statements table leaves it out (Oxigraph has it):
# see kgstore._columns.fact_mask.
BOOKKEEPING_SUBJECT_PREFIXES = (WDS, WDV, WDREF, WIKIDATA_ENTITY_DATA, WIKIBASE)
BOOKKEEPING_CLASS_PREFIXES = (WIKIBASE, WDNO, SCHEMA + "Article", SCHEMA + "Dataset")


def is_true(term) -> bool:
    """A boolean a query bound (``BIND(true AS ?back)``), read from its result row. Virtuoso
    has no boolean type: it returns ``true`` as the integer ``1`` and ``false`` as ``0``."""
    return term is not None and term.value in ("true", "1")


def skolem_iri(scope: str, label: str) -> str:
    """A stable IRI for blank node ``label`` of a file identified by ``scope``."""
    h = hashlib.blake2s(scope.encode("utf-8"), digest_size=6).hexdigest()
    return f"{SKOLEM}{h}/{label}"


def local_name(iri: str) -> str:
    """The part of an IRI after its last '/', '#' (Freebase: after ns/)."""
    if iri.startswith(FB):
        return iri[len(FB):]
    cut = max(iri.rfind("/"), iri.rfind("#"))
    return iri[cut + 1:] if cut >= 0 else iri


def shorten(iri: str, prefixes: dict[str, str] = DEFAULT_PREFIXES) -> str:
    best = ""
    best_prefix = ""
    for name, ns in prefixes.items():
        if iri.startswith(ns) and len(ns) > len(best):
            best, best_prefix = ns, name
    if best:
        rest = iri[len(best):]
        if re.fullmatch(r"[A-Za-z0-9_.\-]*", rest) and not rest.endswith("."):
            return f"{best_prefix}:{rest}"
    return f"<{iri}>"


def expand(term: str, prefixes: dict[str, str] = DEFAULT_PREFIXES) -> str:
    """The IRI of ``prefix:local`` or ``<iri>`` (the inverse of :func:`shorten`); a term
    with an unknown prefix comes back unchanged."""
    if term.startswith("<") and term.endswith(">"):
        return term[1:-1]
    prefix, sep, local = term.partition(":")
    ns = prefixes.get(prefix) if sep else None
    return ns + local.replace("\\", "") if ns is not None else term


_IRI_BAD = re.compile(r'[\x00-\x20<>"{}|^`\\]')


def iri_is_valid(iri: str) -> bool:
    return ":" in iri and not _IRI_BAD.search(iri)

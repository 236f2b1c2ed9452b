"""Wikidata JSON: dumps (``latest-all.json[.gz|.bz2]``), one-entity-per-line files and
single entity documents, mapped to Wikidata's own RDF vocabulary.

Input shapes, told apart by the file's first lines:

* the dump framing: ``[``, one entity per line ending in ``,``, ``]``; also plain
  one-entity-per-line files. Each line is parsed on its own, so a malformed line is
  rejected with its number and the rest loads; batches end on line boundaries, so a run
  resumes at a byte offset. A batch is ``options.batch_size`` lines, or fewer once it
  holds :data:`MAX_BATCH_TRIPLES` triples (big entities in full mode), which bounds memory.
  In truthy mode a line is first decoded by msgspec into just the fields the mapping
  reads (loaders/_wikidata_typed.py, :func:`typed_entity_records`); a line of another
  shape goes the ordinary way (orjson, :func:`entity_to_records`).
* a single document: a whole file holding one JSON value, possibly pretty-printed: an
  entity, Special:EntityData's / the API's ``{"entities": {"Q42": {...}}}``, or an array
  of entities. It is read whole (such files are small) and committed as one batch.

What an entity becomes (see :func:`entity_to_records`):

* ``rdfs:label``, ``schema:description``, ``skos:altLabel`` for ``options.languages``;
* truthy statements ``wdt:Pn``: of each property's claims, the preferred ones if there are
  any, else the normal ones, never the deprecated ones (Wikidata's "best rank");
* with ``options.statements == "full"`` also ``p:Pn`` → ``wds:<statement id>`` nodes with
  ``ps:Pn`` (value), ``pq:Pn`` (qualifiers), ``psv:``/``pqv:`` value nodes (precision,
  calendar, unit, bounds, globe), ``wikibase:rank`` and references
  (``prov:wasDerivedFrom`` → ``wdref:<hash>`` with ``pr:Pn`` values);
* "some value" snaks become a skolem IRI per snak (an unknown but existing value);
  "no value" snaks make the statement node ``a wdno:Pn`` in full mode and are left out of
  truthy statements; both are counted;
* properties become a relation in the catalog under their ``wdt:`` IRI (the predicate the
  statements table holds) and an entity of kind "property" under ``wd:Pn`` with
  ``wikibase:directClaim`` and ``wikibase:propertyType``; they are kept whatever the
  entity allowlist says;
* items get their sitelink count in the catalog; the label there is the one in the first
  of ``options.languages`` that has one, else Wikidata's "mul" label;
* lexemes, mediainfo, missing entities and other types are skipped and counted.

Language tags, IRIs and ids are checked, so every triple is valid RDF: a value that
cannot be written (an unknown datavalue type, a malformed value) is counted and left out,
an entity whose structure is wrong (``"claims": []``, no ``"id"``) is rejected as a line.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from typing import Iterable, Iterator, NamedTuple
from urllib.parse import quote

import msgspec

from kgstore.errors import TruncatedInputError
from kgstore.records import (Batch, Checkpoint, EntityRecord, LoadOptions, RejectedLine, RelationRecord,
                             Triple)
from kgstore.terms import (P, PQ, PQV, PR, PROV, PS, PSV, RDF_TYPE, RDFS_LABEL, SCHEMA_DESCRIPTION,
                           SKOS_ALTLABEL, WD, WDNO, WDREF, WDS, WDT, WIKIBASE, skolem_iri)

from ._input import DumpReader
from ._prefetch import prefetched
from ._wikidata_typed import entity_decoder
from ._wikidata_values import (ENTITY_ID, RANKS, VALUE_NODE_TYPES, language_tag, property_type_iri, value_node,
                               value_term)

try:  # optional: about twice as fast as the standard library
    from orjson import JSONDecodeError as _JSONDecodeError, loads as _loads
    _REJECTS_SURROGATES = True  # orjson refuses lone UTF-16 surrogates (see _sound_text)
except ImportError:  # pragma: no cover - depends on the environment
    from json import JSONDecodeError as _JSONDecodeError, loads as _loads
    _REJECTS_SURROGATES = False

SOMEVALUE_SCOPE = "wikidata:somevalue"
# One skolem namespace for every file: a "some value" node is named after its statement,
# so the same statement read from two files is the same node.
_SOMEVALUE = skolem_iri(SOMEVALUE_SCOPE, "")
WIKIBASE_DIRECT_CLAIM = WIKIBASE + "directClaim"
WIKIBASE_PROPERTY_TYPE = WIKIBASE + "propertyType"
WIKIBASE_RANK = WIKIBASE + "rank"
PROV_DERIVED = PROV + "wasDerivedFrom"
_SAFE_STATEMENT_ID = re.compile(r"[A-Za-z0-9\-]+")
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_ENTITY_TYPES_BY_LETTER = {"Q": "item", "P": "property", "L": "lexeme", "M": "mediainfo", "E": "entity-schema"}
_MAX_RAW = 4000
MAX_BATCH_TRIPLES = 200_000
_new = tuple.__new__  # Triple(...) without the Python-level __new__: 3x faster on this hot path


class EntityRecords(NamedTuple):
    """What one entity becomes: its triples and catalog rows, and what was counted."""

    triples: list[Triple]
    entity: EntityRecord | None
    relation: RelationRecord | None
    counts: Counter


class _Mapping:
    """Per-LoadOptions lookups prepared once: language tags and per-property IRIs."""

    def __init__(self, options: LoadOptions):
        if options.statements not in ("truthy", "full"):
            raise ValueError(f"statements must be 'truthy' or 'full', not {options.statements!r}")
        self.full = options.statements == "full"
        # (code in the JSON, tag to write); codes that are no valid tag are dropped.
        self.languages = tuple((code, tag) for code in dict.fromkeys(options.languages)
                               if (tag := language_tag(code)) is not None)
        self.properties = options.properties
        self.entities = options.entities
        self._property_iris: dict[str, tuple | None] = {}
        # Truthy mode reads few fields: msgspec decodes just those (loaders/_wikidata_typed.py).
        self.decoder = self.language_fields = self.mul_field = None
        if not self.full:
            self.decoder, self.language_fields, self.mul_field = entity_decoder(
                tuple(code for code, _ in self.languages))

    def property_iris(self, pid) -> tuple | None:
        """(wdt, p, ps, pq, pr, psv, pqv, wdno) IRIs of property ``pid``, None if ``pid`` is no property id."""
        try:
            return self._property_iris[pid]
        except KeyError:
            pass
        iris = None
        if type(pid) is str and _PROPERTY_ID.fullmatch(pid):
            iris = (WDT + pid, P + pid, PS + pid, PQ + pid, PR + pid, PSV + pid, PQV + pid, WDNO + pid)
        self._property_iris[pid] = iris
        return iris


@functools.lru_cache(maxsize=16)
def _mapping(options: LoadOptions) -> _Mapping:
    return _Mapping(options)


class MalformedEntity(ValueError):
    """An entity whose structure is not Wikibase JSON; its line is rejected."""


def entity_to_records(entity: dict, options: LoadOptions, *, counts: Counter | None = None) -> EntityRecords:
    """Triples and catalog records of one Wikibase JSON entity. Pure.

    ``counts`` (updated in place when given) gets "items"/"properties"/"entities" for a
    kept entity, "skipped_<type>" for a skipped one, "somevalue", "novalue" and
    "unsupported_value:<type>" for snaks. Raises :class:`MalformedEntity` when the entity's
    structure is wrong.
    """
    if counts is None:
        counts = Counter()
    m = _mapping(options)
    eid = entity.get("id")
    if type(eid) is not str:
        raise MalformedEntity('the entity has no "id"' if eid is None else '"id" is not a string')
    if "missing" in entity:
        counts["skipped_missing"] += 1
        return EntityRecords([], None, None, counts)
    if not ENTITY_ID.fullmatch(eid):
        raise MalformedEntity(f"{eid!r} is not a Wikidata entity id")
    etype = entity.get("type") or _ENTITY_TYPES_BY_LETTER.get(eid[0], "unknown")
    if not _mapped(eid, etype, m, counts):
        return EntityRecords([], None, None, counts)

    labels = _object(entity, "labels")
    descriptions = _object(entity, "descriptions")
    aliases = _object(entity, "aliases")
    claims = _object(entity, "claims")
    s = WD + eid
    triples: list[Triple] = []
    append = triples.append
    label = description = None
    alias_texts: list[str] = []
    for code, tag in m.languages:
        term = labels.get(code)
        if term:
            label_text = _term_text(term, "labels", code)
            append(_new(Triple, (s, RDFS_LABEL, label_text, True, None, tag)))
            if label is None:
                label = label_text
        term = descriptions.get(code)
        if term:
            text = _term_text(term, "descriptions", code)
            append(_new(Triple, (s, SCHEMA_DESCRIPTION, text, True, None, tag)))
            if description is None:
                description = text
        for term in aliases.get(code) or ():
            text = _term_text(term, "aliases", code)
            append(_new(Triple, (s, SKOS_ALTLABEL, text, True, None, tag)))
            alias_texts.append(text)
    if label is None and "mul" in labels:
        # Wikidata's language-independent default label stands in for the catalog's label.
        label = _term_text(labels["mul"], "labels", "mul")

    if claims:
        _claims_to_triples(s, eid, claims, m, append, counts)

    sitelinks = entity.get("sitelinks")
    datatype = entity.get("datatype")
    return _records(s, eid, etype, triples, label, description, alias_texts,
                    len(sitelinks) if type(sitelinks) is dict else None, datatype, m, counts)


def typed_entity_records(entity, options: LoadOptions, *, counts: Counter) -> EntityRecords:
    """:func:`entity_to_records` for an entity decoded by ``_Mapping.decoder`` (truthy mode's
    fast path, see loaders/_wikidata_typed.py): the same records, counts and errors."""
    m = _mapping(options)
    eid = entity.id
    if entity.missing is not msgspec.UNSET:
        counts["skipped_missing"] += 1
        return EntityRecords([], None, None, counts)
    if not ENTITY_ID.fullmatch(eid):
        raise MalformedEntity(f"{eid!r} is not a Wikidata entity id")
    etype = entity.type or _ENTITY_TYPES_BY_LETTER.get(eid[0], "unknown")
    if not _mapped(eid, etype, m, counts):
        return EntityRecords([], None, None, counts)

    s = WD + eid
    triples: list[Triple] = []
    append = triples.append
    label = description = None
    alias_texts: list[str] = []
    labels, descriptions, aliases = entity.labels, entity.descriptions, entity.aliases
    for (code, tag), field in zip(m.languages, m.language_fields):
        if labels is not None and (term := getattr(labels, field)):
            append(_new(Triple, (s, RDFS_LABEL, term.value, True, None, tag)))
            if label is None:
                label = term.value
        if descriptions is not None and (term := getattr(descriptions, field)):
            append(_new(Triple, (s, SCHEMA_DESCRIPTION, term.value, True, None, tag)))
            if description is None:
                description = term.value
        if aliases is not None:
            for term in getattr(aliases, field) or ():
                append(_new(Triple, (s, SKOS_ALTLABEL, term.value, True, None, tag)))
                alias_texts.append(term.value)
    if label is None and labels is not None:
        mul = getattr(labels, m.mul_field)
        if mul is None:
            raise MalformedEntity('labels.mul has no "value" string')
        if mul:
            label = mul.value

    if entity.claims:
        allowed = m.properties
        for pid, statements in entity.claims.items():
            if allowed is not None and pid not in allowed:
                continue
            iris = m.property_iris(pid)
            if iris is None:
                raise MalformedEntity(f"claims: {pid!r} is not a property id")
            best = "normal"
            for st in statements:
                if st.rank == "preferred":
                    best = "preferred"
                    break
            wdt = iris[0]
            for index, st in enumerate(statements):
                snak = st.mainsnak
                _truthy(s, wdt, best, st.rank, snak.snaktype, snak.datavalue, snak.datatype, st.id, eid, pid,
                        index, append, counts)

    sitelinks = entity.sitelinks
    return _records(s, eid, etype, triples, label, description, alias_texts,
                    len(sitelinks) if sitelinks is not None else None, entity.datatype, m, counts)


def _mapped(eid: str, etype, m: _Mapping, counts: Counter) -> bool:
    """Whether an entity of this id and type is mapped (else its skip is counted)."""
    if etype == "item":
        if m.entities is not None and eid not in m.entities and WD + eid not in m.entities:
            counts["skipped_not_in_allowlist"] += 1
            return False
        return True
    if etype != "property":
        counts[f"skipped_{etype}"] += 1
        return False
    if not _PROPERTY_ID.fullmatch(eid):
        raise MalformedEntity(f"a property's id looks like P123, not {eid!r}")
    return True


def _records(s: str, eid: str, etype: str, triples: list[Triple], label, description, alias_texts: list[str],
             n_sitelinks: int | None, datatype, m: _Mapping, counts: Counter) -> EntityRecords:
    """An item's or property's records, once its labels and statements are in ``triples``."""
    if etype == "item":
        record = EntityRecord(s, eid, label, description, tuple(dict.fromkeys(alias_texts)), n_sitelinks,
                              False, "item")
        counts["items"] += 1
        counts["entities"] += 1
        return EntityRecords(triples, record, None, counts)

    datatype = datatype if type(datatype) is str else None
    iris = m.property_iris(eid)
    append = triples.append
    append(Triple(s, WIKIBASE_DIRECT_CLAIM, iris[0]))
    if datatype:
        append(Triple(s, WIKIBASE_PROPERTY_TYPE, property_type_iri(datatype)))
    if m.full:
        wdt, p, ps, pq, pr, psv, pqv, wdno = iris
        for pred, obj in (("claim", p), ("statementProperty", ps), ("qualifier", pq), ("reference", pr),
                          ("statementValue", psv), ("qualifierValue", pqv), ("novalue", wdno)):
            append(Triple(s, WIKIBASE + pred, obj))
    record = EntityRecord(s, eid, label, description, tuple(dict.fromkeys(alias_texts)), None, False, "property")
    relation = RelationRecord(iris[0], eid, label, description, None, datatype)
    counts["properties"] += 1
    counts["entities"] += 1
    return EntityRecords(triples, record, relation, counts)


def _term_text(term, field: str, code: str) -> str:
    text = term.get("value") if type(term) is dict else None
    if type(text) is not str:
        raise MalformedEntity(f'{field}.{code} has no "value" string')
    return text


def _object(entity: dict, key: str) -> dict:
    value = entity.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise MalformedEntity(f'"{key}" must be a JSON object, found {_json_type(value)}')
    return value


def _json_type(value) -> str:
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else "an object"


def _claims_to_triples(s: str, eid: str, claims: dict, m: _Mapping, append, counts: Counter) -> None:
    allowed = m.properties
    full = m.full
    for pid, statements in claims.items():
        if allowed is not None and pid not in allowed:
            continue
        iris = m.property_iris(pid)
        if iris is None:
            raise MalformedEntity(f"claims: {pid!r} is not a property id")
        if type(statements) is not list:
            raise MalformedEntity(f'claims.{pid} must be a JSON array, found {_json_type(statements)}')
        best = "normal"
        for st in statements:
            if type(st) is not dict:
                raise MalformedEntity(f"claims.{pid}: a statement is {_json_type(st)}, not an object")
            if st.get("rank") == "preferred":
                best = "preferred"
                break
        if full:
            for index, st in enumerate(statements):
                _statement_node(s, eid, pid, index, st, best, iris, m, append, counts)
            continue
        wdt = iris[0]
        for index, st in enumerate(statements):
            snak = st.get("mainsnak")
            if type(snak) is not dict:
                raise MalformedEntity(f'claims.{pid}: a statement has no "mainsnak" object')
            _truthy(s, wdt, best, st.get("rank", "normal"), snak.get("snaktype", "value"), snak.get("datavalue"),
                    snak.get("datatype"), st.get("id"), eid, pid, index, append, counts)


def _truthy(s: str, wdt: str, best: str, rank, snaktype, datavalue, datatype, sid, eid: str, pid: str,
            index: int, append, counts: Counter) -> None:
    """Truthy mode: the ``wdt:`` triple of one statement, if it has the best rank."""
    if snaktype == "value":
        if rank != best:
            return  # truthy mode reads no value of another rank
        term = value_term(datavalue, datatype)
        if term is None:
            _count_unsupported(datavalue, counts)
        else:
            append(_new(Triple, (s, wdt) + term))
    elif snaktype == "somevalue":
        counts["somevalue"] += 1
        if rank == best:
            append(_new(Triple, (s, wdt, _SOMEVALUE + _statement_key(sid, eid, pid, index), False, None, None)))
    elif snaktype == "novalue":
        counts["novalue"] += 1
    else:
        counts[f"unsupported_snak:{snaktype}"] += 1


def _count_unsupported(datavalue, counts: Counter) -> None:
    kind = datavalue.get("type") if type(datavalue) is dict else None
    counts[f"unsupported_value:{kind if type(kind) is str else 'missing'}"] += 1


def _statement_key(sid, eid: str, pid: str, index: int) -> str:
    """The statement's id ``sid`` as Wikidata writes it in IRIs ('$' → '-'), or a stable stand-in."""
    if type(sid) is str and sid:
        sid = sid.replace("$", "-")
        if _SAFE_STATEMENT_ID.fullmatch(sid):
            return sid
        return quote(sid, safe="-")
    return f"{eid}-{pid}-{index}"


def _statement_node(s, eid, pid, index, st, best, iris, m, append, counts) -> None:
    """Full mode: the statement node of ``st`` with its value, qualifiers, rank and
    references, and its truthy triple when it has the best rank."""
    wdt, p, ps, pq, pr, psv, pqv, wdno = iris
    snak = st.get("mainsnak")
    if type(snak) is not dict:
        raise MalformedEntity(f'claims.{pid}: a statement has no "mainsnak" object')
    rank = st.get("rank", "normal")
    rank_iri = RANKS.get(rank)
    if rank_iri is None:
        counts[f"unsupported_rank:{rank}"] += 1
        return
    snaktype = snak.get("snaktype", "value")
    term = None
    if snaktype == "value":
        term = value_term(snak.get("datavalue"), snak.get("datatype"))
        if term is None:
            _count_unsupported(snak.get("datavalue"), counts)
    elif snaktype == "somevalue":
        counts["somevalue"] += 1
    elif snaktype == "novalue":
        counts["novalue"] += 1
    else:
        counts[f"unsupported_snak:{snaktype}"] += 1
    key = _statement_key(st.get("id"), eid, pid, index)
    node = WDS + key
    if rank == best:
        if term is not None:
            append(_new(Triple, (s, wdt) + term))
        elif snaktype == "somevalue":
            append(Triple(s, wdt, _SOMEVALUE + key))
    append(_new(Triple, (s, p, node, False, None, None)))
    append(_new(Triple, (node, WIKIBASE_RANK, rank_iri, False, None, None)))
    if term is not None:
        append(_new(Triple, (node, ps) + term))
        _value_node(node, psv, snak["datavalue"], append)
    elif snaktype == "somevalue":
        append(Triple(node, ps, _SOMEVALUE + key))
    elif snaktype == "novalue":
        append(Triple(node, RDF_TYPE, wdno))
    qualifiers = st.get("qualifiers")
    if qualifiers:
        if type(qualifiers) is not dict:
            raise MalformedEntity(f"claims.{pid}: qualifiers must be a JSON object, found {_json_type(qualifiers)}")
        for qpid, snaks in qualifiers.items():
            qiris = m.property_iris(qpid)
            if qiris is None or type(snaks) is not list:
                raise MalformedEntity(f"claims.{pid}: malformed qualifiers of {qpid!r}")
            for qindex, qsnak in enumerate(snaks):
                _snak(node, qiris[3], qiris[6], qiris[7], qsnak, f"{key}-{qpid}-{qindex}", append, counts)
    references = st.get("references")
    if references:
        if type(references) is not list:
            raise MalformedEntity(f"claims.{pid}: references must be a JSON array")
        for ref in references:
            ref_snaks = ref.get("snaks") if type(ref) is dict else None
            if type(ref_snaks) is not dict:
                raise MalformedEntity(f'claims.{pid}: a reference has no "snaks" object')
            ref_hash = ref.get("hash")
            if type(ref_hash) is not str or not _SAFE_STATEMENT_ID.fullmatch(ref_hash):
                ref_hash = _hash(ref_snaks)
            ref_node = WDREF + ref_hash
            append(Triple(node, PROV_DERIVED, ref_node))
            for rpid, snaks in ref_snaks.items():
                riris = m.property_iris(rpid)
                if riris is None or type(snaks) is not list:
                    raise MalformedEntity(f"claims.{pid}: malformed reference snaks of {rpid!r}")
                for rindex, rsnak in enumerate(snaks):
                    _snak(ref_node, riris[4], None, None, rsnak, f"{ref_hash}-{rpid}-{rindex}", append, counts)


def _snak(node: str, pred: str, value_pred: str | None, novalue_class: str | None, snak, key: str,
          append, counts: Counter) -> None:
    """A qualifier or reference snak on ``node``."""
    if type(snak) is not dict:
        raise MalformedEntity(f"a qualifier or reference snak is {_json_type(snak)}, not an object")
    snaktype = snak.get("snaktype", "value")
    if snaktype == "value":
        term = value_term(snak.get("datavalue"), snak.get("datatype"))
        if term is None:
            _count_unsupported(snak.get("datavalue"), counts)
            return
        append(_new(Triple, (node, pred) + term))
        if value_pred is not None:
            _value_node(node, value_pred, snak["datavalue"], append)
    elif snaktype == "somevalue":
        counts["somevalue"] += 1
        append(Triple(node, pred, _SOMEVALUE + key))
    elif snaktype == "novalue":
        counts["novalue"] += 1
        if novalue_class is not None:
            append(Triple(node, RDF_TYPE, novalue_class))
    else:
        counts[f"unsupported_snak:{snaktype}"] += 1


def _value_node(node: str, pred: str, datavalue: dict, append) -> None:
    if datavalue.get("type") not in VALUE_NODE_TYPES:
        return
    built = value_node(datavalue)
    if built is None:
        return
    vnode, props = built
    append(Triple(node, pred, vnode))
    for vpred, term in props:
        append(_new(Triple, (vnode, vpred) + term))


def _hash(obj) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode("utf-8")).hexdigest()


# -- reading files ---------------------------------------------------------------------

def entities_in(document) -> Iterable:
    """The entities a parsed JSON value holds: itself, an ``{"entities": {...}}`` map's
    values, or an array's items."""
    if type(document) is dict:
        wrapped = document.get("entities")
        if type(wrapped) is dict and "id" not in document:
            return wrapped.values()
        return (document,)
    if type(document) is list:
        return document
    return (document,)


def keyed_entities_in(document) -> Iterable[tuple[str | None, object]]:
    """:func:`entities_in` with the id each entity was asked for: the key of an
    ``{"entities": {...}}`` map (Special:EntityData answers Q1 with Q2's document when Q1
    redirects to Q2), else None."""
    if type(document) is dict and type(document.get("entities")) is dict and "id" not in document:
        return list(document["entities"].items())
    return [(None, entity) for entity in entities_in(document)]


def _changes_of(asked: str | None, entity: dict, batch: Batch) -> bool:
    """Record what ``entity`` says about ids going away: a deletion (``"missing"``, as
    wbgetentities answers for a deleted id, or ``"deleted": true``), or a redirect
    (``"redirects": {"from", "to"}``, or a document whose id is not the one asked for).
    Returns True when the document is only that (nothing more to map)."""
    eid = entity.get("id")
    if "missing" in entity or entity.get("deleted") is True:
        if type(eid) is str and ENTITY_ID.fullmatch(eid):
            batch.deleted.append(WD + eid)
            return "missing" not in entity  # a missing one is also counted by the mapping
        if type(asked) is str and ENTITY_ID.fullmatch(asked):
            batch.deleted.append(WD + asked)
            return True
        raise MalformedEntity('a deletion needs the "id" of a Wikidata entity')
    moved = entity.get("redirects")
    if moved is not None:
        source = moved.get("from") if type(moved) is dict else None
        target = moved.get("to") if type(moved) is dict else None
        if not (type(source) is str and type(target) is str and ENTITY_ID.fullmatch(source)
                and ENTITY_ID.fullmatch(target)) or source == target:
            raise MalformedEntity('"redirects" must be {"from": ID, "to": another ID}')
        batch.redirects.append((WD + source, WD + target))
        # A bare redirect names only the two ids; one that carries the target's document
        # (wbgetentities with redirects) replaces the target too.
        return not any(key in entity for key in ("labels", "claims", "descriptions", "aliases", "sitelinks"))
    if type(asked) is str and type(eid) is str and asked != eid and ENTITY_ID.fullmatch(asked) \
            and ENTITY_ID.fullmatch(eid):
        batch.redirects.append((WD + asked, WD + eid))
    return False


def _entity_label(entity) -> str:
    eid = entity.get("id") if type(entity) is dict else None
    return f"entity {eid}: " if type(eid) is str else ""


class WikidataJsonLoader:
    """Loader for the ``wikidata-json`` format (see the module docstring)."""

    name = "wikidata-json"
    # Parse the next batch in a thread while the caller commits this one (loaders/_prefetch.py).
    # A caller that already parses in another process can turn it off.
    read_ahead = True

    def batches(self, path: str, options: LoadOptions, start: Checkpoint | None = None) -> Iterator[Batch]:
        _mapping(options)  # fail early on bad options
        if not self.read_ahead:
            return self._batches(path, options, start)
        return prefetched(lambda: self._batches(path, options, start))

    def _batches(self, path: str, options: LoadOptions, start: Checkpoint | None) -> Iterator[Batch]:
        if (start is None or start.offset == 0) and _is_single_document(path):
            yield from self._document_batches(path, options)
            return
        lines_per_batch = max(1, options.batch_size)
        with DumpReader(path, start) as reader:
            batch, lines = Batch(checkpoint=reader.checkpoint()), 0
            try:
                for line_no, raw in reader:
                    self._line(line_no, raw, options, batch)
                    lines += 1
                    # Big entities in full mode make thousands of triples each: a batch also
                    # ends at MAX_BATCH_TRIPLES, which bounds memory.
                    if lines >= lines_per_batch or len(batch.triples) >= MAX_BATCH_TRIPLES:
                        yield _closed(batch, reader)
                        batch, lines = Batch(checkpoint=reader.checkpoint()), 0
            except TruncatedInputError:
                if lines:  # what was read before the damage is committed first
                    yield _closed(batch, reader)
                raise
            if lines:
                yield _closed(batch, reader)

    def _line(self, line_no: int, raw: bytes, options: LoadOptions, batch: Batch) -> None:
        text = raw.rstrip()
        if text.endswith(b","):
            text = text[:-1]
        if len(text) <= 2:
            bare = text.strip()
            if bare in (b"", b"[", b"]", b"[]"):
                return  # the dump's framing
        # A dump whose first/last line carries the bracket: "[{...}," or "{...}]".
        if text[:1] == b"[":
            if not text.endswith(b"]"):
                text = text[1:]
        elif text.endswith(b"]") and text[:-1].rstrip().endswith(b"}"):
            text = text[:-1]
        decoder = _mapping(options).decoder
        # A change feed's redirects and deletions go the ordinary way, which reads them.
        if decoder is not None and b'"redirects"' not in text and b'"deleted"' not in text:
            try:
                entity = decoder.decode(text)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                pass  # not of the usual shape: mapped the ordinary way, which says what is wrong
            else:
                if entity.missing is not msgspec.UNSET and ENTITY_ID.fullmatch(entity.id):
                    batch.deleted.append(WD + entity.id)
                _add(line_no, raw, f"entity {entity.id}: ", typed_entity_records, entity, options, batch)
                return
        try:
            document = _loads(text)
        except _JSONDecodeError as exc:
            batch.rejected.append(RejectedLine(line_no, _json_error(exc), _raw_text(raw)))
            return
        except UnicodeDecodeError:
            batch.rejected.append(RejectedLine(line_no, "the line is not valid UTF-8", _raw_text(raw)))
            return
        except RecursionError:
            batch.rejected.append(RejectedLine(line_no, "invalid JSON: nested too deeply", _raw_text(raw)))
            return
        self._document(line_no, raw, document, options, batch)

    def _document(self, line_no: int, raw: bytes, document, options: LoadOptions, batch: Batch) -> None:
        for asked, entity in keyed_entities_in(document):
            if type(entity) is not dict:
                batch.rejected.append(RejectedLine(
                    line_no, f"expected a JSON object, found {_json_type(entity)}", _raw_text(raw)))
                continue
            try:
                stub = _changes_of(asked, entity, batch)
            except MalformedEntity as exc:
                batch.rejected.append(RejectedLine(line_no, f"{_entity_label(entity)}{exc}", _raw_text(raw)))
                continue
            if not stub:
                _add(line_no, raw, _entity_label(entity), entity_to_records, entity, options, batch)

    def _document_batches(self, path: str, options: LoadOptions) -> Iterator[Batch]:
        with DumpReader(path) as reader:
            data = reader.read_rest()
            end = Checkpoint(reader.offset, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))
            batch = Batch(checkpoint=end, raw_position=reader.size)
        try:
            document = _loads(data)
        except _JSONDecodeError as exc:
            batch.rejected.append(RejectedLine(exc.lineno, _json_error(exc, with_line=True), _raw_text(data)))
            yield batch
            return
        except UnicodeDecodeError:
            batch.rejected.append(RejectedLine(1, "the file is not valid UTF-8", _raw_text(data)))
            yield batch
            return
        self._document(1, data, document, options, batch)
        yield batch


def _add(line_no: int, raw: bytes, label: str, to_records, entity, options: LoadOptions, batch: Batch) -> None:
    """Map ``entity`` with ``to_records`` into ``batch``, or reject its line saying why."""
    try:
        records = to_records(entity, options, counts=batch.counts)
    except MalformedEntity as exc:
        batch.rejected.append(RejectedLine(line_no, f"{label}{exc}", _raw_text(raw)))
        return
    except (KeyError, TypeError, AttributeError, ValueError, ArithmeticError) as exc:
        # ArithmeticError: numbers past what a value type holds (JSON numbers have no limit)
        batch.rejected.append(RejectedLine(
            line_no, f"{label}malformed entity ({type(exc).__name__}: {exc})", _raw_text(raw)))
        return
    batch.triples.extend(records.triples if _REJECTS_SURROGATES else _sound_text(records.triples))
    if records.entity is not None:
        batch.entities.append(records.entity)
    if records.relation is not None:
        batch.relations.append(records.relation)


def _closed(batch: Batch, reader: DumpReader) -> Batch:
    batch.checkpoint = reader.checkpoint()
    batch.raw_position = reader.raw_position
    return batch


def _is_single_document(path: str) -> bool:
    """True when the file is one (pretty-printed) JSON value rather than one entity per line:
    its first line opens an object and does not close it, or it is '[' followed by such a line."""
    with DumpReader(path) as reader:
        lines = []
        for _, raw in reader:
            stripped = raw.strip()
            if stripped:
                lines.append(stripped)
            if len(lines) == 2:
                break
    if not lines:
        return False
    first = lines[0]
    if first in (b"{", b"[{"):
        return True
    if first.startswith(b"{") and not first.rstrip(b",").endswith(b"}"):
        return True
    return first == b"[" and len(lines) > 1 and lines[1] == b"{"


def _json_error(exc: _JSONDecodeError, *, with_line: bool = False) -> str:
    msg = getattr(exc, "msg", None) or str(exc).split(":")[0]
    where = f"line {exc.lineno} column {exc.colno}" if with_line else f"column {exc.colno}"
    return f"invalid JSON: {msg} at {where}"


def _raw_text(raw: bytes) -> str:
    return raw[:_MAX_RAW].decode("utf-8", "replace").rstrip("\r\n")


def _sound_text(triples: list[Triple]) -> list[Triple]:
    """``triples`` with lone UTF-16 surrogates in literals replaced by U+FFFD.

    JSON may escape a lone surrogate ("\ud800"); the standard library's parser keeps it in
    the string, which UTF-8 (and so the store) cannot encode. orjson rejects such a line
    instead. IRIs never hold one: they are checked when they are made.
    """
    try:
        "".join([t.o for t in triples if t.literal]).encode("utf-8")
        return triples
    except UnicodeEncodeError:
        pass
    out = []
    for t in triples:
        if t.literal:
            try:
                t.o.encode("utf-8")
            except UnicodeEncodeError:
                t = t._replace(o=t.o.encode("utf-8", "replace").decode("utf-8"))
        out.append(t)
    return out

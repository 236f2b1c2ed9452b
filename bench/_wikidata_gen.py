"""A deterministic generator of Wikidata JSON dumps, and of the triples a load must give.

Entities are shaped like the real ones in ``../shared/data/formats/wikidata_json/``
(``api_format/``, ``single_entity/``): labels, descriptions and aliases in several
languages, sitelinks, and claims of every datatype (wikibase-item, string, external-id,
time with precision, quantity with unit and bounds, monolingualtext, globe-coordinate,
url, commonsMedia) with qualifiers, references and ranks (some preferred, some
deprecated), plus somevalue/novalue snaks. The file uses the dump framing: ``[``, one
entity per line ending in ``,`` (the last one without), ``]``.

The expected N-Triples are written from the generator's own knowledge of what it
generated, never by running kgstore's loader, so that a benchmark can check a load
against them. They are what a *truthy* load with ``languages=("en",)`` must produce,
following Wikidata's RDF mapping (https://www.mediawiki.org/wiki/Wikibase/Indexing/RDF_Dump_Format):

* ``rdfs:label``, ``schema:description``, ``skos:altLabel`` in English only (not ``en-gb``);
* ``wdt:Pn`` for best-rank statements (preferred ones if a property has any, else the
  normal ones; never deprecated), with values: items as ``wd:`` IRIs; strings and
  external ids as plain literals; times as ``xsd:dateTime`` (month/day ``00`` of a
  low precision read as ``01``); quantities as their amount in ``xsd:decimal`` (unit and
  bounds belong to the full value node); monolingual text as a language-tagged literal;
  coordinates as ``geo:wktLiteral`` ``Point(longitude latitude)``; urls as IRIs;
  commonsMedia as ``http://commons.wikimedia.org/wiki/Special:FilePath/`` + the file name
  percent-encoded like PHP's rawurlencode (a space is ``%20``);
* a best-rank "some value" snak gives ``wdt:Pn`` → a skolem IRI (kgstore's stand-in for
  Wikidata's blank node: ``http://kgstore.local/.well-known/genid/<scope hash>/<statement
  id with '$' as '-'>``); "no value" snaks give no truthy triple;
* a property gives ``wikibase:directClaim`` (its ``wdt:`` IRI) and ``wikibase:propertyType``;
* sitelinks, qualifiers and references give no triple in truthy mode.

Literals are written in the canonical lexical form Oxigraph stores (``xsd:decimal``
without a ``+`` or trailing zeros), so the count of distinct expected triples is the
count a correct store holds. Every expected triple has its entity as subject and each
entity's triples are de-duplicated, so the file holds no duplicate triple at all.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, TextIO
from urllib.parse import quote

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SCHEMA_DESCRIPTION = "http://schema.org/description"
SKOS_ALTLABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
COMMONS = "http://commons.wikimedia.org/wiki/Special:FilePath/"
WIKIBASE = "http://wikiba.se/ontology#"
# kgstore names Wikidata's "some value" blank nodes with skolem IRIs under one scope.
SOMEVALUE = ("http://kgstore.local/.well-known/genid/"
             + hashlib.blake2s(b"wikidata:somevalue", digest_size=6).hexdigest() + "/")
PROPERTY_TYPES = {"wikibase-item": "WikibaseItem", "string": "String", "external-id": "ExternalId",
                  "time": "Time", "quantity": "Quantity", "monolingualtext": "Monolingualtext",
                  "globe-coordinate": "GlobeCoordinate", "url": "Url", "commonsMedia": "CommonsMedia"}
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
EARTH = "http://www.wikidata.org/entity/Q2"

WANTED_LANGUAGE = "en"
# Label languages as they appear in real entities; en-gb checks that "en" is matched exactly.
LANGUAGES = ("en", "fr", "de", "es", "it", "nl", "ru", "ja", "zh", "pt", "sv", "pl", "ar", "en-gb")
WIKIS = ("enwiki", "frwiki", "dewiki", "eswiki", "itwiki", "nlwiki", "ruwiki", "jawiki", "zhwiki",
         "commonswiki", "enwikiquote", "dewikivoyage")

# id: (label, description, datatype). The first ones are the properties items use as
# claims; qualifiers and references use the rest too.
PROPERTIES: dict[str, tuple[str, str, str]] = {
    "P31": ("instance of", "that class of which this subject is a particular example and member", "wikibase-item"),
    "P279": ("subclass of", "next higher class or type", "wikibase-item"),
    "P17": ("country", "sovereign state that this item is in", "wikibase-item"),
    "P131": ("located in the administrative territorial entity", "the item is located on the territory of the following administrative entity", "wikibase-item"),
    "P50": ("author", "main creator(s) of a written work", "wikibase-item"),
    "P106": ("occupation", "occupation of a person", "wikibase-item"),
    "P1368": ("LNB ID", "identifier assigned by the National Library of Latvia", "string"),
    "P528": ("catalog code", "catalog name of an object", "string"),
    "P214": ("VIAF ID", "identifier for the Virtual International Authority File database", "external-id"),
    "P227": ("GND ID", "identifier from an international authority file of names, subjects, and organizations", "external-id"),
    "P646": ("Freebase ID", "identifier for a page in the Freebase database", "external-id"),
    "P569": ("date of birth", "date on which the subject was born", "time"),
    "P571": ("inception", "time when an entity begins to exist", "time"),
    "P1082": ("population", "number of people inhabiting the place", "quantity"),
    "P2048": ("height", "vertical length of an entity", "quantity"),
    "P1477": ("birth name", "full name of a person at birth", "monolingualtext"),
    "P1476": ("title", "published name of a work", "monolingualtext"),
    "P625": ("coordinate location", "geocoordinates of the subject", "globe-coordinate"),
    "P856": ("official website", "URL of the official page of an item", "url"),
    "P18": ("image", "image of relevant illustration of the subject", "commonsMedia"),
    "P580": ("start time", "time an entity begins to exist or a statement starts being valid", "time"),
    "P582": ("end time", "moment when an entity ceases to exist or a statement stops being valid", "time"),
    "P585": ("point in time", "time and date something took place, existed or a statement was true", "time"),
    "P407": ("language of work or name", "language associated with this creative work", "wikibase-item"),
    "P248": ("stated in", "to be used in the references field to refer to the information document", "wikibase-item"),
    "P143": ("imported from Wikimedia project", "source of this claim's value", "wikibase-item"),
    "P813": ("retrieved", "date or point in time that information was retrieved from a database or website", "time"),
    "P854": ("reference URL", "should be used for Internet URLs as references", "url"),
}
CLAIM_PROPERTIES = [p for p in PROPERTIES if p not in ("P580", "P582", "P585", "P407", "P248", "P143", "P813", "P854")]
# How often a claim uses each property (P31 nearly always, ids often, the rest less).
CLAIM_WEIGHTS = {"P31": 0, "P279": 2, "P17": 6, "P131": 5, "P50": 2, "P106": 3, "P1368": 2, "P528": 2,
                 "P214": 5, "P227": 4, "P646": 5, "P569": 3, "P571": 3, "P1082": 2, "P2048": 2,
                 "P1477": 2, "P1476": 2, "P625": 3, "P856": 2, "P18": 3}
CLASSES = (5, 515, 6256, 8502, 7725634, 11424, 571, 4167836, 16521, 13442814)
UNITS = ("1", WD + "Q11573", WD + "Q174728", WD + "Q828224")
WORDS = ("river", "hall", "north", "saint", "old", "castle", "valley", "garden", "bridge", "tower",
         "école", "straße", "café", "Zürich", "São", "北京", "東京", "Москва", "مدينة", "Ωmega",
         "lake", "mount", "park", "station", "library", "museum", "church", "forest", "island", "bay")
LEAN_LANGUAGES = ("en", "fr", "de", "en-gb")
LINE_END = ",\n"
VERSION = 2  # bump when the output changes (bench/ingest.py --keep reuses files of the same version)


@dataclass
class GeneratedDump:
    """What the generator wrote: counts, and a sample of the expected triples for ASK checks."""

    entities: int = 0
    properties: int = 0
    expected_triples: int = 0
    expected_facts: int = 0  # wdt: triples (the catalog's statements rows)
    json_bytes: int = 0
    samples: list[str] = field(default_factory=list)  # expected N-Triples lines
    absent: list[str] = field(default_factory=list)  # N-Triples lines a correct load must not have


# -- N-Triples text, written here independently of kgstore.terms -------------------------
def _nt_escape(text: str) -> str:
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            .replace("\r", "\\r").replace("\t", "\\t"))


def nt_iri(iri: str) -> str:
    return f"<{iri}>"


def nt_lang(text: str, lang: str) -> str:
    return f'"{_nt_escape(text)}"@{lang}'


def nt_plain(text: str) -> str:
    return f'"{_nt_escape(text)}"'


def nt_typed(text: str, datatype: str) -> str:
    return f'"{_nt_escape(text)}"^^<{datatype}>'


def canonical_decimal(amount: str) -> str:
    """The xsd:decimal canonical form Oxigraph stores: no '+', no trailing zeros."""
    d = Decimal(amount)
    if d == 0:
        return "0"
    text = format(d.normalize(), "f")
    return text


# -- truthy values of each datatype (Wikidata's RDF mapping) -----------------------------
def truthy_object(datatype: str, value) -> str:
    if datatype == "wikibase-item":
        return nt_iri(WD + value["id"])
    if datatype in ("string", "external-id"):
        return nt_plain(value)
    if datatype == "time":
        date, _, clock = value["time"].lstrip("+").partition("T")
        year, month, day = date.split("-")
        return nt_typed(f"{year}-{month if month != '00' else '01'}-{day if day != '00' else '01'}T{clock}",
                        XSD + "dateTime")
    if datatype == "quantity":
        return nt_typed(canonical_decimal(value["amount"]), XSD + "decimal")
    if datatype == "monolingualtext":
        return nt_lang(value["text"], value["language"])
    if datatype == "globe-coordinate":
        return nt_typed(f"Point({value['longitude']} {value['latitude']})", WKT)
    if datatype == "url":
        return nt_iri(value)
    if datatype == "commonsMedia":
        return nt_iri(COMMONS + quote(value, safe=""))
    raise ValueError(datatype)


# -- random content ---------------------------------------------------------------------
class _Content:
    def __init__(self, rng: random.Random, n_items: int, lean: bool = False):
        self.rng = rng
        self.n_items = n_items
        self.hash_n = 0
        # lean: what an index needs and little else (3 label languages, 2-6 claims, no
        # qualifiers, references or sitelinks): about 10x smaller, so 10M entities fit a disk
        self.lean = lean

    def words(self, lo: int, hi: int) -> str:
        r = self.rng
        return " ".join(r.choice(WORDS) for _ in range(r.randint(lo, hi))).capitalize()

    def odd_text(self) -> str:
        """Text that exercises escaping now and then (quotes, backslashes, tabs)."""
        r = self.rng
        text = self.words(1, 4)
        roll = r.random()
        if roll < 0.03:
            text += ' "quoted"'
        elif roll < 0.04:
            text += " back\\slash"
        elif roll < 0.045:
            text += "\ttab"
        return text

    def snak_hash(self) -> str:
        self.hash_n += 1
        return format((self.hash_n * 2654435761) & ((1 << 160) - 1), "040x")

    def guid(self, entity_id: str) -> str:
        r = self.rng
        h = format(r.getrandbits(128), "032X")
        return f"{entity_id}${h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def item_ref(self) -> int:
        r = self.rng
        if r.random() < 0.15:
            return r.choice(CLASSES)
        if r.random() < 0.1:
            return r.randint(self.n_items + 1, self.n_items * 3 + 10)  # an entity not in the dump
        return r.randint(1, self.n_items)

    def value(self, datatype: str):
        """(datavalue dict, value as the JSON holds it) for a random value of ``datatype``."""
        r = self.rng
        if datatype == "wikibase-item":
            n = self.item_ref()
            v = {"entity-type": "item", "numeric-id": n, "id": f"Q{n}"}
            return {"value": v, "type": "wikibase-entityid"}, v
        if datatype == "string":
            v = f"{r.choice(('LNB', 'cat', 'ref'))}-{r.randint(0, 10**9):09d}"
            return {"value": v, "type": "string"}, v
        if datatype == "external-id":
            v = r.choice((str(r.randint(10**5, 10**9)), f"/m/0{format(r.getrandbits(24), 'x')}",
                          f"{r.randint(100, 99999)}-{r.randint(0, 9)}"))
            return {"value": v, "type": "string"}, v
        if datatype == "time":
            precision = r.choice((9, 10, 11, 11, 11))
            year = r.randint(1000, 2024)
            month = r.randint(1, 12) if precision >= 10 else 0
            day = r.randint(1, 28) if precision >= 11 else 0
            v = {"time": f"+{year:04d}-{month:02d}-{day:02d}T00:00:00Z", "timezone": 0, "before": 0, "after": 0,
                 "precision": precision, "calendarmodel": GREGORIAN}
            return {"value": v, "type": "time"}, v
        if datatype == "quantity":
            unit = r.choice(UNITS)
            if r.random() < 0.5:
                amount = f"+{r.randint(0, 10**7)}"
            else:
                amount = f"+{r.randint(0, 9999)}.{r.randint(0, 99):02d}"
            v = {"amount": amount, "unit": unit}
            if r.random() < 0.4:
                v["upperBound"], v["lowerBound"] = amount, amount
            return {"value": v, "type": "quantity"}, v
        if datatype == "monolingualtext":
            v = {"text": self.odd_text(), "language": r.choice(("en", "de", "fr", "ja"))}
            return {"value": v, "type": "monolingualtext"}, v
        if datatype == "globe-coordinate":
            # |x| >= 0.5 keeps Python's repr out of exponent notation.
            v = {"latitude": round(r.choice((-1, 1)) * r.uniform(0.5, 89), r.choice((2, 4, 6))),
                 "longitude": round(r.choice((-1, 1)) * r.uniform(0.5, 179), r.choice((2, 4, 6))),
                 "altitude": None, "precision": r.choice((0.01, 0.0001, 1e-06)), "globe": EARTH}
            return {"value": v, "type": "globecoordinate"}, v
        if datatype == "url":
            v = f"https://www.example{r.randint(1, 500)}.org/{r.choice(('page', 'wiki', 'about'))}/{r.randint(1, 10**6)}"
            return {"value": v, "type": "string"}, v
        if datatype == "commonsMedia":
            v = f"{self.words(1, 3)} {r.randint(1, 99999)}.{r.choice(('jpg', 'png', 'svg'))}"
            return {"value": v, "type": "string"}, v
        raise ValueError(datatype)

    def snak(self, prop: str, *, allow_special: bool = True) -> tuple[dict, object | None]:
        r = self.rng
        datatype = PROPERTIES[prop][2]
        roll = r.random() if allow_special else 1.0
        if roll < 0.01:
            return {"snaktype": "somevalue", "property": prop, "hash": self.snak_hash(), "datatype": datatype}, None
        if roll < 0.015:
            return {"snaktype": "novalue", "property": prop, "hash": self.snak_hash(), "datatype": datatype}, None
        datavalue, value = self.value(datatype)
        return {"snaktype": "value", "property": prop, "hash": self.snak_hash(), "datavalue": datavalue,
                "datatype": datatype}, value

    def qualifiers(self) -> dict | None:
        r = self.rng
        if self.lean or r.random() > 0.2:
            return None
        props = r.sample(("P580", "P582", "P585", "P407"), r.randint(1, 2))
        return {p: [self.snak(p, allow_special=False)[0]] for p in props}

    def references(self) -> list | None:
        r = self.rng
        if self.lean or r.random() > 0.5:
            return None
        refs = []
        for _ in range(r.randint(1, 2)):
            props = r.sample(("P248", "P143", "P813", "P854"), r.randint(1, 3))
            refs.append({"hash": self.snak_hash(),
                         "snaks": {p: [self.snak(p, allow_special=False)[0]] for p in props},
                         "snaks-order": props})
        return refs

    def terms(self, entity: dict, *, label_p: float) -> list[str]:
        """Labels, descriptions and aliases; returns the English ones as N-Triples objects' triples."""
        r = self.rng
        subject = nt_iri(WD + entity["id"])
        out = []
        languages = LEAN_LANGUAGES if self.lean else LANGUAGES
        langs = [lang for lang in languages if r.random() < (label_p if lang == "en" else 0.35)]
        labels, descriptions, aliases = {}, {}, {}
        for lang in langs:
            label = self.odd_text()
            labels[lang] = {"language": lang, "value": label}
            if r.random() < 0.6:
                descriptions[lang] = {"language": lang, "value": self.words(2, 6).lower()}
            if r.random() < 0.3:
                names = list(dict.fromkeys(self.words(1, 3) for _ in range(r.randint(1, 3))))
                aliases[lang] = [{"language": lang, "value": a} for a in names]
        entity["labels"], entity["descriptions"], entity["aliases"] = labels, descriptions, aliases
        if WANTED_LANGUAGE in labels:
            out.append(f"{subject} {nt_iri(RDFS_LABEL)} {nt_lang(labels['en']['value'], 'en')} .")
        if WANTED_LANGUAGE in descriptions:
            out.append(f"{subject} {nt_iri(SCHEMA_DESCRIPTION)} {nt_lang(descriptions['en']['value'], 'en')} .")
        for alias in aliases.get(WANTED_LANGUAGE, ()):
            out.append(f"{subject} {nt_iri(SKOS_ALTLABEL)} {nt_lang(alias['value'], 'en')} .")
        return out

    def claims(self, entity: dict) -> tuple[list[str], list[str]]:
        """Claims of an item; returns (expected wdt lines, lines that must be absent)."""
        r = self.rng
        entity_id = entity["id"]
        subject = nt_iri(WD + entity_id)
        props = ["P31"] + r.choices(list(CLAIM_WEIGHTS), weights=list(CLAIM_WEIGHTS.values()),
                                      k=r.randint(2, 6) if self.lean else r.randint(3, 22))
        claims: dict[str, list] = {}
        expected: list[str] = []
        absent: list[str] = []
        for prop in dict.fromkeys(props):
            count = props.count(prop)
            statements = []
            seen_values = set()
            for _ in range(count):
                snak, value = self.snak(prop)
                if value is not None:
                    obj = truthy_object(PROPERTIES[prop][2], value)
                    if obj in seen_values:
                        continue  # one value once per property, as in real data
                    seen_values.add(obj)
                statement = {"mainsnak": snak, "type": "statement", "id": self.guid(entity_id), "rank": "normal"}
                quals = self.qualifiers()
                if quals:
                    statement["qualifiers"] = quals
                    statement["qualifiers-order"] = list(quals)
                refs = self.references()
                if refs:
                    statement["references"] = refs
                statements.append((statement, value))
            roll = r.random()
            if roll < 0.08:
                r.choice(statements)[0]["rank"] = "deprecated"
            elif roll < 0.14 and len(statements) > 1:
                r.choice(statements)[0]["rank"] = "preferred"
            ranks = {s["rank"] for s, _ in statements}
            best = "preferred" if "preferred" in ranks else "normal"
            for statement, value in statements:
                if value is not None:
                    obj = truthy_object(PROPERTIES[prop][2], value)
                elif statement["mainsnak"]["snaktype"] == "somevalue":
                    obj = nt_iri(SOMEVALUE + statement["id"].replace("$", "-"))
                else:
                    continue  # novalue
                line = f"{subject} {nt_iri(WDT + prop)} {obj} ."
                (expected if statement["rank"] == best else absent).append(line)
            claims[prop] = [s for s, _ in statements]
        entity["claims"] = claims
        # A value can be both best-rank and not (two statements, same value): it is present.
        present = set(expected)
        return expected, [line for line in absent if line not in present]

    def sitelinks(self) -> dict:
        r = self.rng
        if self.lean:
            return {}
        wikis = [w for w in WIKIS if r.random() < 0.25]
        return {w: {"site": w, "title": self.words(1, 3), "badges": []} for w in wikis}


def _item(content: _Content, n: int) -> tuple[dict, list[str], list[str]]:
    entity = {"type": "item", "id": f"Q{n}"}
    triples = content.terms(entity, label_p=0.92)
    wdt, absent = content.claims(entity)
    entity["sitelinks"] = content.sitelinks()
    entity["lastrevid"] = 100000000 + n
    entity["modified"] = "2024-05-01T12:00:00Z"
    return entity, triples + wdt, absent


def _property(content: _Content, pid: str) -> tuple[dict, list[str]]:
    label, description, datatype = PROPERTIES[pid]
    entity = {"type": "property", "datatype": datatype, "id": pid}
    content.terms(entity, label_p=1.0)
    subject = nt_iri(WD + pid)
    entity["labels"]["en"] = {"language": "en", "value": label}
    entity["descriptions"]["en"] = {"language": "en", "value": description}
    triples = [f"{subject} {nt_iri(RDFS_LABEL)} {nt_lang(label, 'en')} .",
               f"{subject} {nt_iri(SCHEMA_DESCRIPTION)} {nt_lang(description, 'en')} ."]
    triples += [f"{subject} {nt_iri(SKOS_ALTLABEL)} {nt_lang(a['value'], 'en')} ."
                for a in entity["aliases"].get("en", ())]
    triples += [f"{subject} {nt_iri(WIKIBASE + 'directClaim')} {nt_iri(WDT + pid)} .",
                f"{subject} {nt_iri(WIKIBASE + 'propertyType')} {nt_iri(WIKIBASE + PROPERTY_TYPES[datatype])} ."]
    entity["claims"] = {}
    entity["lastrevid"] = 200000000
    entity["modified"] = "2024-05-01T12:00:00Z"
    return entity, triples


def generate(n_entities: int, json_out: TextIO, nt_out: TextIO, *, seed: int = 20240501,
             samples: int = 300, progress: Callable[[int], None] | None = None,
             lean: bool = False) -> GeneratedDump:
    """Write a dump of ``n_entities`` entities (the properties, then items) to ``json_out``
    and the expected truthy/English N-Triples to ``nt_out``. ``lean``: fewer languages and
    claims, no qualifiers, references or sitelinks (for benchmarks of what comes after a load)."""
    rng = random.Random(seed)
    n_props = min(len(PROPERTIES), max(1, n_entities // 10))
    n_items = max(0, n_entities - n_props)
    content = _Content(rng, max(n_items, 1), lean)
    result = GeneratedDump()
    sample_every = max(1, n_entities // max(1, samples))
    json_out.write("[\n")
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    written = 0

    def emit(entity: dict, triples: list[str], absent: list[str]) -> None:
        nonlocal written
        lines = list(dict.fromkeys(triples))
        text = dumps(entity)
        last = written == n_entities - 1
        json_out.write(text + ("\n" if last else LINE_END))
        result.json_bytes += len(text.encode("utf-8")) + (1 if last else 2)
        nt_out.write("".join(line + "\n" for line in lines))
        result.expected_triples += len(lines)
        result.expected_facts += sum(1 for line in lines if line.split(" ", 2)[1].startswith("<" + WDT))
        if written % sample_every == 0:
            if lines:
                result.samples.append(rng.choice(lines))
            if absent:
                result.absent.append(rng.choice(absent))
        written += 1
        if progress and written % 10000 == 0:
            progress(written)

    for pid in list(PROPERTIES)[:n_props]:
        entity, triples = _property(content, pid)
        emit(entity, triples, [])
        result.properties += 1
    for n in range(1, n_items + 1):
        entity, triples, absent = _item(content, n)
        emit(entity, triples, absent)
    json_out.write("]\n")
    result.json_bytes += 4
    result.entities = written
    return result


def generate_files(n_entities: int, json_path: str, nt_path: str, *, gzipped: bool = False,
                   seed: int = 20240501, progress: Callable[[int], None] | None = None,
                   lean: bool = False) -> GeneratedDump:
    opener = (lambda p: gzip.open(p, "wt", encoding="utf-8", compresslevel=3)) if gzipped else \
        (lambda p: open(p, "w", encoding="utf-8", buffering=1 << 20))
    with opener(json_path) as json_out, open(nt_path, "w", encoding="utf-8", buffering=1 << 20) as nt_out:
        return generate(n_entities, json_out, nt_out, seed=seed, progress=progress, lean=lean)

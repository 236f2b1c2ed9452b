"""The Wikidata JSON loader: value mapping (pure), entity mapping (pure), and real files
from ../shared/data loaded through ``kgstore.ingest``."""
from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

from kgstore import LoadOptions, Store, TooManyErrorsError, TruncatedInputError, ingest
from kgstore.records import Triple
from kgstore.terms import (GEO, P, PQ, PR, PS, RDF_TYPE, RDFS_LABEL, SCHEMA_DESCRIPTION, SKOLEM, SKOS_ALTLABEL, WD,
                           WDNO, WDS, WDT, WIKIBASE, XSD)
from loaders._wikidata_values import language_tag, value_node, value_term, wikidata_time
from loaders.wikidata_json import MalformedEntity, WikidataJsonLoader, entity_to_records

DATETIME = XSD + "dateTime"
DECIMAL = XSD + "decimal"
WKT = GEO + "wktLiteral"
GREGORIAN = WD + "Q1985727"
JULIAN = WD + "Q1985786"


def wikidata_json(shared_data):
    return shared_data / "formats" / "wikidata_json"


def values(store: Store, sparql: str) -> list[str]:
    return sorted(str(row[0]) for row in store.query(sparql))


# -- datavalues (pure) -----------------------------------------------------------------------

@pytest.mark.parametrize("datavalue, datatype, term", [
    ({"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 5, "id": "Q5"}}, "wikibase-item",
     (WD + "Q5", False, None, None)),
    # the 2015 dumps' form: no "id", only the numeric id and the entity type
    ({"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 5}}, None,
     (WD + "Q5", False, None, None)),
    ({"type": "wikibase-entityid", "value": {"entity-type": "property", "numeric-id": 1726}}, "wikibase-property",
     (WD + "P1726", False, None, None)),
    ({"type": "wikibase-entityid", "value": {"entity-type": "form", "id": "L7-F2"}}, "wikibase-form",
     (WD + "L7-F2", False, None, None)),
    ({"type": "wikibase-entityid", "value": {"entity-type": "item", "id": "Q 5"}}, "wikibase-item", None),
    ({"type": "string", "value": "113230702"}, "external-id", ("113230702", True, None, None)),
    ({"type": "string", "value": "x = y^2"}, "math", ("x = y^2", True, None, None)),
    ({"type": "string", "value": "603"}, None, ("603", True, None, None)),
    ({"type": "string", "value": "https://douglasadams.com/"}, "url", ("https://douglasadams.com/", False, None, None)),
    ({"type": "string", "value": "not a url at all"}, "url", ("not a url at all", True, None, None)),
    ({"type": "string", "value": "Douglas Adams' gravestone.jpg"}, "commonsMedia",
     ("http://commons.wikimedia.org/wiki/Special:FilePath/Douglas%20Adams%27%20gravestone.jpg", False, None, None)),
    ({"type": "string", "value": "Data:Taipei Population.tab"}, "tabular-data",
     ("http://commons.wikimedia.org/data/main/Data:Taipei+Population.tab", False, None, None)),
    ({"type": "time", "value": {"time": "+1952-03-11T00:00:00Z", "timezone": 0, "before": 0, "after": 0,
                                "precision": 11, "calendarmodel": GREGORIAN}}, "time",
     ("1952-03-11T00:00:00Z", True, DATETIME, None)),
    ({"type": "quantity", "value": {"amount": "+296033", "unit": "1"}}, "quantity", ("296033", True, DECIMAL, None)),
    ({"type": "quantity", "value": {"amount": "-1.5", "unit": WD + "Q11573"}}, "quantity",
     ("-1.5", True, DECIMAL, None)),
    ({"type": "quantity", "value": {"amount": "lots"}}, "quantity", None),
    ({"type": "monolingualtext", "value": {"language": "fi", "text": "Joulukuun kuudentena"}}, "monolingualtext",
     ("Joulukuun kuudentena", True, None, "fi")),
    # Wikimedia codes that are no BCP 47 tag: mapped as Wikidata's RDF does, else untagged
    ({"type": "monolingualtext", "value": {"language": "zh-classical", "text": "文"}}, "monolingualtext",
     ("文", True, None, "lzh")),
    ({"type": "monolingualtext", "value": {"language": "x", "text": "t"}}, "monolingualtext", ("t", True, None, None)),
    ({"type": "globecoordinate", "value": {"latitude": 49.013888888889, "longitude": 8.4041666666667, "altitude": None,
                                           "precision": 0.00027777777777778, "globe": WD + "Q2"}}, "globe-coordinate",
     ("Point(8.4041666666667 49.013888888889)", True, WKT, None)),
    ({"type": "globecoordinate", "value": {"latitude": 4.5, "longitude": 137.4, "globe": WD + "Q111"}},
     "globe-coordinate", (f"<{WD}Q111> Point(137.4 4.5)", True, WKT, None)),
    ({"type": "musical-score", "value": "X:1"}, "musical-notation", None),  # unknown value type
    (None, "string", None),
])
def test_value_term(datavalue, datatype, term):
    assert value_term(datavalue, datatype) == term


@pytest.mark.parametrize("time, calendar, precision, expected", [
    # Wikibase's own DateTimeValueCleanerTest cases (XSD 1.1 years, as the dumps use)
    ("+00000002014-01-05T12:34:56Z", GREGORIAN, 14, "2014-01-05T12:34:56Z"),
    ("+00000002014-01-05T12:34:56Z", GREGORIAN, 9, "2014-01-01T12:34:56Z"),
    ("+1952-00-00T00:00:00Z", GREGORIAN, 9, "1952-01-01T00:00:00Z"),
    ("+00000002204-04-31T00:00:00Z", GREGORIAN, 10, "2204-04-01T00:00:00Z"),
    ("+00000000204-02-31T00:00:00Z", GREGORIAN, 14, "0204-02-29T00:00:00Z"),
    ("-00000000200-00-00T00:00:00Z", GREGORIAN, 14, "-0199-01-01T00:00:00Z"),
    ("-02000000200-05-22T00:00:00Z", GREGORIAN, 8, "-2000000200-01-01T00:00:00Z"),
    ("-13798000000-00-00T00:00:00Z", GREGORIAN, 3, "-13798000000-01-01T00:00:00Z"),
    ("+00000002014-01-05T12:34:56Z", JULIAN, 14, "2014-01-18T12:34:56Z"),
    ("-00000002014-01-05T12:34:56Z", JULIAN, 14, "-2014-12-19T12:34:56Z"),
    ("-00000002014-01-05T12:34:56Z", JULIAN, 9, "-2013-01-01T12:34:56Z"),
    ("+0000-01-01T00:00:00Z", GREGORIAN, 11, None),  # year 0 does not exist
    ("+2014-01-05T12:34:56Z", WD + "Q42", 11, None),  # not a calendar
    ("yesterday", GREGORIAN, 11, None),
])
def test_wikidata_time(time, calendar, precision, expected):
    assert wikidata_time({"time": time, "calendarmodel": calendar, "precision": precision}) == expected


def test_value_nodes_keep_precision_unit_and_globe():
    node, props = value_node({"type": "quantity", "value": {"amount": "+1.96", "unit": WD + "Q11573",
                                                            "upperBound": "+1.97", "lowerBound": "+1.95"}})
    assert node.startswith("http://www.wikidata.org/value/")
    assert dict(props) == {
        WIKIBASE + "quantityAmount": ("1.96", True, DECIMAL, None),
        WIKIBASE + "quantityUpperBound": ("1.97", True, DECIMAL, None),
        WIKIBASE + "quantityLowerBound": ("1.95", True, DECIMAL, None),
        WIKIBASE + "quantityUnit": (WD + "Q11573", False, None, None),
    }
    _, props = value_node({"type": "time", "value": {"time": "+1952-00-00T00:00:00Z", "timezone": 0,
                                                     "precision": 9, "calendarmodel": GREGORIAN}})
    assert dict(props)[WIKIBASE + "timePrecision"] == ("9", True, XSD + "integer", None)
    assert dict(props)[WIKIBASE + "timeValue"] == ("1952-01-01T00:00:00Z", True, DATETIME, None)
    # the same value gives the same node, wherever it appears
    assert value_node({"type": "quantity", "value": {"amount": "+1", "unit": "1"}}) == \
        value_node({"type": "quantity", "value": {"unit": "1", "amount": "+1"}})
    assert value_node({"type": "string", "value": "x"}) is None


def test_language_tags():
    assert language_tag("en") == "en"
    assert language_tag("de-formal") == "de-x-formal"  # as Wikidata's RDF writes it
    assert language_tag("zh-classical") == "lzh"
    assert language_tag("not a tag") is None


# -- entities (pure) ---------------------------------------------------------------------------

def _item_snak(pid: str, qid: str) -> dict:
    return {"snaktype": "value", "property": pid, "datatype": "wikibase-item",
            "datavalue": {"type": "wikibase-entityid", "value": {"entity-type": "item", "id": qid}}}


def _statement(sid: str, pid: str, qid: str | None, rank: str = "normal", snaktype: str = "value", **extra) -> dict:
    snak = _item_snak(pid, qid) if snaktype == "value" else {"snaktype": snaktype, "property": pid}
    return {"id": sid, "type": "statement", "rank": rank, "mainsnak": snak, **extra}


ITEM = {
    "type": "item", "id": "Q42",
    "labels": {"en": {"language": "en", "value": "Douglas Adams"},
               "de": {"language": "de", "value": "Douglas Adams (de)"},
               "fr": {"language": "fr", "value": "Douglas Adams (fr)"}},
    "descriptions": {"de": {"language": "de", "value": "britischer Schriftsteller"}},
    "aliases": {"en": [{"language": "en", "value": "DNA"}], "fr": [{"language": "fr", "value": "D. Adams"}]},
    "sitelinks": {"enwiki": {"site": "enwiki", "title": "Douglas Adams"}, "dewiki": {"site": "dewiki", "title": "x"}},
    "claims": {
        # a preferred value hides the normal ones; the deprecated one never shows
        "P106": [_statement("Q42$A", "P106", "Q36180", "normal"), _statement("Q42$B", "P106", "Q6625963", "preferred"),
                 _statement("Q42$C", "P106", "Q1", "deprecated")],
        # without a preferred one, every normal value is truthy
        "P69": [_statement("Q42$D", "P69", "Q35794"), _statement("Q42$E", "P69", "Q4961791"),
                _statement("Q42$F", "P69", "Q1", "deprecated")],
        "P40": [_statement("Q42$G", "P40", None, snaktype="somevalue")],
        "P1050": [_statement("Q42$H", "P1050", None, snaktype="novalue")],
        "P26": [_statement("Q42$I", "P26", "Q14623681", qualifiers={"P580": [{
            "snaktype": "value", "property": "P580", "datatype": "time", "datavalue": {"type": "time", "value": {
                "time": "+1991-11-25T00:00:00Z", "timezone": 0, "before": 0, "after": 0, "precision": 11,
                "calendarmodel": GREGORIAN}}}]}, references=[{"hash": "d5847b9b", "snaks": {"P248": [
                    _item_snak("P248", "Q5375741")]}}])],
    },
}


def _objects(triples: list[Triple], s: str, p: str) -> set[str]:
    return {t.o for t in triples if t.s == s and t.p == p}


def test_truthy_statements_take_the_best_rank():
    records = entity_to_records(ITEM, LoadOptions(languages=("en",)))
    q42 = WD + "Q42"
    assert _objects(records.triples, q42, WDT + "P106") == {WD + "Q6625963"}
    assert _objects(records.triples, q42, WDT + "P69") == {WD + "Q35794", WD + "Q4961791"}
    assert _objects(records.triples, q42, WDT + "P26") == {WD + "Q14623681"}
    # "some value": an existing but unknown value, one skolem IRI per statement; "no value": no triple
    (somevalue,) = _objects(records.triples, q42, WDT + "P40")
    assert somevalue.startswith(SKOLEM) and somevalue.endswith("/Q42-G")
    assert _objects(records.triples, q42, WDT + "P1050") == set()
    assert records.counts == Counter({"somevalue": 1, "novalue": 1, "items": 1, "entities": 1})
    # nothing of the full statement model in truthy mode
    assert not [t for t in records.triples if t.p.startswith((P, WIKIBASE)) and not t.p.startswith(WDT)]


def test_labels_follow_the_chosen_languages():
    records = entity_to_records(ITEM, LoadOptions(languages=("de", "en")))
    labels = {(t.p, t.o, t.lang) for t in records.triples if t.p in (RDFS_LABEL, SCHEMA_DESCRIPTION, SKOS_ALTLABEL)}
    assert labels == {
        (RDFS_LABEL, "Douglas Adams (de)", "de"), (RDFS_LABEL, "Douglas Adams", "en"),
        (SCHEMA_DESCRIPTION, "britischer Schriftsteller", "de"), (SKOS_ALTLABEL, "DNA", "en"),
    }
    entity = records.entity
    assert (entity.iri, entity.id, entity.kind) == (WD + "Q42", "Q42", "item")
    assert (entity.label, entity.description, entity.aliases, entity.sitelinks) == \
        ("Douglas Adams (de)", "britischer Schriftsteller", ("DNA",), 2)
    assert entity_to_records(ITEM, LoadOptions(languages=("en", "de"))).entity.label == "Douglas Adams"
    # Wikidata's language-independent "mul" label stands in when no chosen language has one
    mul = {"type": "item", "id": "Q1", "labels": {"mul": {"language": "mul", "value": "Universe"}}}
    assert entity_to_records(mul, LoadOptions(languages=("en",))).entity.label == "Universe"


def test_full_statements_with_qualifiers_ranks_and_references():
    records = entity_to_records(ITEM, LoadOptions(languages=("en",), statements="full"))
    t = records.triples
    q42, node = WD + "Q42", WDS + "Q42-I"
    assert _objects(t, q42, P + "P26") == {node}
    assert _objects(t, node, PS + "P26") == {WD + "Q14623681"}
    assert _objects(t, node, PQ + "P580") == {"1991-11-25T00:00:00Z"}
    assert _objects(t, node, WIKIBASE + "rank") == {WIKIBASE + "NormalRank"}
    (ref,) = _objects(t, node, "http://www.w3.org/ns/prov#wasDerivedFrom")
    assert ref == "http://www.wikidata.org/reference/d5847b9b"
    assert _objects(t, ref, PR + "P248") == {WD + "Q5375741"}
    # every rank gets a statement node; the deprecated one too
    assert _objects(t, WDS + "Q42-C", WIKIBASE + "rank") == {WIKIBASE + "DeprecatedRank"}
    assert _objects(t, WDS + "Q42-B", WIKIBASE + "rank") == {WIKIBASE + "PreferredRank"}
    # no value: the statement node is typed wdno:P1050; some value: ps: is a skolem IRI
    assert _objects(t, WDS + "Q42-H", RDF_TYPE) == {WDNO + "P1050"}
    assert _objects(t, WDS + "Q42-G", PS + "P40") == _objects(t, q42, WDT + "P40")
    # truthy triples are there as well
    assert _objects(t, q42, WDT + "P106") == {WD + "Q6625963"}


def test_allowlists():
    options = LoadOptions(languages=("en",), properties=frozenset({"P69"}))
    predicates = {t.p for t in entity_to_records(ITEM, options).triples}
    assert predicates == {RDFS_LABEL, SKOS_ALTLABEL, WDT + "P69"}
    counts = Counter()
    skipped = entity_to_records(ITEM, LoadOptions(entities=frozenset({"Q1"})), counts=counts)
    assert (skipped.triples, skipped.entity, counts) == ([], None, Counter({"skipped_not_in_allowlist": 1}))
    # properties are kept whatever the entity allowlist says
    prop = {"type": "property", "id": "P31", "datatype": "wikibase-item",
            "labels": {"en": {"language": "en", "value": "instance of"}}}
    assert entity_to_records(prop, LoadOptions(entities=frozenset({"Q1"}))).relation is not None


def test_a_property_becomes_a_relation_under_its_wdt_iri():
    prop = {"type": "property", "id": "P31", "datatype": "wikibase-item",
            "labels": {"en": {"language": "en", "value": "instance of"}},
            "descriptions": {"en": {"language": "en", "value": "that class of which this subject is an example"}},
            "claims": {"P1647": [_statement("P31$1", "P1647", "P279")]}}
    records = entity_to_records(prop, LoadOptions())
    relation = records.relation
    assert (relation.iri, relation.id, relation.label, relation.datatype) == \
        (WDT + "P31", "P31", "instance of", "wikibase-item")
    assert (records.entity.iri, records.entity.kind) == (WD + "P31", "property")
    assert _objects(records.triples, WD + "P31", WIKIBASE + "directClaim") == {WDT + "P31"}
    assert _objects(records.triples, WD + "P31", WIKIBASE + "propertyType") == {WIKIBASE + "WikibaseItem"}
    assert records.counts == Counter({"properties": 1, "entities": 1})


def test_other_entity_types_are_skipped_and_counted():
    counts = Counter()
    for entity in ({"type": "lexeme", "id": "L7"}, {"type": "mediainfo", "id": "M74698470"},
                   {"id": "Q6", "missing": ""}):
        assert entity_to_records(entity, LoadOptions(), counts=counts).triples == []
    assert counts == Counter({"skipped_lexeme": 1, "skipped_mediainfo": 1, "skipped_missing": 1})


@pytest.mark.parametrize("entity, reason", [
    ({"type": "item", "id": "Q8", "labels": []}, '"labels" must be a JSON object, found an empty array'),
    ({"type": "item", "id": "Q8", "claims": {"P31": {}}}, "claims.P31 must be a JSON array, found an object"),
    ({"type": "item", "id": "Q8", "claims": {"31": []}}, "claims: '31' is not a property id"),
    ({"type": "item", "claims": {}}, 'the entity has no "id"'),
    ({"type": "item", "id": "Q 8"}, "'Q 8' is not a Wikidata entity id"),
])
def test_malformed_entities(entity, reason):
    with pytest.raises(MalformedEntity) as info:
        entity_to_records(entity, LoadOptions())
    assert str(info.value) == reason


# -- files, through kgstore.ingest -------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_store(shared_data, tmp_path_factory):
    store = Store.init(tmp_path_factory.mktemp("wd") / "store")
    summary = ingest(store, "wikidata-json", wikidata_json(shared_data) / "wdtk_sample-dump-20150815.json.gz",
                     options=LoadOptions(languages=("en",), batch_size=40))
    yield store, summary
    store.close()


def test_sample_dump_counts_and_facts(sample_store):
    store, summary = sample_store
    assert summary.status == "done"
    assert {k: summary.counts[k] for k in ("entities", "items", "properties", "rejected", "triples", "facts")} == \
        {"entities": 101, "items": 55, "properties": 46, "rejected": 0, "triples": 241, "facts": 149}
    assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }") == [f"<{WD}Q5>"]
    assert values(store, "SELECT ?x WHERE { wd:Q8 wdt:P31 ?x }") == [f"<{WD}Q331769>", f"<{WD}Q9415>"]
    assert values(store, "SELECT (COUNT(*) AS ?n) WHERE { ?s wdt:P31 ?o }") == \
        ['"149"^^<http://www.w3.org/2001/XMLSchema#integer>']
    with store.catalog.connect() as con:
        # items of the dump know their sitelinks (none here); items only referenced do not
        kinds = dict(con.execute("SELECT kind, count(*) FROM entities WHERE sitelinks IS NOT NULL "
                                 "OR kind = 'property' GROUP BY kind").fetchall())
        relations = con.execute("SELECT count(*) FROM relations WHERE iri LIKE ? AND datatype IS NOT NULL",
                                [WDT + "%"]).fetchone()[0]
        statements = con.execute("SELECT count(*) FROM statements").fetchone()[0]
    assert kinds == {"item": 55, "property": 46}
    assert relations == 46
    assert statements == 149


def test_sample_dump_again_is_a_no_op(sample_store, shared_data):
    store, _ = sample_store
    again = ingest(store, "wikidata-json", wikidata_json(shared_data) / "wdtk_sample-dump-20150815.json.gz",
                   options=LoadOptions(languages=("en",), batch_size=40))
    assert again.status == "skipped"
    assert store.triple_count() == 241


@pytest.fixture(scope="module")
def q42_full(shared_data, tmp_path_factory):
    store = Store.init(tmp_path_factory.mktemp("q42") / "store")
    path = wikidata_json(shared_data) / "api_format/wdtk_wbgetentities-Q6-Q42-P31.json"
    summary = ingest(store, "wikidata-json", path,
                     options=LoadOptions(languages=("en",), statements="full"))
    yield store, summary
    store.close()


def test_q42_api_entity(q42_full):
    store, summary = q42_full
    assert summary.counts["items"] == 1 and summary.counts["properties"] == 1
    assert summary.counts["skipped_missing"] == 1  # Q6: {"id": "Q6", "missing": ""}
    assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }") == [f"<{WD}Q5>"]
    # P998 has one preferred value among six
    assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P998 ?x }") == ['"Arts/Literature/Authors/A/Adams,_Douglas"']
    assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P569 ?x }") == \
        ['"1952-03-11T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>']
    view = store.entity("Q42")
    assert (view.label, view.description) == ("Douglas Adams", "English writer and humorist")
    assert view.aliases == ["Douglas Noël Adams", "Douglas Noel Adams"]
    assert store.label(WDT + "P31") == "instance of"


def test_q42_qualifiers_in_full_mode(q42_full):
    store, _ = q42_full
    rows = list(store.query("""
        SELECT ?spouse ?start ?end WHERE {
            wd:Q42 p:P26 ?st . ?st ps:P26 ?spouse ; pq:P580 ?start ; pq:P582 ?end ; wikibase:rank wikibase:NormalRank
        }"""))
    assert [(str(r["spouse"]), r["start"].value, r["end"].value) for r in rows] == \
        [(f"<{WD}Q14623681>", "1991-11-25T00:00:00Z", "2001-05-11T00:00:00Z")]
    ranks = values(store, "SELECT ?r WHERE { wd:Q42 p:P998 ?st . ?st wikibase:rank ?r }")
    assert Counter(ranks) == Counter({f"<{WIKIBASE}NormalRank>": 5, f"<{WIKIBASE}PreferredRank>": 1})
    # the statement model stays out of the catalog's facts
    with store.catalog.connect() as con:
        assert con.execute("SELECT count(*) FROM statements WHERE p NOT LIKE ?", [WDT + "%"]).fetchone()[0] == 0


def test_buggy_dump_loads_what_is_valid(shared_data, tmp_path):
    path = wikidata_json(shared_data) / "wdtk_mock-dump-with-bugs.json"
    with Store.init(tmp_path / "store") as store:
        summary = ingest(store, "wikidata-json", path, options=LoadOptions(languages=("en",), batch_size=25))
        assert summary.status == "done"
        assert summary.rejected == 2
        assert (summary.counts["items"], summary.counts["properties"]) == (54, 45)
        with store.catalog.connect() as con:
            rejected = con.execute("SELECT line_no, reason, file FROM rejected ORDER BY line_no").fetchall()
        assert [(line, reason) for line, reason, _ in rejected] == [
            (3, 'entity Q8: "labels" must be a JSON object, found an empty array'),
            (19, 'entity P53: "claims" must be a JSON object, found an empty array'),
        ]
        assert {file for _, _, file in rejected} == {str(path)}
        assert values(store, "SELECT ?x WHERE { wd:Q1 wdt:P31 ?x }") == [f"<{WD}Q1454986>"]
        assert not bool(store.query("ASK { wd:Q8 ?p ?o }"))


def test_max_errors(shared_data, tmp_path):
    with Store.init(tmp_path / "store") as store:
        with pytest.raises(TooManyErrorsError):
            ingest(store, "wikidata-json", wikidata_json(shared_data) / "wdtk_mock-dump-with-bugs.json",
                   options=LoadOptions(batch_size=10), max_errors=1)


def test_malformed_lines_are_reported_with_their_numbers(tmp_path):
    good = {"type": "item", "id": "Q1", "claims": {"P31": [_statement("Q1$1", "P31", "Q5")]}}
    lines = ["[", json.dumps(good) + ",", '{"type": "item", "id": "Q2", "claims": {}', "42,", '{"type": "item"},',
             json.dumps({**good, "id": "Q3"}), "]"]
    path = tmp_path / "dump.json"
    path.write_text("\n".join(lines) + "\n")
    batches = list(WikidataJsonLoader().batches(str(path), LoadOptions(batch_size=2)))
    rejected = [(r.line_no, r.reason) for b in batches for r in b.rejected]
    assert rejected == [
        (3, "invalid JSON: unexpected end of data at column 42") if _orjson() else
        (3, "invalid JSON: Expecting ',' delimiter at column 42"),
        (4, "expected a JSON object, found a number"),
        (5, 'the entity has no "id"'),
    ]
    assert {t.s for b in batches for t in b.triples} == {WD + "Q1", WD + "Q3"}
    # batches end on lines, and each checkpoint is the line after its last one
    assert [b.checkpoint.line_no for b in batches] == [2, 4, 6, 7]


def _orjson() -> bool:
    from loaders import wikidata_json
    return wikidata_json._REJECTS_SURROGATES


def test_single_entity_documents(shared_data, tmp_path):
    base = wikidata_json(shared_data) / "single_entity"
    with Store.init(tmp_path / "store") as store:
        item = ingest(store, "wikidata-json", base / "wdtk_JsonDeserializer_item.json")  # pretty-printed
        prop = ingest(store, "wikidata-json", base / "wdtk_JsonDeserializer_property.json")
        lexeme = ingest(store, "wikidata-json", base / "wdtk_JsonDeserializer_lexeme.json")
        media = ingest(store, "wikidata-json", base / "wdtk_JsonDeserializer_mediainfo.json")
        assert (item.counts["items"], prop.counts["properties"]) == (1, 1)
        assert (lexeme.counts["skipped_lexeme"], media.counts["skipped_mediainfo"]) == (1, 1)
        assert item.rejected == prop.rejected == lexeme.rejected == media.rejected == 0
        assert store.entity("Q34987").label == "Bile"
        assert store.label(WDT + "P3467") == "Inventario Sculture - Polo Museale Fiorentino"


def test_gzip_copy_loads_identically(shared_data, tmp_path):
    source = wikidata_json(shared_data) / "derived/dump_format_from_wdtk_api_fixtures.json"
    copy = tmp_path / "dump.json.gz"
    copy.write_bytes(gzip.compress(source.read_bytes()))
    options = LoadOptions(languages=("en", "de"), statements="full", batch_size=2)
    plain = [t for b in WikidataJsonLoader().batches(str(source), options) for t in b.triples]
    packed = [t for b in WikidataJsonLoader().batches(str(copy), options) for t in b.triples]
    assert len(plain) > 2000
    assert packed == plain


def test_interrupted_ingest_resumes_to_the_same_result(shared_data, tmp_path):
    source = wikidata_json(shared_data) / "wdtk_mock-dump-for-long-testing.json"
    options = LoadOptions(languages=("en",), statements="full", batch_size=10)
    with Store.init(tmp_path / "whole") as store:
        ingest(store, "wikidata-json", source, options=options)
        whole = set(store.rdf)

    def stop(progress):
        raise KeyboardInterrupt

    with Store.init(tmp_path / "resumed") as store:
        with pytest.raises(KeyboardInterrupt):
            ingest(store, "wikidata-json", source, options=options, progress=stop)
        partial = store.triple_count()
        with store.catalog.connect() as con:
            line, status = con.execute("SELECT checkpoint_line, status FROM ingest_runs").fetchone()
        assert status == "interrupted" and line % 10 == 0 and 0 < line < 103
        resumed = ingest(store, "wikidata-json", source, options=options)
        assert resumed.status == "done" and resumed.resumed_from_line == line
        assert 0 < partial < len(whole)
        assert set(store.rdf) == whole
        assert resumed.counts["entities"] == 101


def test_truncated_gzip_keeps_what_was_read(shared_data, tmp_path):
    data = gzip.compress((wikidata_json(shared_data) / "wdtk_mock-dump-for-long-testing.json").read_bytes())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    with Store.init(tmp_path / "store") as store:
        with pytest.raises(TruncatedInputError):
            ingest(store, "wikidata-json", path, options=LoadOptions(batch_size=10))
        assert store.triple_count() > 0
        with store.catalog.connect() as con:
            line, status = con.execute("SELECT checkpoint_line, status FROM ingest_runs").fetchone()
        assert status == "failed" and line > 0

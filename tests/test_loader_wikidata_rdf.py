"""The Wikidata RDF loader: full Turtle and truthy N-Triples from ../shared/data through
``kgstore.ingest``, the catalog filled from the same stream, bad lines, resume, .gz input."""
from __future__ import annotations

import gzip
import shutil

import pyoxigraph as ox
import pytest

from kgstore import LoadOptions, Store, TruncatedInputError, ingest
from kgstore.records import Triple
from kgstore.terms import RDFS_LABEL, SKOLEM, WD, WDT, WIKIBASE
from loaders.wikidata_rdf import WikidataRdfLoader, catalog_records, detect_format


def wikidata_rdf(shared_data):
    return shared_data / "formats" / "wikidata_rdf"


def values(store: Store, sparql: str) -> list[str]:
    return sorted(str(row[0]) for row in store.query(sparql))


@pytest.fixture(scope="module")
def q42_store(shared_data, tmp_path_factory):
    store = Store.init(tmp_path_factory.mktemp("ttl") / "store")
    summary = ingest(store, "wikidata-rdf", wikidata_rdf(shared_data) / "full_ttl/wqrdf_Q42.ttl",
                     options=LoadOptions(languages=("en",), batch_size=1000))
    yield store, summary
    store.close()


def test_full_turtle(q42_store):
    store, summary = q42_store
    assert summary.status == "done"
    # 4,455 triples in the file, less the labels, descriptions and aliases in other languages
    assert (summary.counts["triples"], summary.counts["skipped_language"], summary.rejected) == (3611, 844, 0)
    assert store.triple_count() == 3611
    assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }") == [f"<{WD}Q5>"]
    assert values(store, "SELECT ?start WHERE { wd:Q42 p:P106 ?st . ?st ps:P106 wd:Q6625963 ; pq:P580 ?start }") \
        == ['"1979-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>']
    assert values(store, "SELECT (COUNT(?st) AS ?n) WHERE { wd:Q42 ?p ?st . ?st wikibase:rank ?r }") == \
        ['"307"^^<http://www.w3.org/2001/XMLSchema#integer>']  # wikibase:statements "307" in the file


def test_full_turtle_fills_the_catalog(q42_store):
    store, _ = q42_store
    view = store.entity("Q42")
    assert (view.label, view.description) == ("Douglas Adams", "English author and humourist (1952–2001)")
    assert sorted(view.aliases) == ["DNA", "Douglas Noël Adams"]
    with store.catalog.connect() as con:
        row = con.execute("SELECT sitelinks, kind FROM entities WHERE iri = ?", [WD + "Q42"]).fetchone()
        assert row == (122, "item")
        relations = con.execute("SELECT count(*) FROM relations WHERE iri LIKE ?", [WDT + "%"]).fetchone()[0]
        # facts are the wdt: triples only: no statement, value or reference nodes, no sitelinks
        facts = con.execute("SELECT count(*), count(*) FILTER (WHERE p LIKE ? AND s = ?) FROM statements",
                            [WDT + "%", WD + "Q42"]).fetchone()
    assert relations == 269
    assert facts == (300, 300)


def test_truthy_ntriples_is_a_subset_of_the_full_dump(q42_store, shared_data):
    store, _ = q42_store
    before = store.triple_count()
    summary = ingest(store, "wikidata-rdf", wikidata_rdf(shared_data) / "derived_nt/wqrdf_Q42_truthy_subset.nt")
    assert (summary.counts["triples"], summary.rejected) == (304, 0)
    assert store.triple_count() == before


def test_truthy_ntriples(shared_data, tmp_path):
    with Store.init(tmp_path / "store") as store:
        summary = ingest(store, "wikidata-rdf", wikidata_rdf(shared_data) / "derived_nt/wqrdf_Q42_truthy_subset.nt",
                         options=LoadOptions(languages=("en", "de"), batch_size=300))
        assert summary.status == "done" and summary.rejected == 0
        assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }") == [f"<{WD}Q5>"]
        assert values(store, 'SELECT ?l WHERE { wd:Q42 rdfs:label ?l }') == ['"Douglas Adams"@de', '"Douglas Adams"@en']
        assert store.entity("Q42").label == "Douglas Adams"
        assert store.entity("Q42").description == "English author and humourist (1952–2001)"
        with store.catalog.connect() as con:
            assert con.execute("SELECT count(*) FROM relations").fetchone()[0] == 269


def test_gzip_copies_load_identically(shared_data, tmp_path):
    loader, options = WikidataRdfLoader(), LoadOptions(languages=("en",), batch_size=500)
    for name in ("derived_nt/wqrdf_wikidata_triples_small.nt", "full_ttl/wqrdf_tools_test.ttl"):
        source = wikidata_rdf(shared_data) / name
        copy = tmp_path / (source.name + ".gz")
        copy.write_bytes(gzip.compress(source.read_bytes()))
        plain = [t for b in loader.batches(str(source), options) for t in b.triples]
        packed = [t for b in loader.batches(str(copy), options) for t in b.triples]
        assert len(plain) > 1000
        assert packed == plain  # blank nodes included: their IRIs depend on the content only


def test_blank_nodes_become_skolem_iris(shared_data, tmp_path):
    with Store.init(tmp_path / "store") as store:
        ingest(store, "wikidata-rdf", wikidata_rdf(shared_data) / "full_ttl/wqrdf_small_dump.ttl")
        (obj,) = values(store, "SELECT ?o WHERE { ?s wdt:P576 ?o }")
        assert obj.startswith(f"<{SKOLEM}") and obj.endswith("/genid1>")


def test_bad_ntriples_lines_are_rejected_with_their_numbers(tmp_path):
    lines = [
        f"<{WD}Q1> <{WDT}P31> <{WD}Q5> .",
        f'<{WD}Q1> <{RDFS_LABEL}> "universe"@en .',
        f"<{WD}Q2> <{WDT}P31> <{WD}Q 5> .",  # a space in an IRI
        "# a comment",
        f'<{WD}Q3> <{RDFS_LABEL}> "unterminated .',
        f"<{WD}Q3> <{WDT}P31> <{WD}Q5> .",
        f'<{WD}Q4> <{RDFS_LABEL}> "x"@zh-classical .',  # not a BCP 47 tag
        f"<{WD}Q4> <{WDT}P31> <{WD}Q5> .",
    ]
    path = tmp_path / "bad.nt"
    path.write_text("\n".join(lines) + "\n")
    with Store.init(tmp_path / "store") as store:
        summary = ingest(store, "wikidata-rdf", path, options=LoadOptions(batch_size=3))
        assert summary.status == "done" and summary.rejected == 3
        with store.catalog.connect() as con:
            rejected = con.execute("SELECT line_no, reason, raw FROM rejected ORDER BY line_no").fetchall()
        assert [(line, reason) for line, reason, _ in rejected] == [
            (3, "invalid N-Triples: between columns 79 and 115: Invalid IRI code point ' '"),
            (5, "invalid N-Triples: from column 82 to the end of the line: Unexpected end of file"),
            (7, "invalid N-Triples: between columns 86 and 97: A subtag may be eight characters in length at maximum"),
        ]
        assert [raw for _, _, raw in rejected] == [lines[2], lines[4], lines[6]]
        assert values(store, "SELECT ?s WHERE { ?s wdt:P31 wd:Q5 }") == [f"<{WD}Q1>", f"<{WD}Q3>", f"<{WD}Q4>"]
        assert store.entity("Q1").label == "universe"


def test_turtle_syntax_error_is_reported(shared_data, tmp_path):
    with Store.init(tmp_path / "store") as store:
        summary = ingest(store, "wikidata-rdf", wikidata_rdf(shared_data) / "munged_ttl/wqrdf_Q513-munged.ttl")
        assert summary.status == "done" and summary.rejected == 1
        with store.catalog.connect() as con:
            line, reason = con.execute("SELECT line_no, reason FROM rejected").fetchone()
        # line 1641 holds a literal tagged @zh-classical, which is no BCP 47 tag
        assert (line, reason) == (1641, "invalid Turtle: between columns 3996 and 4007: "
                                        "A subtag may be eight characters in length at maximum")
        assert store.entity("Q513").label == "Mount Everest"


def test_interrupted_turtle_ingest_resumes_to_the_same_result(shared_data, tmp_path):
    source = wikidata_rdf(shared_data) / "full_ttl/wqrdf_Q42.ttl"
    options = LoadOptions(languages=("en", "fr"), batch_size=400)
    with Store.init(tmp_path / "whole") as store:
        ingest(store, "wikidata-rdf", source, options=options)
        whole = set(store.rdf)

    def stop(progress):
        raise KeyboardInterrupt

    with Store.init(tmp_path / "resumed") as store:
        with pytest.raises(KeyboardInterrupt):
            ingest(store, "wikidata-rdf", source, options=options, progress=stop)
        partial = store.triple_count()
        with store.catalog.connect() as con:
            # a Turtle checkpoint counts the triples read so far (see loaders/wikidata_rdf.py)
            done = con.execute("SELECT checkpoint_offset FROM ingest_runs").fetchone()[0]
        assert done % 400 == 0 and 0 < done < 4455
        resumed = ingest(store, "wikidata-rdf", source, options=options)
        assert resumed.status == "done"
        assert 0 < partial < len(whole)
        assert set(store.rdf) == whole


def test_format_detection(shared_data, tmp_path):
    base = wikidata_rdf(shared_data)
    assert detect_format(str(base / "full_ttl/wqrdf_Q42.ttl")) == ox.RdfFormat.TURTLE
    assert detect_format(str(base / "derived_nt/wqrdf_Q42_truthy_subset.nt")) == ox.RdfFormat.N_TRIPLES
    assert detect_format("latest-truthy.nt.bz2") == ox.RdfFormat.N_TRIPLES
    unnamed_nt, unnamed_ttl = tmp_path / "a.dump", tmp_path / "b.dump"
    shutil.copy(base / "derived_nt/wqrdf_Q42_truthy_subset.nt", unnamed_nt)
    shutil.copy(base / "full_ttl/wqrdf_small_dump.ttl", unnamed_ttl)
    assert detect_format(str(unnamed_nt)) == ox.RdfFormat.N_TRIPLES
    assert detect_format(str(unnamed_ttl)) == ox.RdfFormat.TURTLE


def test_catalog_records_pick_the_first_listed_language():
    q, p = WD + "Q1", WD + "P31"
    triples = [
        Triple(q, RDFS_LABEL, "Universum", True, None, "de"),
        Triple(q, RDFS_LABEL, "universe", True, None, "en"),
        Triple(p, RDFS_LABEL, "instance of", True, None, "en"),
        Triple(p, WIKIBASE + "propertyType", WIKIBASE + "WikibaseItem"),
        Triple(q, WDT + "P31", WD + "Q36906466"),
    ]
    entities, relations = catalog_records(triples, ("en", "de"))
    assert {(e.iri, e.label, e.kind) for e in entities} == {(q, "universe", "item"), (p, "instance of", "property")}
    assert {(r.iri, r.id, r.label, r.datatype) for r in relations} == \
        {(WDT + "P31", "P31", "instance of", "wikibase-item")}
    entities, _ = catalog_records(triples, ("de",))
    assert {e.label for e in entities if e.iri == q} == {"Universum"}


def test_truncated_turtle_keeps_what_was_read(shared_data, tmp_path):
    data = gzip.compress((wikidata_rdf(shared_data) / "full_ttl/wqrdf_Q42.ttl").read_bytes())
    path = tmp_path / "cut.ttl.gz"
    path.write_bytes(data[: len(data) // 2])
    with Store.init(tmp_path / "store") as store:
        with pytest.raises(TruncatedInputError) as info:
            ingest(store, "wikidata-rdf", path, options=LoadOptions(batch_size=500))
        assert "the compressed input ends early" in str(info.value)
        with store.catalog.connect() as con:
            done, status, rejected = con.execute(
                "SELECT checkpoint_offset, status, (SELECT count(*) FROM rejected) FROM ingest_runs").fetchone()
        # every triple before the damage is committed, and the cut statement is no "bad line"
        assert status == "failed" and rejected == 0 and done > 2000
        assert values(store, "SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }") == [f"<{WD}Q5>"]

"""An entity's facts read through Oxigraph's indexes are the catalog's statements rows:
the same facts, by subject and by object, on real Wikidata dumps (JSON, and full RDF with
its statement nodes), ranked one per relation first."""
from __future__ import annotations

from decimal import Decimal

import pyoxigraph as ox
import pytest

from kgstore import Store, ingest
from kgstore._entity_facts import FactRow, catalog_fact_rows, first_per_relation, oxigraph_fact_rows
from kgstore.terms import XSD

ALL = 1_000_000


def comparable(row) -> tuple:
    """A row with its literal in value form: Oxigraph keeps a decimal canonical ("3676.9"),
    the catalog keeps the dump's lexical form ("3676.90")."""
    s, p, o, literal, datatype = row[:5]
    if literal and datatype == XSD + "decimal":
        o = Decimal(o).normalize()
    return s, p, o, bool(literal), datatype


@pytest.fixture(scope="module", params=[("wikidata-json", "wikidata_json/derived/dump_format_from_wdtk_api_fixtures.json"),
                                        ("wikidata-rdf", "wikidata_rdf/full_ttl/wqrdf_Q42.ttl")],
                ids=["json", "rdf"])
def dump_store(request, shared_data, tmp_path_factory):
    fmt, rel = request.param
    store = Store.init(tmp_path_factory.mktemp(fmt) / "store")
    ingest(store, fmt, shared_data / "formats" / rel)
    yield store
    store.close()


def test_oxigraph_reads_the_catalog_facts_by_subject_and_by_object(dump_store):
    with dump_store.catalog.connect() as con:
        iris = [r[0] for r in con.execute("SELECT DISTINCT s FROM statements UNION SELECT DISTINCT o FROM statements "
                                          "WHERE NOT o_literal ORDER BY 1 LIMIT 400").fetchall()]
        assert len(iris) > 50
        compared = 0
        for iri in iris:
            for side in ("out", "in"):
                catalog = sorted(comparable(r) for r in catalog_fact_rows(con, iri, side, ALL))
                oxigraph = sorted(comparable(r) for r in oxigraph_fact_rows(dump_store.rdf, iri, side))
                assert oxigraph == catalog, (iri, side)
                compared += len(catalog)
    assert compared > 200


def test_edges_carry_the_catalog_labels(dump_store):
    with dump_store.catalog.connect() as con:
        iri, = con.execute("SELECT s FROM statements GROUP BY s ORDER BY count(*) DESC, s LIMIT 1").fetchone()
    edges = dump_store.edges(iri, direction="out", limit=20)
    assert 0 < len(edges) <= 20
    labels = dump_store.labels([e.s for e in edges] + [e.p for e in edges] + [e.o for e in edges if not e.o_literal])
    for edge in edges:
        assert edge.s == iri and edge.s_label == labels.get(iri)
        assert edge.p_label == labels.get(edge.p)
        assert edge.o_label == (None if edge.o_literal else labels.get(edge.o))
    # one per relation first: no relation repeats before every relation has appeared
    relations = [e.p for e in edges]
    distinct = len(set(relations))
    assert len(set(relations[:distinct])) == distinct


def test_labels_skip_iris_without_one_and_read_relations_too(dump_store):
    with dump_store.catalog.connect() as con:
        labelled = con.execute("SELECT iri, label FROM entities WHERE label IS NOT NULL ORDER BY iri LIMIT 2").fetchall()
        labelled += con.execute("SELECT iri, label FROM relations WHERE label IS NOT NULL ORDER BY iri LIMIT 2").fetchall()
        unlabelled = [r[0] for r in con.execute("SELECT iri FROM entities WHERE label IS NULL ORDER BY iri LIMIT 2 "
                                                ).fetchall()]
    assert labelled
    found = dump_store.labels([iri for iri, _ in labelled] + unlabelled + ["http://example.org/not-in-the-store"])
    assert found == dict(labelled)


def test_a_hubs_incoming_facts_are_read_up_to_the_cap(dump_store):
    with dump_store.catalog.connect() as con:
        hub, n = con.execute("SELECT o, count(*) FROM statements WHERE NOT o_literal GROUP BY o "
                             "ORDER BY 2 DESC, 1 LIMIT 1").fetchone()
    assert n >= 3
    every = oxigraph_fact_rows(dump_store.rdf, hub, "in")
    assert len(every) == n
    scanned = [q for q, _ in zip(dump_store.rdf.quads_for_pattern(None, None, ox.NamedNode(hub)), range(2))]
    capped = oxigraph_fact_rows(dump_store.rdf, hub, "in", max_scanned=2)
    # the facts among the first two triples Oxigraph gives: no more were read
    assert capped == [r for r in every if (r.s, r.p) in {(q.subject.value, q.predicate.value) for q in scanned}]
    assert len(capped) <= 2 < n


def test_first_per_relation_ranks_each_relation_before_any_repeats():
    rows = [FactRow("s", p, o, False, None, None) for p, o in
            [("b", "o3"), ("a", "o2"), ("a", "o1"), ("b", "o1"), ("c", "o9"), ("a", "o3")]]
    ranked = first_per_relation(rows, 4)
    assert [(r.p, r.o) for r in ranked] == [("a", "o1"), ("b", "o1"), ("c", "o9"), ("a", "o2")]
    assert first_per_relation(rows, 0) == []


def test_not_an_iri_has_no_facts(dump_store):
    assert oxigraph_fact_rows(dump_store.rdf, "not an iri", "out") == []
    assert dump_store.edges("http://example.org/nothing") == []

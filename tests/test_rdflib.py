"""Store.rdflib(): an rdflib Dataset over the store's own triples through oxrdflib."""
from __future__ import annotations

import pytest

import kgstore
from kgstore import Store
from kgstore.config import StoreConfig
from kgstore.errors import QueryRefusedError, ReadOnlyError

rdflib = pytest.importorskip("rdflib")
pytest.importorskip("oxrdflib")

COUNTRIES = "SELECT ?c ?name WHERE { wd:Q5456 wdt:P17 ?c . ?c rdfs:label ?name } ORDER BY ?name"
ANDES = rdflib.URIRef("http://www.wikidata.org/entity/Q5456")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory, sample_dir):
    path = tmp_path_factory.mktemp("rdflib") / "store"
    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
    return path


def test_dataset_answers_sparql_and_len_like_the_store(store_path):
    with Store.open(store_path, read_only=True) as store:
        ds = store.rdflib()
        assert isinstance(ds, rdflib.Dataset)
        assert len(ds) == store.triple_count() == 390
        rows = [(str(r.c), str(r.name)) for r in ds.query(COUNTRIES)]  # store prefixes are bound
        expected = [(s["c"].value, s["name"].value) for s in store.query(COUNTRIES)]
        assert rows == expected and len(rows) == 7
        assert ds.query("ASK { wd:Q5456 wdt:P17 wd:Q419 }").askAnswer is True


def test_dataset_works_with_rdflib_graph_api_and_serializers(store_path):
    with Store.open(store_path, read_only=True) as store:
        ds = store.rdflib()
        labels = {str(o) for o in ds.objects(ANDES, rdflib.RDFS.label)}
        assert labels == {"Andes"}
        countries = rdflib.Graph()
        for triple in ds.triples((ANDES, rdflib.URIRef("http://www.wikidata.org/prop/direct/P17"), None)):
            countries.add(triple)
        turtle = countries.serialize(format="turtle")
        assert len(rdflib.Graph().parse(data=turtle, format="turtle")) == 7


def test_dataset_is_read_only_by_default(store_path):
    triple = (ANDES, rdflib.RDFS.comment, rdflib.Literal("written through rdflib"))
    with Store.open(store_path) as store:
        ds = store.rdflib()
        with pytest.raises(ReadOnlyError, match="writes through rdflib bypass kgstore's catalog"):
            ds.add(triple)
        with pytest.raises(ReadOnlyError):
            ds.update("INSERT DATA { wd:Q5456 rdfs:comment 'x' }")
        with pytest.raises(ReadOnlyError):
            ds.remove((ANDES, None, None))
        assert len(ds) == 390


def test_writable_dataset_writes_but_still_refuses_load(tmp_path, store_path):
    with Store.init(tmp_path / "s") as store:
        ds = store.rdflib(writable=True)
        ds.add((ANDES, rdflib.RDFS.comment, rdflib.Literal("x")))
        assert store.triple_count() == 1
        with pytest.raises(QueryRefusedError, match="LOAD is refused"):
            ds.update("INSERT DATA { wd:Q1 rdfs:label 'a' } ; LOAD <http://example.org/data.ttl>")
        assert store.triple_count() == 1
        del ds  # the Dataset holds the Oxigraph store open: drop it with the Store
    with Store.open(store_path, read_only=True) as ro, pytest.raises(ReadOnlyError):
        ro.rdflib(writable=True)


def test_service_is_refused_through_rdflib_unless_allowed(store_path, tmp_path):
    query = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
    with Store.open(store_path, read_only=True) as store:
        with pytest.raises(QueryRefusedError, match="SERVICE"):
            store.rdflib().query(query)
    config = StoreConfig()
    config.sparql.allow_service = True
    with Store.init(tmp_path / "fed", config=config) as store:
        # Allowed: the guard lets it through to pyoxigraph (an unparsable SERVICE IRI keeps
        # this test off the network).
        with pytest.raises(SyntaxError):
            store.rdflib().query("SELECT * WHERE { SERVICE <not an iri> { ?s ?p ?o } }")

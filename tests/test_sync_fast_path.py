"""`kgstore sync`'s fast path gives the catalog the earlier path gave (issue 43, section 2).

* The Arrow decoder of N-Triples and TSV lines gives, row for row, what pyoxigraph's
  parsers give, escapes, language tags, datatypes and blank nodes included.
* Entity rows staged per page and merged at the end equal the per-page upsert.
* Live: a store synced the fast way (Oxigraph server's TSV and Virtuoso's N-Triples, Arrow
  decoded, read ahead by threads) has the same catalog, table by table, as one synced from
  the same engine the earlier way (SPARQL XML results parsed by pyoxigraph, one request).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pyoxigraph as ox
import pytest
from click.testing import CliRunner

import kgstore
from kgstore import Store
from kgstore import _line_terms
from kgstore._catalog import DDL, Catalog
from kgstore._columns import triple_columns
from kgstore._entity_stage import clear_stage, merge_staged_entities, stage_entities
from kgstore._line_terms import TSV_HEADER, column_pages, triple_columns_of_lines
from kgstore._sync_records import catalog_records, triples_of_quads, triples_of_solutions
from kgstore.cli import main
from kgstore.config import StoreConfig
from kgstore.records import Triple
from kgstore.terms import SKOLEM

from sparql_servers import (OXIGRAPH_INSTALL_HINT, VIRTUOSO_INSTALL_HINT, OxigraphServer, VirtuosoServer,
                            oxigraph_binary, virtuoso_binaries)

GRAPH = "http://kgstore.test/fast"
XSD = "http://www.w3.org/2001/XMLSchema#"
# Lines that take every branch of the decoder: plain, tagged (upper case), typed, xsd:string,
# escapes, \u escapes, a raw tab, a literal ending in a dot, blank nodes on both sides.
TRICKY = f"""\
<urn:kg:a> <urn:kg:p> "plain" .
<urn:kg:a> <urn:kg:p> "tagged"@EN-GB .
<urn:kg:a> <urn:kg:p> "7"^^<{XSD}integer> .
<urn:kg:a> <urn:kg:p> "3.5"^^<{XSD}decimal> .
<urn:kg:a> <urn:kg:p> "typed string"^^<{XSD}string> .
<urn:kg:a> <urn:kg:p> "q\\"uote\\\\ and \\n newline" .
<urn:kg:a> <urn:kg:p> "\\u00e9t\\u00E9"@fr .
<urn:kg:a> <urn:kg:p> "raw\ttab" .
<urn:kg:a> <urn:kg:p> "Inc." .
<urn:kg:a> <urn:kg:p> "été à Zürich"@de .
<urn:kg:b> <http://www.w3.org/2000/01/rdf-schema#label> "B"@en .
"""
# Not given to Virtuoso: the earlier path cannot read its blank nodes (pyoxigraph refuses
# the nodeID://b10001 of its XML results), so there is nothing to compare with.
BLANK = """\
<urn:kg:a> <urn:kg:p> _:node1 .
_:node2 <urn:kg:p> <urn:kg:b> .
"""
BNODES = "urn:skolem:test/"


def _pyoxigraph_ntriples(text: bytes):
    return triple_columns(list(triples_of_quads(ox.parse(text, format=ox.RdfFormat.N_TRIPLES), BNODES)))


@pytest.fixture(scope="module")
def demo_ntriples(sample_dir, tmp_path_factory) -> Path:
    """The demo sample's triples plus the tricky lines, as N-Triples."""
    base = tmp_path_factory.mktemp("fast_path_data")
    with Store.init(base / "local") as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
        store.rdf.dump(output=str(base / "demo.nt"), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    with open(base / "demo.nt", "a", encoding="utf-8") as f:
        f.write(TRICKY)
    (base / "blank.nt").write_text(BLANK, encoding="utf-8")
    return base / "demo.nt"


# -- the decoder -------------------------------------------------------------------------------------
@pytest.mark.parametrize("separator", [" ", "\t"])
def test_ntriples_lines_decode_as_pyoxigraph_parses_them(separator, demo_ntriples):
    text = demo_ntriples.read_bytes() + BLANK.encode()
    if separator == "\t":  # as Virtuoso writes them
        text = b"\n".join(line.replace(b" ", b"\t", 2) for line in text.split(b"\n"))
    got = triple_columns_of_lines(b"# a comment\n\n" + text, BNODES, ntriples=True)
    assert got.equals(_pyoxigraph_ntriples(text))


def test_tsv_lines_decode_as_pyoxigraph_parses_them(demo_ntriples):
    store = ox.Store()
    store.bulk_load(demo_ntriples.read_bytes() + BLANK.encode(), format=ox.RdfFormat.N_TRIPLES)
    # Oxigraph's TSV writes numbers bare (7, 3.5): those lines go through pyoxigraph
    tsv = store.query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }").serialize(format=ox.QueryResultsFormat.TSV)
    assert tsv.startswith(TSV_HEADER)
    expected = triple_columns(list(triples_of_solutions(
        ox.parse_query_results(tsv, format=ox.QueryResultsFormat.TSV), BNODES)))
    assert triple_columns_of_lines(tsv[len(TSV_HEADER):], BNODES, ntriples=False).equals(expected)
    assert len(expected) > 300 and "7" in expected.field("o").to_pylist()


def test_pages_cut_across_decode_blocks_give_the_same_rows(demo_ntriples, monkeypatch):
    import io

    text = demo_ntriples.read_bytes()
    monkeypatch.setattr(_line_terms, "DECODE_BYTES", 997)  # blocks cut lines anywhere
    pages = list(column_pages(io.BytesIO(text), 37, BNODES, ntriples=True))
    assert all(len(p) == 37 for p in pages[:-1]) and 0 < len(pages[-1]) <= 37
    joined = triple_columns([tuple(r.values()) for p in pages for r in p.to_pylist()])
    assert joined.equals(_pyoxigraph_ntriples(text))


# -- the staged entity rows --------------------------------------------------------------------------
def test_staged_entities_merge_as_the_per_page_upsert_did(demo_ntriples, tmp_path):
    triples = _pyoxigraph_ntriples(demo_ntriples.read_bytes()).to_pylist()
    # pages of 7 rows cut entities' labels, descriptions and aliases over several pages
    pages = [[Triple(*r.values()) for r in triples[i:i + 7]] for i in range(0, len(triples), 7)]
    tables = {}
    for way in ("upsert", "staged"):
        con = duckdb.connect(str(tmp_path / f"{way}.duckdb"))
        con.execute(DDL)
        clear_stage(con)
        for n, page in enumerate(pages, 1):
            entities, _ = catalog_records(page, ["en", "de"])
            if way == "upsert":
                Catalog._upsert_entities(con, entities)
            else:
                stage_entities(con, n, Catalog.entities_table(entities))
        if way == "staged":
            merge_staged_entities(con)
        rows = con.execute("SELECT iri, id, label, description, aliases, sitelinks, is_mediator, kind "
                           "FROM entities ORDER BY iri").fetchall()
        # aliases of an entity cut over pages were a list_distinct (no order) before too
        tables[way] = [r[:4] + (sorted(r[4]) if r[4] else r[4],) + r[5:] for r in rows]
        con.close()
    assert tables["staged"] == tables["upsert"]
    assert sum(1 for r in tables["staged"] if r[4] and len(r[4]) > 1) >= 3  # aliases were merged


# -- live: the fast path against the earlier one -------------------------------------------------------
@pytest.fixture(scope="module")
def engines(demo_ntriples, tmp_path_factory):
    started: dict[str, object] = {}

    def get(name: str):
        if name not in started:
            base = tmp_path_factory.mktemp(f"fast_{name}")
            if name == "oxigraph":
                if oxigraph_binary() is None:
                    _required("the oxigraph server", OXIGRAPH_INSTALL_HINT)
                started[name] = OxigraphServer.create(base, [demo_ntriples, demo_ntriples.with_name("blank.nt")],
                                                      GRAPH)
            else:
                if virtuoso_binaries() is None:
                    _required("Virtuoso", VIRTUOSO_INSTALL_HINT)
                started[name] = VirtuosoServer.create(base, [demo_ntriples], GRAPH, max_rows=1_000_000)
        return started[name]

    yield get
    for server in started.values():
        server.stop()


def _required(what: str, hint: str):
    if os.environ.get("KGSTORE_REQUIRE_ENGINES"):
        pytest.fail(f"{what} is required in CI: {hint}")
    pytest.skip(hint)


def _catalog(path: Path) -> dict:
    with Store.open(path, read_only=True) as store, store.catalog.connect() as con:
        return {
            "entities": [r[:4] + (sorted(r[4]) if r[4] else r[4],) + r[5:] for r in con.execute(
                "SELECT iri, id, label, description, aliases, sitelinks, popularity, is_mediator, kind "
                "FROM entities ORDER BY iri").fetchall()],
            "relations": con.execute("SELECT * FROM relations ORDER BY iri").fetchall(),
            "statements": con.execute("SELECT s, p, o, o_literal, datatype, lang FROM statements "
                                      "ORDER BY ALL").fetchall(),
        }


@pytest.mark.endpoint
@pytest.mark.parametrize("engine", ["oxigraph", "virtuoso"])
def test_fast_sync_gives_the_catalog_of_the_earlier_path(engine, engines, tmp_path):
    server = engines(engine)
    fast, earlier = tmp_path / "fast", tmp_path / "earlier"
    result = CliRunner().invoke(main, ["init", str(fast), "--endpoint", server.url, "--graph", GRAPH])
    assert result.exit_code == 0, result.output
    caps = StoreConfig.load(fast).endpoint_capabilities
    assert caps.result_cap == 0
    assert caps.results_format == "tsv" or caps.construct_ntriples  # what the fast path reads
    shutil.copytree(fast, earlier)
    config = StoreConfig.load(earlier)
    config.endpoint_capabilities.results_format, config.endpoint_capabilities.construct_ntriples = "xml", False
    config.save(earlier)
    for path in (fast, earlier):
        with Store.open(path) as store:
            # small pages and segments: the fast path's read-ahead and its page cuts get used
            summary = kgstore.sync(store, page_rows=50, segment_rows=120)
        assert summary.status == "done"
    got, expected = _catalog(fast), _catalog(earlier)
    for table in expected:
        assert got[table] == expected[table], table
    labels = {r[0]: r[2] for r in got["entities"]}
    assert labels["urn:kg:b"] == "B"
    assert ("urn:kg:a", "urn:kg:p", "été à Zürich", True, None, "de") in got["statements"]


@pytest.mark.endpoint
def test_virtuoso_blank_nodes_sync_through_ntriples(engines, demo_ntriples, tmp_path):
    """What the earlier path could not read: blank-node objects become skolem IRIs, a
    blank-node subject's triples are left out (paging needs IRIs)."""
    server = engines("virtuoso")
    graph = GRAPH + "/blank"
    server.load_more([demo_ntriples.with_name("blank.nt")], graph)
    path = tmp_path / "blank"
    result = CliRunner().invoke(main, ["init", str(path), "--endpoint", server.url, "--graph", graph])
    assert result.exit_code == 0, result.output
    with Store.open(path) as store:
        assert kgstore.sync(store).counts["triples"] == 1
        with store.catalog.connect() as con:
            (s, p, o), = con.execute("SELECT s, p, o FROM statements").fetchall()
    assert (s, p) == ("urn:kg:a", "urn:kg:p") and o.startswith(SKOLEM)

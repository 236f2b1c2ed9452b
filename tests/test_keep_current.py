"""Keeping a store current: a newer entity document replaces the old one in every part.

The Peru probe (issue 50): on the demo store, Peru's document changes (capital Lima to
Cusco, the border with Colombia gone, English label "Republic of Peru"). After
`kgstore update`, SPARQL, `kgstore entity`, Cypher on the property graph, `search`,
`link` and `ask` (the real model) all see the new version only. Real engines throughout: Oxigraph, DuckDB, Ladybug,
the packaged encoder.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import kgstore
from kgstore import Store
from kgstore.cli import main
from kgstore.graph import open_graph, sync_graph

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample-wikidata.json"
PERU, LIMA, CUSCO, COLOMBIA = "Q419", "Q2868", "Q5582", "Q739"
WD = "http://www.wikidata.org/entity/"


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def item(eid: str, value_id: str, pid: str, n: int) -> dict:
    return {"mainsnak": {"snaktype": "value", "property": pid, "datatype": "wikibase-item",
                         "datavalue": {"type": "wikibase-entityid",
                                       "value": {"entity-type": "item", "numeric-id": int(value_id[1:]),
                                                 "id": value_id}}},
            "type": "statement", "id": f"{eid}$kgstore-sample-{pid}-{n}", "rank": "normal"}


def peru_change(tmp_path: Path) -> Path:
    """Peru's newer document, and Cusco's (new to the store), in Wikidata's
    Special:EntityData shape."""
    peru = next(e for e in json.loads(SAMPLE.read_text()) if e["id"] == PERU)
    peru["labels"]["en"]["value"] = "Republic of Peru"
    peru["aliases"] = {}
    peru["claims"]["P36"] = [item(PERU, CUSCO, "P36", 1)]
    peru["claims"]["P47"] = [st for st in peru["claims"]["P47"]
                             if st["mainsnak"]["datavalue"]["value"]["id"] != COLOMBIA]
    cusco = {"type": "item", "id": CUSCO, "labels": {"en": {"language": "en", "value": "Cusco"}},
             "descriptions": {"en": {"language": "en", "value": "city in Peru"}}, "aliases": {},
             "claims": {"P17": [item(CUSCO, PERU, "P17", 1)]}, "sitelinks": {}}
    path = tmp_path / "peru.json"
    path.write_text(json.dumps({"entities": {PERU: peru, CUSCO: cusco}}, indent=1))
    return path


def probe(store: Store, index) -> dict:
    """What each part of the store says about Peru."""
    capitals = sorted(r["c"].value for r in store.query(f"SELECT ?c WHERE {{ wd:{PERU} wdt:P36 ?c }}"))
    labels = sorted(r["l"].value for r in store.query(f"SELECT ?l WHERE {{ wd:{PERU} rdfs:label ?l }}"))
    border = bool(store.query(f"ASK {{ wd:{PERU} wdt:P47 wd:{COLOMBIA} }}"))
    view = store.entity(PERU)
    with open_graph(store) as graph:
        node = graph.query("MATCH (p:Entity {iri: $iri}) RETURN p.label AS label", {"iri": WD + PERU})
        graph_capitals = sorted(r["c"] for r in graph.query(
            "MATCH (p:Entity {iri: $iri})-[r:REL]->(c:Entity) WHERE r.pid = 'P36' RETURN c.iri AS c",
            {"iri": WD + PERU}))
        graph_border = graph.query(
            "MATCH (p:Entity {iri: $iri})-[r:REL]->(c:Entity {iri: $c}) WHERE r.pid = 'P47' RETURN count(*) AS n",
            {"iri": WD + PERU, "c": WD + COLOMBIA})[0]["n"]
    entity_hits = [h for h in index.search("entities", "Peru country in South America", 10) if h.iri == WD + PERU]
    triple_hits = [h.text for h in index.search("triples", "Peru capital", 30) if h.iri == WD + PERU]
    linked = {c.iri: c.match for c in index.link("Peru", 10)}
    return {"sparql_capitals": capitals, "sparql_labels": labels, "sparql_colombia_border": border,
            "entity_label": view.label, "entity_aliases": view.aliases,
            "entity_capitals": sorted(f.value for f in view.facts if f.relation_id == "P36"),
            "entity_borders": sorted(f.value for f in view.facts if f.relation_id == "P47"),
            "graph_label": node[0]["label"], "graph_capitals": graph_capitals, "graph_colombia_border": graph_border,
            "search_entity_texts": sorted(h.text for h in entity_hits), "search_triple_texts": sorted(triple_hits),
            "link_peru": linked.get(WD + PERU)}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("keep-current") / "demo"
    run("init", path)
    run("ingest", path, "wikidata-json", SAMPLE)
    run("graph", "sync", path)
    run("index", path, "--kinds", "entities,triples,uris,relations")  # all `ask` reads
    return path


def test_peru_probe_every_part_agrees_after_update(demo, tmp_path):
    from indexer import Index

    with Store.open(demo, read_only=True) as store, Index.open(store) as index:
        before = probe(store, index)
    assert before["sparql_capitals"] == [WD + LIMA] and before["sparql_colombia_border"]
    assert before["link_peru"] in ("exact", "label")

    output = run("update", demo, peru_change(tmp_path))
    assert "Property graph" in output and "Index: embedded" in output

    with Store.open(demo, read_only=True) as store, Index.open(store) as index:
        after = probe(store, index)
    print("Peru before:", json.dumps(before, indent=1), "\nPeru after:", json.dumps(after, indent=1))
    new = WD + CUSCO
    assert after["sparql_capitals"] == [new]
    assert after["sparql_labels"] == ["Republic of Peru"]
    assert after["sparql_colombia_border"] is False
    assert after["entity_label"] == "Republic of Peru" and "Peru" not in after["entity_aliases"]
    assert after["entity_capitals"] == [new]
    assert WD + COLOMBIA not in after["entity_borders"] and len(after["entity_borders"]) == 3
    assert after["graph_label"] == "Republic of Peru"
    assert after["graph_capitals"] == [new] and after["graph_colombia_border"] == 0
    assert after["search_entity_texts"] and all("Republic of Peru" in t for t in after["search_entity_texts"])
    assert not any("Lima" in t or "Colombia" in t for t in after["search_triple_texts"])
    assert any("Cusco" in t for t in after["search_triple_texts"])
    assert after["link_peru"] in (None, "vector")  # the old label is no longer a name of Peru
    # Facts others hold about Peru stay: Colombia still says it borders Peru.
    with Store.open(demo, read_only=True) as store:
        assert bool(store.query(f"ASK {{ wd:{COLOMBIA} wdt:P47 wd:{PERU} }}"))
        assert store.entity(LIMA) is not None  # Lima has its own document


@pytest.mark.llm
def test_ask_answers_from_the_new_version_only(demo, tmp_path):
    """The probe's last part, `ask` with the real model: Cusco is the capital, never Lima.
    It runs before the tests below delete Cusco, and applies the update itself (a no-op
    after the probe), so it also stands alone."""
    run("update", demo, peru_change(tmp_path))
    answer = json.loads(run("ask", demo, "What is the capital of the Republic of Peru?", "--format", "json"))
    print("ask:", json.dumps({k: answer.get(k) for k in ("answers", "answer_iris", "refusal", "query")}))
    assert answer["answers"] == ["Cusco"] and answer["answer_iris"] == [WD + CUSCO]
    assert not any(e["o"] == WD + LIMA for e in answer["evidence"])


def test_cli_entity_agrees_after_update(demo):
    doc = json.loads(run("entity", demo, PERU, "--format", "json"))
    assert doc["label"] == "Republic of Peru"
    assert [f["value_iri"] for f in doc["facts"] if f["relation_id"] == "P36"] == [WD + CUSCO]


def test_update_twice_is_a_no_op_and_delete_removes_everywhere(demo, tmp_path):
    path = peru_change(tmp_path)
    assert "already applied" in run("update", demo, path)
    run("delete", demo, CUSCO)
    with Store.open(demo, read_only=True) as store:
        assert not bool(store.query(f"ASK {{ wd:{CUSCO} ?p ?o }}"))
        view = store.entity(CUSCO)  # Peru still names it: a bare node, as a fresh load would have
        assert view is not None and view.label is None
        with open_graph(store) as graph:
            rows = graph.query("MATCH (c:Entity {iri: $iri}) RETURN c.label AS label", {"iri": WD + CUSCO})
        assert rows == [{"label": None}]


def test_redirect_moves_incoming_and_old_id_resolves(tmp_path):
    path = tmp_path / "s"
    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", SAMPLE)
    feed = tmp_path / "merge.jsonl"
    feed.write_text(json.dumps({"id": LIMA, "redirects": {"from": LIMA, "to": CUSCO}}) + "\n")
    with Store.open(path) as store:
        summary = kgstore.update(store, "wikidata-json", feed)
        assert summary.counts["redirected"] == 1
        assert [r["c"].value for r in store.query(f"SELECT ?c WHERE {{ wd:{PERU} wdt:P36 ?c }}")] == [WD + CUSCO]
        assert not bool(store.query(f"ASK {{ wd:{LIMA} ?p ?o }}"))
        assert store.resolve(LIMA) == WD + CUSCO
        assert store.entity(LIMA).iri == WD + CUSCO


def test_malformed_document_is_quarantined_and_old_version_stays(tmp_path):
    path = tmp_path / "s"
    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", SAMPLE)
        before = sorted(str(q) for q in store.rdf.quads_for_pattern(None, None, None))
    feed = tmp_path / "bad.jsonl"
    feed.write_text('{"type": "item", "id": "Q419", "labels": {"en": {"language": "en", "value": "Republic of Peru"}}, '
                    '"claims": []}\n{"type": "item", "id": "Q419", "labels": \n')
    with Store.open(path) as store:
        summary = kgstore.update(store, "wikidata-json", feed)
        assert summary.rejected == 2 and summary.counts.get("documents", 0) == 0
        assert sorted(str(q) for q in store.rdf.quads_for_pattern(None, None, None)) == before
        assert store.entity(PERU).label == "Peru"
        with store.catalog.connect() as con:
            reasons = [r[0] for r in con.execute("SELECT reason FROM rejected ORDER BY line_no").fetchall()]
    assert "claims" in reasons[0] and "invalid JSON" in reasons[1]


def test_update_refuses_append_only_formats(tmp_path):
    path = tmp_path / "s"
    with Store.init(path) as store:
        with pytest.raises(kgstore.IngestError, match="append|adds"):
            kgstore.update(store, "tsv", SAMPLE)


def test_entity_rdf_replaces_like_json_across_batches(shared_data, tmp_path):
    """Special:EntityData/Q42.ttl, then a newer one: the store equals a fresh load of the
    newer one (its statement, value and reference nodes, sitelink articles and dataset
    record included), also when the entity spans several batches."""
    from store_state import store_state

    old_ttl = shared_data / "formats" / "wikidata_rdf" / "full_ttl" / "wqrdf_Q42.ttl"
    text = old_ttl.read_text(encoding="utf-8")
    assert "wdt:P19 wd:Q350" in text and '"Douglas Adams"@en' in text
    newer = (text.replace("wd:Q350", "wd:Q84")  # born in London, not Cambridge, in every statement
             .replace('"Douglas Adams"@en', '"Douglas Noël Adams"@en')
             .replace('"1997465481"^^xsd:integer', '"2000000000"^^xsd:integer'))
    new_ttl = tmp_path / "Q42-newer.ttl"
    new_ttl.write_text(newer, encoding="utf-8")
    options = kgstore.LoadOptions(batch_size=1000)
    with Store.init(tmp_path / "updated") as store:
        kgstore.ingest(store, "wikidata-rdf", old_ttl, options=options)
        summary = kgstore.update(store, "wikidata-rdf", new_ttl, options=options)
        assert summary.counts["documents"] == 1
        assert [r["o"].value for r in store.query("SELECT ?o WHERE { wd:Q42 wdt:P19 ?o }")] == [WD + "Q84"]
    with Store.init(tmp_path / "fresh") as store:
        kgstore.ingest(store, "wikidata-rdf", new_ttl, options=options)
    updated = store_state(tmp_path / "updated", graph=False, index=False)
    fresh = store_state(tmp_path / "fresh", graph=False, index=False)
    assert updated.differences(fresh) == {}


def test_drop_missing_deletes_only_when_asked(tmp_path):
    path = tmp_path / "s"
    run("init", path)
    run("ingest", path, "wikidata-json", SAMPLE)
    kept = [e for e in json.loads(SAMPLE.read_text()) if e["id"] not in (LIMA, "Q5451")]
    newer = tmp_path / "newer-dump.json"
    newer.write_text("[\n" + ",\n".join(json.dumps(e) for e in kept) + "\n]\n")
    run("update", path, newer)  # a partial file: nothing is deleted
    with Store.open(path, read_only=True) as store:
        assert store.entity(LIMA).label == "Lima"
    run("update", path, newer, "--drop-missing")
    with Store.open(path, read_only=True) as store:
        assert not bool(store.query(f"ASK {{ wd:{LIMA} ?p ?o }}")) and not bool(store.query("ASK { wd:Q5451 ?p ?o }"))
        assert store.entity(LIMA).label is None  # Peru still names it: a bare node
        assert store.entity(PERU).label == "Peru"


def test_a_waiting_writer_says_at_once_who_holds_the_catalog(tmp_path):
    """A reader holding the catalog (as a busy `kgstore serve` does) makes `kgstore update`
    wait: it says so on stderr at once, naming the holder's pid, and goes on when it may."""
    import subprocess
    import sys

    path = tmp_path / "s"
    run("init", path)
    run("ingest", path, "wikidata-json", SAMPLE)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import duckdb, sys, time\n"
        f"con = duckdb.connect({str(path / 'catalog.duckdb')!r}, read_only=True)\n"
        "print('held', flush=True)\ntime.sleep(600)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        writer = subprocess.Popen([sys.executable, "-c", "from kgstore.cli import main; main()", "update", str(path),
                                   str(peru_change(tmp_path)), "--no-index"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = writer.stderr.readline()  # the writer's first word, while the holder holds on
        assert f"waiting for the catalog of {path}: held by pid {holder.pid}" in first, first
    finally:
        holder.kill()  # the holder lets go: the writer goes on
        holder.wait()
    out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    with Store.open(path, read_only=True) as store:
        assert store.entity(PERU).label == "Republic of Peru"


@pytest.mark.neo4j
def test_peru_update_reaches_neo4j_through_the_same_graph_api(tmp_path, use_bolt):
    path = tmp_path / "s"
    run("init", path)
    run("ingest", path, "wikidata-json", SAMPLE)
    use_bolt(path)
    run("graph", "sync", path)
    output = run("update", path, peru_change(tmp_path), "--no-index")
    assert "Property graph (incremental sync)" in output
    with Store.open(path, read_only=True) as store, open_graph(store) as graph:
        assert graph.name == "neo4j"
        rows = graph.query("MATCH (p:Entity {iri: $iri})-[r:REL]->(c:Entity) WHERE r.pid IN ['P36', 'P47'] "
                           "RETURN p.label AS label, r.pid AS pid, c.iri AS c", {"iri": WD + PERU})
    assert {r["label"] for r in rows} == {"Republic of Peru"}
    assert [r["c"] for r in rows if r["pid"] == "P36"] == [WD + CUSCO]
    assert WD + COLOMBIA not in [r["c"] for r in rows if r["pid"] == "P47"]


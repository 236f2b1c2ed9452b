"""The property graph: sync from a real store, counts against SPARQL, Cypher against SPARQL.

The behaviour tests run on both backends: Ladybug, and Neo4j over Bolt against a live
server (the `bolt_server` fixture: ArcadeDB's, or a real Neo4j named by NEO4J_URI; those
tests carry the `neo4j` marker).
"""
import pytest

import kgstore
from kgstore import GraphError, QueryError, Store
from kgstore.errors import GraphNotSyncedError
from kgstore.graph import open_graph, sync_graph
from kgstore.graph._ladybug import LadybugGraph
from kgstore.terms import KG, KGR, WD, is_fact_predicate

BACKENDS = ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)]

# WC-P2: "name a soccer club that has a player from Mexico ?" (gold answers of the dataset)
MEXICO_CLUBS = {"CF_Monterrey", "CA_Monarcas_Morelia", "Atlante_FC", "CF_Pachuca", "Tigres_UANL", "Cruz_Azul_FC",
                "Club_Leon", "Club_Santos_Laguna", "Puebla_FC", "Club_America", "Deportivo_Toluca_FC",
                "Club_Tijuana"}


@pytest.fixture(scope="module")
def wc_store(shared_data, tmp_path_factory):
    """WorldCup2014's KB (6,482 triples: players, clubs, countries, ages and numbers)."""
    path = tmp_path_factory.mktemp("graph") / "wc"
    with Store.init(path) as store:
        summary = kgstore.ingest(store, "tsv", shared_data / "qa" / "wc2014" / "WC2014.txt")
        assert summary.status == "done"
    return path


@pytest.fixture(params=BACKENDS)
def synced(request, wc_store):
    """(store, graph, first sync report) for each backend."""
    if request.param == "neo4j":
        request.getfixturevalue("use_bolt")(wc_store)
    with Store.open(wc_store) as store:
        report = sync_graph(store, backend=request.param)
        graph = open_graph(store, request.param)
        yield store, graph, report
        graph.close()


def _fact_count(store, filter_fn: str) -> int:
    """Distinct fact triples whose object passes ``filter_fn`` (isIRI / isLiteral), counted
    by SPARQL over the fact predicates (those the catalog keeps: kgstore.terms.is_fact_predicate)."""
    preds = [row["p"].value for row in store.query("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")]
    values = " ".join(f"<{p}>" for p in preds if is_fact_predicate(p))
    rows = list(store.query(
        f"SELECT (COUNT(*) AS ?n) WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o FILTER({filter_fn}(?o)) }}"))
    return int(rows[0]["n"].value)


def test_sync_gives_as_many_edges_as_sparql_counts(synced):
    store, graph, report = synced
    edges = _fact_count(store, "isIRI")
    values = _fact_count(store, "isLiteral")
    assert (edges, values) == (5010, 1472)
    assert graph.counts().edges == report.counts.edges == edges
    assert graph.counts().values == report.counts.values == values
    entities = int(next(iter(store.query(
        "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { { ?x ?p ?o } UNION { ?s ?p ?x FILTER(isIRI(?x)) } }")))["n"].value)
    assert graph.counts().entities == entities == 1088
    assert graph.counts().literals == 39  # distinct ages and shirt numbers


def test_sync_twice_gives_the_same_graph(synced):
    store, graph, report = synced
    graph.close()
    again = sync_graph(store, backend=graph.name)
    assert again.counts == report.counts
    assert graph.counts() == report.counts


def test_two_hop_cypher_equals_sparql(synced):
    store, graph, _ = synced
    cypher = ('MATCH (m:Entity {id: $country})-[:REL {pid: "plays_for_country_inverse"}]->(p:Entity)'
              '-[:REL {pid: "plays_in_club"}]->(c:Entity) RETURN DISTINCT c.iri AS club')
    from_graph = {row["club"] for row in graph.query(cypher, {"country": "Mexico"})}
    from_sparql = {row["c"].value for row in store.query(
        "SELECT DISTINCT ?c WHERE { kg:Mexico kgr:plays_for_country_inverse ?p . ?p kgr:plays_in_club ?c }")}
    assert from_graph == from_sparql == {KG + club for club in MEXICO_CLUBS}


def test_relationships_carry_pid_label_and_literals_read_as_labels(synced):
    _, graph, _ = synced
    rows = graph.query('MATCH (a:Entity {id: "Alan_PULIDO"})-[r]->(b) RETURN r.pid, r.label, r.iri, b.label '
                       'ORDER BY r.pid')
    assert rows == [
        {"r.pid": "is_aged", "r.label": "is aged", "r.iri": KGR + "is_aged", "b.label": "23"},
        {"r.pid": "plays_for_country", "r.label": "plays for country", "r.iri": KGR + "plays_for_country",
         "b.label": "Mexico"},
        {"r.pid": "plays_in_club", "r.label": "plays in club", "r.iri": KGR + "plays_in_club",
         "b.label": "Tigres UANL"},
        {"r.pid": "plays_position", "r.label": "plays position", "r.iri": KGR + "plays_position",
         "b.label": "Forward"},
        {"r.pid": "wears_number", "r.label": "wears number", "r.iri": KGR + "wears_number", "b.label": "11"},
    ]
    lit = graph.query('MATCH (:Entity {id: "Alan_PULIDO"})-[:HAS_VALUE {pid: "is_aged"}]->(l:Literal) '
                      'RETURN l.value AS value, l.datatype AS datatype')
    assert lit == [{"value": "23", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}]


def test_queries_are_read_only_unless_asked(synced):
    store, graph, report = synced
    with pytest.raises(QueryError, match=r"DETACH DELETE \(line 1, column 11\) writes .*--write"):
        graph.query("MATCH (n) DETACH DELETE n")
    assert graph.counts() == report.counts
    graph.query("CREATE (:Entity {iri: 'http://example.org/extra', id: 'extra'})", write=True)
    assert graph.counts().entities == report.counts.entities + 1
    graph.close()
    assert sync_graph(store, backend=graph.name).counts == report.counts  # the mirror is exact again
    assert graph.counts() == report.counts


def test_the_backends_refuse_writes_even_when_the_scanner_misses_one(synced, monkeypatch):
    """The second guard alone: Ladybug opens its file read-only; over Bolt the query runs in a
    read transaction, rolled back if the server reports updates (Neo4j refuses the write
    itself; ArcadeDB's server runs it, so the rollback is what holds there)."""
    _, graph, report = synced
    monkeypatch.setattr(f"kgstore.graph._{graph.name}.check_read_only", lambda cypher: None)
    with pytest.raises(QueryError) as refused:
        graph.query("CREATE (:Entity {iri: 'http://example.org/sneaked-in', id: 'sneaked'})")
    assert {"ladybug": "read-only database", "neo4j": "so it was rolled back"}[graph.name] in str(refused.value)
    assert graph.counts() == report.counts
    assert graph.query("MATCH (n:Entity {id: 'sneaked'}) RETURN count(n) AS n") == [{"n": 0}]


def test_bad_cypher_is_a_query_error(synced):
    _, graph, _ = synced
    with pytest.raises(QueryError, match="Cypher query failed"):
        graph.query("MATCH (n:Entity RETURN n")


def test_parquet_path_builds_the_same_graph(wc_store, tmp_path):
    """Stores too big for memory go through Parquet files; the graph is the same."""
    with Store.open(wc_store) as store:
        in_memory = LadybugGraph(store.path).sync(store)
        with LadybugGraph(store.path, arrow_max_rows=0) as graph:
            via_files = graph.sync(store)
            assert via_files.counts == in_memory.counts
            assert graph.counts() == in_memory.counts
            assert not list((store.path / "graph").glob("staging-*"))  # staging removed


def test_acceptance_query_on_wikidata(shared_data, tmp_path):
    dump = shared_data / "formats" / "wikidata_json" / "derived" / "dump_format_from_wdtk_api_fixtures.json"
    with Store.init(tmp_path / "wd") as store:
        kgstore.ingest(store, "wikidata-json", dump)
        sync_graph(store)
        with open_graph(store) as graph:
            rows = graph.query('MATCH (a:Entity {id:"Q42"})-[r]->(b) RETURN r.label, b.label LIMIT 10')
            assert len(rows) == 10 and all(set(r) == {"r.label", "b.label"} for r in rows)
            facts = graph.query('MATCH (a:Entity {id:"Q42"})-[r]->(b) RETURN r.iri AS p, b.iri AS o, '
                                'b.value AS v')
        sparql = {(row["p"].value, row["o"].value) for row in store.query(f"SELECT ?p ?o WHERE {{ <{WD}Q42> ?p ?o }}")
                  if is_fact_predicate(row["p"].value)}
        assert {(f["p"], f["o"] if f["o"] is not None else f["v"]) for f in facts} == sparql
        assert ("instance of", WD + "Q5") in {(r["r.label"], r["b.iri"]) for r in graph.query(
            'MATCH (a:Entity {id:"Q42"})-[r {pid: "P31"}]->(b) RETURN r.label, b.iri')}


def test_unsynced_store_says_to_sync(tmp_path):
    with Store.init(tmp_path / "s") as store, open_graph(store) as graph:
        assert not graph.is_synced()
        with pytest.raises(GraphNotSyncedError, match=r"run `kgstore graph sync .*s` first"):
            graph.query("MATCH (n) RETURN n")


def test_empty_store_syncs_to_an_empty_graph(tmp_path):
    with Store.init(tmp_path / "s") as store:
        report = sync_graph(store)
        assert report.counts.nodes == report.counts.relationships == 0
        with open_graph(store) as graph:
            assert graph.query("MATCH (n) RETURN count(n) AS n") == [{"n": 0}]


def test_unknown_backend_and_unconfigured_neo4j(tmp_path, monkeypatch):
    monkeypatch.delenv("NEO4J_URI", raising=False)
    with Store.init(tmp_path / "s") as store:
        with pytest.raises(GraphError, match="unknown graph backend 'nope'; choose one of: ladybug, neo4j"):
            open_graph(store, "nope")
        with pytest.raises(GraphError, match="neo4j_uri .* NEO4J_URI"):
            open_graph(store, "neo4j")


@pytest.mark.parametrize("query, found", [
    ('MATCH (a {label: "Set theory"}) RETURN a', None),
    ("MATCH (n:Set) RETURN n.delete, {create: 1} AS m", None),
    ("MATCH (a)--(b) // CREATE x\nRETURN a /* SET y */", None),
    ("MATCH (`CREATE`) RETURN 1", None),
    ("CALL show_tables() RETURN *", None),
    ("CALL db.labels()", None),
    ("MATCH (a) CALL { WITH a MATCH (a)-->(b) RETURN b } RETURN b", None),
    ("MATCH (n) DETACH DELETE n", ("DETACH DELETE", 10)),
    ("match (a) set a.x = 1", ("SET", 10)),
    ("CREATE (:Entity {iri: 'x'})", ("CREATE", 0)),
    ("MERGE (a:Entity {iri: 'x'})", ("MERGE", 0)),
    ("COPY Entity FROM 'x.parquet'", ("COPY", 0)),
    ("LOAD FROM 'x.csv' RETURN *", ("LOAD", 0)),
    ("DROP TABLE Entity", ("DROP", 0)),
    ("CALL apoc.periodic.iterate('a', 'b', {})", ("CALL apoc.periodic.iterate", 0)),
])
def test_write_clauses_are_found_outside_strings_and_comments(query, found):
    from kgstore.graph import write_clause

    assert write_clause(query) == found


def test_public_surface_imports_no_backend_library():
    import subprocess
    import sys

    code = ("import sys, kgstore.graph as g\n"
            "assert all(hasattr(g, n) for n in g.__all__)\n"
            "print(sorted(m for m in ('ladybug', 'neo4j', 'cypherast') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_relation_iris_used_as_nodes_become_entities(shared_data, tmp_path):
    """Freebase's schema lines make properties subjects (``fb:...footballdb_id type.object.type
    type.property``): they must be nodes too, or their edges would have no end."""
    from kgstore.graph._export import ROW_SETS, _finalized

    with Store.init(tmp_path / "fb") as store:
        kgstore.ingest(store, "freebase", shared_data / "formats" / "freebase_rdf" / "fb-rdf-10k-head.nt")
        report = sync_graph(store)
        assert report.counts.edges == _fact_count(store, "isIRI")
        assert report.counts.values == _fact_count(store, "isLiteral")
        with open_graph(store) as graph:
            rows = graph.query('MATCH (p:Entity {id: "american_football.football_player.footballdb_id"})'
                               '-[r:REL]->(t) RETURN p.label, r.pid, t.iri ORDER BY r.pid, t.iri')
        fb = "http://rdf.freebase.com/ns/"
        # the six lines of the file with this subject and an IRI object
        assert [(r["r.pid"], r["t.iri"]) for r in rows] == [
            ("rdf:type", "http://www.w3.org/2002/07/owl#FunctionalProperty"),
            ("rdfs:domain", fb + "american_football.football_player"),
            ("rdfs:range", fb + "type.enumeration"),
            ("type.object.type", fb + "type.property"),
            ("type.property.expected_type", fb + "type.enumeration"),
            ("type.property.schema", fb + "american_football.football_player"),
        ]
        assert {r["p.label"] for r in rows} == {"footballdb ID"}
        endpoints = next(rs for rs in ROW_SETS if rs.name == "Entity-endpoints")
        with store.catalog.transaction() as con:
            assert _finalized(con)
            cheap = sorted(con.sql(endpoints.sql_finalized).fetchall())
            full = sorted(con.sql(endpoints.sql).fetchall())
            assert cheap == full and len(full) == 6
            # After an interrupted ingest the catalog is not finalized: the full search runs.
            con.execute("UPDATE ingest_runs SET status = 'interrupted'")
            assert not _finalized(con) and endpoints.query(con) == endpoints.sql

"""The Neo4j backend without a server: its statements (pure builders), its settings, and the
sync's conversation with the driver, recorded by a stand-in driver. The behaviour tests run
against a live Bolt server in test_graph.py and test_graph_bolt.py."""
import cypherast
import pytest

import kgstore
from kgstore import GraphError, Store
from kgstore.config import GraphConfig
from kgstore.graph import open_graph
from kgstore.graph._neo4j import (Neo4jGraph, batches, cleanup_statements, connection_settings, count_statements,
                                  delete_statement, node_upsert_statement, relationship_upsert_statement,
                                  schema_statements)


def test_schema_statements_create_constraints_then_indexes():
    assert schema_statements() == [
        "CREATE CONSTRAINT kgstore_entity_iri IF NOT EXISTS FOR (n:Entity) REQUIRE n.iri IS UNIQUE",
        "CREATE CONSTRAINT kgstore_literal_key IF NOT EXISTS FOR (n:Literal) REQUIRE n.key IS UNIQUE",
        "CREATE INDEX kgstore_entity_id IF NOT EXISTS FOR (n:Entity) ON (n.id)",
        "CREATE INDEX kgstore_entity_label IF NOT EXISTS FOR (n:Entity) ON (n.label)",
        "CREATE INDEX kgstore_rel_pid IF NOT EXISTS FOR ()-[r:REL]-() ON (r.pid)",
        "CREATE INDEX kgstore_has_value_pid IF NOT EXISTS FOR ()-[r:HAS_VALUE]-() ON (r.pid)",
    ]


def test_upsert_statements_merge_on_keys_and_stamp_the_sync():
    assert node_upsert_statement("Entity") == (
        "UNWIND $rows AS row MERGE (n:Entity {iri: row.iri}) SET n.id = row.id, n.label = row.label, "
        "n.description = row.description, n.popularity = row.popularity, n.is_mediator = row.is_mediator, "
        "n._sync = $sync")
    assert node_upsert_statement("Literal") == (
        "UNWIND $rows AS row MERGE (n:Literal {key: row.key}) SET n.value = row.value, n.label = row.label, "
        "n.datatype = row.datatype, n.lang = row.lang, n._sync = $sync")
    assert relationship_upsert_statement("REL") == (
        "UNWIND $rows AS row MATCH (a:Entity {iri: row.`from`}) MATCH (b:Entity {iri: row.`to`}) "
        "MERGE (a)-[r:REL {iri: row.iri}]->(b) SET r.pid = row.pid, r.label = row.label, r._sync = $sync")
    assert relationship_upsert_statement("HAS_VALUE") == (
        "UNWIND $rows AS row MATCH (a:Entity {iri: row.`from`}) MATCH (b:Literal {key: row.`to`}) "
        "MERGE (a)-[r:HAS_VALUE {iri: row.iri}]->(b) SET r.pid = row.pid, r.label = row.label, r._sync = $sync")


def test_data_statements_are_valid_cypher():
    statements = [node_upsert_statement("Entity"), node_upsert_statement("Literal"),
                  relationship_upsert_statement("REL"), relationship_upsert_statement("HAS_VALUE"),
                  *cleanup_statements(), *count_statements().values(),
                  *(delete_statement(t) for t in ("Entity", "Literal", "REL", "HAS_VALUE"))]
    for stmt in statements:
        cypherast.parse_one(stmt, read="neo4j")  # raises on a syntax error


def test_cleanup_deletes_only_what_this_sync_did_not_write():
    rels, nodes = cleanup_statements()
    assert rels == ("MATCH ()-[x:REL|HAS_VALUE]->() WHERE (x._sync IS NULL OR x._sync <> $sync) "
                    "WITH x LIMIT $limit WITH collect(x) AS doomed UNWIND doomed AS x DELETE x RETURN count(*) AS n")
    assert nodes == ("MATCH (x) WHERE (x:Entity OR x:Literal) AND (x._sync IS NULL OR x._sync <> $sync) "
                     "WITH x LIMIT $limit WITH collect(x) AS doomed UNWIND doomed AS x DETACH DELETE x "
                     "RETURN count(*) AS n")


def test_delete_statements_match_rows_by_their_keys():
    assert delete_statement("Entity") == ("UNWIND $rows AS row MATCH (n:Entity {iri: row.iri}) "
                                          "WITH collect(n) AS doomed UNWIND doomed AS n DETACH DELETE n")
    assert delete_statement("Literal") == ("UNWIND $rows AS row MATCH (n:Literal {key: row.key}) "
                                           "WITH collect(n) AS doomed UNWIND doomed AS n DETACH DELETE n")
    assert delete_statement("HAS_VALUE") == (
        "UNWIND $rows AS row MATCH (a:Entity {iri: row.`from`})-[r:HAS_VALUE {iri: row.iri}]->"
        "(b:Literal {key: row.`to`}) WITH collect(r) AS doomed UNWIND doomed AS r DELETE r")


def test_batches_split_rows_without_losing_any():
    rows = [{"i": i} for i in range(12)]
    assert [len(b) for b in batches(rows, 5)] == [5, 5, 2]
    assert [r for b in batches(rows, 5) for r in b] == rows
    assert list(batches([], 5)) == []


def test_connection_settings_env_overrides_uri_and_password_is_never_in_config():
    config = GraphConfig(backend="neo4j", neo4j_uri="bolt://configured:7687", neo4j_user="kg",
                         neo4j_password_env="KG_NEO4J_PW", neo4j_database="movies")
    assert connection_settings(config, {"KG_NEO4J_PW": "s3cret"}) == {
        "uri": "bolt://configured:7687", "auth": ("kg", "s3cret"), "database": "movies",
        "password_env": "KG_NEO4J_PW"}
    env = {"NEO4J_URI": "neo4j://other:7687"}
    assert connection_settings(config, env)["uri"] == "neo4j://other:7687"
    assert connection_settings(config, env)["auth"] is None  # no password: no authentication
    with pytest.raises(GraphError, match="set neo4j_uri in the \\[graph\\] section of kgstore.toml or the NEO4J_URI"):
        connection_settings(GraphConfig(), {})


class RecordingSession:
    """Stands in for a neo4j session: records each statement with its parameters."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, stmt, params=None, **kw):
        self.log.append((stmt, {**(params or {}), **kw}))
        return RecordingResult()

    def execute_write(self, work):
        return work(self)


class RecordingResult:
    def consume(self):
        return None

    def single(self):
        return {"n": 0}


class RecordingDriver:
    def __init__(self):
        self.log = []
        self.sessions = []

    def session(self, **kw):
        self.sessions.append(kw)
        return RecordingSession(self.log)

    def close(self):
        pass


def test_sync_sends_schema_then_every_row_in_batches_then_cleanup(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("NEO4J_URI", "bolt://recorded:7687")
    with Store.init(tmp_path / "s") as store:
        kgstore.ingest(store, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt")
        driver = RecordingDriver()
        graph = Neo4jGraph(store.path, store.config.graph, driver=driver, batch_size=500)
        report = graph.sync(store)
        assert report.mode == "full" and report.upserted == report.counts.nodes + report.counts.relationships
        with open_graph(store, "ladybug") as lady:
            assert lady.sync(store).counts == report.counts  # both backends get the same rows
    stmts = [s for s, _ in driver.log]
    assert stmts[:6] == schema_statements()
    sync_ids = {p["sync"] for _, p in driver.log[6:]}
    assert len(sync_ids) == 1
    sent = {}
    for stmt, params in driver.log[6:-2]:
        assert len(params["rows"]) <= 500
        sent[stmt] = sent.get(stmt, 0) + len(params["rows"])
    assert sent == {
        node_upsert_statement("Entity"): report.counts.entities,
        relationship_upsert_statement("REL"): report.counts.edges,
    } and report.counts.edges == 1211 and report.counts.literals == report.counts.values == 0
    assert stmts[-2:] == cleanup_statements()
    assert driver.sessions[0]["database"] == "neo4j"
    assert graph.is_synced() and graph.last_sync()["counts"]["edges"] == 1211


def test_delta_sends_only_new_rows_and_deletes_what_went(shared_data, tmp_path):
    """The diff behind incremental syncs, without a server: a second file adds its rows only;
    forgetting it (--force with an allowlist) turns them into deletions."""
    from kgstore.graph._delta import compute_delta
    from kgstore.records import LoadOptions

    snapshot = tmp_path / "rows"
    with Store.init(tmp_path / "s") as store:
        kgstore.ingest(store, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt")
        first = compute_delta(store, snapshot)
        assert first.full and first.upsert_counts["REL"] == 1211 and sum(first.delete_counts.values()) == 0
        first.commit()
        assert compute_delta(store, snapshot).changed == 0  # nothing changed, nothing to send

        wc = shared_data / "qa" / "wc2014" / "WC2014.txt"
        kgstore.ingest(store, "tsv", wc)
        second = compute_delta(store, snapshot)
        assert not second.full
        assert (second.upsert_counts["REL"], second.upsert_counts["HAS_VALUE"]) == (5010, 1472)
        assert sum(second.delete_counts.values()) == 0
        assert second.row_counts["REL"] == 1211 + 5010
        second.commit()

        kgstore.ingest(store, "tsv", wc, force=True, options=LoadOptions(properties=frozenset({"plays_in_club"})))
        third = compute_delta(store, snapshot)
        kept = third.row_counts["REL"] - 1211
        assert third.delete_counts["REL"] == 5010 - kept and third.delete_counts["HAS_VALUE"] == 1472
        assert third.upsert_counts["REL"] == 0 and third.delete_counts["Literal"] == 39
        rows = [r for batch in third.deletes("REL", 1000) for r in batch]
        assert len(rows) == third.delete_counts["REL"] and set(rows[0]) == {"from", "to", "iri"}
        third.discard()
        assert not (tmp_path / "rows.staging").exists()

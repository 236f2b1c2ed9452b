"""`kgstore graph sync|status` and `kgstore cypher` through click's CliRunner."""
import json

import pytest
from click.testing import CliRunner

from kgstore.cli import main


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def pq_store(shared_data, tmp_path_factory):
    """PathQuestion's 2-hop KB, loaded through the CLI (not yet synced)."""
    path = tmp_path_factory.mktemp("graph-cli") / "pq"
    assert run("init", path).exit_code == 0
    result = run("ingest", path, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt")
    assert result.exit_code == 0, result.output
    return path


def test_cypher_before_sync_says_to_sync(pq_store):
    result = run("cypher", pq_store, "MATCH (n) RETURN n LIMIT 1")
    assert result.exit_code == 9
    assert f"run `kgstore graph sync {pq_store}` first" in result.output
    status = run("graph", "status", pq_store, "--format", "json")
    assert status.exit_code == 0 and json.loads(status.output)["synced"] is False


def test_sync_then_query_as_json(pq_store):
    result = run("graph", "sync", pq_store, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["backend"] == "ladybug"
    # 1,211 distinct lines over 1,056 distinct names (`cut -f1,3 | sort -u`), no numbers
    assert report["counts"]["edges"] == 1211 and report["counts"]["entities"] == 1056
    assert report["counts"]["literals"] == report["counts"]["values"] == 0

    result = run("cypher", pq_store, 'MATCH (a:Entity {id: "ludwig_ii_of_bavaria"})-[r]->(b) '
                                     'RETURN r.label, b.label ORDER BY r.label, b.label', "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert isinstance(rows, list) and rows and all(set(r) == {"r.label", "b.label"} for r in rows)
    assert rows == [{"r.label": "cause of death", "b.label": "drowning"},
                    {"r.label": "gender", "b.label": "male"},
                    {"r.label": "parents", "b.label": "maximilian ii of bavaria"}]

    status = json.loads(run("graph", "status", pq_store, "--format", "json").output)
    assert status["synced"] is True and status["up_to_date"] is True and status["edges"] == 1211


def test_cypher_params_table_and_empty_results_keep_their_columns(pq_store):
    assert run("graph", "sync", pq_store).exit_code == 0
    result = run("cypher", pq_store, "MATCH (a:Entity {id: $id}) RETURN a.label AS name",
                 "-p", "id=ludwig_ii_of_bavaria")
    assert result.exit_code == 0, result.output
    assert "name" in result.output and "ludwig ii of bavaria" in result.output
    result = run("cypher", pq_store, "MATCH (a:Entity {id: $id}) RETURN a.label AS name", "-p", "id=nobody",
                 "--format", "csv")
    assert result.exit_code == 0 and result.output == "name\n"


def test_write_clause_refused_without_write(pq_store):
    assert run("graph", "sync", pq_store).exit_code == 0
    result = run("cypher", pq_store, "MATCH (n) DETACH DELETE n")
    assert result.exit_code == 5
    assert "Error: DETACH DELETE (line 1, column 11) writes to the property graph" in result.output
    assert "--write" in result.output
    count = run("cypher", pq_store, "MATCH (n:Entity) RETURN count(n) AS n", "--format", "json")
    assert json.loads(count.output) == [{"n": 1056}]
    # With --write the same query runs; a sync restores the mirror.
    assert run("cypher", pq_store, "MATCH (n) DETACH DELETE n", "--write").exit_code == 0
    assert json.loads(run("cypher", pq_store, "MATCH (n:Entity) RETURN count(n) AS n", "--format", "json").output) \
        == [{"n": 0}]
    assert run("graph", "sync", pq_store).exit_code == 0
    assert json.loads(run("cypher", pq_store, "MATCH (n:Entity) RETURN count(n) AS n", "--format", "json").output) \
        == [{"n": 1056}]


def test_query_from_stdin_and_syntax_errors(pq_store):
    assert run("graph", "sync", pq_store).exit_code == 0
    result = run("cypher", pq_store, "-", "--format", "json", input="MATCH ()-[r:REL]->() RETURN count(r) AS n")
    assert json.loads(result.output) == [{"n": 1211}]
    result = run("cypher", pq_store, "MATCH (n RETURN n")
    assert result.exit_code == 5 and "Cypher query failed: Parser exception" in result.output


def test_status_notices_a_later_ingest(pq_store, shared_data):
    assert run("graph", "sync", pq_store).exit_code == 0
    assert run("ingest", pq_store, "tsv", shared_data / "qa" / "wc2014" / "WC2014.txt").exit_code == 0
    status = json.loads(run("graph", "status", pq_store, "--format", "json").output)
    assert status["up_to_date"] is False and "kgstore graph sync" in status["hint"]

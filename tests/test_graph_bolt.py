"""Keeping the property graph in step with the store: incremental re-syncs (both backends),
mirroring while loading and resuming after a kill (Neo4j over a live Bolt server), the CLI
against the server, and the CSV files for neo4j-admin's bulk import."""
import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import kgstore
from kgstore import Store
from kgstore.cli import main
from kgstore.graph import open_graph, sync_graph
from kgstore.records import LoadOptions

REPO = Path(__file__).resolve().parents[1]
BACKENDS = ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def wc2014(shared_data) -> Path:
    return shared_data / "qa" / "wc2014" / "WC2014.txt"


def new_store(path: Path, backend: str, request) -> Path:
    Store.init(path).close()
    if backend == "neo4j":
        request.getfixturevalue("use_bolt")(path)
    return path


def catalog_edges(store) -> set[tuple[str, str, str]]:
    with store.catalog.connect() as con:
        return set(con.execute("SELECT DISTINCT s, p, o FROM statements WHERE NOT o_literal").fetchall())


def dump(graph) -> dict[str, list[tuple]]:
    """Everything the graph holds, sorted, without the backends' bookkeeping."""
    queries = {
        "entities": "MATCH (n:Entity) RETURN n.iri, n.id, n.label, n.description, n.popularity, n.is_mediator",
        "literals": "MATCH (n:Literal) RETURN n.key, n.value, n.label, n.datatype, n.lang",
        "edges": "MATCH (a:Entity)-[r:REL]->(b:Entity) RETURN a.iri, r.iri, r.pid, r.label, b.iri",
        "values": "MATCH (a:Entity)-[r:HAS_VALUE]->(b:Literal) RETURN a.iri, r.iri, r.pid, r.label, b.key",
    }
    return {name: sorted(tuple(row.values()) for row in graph.query(q)) for name, q in queries.items()}


@pytest.mark.parametrize("backend", BACKENDS)
def test_resync_after_a_second_ingest_deletes_what_the_store_no_longer_holds(backend, request, shared_data,
                                                                             tmp_path):
    path = new_store(tmp_path / "s", backend, request)
    keep = frozenset({"plays_in_club", "plays_for_country"})
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", wc2014(shared_data))
        first = sync_graph(store, backend=backend)
        assert (first.counts.edges, first.counts.values) == (5010, 1472)
        # --force forgets the first run's facts; this one keeps two relations only
        kgstore.ingest(store, "tsv", wc2014(shared_data), force=True, options=LoadOptions(properties=keep))
        second = sync_graph(store, backend=backend)
        with open_graph(store, backend) as graph:
            edges = {(r["a"], r["p"], r["b"]) for r in graph.query(
                "MATCH (a:Entity)-[r:REL]->(b:Entity) RETURN a.iri AS a, r.iri AS p, b.iri AS b")}
            assert edges == catalog_edges(store)
            assert {p.rsplit("/", 1)[-1] for _, p, _ in edges} == keep
            assert graph.counts() == second.counts
            assert second.counts.values == second.counts.literals == 0  # ages and numbers are gone
            assert second.counts.edges == len(edges) < first.counts.edges
            third = sync_graph(store, backend=backend)
            assert graph.counts() == third.counts == second.counts
    if backend == "neo4j":
        # Only the changes travelled: deletions (no key is new), then nothing at all.
        gone = first.counts.nodes + first.counts.relationships - second.counts.nodes - second.counts.relationships
        assert (first.mode, second.mode, third.mode) == ("full", "incremental", "incremental")
        assert second.deleted == gone > 0
        assert second.upserted < second.counts.nodes
        assert (third.upserted, third.deleted) == (0, 0)
    else:
        assert second.mode == third.mode == "full"


# Runs in a child process: ingest WC2014 mirroring after every commit, and SIGKILL itself in
# the middle of the KILL_AT-th sync (nodes sent, relationships not yet).
KILLED_INGEST = """
import os, signal, sys
import kgstore
from kgstore import Store
from kgstore.graph import GraphMirror
from kgstore.records import LoadOptions

store_dir, data, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store.open(store_dir)
commits = 0

def on_progress(p):
    if commits == kill_at and p.stage == "REL":
        os.kill(os.getpid(), signal.SIGKILL)

mirror = GraphMirror(store, min_interval_s=0, progress=on_progress)

def committed():
    global commits
    commits += 1
    mirror.committed()

kgstore.ingest(store, "tsv", data, options=LoadOptions(batch_size=1000), on_commit=committed)
"""


@pytest.mark.neo4j
def test_killed_ingest_resumed_mirrors_the_same_graph(use_bolt, shared_data, tmp_path):
    data = wc2014(shared_data)
    killed = tmp_path / "killed"
    Store.init(killed).close()
    use_bolt(killed)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.run([sys.executable, "-c", KILLED_INGEST, killed, data, "3"], env=env, timeout=300,
                           capture_output=True, text=True)
    assert child.returncode == -signal.SIGKILL, child.stderr
    with Store.open(killed) as store, open_graph(store) as graph:
        last = graph.last_sync()
        assert last["pending"]["mode"] == "incremental"  # killed mid-sync
        partial = graph.counts()
        # two syncs made it: the graph followed the ingest, and holds less than the file
        assert 0 < last["counts"]["edges"] < 5010 and partial.entities > last["counts"]["entities"]
        with store.catalog.connect() as con:
            assert con.execute("SELECT status FROM ingest_runs").fetchall() == [("running",)]

    resumed = run("ingest", killed, "tsv", data, "--graph", "--batch-size", 1000, "--format", "json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.output.split("\nProperty graph")[0])["resumed_from_line"] == 3000
    assert "Property graph (incremental sync" in resumed.output
    with Store.open(killed) as store, open_graph(store) as graph:
        after_resume = dump(graph)
        assert graph.last_sync().get("pending") is None

    fresh = tmp_path / "fresh"
    Store.init(fresh).close()
    use_bolt(fresh)
    result = run("ingest", fresh, "tsv", data, "--graph", "--batch-size", 1000)
    assert result.exit_code == 0, result.output
    with Store.open(fresh) as store, open_graph(store) as graph:
        uninterrupted = dump(graph)
    assert after_resume == uninterrupted
    assert [len(uninterrupted[k]) for k in ("entities", "literals", "edges", "values")] == [1088, 39, 5010, 1472]


@pytest.mark.parametrize("backend", BACKENDS)
def test_cli_cypher_is_read_only_and_sync_repairs_writes(backend, request, shared_data, tmp_path):
    path = tmp_path / "s"
    assert run("init", path, "--graph-backend", backend).exit_code == 0
    if backend == "neo4j":
        request.getfixturevalue("use_bolt")(path)
    assert run("ingest", path, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt").exit_code == 0
    result = run("graph", "sync", path, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["backend"] == backend and report["counts"]["edges"] == 1211 and report["mode"] == "full"

    refused = run("cypher", path, "MATCH (n) DETACH DELETE n")
    assert refused.exit_code == 5
    assert "DETACH DELETE (line 1, column 11) writes to the property graph" in refused.output
    count = run("cypher", path, "MATCH (n:Entity) RETURN count(n) AS n", "--format", "json")
    assert json.loads(count.output) == [{"n": 1056}]
    rows = run("cypher", path, 'MATCH (a:Entity {id: $id})-[r]->(b) RETURN r.label, b.label ORDER BY r.label',
               "-p", "id=ludwig_ii_of_bavaria", "--format", "json")
    assert json.loads(rows.output) == [{"r.label": "cause of death", "b.label": "drowning"},
                                       {"r.label": "gender", "b.label": "male"},
                                       {"r.label": "parents", "b.label": "maximilian ii of bavaria"}]

    # A write behind the mirror's back; the store did not change, the graph did.
    assert run("cypher", path, "MATCH (n:Entity {id: 'male'}) DETACH DELETE n", "--write").exit_code == 0
    status = json.loads(run("graph", "status", path, "--format", "json").output)
    assert status["up_to_date"] is True
    again = json.loads(run("graph", "sync", path, "--format", "json").output)
    assert again["mode"] == "full" and again["counts"]["edges"] == 1211  # Neo4j noticed: counts differed
    assert json.loads(run("cypher", path, "MATCH ()-[r:REL]->() RETURN count(r) AS n", "--format", "json").output) \
        == [{"n": 1211}]
    nothing = json.loads(run("graph", "sync", path, "--format", "json").output)
    if backend == "neo4j":
        assert (nothing["mode"], nothing["upserted"], nothing["deleted"]) == ("incremental", 0, 0)
    else:
        assert nothing["mode"] == "full" and nothing["upserted"] == 1056 + 1211


@pytest.mark.neo4j
def test_an_incremental_sync_that_leaves_other_counts_turns_full(use_bolt, shared_data, tmp_path, monkeypatch):
    """The check after each incremental sync: whatever the first check missed (here it is
    told to miss a node written behind the mirror's back), a full sync removes."""
    path = tmp_path / "s"
    Store.init(path).close()
    use_bolt(path)
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt")
        with open_graph(store) as graph:
            first = graph.sync(store)
            graph.query("CREATE (:Entity {iri: 'http://example.org/stray', id: 'stray'})", write=True)
            monkeypatch.setattr(graph, "needs_full_sync", lambda: None)
            again = graph.sync(store)
            assert again.mode == "full" and graph.counts() == first.counts
            assert graph.last_sync()["full_reason"].startswith("after an incremental sync the server held")


def test_ingest_graph_with_an_unreachable_server_fails_before_loading(shared_data, tmp_path, monkeypatch):
    monkeypatch.delenv("NEO4J_URI", raising=False)
    path = tmp_path / "s"
    assert run("init", path, "--graph-backend", "neo4j").exit_code == 0
    from kgstore.config import StoreConfig

    config = StoreConfig.load(path)
    config.graph.neo4j_uri = "bolt://127.0.0.1:1"  # nothing listens on port 1
    config.save(path)
    result = run("ingest", path, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt", "--graph")
    assert result.exit_code == 9
    assert result.output.startswith("Error: cannot reach Neo4j at bolt://127.0.0.1:1")
    assert "Traceback" not in result.output
    stats = json.loads(run("stats", path, "--format", "json").output)
    assert stats["statements"] == 0  # nothing was loaded


def read_import_csv(header_path: Path, data_path: Path) -> tuple[list[str], list[list[str]]]:
    header = header_path.read_text().rstrip("\n").split(",")
    with open(data_path, newline="", encoding="utf-8") as f:
        return header, list(csv.reader(f))


def test_neo4j_import_files_round_trip(shared_data, tmp_path):
    """The CSV files read back give the store's graph: counts, keys, ends, and values."""
    path = tmp_path / "wd"
    dump_file = shared_data / "formats" / "wikidata_json" / "derived" / "dump_format_from_wdtk_api_fixtures.json"
    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", dump_file)
        counts = sync_graph(store, backend="ladybug").counts
        with open_graph(store, "ladybug") as graph:
            entities = {r["iri"]: (r["label"] or "", r["description"] or "") for r in graph.query(
                "MATCH (n:Entity) RETURN n.iri AS iri, n.label AS label, n.description AS description")}
            literals = {r["key"]: r["value"] for r in graph.query("MATCH (n:Literal) RETURN n.key AS key, "
                                                                  "n.value AS value")}
    out = tmp_path / "import"
    result = run("graph", "export", path, out, "--neo4j-import", "--format", "json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["command"] == (
        f"neo4j-admin database import full neo4j --overwrite-destination --multiline-fields=true "
        f"--nodes={out}/Entity-header.csv,{out}/Entity.csv --nodes={out}/Literal-header.csv,{out}/Literal.csv "
        f"--relationships={out}/REL-header.csv,{out}/REL.csv "
        f"--relationships={out}/HAS_VALUE-header.csv,{out}/HAS_VALUE.csv")

    header, rows = read_import_csv(out / "Entity-header.csv", out / "Entity.csv")
    assert header == ["iri:ID(Entity)", "id", "label", "description", "popularity:long", "is_mediator:boolean",
                      ":LABEL"]
    assert len(rows) == counts.entities == info["Entity rows"] == 104
    assert {r[0]: (r[2], r[3]) for r in rows} == entities  # unique keys, values intact
    assert {r[5] for r in rows} == {"true", "false"} or {r[5] for r in rows} == {"false"}
    assert all(r[4].isdigit() for r in rows) and {r[6] for r in rows} == {"Entity"}

    header, rows = read_import_csv(out / "Literal-header.csv", out / "Literal.csv")
    assert header == ["key:ID(Literal)", "value", "label", "datatype", "lang", ":LABEL"]
    assert len(rows) == counts.literals == 106 and {r[0]: r[1] for r in rows} == literals
    assert any("," in value for value in literals.values())  # quoting held

    for table, end_space, n, ends in (("REL", "Entity", counts.edges, entities),
                                      ("HAS_VALUE", "Literal", counts.values, literals)):
        header, rows = read_import_csv(out / f"{table}-header.csv", out / f"{table}.csv")
        assert header == [":START_ID(Entity)", f":END_ID({end_space})", "pid", "label", "iri", ":TYPE"]
        assert len(rows) == n == info[f"{table} rows"] > 0 and {r[-1] for r in rows} == {table}
        assert all(r[0] in entities and r[1] in ends for r in rows)  # no dangling end, in the right ID space
        assert len({(r[0], r[4], r[1]) for r in rows}) == n
    schema = (out / "schema.cypher").read_text().splitlines()
    assert schema[0] == "CREATE CONSTRAINT kgstore_entity_iri IF NOT EXISTS FOR (n:Entity) REQUIRE n.iri IS UNIQUE;"
    assert len(schema) == 6

    # Without --neo4j-import: the row sets as Parquet, the same counts
    import pyarrow.parquet as pq

    parquet = json.loads(run("graph", "export", path, tmp_path / "pq", "--format", "json").output)
    assert parquet["Entity rows"] + parquet["Entity-endpoints rows"] == counts.entities
    assert pq.read_table(tmp_path / "pq" / "REL.parquet").num_rows == parquet["REL rows"] == counts.edges

"""The pgvector backend against a real Postgres 16 with pgvector (the ``pgserver`` package of
the test extra, started in a temporary folder, Unix socket only, stopped at the end): the
table's own semantics, search and link agreeing with hnswlib on the demo store and a MetaQA
slice (recall@10 against exact search on the same vectors), incremental and killed builds,
rebuilds dropping their tables, and the errors a user sees (no server, no extension, no dsn)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kgstore
from indexer import Index, build_index
from indexer._backends import VectorBackend, choose_backend, create_backend, open_backend, vector_path
from indexer._backends_pgvector import DSN_ENV, PgVectorTable, redact_dsn
from kgstore import Store, VectorExtensionMissingError, VectorIndexError, VectorServerUnreachableError
from kgstore.cli import main
from kgstore.config import IndexConfig, StoreConfig
from qa import QAContext, ScriptedLLM, make_method
from test_index_backends import (ENCODER, METAQA_HEAD, METAQA_QUESTIONS, backends_of, killed_build_resumes, metaqa_head,
                                 new_store)
from test_index_fixtures import metaqa_lines, write_lines
from test_qa_methods import ANSWER, CYPHER, QUESTION, VERIFIED

pgserver = pytest.importorskip("pgserver", reason="install the test extra: pip install -e '.[test]' (pgserver)")
psycopg = pytest.importorskip("psycopg", reason="install the pgvector extra: pip install -e '.[pgvector]'")


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A Postgres server of our own for the module, its data in a temporary folder; a socket
    only (pgserver binds no TCP port). Yields its DSN; stopped by pg_ctl at the end."""
    server = pgserver.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="stop")
    pid = server.get_pid()
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
    # the stop is asked for and the postmaster then shuts down on its own: on a loaded
    # machine (load 8, CI beside three evals) it was still writing its checkpoint at once
    assert _stops_within(pid, 30.0), f"the Postgres server (pid {pid}) outlived its fixture by 30 s"


def _running(pid: int) -> bool:
    """Whether ``pid`` is alive (a zombie waiting for its parent to reap it is not)."""
    import psutil  # a dependency of pgserver

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _stops_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` is gone (or a zombie) within ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def sql(dsn: str, statement: str, params=()):
    with psycopg.connect(dsn, autocommit=True) as con:
        cur = con.execute(statement, params)
        return cur.fetchall() if cur.description else None


def pg_store(path: Path, dsn: str, **index) -> Path:
    new_store(path, "pgvector", **index)
    config = StoreConfig.load(path)
    config.index.dsn = dsn
    config.save(path)
    return path


def table_of(path: Path, kind: str) -> str:
    import json
    return json.loads(vector_path(path / "index", kind, "pgvector").read_text())["table"]


_stores: dict[tuple, Path] = {}


def indexed(tmp_path_factory, source: str, backend: str, dsn: str, shared_data=None, sample_dir=None) -> Path:
    """One store per (data, backend) for the module: ingested, every kind indexed."""
    key = (source, backend)
    if key not in _stores:
        root = tmp_path_factory.mktemp(f"pg_{source}_{backend}")
        path = pg_store(root / "store", dsn) if backend == "pgvector" else new_store(root / "store", backend)
        with Store.open(path) as store:
            if source == "demo":
                kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
            else:
                kgstore.ingest(store, "tsv", metaqa_head(shared_data, root / "kb.txt"))
            build_index(store, encoder=ENCODER)
        _stores[key] = path
    return _stores[key]


@pytest.fixture(scope="module")
def demo_pair(postgres, sample_dir, tmp_path_factory):
    return {b: indexed(tmp_path_factory, "demo", b, postgres, sample_dir=sample_dir) for b in ("hnswlib", "pgvector")}


@pytest.fixture(scope="module")
def metaqa_pair(postgres, shared_data, tmp_path_factory):
    return {b: indexed(tmp_path_factory, "metaqa", b, postgres, shared_data=shared_data)
            for b in ("hnswlib", "pgvector")}


def answers(path: Path, mentions, questions):
    """What link, link_question and search say, as comparable values."""
    with Store.open(path, read_only=True) as store:
        with Index.open(store, encoder=ENCODER) as index:
            linked = {m: {c.iri: c.score for c in index.link(m, k=5)} for m in mentions}
            in_questions = {q: [(c.iri, c.match) for c in index.link_question(q, k=3)] for q in questions}
            searched = {q: {h.text: h.score for h in index.search("triples", q, k=10)} for q in questions}
    return linked, in_questions, searched


def assert_same_answers(hnsw_store: Path, pg_store_path: Path, mentions, questions) -> None:
    """The same best candidate and best triple, the rest nearly the same, and equal scores:
    both hold the same float32 vectors, so a cosine both found is the same number. The rest
    may differ by a weak neighbour that one HNSW graph misses at ef 64 and the other not."""
    ram, pg = answers(hnsw_store, mentions, questions), answers(pg_store_path, mentions, questions)
    for m in mentions:
        assert list(pg[0][m])[:1] == list(ram[0][m])[:1], m
        assert len(set(pg[0][m]) & set(ram[0][m])) >= len(ram[0][m]) - 1, m
        common = set(pg[0][m]) & set(ram[0][m])
        assert all(abs(pg[0][m][x] - ram[0][m][x]) < 1e-4 for x in common), m
    for q in questions:
        assert pg[1][q] == ram[1][q] or ram[1][q][:1] and ram[1][q][0][1] == "vector", q
        assert max(pg[2][q], key=pg[2][q].get) == max(ram[2][q], key=ram[2][q].get), q
        assert len(set(pg[2][q]) & set(ram[2][q])) >= 8, q
        common = set(pg[2][q]) & set(ram[2][q])
        assert all(abs(pg[2][q][x] - ram[2][q][x]) < 1e-4 for x in common), q


def recall_at_10(path: Path, queries: np.ndarray) -> float:
    """Recall@10 of the store's triple backend against exact search over its own vectors."""
    with Store.open(path, read_only=True) as store:
        with Index.open(store, encoder=ENCODER) as index:
            backend = index._file("triples")
            with store.catalog.connect() as con:
                live = [r[0] for r in con.execute("SELECT label_id FROM index_items WHERE kind = 'triples' "
                                                  "AND NOT deleted ORDER BY label_id").fetchall()]
            vectors = backend.vectors(live)
            exact = np.asarray(live)[np.argsort(-(queries @ vectors.T), axis=1)[:, :10]]
            found, _ = backend.search(queries, 10)
    return float(np.mean([len(set(map(int, f)) & set(map(int, e))) / 10 for f, e in zip(found, exact)]))


# -- the table ------------------------------------------------------------------------------
def test_auto_never_picks_pgvector_and_the_dsn_is_never_shown_with_its_password():
    assert IndexConfig().backend == "auto" and IndexConfig().dsn == ""
    assert {choose_backend(IndexConfig(), n) for n in (0, 10**6, 10**9)} == {"hnswlib", "usearch"}
    assert choose_backend(IndexConfig(backend="pgvector"), 3) == "pgvector"
    assert redact_dsn("postgresql://kg:s3cret@db.example:5432/kgstore?sslmode=require&password=x") == \
        "postgresql://kg@db.example:5432/kgstore?sslmode=require"
    assert redact_dsn("postgresql:///kgstore?host=/run/postgresql") == "postgresql:///kgstore?host=/run/postgresql"
    assert "s3cret" not in redact_dsn("host=db user=kg password=s3cret dbname=kgstore")


def test_table_adds_deletes_commits_on_save_and_counts_past_deletes(postgres, tmp_path):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cfg = IndexConfig(backend="pgvector", dsn=postgres)
    path = tmp_path / "index" / "x.pgvector"
    table = create_backend("pgvector", path, 16, cfg)
    assert isinstance(table, VectorBackend) and isinstance(table, PgVectorTable) and table.name == "pgvector"
    table.add(vectors[:200], np.arange(200))
    assert table.mark_deleted([5, 199, 5]) == 2  # the highest label too: the count keeps it
    assert not path.exists()  # nothing committed, no marker: a build killed now leaves nothing
    assert sql(postgres, "SELECT to_regclass(%s) IS NULL", [table.table]) == [(True,)]
    table.save()
    assert path.is_file() and not path.with_name("x.pgvector.tmp").exists()

    reader = open_backend("pgvector", path, 16, ef=64, cfg=cfg)
    assert reader.count == 200 and (reader.M, reader.ef_construction) == (16, 200)
    labels, sims = reader.search(vectors[:3], 5)
    assert labels[:, 0].tolist() == [0, 1, 2] and np.allclose(sims[:, 0], 1.0, atol=1e-5)
    assert 5 not in reader.search(vectors[5], 10)[0][0]
    with pytest.raises(RuntimeError):
        reader.vectors([5])  # deleted: the caller falls back as for a label hnswlib lacks
    assert np.allclose(reader.vectors([7, 3]), vectors[[7, 3]])
    with pytest.raises(VectorIndexError, match="open for searching"):
        reader.add(vectors[200:], np.arange(200, 300))

    writer = open_backend("pgvector", path, 16, ef=64, writable=True, cfg=cfg)
    writer.add(vectors[200:], np.arange(200, 300))
    assert reader.search(vectors[250], 1)[0][0, 0] != 250  # not saved yet: readers see the last save
    writer.save()
    assert reader.search(vectors[250], 1)[0][0, 0] == 250
    assert open_backend("pgvector", path, 16, ef=64, cfg=cfg).count == 300
    with psycopg.connect(postgres, autocommit=True) as con:  # 300 rows: the planner would rather scan them
        con.execute("SET enable_seqscan = off")
        plan = con.execute(f"EXPLAIN SELECT id FROM {table.table} ORDER BY embedding <=> %s::vector LIMIT 5",
                           [str(vectors[0].tolist())]).fetchall()
    assert any(f"{table.table}_hnsw" in row[0] for row in plan)  # the cosine HNSW index serves <=>
    with pytest.raises(VectorIndexError, match="holds 16-dimensional vectors; the encoder makes 8"):
        open_backend("pgvector", path, 8, ef=64, cfg=cfg)
    writer.close()
    reader.close()


# -- same answers ---------------------------------------------------------------------------
def test_demo_store_answers_as_hnswlib_does(demo_pair):
    assert set(backends_of(demo_pair["pgvector"]).values()) == {"pgvector"}
    assert not (demo_pair["pgvector"] / "index" / "triples.hnsw").exists()
    mentions = ["Andes", "andes", "Himalaya", "Mount Everest", "Peru", "Aconcagua", "Himalayas mountains"]
    questions = [QUESTION, "What is the highest point of the Andes?", "Which countries does the Himalaya cover?",
                 "Where is Mount Everest?"]
    assert_same_answers(demo_pair["hnswlib"], demo_pair["pgvector"], mentions, questions)


def test_demo_store_asks_the_same_with_pgvector(demo_pair):
    results = {}
    for backend, path in demo_pair.items():
        with Store.open(path, read_only=True) as store:
            with Index.open(store, encoder=ENCODER) as index:
                context = QAContext(store, ScriptedLLM([CYPHER, VERIFIED, ANSWER]), index)
                result = make_method("pseudo-graph", context).answer(QUESTION)
        results[backend] = (result.answers, result.answer_iris, [(e.s, e.p, e.o) for e in result.evidence])
    assert results["pgvector"][0] == ["Andes"]
    assert results["pgvector"] == results["hnswlib"]


def test_metaqa_slice_answers_and_recall_as_hnswlib(metaqa_pair, shared_data):
    lines = metaqa_lines(shared_data)
    names = list(dict.fromkeys(line.split("|")[0] for line in lines[:METAQA_HEAD]))
    mentions = names[::40] + ["kismet", "Ronald Colman", "christian bale", "Michael Curtis"]
    assert_same_answers(metaqa_pair["hnswlib"], metaqa_pair["pgvector"], mentions, METAQA_QUESTIONS)
    # queries the index has not seen: the texts of the next triples of the KB, and questions
    unseen = [" | ".join(line.split("|")) for line in lines[METAQA_HEAD:METAQA_HEAD + 300]]
    queries = ENCODER.embed(unseen + METAQA_QUESTIONS + mentions)
    recalls = {b: recall_at_10(path, queries) for b, path in metaqa_pair.items()}
    assert recalls["pgvector"] >= 0.97, recalls
    assert recalls["hnswlib"] >= 0.97, recalls


# -- builds ---------------------------------------------------------------------------------
def test_incremental_build_adds_only_what_changed_and_rebuild_drops_the_table(postgres, shared_data, tmp_path,
                                                                              monkeypatch):
    lines = metaqa_lines(shared_data)
    path = pg_store(tmp_path / "store", postgres)
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "a.txt", lines[:300]))
        first = build_index(store, kinds=["entities", "triples"], encoder=ENCODER)
    table = table_of(path, "triples")
    extra = [line for line in lines[300:400] if line not in lines[:300]]
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "b.txt", lines[300:400]))
        second = build_index(store, kinds=["entities", "triples"], encoder=ENCODER)
        again = build_index(store, kinds=["triples"], encoder=ENCODER)
        with Index.open(store, encoder=ENCODER) as index:
            newest = extra[-1].split("|")
            hits = index.search("triples", " ".join(newest), k=3)
            linked = index.link(newest[0], k=1)
    triples = second.kinds["triples"]
    assert triples.added == len(set(extra)) and triples.embedded <= len(set(extra))
    assert triples.items == first.kinds["triples"].items + len(set(extra))
    assert again.kinds["triples"].added == 0 and again.kinds["triples"].deleted == 0
    assert table_of(path, "triples") == table  # the same table, grown
    assert sql(postgres, f"SELECT count(*) FROM {table}") == [(triples.items,)]
    assert any(h.label == newest[0] for h in hits) and linked[0].label == newest[0]
    assert backends_of(path) == {"entities": "pgvector", "triples": "pgvector"}

    with Store.open(path) as store:  # a rebuild starts a new table and drops the old one
        build_index(store, kinds=["triples"], rebuild=True, encoder=ENCODER)
    assert table_of(path, "triples") != table
    assert sql(postgres, "SELECT to_regclass(%s) IS NULL", [table]) == [(True,)]
    assert sql(postgres, "SELECT count(*) FROM kgstore_vector_tables WHERE name = %s", [table]) == [(0,)]

    # searching a store whose server went away: a clear error, from the API and the CLI
    monkeypatch.setenv(DSN_ENV, f"postgresql://kg:s3cret@/postgres?host={tmp_path / 'gone'}")
    with Store.open(path, read_only=True) as store:
        with pytest.raises(VectorServerUnreachableError, match="cannot be reached"):
            Index.open(store, encoder=ENCODER).search("triples", "Kismet", k=3)
    result = CliRunner().invoke(main, ["search", str(path), "Kismet", "--kind", "triples"])
    assert result.exit_code == 10 and "cannot be reached" in result.output, result.output
    assert "Traceback" not in result.output and "s3cret" not in result.output


def test_a_killed_pgvector_build_resumes_without_re_embedding(postgres, shared_data, tmp_path, monkeypatch):
    path = pg_store(tmp_path / "store", postgres, batch_size=6)  # chunks of 100 rows; a commit after each
    total = killed_build_resumes(path, "pgvector", shared_data, tmp_path, monkeypatch)
    assert sql(postgres, f"SELECT count(*), max(id) + 1 FROM {table_of(path, 'triples')}") == [(total, total)]


# -- errors ---------------------------------------------------------------------------------
def test_an_unreachable_server_is_a_clear_error_without_the_password(shared_data, tmp_path, monkeypatch):
    monkeypatch.delenv(DSN_ENV, raising=False)
    dead = "postgresql://kg:s3cret@127.0.0.1:1/kgstore"  # loopback, a port nothing listens on
    path = pg_store(tmp_path / "store", dead)
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "a.txt", metaqa_lines(shared_data)[:20]))
        with pytest.raises(VectorServerUnreachableError) as caught:
            build_index(store, kinds=["entities"], encoder=ENCODER)
    message = str(caught.value)
    assert "postgresql://kg@127.0.0.1:1/kgstore cannot be reached" in message and "s3cret" not in message
    assert caught.value.transient and "[index] dsn" in message
    result = CliRunner().invoke(main, ["index", str(path), "--kinds", "entities"])
    assert result.exit_code == VectorServerUnreachableError.exit_code == 10
    assert "cannot be reached" in result.output and "Traceback" not in result.output
    assert "s3cret" not in result.output

    socket = "postgresql:///kgstore?host=" + str(tmp_path / "no-server")  # a Unix socket nobody serves
    monkeypatch.setenv(DSN_ENV, socket)  # the variable wins over kgstore.toml
    with Store.open(path) as store:
        with pytest.raises(VectorServerUnreachableError, match=re.escape(f"at {socket} cannot be reached")):
            build_index(store, kinds=["entities"], encoder=ENCODER)


def test_a_database_without_pgvector_or_without_a_dsn_says_what_to_do(postgres, shared_data, tmp_path, monkeypatch):
    monkeypatch.delenv(DSN_ENV, raising=False)
    # a role that may not create the extension (it is not trusted) in a database of its own
    sql(postgres, "DROP DATABASE IF EXISTS plain")
    sql(postgres, "DROP ROLE IF EXISTS plain")
    sql(postgres, "CREATE ROLE plain LOGIN")
    sql(postgres, "CREATE DATABASE plain OWNER plain")
    plain = re.sub(r"postgresql://[^@/]*@/postgres", "postgresql://plain@/plain", postgres)
    assert plain != postgres
    path = pg_store(tmp_path / "store", plain)
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "a.txt", metaqa_lines(shared_data)[:20]))
        with pytest.raises(VectorExtensionMissingError, match="no 'vector' extension.*CREATE EXTENSION vector"):
            build_index(store, kinds=["entities"], encoder=ENCODER)
    config = StoreConfig.load(path)
    config.index.dsn = ""
    config.save(path)
    with Store.open(path) as store:
        with pytest.raises(VectorIndexError, match=r"needs a Postgres server: set \[index\] dsn"):
            build_index(store, kinds=["entities"], encoder=ENCODER)

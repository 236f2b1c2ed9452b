"""SIGKILL at every stage: each command is killed at seeded random points (tests/kill_helper.py),
run again, and must then equal an uninterrupted run, on a store that opens without repair.

The ingest's own kill tests are in test_resume_kill.py; here: index, graph sync (Ladybug and
Neo4j over Bolt), serve during /reload, and eval --resume.
"""
from __future__ import annotations

import json
import shutil
import sys

import pytest

import kgstore
from kgstore import Store
from kill_helper import run_killed
from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

SEEDS = [11, 12, 13]
SLOW_SEEDS = SEEDS[:2]  # the commands that take seconds to start (the encoder, a server)
PYTHON = sys.executable
CLI = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"


def kgstore_cmd(*args) -> list[str]:
    return [PYTHON, "-c", CLI, *map(str, args)]


def metaqa_store(shared_data, path, lines: int):
    """A store holding the first ``lines`` lines of the MetaQA KB."""
    kb = path.parent / f"{path.name}-kb.txt"
    with open(shared_data / "qa/metaqa/kb_partial.txt", encoding="utf-8") as src:
        kb.write_text("".join(line for _, line in zip(range(lines), src)), encoding="utf-8")
    with Store.init(path) as store:
        kgstore.ingest(store, "tsv", kb)
    return path


# -- index ------------------------------------------------------------------------------------
# The build saves its vector file every SAVE_EVERY_S (300 s) and reads pending entries in
# chunks of at least CHUNK_ROWS (2048): the child shrinks both so that a build of a few
# hundred entries saves several times before it is killed.
INDEX = (
    "import sys, time\nimport indexer._build as build\nfrom kgstore import Store\n"
    "build.SAVE_EVERY_S = 0.0\nbuild.CHUNK_ROWS = 64\n"
    "if sys.argv[2] == 'pause-after-file-save':\n"
    "    def paused(*args, **kwargs):\n"
    "        print('file saved', flush=True)\n        time.sleep(600)\n"
    "    build.write_rows = paused\n"
    "def said(p):\n"
    "    if p.phase == 'embed':\n        print('embedded', p.done, p.total, flush=True)\n"
    "with Store.open(sys.argv[1]) as s:\n"
    "    build.build_index(s, kinds=['entities'], batch_size=4, progress=said)\n"
)
INDEX_KINDS = ["entities"]
QUERIES = ["Kismet", "a film directed by William Dieterle", "Marlene Dietrich", "drama", "1944"]


_index_stores: list = []  # built once per session, for this module and test_full_disk.py


@pytest.fixture(scope="session")
def index_stores(shared_data, tmp_path_factory):
    """(an ingested store to copy, its uninterrupted index's summary and search results)."""
    from indexer import Index, build_index

    if _index_stores:
        return _index_stores[0]
    root = tmp_path_factory.mktemp("index-stores")
    base = metaqa_store(shared_data, root / "base", 250)
    clean = root / "clean"
    shutil.copytree(base, clean)
    with Store.open(clean) as store:
        summary = build_index(store, kinds=INDEX_KINDS, batch_size=8)
    with Store.open(clean, read_only=True) as store:
        results = search_results(Index.open(store))
    _index_stores.append((base, summary.kinds["entities"], results))
    return _index_stores[0]


def search_results(index) -> list:
    """Per query: the top 10 (iri, score), sorted by IRI: the order of equal scores and the
    last digits of a score depend on how texts were batched (compare with ``same_results``)."""
    return [sorted((h.iri, h.score) for h in hits) for hits in index.search_many("entities", QUERIES, k=10)]


def same_results(got: list, expected: list) -> bool:
    return all([iri for iri, _ in g] == [iri for iri, _ in e]
               and all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(g, e)) for g, e in zip(got, expected))


def _saved_part(store_dir):
    """What a killed build left on disk: vectors in the saved file, and the distinct texts
    (key hashes) the catalog holds rows for among those labels."""
    import hnswlib
    import duckdb

    path = store_dir / "index" / "entities.hnsw"
    if not path.exists():
        return 0, 0
    vectors = hnswlib.Index(space="cosine", dim=384)
    vectors.load_index(str(path))
    count = vectors.get_current_count()
    con = duckdb.connect(str(store_dir / "catalog.duckdb"), read_only=True)
    try:
        texts = con.execute("SELECT count(DISTINCT key_hash) FROM index_items WHERE kind = 'entities' "
                            "AND label_id < ?", [count]).fetchone()[0]
    finally:
        con.close()
    return count, texts


def _rerun_and_compare(store_dir, clean_summary, clean_results):
    from indexer import Index, build_index

    saved_vectors, saved_texts = _saved_part(store_dir)
    with Store.open(store_dir) as store:  # no repair step: the build itself resumes
        rerun = build_index(store, kinds=INDEX_KINDS, batch_size=4).kinds["entities"]
    # what the killed build saved is copied from its file, not embedded again
    assert rerun.embedded == clean_summary.embedded - saved_texts
    assert rerun.items == clean_summary.items
    with Store.open(store_dir, read_only=True) as store:
        index = Index.open(store)
        assert index.info()["entities"]["items"] == clean_summary.items
        assert index.info()["entities"]["complete"] is True
        assert same_results(search_results(index), clean_results)
    return saved_vectors


@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_index_killed_at_random_resumes_to_the_same_search_results(index_stores, tmp_path, seed):
    base, clean_summary, clean_results = index_stores
    store_dir = tmp_path / "store"
    shutil.copytree(base, store_dir)
    # killed 0 to 0.2 s after chunk 1 to 4 of 7 was added (and before it was saved, or
    # while, or after)
    chunks = 1 + seed % 4
    kill = run_killed([PYTHON, "-c", INDEX, str(store_dir), "-"], seed=seed, max_s=0.2,
                      until=lambda out: out.count("embedded") >= chunks)
    assert kill, f"the build finished before it could be killed; make the input larger\n{kill.output}"
    _rerun_and_compare(store_dir, clean_summary, clean_results)


def test_index_killed_between_saving_its_file_and_its_manifest_resumes(index_stores, tmp_path):
    """The vector file is replaced before the catalog's manifest records how many vectors it
    holds: a kill in between used to leave "holds N vectors but the catalog expects M;
    rebuild it" on every later run."""
    base, clean_summary, clean_results = index_stores
    store_dir = tmp_path / "store"
    shutil.copytree(base, store_dir)
    kill = run_killed([PYTHON, "-c", INDEX, str(store_dir), "pause-after-file-save"], seed=0, max_s=0.0,
                      until=lambda out: "file saved" in out)
    assert kill, kill.output
    assert _rerun_and_compare(store_dir, clean_summary, clean_results) > 0


# -- graph sync ---------------------------------------------------------------------------------
SYNC = (
    "import sys, time\nfrom kgstore import Store\nfrom kgstore.graph import sync_graph\n"
    # A pause at each stage report (the last, "done", included), so that a kill drawn 0-0.3 s
    # after a stage starts lands before the process ends however fast this machine is.
    "def said(p):\n    print('stage', p.stage, flush=True)\n    time.sleep(0.15)\n"
    "with Store.open(sys.argv[1]) as s:\n    sync_graph(s, said)\n"
)
SYNC_STAGES = ["export", "Entity", "REL", "HAS_VALUE"]
GRAPH_BACKENDS = ["ladybug", pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.fixture(scope="module")
def wc2014_store(shared_data, tmp_path_factory):
    from test_graph_bolt import wc2014

    path = tmp_path_factory.mktemp("kill-graph") / "wc2014"
    with Store.init(path) as store:
        kgstore.ingest(store, "tsv", wc2014(shared_data))
    return path


def _graph_after_sync(store_dir):
    """Sync through the CLI (it must open the store and the graph as they are), then dump."""
    from click.testing import CliRunner

    from kgstore.cli import main
    from kgstore.graph import open_graph
    from test_graph_bolt import dump

    result = CliRunner().invoke(main, ["graph", "sync", str(store_dir), "--format", "json"])
    assert result.exit_code == 0, result.output
    with Store.open(store_dir, read_only=True) as store, open_graph(store) as graph:
        return dump(graph), graph.counts()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("backend", GRAPH_BACKENDS)
def test_graph_sync_killed_at_random_then_synced_again_equals_a_clean_sync(backend, seed, request, wc2014_store,
                                                                          tmp_path):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    for path in (clean, killed):
        shutil.copytree(wc2014_store, path)
        if backend == "neo4j":
            request.getfixturevalue("use_bolt")(path)
    # the clean store first: with Neo4j both stores mirror into the one server database
    clean_dump, clean_counts = _graph_after_sync(clean)
    assert (clean_counts.edges, clean_counts.values) == (5010, 1472)

    # killed 0 to 0.3 s into a stage drawn from the seed
    stage = SYNC_STAGES[seed % len(SYNC_STAGES)]
    kill = run_killed([PYTHON, "-c", SYNC, str(killed)], seed=seed, max_s=0.3,
                      until=lambda out: f"stage {stage}\n" in out)
    assert kill, f"the sync finished before it could be killed\n{kill.output}"
    killed_dump, killed_counts = _graph_after_sync(killed)
    assert killed_counts == clean_counts
    assert killed_dump == clean_dump


# -- eval --resume --------------------------------------------------------------------------------
# Twelve MetaQA-format questions on the demo sample, answered by a scripted model that takes
# 0.2 s a question in the child (so that the kill lands between and inside answers).
EVAL_QUESTIONS = {
    "which countries does [Andes] cover": ("Peru|Chile", "{Peru}"),
    "which range is [Mount Everest] in": ("Himalayas", "It is in the {Himalayas}"),
    "which countries does [Himalayas] cover": ("Bhutan|Nepal", "{Nepal} and {Bhutan}"),
}
EVAL_LINES = 12
EVAL = (
    "import json, sys, time\nfrom kgstore.cli import main\nfrom qa import ScriptedLLM\n"
    "answers = json.loads(sys.argv[1])\n"
    "def answer(messages):\n"
    "    time.sleep(0.2)\n"
    "    return answers[messages[-1]['content'].split('Question: ', 1)[1]]\n"
    "main(sys.argv[2:], prog_name='kgstore', obj={'llm': ScriptedLLM([answer] * 100)})\n"
)


def _model_answers() -> dict[str, str]:
    return {q.replace("[", "").replace("]", ""): said for q, (_, said) in EVAL_QUESTIONS.items()}


def _eval_data(root):
    hop = root / "qa" / "metaqa" / "1-hop"
    hop.mkdir(parents=True)
    questions = list(EVAL_QUESTIONS.items())
    lines = [f"{q}\t{gold}\n" for q, (gold, _) in (questions[i % len(questions)] for i in range(EVAL_LINES))]
    (hop / "vanilla_qa_dev.txt").write_text("".join(lines))
    flags = root / "qa" / "metaqa" / "answerable_flags"
    flags.mkdir()
    (flags / "1-hop_dev_answerable_in_partial_kb.txt").write_text("1\n" * EVAL_LINES)
    return root / "qa"


def _eval_args(store, data, out, *more):
    return ["eval", str(store), "-d", "metaqa", "--hops", "1", "--split", "dev", "-m", "io", "--limit", "0",
            "--data-dir", str(data), "--out", str(out), *more]


def _eval_in_process(args, *, calls: int):
    """Run eval here with a scripted model that must be asked exactly ``calls`` times."""
    from click.testing import CliRunner

    from kgstore.cli import main
    from qa import ScriptedLLM

    answers = _model_answers()
    llm = ScriptedLLM([lambda m: answers[m[-1]["content"].split("Question: ", 1)[1]]] * calls)
    result = CliRunner().invoke(main, args, obj={"llm": llm})
    assert result.exit_code == 0, result.output
    assert len(llm.calls) == calls
    return result


def _results(out):
    """(id, answers, hits@1) per line of the results file, in file order."""
    lines = (out / "results-io.jsonl").read_text(encoding="utf-8").splitlines()
    return [(r["id"], r["answers"], r["hits@1"]) for r in map(json.loads, lines)]


def _lines(path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("seed", SEEDS)
def test_eval_killed_at_random_resumes_each_question_once(demo_store, tmp_path, seed):
    data = _eval_data(tmp_path)
    _eval_in_process(_eval_args(demo_store, data, tmp_path / "clean"), calls=EVAL_LINES)
    clean = _results(tmp_path / "clean")
    assert len(clean) == EVAL_LINES and len({r[0] for r in clean}) == EVAL_LINES

    out = tmp_path / "killed"
    answered = 2 + seed % (EVAL_LINES - 4)  # kill 0 to 0.3 s after this many answers were written
    kill = run_killed([PYTHON, "-c", EVAL, json.dumps(_model_answers()), *_eval_args(demo_store, data, out)],
                      seed=seed, max_s=0.3, until=lambda _: _lines(out / "results-io.jsonl") >= answered)
    assert kill, f"eval finished before it could be killed\n{kill.output}"
    done = _lines(out / "results-io.jsonl")  # complete lines: an unfinished one is asked again
    assert answered <= done < EVAL_LINES

    _eval_in_process(_eval_args(demo_store, data, out, "--resume"), calls=EVAL_LINES - done)
    assert sorted(_results(out)) == sorted(clean)


# -- serve during /reload ---------------------------------------------------------------------------
def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url: str, path: str):
    """The JSON at ``url + path``, or None while nothing answers there."""
    import httpx

    try:
        return httpx.get(url + path, timeout=5).json()
    except httpx.TransportError:
        return None


def _served_stats(store_dir) -> dict:
    """/stats of a fresh `kgstore serve` on ``store_dir`` (a real process, stopped by its pid)."""
    import signal
    import subprocess
    import time

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(kgstore_cmd("serve", store_dir, "--port", port, "--log-level", "warning"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while (stats := _get(url, "/stats")) is None:
            assert server.poll() is None, f"the server did not start: {server.stderr.read()}"
            assert time.monotonic() < deadline, "the server did not answer within 60 s"
            time.sleep(0.1)
        return stats
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()


@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_serve_killed_around_reload_restarts_and_serves_the_final_store(shared_data, tmp_path, seed):
    import random
    import subprocess
    import threading
    import time

    import httpx

    lines = (shared_data / "qa/metaqa/kb_partial.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    first, more = tmp_path / "first.txt", tmp_path / "more.txt"
    first.write_text("".join(lines[:2000]), encoding="utf-8")
    more.write_text("".join(lines[2000:8000]), encoding="utf-8")
    served, clean = tmp_path / "served", tmp_path / "clean"
    for path in (served, clean):
        with Store.init(path) as store:
            kgstore.ingest(store, "tsv", first)
    with Store.open(clean) as store:
        kgstore.ingest(store, "tsv", more)

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    reload_after = random.Random(seed).uniform(0.0, 1.0)
    writer: list[subprocess.Popen] = []

    def serving_then_writing(_output) -> bool:
        # once the server answers: ingest more from another process, and POST /reload
        # `reload_after` s later (while that ingest runs, or after it)
        if _get(url, "/health") is None:
            return False
        writer.append(subprocess.Popen(kgstore_cmd("ingest", served, "tsv", more), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True))

        def reload() -> None:
            time.sleep(reload_after)
            try:
                httpx.post(url + "/reload", timeout=30)
            except httpx.TransportError:
                pass  # killed first, or while reloading

        threading.Thread(target=reload, daemon=True).start()
        return True

    # the server is killed 0 to 1.5 s after the ingest started
    try:
        kill = run_killed(kgstore_cmd("serve", served, "--port", port, "--log-level", "warning"), seed=seed,
                          max_s=1.5, until=serving_then_writing, until_timeout_s=60)
        assert kill, f"the server stopped by itself\n{kill.output}"
        _, err = writer[0].communicate(timeout=300)
        assert writer[0].returncode == 0, err  # a reader killed beside it never stops the writer
    finally:
        for proc in writer:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()

    stats = _served_stats(served)  # no repair step: it starts on the store as the kill left it
    expected = _served_stats(clean)
    stats.pop("snapshot"), expected.pop("snapshot")
    assert stats == expected and stats["ingest_runs"] == 2

"""An ingest killed with SIGKILL mid-file resumes to exactly the uninterrupted result."""
import os
import sys
import time

import duckdb
import pytest

from kgstore import Store, StoreLockedError, ingest
from kgstore.records import LoadOptions
from kill_helper import run_killed

INGEST = (
    "import sys\nfrom kgstore import Store, ingest\nfrom kgstore.records import LoadOptions\n"
    "with Store.open(sys.argv[1]) as s:\n"
    "    ingest(s, 'tsv', sys.argv[2], options=LoadOptions(batch_size=int(sys.argv[3])))\n"
)


def _snapshot(path):
    with Store.open(path, read_only=True) as store:
        triples = sorted(str(q) for q in store.rdf)
        with store.catalog.connect() as con:
            facts = con.execute("SELECT s, p, o, o_literal FROM statements ORDER BY ALL").fetchall()
            entities = con.execute("SELECT iri, label, popularity FROM entities ORDER BY iri").fetchall()
            runs = con.execute("SELECT count(*), min(status) FROM ingest_runs").fetchone()
    return triples, facts, entities, runs


def _checkpoint_line(store_dir):
    try:
        con = duckdb.connect(str(store_dir / "catalog.duckdb"), read_only=True)
    except duckdb.IOException:
        return 0  # the writer is inside a transaction right now
    try:
        row = con.execute("SELECT max(checkpoint_line) FROM ingest_runs").fetchone()
        return row[0] or 0
    finally:
        con.close()


def _metaqa_head(tmp_path, shared_data, lines=30000):
    kb = tmp_path / "kb.txt"
    with open(shared_data / "qa/metaqa/kb_partial.txt", encoding="utf-8") as src:
        kb.write_text("".join(line for _, line in zip(range(lines), src)), encoding="utf-8")
    return kb


@pytest.mark.parametrize("seed", [1, 2])
def test_sigkill_mid_file_then_resume_equals_uninterrupted(tmp_path, shared_data, seed):
    kb = _metaqa_head(tmp_path, shared_data)
    total_lines = 30000

    Store.init(tmp_path / "clean").close()
    with Store.open(tmp_path / "clean") as store:
        ingest(store, "tsv", kb, options=LoadOptions(batch_size=1000))

    Store.init(tmp_path / "killed").close()
    seen = []  # the last checkpoint read before the kill

    def checkpointed(_output):
        seen.append(_checkpoint_line(tmp_path / "killed"))
        return seen[-1] >= 5000

    # killed from 0 to 0.3 s after the 5000th line is committed
    kill = run_killed([sys.executable, "-c", INGEST, str(tmp_path / "killed"), str(kb), "1000"], seed=seed,
                      max_s=0.3, until=checkpointed)
    assert kill, f"the ingest finished before it could be killed; make the input larger\n{kill.output}"
    line = seen[-1]
    assert 0 < line < total_lines

    with Store.open(tmp_path / "killed") as store:
        summary = ingest(store, "tsv", kb, options=LoadOptions(batch_size=1000))
    assert summary.status == "done"
    assert summary.resumed_from_line >= line

    clean, killed = _snapshot(tmp_path / "clean"), _snapshot(tmp_path / "killed")
    assert killed[0] == clean[0]  # Oxigraph: same triples
    assert killed[1] == clean[1]  # catalog facts: same rows, no duplicates
    assert killed[2] == clean[2]  # entities with the same labels and popularity
    assert killed[3] == (1, "done")

    # A finished file is a no-op the next time.
    with Store.open(tmp_path / "killed") as store:
        assert ingest(store, "tsv", kb, options=LoadOptions(batch_size=1000)).status == "skipped"
        assert store.triple_count() == len(clean[0])


# With a parsing worker the catalog stays open across commits, which go to DuckDB's
# write-ahead log until it checkpoints: the child says when each commit is done, and is
# killed while the log still holds commits.
INGEST_WITH_WORKER = (
    "import sys\nimport kgstore._ingest as ingest_module\nfrom kgstore import Store, ingest\n"
    "from kgstore.records import LoadOptions\n"
    "ingest_module.GROUP_TRIPLES = 3000\n"
    "def said(progress):\n    print('committed', flush=True)\n"
    "with Store.open(sys.argv[1]) as s:\n"
    "    ingest(s, 'tsv', sys.argv[2], options=LoadOptions(batch_size=1000), progress=said)\n"
)


def _open_once_free(path, timeout=10.0):
    """The store, once the killed ingest's parsing worker, which shares its lock and dies
    with it (a moment after it), has gone."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return Store.open(path)
        except StoreLockedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_sigkill_with_the_catalog_held_open_resumes_from_its_log(tmp_path, shared_data):
    kb = _metaqa_head(tmp_path, shared_data)
    Store.init(tmp_path / "clean").close()
    with Store.open(tmp_path / "clean") as store:
        ingest(store, "tsv", kb, options=LoadOptions(batch_size=1000))

    Store.init(tmp_path / "killed").close()
    env = {**os.environ, "KGSTORE_INGEST_WORKERS": "1"}
    kill = run_killed([sys.executable, "-c", INGEST_WITH_WORKER, str(tmp_path / "killed"), str(kb)], seed=0,
                      max_s=0.0, until=lambda output: output.count("committed") >= 4, env=env)
    assert kill, f"the ingest finished before it could be killed; make the input larger\n{kill.output}"
    wal = tmp_path / "killed" / "catalog.duckdb.wal"
    assert wal.exists() and wal.stat().st_size > 0  # the commits since the open are in the log only

    with _open_once_free(tmp_path / "killed") as store:
        summary = ingest(store, "tsv", kb, options=LoadOptions(batch_size=1000))
    assert summary.status == "done" and summary.resumed_from_line > 0
    clean, killed = _snapshot(tmp_path / "clean"), _snapshot(tmp_path / "killed")
    assert killed[0] == clean[0]
    assert killed[1] == clean[1]
    assert killed[2] == clean[2]
    assert killed[3] == (1, "done")

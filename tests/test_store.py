"""The Store API: creating, opening, locking, closing, read-only access, query safety."""
import subprocess
import sys

import pytest

from kgstore import (QueryError, ReadOnlyError, Store, StoreClosedError, StoreError, StoreLockedError,
                     StoreNotFoundError, Triple)
from kgstore.terms import RDFS_LABEL, WD, WDT


def _tiny(path):
    store = Store.init(path)
    store.add_triples([Triple(WD + "Q42", WDT + "P31", WD + "Q5"),
                       Triple(WD + "Q42", RDFS_LABEL, "Douglas Adams", literal=True, lang="en")])
    return store


def test_init_creates_layout(tmp_path):
    with Store.init(tmp_path / "s") as store:
        assert store.triple_count() == 0
    names = sorted(p.name for p in (tmp_path / "s").iterdir())
    assert names == [".writer.lock", "catalog.duckdb", "kgstore.toml", "oxigraph"]


def test_init_refuses_existing_store_and_nonempty_dir(tmp_path):
    Store.init(tmp_path / "s").close()
    with pytest.raises(StoreError, match="already holds a kgstore store"):
        Store.init(tmp_path / "s")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file.txt").write_text("x")
    with pytest.raises(StoreError, match="not empty"):
        Store.init(tmp_path / "other")


def test_open_missing_store_says_how_to_create(tmp_path):
    with pytest.raises(StoreNotFoundError, match="kgstore init"):
        Store.open(tmp_path / "nope")


def test_second_writer_is_refused_in_another_process(tmp_path):
    with _tiny(tmp_path / "s"):
        code = (
            "import sys\nfrom kgstore import Store, StoreLockedError\n"
            "try:\n    Store.open(sys.argv[1])\nexcept StoreLockedError as e:\n    print(e); sys.exit(4)\n"
        )
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True, text=True)
        assert out.returncode == 4, out.stderr
        assert "already open for writing by another process (held by pid" in out.stdout


def test_reader_opens_while_writer_holds_the_store(tmp_path):
    with _tiny(tmp_path / "s") as writer:
        writer.rdf.flush()
        code = (
            "import sys\nfrom kgstore import Store\n"
            "with Store.open(sys.argv[1], read_only=True) as s:\n"
            "    print(len(list(s.query('SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }'))))\n"
        )
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "1"


def test_lock_is_released_on_close(tmp_path):
    _tiny(tmp_path / "s").close()
    with Store.open(tmp_path / "s") as again:
        assert again.triple_count() == 2


def test_use_after_close_fails_loudly(tmp_path):
    store = _tiny(tmp_path / "s")
    store.close()
    with pytest.raises(StoreClosedError, match="used after it was closed"):
        store.query("ASK { ?s ?p ?o }")


def test_read_only_handle_refuses_writes(tmp_path):
    _tiny(tmp_path / "s").close()
    with Store.open(tmp_path / "s", read_only=True) as ro:
        with pytest.raises(ReadOnlyError):
            ro.add_triples([Triple(WD + "Q1", WDT + "P31", WD + "Q2")])


def test_query_has_prefixes_and_refuses_updates(tmp_path):
    with _tiny(tmp_path / "s") as store:
        rows = [sol["x"].value for sol in store.query("SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }")]
        assert rows == [WD + "Q5"]
        with pytest.raises(QueryError, match="update"):
            store.query("DELETE WHERE { ?s ?p ?o }")
        with pytest.raises(QueryError, match="syntax"):
            store.query("SELEKT ?x WHERE { ?x ?y ?z }")
        assert store.triple_count() == 2


def test_query_json_is_the_standard_results_document(tmp_path):
    import json

    with _tiny(tmp_path / "s") as store:
        doc = json.loads(store.query_json("SELECT ?x WHERE { wd:Q42 wdt:P31 ?x }"))
    assert doc == {"head": {"vars": ["x"]},
                   "results": {"bindings": [{"x": {"type": "uri", "value": WD + "Q5"}}]}}

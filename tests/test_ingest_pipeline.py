"""Ingest with a parsing worker process (kgstore/_pipeline.py) gives exactly the store that
the single-process ingest gives: same triples, same catalog rows, same checkpoints, and
the same errors at the same place. The input is a dump from bench/_wikidata_gen.py, whose
expected triples are written by the generator itself, not by kgstore."""
import contextlib
import gzip
import importlib.util
import multiprocessing
import os
import signal
import sys
from pathlib import Path

import duckdb
import pytest

from kgstore import IngestError, LoadOptions, Store, TooManyErrorsError, TruncatedInputError, ingest
from kgstore import _ingest as ingest_module
from kgstore._pipeline import WORKER_ENV, WORKER_NAME

_GEN = Path(__file__).resolve().parents[1] / "bench" / "_wikidata_gen.py"
_spec = importlib.util.spec_from_file_location("_wikidata_gen", _GEN)
gen = importlib.util.module_from_spec(_spec)
sys.modules["_wikidata_gen"] = gen
_spec.loader.exec_module(gen)

ENTITIES = 300
OPTIONS = LoadOptions(languages=("en",), batch_size=20)  # 15 batches: groups do form


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    result = gen.generate_files(ENTITIES, str(d / "dump.json"), str(d / "expected.nt"), seed=7)
    return d / "dump.json", d / "expected.nt", result


def _snapshot(path):
    with Store.open(path, read_only=True) as store:
        triples = sorted(str(q) for q in store.rdf)
        with store.catalog.connect() as con:
            tables = {name: con.execute(f"SELECT * EXCLUDE ({skip}) FROM {name} ORDER BY ALL").fetchall()
                      for name, skip in (("statements", "run_id"), ("entities", "popularity"),
                                         ("relations", "usage"), ("rejected", "run_id"))}
            tables["popularity"] = con.execute("SELECT iri, popularity FROM entities ORDER BY iri").fetchall()
            tables["runs"] = con.execute(
                "SELECT status, error, checkpoint_offset, checkpoint_line, counts FROM ingest_runs "
                "ORDER BY run_id").fetchall()
    return triples, tables


def _ingest(path, source, monkeypatch, *, worker: bool, **kwargs):
    monkeypatch.setenv(WORKER_ENV, "1" if worker else "0")
    with Store.init(path, exist_ok=True) as store:
        return ingest(store, "wikidata-json", source, options=OPTIONS, **kwargs)


def _no_worker_left():
    return not [p for p in multiprocessing.active_children() if p.name == WORKER_NAME]


def test_worker_and_single_process_give_identical_stores(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_module, "GROUP_TRIPLES", 800)  # groups of one, two, then about three batches
    source, expected_nt, expected = dump
    one = _ingest(tmp_path / "one", source, monkeypatch, worker=False)
    two = _ingest(tmp_path / "two", source, monkeypatch, worker=True)
    assert one.status == two.status == "done"
    assert one.counts == two.counts
    assert one.counts["triples"] == expected.expected_triples
    assert one.counts["facts"] == expected.expected_facts
    a, b = _snapshot(tmp_path / "one"), _snapshot(tmp_path / "two")
    assert a == b
    # ... and both hold exactly what the generator says a truthy English load gives.
    import pyoxigraph as ox
    want = sorted(str(ox.Quad(t.subject, t.predicate, t.object))
                  for t in ox.parse(path=str(expected_nt), format=ox.RdfFormat.N_TRIPLES))
    assert a[0] == want
    assert _no_worker_left()


def _watch_the_final_pass(monkeypatch, query: str) -> list:
    """The first value of ``query``, read in the final catalog pass's transaction, each
    time the pass runs."""
    from kgstore._catalog import Catalog

    real, seen = Catalog.finalize, []

    def finalize(con, **kwargs):
        seen.append(con.execute(query).fetchone()[0])
        real(con, **kwargs)

    monkeypatch.setattr(Catalog, "finalize", staticmethod(finalize))
    return seen


def test_the_final_catalog_pass_runs_once_in_the_last_groups_transaction(dump, tmp_path, monkeypatch):
    """With a worker the final pass runs while Oxigraph loads the last group, inside that
    group's transaction: it sees the checkpoint before the last group's, and runs once."""
    monkeypatch.setattr(ingest_module, "GROUP_TRIPLES", 800)
    seen = _watch_the_final_pass(monkeypatch, "SELECT checkpoint_line FROM ingest_runs")
    summary = _ingest(tmp_path / "two", dump[0], monkeypatch, worker=True)
    assert summary.status == "done"
    final_line = _snapshot(tmp_path / "two")[1]["runs"][0][3]
    assert len(seen) == 1 and 0 < seen[0] < final_line


@contextlib.contextmanager
def _memory_limit_seen_beside(store):
    """A reader of DuckDB's memory_limit through another connection of this process to
    the store's catalog, which shares the database's settings."""
    other = duckdb.connect(str(store.catalog.path))
    try:
        yield lambda: other.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    finally:
        other.close()


def test_the_catalog_is_capped_while_held_and_the_final_pass_and_caller_get_the_default(dump, tmp_path,
                                                                                       monkeypatch):
    """While a worker parses, the held catalog's buffer pool is capped between commits;
    the final pass runs without the cap, and the setting, which is the database's, does not
    outlive the ingest for another connection of the same process."""
    monkeypatch.setattr(ingest_module, "GROUP_TRIPLES", 800)
    in_final = _watch_the_final_pass(monkeypatch, "SELECT current_setting('memory_limit')")
    monkeypatch.setenv(WORKER_ENV, "1")
    with Store.init(tmp_path / "s") as store, _memory_limit_seen_beside(store) as setting:
        default, between = setting(), []
        summary = ingest(store, "wikidata-json", dump[0], options=OPTIONS,
                         on_commit=lambda: between.append(setting()))
        after = setting()
    assert summary.status == "done"
    assert ingest_module.CATALOG_HOLD_MEMORY == "128MB" and default != "122.0 MiB"
    assert len(between) >= 3 and set(between[:-1]) == {"122.0 MiB"}  # 128 MB as DuckDB reads it back
    assert in_final == [default] and after == default

    # An ingest stopped between commits (here Ctrl-C) never reaches the final pass: the
    # hold's release gives the default back.
    with Store.init(tmp_path / "stopped") as store, _memory_limit_seen_beside(store) as setting:
        commits = []

        def stop_at_the_second_commit():
            commits.append(setting())
            if len(commits) == 2:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            ingest(store, "wikidata-json", dump[0], options=OPTIONS, on_commit=stop_at_the_second_commit)
        after_stop = setting()
    assert commits == ["122.0 MiB"] * 2 and after_stop == default


def test_truncated_gzip_fails_at_the_same_checkpoint(dump, tmp_path, monkeypatch):
    data = gzip.compress(dump[0].read_bytes())
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    for name, worker in (("one", False), ("two", True)):
        with pytest.raises(TruncatedInputError) as info:
            _ingest(tmp_path / name, cut, monkeypatch, worker=worker)
        assert "ends early" in str(info.value)
    a, b = _snapshot(tmp_path / "one"), _snapshot(tmp_path / "two")
    assert a == b
    assert a[1]["runs"][0][0] == "failed" and a[1]["runs"][0][3] > 0
    assert _no_worker_left()


def test_too_many_errors_stops_at_the_same_batch(dump, tmp_path, monkeypatch):
    lines = dump[0].read_text(encoding="utf-8").splitlines(keepends=True)
    for n in (30, 95, 96, 97, 150, 210):  # lines 31, 96, 97, 98, ...: line 98 passes the limit of 3
        lines[n] = '{"id": "Q1", "claims": [},\n'
    bad = tmp_path / "bad.json"
    bad.write_text("".join(lines), encoding="utf-8")
    for name, worker in (("one", False), ("two", True)):
        with pytest.raises(TooManyErrorsError):
            _ingest(tmp_path / name, bad, monkeypatch, worker=worker, max_errors=3)
    a, b = _snapshot(tmp_path / "one"), _snapshot(tmp_path / "two")
    assert a == b
    assert [r[1] for r in a[1]["rejected"]] == [31, 96, 97, 98]
    assert a[1]["runs"][0][3] == 100  # committed up to the end of the batch with the 4th bad line
    assert _no_worker_left()


def test_interrupt_then_resume_with_a_worker(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_module, "GROUP_TRIPLES", 800)
    source = dump[0]
    _ingest(tmp_path / "clean", source, monkeypatch, worker=False)

    calls = []

    def stop_after_two(progress):
        calls.append(progress)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _ingest(tmp_path / "resumed", source, monkeypatch, worker=True, progress=stop_after_two)
    assert _no_worker_left()
    runs = _snapshot(tmp_path / "resumed")[1]["runs"]
    assert runs[0][0] == "interrupted" and 0 < runs[0][3] < ENTITIES
    summary = _ingest(tmp_path / "resumed", source, monkeypatch, worker=True)
    assert summary.status == "done" and summary.resumed_from_line == runs[0][3]
    clean, resumed = _snapshot(tmp_path / "clean"), _snapshot(tmp_path / "resumed")
    assert resumed[0] == clean[0]
    assert {k: v for k, v in resumed[1].items() if k != "runs"} == {k: v for k, v in clean[1].items() if k != "runs"}


def test_an_interrupted_oxigraph_load_rolls_its_group_back_in_the_catalog(dump, tmp_path, monkeypatch):
    """A group's catalog rows are written while Oxigraph loads it; when the load does not
    end (here Ctrl-C on the third group's), that transaction rolls back: the catalog holds
    exactly the facts Oxigraph holds, and the resumed run gives the clean store."""
    monkeypatch.setattr(ingest_module, "GROUP_TRIPLES", 800)
    source = dump[0]
    _ingest(tmp_path / "clean", source, monkeypatch, worker=False)
    real, loads = Store.add_ntriples, []

    def interrupted_third(self, data):
        loads.append(len(data))
        if len(loads) == 3:
            raise KeyboardInterrupt
        real(self, data)

    monkeypatch.setattr(Store, "add_ntriples", interrupted_third)
    with pytest.raises(KeyboardInterrupt):
        _ingest(tmp_path / "resumed", source, monkeypatch, worker=True)
    monkeypatch.setattr(Store, "add_ntriples", real)
    assert len(loads) == 3 and _no_worker_left()
    with Store.open(tmp_path / "resumed", read_only=True) as store:
        in_oxigraph = next(iter(store.query(
            "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?p), STR(wdt:))) }")))["n"].value
        with store.catalog.connect() as con:
            in_catalog = con.execute("SELECT count(*) FROM statements").fetchone()[0]
            status, line = con.execute("SELECT status, checkpoint_line FROM ingest_runs").fetchone()
    assert status == "interrupted" and 0 < line < ENTITIES
    assert in_catalog == int(in_oxigraph) > 0
    summary = _ingest(tmp_path / "resumed", source, monkeypatch, worker=True)
    assert summary.status == "done" and summary.resumed_from_line == line
    clean, resumed = _snapshot(tmp_path / "clean"), _snapshot(tmp_path / "resumed")
    assert resumed[0] == clean[0]
    assert {k: v for k, v in resumed[1].items() if k != "runs"} == {k: v for k, v in clean[1].items() if k != "runs"}


def test_a_killed_worker_is_a_clear_error_and_the_run_resumes(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_module, "GROUP_TRIPLES", 500)
    source = dump[0]
    _ingest(tmp_path / "clean", source, monkeypatch, worker=False)

    def kill_worker(progress):
        for p in multiprocessing.active_children():
            if p.name == WORKER_NAME:
                os.kill(p.pid, signal.SIGKILL)

    with pytest.raises(IngestError, match="parsing worker process ended unexpectedly"):
        _ingest(tmp_path / "killed", source, monkeypatch, worker=True, progress=kill_worker)
    assert _no_worker_left()
    summary = _ingest(tmp_path / "killed", source, monkeypatch, worker=True)
    assert summary.status == "done" and summary.resumed_from_line > 0
    clean, killed = _snapshot(tmp_path / "clean"), _snapshot(tmp_path / "killed")
    assert killed[0] == clean[0]
    assert {k: v for k, v in killed[1].items() if k != "runs"} == {k: v for k, v in clean[1].items() if k != "runs"}


class _BrokenLoader:
    """Yields one good batch, then fails as a loader bug would."""

    name = "broken"

    def batches(self, path, options, start=None):
        from kgstore.records import Batch, Checkpoint, Triple
        yield Batch(checkpoint=Checkpoint(10, 1), triples=[Triple("http://x/a", "http://x/p", "http://x/b")])
        raise ValueError("a bug in the loader")


def test_a_loader_bug_in_the_worker_comes_back_as_itself(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_module, "loader_for", lambda fmt: _BrokenLoader())
    monkeypatch.setenv(WORKER_ENV, "1")
    source = tmp_path / "any.txt"
    source.write_text("x\n")
    with Store.init(tmp_path / "store") as store:
        with pytest.raises(ValueError, match="a bug in the loader") as info:
            ingest(store, "broken", source)
        assert any("parsing worker process" in note for note in getattr(info.value, "__notes__", []))
        assert store.triple_count() == 0  # the run stopped before its first commit
    assert _no_worker_left()


# -- a file in another format than the one named ---------------------------------------------------
@pytest.mark.parametrize("fmt, rel, guess", [
    ("freebase", "formats/wikidata_json/wdtk_sample-dump-20150815.json.gz", "wikidata-json"),
    ("wikidata-json", "formats/freebase_rdf/fb-rdf-10k-head.nt", "freebase"),
    ("freebase", "qa/metaqa/kb_partial.txt", "tsv"),
])
def test_a_file_in_another_format_stops_with_the_format_it_looks_like(tmp_path, shared_data, fmt, rel, guess):
    """The issue's `kgstore ingest STORE freebase some-wikidata.json.gz`: a clear error
    naming the format the file looks like, exit 2, and nothing committed."""
    from click.testing import CliRunner

    from kgstore.cli import main

    path = tmp_path / "s"
    Store.init(path).close()
    result = CliRunner().invoke(main, ["ingest", str(path), fmt, str(shared_data / rel)])
    assert result.exit_code == 2
    assert f"the {fmt} loader rejected all of the first" in result.output
    assert f"it looks like {guess}: try `kgstore ingest STORE {guess} " in result.output
    assert "Nothing was loaded." in result.output
    with Store.open(path, read_only=True) as store:
        stats = store.stats()
    assert (stats["triples"], stats["ingest_runs"], stats["rejected_lines"]) == (0, 0, 0)


@pytest.mark.parametrize("head, guess", [
    (['[', '{"type":"item","id":"Q1","claims":{}},'], "wikidata-json"),
    (['{"entities": {"Q42": {}}}'], "wikidata-json"),
    (['<http://www.wikidata.org/entity/Q42> <http://schema.org/name> "Douglas Adams"@en .'], "wikidata-rdf"),
    (['@prefix wd: <http://www.wikidata.org/entity/> .'], "wikidata-rdf"),
    (['<http://rdf.freebase.com/ns/m.0x> <http://rdf.freebase.com/ns/type.object.name> "x"@en .'], "freebase"),
    (['ns:m.0x\tns:type.object.name\t"x"@en\t.'], "freebase"),
    (["Kismet|directed_by|William Dieterle"], "tsv"),
    (["Kismet\tdirected_by\tWilliam Dieterle"], "tsv"),
    (["just some prose"], None),
    ([], None),
])
def test_guess_format(head, guess):
    from kgstore._sniff import guess_format

    assert guess_format(head) == guess


# In a fresh process each new thread that allocates gets an arena of its own (up to eight
# per core); with the cap, they share two. The heaps are counted from glibc's own
# malloc_info report.
_ARENA_PROBE = r"""
import ctypes, os, sys, tempfile, threading
from kgstore import limit_malloc_arenas
if sys.argv[1] == "cap":
    assert limit_malloc_arenas(2)
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
together = threading.Barrier(6)
def work():  # all six alive at once, so none inherits an exited thread's arena
    together.wait()
    blocks = [libc.malloc(65536) for _ in range(64)]
    together.wait()
    for b in blocks:
        libc.free(b)
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
path = os.path.join(tempfile.mkdtemp(), "info.xml")
f = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, f)
libc.fclose(f)
print(open(path).read().count("<heap nr="))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="glibc's malloc only")
def test_the_ingest_malloc_cap_makes_threads_share_two_arenas():
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}

    def heaps(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", _ARENA_PROBE, mode], env=env, capture_output=True,
                             text=True, check=True)
        return int(out.stdout.strip())

    assert heaps("free") >= 4
    assert heaps("cap") == 2


def test_a_users_malloc_arena_max_wins(monkeypatch):
    from kgstore import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert limit_malloc_arenas() is False

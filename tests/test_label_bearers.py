"""A name with many bearers: the lookup tier reads only the most popular ones, in one
index range, and a label file from before that is still read, then reloaded."""
from __future__ import annotations

import importlib.util
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import indexer._labels as labels_module
from indexer import LabelLookup, labels_path, refresh_labels
from kgstore import LoadOptions, Store, ingest

_GEN = Path(__file__).resolve().parents[1] / "bench" / "_wikidata_gen.py"
_spec = importlib.util.spec_from_file_location("_wikidata_gen", _GEN)
gen = sys.modules.get("_wikidata_gen") or importlib.util.module_from_spec(_spec)
if "_wikidata_gen" not in sys.modules:
    sys.modules["_wikidata_gen"] = gen
    _spec.loader.exec_module(gen)


@pytest.fixture(scope="module")
def generated_store(tmp_path_factory):
    """2,000 generated entities: their labels are a few common words, so names repeat."""
    base = tmp_path_factory.mktemp("bearers")
    dump = base / "dump.json"
    gen.generate_files(2000, str(dump), str(base / "expected.nt"), lean=True)
    with Store.init(base / "store") as store:
        ingest(store, "wikidata-json", str(dump), options=LoadOptions(languages=("en",)))
        refresh_labels(store)
    return base / "store"


def bearers(path: Path) -> tuple[str, list[tuple[int, str]]]:
    """The key with the most bearers, and its bearers as (popularity, iri)."""
    con = sqlite3.connect(path)
    try:
        by_key = defaultdict(list)
        for key, iri, popularity in con.execute(
                "SELECT n.key, n.iri, e.popularity FROM names n JOIN entities e ON e.iri = n.iri"):
            by_key[key].append((popularity, iri))
    finally:
        con.close()
    key = max(by_key, key=lambda k: len(by_key[k]))
    return key, by_key[key]


def test_a_lookup_reads_the_most_popular_bearers_only(generated_store, monkeypatch):
    with Store.open(generated_store, read_only=True) as store:
        path = labels_path(store)
        key, everyone = bearers(path)
        assert len(everyone) > 10
        lookup = LabelLookup.open(store)
        try:
            assert {r.iri for r in lookup.lookup([key])} == {iri for _, iri in everyone}
            monkeypatch.setattr(labels_module, "MAX_BEARERS", 5)
            rows = lookup.lookup([key, key.upper(), ""])
        finally:
            lookup.close()
    assert len(rows) == 5 and {r.key for r in rows} == {key}
    fifth = sorted((p for p, _ in everyone), reverse=True)[4]
    assert all(r.popularity >= fifth for r in rows)


def test_a_label_file_without_popular_names_is_read_and_then_reloaded(generated_store, tmp_path):
    import shutil
    copy = tmp_path / "store"
    shutil.copytree(generated_store, copy)
    with Store.open(copy) as store:
        path = labels_path(store)
        key, everyone = bearers(path)
        con = sqlite3.connect(path)  # the file as it was built before names carried popularity
        con.executescript("CREATE TABLE old AS SELECT key, name, iri, source FROM names; DROP TABLE names; "
                          "ALTER TABLE old RENAME TO names; CREATE INDEX names_by_key ON names (key);")
        con.close()
        lookup = LabelLookup.open(store)
        try:
            assert {r.iri for r in lookup.lookup([key])} == {iri for _, iri in everyone}
        finally:
            lookup.close()
        summary = refresh_labels(store)
        assert summary.rebuilt and not summary.skipped
        con = sqlite3.connect(path)
        try:
            assert "popularity" in {r[1] for r in con.execute("PRAGMA table_info(names)")}
        finally:
            con.close()

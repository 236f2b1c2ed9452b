"""The property test of `kgstore update` (issue 50): load a generated Wikidata dump, apply
a seeded feed of changes (claims added, removed, re-valued and re-ranked, qualifiers,
labels, descriptions and aliases edited, entities deleted and redirected), and the store
must equal a fresh load of the newer dump: its triples, catalog rows, property graph and
index entries, compared as sets; with truthy and with full statements.

CI runs a small dump (`SMALL`); the `slow` marker runs the issue's 5,000 entities
(`make bench` / `pytest -m slow`).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

import kgstore
from kgstore import LoadOptions, Store
from kgstore.graph import sync_graph
from generated_dumps import changes
from store_state import store_state


SMALL = 300
LARGE = 5000
INDEX_KINDS = ("entities", "relations")


def _load(path: Path, dump: Path, options: LoadOptions, *, index: bool) -> None:
    with Store.init(path) as store:
        assert kgstore.ingest(store, "wikidata-json", dump, options=options).status == "done"
        sync_graph(store)
        if index:
            from indexer import build_index

            build_index(store, kinds=INDEX_KINDS)


def _update(path: Path, feed: Path, *, index: bool) -> kgstore.UpdateSummary:
    """What `kgstore update` does: the store, then the graph and the index follow."""
    with Store.open(path) as store:
        summary = kgstore.update(store, "wikidata-json", feed)
        sync_graph(store)
        if index:
            from indexer import build_index

            embedded = build_index(store, kinds=INDEX_KINDS).embedded
            summary.counts["embedded"] = embedded
    return summary


def check_update_equals_fresh_load(tmp_path: Path, n: int, statements: str, *, seed: int, index: bool = True):
    started = time.monotonic()
    old = changes.dump_entities(n, seed=seed)
    newer = changes.mutate(old, seed=seed + 1, share=0.1, deleted=0.02, redirected=0.02)
    old_dump = changes.write_lines(old, tmp_path / "old.jsonl")
    new_dump = changes.write_lines(newer.entities, tmp_path / "new.jsonl")
    feed = changes.write_lines(newer.feed, tmp_path / "feed.jsonl")
    options = LoadOptions(statements=statements)

    _load(tmp_path / "updated", old_dump, options, index=index)
    summary = _update(tmp_path / "updated", feed, index=index)
    _load(tmp_path / "fresh", new_dump, options, index=index)

    updated, fresh = store_state(tmp_path / "updated", index=index), store_state(tmp_path / "fresh", index=index)
    seconds = time.monotonic() - started
    print(f"{n} entities, {statements}: {len(newer.changed)} changed, {len(newer.deleted)} deleted, "
          f"{len(newer.redirected)} redirected; {len(fresh.triples)} triples, {len(fresh.facts)} facts, "
          f"{len(fresh.index)} index entries; update counts {summary.counts}; {seconds:.1f} s")
    assert summary.counts["documents"] == len(newer.changed)
    assert summary.counts["deleted"] == len(newer.deleted)
    assert summary.counts["redirected"] == len(newer.redirected)
    assert updated.differences(fresh) == {}
    # The update changed something that the old store held (the test can fail).
    assert store_state(tmp_path / "fresh", index=False).triples != _old_triples(tmp_path, old_dump, options)
    return summary


def _old_triples(tmp_path: Path, dump: Path, options: LoadOptions) -> set:
    with Store.init(tmp_path / "old-only") as store:
        kgstore.ingest(store, "wikidata-json", dump, options=options)
    return store_state(tmp_path / "old-only", graph=False, index=False).triples


@pytest.mark.parametrize("statements", ["truthy", "full"])
def test_update_equals_fresh_load(tmp_path, statements):
    check_update_equals_fresh_load(tmp_path, SMALL, statements, seed=50)


@pytest.mark.slow
@pytest.mark.parametrize("statements", ["truthy", "full"])
def test_update_equals_fresh_load_5000(tmp_path, statements):
    check_update_equals_fresh_load(tmp_path, LARGE, statements, seed=5000)

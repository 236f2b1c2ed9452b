"""What an update costs (issue 50): `kgstore update` of 1% of a store's entities against
ingesting those same entity documents into an empty store, and how much the index embeds.

    .venv/bin/python bench/update.py                      # 100,000 entities, 1% changed
    .venv/bin/python bench/update.py --entities 20000 --index-entities 5000

* **store**: a generated dump of ``--entities`` (bench/_wikidata_gen.py, lean: 3 label
  languages, 2-6 claims) is loaded; a seeded 1% of its items change (bench/_wikidata_changes.py:
  labels, aliases, claims, qualifiers, ranks), plus a few deletions and redirects. The
  update (triples and catalog, what `kgstore update --no-graph --no-index` does) is timed
  against `ingest` of the same changed documents into an empty store; the ratio is the
  target (at most 2x).
* **graph**: the Ladybug sync after the update (it rebuilds its file, so it grows with
  the store, not the update).
* the update and the ingest run ``--repeats`` times, alternating, on copies of the
  store and on new empty stores: the medians are compared.
* **index**: on a smaller store (``--index-entities``, embedding the whole store first
  takes minutes a 10,000 texts), the same share changes and the incremental index
  update's count of embedded texts is set against the count of entries whose text changed.

Each figure comes with the 1-minute load average when it was measured (the machine may be
shared). Prints a table; ``--json`` also writes the figures.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
_spec = importlib.util.spec_from_file_location("_wikidata_changes", HERE / "_wikidata_changes.py")
changes = importlib.util.module_from_spec(_spec)
sys.modules["_wikidata_changes"] = changes
_spec.loader.exec_module(changes)

import kgstore  # noqa: E402
from kgstore import Store  # noqa: E402


def load() -> float:
    return os.getloadavg()[0]


def timed(fn):
    started, load_before = time.perf_counter(), load()
    value = fn()
    return value, time.perf_counter() - started, max(load_before, load())


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return sorted(runs)[len(runs) // 2]


def store_figures(root: Path, n: int, seed: int, repeats: int = 3) -> list[tuple[str, str, float]]:
    old = changes.dump_entities(n, seed=seed, lean=True)
    newer = changes.mutate(old, seed=seed + 1, share=0.01, deleted=0.0, redirected=0.0)
    dump = changes.write_lines(old, root / "old.jsonl")
    feed = changes.write_lines(newer.feed, root / "feed.jsonl")  # the changed documents only
    # Then a day's deletions and merges on top: 0.1% of the items each.
    gone = changes.mutate(newer.entities, seed=seed + 2, share=0.0, deleted=0.001, redirected=0.001)
    removals = changes.write_lines(gone.feed, root / "removals.jsonl")
    rows = []
    with Store.init(root / "store") as store:
        _, seconds, at = timed(lambda: kgstore.ingest(store, "wikidata-json", dump))
        rows.append((f"ingest the {n:,}-entity dump (setup)", f"{seconds:.1f} s", at))
        from kgstore.graph import sync_graph

        sync_graph(store)
    # Alternating runs on copies (the machine may be shared): the medians are compared.
    ingests, updates, merges = [], [], []
    for attempt in range(repeats):
        copy = root / f"store-{attempt}"
        shutil.copytree(root / "store", copy)
        with Store.init(root / f"empty-{attempt}") as store:
            ingests.append(timed(lambda: kgstore.ingest(store, "wikidata-json", feed))[1:])
        with Store.open(copy) as store:
            summary, *figure = timed(lambda: kgstore.update(store, "wikidata-json", feed))
            updates.append(tuple(figure))
            # The update leaves its log unmerged (kgstore._ingest._CatalogHold): the next
            # writer to close the catalog pays the merge. Timed here, a writer's open and close.
            merges.append(timed(lambda: _merge_log(store))[1:])
        if attempt < repeats - 1:
            shutil.rmtree(copy)
    (ingest_s, ingest_at), (update_s, update_at) = _median(ingests), _median(updates)
    merge_s, merge_at = _median(merges)
    # What any write to this store pays at its close, however small: one new document.
    one = root / "one.jsonl"
    one.write_text(json.dumps({"type": "item", "id": "Q999999999", "labels": {"en": {"language": "en",
                               "value": "a new item"}}, "claims": {}}) + "\n")
    _, one_s, one_at = timed(lambda: _ingest_and_close(copy, one))
    with Store.open(copy) as store:
        removed, removed_s, removed_at = timed(lambda: kgstore.update(store, "wikidata-json", removals))
        from kgstore.graph import sync_graph

        _, graph_s, graph_at = timed(lambda: sync_graph(store))
    c, r = summary.counts, removed.counts
    each = lambda runs: ", ".join(f"{t:.2f}" for t, _ in runs)  # noqa: E731
    rows += [
        (f"update: {c['documents']:,} changed documents (1% of the items; median of {each(updates)})",
         f"{update_s:.2f} s", update_at),
        (f"ingest the same {c['documents']:,} documents into an empty store (median of {each(ingests)})",
         f"{ingest_s:.2f} s", ingest_at),
        ("ratio update / ingest (target <= 2)", f"{update_s / ingest_s:.2f}", max(update_at, ingest_at)),
        (f"the log merge the update leaves to the next writer (median of {each(merges)})", f"{merge_s:.2f} s",
         merge_at),
        ("ratio (update + that merge) / ingest: with no other update to share the merge",
         f"{(update_s + merge_s) / ingest_s:.2f}", max(update_at, ingest_at, merge_at)),
        (f"ingest of one new document into the {n:,}-entity store, with its close (any write's merge)",
         f"{one_s:.2f} s", one_at),
        (f"update: {r.get('deleted', 0)} deletions and {r.get('redirected', 0)} redirects", f"{removed_s:.2f} s",
         removed_at),
        (f"graph sync after the updates (Ladybug rebuilds its {n:,}-entity file)", f"{graph_s:.1f} s", graph_at),
    ]
    return rows


def index_figures(root: Path, n: int, seed: int) -> list[tuple[str, str, float]]:
    from indexer import build_index

    old = changes.dump_entities(n, seed=seed, lean=True)
    newer = changes.mutate(old, seed=seed + 1, share=0.01, deleted=0.001, redirected=0.001)
    dump = changes.write_lines(old, root / "index-old.jsonl")
    feed = changes.write_lines(newer.feed, root / "index-feed.jsonl")
    kinds = ("entities", "relations")
    with Store.init(root / "indexed") as store:
        kgstore.ingest(store, "wikidata-json", dump)
        first, first_s, first_at = timed(lambda: build_index(store, kinds=kinds))
        before = _texts(store)
        kgstore.update(store, "wikidata-json", feed)
        again, again_s, again_at = timed(lambda: build_index(store, kinds=kinds))
        after = _texts(store)
    changed = len(after - before)
    return [
        (f"index a {n:,}-entity store ({', '.join(kinds)}): texts embedded", f"{first.embedded:,} in {first_s:.0f} s",
         first_at),
        ("index after the 1% update: entries whose text is new", f"{changed:,}", again_at),
        ("index after the 1% update: texts embedded", f"{again.embedded:,} in {again_s:.1f} s", again_at),
        ("index after the 1% update: stale entries marked deleted", f"{again.deleted:,}", again_at),
    ]


def _ingest_and_close(path: Path, file: Path) -> None:
    with Store.open(path) as store:
        kgstore.ingest(store, "wikidata-json", file)


def _merge_log(store) -> None:
    with store.catalog.connect() as con:  # a writer's connection: its close merges the log
        con.execute("SELECT 1")


def _texts(store) -> set:
    with store.catalog.connect() as con:
        return set(con.execute("SELECT kind, text FROM index_items WHERE NOT deleted").fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--index-entities", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3, help="alternating update and ingest runs (medians)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kgstore-bench-update-"))
    try:
        rows = store_figures(root, args.entities, args.seed, args.repeats)
        if args.index_entities:
            rows += index_figures(root, args.index_entities, args.seed)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'value':>18}  load avg")
    for name, value, at in rows:
        print(f"{name:<{width}}  {value:>18}  {at:.2f}")
    if args.json:
        args.json.write_text(json.dumps([{"figure": n, "value": v, "load": a} for n, v, a in rows], indent=1))


if __name__ == "__main__":
    main()

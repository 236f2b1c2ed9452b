"""Benchmark: mirror a store into the embedded property graph (Ladybug).

Loads ../shared/data/kg/freebase_movies_30k/30kmoviedata.nq.gz (471k quads) into a fresh
store, then, in the same run:

* times ``sync_graph``: the DuckDB export (Arrow tables in memory at this size) in a thread,
  overlapped with the schema and Ladybug's COPY of each row set as it is ready, then the
  swap-in; and
* times Ladybug's raw work on the same rows exported beforehand, as Parquet files and as
  in-memory Arrow tables: a fresh database, the same schema, one ``COPY`` per row set,
  nothing else;

and prints relationships/s and the ratios (raw seconds / sync seconds; target >= 0.8).
Each side runs ``--repeat`` times, alternating, and the medians count, because the machine
is shared. Then p50 latency of a 1-hop and a 2-hop query by entity id, through
``graph.query`` and through a raw Ladybug connection on the same database.

    python bench/graph.py [--repeat 3] [--store DIR]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "kg" / "freebase_movies_30k" / "30kmoviedata.nq.gz"

ONE_HOP = "MATCH (a:Entity {id: $id})-[r]->(b) RETURN r.label, b.label"
TWO_HOP = "MATCH (a:Entity {id: $id})-[:REL]->(m:Entity)-[r:REL]->(b:Entity) RETURN DISTINCT r.label, b.label"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, default=50, help="entities to time each query on")
    ap.add_argument("--store", help="reuse (or create) this store directory instead of a temporary one")
    args = ap.parse_args()
    if not DATA.exists():
        print(f"missing {DATA}", file=sys.stderr)
        return 2

    import ladybug as lb

    import kgstore
    from kgstore.graph import export_parquet, open_graph, sync_graph
    from kgstore.graph._export import export_arrow
    from kgstore.graph._export import TABLES
    from kgstore.graph._ladybug import SCHEMA, copy_statement

    with tempfile.TemporaryDirectory(prefix="kgstore-bench-graph-") as tmp:
        store_dir = Path(args.store) if args.store else Path(tmp) / "store"
        store = kgstore.Store.init(store_dir, exist_ok=True)
        t0 = time.perf_counter()
        summary = kgstore.ingest(store, "freebase", str(DATA))
        print(f"ingest: {summary.status}, {summary.counts.get('triples', 0):,} triples in "
              f"{time.perf_counter() - t0:.1f} s")

        files = export_parquet(store, Path(tmp) / "parquet")
        total_rel = files.rows("REL") + files.rows("HAS_VALUE")
        print("rows: " + ", ".join(f"{t} {files.rows(t):,}" for t in TABLES))

        tables = export_arrow(store)

        def raw_copy(run: int, source) -> float:
            path = Path(tmp) / f"raw-{run}.db"
            started = time.perf_counter()
            db = lb.Database(str(path))
            conn = lb.Connection(db)
            for ddl in SCHEMA:
                conn.execute(ddl)
            for item in source.files:
                if item.rows and item.table is not None:
                    conn.execute(f"COPY {item.row_set.table} FROM $rows", {"rows": item.table})
                elif item.rows:
                    conn.execute(copy_statement(item.row_set.table, item.path))
            conn.close()
            db.close()
            seconds = time.perf_counter() - started
            path.unlink()
            return seconds

        sync_times, parquet_times, arrow_times = [], [], []
        report = None
        for run in range(args.repeat):
            report = sync_graph(store, backend="ladybug")
            sync_times.append(report.seconds)
            parquet_times.append(raw_copy(run, files))
            arrow_times.append(raw_copy(run, tables))
            print(f"  run {run + 1}: sync {sync_times[-1]:.2f} s (export {report.export_seconds:.2f} s "
                  f"overlapping load {report.load_seconds:.2f} s), raw COPY from Parquet "
                  f"{parquet_times[-1]:.2f} s, from Arrow {arrow_times[-1]:.2f} s")
        sync_s = statistics.median(sync_times)
        print(f"sync:                   {sync_s:.2f} s  {total_rel / sync_s:,.0f} relationships/s "
              f"({report.counts.edges:,} edges + {report.counts.values:,} values; "
              f"{report.counts.nodes:,} nodes)")
        for name, times in (("Parquet", parquet_times), ("Arrow", arrow_times)):
            raw_s = statistics.median(times)
            print(f"raw COPY from {name + ':':8} {raw_s:.2f} s  {total_rel / raw_s:,.0f} relationships/s  "
                  f"ratio raw/sync {raw_s / sync_s:.2f}  (target >= 0.8)")

        # Latency: entities with facts, chosen at random but reproducibly.
        with store.catalog.connect() as con:
            ids = [r[0] for r in con.execute(
                "SELECT id FROM entities WHERE id IS NOT NULL AND NOT is_mediator AND popularity > 3 "
                "ORDER BY hash(iri) LIMIT 2000").fetchall()]
        random.Random(0).shuffle(ids)
        ids = ids[:args.queries]
        with open_graph(store, "ladybug") as graph:
            ours = {name: _latencies(lambda q, p: graph.query(q, p), q, ids) for name, q in
                    (("1-hop", ONE_HOP), ("2-hop", TWO_HOP))}
        db = lb.Database(str(store_dir / "graph" / "ladybug.db"), read_only=True)
        conn = lb.Connection(db)
        raw = {name: _latencies(lambda q, p: conn.execute(q, p).get_all(), q, ids) for name, q in
               (("1-hop", ONE_HOP), ("2-hop", TWO_HOP))}
        conn.close()
        db.close()
        for name in ours:
            p50, rows = ours[name]
            raw_p50, _ = raw[name]
            print(f"{name} p50: {p50 * 1000:.1f} ms through graph.query, {raw_p50 * 1000:.1f} ms raw "
                  f"(ratio {raw_p50 / p50:.2f}); {rows / len(ids):.1f} rows/query on {len(ids)} entities")
        store.close()
    return 0


def _latencies(run, query: str, ids: list[str]) -> tuple[float, int]:
    run(query, {"id": ids[0]})  # warm-up
    times, rows = [], 0
    for id_ in ids:
        started = time.perf_counter()
        rows += len(run(query, {"id": id_}))
        times.append(time.perf_counter() - started)
    return statistics.median(times), rows


if __name__ == "__main__":
    sys.exit(main())

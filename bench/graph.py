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

``--backend bolt`` mirrors the same store into a live Bolt server instead (ArcadeDB's, from
the ``test`` extra, started in a child process as the tests do; or NEO4J_URI's) and prints,
in the same run: the Neo4j backend's full sync (relationships/s, and its time against the
embedded backend's sync of the same store), an incremental sync with nothing to send,
1-hop/2-hop p50 over Bolt (through ``graph.query`` and through the raw driver), and the
batch-size curve: slices of the REL rows deleted and sent again with the raw driver, one
batch size per slice, relationships/s for each.

    python bench/graph.py [--repeat 3] [--store DIR]
    python bench/graph.py --backend bolt [--batch-sizes 250,500,...] [--curve-rows 10000]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
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
    ap.add_argument("--backend", choices=["ladybug", "bolt"], default="ladybug")
    ap.add_argument("--batch-size", type=int, default=None, help="bolt: rows per statement for the sync")
    ap.add_argument("--batch-sizes", default="250,500,1000,2000,5000,10000,20000",
                    help="bolt: the batch sizes of the curve ('' to skip it)")
    ap.add_argument("--curve-rows", type=int, default=10000, help="bolt: REL rows per batch size in the curve")
    args = ap.parse_args()
    if not DATA.exists():
        print(f"missing {DATA}", file=sys.stderr)
        return 2
    if args.backend == "bolt":
        return bolt_main(args)

    import ladybug as lb

    from kgstore.graph import export_parquet, open_graph, sync_graph
    from kgstore.graph._export import export_arrow
    from kgstore.graph._export import TABLES
    from kgstore.graph._ladybug import SCHEMA, copy_statement

    with tempfile.TemporaryDirectory(prefix="kgstore-bench-graph-") as tmp:
        store_dir, store = _ingested_store(args, tmp)

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

        ids = _sample_ids(store, args.queries)
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
        _ladybug_delta_probe(lb, store, store_dir, Path(tmp), files, sync_s, total_rel)
        store.close()
    return 0


def _ladybug_delta_probe(lb, store, store_dir: Path, tmp: Path, files, sync_s: float, total_rel: int,
                         n: int = 2000) -> None:
    """Would an incremental Ladybug sync pay? What it would cost at the least: the export and
    diff (as the Neo4j backend's), a copy of the file (readers must keep the old one), and
    applying the change: ``n`` REL rows deleted (UNWIND ... MATCH ... DELETE) and copied
    back (COPY into a non-empty table)."""
    import pyarrow.parquet as pq

    from kgstore.graph._delta import compute_delta

    snapshot = tmp / "probe-rows"
    compute_delta(store, snapshot).commit()
    diff = compute_delta(store, snapshot)  # nothing changed: the fixed cost of any incremental sync
    diff.discard()
    started = time.perf_counter()
    copy = tmp / "probe.db"
    shutil.copyfile(store_dir / "graph" / "ladybug.db", copy)
    copy_s = time.perf_counter() - started
    rows = pq.read_table(next(f.path for f in files.files if f.row_set.name == "REL")).slice(0, n)
    db = lb.Database(str(copy))
    conn = lb.Connection(db)
    started = time.perf_counter()
    conn.execute("UNWIND $rows AS row MATCH (a:Entity {iri: row.`from`})-[r:REL {iri: row.iri}]->"
                 "(b:Entity {iri: row.`to`}) DELETE r", {"rows": rows.to_pylist()})
    delete_s = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute("COPY REL FROM $rows", {"rows": rows})
    insert_s = time.perf_counter() - started
    conn.close()
    db.close()
    print(f"incremental Ladybug, what it would cost: export+diff {diff.seconds:.2f} s, file copy {copy_s:.2f} s; "
          f"{n:,} REL rows deleted at {n / delete_s:,.0f}/s and copied into the non-empty table at "
          f"{n / insert_s:,.0f}/s, against {total_rel / sync_s:,.0f} relationships/s for the whole rebuild "
          f"({sync_s:.2f} s; load average {os.getloadavg()[0]:.2f})")


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _ingested_store(args, tmp: str):
    """The store of DATA (``--store``, or a fresh one in ``tmp``): ingested now, or found done."""
    import kgstore

    store_dir = Path(args.store) if args.store else Path(tmp) / "store"
    store = kgstore.Store.init(store_dir, exist_ok=True)
    t0 = time.perf_counter()
    summary = kgstore.ingest(store, "freebase", str(DATA))
    print(f"ingest: {summary.status}, {summary.counts.get('triples', 0):,} triples in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    return store_dir, store


def _sample_ids(store, n: int) -> list[str]:
    """Entities with facts, chosen at random but reproducibly."""
    with store.catalog.connect() as con:
        ids = [r[0] for r in con.execute(
            "SELECT id FROM entities WHERE id IS NOT NULL AND NOT is_mediator AND popularity > 3 "
            "ORDER BY hash(iri) LIMIT 2000").fetchall()]
    random.Random(0).shuffle(ids)
    return ids[:n]


def bolt_main(args) -> int:
    """The Neo4j backend over Bolt, against the embedded backend in the same run."""
    import duckdb

    from kgstore.config import GraphConfig
    from kgstore.graph import sync_graph
    from kgstore.graph._neo4j import Neo4jGraph, delete_statement, relationship_upsert_statement

    sys.path.insert(0, str(REPO / "tests"))
    from bolt_server import BoltServer

    print(f"start: {_load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kgstore-bench-bolt-") as tmp:
        store_dir, store = _ingested_store(args, tmp)

        lady_times = []
        for _ in range(args.repeat):
            lady = sync_graph(store, backend="ladybug")
            lady_times.append(lady.seconds)
        lady_s = statistics.median(lady_times)
        total_rel = lady.counts.relationships
        print(f"embedded (ladybug) sync: {lady_s:.2f} s (median of {len(lady_times)}), "
              f"{total_rel / lady_s:,.0f} relationships/s; {lady.counts}; {_load()}", flush=True)

        uri = os.environ.get("NEO4J_URI")
        if uri:
            server = BoltServer(uri, os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""),
                                os.environ.get("NEO4J_DATABASE", "neo4j"))
        else:
            server = BoltServer.start(Path(tmp) / "bolt", heap="2g")
            print(f"Bolt server (ArcadeDB) up in {server.startup_seconds:.1f} s at {server.uri}", flush=True)
        os.environ["KGSTORE_BENCH_BOLT_PASSWORD"] = server.password
        config = GraphConfig(backend="neo4j", neo4j_uri=server.uri, neo4j_user=server.user,
                             neo4j_password_env="KGSTORE_BENCH_BOLT_PASSWORD", neo4j_database=server.database)
        with server:
            graph = Neo4jGraph(store.path, config, batch_size=args.batch_size)
            full = graph.sync(store, full=True)
            print(f"bolt full sync: {full.seconds:.1f} s, {total_rel / full.seconds:,.0f} relationships/s "
                  f"(batch {graph.batch_size}); export+diff {full.export_seconds:.1f} s, server "
                  f"{full.load_seconds:.1f} s; stages " + ", ".join(f"{k} {v:.1f} s" for k, v in full.stages.items()),
                  flush=True)
            print(f"ratio bolt sync / embedded sync (time): {full.seconds / lady_s:.1f}x slower; "
                  f"relationships/s ratio {lady_s / full.seconds:.3f}; {_load()}", flush=True)
            assert graph.counts() == full.counts == lady.counts, (graph.counts(), full.counts)
            noop = graph.sync(store)
            print(f"bolt incremental sync with nothing to send: {noop.seconds:.1f} s "
                  f"({noop.mode}, {noop.upserted} sent, {noop.deleted} deleted; "
                  f"export+diff {noop.export_seconds:.1f} s)", flush=True)

            import neo4j

            ids = _sample_ids(store, args.queries)
            driver = neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password))

            def raw(q, p):
                with driver.session(database=server.database) as session:
                    return session.execute_read(lambda tx: list(tx.run(q, p)))

            for name, q in (("1-hop", ONE_HOP), ("2-hop", TWO_HOP)):
                ours, rows = _latencies(lambda q_, p: graph.query(q_, p), q, ids)
                raw_p50, _ = _latencies(raw, q, ids)
                print(f"{name} p50 over Bolt: {ours * 1000:.1f} ms through graph.query, {raw_p50 * 1000:.1f} ms raw "
                      f"driver (ratio {raw_p50 / ours:.2f}); {rows / len(ids):.1f} rows/query on {len(ids)} entities",
                      flush=True)

            sizes = [int(x) for x in args.batch_sizes.split(",") if x.strip()]
            if sizes:
                print(f"batch-size curve ({args.curve_rows:,} REL rows per size, one transaction per batch, "
                      f"rows deleted then sent again):", flush=True)
                with duckdb.connect() as con:
                    rel_rows = con.sql(f"SELECT * FROM read_parquet('{graph.snapshot / 'REL.parquet'}') "
                                       f"ORDER BY hash(\"from\", iri, \"to\") "
                                       f"LIMIT {args.curve_rows * len(sizes)}").to_arrow_table().to_pylist()
                upsert, delete = relationship_upsert_statement("REL"), delete_statement("REL")
                with driver.session(database=server.database) as session:
                    for i, size in enumerate(sizes):
                        part = rel_rows[i * args.curve_rows:(i + 1) * args.curve_rows]
                        for j in range(0, len(part), 5000):
                            session.execute_write(lambda tx, b=part[j:j + 5000]: tx.run(delete, rows=b).consume())
                        started = time.perf_counter()
                        for j in range(0, len(part), size):
                            session.execute_write(lambda tx, b=part[j:j + size]: tx.run(
                                upsert, rows=b, sync="curve").consume())
                        took = time.perf_counter() - started
                        print(f"  batch {size:>6,}: {len(part) / took:,.0f} relationships/s ({_load()})", flush=True)
            driver.close()
            graph.close()
        store.close()
    print(f"end: {_load()}")
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

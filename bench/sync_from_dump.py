"""Benchmark: ``kgstore sync --from-dump`` against ``kgstore ingest`` of the same file, in
one run (issue 43, section 1). Both do the same parsing and catalog work; ingest also
writes the triples to Oxigraph, sync --from-dump asks the endpoint a sample of subjects
and its triple count instead.

1. ``kgstore ingest STORE FORMAT FILE`` into a fresh local store (timed: wall and the
   child's CPU).
2. The store's triples (with the tsv loader's names as rdfs:label / skos:altLabel
   triples, so that the engine holds what the dump holds) bulk-loaded into ``oxigraph
   serve-read-only`` (tests/sparql_servers.py, stopped by pid; not timed).
3. ``kgstore init --endpoint`` + ``kgstore sync --from-dump FILE`` (timed the same way).

Printed: each time, the ratio sync ÷ ingest (< 1: faster), and the load average before
and after (the machine is shared). ``--rounds`` alternates the two.

    python bench/sync_from_dump.py /work/shared/data/qa/metaqa/kb_partial.txt --format tsv
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
GRAPH = "http://kgstore.bench/dump"


def _timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the child (and its worker), and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}... failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _engine_data(store: Path, out: Path) -> Path:
    import pyoxigraph as ox

    from kgstore import Store
    from metaqa_slice import slice_ntriples

    slice_ntriples(store, out)  # triples + labels
    with Store.open(store, read_only=True) as st, st.catalog.connect() as con:
        aliases = con.execute("SELECT iri, unnest(aliases) FROM entities WHERE len(aliases) > 0").fetchall()
    alt = ox.NamedNode("http://www.w3.org/2004/02/skos/core#altLabel")
    with open(out, "ab") as f:
        f.write(ox.serialize([ox.Triple(ox.NamedNode(i), alt, ox.Literal(t)) for i, t in aliases],
                             format=ox.RdfFormat.N_TRIPLES))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", type=Path)
    ap.add_argument("--format", default="tsv")
    ap.add_argument("--rounds", type=int, default=1, help="ingest and sync --from-dump, alternating")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "sync_from_dump.json")
    args = ap.parse_args()
    from sparql_servers import OxigraphServer

    kgstore_cli = str(Path(sys.executable).with_name("kgstore"))
    load_start = os.getloadavg()
    rows = {"ingest": [], "sync_from_dump": []}
    with tempfile.TemporaryDirectory(prefix="kgstore-bench-dump-") as tmp:
        base = Path(tmp)
        server = None
        try:
            for n in range(args.rounds):
                local = base / f"local{n}"
                subprocess.run([kgstore_cli, "init", str(local)], check=True, capture_output=True)
                wall, cpu, _ = _timed([kgstore_cli, "ingest", str(local), args.format, str(args.dump),
                                       "--format", "json"])
                rows["ingest"].append((wall, cpu))
                print(f"ingest:               {wall:7.2f} s wall, {cpu:7.2f} s CPU", flush=True)
                if server is None:
                    data = _engine_data(local, base / "engine.nt")
                    server = OxigraphServer.create(base / "engine", [data], GRAPH)
                over = base / f"over{n}"
                subprocess.run([kgstore_cli, "init", str(over), "--endpoint", server.url, "--graph", GRAPH],
                               check=True, capture_output=True)
                wall, cpu, out = _timed([kgstore_cli, "sync", str(over), "--from-dump", str(args.dump),
                                         "--dump-format", args.format, "--format", "json"])
                rows["sync_from_dump"].append((wall, cpu))
                summary = json.loads(out)
                print(f"sync --from-dump:     {wall:7.2f} s wall, {cpu:7.2f} s CPU "
                      f"(sampled subjects found: {summary['sampled_subjects_found']})", flush=True)
        finally:
            if server is not None:
                server.stop()
    load_end = os.getloadavg()
    best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in rows.items()}
    ratio_wall = best["sync_from_dump"][0] / best["ingest"][0]
    ratio_cpu = best["sync_from_dump"][1] / best["ingest"][1]
    print(f"sync --from-dump ÷ ingest: {ratio_wall:.2f} wall, {ratio_cpu:.2f} CPU "
          f"(best of {args.rounds}); load average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"dump": str(args.dump), "format": args.format, "rounds": rows,
                                    "ratio_wall": ratio_wall, "ratio_cpu": ratio_cpu,
                                    "load_start": load_start, "load_end": load_end}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

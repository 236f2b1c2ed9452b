"""Benchmark: kgstore over a SPARQL endpoint (Oxigraph server, Virtuoso 7) against the local
store, on loopback only.

1. A Wikidata-shaped JSON dump of ``--entities`` entities (bench/_wikidata_gen.py) is
   ingested into a local store; its triples, dumped as N-Triples, are bulk-loaded into
   ``oxigraph serve-read-only`` (``oxigraph load``) and into Virtuoso (``ld_dir`` +
   ``rdf_loader_run``), both started by tests/sparql_servers.py and stopped by pid.
2. ``kgstore init --endpoint`` + ``kgstore sync`` against each engine: subjects/s (the
   catalog's entities come from subjects), the rate of the first and the last tenth of the
   pages (keyset paging should keep them level), and the time the rate gives for
   Wikidata's ~110M entities. Against the engine's raw export, measured just before and
   just after the sync (bench/_remote_raw.py: the whole graph by its fastest plain request,
   curl to /dev/null, the faster of the two runs kept), it prints ``sync ÷ raw export``,
   with the CPU per subject of kgstore and of the engine for each. Virtuoso runs with its
   result cap lifted by default: with a cap, no plain request exports the graph.
3. p50/p99 of the same 1-hop lookups and 2-hop queries through ``Store.query`` (rows
   read to the end) on the local store and on each endpoint store: ``--rounds`` rounds in
   alternating backend order (the machine is shared), same subjects for each.
4. The catalog counts after sync, and whether every query gave the same rows everywhere.
5. ``ask`` p50 on each backend (bench/_remote_ask.py): pgmr on ``--ask-questions`` MetaQA
   1-hop dev questions over a MetaQA slice in each backend, through a warm LLM cache, so
   the times measure the store side; with the answers' agreement.

The load average is printed at start and end; results go to bench/out/remote.json.

    python bench/remote.py --entities 20000
    python bench/remote.py --kb /work/shared/data/qa/metaqa/kb_partial.txt --sync-only
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

GRAPH = "http://kgstore.bench/graph"
ONE_HOP = "SELECT ?p ?o WHERE {{ <{s}> ?p ?o }}"
TWO_HOP = "SELECT ?p ?x ?q ?y WHERE {{ <{s}> ?p ?x . ?x ?q ?y FILTER(isIRI(?x)) }}"
WIKIDATA_ENTITIES = 110_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=20_000)
    ap.add_argument("--lookups", type=int, default=200, help="subjects per round for each query shape")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default="oxigraph,virtuoso")
    ap.add_argument("--ask-questions", type=int, default=10, help="MetaQA questions for the ask p50 (0: skip it)")
    ap.add_argument("--ask-rounds", type=int, default=3)
    ap.add_argument("--ask-cache", help="an LLM cache (JSONL) to start the ask part from, e.g. the one "
                                        "tests/test_endpoint_ask.py filled (a copy is used)")
    ap.add_argument("--kb", help="a MetaQA-style KB (subject|relation|object lines) to sync instead of the "
                                 "generated Wikidata-shaped dump, e.g. /work/shared/data/qa/metaqa/kb_partial.txt")
    ap.add_argument("--virtuoso-max-rows", type=int, default=100_000_000,
                    help="Virtuoso's ResultSetMaxRows (the default lifts the cap, and sync streams as from "
                         "Oxigraph server; 10000 is Debian's default: sync then pages by subjects, and no "
                         "sync ÷ raw export is printed)")
    ap.add_argument("--raw-rounds", type=int, default=1, help="raw exports per candidate request each time")
    ap.add_argument("--sync-rounds", type=int, default=3, help="syncs per engine, each after a raw export (one "
                                                               "more raw export after the last): medians reported")
    ap.add_argument("--readers", type=int, help="requests in flight in a streamed sync (kgstore._sync.READERS; "
                                                "a lever to measure)")
    ap.add_argument("--read-as", choices=["probed", "xml"], default="probed",
                    help="xml: sync reads SPARQL XML results parsed by pyoxigraph, as before issue 43 (a lever "
                         "to measure); probed: what init found fastest and faithful")
    ap.add_argument("--sync-only", action="store_true", help="stop after the syncs (no lookups, no ask)")
    ap.add_argument("--work", help="working directory (default: a temporary one, removed at the end)")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "remote.json"))
    args = ap.parse_args()

    from click.testing import CliRunner
    from kgstore import Store
    from kgstore.cli import main as cli
    from sparql_servers import OxigraphServer, VirtuosoServer

    work = Path(args.work or tempfile.mkdtemp(prefix="kgstore-remote-"))
    work.mkdir(parents=True, exist_ok=True)
    report: dict = {"entities": args.entities, "load_start": os.getloadavg()}
    print(f"load average at start: {report['load_start']}")
    servers = {}
    try:
        t = time.monotonic()
        local, nt = _data(work, args)
        # what the engines hold (a tsv KB's names are triples there, not in the local store):
        # the subjects are what a sync that cannot count them (an unsorted stream) is measured by
        report["subjects"], report["triples"] = _subjects_and_triples(nt)
        report["data"] = args.kb or f"generated Wikidata-shaped dump of {args.entities:,} entities"
        print(f"{report['data']}: {report['subjects']:,} subjects, {report['triples']:,} triples, "
              f"ready in {time.monotonic() - t:.1f} s")
        report["commit"] = _commit()
        print(f"kgstore at commit {report['commit']}")

        stores = {"local": local}
        for name in args.engines.split(","):
            t = time.monotonic()
            if name == "oxigraph":
                servers[name] = OxigraphServer.create(work / name, [nt], GRAPH)
            else:
                servers[name] = VirtuosoServer.create(work / name, [nt], GRAPH, max_rows=args.virtuoso_max_rows)
            report[f"{name}_start_and_load_s"] = round(time.monotonic() - t, 2)
            path = work / f"over_{name}"
            result = CliRunner().invoke(cli, ["init", str(path), "--endpoint", servers[name].url, "--graph", GRAPH])
            assert result.exit_code == 0, result.output
            print(result.output.strip())
            _levers(path, args)
            path = _sync_rounds(name, servers[name], path, report, args)
            stores[name] = path
            s = report[f"{name}_sync"]
            print(f"{name}: started and loaded in {report[f'{name}_start_and_load_s']} s; sync {s['subjects']:,} "
                  f"subjects in {s['seconds']} s = {s['subjects_per_s']:,} subjects/s (first tenth of pages "
                  f"{s['first_tenth_per_s']:,}/s, last tenth {s['last_tenth_per_s']:,}/s); 110M entities: "
                  f"{s['wikidata_hours']} h; CPU: client {s['client_cpu_s']} s + server {s['server_cpu_s']} s = "
                  f"{s['subjects_per_cpu_s']:,} subjects per CPU second")
            if f"{name}_raw_export" in report:
                r = report[f"{name}_raw_export"]
                print(f"{name}: sync ÷ raw export = {r['sync_over_raw']} (medians of {args.sync_rounds} rounds: sync "
                      f"{s['seconds']} s {report[f'{name}_sync_rounds']}, raw export {r['seconds']} s by "
                      f"{r['request']} {r['rounds']}); per subject: kgstore {s['client_cpu_ms_per_subject']} ms + "
                      f"engine {s['server_cpu_ms_per_subject']} ms of CPU in sync, engine "
                      f"{r['engine_cpu_ms_per_subject']} ms in the raw export; load {os.getloadavg()[0]:.2f}")

        report["virtuoso_max_rows"] = args.virtuoso_max_rows
        report["levers"] = {"readers": args.readers, "read_as": args.read_as}
        if not args.sync_only:
            _queries(report, stores, work, args)
    finally:
        for server in servers.values():
            server.stop()
        report["load_end"] = os.getloadavg()
        print(f"load average at end: {report['load_end']}")
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return _write(report, args)


def _levers(path: Path, args) -> None:
    """--readers and --read-as, set on the store's config and kgstore's module for this run."""
    if args.readers:
        import kgstore._sync

        kgstore._sync.READERS = args.readers
    if args.read_as == "xml":
        from kgstore.config import StoreConfig

        config = StoreConfig.load(path)
        config.endpoint_capabilities.results_format = "xml"
        config.endpoint_capabilities.construct_ntriples = False
        config.save(path)


def _data(work: Path, args) -> tuple[Path, Path]:
    """The local store and its triples as N-Triples (what the engines load)."""
    import pyoxigraph as ox

    import kgstore
    from kgstore import Store

    local = work / "local"
    nt = work / "data" / "store.nt"
    nt.parent.mkdir(parents=True, exist_ok=True)
    if args.kb:
        from metaqa_slice import slice_ntriples

        with Store.init(local) as store:
            kgstore.ingest(store, "tsv", args.kb)
        return local, slice_ntriples(local, nt)  # with the names, which the tsv loader keeps in the catalog only
    from _wikidata_gen import generate_files

    generate_files(args.entities, str(work / "dump.json"), str(work / "expected.nt"))
    with Store.init(local) as store:
        kgstore.ingest(store, "wikidata-json", work / "dump.json")
        store.rdf.dump(output=str(nt), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    return local, nt


def _sync_rounds(name: str, server, template: Path, report: dict, args) -> Path:
    """``--sync-rounds`` rounds of a raw export (every candidate request, the fastest kept)
    and a sync into a fresh copy of the initialised store ``template``, and a last raw
    export; the round with the median sync is the one reported, against the median raw
    export. Returns the last synced store."""
    from _remote_raw import raw_export

    capped = name == "virtuoso" and args.virtuoso_max_rows <= report["triples"]
    pid, syncs, raws = server.process.pid, [], []
    for n in range(args.sync_rounds):
        path = template.with_name(f"{template.name}_{n}")
        shutil.copytree(template, path)
        if not capped:
            raws.append(raw_export(name, server.url, GRAPH, pid, rounds=args.raw_rounds))
        syncs.append(_sync(path, pid, report["subjects"], report["triples"]))
    if not capped:
        raws.append(raw_export(name, server.url, GRAPH, pid, rounds=args.raw_rounds))
    report[f"{name}_sync_rounds"] = [s["seconds"] for s in syncs]
    report[f"{name}_sync"] = sorted(syncs, key=lambda s: s["seconds"])[len(syncs) // 2]
    if raws:
        report[f"{name}_raw_export"] = _ratio(report[f"{name}_sync"], raws, report)
    return path


def _subjects_and_triples(nt: Path) -> tuple[int, int]:
    import pyoxigraph as ox

    subjects, triples = set(), 0
    for quad in ox.parse(path=str(nt), format=ox.RdfFormat.N_TRIPLES):
        triples += 1
        if isinstance(quad.subject, ox.NamedNode):
            subjects.add(quad.subject.value)
    return len(subjects), triples


def _ratio(sync: dict, raw: list[dict], report: dict) -> dict:
    """The median of the raw exports' fastest requests, against the sync."""
    best = sorted((r["best"] for r in raw), key=lambda r: r["seconds"])
    median = best[len(best) // 2] if len(best) % 2 else best[len(best) // 2 - 1]  # the lower middle: the engine's due
    return {**median, "sync_over_raw": round(median["seconds"] / sync["seconds"], 2),
            "engine_cpu_ms_per_subject": round(median["engine_cpu_s"] / report["subjects"] * 1000, 4),
            "subjects_per_s": round(report["subjects"] / median["seconds"]),
            "rounds": [r["seconds"] for r in best], "tried": [t for r in raw for t in r["tried"]]}


def _commit() -> str:
    """The commit of the kgstore that runs (a worktree of an older commit on PYTHONPATH runs the same bench)."""
    import subprocess

    import kgstore

    where = Path(kgstore.__file__).resolve().parents[1]
    done = subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip()


def _write(report: dict, args) -> int:
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


def _queries(report: dict, stores: dict, work: Path, args) -> None:
    """Parts 3 to 5: lookups, 2-hop queries, counts and ask on every backend."""
    report["stats"] = {name: _stats(path) for name, path in stores.items()}
    report["counts_equal"] = all(_counts(s) == _counts(report["stats"]["local"]) for s in report["stats"].values())
    report["latency"], report["same_rows"] = _latency(stores, args)
    for diff in report["latency"].pop("differences", []):
        print("differs:", json.dumps(diff, ensure_ascii=False))
    for shape, by_backend in report["latency"].items():
        local_p50 = by_backend["local"]["p50_ms"]
        for backend, lat in by_backend.items():
            extra = f" (+{lat['p50_ms'] - local_p50:.2f} ms p50 over local)" if backend != "local" else ""
            print(f"{shape:6s} {backend:9s} p50 {lat['p50_ms']:7.2f} ms  p99 {lat['p99_ms']:7.2f} ms{extra}")
    print(f"catalog counts equal: {report['counts_equal']}; same rows on every backend: {report['same_rows']}")
    if args.ask_questions:
        _ask(report, work, args)


def _ask(report: dict, work: Path, args) -> None:
    from _remote_ask import ask_latency

    shared = REPO.parent / "shared" / "data"
    if not (shared / "qa" / "metaqa" / "kb_partial.txt").is_file():
        print(f"ask: skipped, no MetaQA data under {shared}")
        return
    cache_from = Path(args.ask_cache) if args.ask_cache else None
    ask = report["ask"] = ask_latency(work, args.engines.split(","), shared, questions=args.ask_questions,
                                      rounds=args.ask_rounds, cache_from=cache_from)
    local_p50 = ask["p50_ms"]["local"]
    for backend, p50 in ask["p50_ms"].items():
        extra = f" (+{p50 - local_p50:.1f} ms over local)" if backend != "local" else ""
        print(f"ask    {backend:9s} p50 {p50:7.1f} ms{extra}")
    print(f"ask: {ask['questions']} questions x {ask['rounds']} rounds through the warm LLM cache "
          f"({ask['answered']} answered; the local run that filled it took {ask['local_fill_s']} s); "
          f"model calls before timing {ask['model_calls_untimed']}, while timing {ask['model_calls_timed']}; "
          f"same answers everywhere: {ask['same_answers']}")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sync(path: Path, server_pid: int, subjects: int, triples: int) -> dict:
    """The sync's rate in subjects/s. Where the endpoint streams triples in no subject order
    sync does not count subjects: the dump's own ``subjects`` count then, and the progress
    is read in triples (``triples`` in all)."""
    import kgstore
    from kgstore import Store

    marks: list[tuple[float, int]] = []

    def mark(p) -> None:
        marks.append((p.seconds, p.subjects if p.subjects is not None else round(subjects * p.triples / triples)))

    client_cpu, server_cpu = time.process_time(), _cpu_seconds(server_pid)
    with Store.open(path) as store:
        summary = kgstore.sync(store, progress=mark)
    client_cpu, server_cpu = time.process_time() - client_cpu, _cpu_seconds(server_pid) - server_cpu
    rate = summary.subjects_per_s if summary.subjects_counted else subjects / summary.seconds
    tenth = max(1, len(marks) // 10)

    def rate_of(part: list[tuple[float, int]], before: tuple[float, int]) -> int:
        seconds, subjects = part[-1][0] - before[0], part[-1][1] - before[1]
        return round(subjects / seconds) if seconds > 0 else 0

    return {"subjects": summary.counts["subjects"] if summary.subjects_counted else subjects,
            "subjects_counted_by_sync": summary.subjects_counted, "pages": summary.counts["pages"],
            "seconds": round(summary.seconds, 2), "subjects_per_s": round(rate),
            # where the time goes outside the pages: before the first (the triple count, the first
            # answer) and after the last (the entity merge, finalize)
            "first_page_s": round(marks[0][0], 2) if marks else None,
            "after_last_page_s": round(summary.seconds - marks[-1][0], 2) if marks else None,
            "first_tenth_per_s": rate_of(marks[:tenth], (0.0, 0)),
            "last_tenth_per_s": rate_of(marks[-tenth:], marks[-tenth - 1] if len(marks) > tenth else (0.0, 0)),
            "wikidata_hours": round(WIKIDATA_ENTITIES / rate / 3600, 1) if rate else None,
            # On a shared machine the wall clock measures the neighbours too; CPU seconds do not.
            "client_cpu_s": round(client_cpu, 2), "server_cpu_s": round(server_cpu, 2),
            "triples_per_s": round(triples / summary.seconds),
            "client_cpu_ms_per_subject": round(client_cpu / subjects * 1000, 4),
            "server_cpu_ms_per_subject": round(server_cpu / subjects * 1000, 4),
            "load": os.getloadavg()[0],
            "subjects_per_cpu_s": round((summary.counts["subjects"] if summary.subjects_counted else subjects)
                                        / max(client_cpu + server_cpu, 1e-9))}


def _stats(path: Path) -> dict:
    from kgstore import Store

    with Store.open(path, read_only=True) as store:
        return store.stats()


def _counts(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if k != "ingest_runs"}


def _latency(stores: dict[str, Path], args) -> tuple[dict, bool]:
    from kgstore import Store

    opened = {name: Store.open(path, read_only=True) for name, path in stores.items()}
    try:
        local = opened["local"]
        with local.catalog.connect() as con:
            subjects = [r[0] for r in con.execute(
                "SELECT DISTINCT s FROM statements WHERE s LIKE 'http://www.wikidata.org/entity/Q%' ORDER BY s"
            ).fetchall()]
        rng = random.Random(7)
        times = {shape: {name: [] for name in opened} for shape in ("1-hop", "2-hop")}
        same = True
        differences: list[dict] = []
        names = list(opened)
        for round_no in range(args.rounds):
            picks = rng.sample(subjects, min(args.lookups, len(subjects)))
            order = names if round_no % 2 == 0 else names[::-1]
            for shape, template in (("1-hop", ONE_HOP), ("2-hop", TWO_HOP)):
                rows_by_backend = {}
                for name in order:
                    store, got = opened[name], []
                    for s in picks:
                        t = time.perf_counter()
                        rows = [tuple(map(str, row)) for row in store.query(template.format(s=s))]
                        times[shape][name].append(time.perf_counter() - t)
                        got.append(sorted(rows))
                    rows_by_backend[name] = got
                first = _comparable(rows_by_backend[names[0]])
                for name, rows in rows_by_backend.items():
                    for s, mine, theirs in zip(picks, first, _comparable(rows)):
                        if mine != theirs:
                            same = False
                            if len(differences) < 6:
                                differences.append({"backend": name, "shape": shape, "subject": s,
                                                    "only_local": sorted(set(mine) - set(theirs))[:3],
                                                    "only_there": sorted(set(theirs) - set(mine))[:3]})
        summary = {shape: {name: {"p50_ms": round(statistics.median(v) * 1000, 2),
                                  "p99_ms": round(sorted(v)[max(0, int(len(v) * 0.99) - 1)] * 1000, 2),
                                  "n": len(v)} for name, v in by.items()} for shape, by in times.items()}
        if differences:
            summary["differences"] = differences
        return summary, same
    finally:
        for store in opened.values():
            store.close()


def _comparable(rows_per_subject: list[list[tuple]]) -> list[list[tuple]]:
    # Virtuoso keeps WKT literals as its own geometries: "Point(28.0 41.96)"^^geo:wktLiteral
    # comes back as "POINT(28 41.96)"^^virtrdf:Geometry. Compared by shape and numbers.
    def norm(cell: str) -> str:
        if "wktLiteral" in cell or "virtrdf#Geometry" in cell:
            text = cell.split("^^")[0].strip('"').upper()
            shape, _, numbers = text.partition("(")
            return shape + "(" + " ".join(repr(float(x)) for x in numbers.rstrip(")").split()) + ")"
        return cell

    return [sorted(tuple(norm(c) for c in row) for row in rows) for rows in rows_per_subject]


if __name__ == "__main__":
    sys.exit(main())

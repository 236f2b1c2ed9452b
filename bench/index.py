"""Index benchmark: `kgstore index` against a plain `model.encode`, HNSW recall and latency,
and entity-linking accuracy on MetaQA.

    python bench/index.py                      # FB15k-237, first 30,000 training triples
    python bench/index.py --limit 0            # all 272,115 triples (~15+ minutes of encoding)
    python bench/index.py --skip-linking       # only the FB15k-237 part
    python bench/index.py --skip-fb15k --hops 1,2,3

Part 1, on FB15k-237 (../shared/data/kg/fb15k237: derived_train_mid.tsv, names from
kgbert_entity2text.txt, relation texts from kgbert_relation2text.txt):

1. loads the first N training triples into a fresh store (a bench-local loader step:
   Freebase mids become fb: IRIs with their names as labels; plain-triple files have no
   name map, and MetaQA-style name IRIs would merge namesakes);
2. collects the distinct texts a fresh index embeds (the same verbalizers), then times
   (a) ``model.encode`` over them, (b) ``build_index`` (everything `kgstore index` does:
   catalog reads, texts, hashing, embedding, HNSW, DuckDB rows, saving), and (a) again;
   prints texts/s for both and the ratio b / mean(a) (target >= 0.9), in wall time and in
   process CPU time (steadier when other jobs share the cores), with peak RSS;
3. embeds 1,000 held-out queries (FB15k-237 dev triples, same verbalizer) and compares
   the triple index's top 10 with exact search over the same vectors: recall@10
   (target >= 0.97) and single-query latency p50/p99 (target p50 <= 1 ms).

Part 2, on MetaQA: ingests kb_partial.txt (tsv loader), builds the entity index and links
every dev question with its brackets removed (`Index.link_question`): top-1 and top-5
accuracy against the bracketed topic entity (target top-1 >= 0.95).

The model is loaded and warmed up before anything is timed. Results also go to
bench/out/index.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
FB15K = SHARED / "kg" / "fb15k237"
METAQA = SHARED / "qa" / "metaqa"


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def say(text: str) -> None:
    print(text, flush=True)


# -- part 1: FB15k-237 -----------------------------------------------------------------------
def fb_iri(path: str) -> str:
    from kgstore.terms import FB

    return FB + path.strip("/").replace("/", ".")


def read_pairs(path: Path) -> dict[str, str]:
    out = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("\t")
            if key and value:
                out[key] = value
    return out


def load_fb15k(store, limit: int) -> int:
    """Write the first ``limit`` training triples (0 = all) with names into ``store``."""
    from kgstore import EntityRecord, RelationRecord, Triple
    from kgstore._catalog import Catalog

    names = read_pairs(FB15K / "kgbert_entity2text.txt")
    relation_texts = read_pairs(FB15K / "kgbert_relation2text.txt")
    triples, entities, relations = [], {}, {}
    with (FB15K / "derived_train_mid.tsv").open(encoding="utf-8") as f:
        for n, line in enumerate(f):
            if limit and n >= limit:
                break
            s, p, o = line.rstrip("\n").split("\t")
            triples.append(Triple(fb_iri(s), fb_iri(p), fb_iri(o)))
            for mid in (s, o):
                if mid not in entities:
                    entities[mid] = EntityRecord(fb_iri(mid), mid, names.get(mid))
            if p not in relations:
                relations[p] = RelationRecord(fb_iri(p), p, relation_texts.get(p))
    for start in range(0, len(triples), 50_000):
        chunk = triples[start:start + 50_000]
        store.add_triples(chunk)
        with store.catalog.transaction() as con:
            Catalog.write_batch(con, 0, chunk, list(entities.values()) if start == 0 else [],
                                list(relations.values()) if start == 0 else [], [], "fb15k237")
    with store.catalog.transaction() as con:
        Catalog.finalize(con)
    return len(triples)


def distinct_texts(store) -> list[str]:
    """The texts a fresh build embeds: every kind's wanted entries, deduplicated."""
    from indexer import KINDS
    from indexer._build import _entries

    texts: dict[str, None] = {}
    with store.catalog.connect() as con:
        for kind in KINDS:
            for chunk in _entries(store, con.cursor(), kind, None, ""):
                texts.update(dict.fromkeys(e.text for e in chunk))
    return list(texts)


def cpu_seconds() -> float:
    """CPU time of this process, all threads: steadier than wall time on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_encode(model, texts: list[str], batch_size: int) -> tuple[float, float]:
    t, c = time.perf_counter(), cpu_seconds()
    model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                 show_progress_bar=False)
    return time.perf_counter() - t, cpu_seconds() - c


def held_out_queries(n: int) -> list[str]:
    """FB15k-237 dev triples (not in the training set), verbalized like indexed triples."""
    from indexer import triple_text
    from indexer._sources import relation_label

    names = read_pairs(FB15K / "kgbert_entity2text.txt")
    relation_texts = read_pairs(FB15K / "kgbert_relation2text.txt")
    out = []
    with (FB15K / "kgbert_dev.tsv").open(encoding="utf-8") as f:
        for line in f:
            s, p, o = line.rstrip("\n").split("\t")
            if s in names and o in names:
                out.append(triple_text(names[s], relation_label(fb_iri(p), relation_texts.get(p)), names[o]))
            if len(out) >= n:
                break
    return out


def bench_fb15k(args, encoder) -> dict:
    from indexer import Index, build_index
    from kgstore import Store

    tmp = Path(tempfile.mkdtemp(prefix="kgstore-bench-index-"))
    store_dir = tmp / "fb15k"
    result: dict = {"dataset": "FB15k-237 train (derived_train_mid.tsv)"}
    with Store.init(store_dir) as store:
        t = time.perf_counter()
        n_triples = load_fb15k(store, args.limit)
        result["triples_loaded"] = n_triples
        result["load_seconds"] = round(time.perf_counter() - t, 1)
        say(f"loaded {n_triples:,} triples in {result['load_seconds']} s")
        texts = distinct_texts(store)
        say(f"{len(texts):,} distinct texts to embed")
        model = encoder.model
        batch = args.batch_size or store.config.index.batch_size

        raw1, raw1_cpu = timed_encode(model, texts, batch)
        say(f"model.encode (1): {len(texts) / raw1:,.1f} texts/s")
        rss_before = rss_mb()
        t, c = time.perf_counter(), cpu_seconds()
        summary = build_index(store, encoder=encoder, batch_size=batch)
        build_s, build_cpu = time.perf_counter() - t, cpu_seconds() - c
        rss_after = rss_mb()
        say(f"build_index: {summary.embedded / build_s:,.1f} texts/s ({summary.embedded:,} embedded, {build_s:.1f} s)")
        raw2, raw2_cpu = timed_encode(model, texts, batch)
        say(f"model.encode (2): {len(texts) / raw2:,.1f} texts/s")
        raw_rate = len(texts) / statistics.mean([raw1, raw2])
        index_rate = summary.embedded / build_s
        raw_cpu_rate = len(texts) / statistics.mean([raw1_cpu, raw2_cpu])
        index_cpu_rate = summary.embedded / build_cpu
        say(f"ratio index/encode: wall {index_rate / raw_rate:.3f}, CPU time {index_cpu_rate / raw_cpu_rate:.3f}")
        result.update({
            "texts": len(texts), "embedded": summary.embedded,
            "per_kind": {k: {"items": s.items, "embedded": s.embedded, "reused": s.reused,
                             "seconds": round(s.seconds, 1)} for k, s in summary.kinds.items()},
            "encode_texts_per_s": [round(len(texts) / raw1, 1), round(len(texts) / raw2, 1)],
            "index_texts_per_s": round(index_rate, 1),
            "ratio_index_vs_encode": round(index_rate / raw_rate, 3),
            "encode_texts_per_cpu_s": [round(len(texts) / raw1_cpu, 1), round(len(texts) / raw2_cpu, 1)],
            "index_texts_per_cpu_s": round(index_cpu_rate, 1),
            "ratio_index_vs_encode_cpu_time": round(index_cpu_rate / raw_cpu_rate, 3),
            "index_build_seconds": round(build_s, 1),
            "encoder_seconds_inside_build": round(summary.embed_seconds, 1),
            "peak_rss_mb_before_build": round(rss_before), "peak_rss_mb_after_build": round(rss_after),
            "batch_size": batch,
        })

        # recall@10 and latency of the triple index against exact search
        index = Index.open(store, encoder=encoder)
        vf = index._file("triples")
        with store.catalog.connect() as con:
            labels = np.array([r[0] for r in con.execute(
                "SELECT label_id FROM index_items WHERE kind = 'triples' AND NOT deleted ORDER BY label_id"
            ).fetchall()], dtype=np.int64)
        matrix = vf.vectors(labels)
        queries = encoder.embed(held_out_queries(args.queries))
        hnsw = vf._index
        hnsw.set_ef(store.config.index.ef)
        hnsw.set_num_threads(1)
        latencies, hits = [], 0
        for q in queries:
            t = time.perf_counter()
            got, _ = hnsw.knn_query(q, k=10)
            latencies.append((time.perf_counter() - t) * 1000)
            exact = labels[np.argsort(-(matrix @ q))[:10]]
            hits += len(set(got[0].tolist()) & set(exact.tolist()))
        t = time.perf_counter()
        for q in queries[:200]:
            index.search_vectors("triples", q[None, :], 10)
        full_ms = (time.perf_counter() - t) / min(200, len(queries)) * 1000
        result.update({
            "queries": len(queries), "recall_at_10": round(hits / (10 * len(queries)), 4),
            "hnsw_latency_ms_p50": round(float(np.percentile(latencies, 50)), 3),
            "hnsw_latency_ms_p99": round(float(np.percentile(latencies, 99)), 3),
            "search_with_catalog_lookup_ms_mean": round(full_ms, 2),
            "hnsw": {"M": vf.M, "ef_construction": vf.ef_construction, "ef": store.config.index.ef,
                     "vectors": int(len(labels))},
        })
    return result


# -- part 2: entity linking on MetaQA ---------------------------------------------------------
def bench_linking(args, encoder) -> dict:
    import kgstore
    from indexer import Index, build_index
    from kgstore import Store

    tmp = Path(tempfile.mkdtemp(prefix="kgstore-bench-link-"))
    result: dict = {"dataset": "MetaQA kb_partial.txt + vanilla dev questions"}
    with Store.init(tmp / "metaqa") as store:
        t = time.perf_counter()
        kgstore.ingest(store, "tsv", METAQA / "kb_partial.txt")
        result["ingest_seconds"] = round(time.perf_counter() - t, 1)
        kinds = ["entities"] if args.linking_vectors else []
        t = time.perf_counter()
        summary = build_index(store, kinds=kinds, encoder=encoder)
        result["entity_index"] = {"embedded": summary.embedded, "seconds": round(time.perf_counter() - t, 1)}
        say(f"MetaQA entity index: {summary.embedded:,} texts in {result['entity_index']['seconds']} s")
        index = Index.open(store, encoder=encoder)
        with store.catalog.connect() as con:
            known = {r[0] for r in con.execute("SELECT label FROM entities WHERE label IS NOT NULL").fetchall()}
        with index.session():
            for hops in args.hops:
                questions = []
                with (METAQA / f"{hops}-hop" / "vanilla_qa_dev.txt").open(encoding="utf-8") as f:
                    for line in f:
                        question = line.split("\t")[0]
                        gold = re.search(r"\[(.+?)\]", question).group(1)
                        questions.append((question.replace("[", "").replace("]", ""), gold))
                if args.questions:
                    questions = questions[:args.questions]
                top1 = top5 = top1_known = 0
                misses = []
                t = time.perf_counter()
                for question, gold in questions:
                    labels = [c.label for c in index.link_question(question, k=5)]
                    top1 += labels[:1] == [gold]
                    top5 += gold in labels
                    top1_known += labels[:1] == [gold] and gold in known
                    if labels[:1] != [gold] and gold in known and len(misses) < 10:
                        misses.append({"question": question, "gold": gold, "got": labels[:3]})
                secs = time.perf_counter() - t
                n_known = sum(gold in known for _, gold in questions)
                result[f"{hops}-hop"] = {"questions": len(questions), "top1": round(top1 / len(questions), 4),
                                         "top5": round(top5 / len(questions), 4),
                                         "topic_entity_in_kb": n_known,
                                         "top1_when_in_kb": round(top1_known / max(n_known, 1), 4),
                                         "questions_per_s": round(len(questions) / secs, 1), "misses": misses}
                say(f"{hops}-hop dev: top-1 {top1 / len(questions):.4f}  top-5 {top5 / len(questions):.4f}  "
                    f"top-1 when the topic entity is in the KB {top1_known / max(n_known, 1):.4f} "
                    f"({len(questions):,} questions, {n_known:,} in the KB; {len(questions) / secs:,.0f}/s)")
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=30_000, help="FB15k-237 training triples to load (0 = all)")
    parser.add_argument("--queries", type=int, default=1000, help="held-out queries for recall/latency")
    parser.add_argument("--batch-size", type=int, default=0, help="encoder batch size (default: store config)")
    parser.add_argument("--hops", default="1", help="MetaQA dev sets to link, e.g. 1,2,3")
    parser.add_argument("--questions", type=int, default=0, help="at most this many questions per set (0 = all)")
    parser.add_argument("--no-linking-vectors", dest="linking_vectors", action="store_false",
                        help="link with names only (skip embedding the 43k MetaQA entities)")
    parser.add_argument("--skip-fb15k", action="store_true")
    parser.add_argument("--skip-linking", action="store_true")
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "index.json"))
    args = parser.parse_args(argv)
    args.hops = [int(h) for h in args.hops.split(",") if h.strip()]
    if not SHARED.is_dir():
        say(f"shared data not found at {SHARED}")
        return 2

    import torch

    from indexer import Encoder

    encoder = Encoder()
    t = time.perf_counter()
    encoder.embed(["warm up"] * 64)
    report = {"machine": {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                          "load_average_at_start": [round(x, 2) for x in os.getloadavg()]},
              "encoder": {"name": encoder.name, "fingerprint": encoder.fingerprint,
                          "load_seconds": round(time.perf_counter() - t, 1)}}
    say(f"encoder {encoder.name} [{encoder.fingerprint}] loaded; load average {os.getloadavg()[0]:.2f}")
    if not args.skip_fb15k:
        report["fb15k237"] = bench_fb15k(args, encoder)
    if not args.skip_linking:
        report["linking"] = bench_linking(args, encoder)
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["peak_rss_mb"] = round(rss_mb())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    say(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

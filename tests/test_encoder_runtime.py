"""The encoder under ONNX Runtime: the torch model's vectors, exported once, and a clear
fallback or error where the model does not suit it."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import indexer._encoder as encoder_module
from indexer._onnx import FileTokenizer, file_tokenizer
from indexer import Encoder
from kgstore.errors import VectorIndexError

TEXTS = ["Douglas Adams (English writer and humorist)", "a", "the capital of France",
         "River hall north saint old castle valley garden bridge tower " * 8, "École Zürich 北京"]


def model_copy(tmp_path, pooling: dict | None = None):
    """The packaged model's folder, its files linked (not copied), under a new path: a new
    cache key, so this test exports and loads on its own."""
    source = Encoder().path
    folder = tmp_path / "model"
    for path in source.rglob("*"):
        target = folder / path.relative_to(source)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path, target)
    if pooling is not None:
        config = folder / "1_Pooling" / "config.json"
        settings = json.loads(config.read_text())
        settings.update(pooling)
        config.unlink()
        config.write_text(json.dumps(settings))
    return folder


def test_onnx_gives_the_torch_vectors_and_is_exported_once(tmp_path, monkeypatch):
    monkeypatch.setattr(encoder_module, "DISTILLED_DIR", tmp_path / "cache")
    folder = model_copy(tmp_path)
    onnx = Encoder(str(folder), runtime="onnx")
    torch = Encoder(str(folder), runtime="torch")
    assert onnx.fingerprint == torch.fingerprint  # one model: indexes built either way mix
    a, b = onnx.embed(TEXTS, batch_size=8), torch.embed(TEXTS, batch_size=8)
    assert a.shape == b.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(axis=1).min() > 0.9999  # padded texts in one batch included
    exported = tmp_path / "cache" / f"onnx-{onnx.fingerprint}" / "model.onnx"
    assert exported.is_file() and onnx.runtime_used == "onnx" and torch.runtime_used == "torch"
    stamp = exported.stat().st_mtime_ns
    encoder_module._models.pop(onnx._key)  # a new process: loads the exported file, exports nothing
    again = Encoder(str(folder), runtime="onnx")
    assert (again.embed(TEXTS, batch_size=8) * b).sum(axis=1).min() > 0.9999
    assert isinstance(again.model.tokenizer, FileTokenizer)  # torch was not needed to load it
    assert exported.stat().st_mtime_ns == stamp


def test_the_file_tokenizer_gives_the_ids_of_the_models_own():
    torch_model = Encoder(runtime="torch").model
    found = file_tokenizer(Encoder().path)
    assert found is not None
    tokenizer, max_length = found
    assert max_length == torch_model.max_seq_length
    texts = TEXTS + ["  leading and trailing  ", "word " * 400, "", "Ünïcödé — dashes… and 'quotes'"]
    for batch in (texts[:1], texts, texts[-3:]):
        want = torch_model.tokenizer(batch, padding=True, truncation=True, max_length=max_length, return_tensors="np")
        got = tokenizer(batch, padding=True, truncation=True, max_length=max_length, return_tensors="np")
        for key in ("input_ids", "attention_mask", "token_type_ids"):
            assert np.array_equal(np.asarray(want[key]), got[key]), key


def test_auto_is_onnx_where_installed_and_torch_for_other_poolings(tmp_path, monkeypatch):
    monkeypatch.setattr(encoder_module, "DISTILLED_DIR", tmp_path / "cache")
    assert Encoder().runtime == "auto"
    cls = model_copy(tmp_path, {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    with pytest.raises(VectorIndexError, match="mean-pooled models only.*encoder_runtime"):
        Encoder(str(cls), runtime="onnx").embed(["x"])
    fallback = Encoder(str(cls))
    assert fallback.embed(["x"]).shape == (1, 384) and fallback.runtime_used == "torch"
    assert not (tmp_path / "cache").exists()


def test_an_unknown_runtime_is_refused_by_name():
    with pytest.raises(VectorIndexError, match="unknown encoder runtime 'tensorrt'; choose from: auto, onnx, torch"):
        Encoder(runtime="tensorrt")


def test_an_unknown_device_is_refused_and_cuda_without_a_gpu_says_what_to_do(tmp_path):
    with pytest.raises(VectorIndexError, match="unknown encoder device 'gpu'; choose cpu, cuda or cuda:N"):
        Encoder(device="gpu")
    encoder = Encoder(device="cuda:0", runtime="onnx")
    assert encoder.runtime == "torch"  # a GPU runs torch, whatever the runtime asked for
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: bench/encoder_device.py measures it")
    with pytest.raises(VectorIndexError, match=r"sees no CUDA GPU.*kgstore index --device cpu"):
        encoder.embed(["x"])


def test_index_device_option_reaches_the_encoder(tmp_path, sample_dir):
    from click.testing import CliRunner

    from kgstore.cli import main

    store = str(tmp_path / "store")
    runner = CliRunner()
    assert runner.invoke(main, ["init", store]).exit_code == 0
    assert runner.invoke(main, ["ingest", store, "wikidata-json", str(sample_dir / "sample-wikidata.json")]).exit_code == 0
    refused = runner.invoke(main, ["index", store, "--kinds", "relations", "--device", "tpu"])
    assert refused.exit_code != 0 and "unknown encoder device 'tpu'" in refused.output
    assert refused.exception is None or isinstance(refused.exception, SystemExit)  # no traceback
    built = runner.invoke(main, ["index", store, "--kinds", "relations", "--device", "cpu", "--format", "json"])
    assert built.exit_code == 0, built.output
    assert json.loads(built.output)["kinds"][0]["embedded"] > 0

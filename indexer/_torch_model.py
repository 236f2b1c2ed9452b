"""The torch model of an encoder: a sentence-transformers folder loaded offline, on a
device, with a thread count. Its own module: the encoder runs it, and the ONNX export
reads its weights."""
from __future__ import annotations

import os
from pathlib import Path

from kgstore.errors import VectorIndexError


def load_sentence_transformer(path: Path, device: str, threads: int):
    """The sentence-transformers model in ``path``, nothing downloaded; a clear error if
    the folder is not one or the device is not there."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import torch
    from sentence_transformers import SentenceTransformer
    try:
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # noqa: BLE001 - cosmetics only
        pass
    if threads and threads > 0:
        torch.set_num_threads(threads)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise VectorIndexError(
            f"encoder device {device!r} asked for, but this torch ({torch.__version__}) sees no CUDA GPU: "
            "install a CUDA build of torch on a machine with a GPU, or use device \"cpu\" "
            "([index] device in kgstore.toml, or kgstore index --device cpu)")
    try:
        return SentenceTransformer(str(path), device=device, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any load failure means the folder is not a usable model
        raise VectorIndexError(f"cannot load the sentence-transformers model in {path}: {exc}") from exc

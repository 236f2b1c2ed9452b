"""One hnswlib file per index kind: create, load, grow, add, delete, search, save atomically.

Labels are the ``label_id`` column of ``index_items``; hnswlib keeps only vectors and graph.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from kgstore.errors import VectorIndexError

from ._saved_file import replace_if_whole

SPACE = "cosine"


class VectorFile:
    """An hnswlib index bound to ``path`` (``STORE/index/<kind>.hnsw``): the ``hnswlib``
    :class:`~indexer._backends.VectorBackend`, float32 and whole in RAM."""

    name = "hnswlib"
    memory_mapped = False

    def __init__(self, path: Path, dim: int, *, M: int = 16, ef_construction: int = 200, ef: int = 64):
        import hnswlib  # deferred: `kgstore --help` must not pay for it

        self.path = Path(path)
        self.dim = dim
        self.M = M
        self.ef_construction = ef_construction
        self.ef = ef
        self._index = hnswlib.Index(space=SPACE, dim=dim)
        self._loaded = False

    # -- lifecycle ------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, dim: int, *, M: int, ef_construction: int, ef: int,
               capacity: int = 1024) -> "VectorFile":
        vf = cls(path, dim, M=M, ef_construction=ef_construction, ef=ef)
        vf._index.init_index(max_elements=max(capacity, 16), M=M, ef_construction=ef_construction, random_seed=100)
        vf._index.set_ef(ef)
        vf._loaded = True
        return vf

    @classmethod
    def load(cls, path: Path, dim: int, *, ef: int, extra_capacity: int = 0) -> "VectorFile":
        path = Path(path)
        if not path.exists():
            raise VectorIndexError(f"index file {path} is missing; run `kgstore index {path.parent.parent}`")
        vf = cls(path, dim, ef=ef)
        try:
            vf._index.load_index(str(path))
        except RuntimeError as exc:
            raise VectorIndexError(f"cannot read index file {path}: {exc}") from exc
        if extra_capacity:
            vf.reserve(extra_capacity)
        vf.M = vf._index.M
        vf.ef_construction = vf._index.ef_construction
        vf._index.set_ef(ef)
        return vf

    def save(self) -> None:
        """Write to a temporary file and rename, so readers never see half a file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        self._index.save_index(str(tmp))
        replace_if_whole(tmp, self.path, self._index.index_file_size())  # hnswlib does not check its writes

    def close(self) -> None:
        self._index = None

    # -- writes ---------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return self._index.get_current_count()

    def reserve(self, more: int) -> None:
        """Make room for ``more`` additional vectors (grows by at least half, amortised)."""
        need = self.count + more
        cap = self._index.get_max_elements()
        if need > cap:
            self._index.resize_index(max(need, int(cap * 1.5), 1024))

    def add(self, vectors: np.ndarray, labels: np.ndarray, *, threads: int = 1) -> None:
        self.reserve(len(labels))
        self._index.add_items(vectors, labels, num_threads=threads)

    def mark_deleted(self, labels) -> int:
        done = 0
        for label in labels:
            try:
                self._index.mark_deleted(int(label))
                done += 1
            except RuntimeError:  # already deleted, or never saved before a crash
                pass
        return done

    def vectors(self, labels) -> np.ndarray:
        return np.asarray(self._index.get_items(list(map(int, labels)), return_type="numpy"), dtype=np.float32)

    # -- reads ----------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int, *, ef: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Labels and cosine similarities, best first, ``(n, k)`` each; fewer when the
        index holds fewer than ``k`` vectors."""
        queries = np.atleast_2d(queries).astype(np.float32, copy=False)
        k = min(k, self.count)
        if k <= 0:
            return np.zeros((len(queries), 0), np.uint64), np.zeros((len(queries), 0), np.float32)
        self._index.set_ef(max(ef or self.ef, k))
        while True:
            try:
                labels, distances = self._index.knn_query(queries, k=k)
                return labels, 1.0 - distances
            except RuntimeError:
                # deleted vectors can leave fewer than k reachable results
                if k <= 1:
                    return np.zeros((len(queries), 0), np.uint64), np.zeros((len(queries), 0), np.float32)
                k = max(1, k // 2)

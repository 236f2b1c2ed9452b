"""The server-side vector backend: one Postgres table per kind, searched through a pgvector
HNSW index (``[index] backend = "pgvector"``, ``[index] dsn``).

What lives where: the table ``kgstore_<kind>_<token>`` holds ``(id bigint, embedding
vector(dim))``, ``id`` being the kind's label; ``kgstore_vector_tables`` holds one row per
such table (its dimension, graph parameters and ``end_label``, one past the highest label
saved). In the store, ``STORE/index/<kind>.pgvector`` is a small JSON marker naming the
table; it plays the part of the vector file of the in-process backends, and is written
only after the first commit, so "the file exists" means what it means for them.

How writes map onto the build's "save atomically": a writable table works inside one open
transaction; :meth:`PgVectorTable.save` commits the rows added, the rows deleted and the
new ``end_label`` together. Readers (autocommit) see the table as of the last save, and a
build killed between saves leaves nothing behind (Postgres rolls the transaction back,
even a ``CREATE TABLE``). The HNSW index is created at the first save, after the first
rows are in: pgvector builds a graph much faster from a full table than row by row.

Deletes remove rows (the HNSW index skips dead tuples); ``end_label`` keeps the count the
build resumes from, whatever was deleted. Similarities are cosine (``vector_cosine_ops``,
``<=>`` is 1 - cosine), as hnswlib's and usearch's.

Everything Postgres-specific stays in this module; another server backend (Qdrant,
Milvus) would be a module like it behind the same :class:`~indexer._backends.VectorBackend`.
"""
from __future__ import annotations

import json
import os
import secrets
import threading
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np

from kgstore.errors import VectorExtensionMissingError, VectorIndexError, VectorServerUnreachableError

__all__ = ["PgVectorTable", "DSN_ENV", "resolve_dsn", "redact_dsn", "discard_table"]

DSN_ENV = "KGSTORE_PG_DSN"
META_TABLE = "kgstore_vector_tables"
MAX_EF_SEARCH = 1000  # pgvector's upper bound for hnsw.ef_search
CONNECT_TIMEOUT_S = 10
# pgvector builds an HNSW graph far faster while it fits in maintenance_work_mem (past that it
# warns "building will take significantly more time"); 512 MB is about 200k 384-dimensional
# vectors with their links, by our estimate (1.5 KB a vector, plus ~0.5 KB of neighbours).
BUILD_MEMORY = "512MB"
COPY_ROWS = 10_000


def resolve_dsn(cfg) -> str:
    """The server to use: ``KGSTORE_PG_DSN`` when set, else ``[index] dsn``."""
    dsn = os.environ.get(DSN_ENV) or getattr(cfg, "dsn", "") or ""
    if not dsn.strip():
        raise VectorIndexError(f"[index] backend = \"pgvector\" needs a Postgres server: set [index] dsn in "
                               f"kgstore.toml (e.g. \"postgresql://user@127.0.0.1:5432/kgstore\") or {DSN_ENV}")
    return dsn.strip()


def redact_dsn(dsn: str) -> str:
    """``dsn`` as it may be shown: without its password, in either DSN form."""
    if "://" in dsn:
        parts = urlsplit(dsn)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.split(':', 1)[0]}@{host}"
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"],
                          safe="/")
        # by hand: urlunsplit drops the empty host of a Unix-socket URI ("postgresql:///db")
        return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(dsn)
    except Exception:  # not parseable: say nothing of it rather than leak a password
        return "(the configured dsn, which could not be parsed)"
    params.pop("password", None)
    return make_conninfo(**params)


def _connect(dsn: str, *, writable: bool):
    """A connection with the vector type registered. A writer creates the extension when
    it is missing (and it may); a reader only checks it."""
    import psycopg
    from pgvector.psycopg import register_vector

    shown = redact_dsn(dsn)
    try:
        con = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.OperationalError as exc:
        raise VectorServerUnreachableError("pgvector", shown, _first_line(exc)) from exc
    try:
        if con.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
            if not writable:
                raise VectorExtensionMissingError(shown, "vector")
            try:
                con.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise VectorExtensionMissingError(shown, "vector", _first_line(exc)) from exc
        register_vector(con)
        if writable:
            con.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name text PRIMARY KEY, dim integer NOT NULL, "
                        "m integer NOT NULL, ef_construction integer NOT NULL, end_label bigint NOT NULL, "
                        "created_at timestamptz NOT NULL DEFAULT now())")
    except BaseException:
        con.close()
        raise
    con.autocommit = not writable
    return con


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _read_marker(path: Path) -> dict:
    try:
        marker = json.loads(Path(path).read_text(encoding="utf-8"))
        if marker.get("backend") != "pgvector" or not marker.get("table"):
            raise ValueError("not a pgvector marker")
        return marker
    except (OSError, ValueError) as exc:
        raise VectorIndexError(f"cannot read index marker {path}: {exc}") from exc


def discard_table(path: Path, cfg) -> None:
    """Drop the table ``path`` names (a rebuild, or a kind moving to another backend) and
    remove the marker. Best effort on the server: a rebuild must not be blocked by a
    server the store no longer uses, so an unreachable one keeps its table (named in the
    marker, which is removed all the same)."""
    path = Path(path)
    if not path.exists():
        return
    table = _read_marker(path)["table"]
    try:
        con = _connect(resolve_dsn(cfg), writable=True)
    except VectorIndexError:
        path.unlink(missing_ok=True)
        return
    try:
        _drop(con, table)
        con.commit()
    finally:
        con.close()
    path.unlink(missing_ok=True)


def _drop(con, table: str) -> None:
    from psycopg import sql

    con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
    con.execute(f"DELETE FROM {META_TABLE} WHERE name = %s", [table])


class PgVectorTable:
    """A kind's vectors in a Postgres table; see the module docstring for reads and writes.

    One connection per instance. Searches from several threads (``kgstore serve``) take
    turns on it: a search is a setting and a query that must not interleave with another's."""

    name = "pgvector"
    memory_mapped = False  # searched by the server, not through a local file

    def __init__(self, path: Path, con, table: str, *, dim: int, M: int, ef_construction: int, end: int, ef: int,
                 writable: bool, address: str, indexed: bool):
        self.path = Path(path)
        self.table = table
        self.dim = dim
        self.M = M
        self.ef_construction = ef_construction
        self.ef = ef
        self.writable = writable
        self.address = address
        self._con = con
        self._end = end
        self._indexed = indexed
        self._ef_search: int | None = None
        self._lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, dim: int, *, M: int, ef_construction: int, ef: int, cfg) -> "PgVectorTable":
        """A new, empty table (created in the open transaction: nothing exists on the
        server until the first :meth:`save`)."""
        from psycopg import sql

        dsn = resolve_dsn(cfg)
        con = _connect(dsn, writable=True)
        kind = Path(path).stem
        table = f"kgstore_{kind}_{secrets.token_hex(4)}"
        try:
            con.execute(sql.SQL("CREATE TABLE {} (id bigint PRIMARY KEY, embedding vector({}) NOT NULL)").format(
                sql.Identifier(table), sql.Literal(int(dim))))
            con.execute(f"INSERT INTO {META_TABLE} (name, dim, m, ef_construction, end_label) VALUES "
                        "(%s, %s, %s, %s, 0)", [table, dim, M, ef_construction])
            con.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
        except BaseException:
            con.close()
            raise
        return cls(path, con, table, dim=dim, M=M, ef_construction=ef_construction, end=0, ef=ef, writable=True,
                   address=redact_dsn(dsn), indexed=False)

    @classmethod
    def load(cls, path: Path, dim: int, *, ef: int, writable: bool = False, cfg=None) -> "PgVectorTable":
        from psycopg import sql

        path = Path(path)
        if not path.exists():
            raise VectorIndexError(f"index marker {path} is missing; run `kgstore index {path.parent.parent}`")
        table = _read_marker(path)["table"]
        dsn = resolve_dsn(cfg)
        address = redact_dsn(dsn)
        con = _connect(dsn, writable=writable)
        try:
            row = con.execute(f"SELECT dim, m, ef_construction, end_label FROM {META_TABLE} WHERE name = %s",
                              [table]).fetchone() if _has_table(con, META_TABLE) else None
            if row is None or not _has_table(con, table):
                raise VectorIndexError(
                    f"the table {table} that {path} names is not in the database at {address}; point [index] dsn "
                    f"at the server it was built on, or rebuild with `kgstore index {path.parent.parent} --rebuild`")
            if row[0] != dim:
                raise VectorIndexError(f"{table} at {address} holds {row[0]}-dimensional vectors; "
                                       f"the encoder makes {dim}")
            if writable:
                con.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
        except BaseException:
            con.close()
            raise
        return cls(path, con, table, dim=dim, M=row[1], ef_construction=row[2], end=row[3], ef=ef,
                   writable=writable, address=address, indexed=True)

    def save(self) -> None:
        """Commit what was added and deleted, with the new count; then (first save only)
        write the marker that names the table."""
        from psycopg import sql

        self._check_writable()
        with self._lock:
            if not self._indexed:
                self._con.execute(sql.SQL(
                    "CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) "
                    "WITH (m = {}, ef_construction = {})").format(
                    sql.Identifier(f"{self.table}_hnsw"), sql.Identifier(self.table), sql.Literal(int(self.M)),
                    sql.Literal(int(self.ef_construction))))
            self._con.execute(f"UPDATE {META_TABLE} SET end_label = %s WHERE name = %s", [self._end, self.table])
            self._con.commit()
            self._indexed = True
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps({"backend": self.name, "table": self.table, "dim": self.dim,
                                       "server": self.address}, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)

    def close(self) -> None:
        """Close the connection; a writable table's unsaved changes are rolled back."""
        con, self._con = self._con, None
        if con is not None:
            con.close()

    def __del__(self):  # an Index drops its backends without closing them (see Index.close)
        try:
            self.close()
        except Exception:
            pass

    # -- writes ---------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return self._end

    def reserve(self, more: int) -> None:
        """A table grows by itself."""

    def add(self, vectors: np.ndarray, labels: np.ndarray, *, threads: int = 1) -> None:
        from psycopg import sql

        self._check_writable()
        if not len(labels):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        labels = np.asarray(labels, dtype=np.int64)
        copy_sql = sql.SQL("COPY {} (id, embedding) FROM STDIN (FORMAT BINARY)").format(sql.Identifier(self.table))
        with self._lock, self._con.cursor() as cur:
            for start in range(0, len(labels), COPY_ROWS):
                with cur.copy(copy_sql) as copy:
                    copy.set_types(["bigint", "vector"])
                    for label, vector in zip(labels[start:start + COPY_ROWS], vectors[start:start + COPY_ROWS]):
                        copy.write_row((int(label), vector))
        top = int(labels.max()) + 1
        if top > self._end:
            self._end = top

    def mark_deleted(self, labels) -> int:
        from psycopg import sql

        self._check_writable()
        labels = sorted({int(x) for x in labels})
        if not labels:
            return 0
        with self._lock:
            cur = self._con.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(sql.Identifier(self.table)),
                                    [labels])
            return cur.rowcount

    def vectors(self, labels) -> np.ndarray:
        from psycopg import sql

        labels = list(map(int, labels))
        if not labels:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            rows = self._con.execute(
                sql.SQL("SELECT id, embedding FROM {} WHERE id = ANY(%s)").format(sql.Identifier(self.table)),
                [sorted(set(labels))], binary=True).fetchall()
        found = {int(i): v.to_numpy() for i, v in rows}
        if any(x not in found for x in labels):
            raise RuntimeError(f"labels missing from {self.table}")
        return np.vstack([found[x] for x in labels]).astype(np.float32, copy=False)

    # -- reads ----------------------------------------------------------------------------
    def search(self, queries: np.ndarray, k: int, *, ef: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Labels and cosine similarities, best first, ``(n, k')`` each (``k'``: the fewest
        any query found; deleted rows can leave fewer than ``k``)."""
        from psycopg import sql

        queries = np.atleast_2d(queries).astype(np.float32, copy=False)
        if k <= 0 or not len(queries):
            return np.zeros((len(queries), 0), np.uint64), np.zeros((len(queries), 0), np.float32)
        # the index scan returns at most ef_search rows: at least k of them
        ef_search = min(max(ef or self.ef, k), MAX_EF_SEARCH)
        query = sql.SQL("SELECT id, embedding <=> %(q)b FROM {} ORDER BY embedding <=> %(q)b LIMIT %(k)s").format(
            sql.Identifier(self.table))
        found = []
        with self._lock:
            if ef_search != self._ef_search:
                self._con.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(ef_search)))
                self._ef_search = ef_search
            for q in queries:
                found.append(self._con.execute(query, {"q": q, "k": k}).fetchall())
        width = min(len(rows) for rows in found)
        labels = np.array([[r[0] for r in rows[:width]] for rows in found], dtype=np.uint64).reshape(len(found), width)
        sims = np.array([[1.0 - r[1] for r in rows[:width]] for rows in found],
                        dtype=np.float32).reshape(len(found), width)
        return labels, sims

    def disk_bytes(self) -> int:
        """What the table and its HNSW index take on the server's disk."""
        with self._lock:
            return int(self._con.execute("SELECT pg_total_relation_size(%s)", [self.table]).fetchone()[0])

    def _check_writable(self) -> None:
        if not self.writable:
            raise VectorIndexError(f"{self.table} is open for searching; open it writable to change it")


def _has_table(con, name: str) -> bool:
    return con.execute("SELECT to_regclass(%s) IS NOT NULL", [name]).fetchone()[0]

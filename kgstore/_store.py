"""The Store: one directory holding the DuckDB catalog and the config, and the triples:
an embedded Oxigraph store in the directory, or a SPARQL endpoint (kgstore/_triples.py)."""
from __future__ import annotations

import fcntl
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import pyoxigraph as ox

if TYPE_CHECKING:
    import pyarrow as pa

from ._catalog import Catalog, CatalogWait
from ._catalog_replace import redirect_target
from ._columns import ntriples_bytes, triple_columns
from ._entity_facts import FactRow, labels_by_key, ranked_fact_rows, relations_by_key, subject_fact_rows
from ._triples import OXIGRAPH_DIR, TripleAccess, open_triples
from .config import CONFIG_NAME, StoreConfig
from ._query_guard import UPDATE_KEYWORDS, refused_operation
from .errors import (KgstoreError, QueryRefusedError, ReadOnlyError, StoreClosedError, StoreError,
                     StoreLockedError, StoreNotFoundError)
from .records import Triple
from .terms import SKOLEM, shorten

LOCK_NAME = ".writer.lock"



@dataclass
class Fact:
    relation_iri: str
    relation_id: str | None
    relation_label: str | None
    value: str
    value_is_literal: bool
    value_label: str | None
    datatype: str | None = None
    lang: str | None = None


@dataclass(frozen=True)
class Edge:
    """One direct fact with labels, as :meth:`Store.edges` returns it."""

    s: str
    p: str
    o: str
    s_label: str | None
    p_label: str | None
    o_label: str | None
    o_literal: bool
    datatype: str | None = None


@dataclass
class EntityView:
    iri: str
    id: str | None
    label: str | None
    description: str | None
    aliases: list[str]
    popularity: int
    is_mediator: bool
    facts: list[Fact] = field(default_factory=list)
    incoming: int = 0

    def to_dict(self, prefixes: dict[str, str]) -> dict[str, Any]:
        """The JSON of `kgstore entity --format json` and the server's ``/entity``: facts
        with labels where known, IRIs shortened with ``prefixes`` otherwise."""
        facts = [{
            "relation": f.relation_label or shorten(f.relation_iri, prefixes),
            "relation_id": f.relation_id or shorten(f.relation_iri, prefixes),
            "value": f.value if f.value_is_literal else (f.value_label or shorten(f.value, prefixes)),
            "value_iri": None if f.value_is_literal else f.value,
            "datatype": f.datatype if f.value_is_literal else None,  # tables write dates by it (literal_text)
        } for f in self.facts]
        return {"iri": self.iri, "id": self.id, "label": self.label, "description": self.description,
                "aliases": self.aliases, "popularity": self.popularity, "is_mediator": self.is_mediator,
                "incoming": self.incoming, "facts": facts}


class Store:
    """A kgstore store directory.

    Open it with ``Store.open(path)`` (a context manager). One writer at a time: a second
    writer gets :class:`StoreLockedError`; readers use ``read_only=True`` and see the data
    as it was when they opened.
    """

    def __init__(self, path: Path, *, read_only: bool, _lock_fd: int | None, config: StoreConfig,
                 on_wait: Callable[[CatalogWait], None] | None = None):
        self.path = Path(path)
        self.read_only = read_only
        self.config = config
        self._lock_fd = _lock_fd
        self._closed = False
        self._mediators_held: bool | None = None  # read on first use: mediators()
        try:
            self._triples: TripleAccess = open_triples(self.path, config, read_only=read_only)
        except BaseException:
            self._release_lock()
            raise
        self.catalog = Catalog(self.path, read_only=read_only, on_wait=on_wait)

    # -- lifecycle -------------------------------------------------------------------
    @classmethod
    def init(cls, path: str | os.PathLike, *, config: StoreConfig | None = None, exist_ok: bool = False) -> "Store":
        """Create a store directory and return it opened for writing."""
        path = Path(path)
        if (path / CONFIG_NAME).exists():
            if not exist_ok:
                raise StoreError(f"{path} already holds a kgstore store")
            return cls.open(path)
        if path.exists() and any(path.iterdir()):
            raise StoreError(f"{path} exists and is not empty; choose a new directory for the store")
        path.mkdir(parents=True, exist_ok=True)
        (config or StoreConfig()).save(path)
        store = cls.open(path)
        store.catalog.create()
        return store

    @classmethod
    def open(cls, path: str | os.PathLike, *, read_only: bool = False,
             on_wait: Callable[[CatalogWait], None] | None = None) -> "Store":
        """``on_wait`` is told, at once and every few seconds, while another process (a
        server reading the store, say) holds the catalog this one waits for."""
        path = Path(path)
        if not (path / CONFIG_NAME).exists():
            raise StoreNotFoundError(path)
        config = StoreConfig.load(path)
        lock_fd = None if read_only else _take_writer_lock(path)
        return cls(path, read_only=read_only, _lock_fd=lock_fd, config=config, on_wait=on_wait)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._triples.close()
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"<Store {self.path} {mode}{' closed' if self._closed else ''}>"

    @property
    def rdf(self) -> ox.Store:
        """The underlying pyoxigraph Store (read it freely; write through the Store API).
        A store whose triples live in a SPARQL endpoint has none: use :meth:`query`."""
        self._check_open()
        rdf = getattr(self._triples, "rdf", None)
        if rdf is None:
            raise StoreError(f"the triples of {self.path} live in the SPARQL endpoint at {self._triples.location}; "
                             "there is no local Oxigraph store: query it with Store.query")
        return rdf

    @property
    def triples(self) -> TripleAccess:
        """Where the triples live (:class:`kgstore._triples.TripleAccess`): every read of
        triples goes through it."""
        self._check_open()
        return self._triples

    @property
    def endpoint_url(self) -> str | None:
        """The SPARQL endpoint holding the triples, or None for the embedded Oxigraph store."""
        return self.config.endpoint.url or None

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(self.path)

    def _check_writable(self) -> None:
        self._check_open()
        if self.read_only:
            raise ReadOnlyError(f"{self.path} is open read-only")

    def _check_triples_writable(self) -> None:
        """Writes to the triples: a store over a SPARQL endpoint refuses them (its catalog
        is still written, by `kgstore sync`)."""
        self._check_writable()
        if not self._triples.writable:
            raise ReadOnlyError(f"cannot write triples to {self.path}: they live in the SPARQL endpoint at "
                                f"{self._triples.location}, and kgstore never writes to an endpoint (load the data "
                                "with the endpoint's own bulk loader, then run `kgstore sync`)")

    # -- triples ---------------------------------------------------------------------
    def add_triples(self, triples: list[Triple]) -> None:
        """Bulk-add triples to Oxigraph (repeat-safe: RDF has set semantics)."""
        self._check_triples_writable()
        if triples:
            self._triples.load_ntriples(ntriples_bytes(triple_columns(triples)))

    def add_ntriples(self, data: bytes) -> None:
        self._check_triples_writable()
        if data:
            self._triples.load_ntriples(data)

    def triple_count(self) -> int:
        self._check_open()
        return self._triples.count()

    # -- SPARQL ----------------------------------------------------------------------
    def query(self, sparql: str, *, default_graph: Sequence[str] | None = None,
              named_graphs: Sequence[str] | None = None) -> Any:
        """Run a SPARQL 1.1 query with the store's prefixes predeclared.

        Update operations are refused here: use :meth:`update`. ``default_graph`` and
        ``named_graphs`` are graph IRIs (the SPARQL protocol's ``default-graph-uri`` and
        ``named-graph-uri``); by default the query reads the store's default graph.
        """
        self._check_open()
        refused = refused_operation(sparql, allow_service=self.config.sparql.allow_service)
        if refused:
            reason, offset = refused
            if any(word in reason for word in UPDATE_KEYWORDS):
                reason += " (use Store.update from the API)"
            raise QueryRefusedError(reason, offset)
        return self._triples.query(sparql, prefixes=self.config.prefixes, default_graph=default_graph,
                                   named_graphs=named_graphs)

    def rdflib(self, *, writable: bool = False):
        """An ``rdflib.Dataset`` over this store's triples (needs the ``rdflib`` extra).

        rdflib programs (SPARQL through rdflib, serializers, pySHACL) read the store without
        a copy; the store's prefixes are bound. Read-only unless ``writable=True`` (on a
        store opened for writing): writes through rdflib bypass the catalog, so labels,
        facts and the search index do not see them. SERVICE and LOAD are refused as in
        :meth:`query`. The Dataset holds the Oxigraph store open (rdflib's objects refer to
        each other, so only the garbage collector frees it): drop it (``del``, and
        ``gc.collect()`` before another process opens the store) when you close the Store."""
        self._check_open()
        try:
            from ._rdflib import rdflib_dataset
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(f"Store.rdflib() needs the rdflib extra ({exc.name} is missing): "
                                      "pip install 'kgstore[rdflib]'", name=exc.name) from exc
        return rdflib_dataset(self, writable=writable)

    def update(self, sparql: str) -> None:
        self._check_triples_writable()
        self._triples.update(sparql, prefixes=self.config.prefixes)

    def query_json(self, sparql: str) -> bytes:
        """The standard SPARQL 1.1 JSON results document (SELECT/ASK) or N-Triples (CONSTRUCT)."""
        result = self.query(sparql)
        if isinstance(result, ox.QueryTriples):
            return result.serialize(format=ox.RdfFormat.N_TRIPLES)
        return result.serialize(format=ox.QueryResultsFormat.JSON)

    # -- catalog views -----------------------------------------------------------------
    def resolve(self, ref: str) -> str | None:
        """An IRI for ``ref``: a full IRI, a prefixed name (``wd:Q42``), or a short id (``Q42``)."""
        self._check_open()
        if ref.startswith("<") and ref.endswith(">"):
            return ref[1:-1]
        if "://" in ref:
            return ref
        if ":" in ref:
            prefix, _, rest = ref.partition(":")
            ns = self.config.prefixes.get(prefix)
            if ns:
                return ns + rest
        with self.catalog.connect() as con:
            row = con.execute(
                "SELECT iri FROM entities WHERE id = ? ORDER BY popularity DESC LIMIT 1", [ref]).fetchone()
            if row is None:
                row = con.execute("SELECT iri FROM relations WHERE id = ? LIMIT 1", [ref]).fetchone()
            if row is None:  # an id merged into another answers as an alias of its target
                row = (redirect_target(con, ref),)
        return row[0] if row else None

    def entity(self, ref: str, *, max_facts: int = 500) -> EntityView | None:
        iri = self.resolve(ref)
        if iri is None:
            return None
        with self.catalog.connect() as con:
            row = con.execute(
                "SELECT iri, id, label, description, aliases, popularity, is_mediator FROM entities WHERE iri = ?",
                [iri]).fetchone()
            if row is None and (target := redirect_target(con, iri)) is not None:
                iri = target
                row = con.execute("SELECT iri, id, label, description, aliases, popularity, is_mediator "
                                  "FROM entities WHERE iri = ?", [iri]).fetchone()
            if row is None:
                return None
            rows = subject_fact_rows(con, getattr(self._triples, "rdf", None), iri)
            relations = relations_by_key(con, [r.p for r in rows])
            value_labels, _ = labels_by_key(con, [r.o for r in rows if not r.literal], ())
            facts = sorted(((r.p, *relations.get(r.p, (None, None)), r.o, r.literal,
                             None if r.literal else value_labels.get(r.o), r.datatype, r.lang) for r in rows),
                           key=lambda f: (f[2] if f[2] is not None else f[0], f[3]))[:max_facts]
            incoming = con.execute("SELECT count(*) FROM statements WHERE o = ? AND NOT o_literal", [iri]).fetchone()[0]
        return EntityView(
            iri=row[0], id=row[1], label=row[2], description=row[3], aliases=list(row[4] or []),
            popularity=row[5] or 0, is_mediator=bool(row[6]),
            facts=[Fact(*f) for f in facts], incoming=incoming,
        )

    def reading(self):
        """Keep one catalog connection open for the block: the many small reads of one task
        (answering a question) then share it and DuckDB's caches, instead of opening the
        catalog for each read (1 ms on a small store; 20 ms and cold caches at 10M
        entities). A writer in another process waits until the block ends."""
        self._check_open()
        return self.catalog.pinned()

    def label(self, iri: str) -> str | None:
        with self.catalog.connect() as con:
            row = con.execute("SELECT label FROM entities WHERE iri = ? UNION ALL "
                              "SELECT label FROM relations WHERE iri = ? LIMIT 1", [iri, iri]).fetchone()
        return row[0] if row else None

    def labels(self, iris: Iterable[str]) -> dict[str, str]:
        """The catalog label of each entity or relation IRI that has one."""
        wanted = sorted(set(iris))
        if not wanted:
            return {}
        with self.catalog.connect() as con:
            entity_labels, relation_labels = labels_by_key(con, wanted, wanted)
        return {**entity_labels, **relation_labels}

    def popularity(self, iris: Iterable[str]) -> dict[str, int]:
        """Catalog popularity (facts as subject plus as object) of each IRI; 0 if unknown."""
        return self._counts("entities", "popularity", iris)

    def relation_usage(self, iris: Iterable[str]) -> dict[str, int]:
        """How many facts of the store use each relation IRI (its catalog usage); 0 if unknown.
        The relations a store holds most are the ones that tell most about its entities."""
        return self._counts("relations", "usage", iris)

    def _counts(self, table: str, column: str, iris: Iterable[str]) -> dict[str, int]:
        """A count column of the catalog (``table`` is entities or relations) for each IRI; 0 if unknown."""
        wanted = sorted(set(iris))
        if not wanted:
            return {}
        with self.catalog.connect() as con:
            rows = con.execute(f"SELECT iri, {column} FROM {table} WHERE list_contains(?, iri)", [wanted]).fetchall()
        found = {iri: int(n or 0) for iri, n in rows}
        return {iri: found.get(iri, 0) for iri in wanted}

    def mediators(self, iris: Iterable[str]) -> set[str]:
        """Which of ``iris`` are mediator (CVT) nodes or skolemised blank nodes: nodes that
        only join facts (a film performance, a statement), never an answer in themselves."""
        wanted = sorted(set(iris))
        found = {iri for iri in wanted if iri.startswith(SKOLEM)}
        rest = [iri for iri in wanted if iri not in found]
        if rest and self._holds_mediators():
            with self.catalog.connect() as con:
                rows = con.execute("SELECT iri FROM entities WHERE list_contains(?, iri) AND is_mediator",
                                   [rest]).fetchall()
            found.update(iri for (iri,) in rows)
        return found

    def _holds_mediators(self) -> bool:
        """Whether the catalog flags any entity as a mediator (asked once per open store)."""
        if self._mediators_held is None:
            with self.catalog.connect() as con:
                self._mediators_held = con.execute("SELECT 1 FROM entities WHERE is_mediator LIMIT 1").fetchone() \
                    is not None
        return self._mediators_held

    ENTITY_NAME_COLUMNS = ("iri", "label", "aliases", "description", "popularity", "names_hash")

    def entity_names_signature(self) -> str:
        """A digest of every labelled, non-mediator entity's naming columns (label, aliases,
        description, popularity): equal digests mean :meth:`entity_names` would yield the same rows."""
        self._check_open()
        with self.catalog.connect() as con:
            count, digest = con.execute(
                "SELECT count(*), coalesce(bit_xor(hash(iri, label, aliases, description, popularity)), 0) "
                "FROM entities WHERE label IS NOT NULL AND NOT coalesce(is_mediator, FALSE)").fetchone()
        return f"{count}:{digest}"

    def entity_names(self, *, batch_rows: int = 50_000) -> Iterator["pa.RecordBatch"]:
        """Every labelled, non-mediator entity's naming columns, streamed in Arrow record
        batches of at most ``batch_rows`` rows: ``iri``, ``label``, ``aliases`` (list),
        ``description``, ``popularity`` (0 when unknown) and ``names_hash`` (a hash of label
        and aliases: it changes when, and only when, the entity's names change)."""
        self._check_open()
        with self.catalog.connect() as con:
            cur = con.cursor()
            try:
                reader = cur.sql(
                    "SELECT iri, label, aliases, description, coalesce(popularity, 0) AS popularity, "
                    "hash(label, aliases) AS names_hash FROM entities "
                    "WHERE label IS NOT NULL AND NOT coalesce(is_mediator, FALSE)").to_arrow_reader(batch_rows)
                yield from reader
            finally:
                cur.close()

    def missing_iris(self, iris: Iterable[str | None]) -> list[str]:
        """The IRIs among ``iris`` that name nothing in the store (neither in the catalog
        nor in any triple), sorted. An answer or query with one is a hallucinated identifier."""
        wanted = sorted({i for i in iris if i})
        if not wanted:
            return []
        with self.catalog.connect() as con:
            known = {row[0] for row in con.execute(
                "SELECT iri FROM entities WHERE list_contains(?, iri) UNION "
                "SELECT iri FROM relations WHERE list_contains(?, iri)", [wanted, wanted]).fetchall()}
        missing = []
        for iri in wanted:
            if iri in known:
                continue
            if "<" in iri or ">" in iri or " " in iri or '"' in iri:
                missing.append(iri)
                continue
            if not self.query(f"ASK {{ {{ <{iri}> ?p ?o }} UNION {{ ?s ?p <{iri}> }} UNION {{ ?s <{iri}> ?o }} }}"):
                missing.append(iri)
        return missing

    def entities_by_label(self, labels: Sequence[str]) -> list[tuple[str, str] | None]:
        """For each label, the (IRI, label) of the most popular entity whose label (any
        case) or alias it is; None where no entity has it."""
        out: list[tuple[str, str] | None] = []
        with self.catalog.connect() as con:
            for label in labels:
                row = con.execute(
                    "SELECT iri, label FROM entities WHERE lower(label) = lower(?) OR list_contains(aliases, ?) "
                    "ORDER BY popularity DESC LIMIT 1", [label.strip(), label.strip()]).fetchone()
                out.append((row[0], row[1]) if row else None)
        return out

    def edges(self, iri: str, *, direction: str = "both", limit: int = 200) -> list[Edge]:
        """Direct facts of entity ``iri`` with labels: ``out`` (it is the subject), ``in``
        (it is the object) or ``both``; at most ``limit`` per direction, one per relation
        first so that a hub's many facts of one relation do not hide its other relations.
        Read through Oxigraph's indexes where the store has its own (a hub's incoming facts
        from its first 10,000 triples), else from the catalog (kgstore/_entity_facts.py)."""
        if direction not in ("out", "in", "both"):
            raise ValueError("direction is out, in or both")
        sides = [s for s in ("out", "in") if direction in (s, "both")]
        rdf = getattr(self._triples, "rdf", None)  # None: the triples live in an endpoint
        rows: list[FactRow] = []
        with self.catalog.connect() as con:
            for side in sides:
                rows += ranked_fact_rows(con, rdf, iri, side, limit)
            entity_labels, relation_labels = labels_by_key(
                con, [r.s for r in rows] + [r.o for r in rows if not r.literal], [r.p for r in rows])
        return [Edge(r.s, r.p, r.o, entity_labels.get(r.s), relation_labels.get(r.p),
                     None if r.literal else entity_labels.get(r.o), r.literal, r.datatype) for r in rows]

    def stats(self) -> dict[str, Any]:
        self._check_open()
        with self.catalog.connect() as con:
            one = lambda q: con.execute(q).fetchone()[0]  # noqa: E731
            stats = {
                "triples": self._triples.count(),
                "statements": one("SELECT count(*) FROM statements"),
                "entities": one("SELECT count(*) FROM entities"),
                "entities_labelled": one("SELECT count(*) FROM entities WHERE label IS NOT NULL"),
                "mediators": one("SELECT count(*) FROM entities WHERE is_mediator"),
                "relations": one("SELECT count(*) FROM relations"),
                "ingest_runs": one("SELECT count(*) FROM ingest_runs WHERE status <> 'superseded'"),
                "rejected_lines": one("SELECT count(*) FROM rejected"),
            }
        return stats


def _take_writer_lock(path: Path) -> int:
    fd = os.open(path / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or None
        os.close(fd)
        raise StoreLockedError(path, holder) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
    return fd


__all__ = ["Store", "EntityView", "Fact", "Edge", "KgstoreError"]

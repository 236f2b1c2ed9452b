"""The property-graph interface every backend implements, and the fixed schema they share.

The schema fits any knowledge graph, so one Cypher query runs unchanged on every backend::

    (:Entity {iri, id, label, description, popularity, is_mediator})
        -[:REL {pid, label, iri}]->        (:Entity)      one per distinct entity-to-entity fact
        -[:HAS_VALUE {pid, label, iri}]->  (:Literal {key, value, label, datatype, lang})

* ``iri`` is the Entity key: short ids (``Q42``, ``m.0abc``) can repeat across namespaces.
* ``REL.label``/``HAS_VALUE.label`` hold the relation's label (its id when it has none) and
  ``pid`` its short id, so ``MATCH (a:Entity {id:"Q42"})-[r]->(b) RETURN r.label, b.label``
  lists an entity's facts, values included.
* Literal facts are nodes, one per distinct (value, datatype, language), because Cypher can
  then treat them like any other object (``-[r]->(b)``), and entities sharing a value (a
  year, a number) meet at one node. ``label`` repeats ``value`` so ``b.label`` always reads.
"""
from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

ENTITY = "Entity"
LITERAL = "Literal"
REL = "REL"
HAS_VALUE = "HAS_VALUE"


@dataclass
class SyncProgress:
    """Reported while syncing: ``stage`` is one of export, Entity, Literal, REL, HAS_VALUE, cleanup."""

    stage: str
    done: int  # rows loaded so far, over all stages
    total: int  # rows to load in all


ProgressCallback = Callable[[SyncProgress], None]


@dataclass
class GraphCounts:
    entities: int = 0
    literals: int = 0
    edges: int = 0  # entity-to-entity relationships (REL)
    values: int = 0  # entity-to-literal relationships (HAS_VALUE)

    @property
    def nodes(self) -> int:
        return self.entities + self.literals

    @property
    def relationships(self) -> int:
        return self.edges + self.values


@dataclass
class SyncReport:
    backend: str
    counts: GraphCounts
    seconds: float
    export_seconds: float = 0.0  # writing Parquet from the catalog
    load_seconds: float = 0.0  # the backend's own loading
    catalog_state: str = ""  # what the catalog looked like, to tell when the graph is stale
    location: str = ""
    stages: dict[str, float] = field(default_factory=dict)
    mode: str = "full"  # "full": every row was loaded; "incremental": only what changed
    upserted: int = 0  # rows sent (nodes and relationships, new or changed)
    deleted: int = 0  # rows deleted because the store no longer holds them

    @property
    def edges_per_second(self) -> float:
        return self.counts.relationships / self.seconds if self.seconds else 0.0

    def __str__(self) -> str:
        c = self.counts
        return (f"{self.backend}: {c.entities:,} entities, {c.literals:,} literals, {c.edges:,} edges "
                f"(entity to entity), {c.values:,} values in {self.seconds:.1f} s "
                f"({self.edges_per_second:,.0f} relationships/s)")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["counts"]["nodes"] = self.counts.nodes
        d["counts"]["relationships"] = self.counts.relationships
        return d


class PropertyGraph(abc.ABC):
    """A property-graph mirror of one store. Get one with :func:`kgstore.graph.open_graph`."""

    name: str
    last_columns: list[str] = []  # the column names of the last query, even when it returned no rows

    @abc.abstractmethod
    def sync(self, store, progress: ProgressCallback | None = None, *, full: bool = False) -> SyncReport:
        """Mirror the store's catalog into the graph: afterwards the graph holds exactly
        the store's rows, so running it twice gives the same graph. A backend may send only
        what changed since its last sync; ``full`` makes it send everything."""

    @abc.abstractmethod
    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False) -> list[dict]:
        """Run Cypher; rows are dicts keyed by the returned column names. Without ``write``
        a query that writes is refused (:class:`kgstore.QueryError`)."""

    @abc.abstractmethod
    def counts(self) -> GraphCounts:
        """Nodes and relationships now in the graph."""

    @abc.abstractmethod
    def is_synced(self) -> bool:
        """Whether a sync has ever completed."""

    def last_sync(self) -> dict | None:
        """The report of the last completed sync, as a dict, when the backend keeps one."""
        return None

    def close(self) -> None:
        """Release files and connections (idempotent)."""

    def __enter__(self) -> "PropertyGraph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

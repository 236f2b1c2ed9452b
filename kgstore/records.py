"""Records that cross package boundaries: loaders produce them, the store consumes them."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, Protocol


class Triple(NamedTuple):
    """One RDF triple. Subjects and predicates are IRIs (no angle brackets).

    ``literal`` is False when ``o`` is an IRI; otherwise ``o`` is the lexical form and
    ``datatype``/``lang`` qualify it (neither set means xsd:string). Blank nodes never
    appear here: loaders skolemise them with ``kgstore.terms.skolem_iri`` so that the same
    node in two batches stays one node.
    """

    s: str
    p: str
    o: str
    literal: bool = False
    datatype: str | None = None
    lang: str | None = None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a loader can restart: decompressed byte offset just past ``line_no``."""

    offset: int
    line_no: int


@dataclass(slots=True)
class EntityRecord:
    """What a loader knows about one entity. ``None`` fields mean "unknown here", so a
    later record (e.g. a Freebase name line) can fill them in without erasing others."""

    iri: str
    id: str
    label: str | None = None
    description: str | None = None
    aliases: tuple[str, ...] = ()
    sitelinks: int | None = None
    is_mediator: bool = False
    kind: str = "item"


@dataclass(slots=True)
class RelationRecord:
    iri: str
    id: str
    label: str | None = None
    description: str | None = None
    inverse_label: str | None = None
    datatype: str | None = None
    is_mediator_type: bool = False


@dataclass(frozen=True, slots=True)
class RejectedLine:
    line_no: int
    reason: str
    raw: str


@dataclass(slots=True)
class Batch:
    """A unit of work a loader hands to the store; committed atomically with its checkpoint."""

    checkpoint: Checkpoint
    triples: list[Triple] = field(default_factory=list)
    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    rejected: list[RejectedLine] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    # Entity documents that say an entity is gone (``"missing"``/``"deleted"``) and redirects
    # (from IRI, to IRI). An ingest only counts them; ``kgstore update`` applies them.
    deleted: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    # For progress bars: how far into the *compressed* file the reader is.
    raw_position: int = 0


@dataclass(frozen=True, slots=True)
class LoadOptions:
    languages: tuple[str, ...] = ("en",)
    properties: frozenset[str] | None = None  # allowlist of relation ids, e.g. {"P31", "P279"}
    entities: frozenset[str] | None = None  # allowlist of entity ids
    statements: str = "truthy"  # "truthy" or "full" (Wikidata p:/ps:/pq: statement nodes)
    namespace: str = "http://kgstore.local/entity/"  # for plain triple files
    relation_namespace: str | None = None  # defaults to namespace + "relation/"
    separator: str | None = None  # plain triple files: None = guess tab or '|'
    batch_size: int = 5000  # entities (JSON) or lines (line formats) per batch

    def option_dict(self) -> dict:
        return {
            "languages": list(self.languages),
            "properties": sorted(self.properties) if self.properties is not None else None,
            "entities": len(self.entities) if self.entities is not None else None,
            "statements": self.statements,
            "namespace": self.namespace,
            "separator": self.separator,
        }


class Loader(Protocol):
    """A streaming reader of one dump format.

    ``batches`` reads ``path`` (plain, .gz or .bz2) from ``start`` (None = the beginning)
    and yields batches whose checkpoint is where reading can restart after that batch.
    It never raises for a malformed record: it reports it in ``Batch.rejected``.
    """

    name: str

    def batches(self, path: str, options: LoadOptions, start: Checkpoint | None = None) -> Iterator[Batch]: ...

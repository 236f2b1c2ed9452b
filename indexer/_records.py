"""Records the index hands to its callers (search hits, link candidates, build summaries)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

KINDS: tuple[str, ...] = ("entities", "relations", "uris", "statements", "triples")
"""Index kinds, in build order (cheap and shared texts first, so later kinds can reuse vectors)."""


@dataclass(frozen=True)
class SearchHit:
    """One search result. ``score`` is the cosine similarity to the query (1 = same direction).

    ``iri``/``label`` name what the hit points to: the entity (entities, uris), the relation
    (relations), the subject (triples) or the first relation of the pattern (statements).
    ``extra`` holds the kind's details: for triples ``s``, ``p``, ``o`` (``p`` is a list of
    two IRIs through a mediator, with ``via`` the mediator), ``o_literal``, ``s_label``,
    ``p_label``, ``o_label``; for statements ``pattern``, ``answer``, ``given``,
    ``relations``; for entities ``alias`` when the hit came through an alias.
    """

    kind: str
    iri: str
    label: str
    score: float
    text: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def triple(self) -> tuple[str, Any, str] | None:
        """``(s, p, o)`` for triple hits, else None."""
        if self.kind != "triples":
            return None
        return self.extra.get("s"), self.extra.get("p"), self.extra.get("o")

    @property
    def pattern(self) -> str | None:
        return self.extra.get("pattern") if self.kind == "statements" else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Candidate:
    """An entity-linking candidate, best first in the lists that hold them.

    ``match`` says how it was found: ``exact`` (the label as written), ``label`` (the label
    after case-folding and punctuation stripping), ``alias`` (an alias, either way) or
    ``vector`` (a nearest neighbour in the entity index only). ``score`` is in [0, 1] and
    combines match, vector similarity and popularity. ``span`` gives the mention's
    ``(start, end)`` character offsets in the question (``link_question`` only).
    """

    iri: str
    label: str
    score: float
    mention: str
    match: str
    popularity: int = 0
    description: str | None = None
    similarity: float | None = None
    span: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class KindSummary:
    kind: str
    items: int = 0  # live entries after the build
    added: int = 0  # entries added in this build
    deleted: int = 0  # entries marked deleted in this build
    embedded: int = 0  # texts run through the encoder
    reused: int = 0  # added entries whose vector was copied from an equal text
    seconds: float = 0.0


@dataclass
class BuildSummary:
    store: str
    encoder: str
    fingerprint: str
    rebuilt: bool
    kinds: dict[str, KindSummary] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # kind -> why this build left it out
    seconds: float = 0.0
    embed_seconds: float = 0.0  # inside the encoder, model loading excluded
    model_load_seconds: float = 0.0  # loading the model, when this build had to

    @property
    def embedded(self) -> int:
        return sum(k.embedded for k in self.kinds.values())

    @property
    def added(self) -> int:
        return sum(k.added for k in self.kinds.values())

    @property
    def deleted(self) -> int:
        return sum(k.deleted for k in self.kinds.values())

    @property
    def items_per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0


@dataclass
class BuildProgress:
    """Passed to the build's ``progress`` callback after each batch."""

    kind: str
    phase: str  # "scan" (reading the catalog), "embed" (adding entries), "done"
    done: int
    total: int
    embedded: int

"""The records of an open answer: the numbered facts it may cite, the ground graph they
make, and the sentences written from them."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..steps._result import Evidence
from ..steps._values import literal_value

_ISO_DATE = re.compile(r"^[+-]?\d{4}-\d\d-\d\d(?:T00:00:00Z?)?$")
XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"


@dataclass(frozen=True)
class Fact:
    """One numbered fact an answer may cite: a subject's relation and its values (one
    store triple each), where it came from (``sketch``: a sketched fact the store's triple
    index verified; ``telling``: one of the subject's most used relations; ``sketch-unverified``:
    the model's own guess, only in the no-verification ablation), and the store it is from
    when an answer reads several (its evidence may come from more than one: both stores
    hold a place of birth)."""

    n: int
    subject: str
    relation: str
    values: tuple[str, ...]
    evidence: tuple[Evidence, ...] = ()
    source: str = "sketch"
    store: str | None = None

    def text(self) -> str:
        """``[2] Nepal | capital | Kathmandu``, the line the writer reads."""
        return f"[{self.n}] {self.subject} | {self.relation} | {'; '.join(self.values)}"

    def to_dict(self) -> dict[str, Any]:
        out = {"n": self.n, "subject": self.subject, "relation": self.relation, "values": list(self.values),
               "source": self.source, "evidence": [e.to_dict() for e in self.evidence]}
        if self.store is not None:
            out["store"] = self.store
            out["stores"] = self.stores()
        return out

    def stores(self) -> list[str]:
        """The stores whose triples back the fact, in order (two when both hold it)."""
        return list(dict.fromkeys(e.store for e in self.evidence if e.store is not None)) or \
            ([self.store] if self.store else [])


def value_text(evidence: Evidence) -> str:
    """A fact's value as people read it: dates as dates, numbers without a sign."""
    if evidence.literal:
        datatype = evidence.datatype
        if datatype is None and _ISO_DATE.match(evidence.o):
            datatype = XSD_DATE  # a date the index kept without its datatype
        return literal_value(evidence.o, datatype).text
    return evidence.o_label or evidence.o


@dataclass
class GroundGraph:
    """What an open answer may say: the subject the question names, as the store holds it,
    and the numbered facts about it."""

    subject_iri: str | None
    subject_label: str
    facts: list[Fact] = field(default_factory=list)

    def by_number(self) -> dict[int, Fact]:
        return {f.n: f for f in self.facts}


@dataclass(frozen=True)
class Sentence:
    """One sentence of an open answer and the facts it cites. ``status`` says what the
    checker made of it: ``written`` (the model's, every claim found in its facts),
    ``verbalized`` (the model's failed the check and a plain verbalization of its facts
    stands instead; ``dropped`` says what was unsupported) or ``added`` (a plain
    verbalization of facts no sentence cited)."""

    text: str
    facts: tuple[int, ...]
    status: str = "written"
    dropped: str | None = None
    unsupported: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "facts": list(self.facts), "status": self.status}
        if self.dropped is not None:
            out["dropped"] = self.dropped
            out["unsupported"] = list(self.unsupported)
        return out

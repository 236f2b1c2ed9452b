"""Comparisons of two things the question names, enumerated from what the store holds of
both (the last stage of composing): for each relation both entities hold,

* **order**: which of the two has the earlier (lower) or the later (higher) value;
* **equality**: whether they share a value (the same year, language, director);
* **difference**: how far apart their values are (years, numbers);
* **counts**: which holds more (or fewer) values of it, and by how many ("how many more
  films did A direct than B").

Only relations both hold are offered, and only values that order are ordered or
subtracted. Each candidate is computed from the two entities' facts, grouped as the yes/no
and comparison checks group them (:func:`qa.shapes.entity_attributes`), which are its
evidence.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..shapes import Attribute, entity_attributes
from ..steps._result import Answer, Evidence
from ..steps._values import literal_value
from ._reading import LinkedEntity, QuestionReading

KINDS = ("earlier", "later", "same", "difference", "more", "fewer", "count difference")
# the kinds whose answer is a number
NUMBER_KINDS = ("difference", "count difference")
# the kinds that compare how many each holds
COUNT_KINDS = ("more", "fewer", "count difference")
_XSD = "http://www.w3.org/2001/XMLSchema#"


@dataclass(frozen=True)
class Side:
    """One entity's facts of the compared relation (the store's grouping of its facts by
    relation and direction, :func:`qa.shapes.entity_attributes`)."""

    entity: LinkedEntity
    attribute: Attribute

    @property
    def facts(self) -> list[Evidence]:
        return self.attribute.facts

    def values(self) -> set[str]:
        return set(self.attribute.other_ends())


@dataclass(frozen=True)
class Comparison:
    """Two named entities compared on ``relation``: ``kind`` is one of :data:`KINDS`.
    ``answers`` once computed (an entity's label, ``yes``/``no``, or a number)."""

    first: Side
    second: Side
    relation: str
    relation_label: str
    backward: bool
    kind: str
    answers: tuple[str, ...] = ()
    stage: str = "comparison"
    hops: int = 1
    size: int = 1

    @property
    def topic(self) -> LinkedEntity:
        return self.first.entity

    def answer(self, question: str, method: str) -> Answer:
        """The computed answer as the standard record, the compared facts its evidence."""
        evidence = list(self.first.facts[:5]) + list(self.second.facts[:5])
        text = self.answers[0]
        if self.kind in ("earlier", "later", "more", "fewer"):
            winner = self.first.entity if text == self.first.entity.label else self.second.entity
            return Answer(question=question, method=method, answers=[winner.label], answer_iris=[winner.iri],
                          values=[None], evidence=evidence, shape="comparison")
        if self.kind == "same":
            return Answer(question=question, method=method, answers=[text], answer_iris=[None], evidence=evidence,
                          values=[{"value": text, "lexical": "true" if text == "yes" else "false",
                                   "datatype": _XSD + "boolean", "kind": "boolean"}], shape="comparison")
        value = literal_value(text, _XSD + "decimal" if "." in text else _XSD + "integer")
        return Answer(question=question, method=method, answers=[value.text], answer_iris=[None], evidence=evidence,
                      values=[value.to_dict()], shape="comparison")


def pair(reading: QuestionReading) -> tuple[LinkedEntity, LinkedEntity] | None:
    """The two things compared: the best entities of the two surest mentions that do not
    overlap (the reading's order: bracketed first, then by the link's score), in the order
    the question names them; None when it names fewer. A common word the store also holds
    as a name ("more", "films") links weakly, and is not one of them; nor is a word linked by
    meaning alone ("movies" near the title *Movie Movie*: "which movies have the same
    screenwriter as X" compares nothing)."""
    chosen = []
    for m in reading.mentions:
        if m.best.match == "vector" and not m.bracketed:
            continue
        if any(m.span[0] < c.span[1] and c.span[0] < m.span[1] for c in chosen):
            continue
        if all(m.best.iri != c.best.iri for c in chosen):
            chosen.append(m)
        if len(chosen) == 2:
            first, second = sorted(chosen, key=lambda c: c.span[0])
            return first.best, second.best
    return None


def comparisons(store, reading: QuestionReading, *, timeout_s: float) -> list[Comparison]:
    """Every comparison the store can compute of the question's two named things."""
    both = pair(reading)
    if both is None:
        return []
    a, b = both
    of_a = entity_attributes(store, a.iri, timeout_s=timeout_s)
    of_b = entity_attributes(store, b.iri, timeout_s=timeout_s)
    # a comparative asks for one end ("which is older"): the other end is not offered,
    # since the encoder reads "earlier" and "later" alike
    lower = reading.compares_lower
    if lower is None:  # "A versus B, which came first": an ordering word asks for one end too
        lower = reading.order_ascending
    kinds = [k for k in KINDS if lower is None or k != ("later" if lower else "earlier")]
    if reading.compares_lower is not None and not reading.compares_counts:
        # a comparative of values ("which came out later", "who is older") asks which value
        # is higher, not which of the two holds more of them: the encoder reads "later"
        # near "fewer written by" as near "the later release year"
        kinds = [k for k in kinds if k not in COUNT_KINDS]
    if reading.asks_count:  # "how many more", "how many years apart": the answer is a number
        kinds = [k for k in kinds if k in NUMBER_KINDS]
    elif reading.asks_yes_no:  # "were A and B released in the same year": yes or no
        kinds = ["same"]
    out = []
    for key in sorted(set(of_a) & set(of_b)):
        first, second = Side(a, of_a[key]), Side(b, of_b[key])
        relation, backward = key
        for kind in kinds:
            computed = _compute(kind, first, second, backward)
            if computed is not None:
                out.append(Comparison(first, second, relation, of_a[key].label, backward, kind, (computed,)))
    return out


def _compute(kind: str, first: Side, second: Side, backward: bool) -> str | None:
    if kind == "same":
        return "yes" if first.values() & second.values() else "no"
    if kind in ("more", "fewer", "count difference"):
        x, y = len(first.values()), len(second.values())
        if x == y or max(x, y) < 2:
            return None  # one value each is a value, not a count
        if kind == "count difference":
            return str(abs(x - y))
        return (first if (x > y) == (kind == "more") else second).entity.label
    # one literal value each, so "earlier" and "how far apart" mean one thing
    if backward or not (first.attribute.literal and second.attribute.literal):
        return None
    x, y = first.attribute.numbers(), second.attribute.numbers()
    if len(x) != 1 or len(y) != 1 or len(first.facts) != 1 or len(second.facts) != 1:
        return None
    if kind == "difference":
        gap = abs(x[0] - y[0])
        return f"{int(gap)}" if gap.is_integer() or first.attribute.dates else f"{gap:g}"
    if x[0] == y[0]:
        return None
    low = first if x[0] < y[0] else second
    high = second if low is first else first
    return (low if kind == "earlier" else high).entity.label


def comparison_text(c: Comparison) -> str:
    """The comparison in words, for the encoder and the model (pure)."""
    a, b, label = c.first.entity.label, c.second.entity.label, c.relation_label
    if c.kind == "same":
        return f"do {a} and {b} have the same {label}"
    if c.kind == "difference":
        return f"how far apart (the difference between) the {label} of {a} and of {b}"
    if c.kind == "count difference":
        return f"how many more {label} (the difference between the numbers of {label}) {a} has than {b}"
    if c.kind in ("more", "fewer"):
        return f"which of {a} and {b} has {c.kind} {label}"
    which = "earlier (older, lower, first)" if c.kind == "earlier" else "later (newer, higher, last)"
    return f"which of {a} and {b} has the {which} {label}"


__all__ = ["Comparison", "Side", "comparisons", "comparison_text", "pair", "KINDS", "NUMBER_KINDS", "COUNT_KINDS"]

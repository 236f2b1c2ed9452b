"""Comparisons and superlatives: order entities by a value the store holds for each.

* **Comparison** ("Which country has the larger population, India or Nepal?", "Who covers
  more countries, the Andes or the Himalayas?", "Is India larger than Nepal?"): the
  options are the entities the question names. The value is a relation every option
  holds: a number or a date (population, date of birth, a release year named "1999"), or
  how many facts of a relation each has (countries covered). The encoder picks it against
  the words that follow the comparative ("population", "countries"); the comparative's
  direction orders.
* **Superlative** ("What is the highest mountain in the Himalayas?"): the options are the
  answers of the chain the rest of the question asks for; the value is an ordered relation
  most of them hold, picked by the encoder against the superlative and its phrase.

The compared values are the evidence, so the answer shows why.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..steps._result import Answer, Evidence, Refusal
from ..steps._retrieval import store_labels
from ..steps._values import comparable, is_date
from ._attributes import Attribute, AttributeKey, entity_attributes, rank_attributes
from ._boolean import yes_no_answer
from ._detect import QuestionShape
from ._mentions import Mention
from ._reading import ShapeReading

MAX_OPTIONS = 100
EVIDENCE_PER_OPTION = 5
# A superlative's value must be held by at least this share of the options
SUPERLATIVE_COVERAGE = 0.5


@dataclass(frozen=True)
class Measure:
    """What options are ordered by: a relation's values, or (``count``) how many it has."""

    key: AttributeKey
    label: str
    count: bool
    dates: bool

    def of(self, attribute: Attribute | None, direction: str) -> float | None:
        if attribute is None:
            return 0.0 if self.count else None
        if self.count:
            return float(len(attribute.facts))
        numbers = attribute.numbers()
        if not numbers:
            return None
        return max(numbers) if direction == "max" else min(numbers)

    def to_dict(self) -> dict:
        return {"relation": self.key[0], "backward": self.key[1], "label": self.label, "count": self.count,
                "dates": self.dates}


def measures(options: Sequence[dict[AttributeKey, Attribute]], *, coverage: float = 1.0,
             counts: bool = True) -> tuple[list[Measure], list[Attribute]]:
    """The measures enough options hold: ordered relations, and with ``counts`` every
    entity relation counted; with one representative attribute each (for its label)."""
    held: dict[AttributeKey, list[Attribute]] = {}
    for attrs in options:
        for key, attr in attrs.items():
            held.setdefault(key, []).append(attr)
    need = max(1, int(round(coverage * len(options))))
    out, reps = [], []
    for key, attrs in held.items():
        if len(attrs) < need:
            continue
        if all(a.ordered for a in attrs):
            out.append(Measure(key, attrs[0].label, False, any(a.dates for a in attrs)))
            reps.append(attrs[0])
        if counts and not any(a.literal for a in attrs):
            out.append(Measure(key, attrs[0].label, True, False))
            reps.append(attrs[0])
    return out, reps


def pick_measure(embed, text: str, found: list[Measure], reps: list[Attribute], *,
                 temporal: bool = False) -> tuple[Measure | None, list]:
    """The measure whose label reads closest to ``text``; only dates compete when the
    question orders by time and some measure is one."""
    if temporal and any(m.dates for m in found):
        kept = [i for i, m in enumerate(found) if m.dates]
        found, reps = [found[i] for i in kept], [reps[i] for i in kept]
    ranked = rank_attributes(embed, text, reps, count=[m.count for m in found])
    record = [{"measure": found[i].to_dict(), "score": round(s, 4)} for s, i in ranked[:8]]
    return (found[ranked[0][1]] if ranked else None), record


def _facts(attribute: Attribute | None, n: int) -> list[Evidence]:
    return list(attribute.facts[:n]) if attribute else []


def answer_comparison(store, index, reading: ShapeReading, method: str, run, *,
                      timeout_s: float = 5.0) -> Answer | None:
    """The option that wins the comparison (or yes/no for "is X … than Y"), with the
    compared values as evidence; None when the question names fewer than two options."""
    question, shape, mentions = reading.question, reading.shape, reading.mentions
    named = [m for m in mentions if m.written_as_name]
    # a common word that also names an entity ("people": human) is no option beside names
    options = named if len(named) >= 2 else mentions
    options = options[:2] if shape.yes_no else options
    if len(options) < 2:
        return None
    attrs = [entity_attributes(store, m.iri, timeout_s=timeout_s) for m in options]
    found, reps = measures(attrs)
    asked = reading.measured
    measure, ranked = pick_measure(index.embed, asked, found, reps, temporal=shape.temporal)
    meant = [m.to_dict() for m in mentions]
    if measure is None:
        run.record("comparison", asked=asked, measures=0)
        return Answer(question=question, method=method, shape="comparison", meant=meant,
                      refusal=Refusal("no_answer", "the store holds no value that all of "
                                      + " and ".join(m.label for m in options) + " have"))
    direction = shape.direction(dates=measure.dates)
    values = [measure.of(a.get(measure.key), direction) for a in attrs]
    run.record("comparison", asked=asked, direction=direction, measures=ranked,
               values={m.label: v for m, v in zip(options, values)})
    known = [(v, i) for i, v in enumerate(values) if v is not None]
    if len(known) < 2:
        return Answer(question=question, method=method, shape="comparison", meant=meant,
                      refusal=Refusal("no_answer", f"the store has {measure.label} for fewer than two of them"))
    best = max(v for v, _ in known) if direction == "max" else min(v for v, _ in known)
    winners = [i for v, i in known if v == best]
    evidence = [f for a in attrs for f in _facts(a.get(measure.key), EVIDENCE_PER_OPTION)]
    if shape.yes_no:
        return yes_no_answer(question, method, winners == [0], evidence, shape="comparison", meant=meant)
    return Answer(question=question, method=method, answers=[options[i].label for i in winners],
                  answer_iris=[options[i].iri for i in winners], evidence=evidence,
                  values=[None for _ in winners], shape="comparison", meant=meant)


def answer_superlative(store, index, reading: ShapeReading, chain: Answer, method: str, run, *,
                       timeout_s: float = 5.0) -> Answer:
    """The chain's answers ordered by the value the superlative names; the first (and
    any tied with it) answer. The chain's answer unchanged when it has fewer than two
    entities to order or none of its values orders."""
    shape = reading.shape
    iris = list(dict.fromkeys(i for i in chain.answer_iris if i))[:MAX_OPTIONS]
    chain.shape = "superlative"
    if len(iris) < 2:
        # "when was the last film X wrote released": the chain's answers are the values
        # themselves, and the superlative is the extreme one
        return _extreme_value(chain, shape, run) or chain
    attrs = [entity_attributes(store, iri, timeout_s=timeout_s) for iri in iris]
    found, reps = measures(attrs, coverage=SUPERLATIVE_COVERAGE)
    # a measure on which every option ties cannot pick one ("borders the fewest countries"
    # is not answered by a relation each of them holds once)
    kept = [i for i, m in enumerate(found) if _discriminates(m, attrs, shape)]
    found, reps = [found[i] for i in kept], [reps[i] for i in kept]
    asked = reading.ordered_by
    measure, ranked = pick_measure(index.embed, asked, found, reps, temporal=shape.temporal)
    if measure is None:
        run.record("superlative", asked=asked, measures=0)
        return chain
    direction = shape.direction(dates=measure.dates)
    values = [measure.of(a.get(measure.key), direction) for a in attrs]
    known = [(v, i) for i, v in enumerate(values) if v is not None]
    run.record("superlative", asked=asked, direction=direction, measures=ranked, options=len(iris),
               valued=len(known))
    if not known:
        return chain
    best = max(v for v, _ in known) if direction == "max" else min(v for v, _ in known)
    winners = [i for v, i in known if v == best]
    labels = store_labels(store, [iris[i] for i in winners])
    order = sorted(known, key=lambda x: -x[0] if direction == "max" else x[0])
    evidence = [f for _, i in order[:EVIDENCE_PER_OPTION] for f in _facts(attrs[i].get(measure.key), 2)]
    result = Answer(question=reading.question, method=method, answers=[labels.get(iris[i], iris[i]) for i in winners],
                    answer_iris=[iris[i] for i in winners], evidence=evidence + chain.evidence[:10],
                    values=[None for _ in winners], shape="superlative", meant=chain.meant, query=chain.query)
    return result


def _extreme_value(chain: Answer, shape: QuestionShape, run) -> Answer | None:
    """The chain's first or last value, when its answers are several values that all order
    (years, dates, numbers); None otherwise."""
    if chain.refused or len(chain.answers) < 2 or any(chain.answer_iris) or len(chain.values) != len(chain.answers):
        return None
    ordered = [comparable(v.get("lexical", ""), v.get("datatype")) if v else None for v in chain.values]
    if any(o is None for o in ordered):
        return None
    # years written as plain numbers (a "release year" of 1981) order as dates: the oldest is the least
    dates = all(v.get("kind") == "date" or is_date(v.get("lexical", ""), v.get("datatype"))
                or (o.is_integer() and 1000 <= o <= 2100) for v, o in zip(chain.values, ordered))
    direction = shape.direction(dates=dates)
    best = max(ordered) if direction == "max" else min(ordered)
    kept = [i for i, o in enumerate(ordered) if o == best]
    run.record("superlative", of_values=len(ordered), direction=direction)
    return Answer(question=chain.question, method=chain.method, answers=[chain.answers[i] for i in kept],
                  answer_iris=[None for _ in kept], values=[chain.values[i] for i in kept],
                  evidence=chain.evidence, shape="superlative", meant=chain.meant, query=chain.query)


def _discriminates(measure: Measure, attrs: Sequence[dict], shape: QuestionShape) -> bool:
    """Whether the options' values under ``measure`` are not all the same."""
    direction = shape.direction(dates=measure.dates)
    values = {measure.of(a.get(measure.key), direction) for a in attrs} - {None}
    return len(values) > 1


__all__ = ["answer_comparison", "answer_superlative", "Measure", "measures"]

"""A question decomposed into chains of sub-questions, one chain per key entity. Pure functions.

The model writes (held to this shape by ``prograg_decompose.gbnf``)::

    Entity: Mount Everest
    1. Which countries is Mount Everest in? | country
    2. What is the capital of [ANS1]? | city

``[ANS1]`` stands for the answers of the sub-question before; the text after ``|`` is the
answer type the next step is told. The chain's length is the number of hops. ``[ANS2]``
is not part of the shape: a model that writes it has run past the question (the method
stops generating there).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

_ENTITY = re.compile(r"^\s*Entity:\s*(.+?)\s*$")
_STEP = re.compile(r"^\s*\d+[.)]\s*(.+?)\s*$")
_SLOT = re.compile(r"\[ANS\d*\]", re.IGNORECASE)


@dataclass(frozen=True)
class SubQuestion:
    text: str
    answer_type: str = ""

    def filled(self, value: str) -> str:
        """The sub-question with ``[ANSn]`` replaced by ``value``."""
        return fill_slots(self.text, value)


@dataclass(frozen=True)
class Chain:
    """The sub-questions that lead from one key entity (as the model named it) to the answer."""

    entity: str
    steps: tuple[SubQuestion, ...]

    def to_dict(self) -> dict:
        return {"entity": self.entity, "steps": [{"question": s.text, "answer_type": s.answer_type}
                                                 for s in self.steps]}


def parse_decomposition(text: str, *, max_hops: int = 4) -> list[Chain]:
    """The chains in the model's text, in order; a chain with no sub-question is dropped,
    and one longer than ``max_hops`` is cut there. A sub-question that repeats the one
    before, slots aside, ends its chain: a small model runs on ("the capitals of [ANS1]",
    "the capitals of [ANS2]", ...) once the question is used up."""
    chains: list[Chain] = []
    entity, steps, cut = None, [], False

    def close():
        if entity and steps:
            chains.append(Chain(entity, tuple(steps[:max_hops])))

    for line in text.splitlines():
        if m := _ENTITY.match(line):
            close()
            entity, steps, cut = m.group(1), [], False
        elif (m := _STEP.match(line)) and entity and not cut:
            question, sep, answer_type = (x.strip() for x in m.group(1).partition("|"))
            if steps and _SLOT.sub("", steps[-1].text) == _SLOT.sub("", question):
                cut = True
            elif question and sep:  # without "|" the line was cut off (a stop sequence)
                steps.append(SubQuestion(question, answer_type))
    close()
    return chains


def cut_restatement(chain: Chain, similarity: Callable[[str, str], float], threshold: float) -> Chain:
    """The chain up to the first sub-question that says again what the one before asked
    ("Which languages are spoken in [ANS1]?" then "What are the languages spoken in
    [ANS1]?", 0.96 with MiniLM; consecutive real hops score 0.3-0.72), slots read as "it"."""
    steps = list(chain.steps[:1])
    for step in chain.steps[1:]:
        if similarity(steps[-1].filled("it"), step.filled("it")) >= threshold:
            break
        steps.append(step)
    return Chain(chain.entity, tuple(steps))


def fill_slots(text: str, value: str) -> str:
    return _SLOT.sub(lambda _: value, text)


def undecomposed(question: str, entity: str, hops: int) -> Chain:
    """The chain the method walks without decomposition (the ablation): the whole question
    at every hop, for ``hops`` hops, answer type unknown."""
    return Chain(entity, tuple(SubQuestion(question) for _ in range(hops)))


__all__ = ["Chain", "SubQuestion", "cut_restatement", "fill_slots", "parse_decomposition", "undecomposed"]

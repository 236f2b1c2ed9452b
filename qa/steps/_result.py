"""The records every QA method returns, so methods compare side by side."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Evidence:
    """One store triple an answer rests on, with IRIs and labels. ``o`` is the lexical form
    when ``literal`` is true. ``score`` is the retrieval similarity when there was one.
    A two-hop statement through a mediator (CVT) node has ``via`` set to the mediator and
    ``p`` holding both relation IRIs as ``"p1 / p2"``. ``store`` names the store the
    triple is from when an answer reads several (``qa.multistore``); None with one."""

    s: str
    p: str
    o: str
    s_label: str | None = None
    p_label: str | None = None
    o_label: str | None = None
    literal: bool = False
    datatype: str | None = None
    score: float | None = None
    via: str | None = None
    store: str | None = None

    def text(self) -> str:
        """The triple as a line of words: ``Andes | country | Chile``."""
        return f"{self.s_label or self.s} | {self.p_label or self.p} | {self.o_label or self.o}"

    def to_dict(self) -> dict[str, Any]:
        out = {"s": self.s, "s_label": self.s_label, "p": self.p, "p_label": self.p_label,
               "o": self.o, "o_label": self.o_label, "literal": self.literal, "datatype": self.datatype,
               "score": None if self.score is None else round(self.score, 4), "via": self.via}
        if self.store is not None:
            out["store"] = self.store
        return out


@dataclass(frozen=True)
class Refusal:
    """Why a method gave no answer. ``reason`` is a stable code; ``message`` says it in words."""

    reason: str  # not_in_store | empty_ground_graph | no_answer | error
    message: str


@dataclass
class TokenUsage:
    prompt: int = 0
    completion: int = 0
    calls: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    def add(self, prompt: int, completion: int) -> None:
        self.prompt += prompt
        self.completion += completion
        self.calls += 1

    def merge(self, other: "TokenUsage") -> None:
        """Count another run's usage too (a method that runs other methods)."""
        self.prompt += other.prompt
        self.completion += other.completion
        self.calls += other.calls

    def to_dict(self) -> dict[str, int]:
        return {"prompt": self.prompt, "completion": self.completion, "total": self.total, "calls": self.calls}


@dataclass
class Answer:
    """What a method returns for one question.

    ``answers`` are labels, best first; ``answer_iris`` is aligned with them (``None`` for a
    literal answer or one not found in the store). ``parametric`` marks answers that came
    from the model's own knowledge rather than the store (only with allow_parametric).
    """

    question: str
    method: str
    answers: list[str] = field(default_factory=list)
    answer_iris: list[str | None] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    refusal: Refusal | None = None
    parametric: bool = False
    trace: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    tokens: TokenUsage = field(default_factory=TokenUsage)
    query: str | None = None  # the final executed query, for methods that build one
    # aligned with ``answers``: a literal answer's typed value (``LiteralValue.to_dict``), None for entities
    values: list[dict[str, Any] | None] = field(default_factory=list)
    # the question's shape when it is not a chain: count, boolean, comparison, superlative, qualifier
    shape: str | None = None
    # the entities the question was read as naming (label, description, IRI): which namesake was meant
    meant: list[dict[str, Any]] = field(default_factory=list)
    # what became of each constraint the question writes ("before 1980", "comedies"):
    # applied along a relation, or not applied and why (qa.steps._query_graph.Grounded)
    constraints: list[dict[str, Any]] = field(default_factory=list)
    # an open answer ("Tell me about X", qa.open): the paragraph, its sentences with the numbers
    # of the facts each cites, and those facts (qa.open.Fact.to_dict); None and empty otherwise
    text: str | None = None
    sentences: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    # an answer from several stores (qa.multistore): aligned with ``answers``, the stores each
    # answer came from; and what each store gave (its name, its answers or refusal, its query,
    # or for an open answer the entity it holds); empty with one store
    answer_stores: list[list[str]] = field(default_factory=list)
    by_store: list[dict[str, Any]] = field(default_factory=list)
    # a refused draft's relations, resolved in the store (each pattern's best IRI): the
    # draft's vote where the question is composed after the refusal (qa.compose)
    draft_relations: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return self.refusal is not None

    def to_dict(self, *, trace: bool = True) -> dict[str, Any]:
        out = {
            "question": self.question, "method": self.method,
            "answers": list(self.answers), "answer_iris": list(self.answer_iris),
            "refused": self.refused,
            "refusal": None if self.refusal is None else {"reason": self.refusal.reason,
                                                          "message": self.refusal.message},
            "parametric": self.parametric,
            "query": self.query,
            "values": list(self.values), "shape": self.shape, "meant": list(self.meant),
            "constraints": list(self.constraints),
            "evidence": [e.to_dict() for e in self.evidence],
            "seconds": round(self.seconds, 3), "tokens": self.tokens.to_dict(),
        }
        if self.text is not None:
            out.update(text=self.text, sentences=list(self.sentences), facts=list(self.facts))
        if self.by_store:
            out.update(answer_stores=[list(s) for s in self.answer_stores], by_store=list(self.by_store))
        if trace:
            out["trace"] = self.trace
        return out

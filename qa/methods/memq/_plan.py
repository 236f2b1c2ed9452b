"""Plans in words (memq): parse the numbered steps a model wrote. Pure functions.

    1. Find the films directed by [Joel Zwick], assign it to ?f.
    2. Find the language of ?f, assign it to ?l.
    3. The answer is ?l.

A *Find* step searches one relation from what is known (an entity in brackets or a
variable an earlier step assigned) and assigns the result; *Make sure* states a condition
over known terms; *Rank* orders a variable by an attribute and keeps the first few.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_STEP = re.compile(r"^\s*\d+\.\s*(?P<body>.+?)\s*$")
_FIND = re.compile(r"^Find (?P<text>.+?),? assign it to (?P<var>\?\w+)\.?$", re.IGNORECASE)
_CHECK = re.compile(r"^Make sure (?P<text>.+?)\.?$", re.IGNORECASE)
_RANK = re.compile(r"^Rank (?P<var>\?\w+) by (?P<text>.+?) (?P<order>descending|ascending),? keep (?P<keep>\d+)\.?$",
                   re.IGNORECASE)
_ANSWER = re.compile(r"^The answer is (?P<var>\?\w+)\.?$", re.IGNORECASE)
_ENTITY = re.compile(r"\[([^\[\]]+)\]")
_VAR = re.compile(r"\?\w+")


class PlanSyntaxError(ValueError):
    """The text is not a plan of the expected shape."""


@dataclass(frozen=True)
class PlanStep:
    kind: str  # find | check | rank
    text: str
    var: str | None = None  # what a Find assigns, or what a Rank orders
    entities: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()  # variables the text mentions (other than ``var`` for a Find)
    descending: bool = True
    keep: int = 1

    def search_text(self) -> str:
        """The step as the statement memories read it, with the known entity or variable
        as the memories' ``?e1`` slot: "what is the country of ?e1" finds "?e2 is the
        country of ?e1" at 0.89, while "what is the country of Andes" finds it at 0.18 (the
        name pulls the text away from every memory alike)."""
        text = _VAR.sub("?e1", _ENTITY.sub("?e1", self.text))
        return " ".join(text.split())

    def relation_words(self) -> str:
        """The step's words without its entities and variables: what it says of the
        relation ("the films directed by", "the language of")."""
        return " ".join(_VAR.sub(" ", _ENTITY.sub(" ", self.text)).split())


@dataclass
class Plan:
    steps: list[PlanStep]
    answer: str
    entities: list[str] = field(default_factory=list)

    def is_chain(self) -> bool:
        """Only Find steps, from one named entity to the answer: a walk the store's
        relation paths can ground (no condition, no ranking, no second entity)."""
        return len(self.entities) == 1 and all(s.kind == "find" for s in self.steps)


def parse_plan(text: str) -> Plan:
    """Read the model's plan; raises :class:`PlanSyntaxError` naming what is off."""
    steps: list[PlanStep] = []
    answer = None
    for line in text.strip().splitlines():
        m = _STEP.match(line)
        if not m:
            continue
        body = m.group("body")
        if (a := _ANSWER.match(body)) is not None:
            answer = a.group("var")
            break
        if (f := _FIND.match(body)) is not None:
            steps.append(_step("find", f.group("text"), f.group("var")))
        elif (r := _RANK.match(body)) is not None:
            steps.append(_step("rank", r.group("text"), r.group("var"), descending=r.group("order").lower() ==
                               "descending", keep=int(r.group("keep"))))
        elif (c := _CHECK.match(body)) is not None:
            steps.append(_step("check", c.group("text"), None))
        else:
            raise PlanSyntaxError(f"step {body!r} does not start with Find, Make sure or Rank")
    if answer is None:
        raise PlanSyntaxError("the plan has no final step 'The answer is ?x.'")
    if not steps:
        raise PlanSyntaxError("the plan has no step before its answer")
    assigned = {s.var for s in steps if s.kind == "find"}
    if answer not in assigned:
        raise PlanSyntaxError(f"the answer {answer} is not assigned by any Find step")
    entities = list(dict.fromkeys(e for s in steps for e in s.entities))
    return Plan(steps, answer, entities)


def bracket_names(plan: Plan, names: list[str]) -> Plan:
    """The plan with ``names`` (entities the question names) bracketed in steps that know
    nothing to start from: a small model sometimes drops the brackets ("Find what countries
    the Andes cover"). Longer names first, whole words only, any case."""
    steps = []
    for step in plan.steps:
        text = step.text
        if not step.entities and not step.variables:
            for name in sorted(names, key=len, reverse=True):
                m = re.search(r"(?<![\w\[])" + re.escape(name) + r"(?![\w\]])", text, re.IGNORECASE)
                if m:
                    text = text[:m.start()] + "[" + m.group(0) + "]" + text[m.end():]
                    break
        steps.append(step if text == step.text else _step(step.kind, text, step.var, descending=step.descending,
                                                          keep=step.keep))
    return Plan(steps, plan.answer, list(dict.fromkeys(e for s in steps for e in s.entities)))


def _step(kind: str, text: str, var: str | None, **extra) -> PlanStep:
    entities = tuple(dict.fromkeys(n.strip() for n in _ENTITY.findall(text)))
    variables = tuple(dict.fromkeys(v for v in _VAR.findall(_ENTITY.sub("", text)) if v != var or kind == "rank"))
    return PlanStep(kind, text.strip(), var, entities, variables, **extra)


__all__ = ["Plan", "PlanStep", "PlanSyntaxError", "parse_plan", "bracket_names"]

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
from difflib import SequenceMatcher

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

    @property
    def off_anchor(self) -> int:
        """How many steps start from no named entity (from a variable only)."""
        return sum(1 for s in self.steps if not s.entities)

    @property
    def chain_hops(self) -> int:
        """How many hops the plan walks: the steps that start from the named entity are one
        hop between them, however many were written ("Find [X] directed by what", then
        "Find what directed [X]": the same hop twice), and each step from a variable one more."""
        return min(1, len(self.steps) - self.off_anchor) + self.off_anchor


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
    """The plan with ``names`` (entities the question names, best linked first) bracketed
    in steps that know nothing to start from: a small model sometimes drops the brackets
    ("Find what countries the Andes cover"). The best-linked name the step writes is
    bracketed: whole words, any case, or misspelt by a letter or two ("Yaiel Abecassis"
    for Yaël Abecassis, bracketed as the question writes it); a word of the question's that
    also names something ("director", "together") is only taken where no better-linked
    name is written."""
    steps = []
    for step in plan.steps:
        text = step.text
        if not step.entities and not step.variables:
            for name in names:
                span = _written_span(text, name)
                if span is not None:
                    start, end, written = span
                    text = text[:start] + "[" + written + "]" + text[end:]
                    break
        steps.append(step if text == step.text else _step(step.kind, text, step.var, descending=step.descending,
                                                          keep=step.keep))
    return Plan(steps, plan.answer, list(dict.fromkeys(e for s in steps for e in s.entities)))


def _written_span(text: str, name: str) -> tuple[int, int, str] | None:
    """Where ``text`` writes ``name``: (start, end, the words to bracket), or None. Exactly,
    whole words in any case; else a run of as many words spelt nearly alike (a ratio of
    0.85 or more, names of 8 letters or more, so "Popeye" is not found in "people")."""
    m = re.search(r"(?<![\w\[])" + re.escape(name) + r"(?![\w\]])", text, re.IGNORECASE)
    if m:
        return m.start(), m.end(), m.group(0)
    if len(name) < 8:
        return None
    words = list(re.finditer(r"[^\s,.?!]+", text))
    size = len(name.split())
    for i in range(len(words) - size + 1):
        start, end = words[i].start(), words[i + size - 1].end()
        if SequenceMatcher(None, text[start:end].lower(), name.lower()).ratio() >= 0.85:
            return start, end, name
    return None


def _step(kind: str, text: str, var: str | None, **extra) -> PlanStep:
    entities = tuple(dict.fromkeys(n.strip() for n in _ENTITY.findall(text)))
    variables = tuple(dict.fromkeys(v for v in _VAR.findall(_ENTITY.sub("", text)) if v != var or kind == "rank"))
    return PlanStep(kind, text.strip(), var, entities, variables, **extra)


__all__ = ["Plan", "PlanStep", "PlanSyntaxError", "parse_plan", "bracket_names"]

"""The query agent's state and actions (queryagent): what the model can do at a step, the
query built so far, and the SPARQL it stands for. Pure functions and records.

The model acts through names it can read: entities by an id made from their label
(``Mount_Everest``), relations by their label (``country``), variables as ``?x``.
The state maps them back to IRIs; every relation and entity it knows was returned by the
store, so a query built from the state names nothing the store lacks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from ...steps import _sparql_build as sb

ACTIONS: dict[str, int] = {
    # name: number of arguments
    "get_relations": 1, "add_fact": 3, "add_filter": 3, "add_count": 1, "add_max": 1, "add_min": 1,
    "set_answer": 1, "execute": 0,
}
FILTER_OPS = ("=", "!=", "<", ">", "<=", ">=")
VARIABLE = re.compile(r"\?[a-z][a-z0-9_]{0,11}")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DOUBLE = "<http://www.w3.org/2001/XMLSchema#double>"  # numbers compared as numbers, whatever their datatype
_PLAN = re.compile(r"Plan:\s*([^.\n]+)\.")
_STEP = re.compile(r"Thought:\s*(?P<thought>[^\n]*)\s*\n\s*Action:\s*(?P<action>[^\n]*)", re.IGNORECASE)
_CALL = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*\((?P<args>.*)\)\s*\.?\s*$")


class StepFormatError(ValueError):
    """The model's text is not one thought and one action call."""


@dataclass(frozen=True)
class Action:
    name: str
    args: tuple[str, ...] = ()

    def text(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


@dataclass(frozen=True)
class Relation:
    """A store relation as the model names it."""

    name: str
    iri: str
    label: str


@dataclass(frozen=True)
class Link:
    """A relation returned for a term: ``backward`` when the term is its object, with one
    value at the other end as an example and the similarity to the question."""

    relation: str  # Relation.name
    backward: bool
    example: str | None = None
    score: float = 0.0


@dataclass(frozen=True)
class Entity:
    id: str
    iri: str
    label: str


@dataclass(frozen=True)
class Binding:
    """What a variable holds: how many values (capped), a few labels, and whether they are
    mediator nodes (no answer by themselves)."""

    count: int
    sample: tuple[str, ...] = ()
    mediator: bool = False
    capped: bool = False

    def text(self) -> str:
        many = f"{self.count}{'+' if self.capped else ''} value{'s' if self.count != 1 else ''}"
        if self.mediator:
            return f"{many}, mediator nodes"
        return f"{many}: {', '.join(self.sample)}" + (", ..." if self.count > len(self.sample) else "")


@dataclass(frozen=True)
class Fact:
    s: str
    r: str  # Relation.name
    o: str

    def text(self) -> str:
        return f"{self.s} {self.r} {self.o}"


@dataclass(frozen=True)
class Filter:
    var: str
    op: str
    value: str


@dataclass(frozen=True)
class AgentState:
    """The query being built, and what the model may refer to."""

    question: str
    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()  # every relation returned so far
    fetched: dict[str, tuple[Link, ...]] = field(default_factory=dict)  # term -> its relations
    facts: tuple[Fact, ...] = ()
    bindings: dict[str, Binding] = field(default_factory=dict)  # variable -> values, in binding order
    filters: tuple[Filter, ...] = ()
    order: tuple[str, str] | None = None  # (variable, "max" | "min")
    count: bool = False
    answer: str | None = None
    executed: bool = False
    plan: str | None = None  # the chain of relations the model planned in its first thought
    next_relation: str | None = None  # the relation nearest the plan's next item, when its words are not one

    # -- lookups --------------------------------------------------------------------------
    def entity(self, id_: str) -> Entity | None:
        return next((e for e in self.entities if e.id == id_), None)

    def relation(self, name: str) -> Relation | None:
        return next((r for r in self.relations if r.name == name), None)

    def relation_by_iri(self, iri: str) -> Relation | None:
        return next((r for r in self.relations if r.iri == iri), None)

    @property
    def variables(self) -> list[str]:
        return list(self.bindings)

    def is_term(self, term: str) -> bool:
        """An entity id or a bound variable."""
        return self.entity(term) is not None or term in self.bindings

    def links(self, term: str) -> tuple[Link, ...]:
        return self.fetched.get(term, ())

    def fresh_variable(self) -> str:
        """The name the next new variable gets: ``?x1``, ``?x2``, ..."""
        n = len(self.bindings) + 1
        while f"?x{n}" in self.bindings:
            n += 1
        return f"?x{n}"

    def progress(self) -> str:
        """The chain of relations added so far, as the thought of each step starts with it:
        ``Done: Andes -> country -> capital.``"""
        if not self.facts:
            return "Done: nothing yet."
        first = self.facts[0]
        start = first.s if self.entity(first.s) else first.o
        return "Done: " + " -> ".join([start] + [f.r for f in self.facts]) + "."

    def thought_start(self) -> str:
        """What the environment writes at the start of each thought: the chain done so far,
        and once the model has written its plan, the plan and its next item (or that it is
        all done), so the model compares where it is with where it meant to go instead of
        copying its last thought."""
        start = f"{self.progress()} Plan: "
        if not self.plan:
            return start
        if self.finished():
            return f"{start}{self.plan}. All done: "
        item = self.next_item()
        hint = f" ({self.next_relation})" if self.next_relation and self.next_relation != item else ""
        return f"{start}{self.plan}. Next: {item}{hint}."

    def next_item(self) -> str | None:
        """The plan's next relation, in the model's words."""
        items = self.plan_items()
        return items[min(len(self.facts) + 1, len(items) - 1)] if len(items) > 1 else None

    def chain_end(self) -> str | None:
        """Where the chain goes on from: the newest variable, or the entity it starts at."""
        if self.bindings:
            return self.variables[-1]
        return self.entities[0].id if self.entities else None

    def draft(self) -> tuple[Entity, tuple[str, ...], tuple[str, str], str] | None:
        """What the query says as a draft from one entity, for grounding: (the entity, its
        facts' relation labels in the order added, the labels of the fact at the entity and
        of the fact at the answer, the answer variable), or None when its facts name no
        entity or two, or it has a filter, a count or a ranking. The facts need not be a
        walk: as in pgmr's drafts, a 1.5B model hangs a second fact off the entity as often
        as it chains it ("Korkoro -> written by", "Korkoro -> has genre" for the genres of
        the films of Korkoro's writers), and only the relations' words are used."""
        if not self.facts or self.filters or self.order or self.count:
            return None
        named = list(dict.fromkeys(t for f in self.facts for t in (f.s, f.o) if self.entity(t)))
        if len(named) != 1:
            return None
        start = self.entity(named[0])
        answer = self.answer or self.variables[-1]
        labels = tuple(self.relation(f.r).label for f in self.facts)
        first = next(i for i, f in enumerate(self.facts) if start.id in (f.s, f.o))
        last = next((i for i in reversed(range(len(self.facts))) if answer in (self.facts[i].s, self.facts[i].o)), -1)
        return start, labels, (labels[first], labels[last]), answer

    def plan_items(self) -> list[str]:
        return [x.strip() for x in (self.plan or "").split("->") if x.strip()]

    def finished(self) -> bool:
        """Whether the chain built so far is as long as the plan (the model then answers)."""
        return bool(self.plan and self.facts) and len(self.facts) >= len(self.plan_items()) - 1

    # -- updates (new states) -----------------------------------------------------------------
    def with_relations(self, term: str, links: Sequence[Link], relations: Sequence[Relation]) -> "AgentState":
        known = {r.name for r in self.relations}
        return replace(self, relations=self.relations + tuple(r for r in relations if r.name not in known),
                       fetched={**self.fetched, term: tuple(links)})

    def with_fact(self, fact: Fact, new: dict[str, Binding]) -> "AgentState":
        return replace(self, facts=self.facts + (fact,), bindings={**self.bindings, **new})

    def name_relation(self, iri: str, label: str | None) -> Relation:
        """The relation for ``iri``, known or newly named from its label (unique in the state)."""
        known = self.relation_by_iri(iri)
        if known:
            return known
        base = slug(label or iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1]) or "relation"
        taken = {r.name for r in self.relations}
        name, n = base, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        return Relation(name, iri, label or base)

    # -- the query ------------------------------------------------------------------------------
    def where(self, facts: Sequence[Fact] | None = None) -> list[sb.TriplePattern]:
        """The facts as triple patterns over IRIs and variables."""
        return [sb.TriplePattern(self.node(f.s), f"<{self.relation(f.r).iri}>", self.node(f.o))
                for f in (self.facts if facts is None else facts)]

    def node(self, term: str) -> str:
        e = self.entity(term)
        return f"<{e.iri}>" if e else term

    def filter_text(self, f: Filter) -> str:
        if NUMBER.fullmatch(f.value):
            return f"FILTER({_DOUBLE}(STR({f.var})) {f.op} {f.value})"
        e = self.entity(f.value)
        if e is not None or f.value in self.bindings:
            return f"FILTER({f.var} {f.op} {self.node(f.value)})"
        text = f.value.strip('"').replace("\\", "\\\\").replace('"', '\\"')
        return f'FILTER(LCASE(STR({f.var})) {f.op} LCASE("{text}"))'

    def query(self, answer: str | None = None, *, exclude: bool = True,
              facts: Sequence[Fact] | None = None) -> sb.BuiltQuery:
        """The SPARQL of the state (or of ``facts``) answering ``answer`` (default: the
        state's answer); ``exclude`` keeps the question's entities out of the answer."""
        answer = answer or self.answer
        filters = [self.filter_text(f) for f in self.filters]
        if exclude and not self.count:
            filters += sb.exclude_filter(answer, [e.iri for e in self.entities])
        tail = None
        if self.order:
            var, which = self.order
            tail = f"ORDER BY {'DESC' if which == 'max' else 'ASC'}({_DOUBLE}(STR({var}))) LIMIT 1"
        return sb.BuiltQuery(answer, [[[p]] for p in self.where(facts)], filters, tail, count=self.count)


def plan_in(thought: str) -> str | None:
    """The plan a thought states (``Plan: Andes -> country -> capital.``), if any."""
    m = _PLAN.search(thought)
    return " ".join(m.group(1).split()) if m else None


def slug(text: str) -> str:
    """A label as an identifier the model can write: words joined with ``_``."""
    return re.sub(r"_+", "_", re.sub(r"[^\w]+", "_", text.strip())).strip("_")


def parse_step(text: str) -> tuple[str, Action]:
    """The thought and the action of the model's step; :class:`StepFormatError` when it is
    not ``Thought: ...`` then ``Action: name(args)`` with a known action."""
    m = _STEP.search(text)
    if not m:
        raise StepFormatError("write one line 'Thought: ...' and then one line 'Action: name(arguments)'")
    call = _CALL.match(m.group("action"))
    if not call:
        raise StepFormatError(f"the action {m.group('action').strip()!r} is not written as name(arguments)")
    name = call.group("name")
    if name not in ACTIONS:
        raise StepFormatError(f"{name} is not an action; the actions are {', '.join(ACTIONS)}")
    return m.group("thought").strip(), Action(name, split_args(call.group("args")))


def split_args(text: str) -> tuple[str, ...]:
    """Comma-separated arguments; commas inside double quotes do not split."""
    args, current, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            args.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    last = "".join(current).strip()
    if last or args:
        args.append(last)
    return tuple(args)


__all__ = ["ACTIONS", "FILTER_OPS", "Action", "AgentState", "Binding", "Entity", "Fact", "Filter", "Link",
           "Relation", "StepFormatError", "parse_step", "plan_in", "slug", "split_args"]

"""The deterministic checks the query agent runs on each action before it touches the store
(queryagent): format, validity and rationality. The execution checks (a fact or a filter
that matches nothing) need the store and live with the toolbox. Pure functions.

A check either fixes the action without the model (a label written where an id belongs)
or fails it; a failed action is shown to the model with the guideline for its check,
and only that step is redone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...steps._gbnf import Grammar
from ._state import ACTIONS, FILTER_OPS, NUMBER, VARIABLE, Action, AgentState

KINDS = ("format", "validity", "rationality", "execution")


@dataclass(frozen=True)
class Check:
    """A check that fired: its ``kind`` (one of :data:`KINDS`), its ``name`` (the
    guideline shown for it), what went wrong, and how it was fixed without the model
    (None when the step has to be redone)."""

    kind: str
    name: str
    message: str
    fixed: str | None = None

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "name": self.name, "message": self.message}
        if self.fixed:
            out["fixed"] = self.fixed
        return out


def check_action(state: AgentState, action: Action, grammar: Grammar | None = None, *,
                 fix: bool = True) -> tuple[Action, list[Check]]:
    """The action with what can be fixed fixed (unless not ``fix``), and the checks that
    fired; the last check has ``fixed=None`` when the action cannot run. With ``grammar``,
    an action it does not admit fails too."""
    fired: list[Check] = []
    want = ACTIONS[action.name]
    if len(action.args) != want:
        return action, [Check("validity", "arg_count",
                              f"{action.name} takes {want} argument{'s' if want != 1 else ''}, not {len(action.args)}")]
    args = list(action.args)
    for i in _term_positions(action.name) if fix else ():
        fixed = _label_to_id(state, args[i])
        if fixed:
            fired.append(Check("validity", "label_for_id", f"{args[i]} is a label, not an id", f"{args[i]} -> {fixed}"))
            args[i] = fixed
    if action.name == "add_fact" and fix:
        fixed = _relation_name(state, args[1])
        if fixed:
            fired.append(Check("validity", "label_for_id", f"{args[1]} is a label, not a relation name",
                               f"{args[1]} -> {fixed}"))
            args[1] = fixed
    action = replace(action, args=tuple(args))
    failure = _failure(state, action)
    if failure is None and grammar is not None and not grammar.accepts(_as_written(state, action)):
        failure = Check("format", "not_allowed", f"{action.text()} is not one of the actions possible now")
    return action, fired + ([failure] if failure else [])


def _as_written(state: AgentState, action: Action) -> str:
    """The step a grammar-held model would write for ``action`` (a new variable gets the
    grammar's one name for it; any name is as good)."""
    fresh = state.fresh_variable()
    args = [fresh if VARIABLE.fullmatch(a) and a not in state.bindings and action.name == "add_fact" else a
            for a in action.args]
    return f"Thought: {state.thought_start()}-\nAction: {action.name}({', '.join(args)})"


def _failure(state: AgentState, action: Action) -> Check | None:
    name, args = action.name, action.args
    if name == "execute":
        return None if state.answer else Check("validity", "no_answer", "execute() before set_answer")
    if name == "get_relations":
        return _term_failure(state, args[0])
    if name == "add_fact":
        s, r, o = args
        failure = _term_failure(state, s, new_ok=True) or _term_failure(state, o, new_ok=True)
        if failure:
            return failure
        if state.relation(r) is None:
            known = ", ".join(x.name for x in state.relations) or "none yet"
            return Check("validity", "unknown_relation",
                         f"{r} is not a relation get_relations returned (known: {known})")
        if s not in state.bindings and o not in state.bindings and not state.entity(s) and not state.entity(o):
            return Check("rationality", "two_new_variables", f"{s} and {o} are both new: the fact joins nothing")
        if s not in state.fetched and o not in state.fetched:
            return Check("execution", "fact_before_relations",
                         f"add_fact on {s} and {o} before get_relations on either of them")
        return None
    # the rest act on a bound variable
    failure = _term_failure(state, args[0], entity_ok=False)
    if failure:
        return failure
    if name == "add_filter":
        op, value = args[1], args[2]
        if op not in FILTER_OPS:
            return Check("validity", "bad_operator", f"{op} is not one of {' '.join(FILTER_OPS)}")
        if not (NUMBER.fullmatch(value) or re.fullmatch(r'"[^"]+"', value) or state.is_term(value)):
            return Check("validity", "unknown_entity", f"{value} is not a number, a quoted text or a known id")
    if name == "set_answer" and state.bindings[args[0]].mediator:
        return Check("rationality", "answer_on_mediator",
                     f"{args[0]} holds mediator nodes, which only join facts; answer with a variable beyond them")
    return None


def _term_failure(state: AgentState, term: str, *, new_ok: bool = False, entity_ok: bool = True) -> Check | None:
    if VARIABLE.fullmatch(term):
        if term in state.bindings or new_ok:
            return None
        return Check("validity", "unbound_variable", f"{term} is not bound yet; add a fact that binds it first")
    if entity_ok and state.entity(term):
        return None
    if not entity_ok:
        return Check("validity", "unbound_variable", f"{term} is not a bound variable")
    ids = ", ".join(e.id for e in state.entities)
    return Check("validity", "unknown_entity", f"{term} is not one of the question's entity ids ({ids})")


def _term_positions(name: str) -> tuple[int, ...]:
    return {"get_relations": (0,), "add_fact": (0, 2), "add_filter": (2,)}.get(name, ())


def _label_to_id(state: AgentState, arg: str) -> str | None:
    """The entity id ``arg`` names by its label (quoted, spaced, any case), or None."""
    if state.is_term(arg) or VARIABLE.fullmatch(arg) or NUMBER.fullmatch(arg):
        return None
    key = _key(arg)
    return next((e.id for e in state.entities if key in (_key(e.label), _key(e.id))), None)


def _relation_name(state: AgentState, arg: str) -> str | None:
    if state.relation(arg):
        return None
    key = _key(arg)
    return next((r.name for r in state.relations if key in (_key(r.label), _key(r.name))), None)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.strip().strip('"\'')).lower().split())


__all__ = ["Check", "KINDS", "check_action"]

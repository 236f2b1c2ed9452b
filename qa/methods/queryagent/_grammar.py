"""The grammar of one agent step, generated from the state as it is now (queryagent).

A 1.5B model writes free-form tool calls badly but chooses well among real options, so
each step's grammar admits only actions that can be valid now: ``get_relations`` of a
linked entity or bound variable not yet asked about; ``add_fact`` with a relation the store
returned for one of its two ends (either way round, the other end a known term or a new
variable, named ``?xN``); filters, aggregates and the answer on bound variables. A redo's grammar takes out
what a failed attempt tried, so the redo of a step cannot repeat it. Pure functions.
"""
from __future__ import annotations

from typing import Iterable

from ...steps._gbnf import Chars, Grammar, Ref
from ._state import FILTER_OPS, AgentState

THOUGHT_CHARS = 160


def step_grammar(state: AgentState, *, failed_facts: Iterable[tuple[str, str, str]] = (),
                 not_answers: Iterable[str] = (), thought_chars: int = THOUGHT_CHARS) -> Grammar:
    """``Thought: ...`` then ``Action: ...`` with one action valid in ``state``, leaving
    out the facts in ``failed_facts`` (s, relation, o) and ``set_answer`` on
    ``not_answers``. A failed fact whose other end was a new variable rules its relation
    out at that end altogether: a new variable constrains nothing."""
    failed = set(failed_facts)
    g = Grammar()
    entities = [e.id for e in state.entities]
    variables = state.variables
    actions: list[Ref] = []

    finished = state.finished()
    unfetched = [t for t in entities + variables if t not in state.fetched]
    if unfetched and not finished:
        actions.append(g.rule("get-relations", *[("get_relations(", t, ")") for t in unfetched]))

    # one name for a new variable: a free pattern would also match bound names
    new_var = g.rule("new-var", state.fresh_variable())
    others: dict[frozenset, Ref] = {}

    def other(excluded: frozenset) -> Ref:
        if excluded not in others:
            name = "other" if not excluded else f"other-{len(others)}"
            others[excluded] = g.rule(name, *[t for t in entities + variables if t not in excluded], new_var)
        return others[excluded]

    # A fact already in the query is not added again; nor is a copy of it to a new
    # variable (the same relation from the same term): both are ruled out like failed facts.
    # "?" stands for any new variable, either way round: a fact read backwards is flipped
    done = {(f.s, f.r, f.o) for f in state.facts}
    for f in state.facts:
        for a, b in ((f.s, f.o), (f.o, f.s)):
            failed |= {(a, f.r, "?"), ("?", f.r, a)} if b in state.bindings else {(a, f.r, b), (b, f.r, a)}
    facts = []
    for i, (term, links) in enumerate(state.fetched.items()):
        groups: dict[tuple[bool, frozenset], list[str]] = {}
        for name in dict.fromkeys(link.relation for link in links):
            for backward in (False, True):
                # the other ends already tried with this relation at this end of the fact
                tried = frozenset(f[0] if backward else f[2] for f in failed | done
                                  if f[1] == name and (f[2] if backward else f[0]) == term)
                if any(not state.is_term(t) for t in tried):
                    continue
                groups.setdefault((backward, tried), []).append(name)
        for j, ((backward, tried), names) in enumerate(groups.items()):
            rel = g.rule(f"rel-{i}-{j}", *names)
            others_here = other(tried | {term})  # a fact from a term to itself says nothing
            facts.append(("add_fact(", others_here, ", ", rel, ", ", term, ")") if backward
                         else ("add_fact(", term, ", ", rel, ", ", others_here, ")"))
    if facts and not finished:
        actions.append(g.rule("add-fact", *facts))

    if variables:
        bound = g.rule("bound", *variables)
        value = g.rule("value", ("-", Chars("[0-9]", 1, 12)), Chars("[0-9]", 1, 12),
                       ('"', Chars('[^"\\n]', 1, 40), '"'), *entities)
        op = g.rule("op", *FILTER_OPS)
        actions.append(g.rule("add-filter", ("add_filter(", bound, ", ", op, ", ", value, ")")))
        actions.append(g.rule("aggregate", *[(f"{name}(", bound, ")") for name in ("add_count", "add_max", "add_min")]))
        answerable = [v for v in variables if v not in set(not_answers)]
        if answerable:
            actions.append(g.rule("set-answer", *[("set_answer(", v, ")") for v in answerable]))

    if not actions:
        raise ValueError("no action is possible in this state")
    action = g.rule("action", *actions)
    start = state.thought_start()
    # after the plan's next item, which the environment wrote, the model may add nothing
    g.rule("root", (f"Thought: {start}", Chars("[^\\n]", 0 if start.endswith(".") else 1, thought_chars),
                    "\nAction: ", action))
    return g


__all__ = ["step_grammar", "THOUGHT_CHARS"]

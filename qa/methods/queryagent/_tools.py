"""The query agent's toolbox (queryagent): each action applied to the state, reading the
store only through the SPARQL sandbox and qa's retrieval readers, with the execution
checks that need the store.

``apply`` returns a new state and what the model is shown; the state is never changed in
place, so a failed action leaves the query as it was and the step can be redone.

* ``get_relations(t)``: the relations at ``t``, both ways (``t`` as subject and as object),
  each with one value at the other end; for a variable, over the values the query so far
  gives it. Cut to the ``relations_k`` whose reading is most similar to the question.
* ``add_fact(s, r, o)``: the fact joins the query when it keeps rows; when it keeps none it
  is tried the other way round first (a check fixed without the model), and only when that
  is empty too does the step fail. A new variable's relations come with the observation.
* ``add_filter``, ``add_count``, ``add_max``/``add_min``, ``set_answer`` shape the query;
  a filter that leaves nothing fails. ``execute`` runs it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError

from ...sandbox import run_sparql
from ...steps import _sparql_build as sb
from ...steps._examples import Hop, hop_phrase
from ...steps._retrieval import entity_edges, is_mediator, store_labels
from ._checks import Check
from ._state import VARIABLE, Action, AgentState, Binding, Fact, Filter, Link

SAMPLE = 3


@dataclass
class Outcome:
    """What applying an action gave: the new state (the old one when it failed), the
    observation for the model, the checks that fired, and for ``execute`` the query and
    its rows."""

    state: AgentState
    observation: str
    checks: list[Check] = field(default_factory=list)
    query: sb.BuiltQuery | None = None
    rows: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> Check | None:
        return next((c for c in self.checks if c.fixed is None), None)


class AgentTools:
    def __init__(self, store, index, question: str, *, relations_k: int = 40, timeout_s: float = 5.0,
                 max_rows: int = 1000, correction: bool = True):
        self.store = store
        self.index = index
        self.question_vector = index.embed([question])[0]
        self.relations_k = relations_k
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.correction = correction

    # -- dispatch ---------------------------------------------------------------------------
    def apply(self, state: AgentState, action: Action) -> Outcome:
        """Apply an action that passed :func:`qa.methods.queryagent._checks.check_action`."""
        return getattr(self, action.name)(state, *action.args)

    # -- get_relations ------------------------------------------------------------------------
    def get_relations(self, state: AgentState, term: str) -> Outcome:
        found = self._entity_links(state, term) if state.entity(term) else self._variable_links(state, term)
        named = state
        links = []
        for iri, label, backward, example in found:
            relation = named.name_relation(iri, label)
            if named.relation(relation.name) is None:
                named = replace(named, relations=named.relations + (relation,))
            links.append(Link(relation.name, backward, example))
        links = self._rank(state, term, named, links)
        new = state.with_relations(term, links, [r for r in named.relations if state.relation(r.name) is None])
        return Outcome(new, relations_text(new, term))

    def _entity_links(self, state: AgentState, term: str):
        iri = state.entity(term).iri
        out = {}
        for e in entity_edges(self.store, iri, limit=200):
            if not e.p_label:  # rdfs:label and the like: bookkeeping, not facts
                continue
            backward = e.o == iri and not e.o_literal
            example = e.s_label if backward else (e.o if e.o_literal else e.o_label)
            out.setdefault((e.p, backward), (e.p, e.p_label, backward, example))
        return list(out.values())

    def _variable_links(self, state: AgentState, var: str):
        out = []
        for backward in (False, True):
            edge = f"?agent_x ?agent_p {var} ." if backward else f"{var} ?agent_p ?agent_x ."
            rows = self._select(state, f"SELECT ?agent_p (SAMPLE(?agent_x) AS ?agent_e) WHERE {{\n  "
                                       + "\n  ".join(self._where(state) + [edge]) + "\n} GROUP BY ?agent_p")
            pairs = [(r["agent_p"].value, r.get("agent_e")) for r in rows if isinstance(r.get("agent_p"), ox.NamedNode)]
            labels = store_labels(self.store, [p for p, _ in pairs] + [x.value for _, x in pairs
                                                                        if isinstance(x, ox.NamedNode)])
            for p, x in pairs:
                if p in labels:
                    example = None if x is None else (labels.get(x.value) if isinstance(x, ox.NamedNode) else x.value)
                    out.append((p, labels[p], backward, example))
        return out

    def _rank(self, state: AgentState, term: str, named: AgentState, links: list[Link]) -> list[Link]:
        """The ``relations_k`` links whose reading is most similar to the question, best first."""
        if not links:
            return []
        given = state.entity(term).label if state.entity(term) else term
        texts = [hop_phrase(Hop(named.relation(link.relation).label, link.backward), given, "what") for link in links]
        scores = self.index.embed(texts) @ self.question_vector
        ranked = sorted(zip(links, scores.tolist()), key=lambda x: -x[1])[:self.relations_k]
        return [replace(link, score=round(score, 4)) for link, score in ranked]

    def nearest_relation(self, state: AgentState, term: str, words: str) -> str | None:
        """The relation at ``term`` whose label reads closest to ``words`` (a plan's item
        the model wrote in its own words: "capital city" for ``capital``)."""
        names = list(dict.fromkeys(link.relation for link in state.links(term)))
        if not names or not words:
            return None
        if words in names:
            return words
        vectors = self.index.embed([words.replace("_", " ")] + [state.relation(n).label for n in names])
        return names[int(np.argmax(vectors[1:] @ vectors[0]))]

    # -- add_fact ---------------------------------------------------------------------------------
    def add_fact(self, state: AgentState, s: str, r: str, o: str) -> Outcome:
        fact = Fact(s, r, o)
        checks: list[Check] = []
        new = self._bind(state, fact)
        if new is None and self.correction:
            flipped = Fact(o, r, s)
            new = self._bind(state, flipped)
            if new is not None:
                checks.append(Check("execution", "empty_fact", f"{fact.text()} matches nothing",
                                    f"read the other way round: {flipped.text()}"))
                fact = flipped
            else:
                checks.append(Check("execution", "empty_fact",
                                    f"{fact.text()} matches nothing in the store, either way round"))
                return Outcome(state, f"Error: {fact.text()} matches nothing, either way round.", checks)
        if new is None:  # correction off: the fact goes in as written
            new = {v: Binding(0) for v in (fact.s, fact.o) if VARIABLE.fullmatch(v) and v not in state.bindings}
        fresh = [v for v in new if v not in state.bindings]
        state = state.with_fact(fact, new)
        lines = [f"Added {fact.text()}."] + [f"{v} = {b.text()}" for v, b in new.items()]
        out = Outcome(state, "\n".join(lines), checks)
        for var in fresh:
            if new[var].count and var not in out.state.fetched:
                fetched = self.get_relations(out.state, var)
                out = Outcome(fetched.state, out.observation + "\n" + fetched.observation, checks)
        return out

    def _bind(self, state: AgentState, fact: Fact) -> dict[str, Binding] | None:
        """The bindings of the fact's variables (new ones and narrowed old ones) when it
        keeps rows, else None."""
        fresh = [v for v in (fact.s, fact.o) if VARIABLE.fullmatch(v) and v not in state.bindings]
        trial = state.with_fact(fact, {v: Binding(0) for v in fresh})
        variables = list(dict.fromkeys(v for v in (fact.s, fact.o) if VARIABLE.fullmatch(v)))
        if not variables:  # two entities: is the fact in the store?
            return {} if self._count(trial) else None
        out = {}
        for var in variables:
            values = self._values(trial, var)
            if not values:
                return None
            out[var] = self._binding(values)
        return out

    # -- add_filter, aggregates, answer ---------------------------------------------------------
    def add_filter(self, state: AgentState, var: str, op: str, value: str) -> Outcome:
        trial = replace(state, filters=state.filters + (Filter(var, op, value),))
        values = self._values(trial, var)
        if not values and self.correction:
            check = Check("execution", "empty_filter", f"no value of {var} is {op} {value}")
            return Outcome(state, f"Error: the filter leaves {var} with no values.", [check])
        binding = self._binding(values)
        trial = replace(trial, bindings={**trial.bindings, var: binding})
        return Outcome(trial, f"Filtered: {var} = {binding.text()}")

    def add_count(self, state: AgentState, var: str) -> Outcome:
        return Outcome(replace(state, count=True, answer=var), f"The answer is the number of values of {var}.")

    def add_max(self, state: AgentState, var: str) -> Outcome:
        return Outcome(replace(state, order=(var, "max")), f"Only the row with the largest {var} is kept.")

    def add_min(self, state: AgentState, var: str) -> Outcome:
        return Outcome(replace(state, order=(var, "min")), f"Only the row with the smallest {var} is kept.")

    def set_answer(self, state: AgentState, var: str) -> Outcome:
        return Outcome(replace(state, answer=var), f"The answer is {var}.")

    def execute(self, state: AgentState) -> Outcome:
        """Run the query; the question's entities are kept out of the answer unless nothing
        else answers ("the husband of X's wife" is X)."""
        query, rows = state.query(), []
        for exclude in (True, False):
            query = state.query(exclude=exclude)
            rows, error = sb.execute(self.store, query, timeout_s=self.timeout_s, max_rows=self.max_rows)
            if rows or error:
                break
        done = replace(state, executed=True)
        if not rows:
            return Outcome(done, "The query returns nothing.", query=query)
        terms = sb.answer_terms(self.store, query, rows, limit=10)
        return Outcome(done, f"{len(rows)} answer{'s' if len(rows) != 1 else ''}: "
                       + ", ".join(t.label for t in terms[:SAMPLE]) + (", ..." if len(rows) > SAMPLE else ""),
                       query=query, rows=rows)

    # -- reading -----------------------------------------------------------------------------------
    def _where(self, state: AgentState) -> list[str]:
        return [p.text() for p in state.where()] + [state.filter_text(f) for f in state.filters]

    def _select(self, state: AgentState, text: str) -> list[dict]:
        try:
            return run_sparql(self.store, text, timeout_s=self.timeout_s, max_rows=self.max_rows).rows
        except (QueryError, UnsafeQueryError):
            return []

    def _values(self, state: AgentState, var: str) -> list:
        rows = self._select(state, f"SELECT DISTINCT {var} WHERE {{\n  " + "\n  ".join(self._where(state)) + "\n}")
        return [r[var[1:]] for r in rows if var[1:] in r]

    def _count(self, state: AgentState) -> int:
        return len(self._select(state, "SELECT * WHERE {\n  " + "\n  ".join(self._where(state)) + "\n}"))

    def _binding(self, values: list) -> Binding:
        iris = [v.value for v in values[:SAMPLE] if isinstance(v, ox.NamedNode)]
        labels = store_labels(self.store, iris)
        sample = tuple(labels.get(v.value, v.value) if isinstance(v, ox.NamedNode) else v.value
                       for v in values[:SAMPLE])
        mediator = bool(iris) and not labels.get(iris[0]) and is_mediator(self.store, iris[0])
        return Binding(len(values), sample, mediator, len(values) >= self.max_rows)


def relations_text(state: AgentState, term: str) -> str:
    """The relations at ``term`` as the model reads them: the fact it would add, and an
    example value at the other end."""
    entity = state.entity(term)
    links = state.links(term)
    head = f"Relations of {term}" + (f" ({entity.label})" if entity and entity.label != term else "")
    if not links:
        return head + ": none."
    lines = [head + ":"]
    for link in links:
        fact = f"? {link.relation} {term}" if link.backward else f"{term} {link.relation} ?"
        lines.append(f"  {fact}" + (f"   e.g. {link.example}" if link.example else ""))
    return "\n".join(lines)


__all__ = ["AgentTools", "Outcome", "relations_text"]

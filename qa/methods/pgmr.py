"""Post-generation memory retrieval (pgmr): the model writes SPARQL with placeholders,
the store's memories resolve them, and the executed query answers.

1. **Examples from the store.** Around the entities the question names, real paths of one
   and two hops are read from the store and written as placeholder queries
   (:mod:`qa._examples`); the few closest in meaning to the question are shown.
2. **Generate.** The model writes the query with no identifiers, every entity as
   ``[ENT: name]`` and every relation as ``[REL: words]``; a GBNF grammar holds it to that
   shape. Text that still does not parse goes back once with the reason.
3. **Resolve.** Each ``[ENT]`` is looked up in the URI memory (an exact label or alias
   match counts as 1.0) and each ``[REL]`` among the relations, read both ways (the
   pattern's ends are swapped for the backward reading). A placeholder whose best match
   scores under the threshold ends the question with a refusal that names it.
4. **Execute.** The combinations of the top candidates run best joint score first, in
   the SPARQL sandbox (read-only, LIMIT, row cap, time limit); the first that returns rows
   is the final query. The question's own entities are kept out of the answer variable.
5. **Answer.** The rows of the answer variable, labelled from the store; the final query,
   the placeholders and their resolutions are in the trace, and each answer's instantiated
   patterns are its evidence.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError

from .._answering import rows_answer
from .._examples import closest, example_paths
from .._grounding import StoreTerm
from .._placeholders import PlaceholderQuery, PlaceholderSyntaxError, parse_placeholder_query
from .._result import Answer, Evidence
from .._retrieval import (MemoryTerm, entity_edges, exact_entities, question_entities, search_relations,
                          search_uris, store_labels)
from .._retry import RetryWith, generate_checked
from ..prompts import grammar_text
from ..sandbox import run_sparql
from ._base import MethodRun, QAContext, QAMethod

# Calibrated on dev data with `kgstore eval --sweep threshold=...` (README: the threshold
# sweep). An exact label match scores 1.0; a name absent from the store finds its nearest
# neighbour in the URI memory at a lower cosine.
DEFAULT_THRESHOLD = 0.8
DEFAULT_RELATION_THRESHOLD = 0.3
BACKWARD_PENALTY = 0.05  # a relation read against its own wording ranks after the reading as written


@dataclass(frozen=True)
class Choice:
    """One candidate for a placeholder: what it resolves to and its score."""

    iri: str
    label: str
    score: float
    backward: bool = False

    def to_dict(self) -> dict:
        out = {"iri": self.iri, "label": self.label, "score": round(self.score, 4)}
        if self.backward:
            out["backward"] = True
        return out


class PGMRMethod(QAMethod):
    name = "pgmr"
    description = "post-generation memory retrieval: placeholder SPARQL, resolved in the URI memory, executed"
    index_kinds = ("entities", "uris", "relations")

    def __init__(self, context: QAContext, *, threshold: float = DEFAULT_THRESHOLD,
                 relation_threshold: float = DEFAULT_RELATION_THRESHOLD, examples: int = 4, candidates: int = 3,
                 max_combinations: int = 30, generate_tokens: int = 120, timeout_s: float = 5.0,
                 max_rows: int = 1000, max_answers: int = 200):
        super().__init__(context)
        self.threshold = threshold
        self.relation_threshold = relation_threshold
        self.examples = examples
        self.candidates = candidates
        self.max_combinations = max_combinations
        self.generate_tokens = generate_tokens
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.max_answers = max_answers

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        index = self.context.get_index()
        query = self.generate(question, self.example_text(index, question, run), run)
        if query is None:
            return self.refuse(question, run, "no_query", "the model wrote no usable query for this question",
                               allow_parametric)
        entities, relations, weak = self.resolve(index, query, run)
        if weak:
            return self.refuse(question, run, "not_in_store", "not in the store: " + "; ".join(weak), allow_parametric)
        found = self.execute(query, entities, relations, run)
        if found is None:
            return self.refuse(question, run, "no_rows",
                               "not in the store: no resolution of the query's placeholders returns rows",
                               allow_parametric)
        final, entity_iris, rels, rows = found
        terms = self.answer_terms(query, rows)
        if not terms:
            return self.refuse(question, run, "no_rows", "not in the store: the query's answers are empty",
                               allow_parametric)
        evidence = self.evidence(query, entity_iris, rels, terms)
        result = rows_answer(question, self.name, terms, evidence)
        result.query = final
        return result

    # -- 1. examples from the store ---------------------------------------------------------
    def example_text(self, index, question: str, run: MethodRun) -> str:
        """Placeholder queries for real paths around the question's named entities, the
        closest to the question first in the prompt's order (closest last, next to it)."""
        paths = []
        for cand in question_entities(index, question, k=3)[:2]:
            edges = entity_edges(self.store, cand.iri, limit=60)
            middles = list(dict.fromkeys((e.o if e.s == cand.iri else e.s) for e in edges
                                         if not e.o_literal))[:8]
            second = {m: entity_edges(self.store, m, limit=20) for m in middles}
            paths += example_paths(cand.label, cand.iri, edges, second)
        if not paths:
            run.record("examples", paths=0)
            return "(no examples: the question names no store entity by name)"
        vectors = index.embed([question] + [p.question() for p in paths])
        similarity = (vectors[1:] @ vectors[0]).tolist()
        chosen = closest(paths, similarity, self.examples)
        run.record("examples", paths=len(paths), shown=[p.question() for p in chosen])
        return "\n\n".join(f"Question: {p.question()}\nSPARQL: {p.sparql()}" for p in chosen)

    # -- 2. generate ------------------------------------------------------------------------
    def generate(self, question: str, examples: str, run: MethodRun) -> PlaceholderQuery | None:
        def check(text: str) -> PlaceholderQuery:
            try:
                return parse_placeholder_query(text)
            except PlaceholderSyntaxError as exc:
                raise RetryWith(str(exc), "pgmr_retry", {"query": text.strip(), "error": str(exc)}) from None

        done = generate_checked(run, "generate", "pgmr_generate", {"question": question, "examples": examples},
                                check, max_tokens=self.generate_tokens, temperature=0.0,
                                grammar=grammar_text("pgmr_sparql"))
        run.record("generate", attempts=done.attempts, query=done.text.strip())
        return done.value

    # -- 3. resolve -------------------------------------------------------------------------
    def resolve(self, index, query: PlaceholderQuery, run: MethodRun
                ) -> tuple[dict[str, list[Choice]], list[list[Choice]], list[str]]:
        """Candidates per entity placeholder and per pattern's relation, best first, and
        the placeholders whose best candidate is under its threshold (in words)."""
        names = query.entities()
        hits = search_uris(index, names, self.candidates, type="entity") if names else []
        entities: dict[str, list[Choice]] = {}
        for name, found in zip(names, hits):
            exact = [Choice(iri, label, 1.0) for iri, label in exact_entities(index, name, self.candidates)]
            near = [Choice(t.iri, t.label, t.score) for t in found if t.iri not in {c.iri for c in exact}]
            entities[name] = (exact + near)[:self.candidates]
        words = query.relations()
        relations: list[list[Choice]] = [_readings(found, self.candidates)
                                         for found in search_relations(index, words, self.candidates)]
        weak = []
        for name, found in entities.items():
            best = found[0] if found else None
            if best is None or best.score < self.threshold:
                weak.append(f"[ENT: {name}] found nothing (best {_describe(best)} < {self.threshold})")
        for word, found in zip(words, relations):
            best = found[0] if found else None
            if best is None or best.score < self.relation_threshold:
                weak.append(f"[REL: {word}] found nothing (best {_describe(best)} < {self.relation_threshold})")
        run.record("resolve", threshold=self.threshold, relation_threshold=self.relation_threshold,
                   entities={n: [c.to_dict() for c in cs] for n, cs in entities.items()},
                   relations=[{"placeholder": w, "candidates": [c.to_dict() for c in cs]}
                              for w, cs in zip(words, relations)],
                   weak=weak)
        return entities, relations, weak

    # -- 4. execute -------------------------------------------------------------------------
    def execute(self, query: PlaceholderQuery, entities: dict[str, list[Choice]], relations: list[list[Choice]],
                run: MethodRun):
        """The first combination, best joint score first, whose query returns rows:
        (query text, entity IRIs by name, relation readings, rows); None if none does."""
        names = list(entities)
        slots = [entities[n] for n in names] + relations
        combos = sorted(itertools.product(*slots), key=lambda c: -float(np.mean([x.score for x in c])))
        tried = []
        for combo in combos[:self.max_combinations]:
            entity_iris = {n: c.iri for n, c in zip(names, combo[:len(names)])}
            rels = [(c.iri, c.backward) for c in combo[len(names):]]
            exclude = list(dict.fromkeys(entity_iris.values()))
            text = query.render(entity_iris, rels, exclude=exclude)
            try:
                result = run_sparql(self.store, text, timeout_s=self.timeout_s, max_rows=self.max_rows)
            except (QueryError, UnsafeQueryError) as exc:
                tried.append({"query": text, "error": str(exc)})
                continue
            rows = [r for r in result.rows if _useful(r, query)]
            tried.append({"query": text, "rows": len(rows), "score": round(float(np.mean([x.score for x in combo])), 4)})
            if rows:
                run.record("execute", tried=len(tried), attempts=tried[-5:], final_query=text,
                           truncated=result.truncated)
                return text, entity_iris, rels, rows
        run.record("execute", tried=len(tried), attempts=tried[-5:], final_query=None)
        return None

    # -- 5. answer --------------------------------------------------------------------------
    def answer_terms(self, query: PlaceholderQuery, rows: list[dict]) -> list[StoreTerm]:
        var = query.answer_var.lstrip("?")
        values = [r[var] for r in rows if var in r]
        iris = [v.value for v in values if isinstance(v, ox.NamedNode)]
        labels = store_labels(self.store, iris)
        terms, seen = [], set()
        for v in values:
            if isinstance(v, ox.NamedNode):
                term = StoreTerm(labels.get(v.value) or v.value, v.value)
            elif isinstance(v, ox.Literal):
                term = StoreTerm(v.value, None)
            else:
                continue
            if term not in seen:
                seen.add(term)
                terms.append(term)
        return terms[:self.max_answers]

    def evidence(self, query: PlaceholderQuery, entity_iris: dict[str, str], rels: list[tuple[str, bool]],
                 terms: list[StoreTerm], *, limit: int = 20) -> list[Evidence]:
        """The final query's patterns instantiated with the rows that give the answers."""
        text = query.render(entity_iris, rels, select_all=True, exclude=list(dict.fromkeys(entity_iris.values())))
        try:
            rows = run_sparql(self.store, text, timeout_s=self.timeout_s, max_rows=limit).rows
        except (QueryError, UnsafeQueryError):
            return []
        return instantiate(self.store, query, entity_iris, rels, rows)


def instantiate(store, query: PlaceholderQuery, entity_iris: dict[str, str], rels: list[tuple[str, bool]],
                rows: list[dict]) -> list[Evidence]:
    """Evidence triples: each pattern of ``query`` with a row's bindings put in."""
    triples = []
    for row in rows:
        for pattern, (p, backward) in zip(query.patterns, rels):
            ends = []
            for node in (pattern.subject, pattern.object):
                ends.append(ox.NamedNode(entity_iris[node.text]) if node.entity else row.get(node.text.lstrip("?")))
            s, o = (ends[1], ends[0]) if backward else (ends[0], ends[1])
            if isinstance(s, ox.NamedNode) and o is not None:
                triples.append((s.value, p, o))
    iris = {s for s, _, _ in triples} | {p for _, p, _ in triples} | {o.value for _, _, o in triples
                                                                      if isinstance(o, ox.NamedNode)}
    labels = store_labels(store, iris)
    out, seen = [], set()
    for s, p, o in triples:
        literal = isinstance(o, ox.Literal)
        key = (s, p, o.value)
        if key in seen:
            continue
        seen.add(key)
        out.append(Evidence(s=s, p=p, o=o.value, s_label=labels.get(s), p_label=labels.get(p),
                            o_label=None if literal else labels.get(o.value), literal=literal,
                            datatype=o.datatype.value if literal and o.datatype else None))
    return out


def _readings(found: list[MemoryTerm], n: int) -> list[Choice]:
    """Relation candidates in both readings: the one its text matched (as written, or
    backward for an inverse phrasing) at its score, the other a little lower."""
    out: dict[tuple[str, bool], Choice] = {}
    for t in found:
        for backward, penalty in ((t.inverse, 0.0), (not t.inverse, BACKWARD_PENALTY)):
            key = (t.iri, backward)
            score = t.score - penalty
            if key not in out or out[key].score < score:
                out[key] = Choice(t.iri, t.label, score, backward)
    return sorted(out.values(), key=lambda c: -c.score)[:2 * n]


def _useful(row: dict, query: PlaceholderQuery) -> bool:
    """A row that answers: for a COUNT, a count above zero."""
    if not query.counts:
        return True
    value = row.get(query.answer_var.lstrip("?"))
    try:
        return value is not None and float(value.value) > 0
    except ValueError:
        return False


def _describe(choice: Choice | None) -> str:
    return "nothing" if choice is None else f"{choice.label!r} at {choice.score:.3f}"

"""Memory-augmented query reconstruction (memq): plan in words, recall each step from the
statement memories, rebuild SPARQL by rules, execute.

1. **Plan.** The model writes numbered steps (``Find ... assign it to ?f``, ``Make sure
   ...``, ``Rank ?f by ...``, ``The answer is ?l``), entities in brackets; a grammar holds
   it to that shape, and the examples are paths read from the store around the entities
   the question names (:mod:`qa.steps._examples`).
2. **Bind entities.** Each bracketed name resolves as pgmr's ``[ENT]`` does (an exact
   name 1.0, and so is a label the question writes whole with a relation written in as a
   possessive, "[X's heir]", whose words become the chain's first hop; else the URI
   memory's cosine); under ``threshold`` the question is refused, naming it.
3. **Ground a chain.** A plan of Find steps from one named entity is a walk: its steps'
   words rank the store's real relation paths from the entity, the plan's hops as the
   length hint, and the best path that returns rows (its answers read against the
   question, and read by the model: ``read_answers``) is the query, as in pgmr
   (:mod:`qa.steps._path_grounding`; ``paths=False`` turns it off). The steps that start
   from the named entity are one hop between them (:attr:`Plan.chain_hops`). A plan with a
   condition, a ranking or two entities, or a chain no path answers, goes on to recall.
4. **Recall.** Each step is searched in the statement memories (patterns the store's own
   schema answers, both directions, through mediators too). When the top memory scores at
   least ``gamma1`` it alone is taken; otherwise every memory scoring at least ``gamma2``
   (near-synonymous relations), joined with ``UNION``.
5. **Rebuild by rules.** Recalled patterns are appended in plan order, their variables
   renamed to the plan's (the memory's given end to the step's known entity or variable,
   its answer end to the step's variable, the rest fresh); *Make sure* becomes a pattern
   over known terms (a FILTER by join), *Rank* an ``ORDER BY ... LIMIT``; the question's
   entities are kept out of the answer variable.
6. **Execute** read-only in the SPARQL sandbox. When the rebuilt query returns no rows,
   single recalls are tried instead, best joint score first, until one does: every pick is
   checked by executing it.
"""
from __future__ import annotations

import itertools
import re

import numpy as np

from kgstore.terms import expand

from ...prompts import grammar_text
from ...steps import _sparql_build as sb
from ...steps._examples import store_examples
from ...steps._path_grounding import ChainDraft, PathGrounder
from ...steps._resolution import entity_choices, weak_choice
from ...steps._result import Answer
from ...steps._retrieval import StatementMemory, search_statements
from ...steps._retry import generate_checked, parse_or_retry
from .._base import MethodRun, QAContext, QAMethod
from ..pgmr import DEFAULT_THRESHOLD
from ._plan import Plan, PlanSyntaxError, bracket_names, parse_plan

# With the step's known end written as ?e1 (PlanStep.search_text), a step that names its
# relation plainly finds its memory at 0.85-0.93 (MetaQA and PathQuestion dev); the same
# relation read the other way, and near-synonyms, score 0.78-0.84 just under it, unrelated
# relations 0.6-0.78. Under gamma1 the near ones are joined with UNION, and executing the
# query decides which reading holds.
DEFAULT_GAMMA1 = 0.85
DEFAULT_GAMMA2 = 0.8
_MEMORY_VAR = re.compile(r"\?[A-Za-z_]\w*")


class MemQMethod(QAMethod):
    name = "memq"
    description = "a plan in words, each step recalled from the statement memories, rebuilt into SPARQL, executed"
    index_kinds = ("entities", "uris", "statements")
    shapes = True
    checks_names = True
    composes = True

    def __init__(self, context: QAContext, *, gamma1: float = DEFAULT_GAMMA1, gamma2: float = DEFAULT_GAMMA2,
                 threshold: float = DEFAULT_THRESHOLD, examples: int = 4, recall_k: int = 8, max_union: int = 4,
                 candidates: int = 3, max_combinations: int = 30, plan_tokens: int = 120, timeout_s: float = 5.0,
                 max_rows: int = 1000, max_answers: int = 200, paths: bool = True, path_options: int = 6,
                 beam: int = 12, answer_weight: float = 0.5, read_answers: bool = True):
        super().__init__(context)
        self.paths = paths
        self.path_options = path_options
        self.beam = beam
        self.answer_weight = answer_weight
        self.read_answers = read_answers
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.threshold = threshold
        self.examples = examples
        self.recall_k = recall_k
        self.max_union = max_union
        self.candidates = candidates
        self.max_combinations = max_combinations
        self.plan_tokens = plan_tokens
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.max_answers = max_answers

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        index = self.context.get_index()
        plan = self.make_plan(question, self.example_text(index, question, run), run)
        if plan is None:
            return self.refuse(question, run, "no_plan", "the model wrote no usable plan for this question",
                               allow_parametric)
        if any(not s.entities and not s.variables for s in plan.steps):
            # the question's linked names, best first, from its one reading
            plan = bracket_names(plan, [t.label for _, t in self.context.read(question).topics()])
            run.record("plan", bracketed=[s.text for s in plan.steps])
        entities = entity_choices(index, plan.entities, self.candidates, question=question)
        weak = [w for w in (weak_choice("ENT", n, cs, self.threshold) for n, cs in entities.items()) if w]
        run.record("entities", threshold=self.threshold, weak=weak,
                   candidates={n: [c.to_dict() for c in cs] for n, cs in entities.items()})
        if weak:
            return self.refuse(question, run, "not_in_store", "not in the store: " + "; ".join(weak), allow_parametric)
        if not plan.entities:
            return self.refuse(question, run, "no_entity", "the plan names no entity to start from", allow_parametric)
        bound = {n: cs[0].iri for n, cs in entities.items()}
        found = self.ground(index, question, plan, entities, run) if self.paths and plan.is_chain() else None
        if found is None:
            found = self.execute(plan, bound, self.recall(index, plan, run), run)
        return self.query_answer(question, run, found, "not in the store: no query rebuilt from the plan returns rows",
                                 allow_parametric=allow_parametric, limit=self.max_answers, timeout_s=self.timeout_s)

    # -- 1. plan ---------------------------------------------------------------------------
    def example_text(self, index, question: str, run: MethodRun) -> str:
        """Plans for real paths around the question's named entities."""
        return store_examples(self.store, index, question, run, self.examples,
                              lambda p: f"Question: {p.question()}\nPlan:\n{p.plan()}")

    def make_plan(self, question: str, examples: str, run: MethodRun) -> Plan | None:
        check = parse_or_retry(parse_plan, PlanSyntaxError, "memq_plan_retry", "plan")
        done = generate_checked(run, "plan", "memq_plan", {"question": question, "examples": examples}, check,
                                max_tokens=self.plan_tokens, temperature=0.0, grammar=grammar_text("memq_plan"))
        run.record("plan", attempts=done.attempts, text=done.text.strip())
        return done.value

    # -- 3. ground a chain in the store's real paths -------------------------------------
    def ground(self, index, question: str, plan: Plan, entities, run: MethodRun):
        """A plan that walks from one entity through Find steps is grounded as pgmr's
        drafts are (:mod:`qa.steps._path_grounding`): its steps' words rank the store's real
        paths from the entity, one hop per step as the length hint. None when no path
        returns rows, and the plan is then rebuilt from its recalled memories."""
        anchor = entities[plan.entities[0]][0]
        words = tuple(s.relation_words() for s in plan.steps)
        draft = ChainDraft(words, plan.chain_hops, (words[0], words[-1]), plan.answer, off_anchor=plan.off_anchor)
        grounder = PathGrounder(self.store, index.embed, options=self.path_options, beam=self.beam,
                                answer_weight=self.answer_weight, timeout_s=self.timeout_s, max_rows=self.max_rows,
                                read=self.read_answers)
        return grounder.ground(question, anchor, draft, run)

    # -- 4. recall ---------------------------------------------------------------------------
    def recall(self, index, plan: Plan, run: MethodRun) -> list[list[StatementMemory]]:
        """Per step, its ``recall_k`` nearest statement memories, best first."""
        found = search_statements(index, [s.search_text() for s in plan.steps], self.recall_k)
        run.record("recall", gamma1=self.gamma1, gamma2=self.gamma2,
                   steps=[{"step": s.text, "hits": [[m.text, m.pattern, round(m.score, 4)] for m in hits[:5]]}
                          for s, hits in zip(plan.steps, found)])
        return found

    def adaptive(self, hits: list[StatementMemory]) -> list[StatementMemory]:
        """γ1/γ2 recall: the top memory when it scores ≥ γ1, else every one ≥ γ2 (at most
        ``max_union``, for a UNION), else the top one."""
        if not hits:
            return []
        if hits[0].score >= self.gamma1:
            return [hits[0]]
        near = [m for m in hits if m.score >= self.gamma2][:self.max_union]
        return near or [hits[0]]

    # -- 5. rebuild and execute ----------------------------------------------------------
    def execute(self, plan: Plan, bound: dict[str, str], recalls: list[list[StatementMemory]], run: MethodRun):
        """The adaptive rebuild first; when it returns nothing, single recalls per step,
        best joint score first. (query, rows) of the first with rows, or None."""
        first = [self.adaptive(hits) for hits in recalls]
        options = [[[m] for m in hits[:self.candidates]] for hits in recalls]
        combos = [first] + sorted((list(c) for c in itertools.product(*options)),
                                  key=lambda c: -float(np.mean([ms[0].score for ms in c])))
        tried, seen = [], set()
        # the question's own entities are kept out of the answer, unless nothing else answers
        passes = [(True, c) for c in combos[:self.max_combinations + 1]]
        passes += [(False, c) for c in combos[:self.max_combinations + 1]]
        for exclude, combo in passes:
            built = rebuild(plan, bound, combo, self.store.config.prefixes, exclude=exclude)
            if built is None:
                continue
            text = built.render()
            if text in seen:
                continue
            seen.add(text)
            rows, error = sb.execute(self.store, built, timeout_s=self.timeout_s, max_rows=self.max_rows)
            rows = sb.answering_rows(self.store, built, rows)  # rows ending on mediators answer nothing
            tried.append({"query": text, "rows": len(rows), "union": [len(ms) for ms in combo],
                          **({"error": error} if error else {})})
            if rows:
                run.record("execute", tried=len(tried), attempts=tried[-5:], final_query=text)
                return built, rows
        run.record("execute", tried=len(tried), attempts=tried[-5:], final_query=None)
        return None


def rebuild(plan: Plan, bound: dict[str, str], recalled: list[list[StatementMemory]],
            prefixes: dict[str, str], *, exclude: bool = True) -> sb.BuiltQuery | None:
    """The SPARQL for ``plan`` with ``recalled[i]`` (one memory, or several for a UNION)
    for step ``i``; None when a step has nothing known to start from."""
    steps: list[list[list[sb.TriplePattern]]] = []
    tail = None
    fresh = itertools.count(1)
    for step, memories in zip(plan.steps, recalled):
        known = [f"<{bound[e]}>" for e in step.entities] + list(step.variables)
        if not known or not memories:
            return None
        if step.kind == "rank":
            target = f"?rank{next(fresh)}"
            alternatives = [_instantiate(m, [step.var], target, prefixes, fresh) for m in memories]
            tail = f"ORDER BY {'DESC' if step.descending else 'ASC'}({target}) LIMIT {step.keep}"
        elif step.kind == "check":
            # a condition over two known terms: the memory with both ends bound, either way round
            if len(known) < 2:
                return None
            alternatives = [_instantiate(m, order[:1], order[1], prefixes, fresh)
                            for m in memories for order in (known[:2], known[1::-1])]
        else:
            alternatives = [_instantiate(m, known, step.var, prefixes, fresh) for m in memories]
        steps.append([a for a in alternatives if a])
        if not steps[-1]:
            return None
    entity_iris = [bound[e] for e in plan.entities] if exclude else []
    return sb.BuiltQuery(plan.answer, steps, sb.exclude_filter(plan.answer, entity_iris), tail)


def _instantiate(memory: StatementMemory, known: list[str], answer: str, prefixes: dict[str, str],
                 fresh) -> list[sb.TriplePattern]:
    """The memory's pattern with its given variables set to ``known`` (in order), its
    answer variable to ``answer`` and every other variable fresh."""
    names = {g: k for g, k in zip(memory.given, known)}
    names[memory.answer] = answer
    renamed = _MEMORY_VAR.sub(lambda m: names.setdefault(m.group(0), f"?v{next(fresh)}"), memory.pattern)
    out = []
    for part in renamed.split(" . "):
        pieces = part.strip().rstrip(".").split()
        if len(pieces) != 3:
            return []
        s, p, o = pieces
        out.append(sb.TriplePattern(s, f"<{expand(p, prefixes)}>", o))
    return out

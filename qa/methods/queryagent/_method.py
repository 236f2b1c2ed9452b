"""The query agent (queryagent): the model builds the query one action at a time over a
toolbox on the store, and deterministic checks after each action correct it selectively.

1. **Link** the question's entities by name; each gets an id the model can write.
2. **Example.** A real path around the question's entity (:mod:`qa.steps._examples`), run
   through the real toolbox, is shown as one worked trajectory: its observations are what
   the store returned.
3. **Act.** At most ``max_steps`` actions, each a thought then one action at temperature
   0, held by a grammar generated from the state
   (:mod:`qa.methods.queryagent._grammar`): the actions
   and arguments valid now. The first ``get_relations`` (on the best-linked entity), the
   relations of a newly bound variable and the ``execute`` after ``set_answer`` are the
   only sensible next moves and cost no model call. Observations older than two steps are
   folded.
4. **Check and correct** (``correction``, on by default). Before an action runs, format,
   validity and rationality checks (:mod:`qa.methods.queryagent._checks`); when it runs, execution
   checks (:mod:`qa.methods.queryagent._tools`). What can be fixed without the model is (a label
   written for an id; an empty ``add_fact`` read the other way round). Otherwise the model
   is shown the guideline for that check (``queryagent_guidelines.md``) and redoes only
   that step, with the failed choice taken out of its grammar. When no check fires, no
   call is spent on reflection. With ``correction=false`` actions run as written and a
   failed one is only reported.
5. **Ground and read** (``ground``, on by default). A query whose facts name one entity
   is a draft, grounded as pgmr's drafts are (:mod:`qa.steps._path_grounding`): its relations'
   words rank the store's real paths from the entity, up to one hop longer than it wrote
   (a plan one hop short is this agent's commonest miss); the model reads the facts of
   the best few and marks the answer, and the path holding the mark is the query. The
   facts need not be a walk: the model hangs a second fact off the entity as often as it
   chains it.
6. **Answer** with the executed query's rows and its instantiated patterns as evidence;
   refuse when no query executes with rows. The trace holds every action, the checks
   that fired and the corrections.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ...prompts import prompt_text
from ...steps._examples import ExamplePath, Hop, question_similarity, store_paths
from ...steps._path_grounding import ChainDraft, PathGrounder
from ...steps._resolution import Choice
from ...steps._result import Answer
from ...steps._retrieval import question_entities
from .._base import MethodRun, QAContext, QAMethod
from ._checks import Check, check_action
from ._grammar import step_grammar
from ._state import Action, AgentState, Entity, StepFormatError, parse_step, plan_in, slug
from ._tools import AgentTools, Outcome

KEEP_OBSERVATIONS = 2
EXAMPLE_LISTING = 5  # relation lines per listing in the example


@dataclass
class Step:
    """One step of a trajectory as the model sees it, and what the trace keeps of it."""

    thought: str
    action: str
    observation: str
    auto: bool = False
    checks: list[Check] = field(default_factory=list)
    redo: dict | None = None

    def to_dict(self) -> dict:
        out = {"thought": self.thought, "action": self.action, "observation": self.observation}
        if self.auto:
            out["auto"] = True
        if self.checks:
            out["checks"] = [c.to_dict() for c in self.checks]
        if self.redo:
            out["redo"] = self.redo
        return out


class QueryAgentMethod(QAMethod):
    name = "queryagent"
    description = "the model builds the query one action at a time over a toolbox, with checks that correct it"
    index_kinds = ("entities",)
    shapes = True
    checks_names = True
    composes = True

    def __init__(self, context: QAContext, *, correction: bool = True, max_steps: int = 7, relations_k: int = 40,
                 entities: int = 3, example_hops: int = 2, step_tokens: int = 90, timeout_s: float = 5.0,
                 max_rows: int = 1000, max_answers: int = 200, ground: bool = True, read_answers: bool = True):
        super().__init__(context)
        self.ground = ground
        self.read_answers = read_answers
        self.correction = correction
        self.max_steps = max_steps
        self.relations_k = relations_k
        self.entities = entities
        self.example_hops = example_hops
        self.step_tokens = step_tokens
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.max_answers = max_answers

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        index = self.context.get_index()
        entities = self.link(index, question)
        run.record("entities", linked=[{"id": e.id, "iri": e.iri, "label": e.label} for e in entities])
        if not entities:
            return self.refuse(question, run, "no_entity", "the question names no entity of the store",
                               allow_parametric)
        tools = AgentTools(self.store, index, question, relations_k=self.relations_k, timeout_s=self.timeout_s,
                           max_rows=self.max_rows, correction=self.correction)
        example = self.example(index, question, tools, run)
        state, steps, done = self.act(AgentState(question, entities=tuple(entities)), example, tools, run)
        if done is None and state.facts and not state.executed:
            done = self.fallback(state, tools, run)
        found = self.ground_draft(index, state, run) if self.ground else None
        if found is None and done is not None and done.rows:
            found = done.query, done.rows
        return self.query_answer(question, run, found, "not in the store: no query the agent built returns rows",
                                 allow_parametric=allow_parametric, limit=self.max_answers, timeout_s=self.timeout_s)

    # -- 5. ground the query's words in the store's real paths ----------------------------------
    def ground_draft(self, index, state: AgentState, run: MethodRun):
        """(query, rows) of the grounded draft, or None when the query is no draft from one
        entity or no path from it returns rows."""
        draft = state.draft()
        if draft is None:
            return None
        start, words, ends, answer = draft
        grounder = PathGrounder(self.store, index.embed, timeout_s=self.timeout_s, max_rows=self.max_rows,
                                read=self.read_answers)
        return grounder.ground(state.question, Choice(start.iri, start.label, 1.0),
                               ChainDraft(words, len(words), ends, answer), run)

    # -- 1. link --------------------------------------------------------------------------------
    def link(self, index, question: str) -> list[Entity]:
        out: list[Entity] = []
        for c in question_entities(index, question, k=self.entities * 2):
            if any(e.iri == c.iri for e in out):
                continue
            base = slug(c.label) or "entity"
            id_, n = base, 2
            while any(e.id == id_ for e in out):
                id_, n = f"{base}_{n}", n + 1
            out.append(Entity(id_, c.iri, c.label))
            if len(out) == self.entities:
                break
        return out

    # -- 2. the example -----------------------------------------------------------------------------
    def example(self, index, question: str, tools: AgentTools, run: MethodRun) -> str:
        """One worked trajectory over a real path of the store around the question's entity,
        two hops where there is one, through the real toolbox."""
        paths = store_paths(self.store, index, question)
        paths = [p for p in paths if len(p.hops) == 2 and p.start_iri] or [p for p in paths if p.start_iri]
        if not paths:
            run.record("example", path=None)
            return "(no example: nothing around the question's entity)"
        scores = question_similarity(index, question, paths)
        path = paths[max(range(len(paths)), key=lambda i: scores[i])]
        start = Entity(slug(path.start) or "entity", path.start_iri, path.start)
        state = AgentState(path.question(), entities=(start,))
        out = tools.get_relations(state, start.id)
        steps = [Step(f"First, the relations of {start.id}.", f"get_relations({start.id})", out.observation)]
        state, term = out.state, start.id
        hops = []  # (state before, relation, action, observation)
        for hop in path.hops:
            var = state.fresh_variable()
            relation = next((state.relation(link.relation) for link in state.links(term)
                             if link.backward == hop.backward and state.relation(link.relation).label == hop.relation),
                            None)
            if relation is None:
                run.record("example", path=path.question(), error=f"{hop.relation} is not among the relations shown")
                return "(no example)"
            s, o = (var, term) if hop.backward else (term, var)
            out = tools.add_fact(state, s, relation.name, o)
            hops.append((state, relation.name, f"add_fact({s}, {relation.name}, {o})", out.observation))
            state, term = out.state, var
        while len(hops) < self.example_hops:
            # one more hop: the relation at the chain's end read closest to the question, not back
            last = hops[-1][1]
            link = next((k for k in state.links(term) if k.relation != last), None)
            if link is None:
                break
            var = state.fresh_variable()
            relation = state.relation(link.relation)
            s, o = (var, term) if link.backward else (term, var)
            out = tools.add_fact(state, s, relation.name, o)
            if out.failed:
                break
            hops.append((state, relation.name, f"add_fact({s}, {relation.name}, {o})", out.observation))
            path = ExamplePath(path.start, path.hops + (Hop(relation.label, link.backward),), path.start_iri)
            state, term = replace(out.state, question=path.question()), var
        # each thought starts with the chain built so far (the grammar writes it in real steps)
        # and states the plan, so a small model sees where it is and when it is done
        plan = " -> ".join([start.id] + [h[1] for h in hops])
        steps += [Step(f"{before.thought_start()}{plan}. Next: {r}." if i == 0 else
                       replace(before, plan=plan).thought_start(), action, observation)
                  for i, (before, r, action, observation) in enumerate(hops)]
        out = tools.set_answer(state, term)
        steps.append(Step(f"{replace(state, plan=plan).thought_start()}{term} is the answer.",
                          f"set_answer({term})", out.observation))
        out = tools.execute(out.state)
        steps.append(Step("Run the query.", "execute()", out.observation))
        run.record("example", path=path.question(), steps=len(steps))
        return trajectory_text(state, steps, example=True)

    # -- 3/4. act, check, correct -------------------------------------------------------------------
    def act(self, state: AgentState, example: str, tools: AgentTools, run: MethodRun):
        """Run the agent; (final state, steps, the execute outcome or None)."""
        steps: list[Step] = []
        done: Outcome | None = None
        failed: set[tuple[str, str, str]] = set()  # facts that matched nothing: they never will, as the query grows
        while len(steps) < self.max_steps and not state.executed:
            auto = self.auto_action(state)
            if auto is not None:
                out = tools.apply(state, auto[1])
                steps.append(Step(auto[0], auto[1].text(), out.observation, auto=True))
            else:
                step, out = self.model_step(state, steps, example, tools, run, failed)
                steps.append(step)
            state = out.state
            if out.query is not None:
                done = out
            run.record("agent", steps=[s.to_dict() for s in steps])
        run.record("agent", steps=[s.to_dict() for s in steps], final_query=done.query.render() if done else None,
                   checks=[f"{c.kind}:{c.name}" for s in steps for c in s.checks],
                   corrections=[{"step": i + 1, "check": s.redo["check"], "fixed": s.redo["fixed"]}
                                for i, s in enumerate(steps) if s.redo])
        return state, steps, done

    @staticmethod
    def auto_action(state: AgentState) -> tuple[str, Action] | None:
        """The move that needs no model: the relations of the best-linked entity first,
        and running the query once its answer is set."""
        if not state.fetched:
            first = state.entities[0].id
            return f"First, the relations of {first}.", Action("get_relations", (first,))
        if state.answer and not state.executed:
            return "The answer is set; run the query.", Action("execute")
        return None

    def model_step(self, state: AgentState, steps: list[Step], example: str, tools: AgentTools, run: MethodRun,
                   failed: set[tuple[str, str, str]]) -> tuple[Step, Outcome]:
        step, out, check = self.attempt(state, steps, example, tools, run, failed)
        if check is None or not self.correction:
            return step, out
        # the redo: the failed attempt, its error and the guideline in view, its choice out of the grammar
        shown = Step(step.thought, step.action, f"Error ({check.kind}: {check.name}): {check.message}\n"
                     f"Guideline: {guideline(check.name)}\nRedo this step with another action.")
        redo, out, again = self.attempt(state, steps + [shown], example, tools, run, failed,
                                        not_answers=_not_answers(step.action, check))
        redo.checks = step.checks + redo.checks
        redo.redo = {"check": f"{check.kind}:{check.name}", "failed_action": step.action, "fixed": again is None}
        return redo, out

    def attempt(self, state: AgentState, steps: list[Step], example: str, tools: AgentTools, run: MethodRun,
                failed: set[tuple[str, str, str]], *,
                not_answers: list[str] = ()) -> tuple[Step, Outcome, Check | None]:
        """One model call for the next action, checked and (when it passes) applied. A fact
        that matches nothing joins ``failed``, which the grammars leave out from then on."""
        if state.plan and not state.finished():
            state = replace(state, next_relation=tools.nearest_relation(state, state.chain_end(), state.next_item()))
        grammar = step_grammar(state, failed_facts=failed, not_answers=not_answers)
        text = run.ask("agent", "queryagent_step",
                       {"example": example, "trajectory": trajectory_text(state, steps)},
                       max_tokens=self.step_tokens, temperature=0.0, grammar=grammar.gbnf()).text
        try:
            thought, action = parse_step(text)
        except StepFormatError as exc:
            check = Check("format", "bad_format", str(exc))
            return Step("", text.strip()[:200], f"Error: {exc}", checks=[check]), Outcome(state, str(exc)), check
        action, checks = check_action(state, action, grammar if self.correction else None, fix=self.correction)
        check = next((c for c in checks if c.fixed is None), None)
        if check is not None:
            out = Outcome(state, f"Error: {check.message}.", checks)
        else:
            out = tools.apply(state, action)
            out.checks = checks + out.checks
            check = out.failed
            if check is not None and check.name == "empty_fact":
                s, r, o = action.args
                failed |= {(s, r, o), (o, r, s)}
        if state.plan is None and plan_in(thought):  # the plan, once written, starts every later thought
            out.state = replace(out.state, plan=plan_in(thought))
        return Step(thought, action.text(), out.observation, checks=out.checks), out, check

    # -- 5. when the steps run out -----------------------------------------------------------------
    def fallback(self, state: AgentState, tools: AgentTools, run: MethodRun) -> Outcome | None:
        """Out of steps with facts but no answer: the last bound variable that is not a
        mediator answers."""
        candidates = [v for v, b in state.bindings.items() if not b.mediator and b.count]
        if not candidates:
            return None
        out = tools.execute(tools.set_answer(state, candidates[-1]).state)
        run.record("agent", fallback={"answer": candidates[-1], "observation": out.observation})
        return out


def _not_answers(action_text: str, check: Check) -> list[str]:
    """The variable a redo may not answer with: one holding mediator nodes."""
    m = re.fullmatch(r"set_answer\((\?\w+)\)", action_text)
    return [m.group(1)] if m and check.name == "answer_on_mediator" else []


def trajectory_text(state: AgentState, steps: list[Step], *, example: bool = False) -> str:
    """The question, its entities and the steps so far, observations older than
    ``KEEP_OBSERVATIONS`` steps folded, then the query so far. The ``example`` trajectory
    is complete: nothing folded, each relation listing cut to its first lines."""
    lines = [f"Question: {state.question}",
             "Entities: " + ", ".join(e.id if e.id == e.label else f"{e.id} ({e.label})" for e in state.entities)]
    for i, step in enumerate(steps):
        if example:
            observation = cut(step.observation, EXAMPLE_LISTING)
        elif i < len(steps) - KEEP_OBSERVATIONS:
            observation = fold(step.observation)
        else:
            observation = step.observation
        lines += [f"Thought: {step.thought}", f"Action: {step.action}", f"Observation: {observation}"]
    if not example:
        query = " . ".join(f.text() for f in state.facts) or "(empty)"
        lines.append(f"Query so far: {query}")
        if state.bindings:
            lines.append("Variables: " + "; ".join(f"{v} = {b.text()}" for v, b in state.bindings.items()))
    return "\n".join(lines)


def fold(observation: str) -> str:
    """An observation without its relation listings (their indented lines)."""
    lines = observation.split("\n")
    kept = [ln for ln in lines if not ln.startswith("  ")]
    dropped = len(lines) - len(kept)
    return "\n".join(kept) + (f" ({dropped} relations folded)" if dropped else "")


def cut(observation: str, n: int) -> str:
    """An observation with each relation listing cut to its first ``n`` lines."""
    out, run = [], 0
    for line in observation.split("\n"):
        run = run + 1 if line.startswith("  ") else 0
        if run <= n:
            out.append(line)
        elif run == n + 1:
            out.append("  ...")
    return "\n".join(out)


def guideline(name: str) -> str:
    """The guideline for check ``name`` from queryagent_guidelines.md."""
    sections = dict(re.findall(r"^## (\w+)\s*\n(.*?)(?=^## |\Z)", prompt_text("queryagent_guidelines"),
                               re.MULTILINE | re.DOTALL))
    return " ".join(sections.get(name, "Choose another action.").split())

"""Progressive retrieval and reasoning (prograg): walk the store hop by hop, one
sub-question per hop, with the model choosing relations and facts and an uncertainty gate
widening a choice the model was unsure of.

1. **Decompose.** The model names the question's key entities and writes, per entity, a
   chain of sub-questions (``[ANS1]`` for the answer before) with each answer's type
   (:mod:`qa.methods.prograg._decomposition`); the chain's length is the number of hops. A sub-question
   that restates the one before (cosine ≥ ``restatement``, 0.85) ends the chain: a 1.5B
   model often adds one. Each entity is linked by name. With ``decompose=False`` (the ablation) the whole question is asked at
   every hop, for ``hops_without_decomposition`` hops, until the model picks nothing.
2. **Per hop.** The current entities' relations, read both ways, are ranked against the
   sub-question by embedding similarity; the top ``relations`` (8) are kept, and when more
   than ``keep_relations`` (3) remain the model prunes them to 3, told the expected answer
   type. The facts along the kept relations extend the paths; each is scored by its
   similarity to the sub-question plus ``structure_weight`` × the personalized PageRank of
   its end from the topic entity over the facts read so far (the research's trained GNN
   replaced by a graph statistic,
   :mod:`qa.methods.prograg._graph_scores`). A nucleus of ends is kept
   (top-p 0.9 of softmax(score / 0.1), between 5 and 10 entities), and the model picks up
   to ``max_picks`` (3) of their facts that answer the sub-question, or None. A picked
   fact stands for the nucleus facts of the same relation read the same way (the model
   names one of several films a director made, not all). So when every fact shown reads
   one relation the same way, the pick could only be "all" and is not asked
   (``ask_single_relation=True`` asks anyway).
3. **Uncertainty gate.** The raw logits of the pick's first token, over the reply's
   options (the facts' letters and None, k = min(5, options)), give the aleatoric
   uncertainty AU (:mod:`qa.methods.prograg._uncertainty`); when AU exceeds ``au_threshold``, the
   retriever's top ``gate_extra`` (4) facts join the pick.
   A backend that exposes no raw logits leaves the gate closed (traced as ``au: null``).
4. **Prefixes and repacking.** Every prefix of every path found is a candidate (a question
   may need fewer hops than its chain says); all are ranked against the whole question and
   packed best-first into ``budget`` tokens, one line per path. ``prefixes=False`` (the
   ablation) keeps only the longest paths.
5. **Answer.** The model answers from the packed paths (the shared answer step), each mark
   held to the end of a packed path; answers are grounded to those ends, and the facts of
   the paths that end at an answer are its evidence. No path, or no answer at a path's
   end, is a refusal.
"""
from __future__ import annotations

from ...prompts import grammar_text
from ...steps._answering import ask_for_answers
from ...steps._grounding import normalise_label
from ...steps._result import Answer
from ...steps._retrieval import entity_edges, exact_entities, question_entities, similarities
from .._base import MethodRun, QAContext, QAMethod
from ._decomposition import Chain, cut_restatement, parse_decomposition, undecomposed
from ._graph_scores import nucleus
from ._progressive import (LETTERS, NONE, choice_grammar, combined_scores, expand, lettered, parse_choices, readings)
from ._reasoning_paths import ReasoningPath, distinct, pack, packed_facts, prefixes
from ._uncertainty import aleatoric_uncertainty, option_logits

# The research's value. On Qwen2.5-1.5B's logits (14-19, close together) AU hardly moves
# within one k: 1.077-1.079 at k = 3, 1.361-1.364 at k = 4, 1.583-1.586 at k = 5 over 95
# picks on MetaQA 2/3-hop and PQ-2H dev (README), so 1.55 opens the gate exactly when five
# options are shown; `kgstore eval --sweep au_threshold=...` measures other values. On 50
# MetaQA 2-hop dev questions the four ways the gate can behave (open at k >= 3, k >= 4,
# k = 5, never) scored within one question of each other (README), so this stays.
DEFAULT_AU_THRESHOLD = 1.55


class ProgRAGMethod(QAMethod):
    name = "prograg"
    description = "progressive retrieval: sub-question chains, relation and fact choice per hop, uncertainty gate"
    index_kinds = ("entities",)

    def __init__(self, context: QAContext, *, decompose: bool = True, prefixes: bool = True,
                 au_threshold: float = DEFAULT_AU_THRESHOLD, au_k: int = 5, gate_extra: int = 4,
                 relations: int = 8, keep_relations: int = 3, top_p: float = 0.9, min_entities: int = 5,
                 max_entities: int = 10, nucleus_temperature: float = 0.1, structure_weight: float = 0.3,
                 max_hops: int = 3, hops_without_decomposition: int = 3, max_edges: int = 100,
                 max_candidates: int = 300, max_facts_shown: int = 12, max_picks: int = 3,
                 ask_single_relation: bool = False, budget: int = 400, decompose_tokens: int = 160,
                 answer_tokens: int = 120, restatement: float = 0.85):
        super().__init__(context)
        self.decompose = _flag(decompose)
        self.prefixes = _flag(prefixes)
        self.ask_single_relation = _flag(ask_single_relation)
        self.au_threshold = au_threshold
        self.au_k = au_k
        self.gate_extra = gate_extra
        self.relations = relations
        self.keep_relations = keep_relations
        self.top_p = top_p
        self.min_entities = min_entities
        self.max_entities = max_entities
        self.nucleus_temperature = nucleus_temperature
        self.structure_weight = structure_weight
        self.max_hops = max_hops
        self.hops_without_decomposition = hops_without_decomposition
        self.max_edges = max_edges
        self.max_candidates = max_candidates
        self.max_facts_shown = max_facts_shown
        self.max_picks = max_picks
        self.budget = budget
        self.decompose_tokens = decompose_tokens
        self.answer_tokens = answer_tokens
        self.restatement = restatement

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        index = self.context.get_index()
        chains = self.chains(question, index, run)
        if not chains:
            return self.refuse(question, run, "not_in_store",
                               "not in the store: the question names no entity the store holds", allow_parametric)
        found: list[ReasoningPath] = []
        for chain, iri, label in chains:
            found += self.walk(chain, iri, label, index, run)
        if not found:
            return self.refuse(question, run, "no_path", "not in the store: no path from "
                               + ", ".join(repr(label) for _, _, label in chains) + " reaches a candidate answer",
                               allow_parametric)
        packed = self.repack(question, found, index, run)
        return self.final_answer(question, packed, {iri for _, iri, _ in chains}, run, allow_parametric)

    # -- 1. decompose -----------------------------------------------------------------------
    def chains(self, question: str, index, run: MethodRun) -> list[tuple[Chain, str, str]]:
        """The chains to walk, each with its linked topic entity (IRI, label)."""
        linked = question_entities(index, question)
        if not self.decompose:
            if not linked:
                run.record("decompose", linked=[])
                return []
            chain = undecomposed(question, linked[0].label, self.hops_without_decomposition)
            run.record("decompose", chains=[chain.to_dict()], linked=[[linked[0].iri, linked[0].label]])
            return [(chain, linked[0].iri, linked[0].label)]
        completion = run.ask("decompose", "prograg_decompose", {"question": question},
                             max_tokens=self.decompose_tokens, temperature=0.0, stop=["[ANS2]"],
                             grammar=grammar_text("prograg_decompose"))
        chains = [cut_restatement(c, lambda a, b: similarities(index, a, [b])[0], self.restatement)
                  for c in parse_decomposition(completion.text, max_hops=self.max_hops)]
        out, unlinked = [], []
        for chain in chains:
            found = exact_entities(index, chain.entity, 1) or [
                (c.iri, c.label) for c in linked if normalise_label(c.label) in normalise_label(chain.entity)
                or normalise_label(chain.entity) in normalise_label(c.label)][:1]
            if found and all(iri != found[0][0] for _, iri, _ in out):  # a chain repeated is walked once
                out.append((chain, *found[0]))
            elif not found:
                unlinked.append(chain.entity)
        if not chains and linked:
            # nothing usable came back: the whole question from the entity it names, as without decomposition
            chain = undecomposed(question, linked[0].label, self.hops_without_decomposition)
            out.append((chain, linked[0].iri, linked[0].label))
        run.record("decompose", chains=[c.to_dict() for c in chains], unlinked=unlinked,
                   linked=[[iri, label] for _, iri, label in out])
        return out

    # -- 2-3. walk the chain hop by hop ----------------------------------------------------------
    def walk(self, chain: Chain, topic: str, topic_label: str, index, run: MethodRun) -> list[ReasoningPath]:
        """Every path picked at every hop (each hop's paths extend the hop before's)."""
        frontier = [ReasoningPath(topic, topic_label)]
        local_edges: list[tuple[str, str]] = []
        found: list[ReasoningPath] = []
        hops = []
        for number, sub in enumerate(chain.steps, 1):
            trace: dict = {"hop": number, "question": sub.text}
            hops.append(trace)
            ends = list(dict.fromkeys(p.end for p in frontier if not p.end_is_literal))[:self.max_entities]
            edges = {n: entity_edges(self.store, n, limit=self.max_edges) for n in ends}
            local_edges += [(e.s, e.o) for es in edges.values() for e in es]
            labels = list(dict.fromkeys(p.end_label for p in frontier if p.end in edges))
            given = labels[0] if labels else topic_label
            question = sub.filled(given)
            kept = self.rank_relations(sub, question, given, labels, edges, index, run, trace)
            candidates = expand(frontier, edges, [r.key for r in kept], limit=self.max_candidates)
            if not candidates:
                trace["stopped"] = "no facts along the kept relations"
                break
            picked = self.pick_facts(sub, question, labels, candidates, local_edges, topic, index, run, trace)
            if not picked:
                trace["stopped"] = "nothing picked"
                break
            found += picked
            frontier = picked
        run.trace.setdefault("walk", {}).setdefault("chains", []).append(
            {"entity": topic_label, "iri": topic, "hops": hops})
        return found

    def rank_relations(self, sub, question: str, given: str, labels, edges, index, run, trace) -> list:
        """The readings kept at this hop: top ``relations`` by similarity, pruned by the
        model to ``keep_relations`` when more remain."""
        options = readings(edges)
        scores = similarities(index, question, [r.phrase(given) for r in options])
        best = sorted(range(len(options)), key=lambda i: -scores[i])[:self.relations]
        ranked = [options[i] for i in best]
        trace["relations"] = [[options[i].phrase(given), round(scores[i], 4)] for i in best]
        if len(ranked) <= self.keep_relations:
            return ranked
        completion = run.ask("relations", "prograg_relations",
                             {"question": sub.text, "slot": _slot_line(sub.text, labels),
                              "answer_type": sub.answer_type or "unknown",
                              "options": lettered([r.phrase(given) for r in ranked])},
                             max_tokens=12, temperature=0.0,
                             grammar=choice_grammar(len(ranked), none=False, most=self.keep_relations))
        chosen = [ranked[i] for i in parse_choices(completion.text, len(ranked))][:self.keep_relations]
        trace["kept_relations"] = [r.phrase(given) for r in chosen]
        return chosen or ranked[:self.keep_relations]

    def pick_facts(self, sub, question: str, labels, candidates: list[ReasoningPath], local_edges, topic: str,
                   index, run, trace) -> list[ReasoningPath]:
        """The paths whose last fact the model picks from the nucleus (with their siblings),
        widened by the gate when the model was unsure."""
        sims = similarities(index, question, [p.steps[-1].fact.text() for p in candidates])
        scored = combined_scores(candidates, sims, local_edges, topic, self.structure_weight)
        by_end: dict[str, float] = {}
        for path, (score, _) in zip(candidates, scored):
            by_end[path.end] = max(score, by_end.get(path.end, float("-inf")))
        core = set(nucleus(by_end, top_p=self.top_p, at_least=self.min_entities, at_most=self.max_entities,
                           temperature=self.nucleus_temperature))
        order = sorted(range(len(candidates)), key=lambda i: -scored[i][0])
        # one line per fact: several paths may reach the same fact, and all of them go on
        facts = list(dict.fromkeys(_last(candidates[i]) for i in order if candidates[i].end in core))
        shown = facts[:self.max_facts_shown]
        text = {_last(p): p.steps[-1].fact.text() for p in candidates}
        score = {}
        for i in order:
            score.setdefault(_last(candidates[i]), [round(scored[i][0], 4), round(sims[i], 4), round(scored[i][1], 4)])
        trace.update(candidates=len(candidates), nucleus=len(core), shown=[[text[f]] + score[f] for f in shown])
        if len({(f[1], f[3]) for f in shown}) == 1 and not self.ask_single_relation:
            # every fact shown reads one relation one way, so any pick stands for all of them
            trace.update(pick="(not asked: one relation)", au=None, gate=False, picked=[text[f] for f in facts])
            return [candidates[i] for i in order if _last(candidates[i]) in set(facts)]
        completion = run.ask("pick", "prograg_pick",
                             {"question": sub.text, "slot": _slot_line(sub.text, labels),
                              "facts": lettered([text[f] for f in shown])},
                             max_tokens=16, temperature=0.0, logprobs=20,
                             grammar=choice_grammar(len(shown), none=True, most=self.max_picks))
        chosen = [shown[i] for i in parse_choices(completion.text, len(shown))]
        ways = {(f[1], f[3]) for f in chosen}
        siblings = [f for f in facts if (f[1], f[3]) in ways]
        au, logits = self.uncertainty(completion, len(shown))
        gated = au is not None and au > self.au_threshold
        extra = list(dict.fromkeys(_last(candidates[i]) for i in order))[:self.gate_extra] if gated else []
        picked = list(dict.fromkeys(chosen + siblings + extra))
        trace.update(pick=completion.text.strip(), logits=logits, au=None if au is None else round(au, 4),
                     gate=gated, picked=[text[f] for f in picked])
        rank = {f: i for i, f in enumerate(picked)}
        return sorted((p for p in candidates if _last(p) in rank), key=lambda p: rank[_last(p)])

    def uncertainty(self, completion, options: int) -> tuple[float | None, list[float]]:
        """AU of the pick's first token over the reply's options, the facts' letters and
        None (k = min(au_k, facts shown + 1)), and the logits it was computed from."""
        steps = completion.top_logprobs or []
        if not steps or not steps[0].top_logits:
            return None, []
        names = list(LETTERS[:options]) + [NONE]
        logits = option_logits(steps[0].top_logits, names, min(self.au_k, len(names)))
        return aleatoric_uncertainty(logits), [round(x, 3) for x in logits]

    # -- 4. prefixes and repacking ----------------------------------------------------------------
    def repack(self, question: str, found: list[ReasoningPath], index, run: MethodRun) -> list[ReasoningPath]:
        if self.prefixes:
            pool = prefixes(found)
        else:
            longest = max(len(p.steps) for p in found)
            pool = distinct([p for p in found if len(p.steps) == longest])
        scores = similarities(index, question, [p.text() for p in pool])
        packed = pack(pool, scores, self.budget)
        run.record("repack", paths=len(found), candidates=len(pool), budget=self.budget,
                   packed=[[p.line(), round(s, 4)] for p, s in sorted(zip(pool, scores), key=lambda x: -x[1])
                           if p in packed])
        return packed

    # -- 5. answer ------------------------------------------------------------------------------------
    def final_answer(self, question: str, packed: list[ReasoningPath], topics: set[str], run: MethodRun,
                     allow_parametric: bool) -> Answer:
        ends = {}
        for p in packed:
            if p.end not in topics:
                ends.setdefault(normalise_label(p.end_label), (p.end_label, None if p.end_is_literal else p.end))
        lines = "\n".join(p.line() for p in packed)
        marks = ask_for_answers(run, "answer", "prograg_answer", {"paths": lines, "question": question},
                                max_tokens=self.answer_tokens, terms=[label for label, _ in ends.values()])
        grounded = list(dict.fromkeys(ends[k] for k in (normalise_label(m) for m in marks) if k in ends))
        run.record("grounding", marked=marks, grounded=[label for label, _ in grounded])
        if not grounded:
            reason = "no_answer" if not marks else "not_in_store"
            return self.refuse(question, run, reason, "not in the store: no path found ends at an answer"
                               if marks else "not in the store: the paths found do not answer the question",
                               allow_parametric)
        answered = {iri or normalise_label(label) for label, iri in grounded}
        evidence = packed_facts([p for p in packed if (p.end if not p.end_is_literal
                                                       else normalise_label(p.end_label)) in answered])
        return Answer(question=question, method=self.name, answers=[label for label, _ in grounded],
                      answer_iris=[iri for _, iri in grounded], evidence=evidence)


def _last(path: ReasoningPath) -> tuple[str, str, str, bool]:
    """The fact a candidate path ends with, and the way it was walked."""
    step = path.steps[-1]
    return (step.fact.s, step.fact.p, step.fact.o, step.backward)


def _slot_line(text: str, labels) -> str:
    """The line that says what ``[ANS1]`` stands for, when the sub-question has one."""
    if "[ANS" not in text.upper() or not labels:
        return ""
    shown = "; ".join(labels[:5]) + ("; ..." if len(labels) > 5 else "")
    return f"\n[ANS1] is: {shown}"


def _flag(value) -> bool:
    """An option given as ``-o prefixes=false`` arrives as a string."""
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off")
    return bool(value)

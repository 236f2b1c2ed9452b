"""The pseudo-graph method: plan the knowledge as Cypher, look it up, verify, answer.

1. **Pseudo-graph generation**: the LLM writes the knowledge the question needs as Cypher
   ``CREATE`` statements (two in-context examples); the Cypher sandbox runs them and decodes
   pseudo-triples. Text that does not parse goes back to the LLM once, with the position
   (so does Cypher that creates nodes but no relationships).
2. **Semantic query**: each pseudo-triple, written like the triple index's texts
   (``subject | relation | object``), fetches its top ``top_k`` store triples. Lookups go
   hop by hop from the entities the question names; a guessed intermediate entity is
   replaced by the store entities the previous hop led to
   (:mod:`qa.methods.pseudo_graph._chain`), and a
   start the model renamed by the entity the question names.
3. **Pruning** (no LLM,
   :mod:`qa.methods.pseudo_graph._pruning`): k = the number of distinct entities looked
   up (pseudo-graph subjects, or the store entities standing in for them); keep k
   retrieved entities (name match, then popularity), score each by the mean similarity of
   its best ``score_top`` (3) triples, drop those under ``threshold`` (0.55 by default,
   for MiniLM; the research's 0.7 was set for another encoder): the ground graph.
4. **Verification**: the LLM rewrites the pseudo-graph against the ground graph (delete
   unsupported, replace conflicting, add missing): the fixed graph. A grammar lets it name
   only ground facts (``subject | relation``), whose values then come from the ground
   graph (:func:`qa.steps._graph_text.align_to_ground`): a 1.5B model copies lists badly and
   slowly, so the ground graph's values win and unsupported lines cannot be written. Each
   lookup's best hit and the facts a short chain reached join the fixed graph whatever
   the model names, because it often leaves out exactly those.
5. **Answer**: the LLM answers from the fixed graph, marking answers in ``{}``; a grammar
   lets a mark hold only a term of the fixed graph, as written there, or ``unknown``
   (``answer_terms``). Answers must
   be subjects or objects of the ground graph; otherwise, or with an empty ground graph,
   the result is a refusal ("not in the store"). With ``allow_parametric`` the LLM answers
   from its own knowledge instead, and the answer is flagged ``parametric``.
"""
from __future__ import annotations

from kgstore.errors import CypherSyntaxError

from ...prompts import grammar_text
from ...sandbox import run_pseudo_graph
from ...steps._answering import ask_for_answers, supporting_evidence
from ...steps._graph_text import (align_to_ground, fact_pairs, labelled, pair_lines_grammar, parse_triple_lines,
                                  relation_words, triple_lines)
from ...steps._grounding import ground_answers, normalise_label
from ...steps._result import Answer, Evidence
from ...steps._retrieval import entity_popularity, exact_entities, search_triples_about, search_triples_many
from ...steps._retry import RetryWith, generate_checked, syntax_retry
from .._base import MethodRun, QAContext, QAMethod
from ._chain import lookup_plan, next_hop_entities
from ._pruning import EntityGroup, ground_graph_text, order_triples, prune

# The research drops entities whose retrieved triples have mean similarity under 0.7. With
# all-MiniLM-L6-v2 (the default encoder) the right entity often scores 0.62-0.68 on MetaQA
# (the model's guessed values differ from the store's), while unrelated entities score
# 0.34-0.45 (demo store: the Alps, absent, vs the Andes and the Himalayas at 0.88-0.94).
DEFAULT_THRESHOLD = 0.55


def pseudo_triple_text(subject: str, relation: str, obj: str) -> str:
    return f"{subject} | {relation_words(relation)} | {obj}"


class PseudoGraphMethod(QAMethod):
    name = "pseudo-graph"
    description = "pseudo-graph Cypher, semantic query, pruning, atomic verification, grounded answer"
    index_kinds = ("triples",)

    def __init__(self, context: QAContext, *, top_k: int = 10, threshold: float = DEFAULT_THRESHOLD,
                 max_ground_triples: int = 40, generate_tokens: int = 160, verify_tokens: int = 96,
                 answer_tokens: int = 80, use_grammar: bool = True, answer_terms: bool = True,
                 max_stand_ins: int = 5, max_namesakes: int = 3, extend_entities: int = 3, extend_top_k: int = 3,
                 score_top: int = 3):
        super().__init__(context)
        self.top_k = top_k
        self.threshold = threshold
        self.max_ground_triples = max_ground_triples
        self.generate_tokens = generate_tokens
        self.verify_tokens = verify_tokens
        self.answer_tokens = answer_tokens
        self.use_grammar = use_grammar
        self.answer_terms = answer_terms
        self.max_stand_ins = max_stand_ins
        self.max_namesakes = max_namesakes
        self.extend_entities = extend_entities
        self.extend_top_k = extend_top_k
        self.score_top = score_top

    # -- the five steps ----------------------------------------------------------------------
    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        triples = self.generate(question, run)
        if not triples:
            return self.refuse(question, run, "no_pseudo_graph",
                                "the model wrote no usable pseudo-graph for this question", allow_parametric)
        retrieved, extended, firsts = self.semantic_query(question, triples, run)
        groups = self.ground_graph(retrieved, run, extended=extended)
        if not groups:
            return self.refuse(question, run, "empty_ground_graph",
                                "not in the store: no store facts match what the question needs", allow_parametric)
        ground = [e for g in groups for e in g.triples]
        fixed = self.verify(question, triples, groups, run, firsts=firsts, extended=extended)
        marks = self.final_answer(question, fixed, run)
        if not marks:
            return self.refuse(question, run, "no_answer",
                                "not in the store: the store facts found do not answer the question",
                                allow_parametric)
        grounded, unmatched = ground_answers(marks, ground)
        run.record("grounding", marked=marks, grounded=[t.label for t in grounded], unmatched=unmatched)
        if not grounded:
            return self.refuse(question, run, "not_in_store",
                                f"not in the store: the answer {', '.join(marks)!r} is not an entity or value "
                                "of the store facts found", allow_parametric)
        return Answer(question=question, method=self.name, answers=[t.label for t in grounded],
                      answer_iris=[t.iri for t in grounded],
                      evidence=supporting_evidence(ground, fixed, grounded))

    def generate(self, question: str, run: MethodRun) -> list[tuple[str, str, str]]:
        """Step 1: pseudo-triples (subject, relation, object) from the LLM's Cypher.

        Cypher that does not parse goes back once with the error's position; Cypher that
        parses but states no facts (nodes without relationships) goes back once too."""
        shape = {"grammar": grammar_text("pseudo_graph_cypher")} if self.use_grammar else {}

        def check(text: str):
            try:
                pg = run_pseudo_graph(text)
            except CypherSyntaxError as exc:
                raise syntax_retry(exc, "pseudo_graph_retry", {"cypher": text.strip()}) from None
            if not pg.triples:
                raise RetryWith("the Cypher creates no relationships", "pseudo_graph_retry_no_facts",
                                {"cypher": text.strip()})
            return pg

        done = generate_checked(run, "pseudo_graph", "pseudo_graph_generate", {"question": question}, check,
                                max_tokens=self.generate_tokens, temperature=0.0, **shape)
        if done.value is None:
            run.record("pseudo_graph", attempts=done.attempts, cypher=done.text, triples=[])
            return []
        triples = [tuple(t) for t in done.value.triples]
        run.record("pseudo_graph", attempts=done.attempts, cypher=done.text, triples=[list(t) for t in triples],
                   subjects=done.value.subjects)
        return triples

    def semantic_query(self, question: str, triples, run: MethodRun
                       ) -> tuple[list[tuple[str, list[Evidence]]], list[tuple[str, str, list[Evidence]]],
                                  list[Evidence]]:
        """Step 2: the top ``top_k`` store triples for each pseudo-triple, hop by hop.

        A pseudo-triple is looked up from its known end: an entity the question names, or
        one the hop before reached. A guessed intermediate entity is replaced by the store
        entities that hop led to
        (:mod:`qa.methods.pseudo_graph._chain`). When the known end is a store entity
        (by exact name, or reached), the search is over that entity's triples; otherwise
        over the whole triple index. Returns (the name the hits are about, hits) per query,
        the (IRI, label, hits) of :meth:`extend_short_chain`, and each lookup's best hit."""
        index = self.context.get_index()
        names = list(dict.fromkeys(n for s, _, o in triples for n in (s, o)))
        links = {normalise_label(n): self.link(index, n) for n in names}
        plan = lookup_plan(triples, question, {n for n, iris in links.items() if iris})
        stand_ins = self.question_stand_ins(index, question, plan, links)  # pseudo name -> store (iri, label)
        reached: list[tuple[str, str]] = []  # store entities the lookups led to, in order
        retrieved: list[tuple[str, list[Evidence]]] = []
        firsts: list[Evidence] = []  # each lookup's best hit for its whole pseudo-triple
        trace = []
        for level in plan:
            queries = []  # (known name, its store IRIs, query text, the other end's name or None, first?)
            for lookup in level:
                s, r, o = lookup.triple
                known = lookup.triple[lookup.known]
                other = lookup.triple[2 - lookup.known] if lookup.resolves else None
                entities = stand_ins.get(normalise_label(known)) or [(iri, known)
                                                                     for iri in links[normalise_label(known)]]
                by_name: dict[str, list[str]] = {}
                for iri, name in entities or [(None, known)]:
                    by_name.setdefault(name, []).extend([iri] if iri else [])
                for name, iris in by_name.items():
                    text = pseudo_triple_text(name, r, o) if lookup.known == 0 else pseudo_triple_text(s, r, name)
                    queries.append((name, iris, text, other, True))
                    if other is not None:
                        # the guessed end can pull the search towards facts about the guess
                        # (a famous film the model named); the known end and relation alone cannot
                        queries.append((name, iris, f"{name} | {relation_words(r)}", other, False))
            results = self.search(index, queries)
            for (name, iris, text, other, first), hits in zip(queries, results):
                retrieved.append((name, hits))
                if first and hits:
                    firsts.append(hits[0])
                if other is not None:
                    found = next_hop_entities(hits, name, limit=self.max_stand_ins)
                    reached += [e for e in found if e not in reached]
                    if not links[normalise_label(other)]:
                        # a guessed end gets stand-ins; a store entity's name (a node linked to
                        # itself) keeps its own
                        slot = stand_ins.setdefault(normalise_label(other), [])
                        slot += [e for e in found if e not in slot]
                trace.append({"query": text, "about": iris,
                              "hits": [[e.text(), round(e.score or 0.0, 4)] for e in hits]})
        extended = self.extend_short_chain(question, plan, reached, trace)
        run.record("semantic_query", top_k=self.top_k, queries=trace,
                   stand_ins={k: [label for _, label in v] for k, v in stand_ins.items() if v})
        return retrieved, extended, firsts

    def question_stand_ins(self, index, question: str, plan, links) -> dict[str, list[tuple[str, str]]]:
        """When the entity a pseudo-graph starts from is no store entity (the model renamed
        "thomas_lamb_eliot" to "John Eliot"), the store entity the question itself names
        stands in for it. Only when the pseudo-graph starts from one entity and the question
        names one: a sketch about the Alps for a question comparing the Andes and the
        Himalayas is about something else, not a renaming."""
        starts = {normalise_label(x.triple[x.known]) for x in plan[0]} if plan else set()
        if len(starts) != 1 or any(links.get(n) for n in starts):
            return {}
        found = [c for c in index.link_question(question, k=5) if c.match in ("exact", "label", "alias")]
        if not found or any(_disjoint(c.span, found[0].span) for c in found[1:]):
            return {}
        return {starts.pop(): [(found[0].iri, found[0].label)]}

    def extend_short_chain(self, question: str, plan, reached, trace: list
                           ) -> list[tuple[str, str, list[Evidence]]]:
        """A single-hop pseudo-graph for what may be a two-hop question ("the nationality of
        X's spouse" drawn as X -SPOUSE-> Y) stops one hop short, which a small model often
        does. The store entities that hop reached are then searched with the question itself,
        a few of their own triples each (as subject), so verification can still add the
        missing fact. These entities are reached through the store, not guessed, so pruning
        keeps them whatever their similarity to the question (which is low: the question
        names someone else)."""
        if len(plan) != 1 or len({normalise_label(x.triple[x.known]) for x in plan[0]}) != 1:
            return []  # a chain already, or a comparison of several named entities
        reached = reached[:self.extend_entities]
        if not reached:
            return []
        index = self.context.get_index()
        found = search_triples_about(index, [question] * len(reached), [[iri] for iri, _ in reached],
                                     self.extend_top_k * 4)
        # facts *of* the reached entity: the way back to the named one is known already
        found = [[e for e in hits if e.s == iri][:self.extend_top_k] for (iri, _), hits in zip(reached, found)]
        for (iri, label), hits in zip(reached, found):
            trace.append({"query": question, "about": [iri], "hits": [[e.text(), round(e.score or 0.0, 4)]
                                                                      for e in hits]})
        return [(iri, label, hits) for (iri, label), hits in zip(reached, found)]

    def link(self, index, name: str) -> list[str]:
        """Store entities named exactly ``name`` (label or alias, case and punctuation aside),
        most likely first, at most ``max_namesakes``; none when no name matches."""
        return [iri for iri, _ in exact_entities(index, name, self.max_namesakes)]

    def search(self, index, queries) -> list[list[Evidence]]:
        """Top ``top_k`` hits per query: among its entities' triples when it has some, else
        over the whole triple index."""
        scoped = [i for i, q in enumerate(queries) if q[1]]
        free = [i for i, q in enumerate(queries) if not q[1]]
        out: list[list[Evidence]] = [[] for _ in queries]
        if scoped:
            found = search_triples_about(index, [queries[i][2] for i in scoped], [queries[i][1] for i in scoped],
                                         self.top_k)
            for i, hits in zip(scoped, found):
                out[i] = hits
        if free:
            for i, hits in zip(free, search_triples_many(index, [queries[i][2] for i in free], self.top_k)):
                out[i] = hits
        return out

    def ground_graph(self, retrieved, run: MethodRun, *, extended=()) -> list[EntityGroup]:
        """Step 3: prune the retrieved triples into the ground graph (no LLM). The facts of
        entities a short chain reached (``extended``) join it, farthest from the draft."""
        subjects = list(dict.fromkeys(name for name, _ in retrieved))
        anchors = {e.s for _, hits in retrieved for e in hits} | {e.o for _, hits in retrieved for e in hits
                                                                 if not e.literal}
        popularity = entity_popularity(self.store, anchors)
        kept, dropped = prune(retrieved, k=len(subjects), popularity=popularity, threshold=self.threshold,
                              score_top=self.score_top)
        kept = _cap_triples(reached_groups(kept, extended, popularity) + kept, self.max_ground_triples)
        run.record("pruning", k=len(subjects), threshold=self.threshold, kept=[g.to_dict() for g in kept],
                   dropped=[{"iri": g.iri, "label": g.label, "score": round(g.score, 4),
                             "popularity": g.popularity, "why": why} for g, why in dropped])
        return kept

    def verify(self, question: str, triples, groups: list[EntityGroup], run: MethodRun, *,
               firsts: list[Evidence] = (), extended=()) -> list[tuple[str, str, str]]:
        """Step 4: the fixed graph (the pseudo-graph rewritten against the ground graph).

        With the grammar (the default) the model can only name ground facts, by subject and
        relation; the fixed graph takes their values from the ground graph. Two kinds of
        ground fact join it whatever the model names, because a 1.5B model often leaves
        them out (it kept "976-EVIL | has genre" for "976-EVIL | released | year"): the
        best hit of each pseudo-triple's lookup, which replaces the draft's guess, and the
        facts of entities that a short chain reached, when the fixed graph leads to them
        (the draft's missing hop)."""
        pseudo_text = triple_lines((s, relation_words(r), o) for s, r, o in triples)
        ground = labelled([e for g in groups for e in g.triples])
        options = {"grammar": pair_lines_grammar(fact_pairs(ground))} if self.use_grammar else {}
        completion = run.ask("verification", "pseudo_graph_verify",
                             {"question": question, "ground_graph": ground_graph_text(groups),
                              "pseudo_graph": pseudo_text},
                             max_tokens=self.verify_tokens, temperature=0.0, stop_repeated_lines=True, **options)
        in_ground = {(e.s, e.p, e.o) for g in groups for e in g.triples}
        replacing = [(s, r, "") for s, r, _ in labelled([e for e in firsts if (e.s, e.p, e.o) in in_ground
                                                         and (e.score or 0.0) >= self.threshold])]
        verified, changes = align_to_ground(parse_triple_lines(completion.text, pairs=True), ground)
        if not verified and not replacing:  # nothing usable came back: answer from the ground graph itself
            verified = list(ground)
            run.record("verification", fallback="the ground graph (the model wrote no supported triples)")
        fixed = align_to_ground(replacing, ground)[0]  # first: the chain's hops in lookup order
        fixed += [t for t in verified if t not in fixed]
        fixed += [t for t in hop_facts(fixed, extended, in_ground) if t not in fixed]
        run.record("verification", replacing=[f"{s} | {r}" for s, r, _ in dict.fromkeys(replacing)],
                   aligned=changes, fixed_graph=[" | ".join(t) for t in fixed])
        return fixed

    def final_answer(self, question: str, fixed, run: MethodRun) -> list[str]:
        """Step 5: the answers the LLM marked in {} (an {unknown} mark means none). With
        ``answer_terms`` a mark can only be a term of the fixed graph, as written there."""
        facts = triple_lines(fixed, counts=True)
        terms = [name for s, _, o in fixed for name in (s, o)] if self.answer_terms else None
        return ask_for_answers(run, "answer", "pseudo_graph_answer", {"facts": facts, "question": question},
                               max_tokens=self.answer_tokens, terms=terms)


def _disjoint(a, b) -> bool:
    return a is None or b is None or a[1] <= b[0] or b[1] <= a[0]


def hop_facts(fixed, extended, in_ground) -> list[tuple[str, str, str]]:
    """The facts (labelled) of the entities a short chain reached that ``fixed`` mentions."""
    mentioned = {normalise_label(n) for s, _, o in fixed for n in (s, o)}
    return [t for iri, label, hits in extended if normalise_label(label) in mentioned
            for t in labelled([e for e in hits if (e.s, e.p, e.o) in in_ground])]


def reached_groups(kept: list[EntityGroup], extended, popularity) -> list[EntityGroup]:
    """Groups for the entities a short chain reached, without the facts already kept."""
    seen = {(e.s, e.p, e.o) for g in kept for e in g.triples}
    out = []
    for iri, label, hits in extended:
        fresh = [e for e in hits if (e.s, e.p, e.o) not in seen]
        seen.update((e.s, e.p, e.o) for e in fresh)
        if fresh:
            score = sum(e.score or 0.0 for e in fresh) / len(fresh)
            out.append(EntityGroup(iri, label, score, popularity.get(iri, 0), 1.0, order_triples(fresh)))
    return out


def _cap_triples(groups: list[EntityGroup], limit: int) -> list[EntityGroup]:
    """At most ``limit`` triples in the prompt, taken from the best-scoring entities first."""
    budget = limit
    capped = []
    for g in reversed(groups):  # best last in ``groups``
        if budget <= 0:
            break
        capped.append(EntityGroup(g.iri, g.label, g.score, g.popularity, g.name_match, g.triples[:budget]))
        budget -= len(capped[-1].triples)
    return list(reversed(capped))

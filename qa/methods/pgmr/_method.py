"""Post-generation memory retrieval (pgmr): the model writes SPARQL with placeholders,
the store's memories resolve them, and the executed query answers.

1. **Examples from the store.** Around the entities the question names, real paths of one
   and two hops are read from the store and written as placeholder queries
   (:mod:`qa.steps._examples`); the few closest in meaning to the question are shown.
2. **Generate.** The model writes the query with no identifiers, every entity as
   ``[ENT: name]`` and every relation as ``[REL: words]``; a GBNF grammar holds it to that
   shape. Text that still does not parse goes back once with the reason.
3. **Resolve.** Each ``[ENT]`` is looked up in the URI memory (an exact label or alias
   match counts as 1.0, and so does a label the question writes whole when the name is
   that label with a relation written in as a possessive, "[ENT: X's heir]": the words
   left over become the first hop of the path) and each ``[REL]`` among the relations,
   read both ways (the pattern's ends are swapped for the backward reading). A placeholder whose best match
   scores under the threshold ends the question with a refusal that names it.
4. **Ground.** When the query is a chain from one named entity, only its words are
   trusted: the store enumerates the real relation paths of one to three hops from that
   entity (:mod:`qa.steps._paths`), they are ranked against the question and the query's
   relation words (:mod:`qa.steps._path_grounding`, where memq's plans end too); the best few
   and the best of each length run, each one's answers are read against the question
   (``answer_weight``: people where it asks "who", films where it asks for films), and
   the best that returns rows is the final query (``paths=False`` turns this off).
   A question that asks for others sharing something with its entity ("also", "co-",
   "share") is grounded in the paths that go out and back along one relation
   (``round_trips=False`` turns this off).
   Then (``read_answers``, on by default) the model reads the facts of the best path of
   each kind (one per last relation), instantiated with real entities, and marks the
   answer; the path whose answers hold its first mark is the final query.
   **Execute.** Other queries, and chains no path answers, run as written: the
   combinations of the top candidates, best joint score first, in the SPARQL sandbox
   (read-only, LIMIT, row cap, time limit); the first that returns rows is the final
   query. The question's own entities are kept out of the answer variable.
5. **Answer.** The rows of the answer variable, labelled from the store; the final query,
   the placeholders and their resolutions are in the trace, and each answer's instantiated
   patterns are its evidence.
"""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from ...compose import written_like
from ...prompts import grammar_text
from ...shapes import detect_shape
from ...steps import _sparql_build as sb
from ...steps._examples import store_examples
from ...steps._grounding import names_a_word_of
from ...steps._mediators import through_a_shared_mediator
from ...steps._path_grounding import ChainDraft, PathGrounder
from ...steps._resolution import entity_choices, relation_choices, weak_choice
from ...steps._result import Answer
from ...steps._retrieval import (bracketed_spans, exact_entities, literal_names, outermost_names,
                                question_entities, written_in_lower_case, written_literals, written_names)
from ...steps._retry import generate_checked, parse_or_retry
from .._base import MethodRun, QAContext, QAMethod
from ._placeholders import PlaceholderQuery, PlaceholderSyntaxError, parse_placeholder_query

# Calibrated with `kgstore eval --sweep threshold=0.5:0.95:0.05` on MetaQA 1-hop dev and its
# not-in-store version (README: the threshold sweep): refusal of absent names rose from 0.23
# at 0.5 to 0.90 at 0.95 while Hits@1 and wrongful refusal did not move, because a name the
# store holds matches exactly and scores 1.0; only near names ("Peter Myers" for "Bill
# Myers", at 0.80) are judged by the threshold.
DEFAULT_THRESHOLD = 0.95
# Relation texts carry descriptions and the model's words are short ("country" against
# "country: sovereign state of this item"), so their cosines run lower than entities'.
DEFAULT_RELATION_THRESHOLD = 0.3


class PGMRMethod(QAMethod):
    name = "pgmr"
    description = "post-generation memory retrieval: placeholder SPARQL, resolved in the URI memory, executed"
    index_kinds = ("entities", "uris", "relations")
    shapes = True
    checks_names = True
    composes = True

    def __init__(self, context: QAContext, *, threshold: float = DEFAULT_THRESHOLD,
                 relation_threshold: float = DEFAULT_RELATION_THRESHOLD, examples: int = 4, candidates: int = 3,
                 max_combinations: int = 30, generate_tokens: int = 120, timeout_s: float = 5.0,
                 max_rows: int = 1000, max_answers: int = 200, paths: bool = True, path_options: int = 6,
                 beam: int = 12, choose_path: bool = False, answer_weight: float = 0.5,
                 read_answers: bool = True, round_trips: bool = True, lead_margin: float = 0.25):
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
        self.paths = paths
        self.path_options = path_options
        self.beam = beam
        self.choose_path = choose_path
        self.answer_weight = answer_weight
        self.read_answers = read_answers
        self.round_trips = round_trips
        self.lead_margin = lead_margin

    def _answer(self, question: str, run: MethodRun, *, allow_parametric: bool) -> Answer:
        index = self.context.get_index()
        query = self.generate(question, self.example_text(index, question, run), run)
        if query is None:
            return self.refuse(question, run, "no_query", "the model wrote no usable query for this question",
                               allow_parametric)
        # the values the question writes (a name that ends a sentence carries its full stop)
        values = [name.rstrip(".") for name in written_literals(self.store, question)]
        if values:
            # a name the model cut out of one the store holds as a value ("[ENT: Fiona]" of
            # "Princess Fiona", a character): that value, which the constraint step ties on
            merged = query.merged_into(values)
            if merged is not query:
                run.record("names", merged_into_value=merged.entities(), written=query.entities())
                query = merged
        marked = written_names(index, question)
        # with brackets, the names kept are those written, and the values the store holds
        named = query.keeping_names(marked + values) if marked else query
        if named is not query:
            run.record("names", kept=named.entities(), written=query.entities())
            # a name the draft wrote that the question writes too, unbracketed, may be a
            # constraint ("[Sheryl Lee]'s films are dramas": [ENT: Drama]) or a word the model
            # took for a title ("starred together with [X]": the film *Together*); the store
            # says which: the draft keeping it runs first, and answers where it returns rows
            reading = self.context.read(question)
            spoken = [n for n in query.entities() if n not in named.entities() and reading.writes(n)]
            found = self.as_drafted(index, question, query.keeping_names(marked + values + spoken), run) \
                if spoken else None
            if found is not None:
                run.record("names", as_drafted=spoken)
                return self.query_answer(question, run, found, "", allow_parametric=allow_parametric,
                                         limit=self.max_answers, timeout_s=self.timeout_s)
            query = named
        elif not bracketed_spans(question):
            # no brackets: a name the model cut out of a longer one the question writes ("[ENT:
            # The Law]" of "I Am the Law") is that longer name, not a second entity
            merged = query.merged_into(outermost_names(index, question))
            if merged is not query:
                run.record("names", merged=merged.entities(), written=query.entities())
                query = merged
            # an entity the draft names but the question never mentions was made up: the
            # query runs without it, rather than being refused for it (unless it names
            # nothing else, below)
            invented = [n for n in query.entities() if not names_a_word_of(question, n)]
            if invented:
                # a name typed short ("uk") is mentioned when it links to what the name does;
                # one typed joined ("StLucy" of "st. lucy") is written where its letters are,
                # and a country where its people's adjective is ("Greece" of "greek")
                reading = self.context.read(question)
                mentioned = {e.iri for m in reading.mentions for e in m.entities}
                invented = [n for n in invented if not reading.writes(n)
                            and not any(written_like(word, n) for word in reading.text.split())
                            and not any(c.iri in mentioned for c in index.link(n, k=3))]
            if invented:
                run.record("names", invented=invented, written=query.entities())
                # a draft that names only what the question never mentions ("[ENT: Lionel
                # Messi]" for "what team did aguero play for") would answer about someone
                # else: it names no entity to start from, and the cascade composes instead
                if len(invented) == len(query.entities()):
                    return self.refuse(question, run, "no_entity", "the query names only entities the question "
                                       "never mentions: " + ", ".join(invented), allow_parametric)
                query = query.keeping_names([n for n in query.entities() if n not in invented])
        literal = literal_names(self.store, [n for n in query.entities() if not exact_entities(index, n, 1)])
        if literal:
            # a name the store holds as a value, not an entity ("[ENT: Indiana Jones]", a
            # character on a performance node): the chain runs without it, and the question's
            # constraint step ties the answers to it
            run.record("names", literal=list(literal))
            kept = [n for n in query.entities() if n not in literal]
            if not kept:
                # the draft names only the value ("[ENT: Lenny Darwin] actor ?a", a character):
                # what the question names beside it (the film) and the value meet on a node
                found = self.beside_a_value(index, question, literal, run)
                if found is not None:
                    return self.query_answer(question, run, found, "", allow_parametric=allow_parametric,
                                             limit=self.max_answers, timeout_s=self.timeout_s)
            query = query.keeping_names(kept)
        if query.tail and detect_shape(question).kind == "chain":
            # the question asks for no superlative (the shapes read it as a chain, and ask a
            # superlative's chain without its ORDER BY): an ORDER BY … LIMIT the model wrote
            # cuts the answers to one, and keeps the chain from grounding in the store's paths
            run.record("order", dropped=query.tail)
            query = dataclasses.replace(query, tail=None)
        if not query.entities():
            # nothing ties the query to what the question names: it would answer for anything
            return self.refuse(question, run, "no_entity", "the query names no entity to start from",
                               allow_parametric)
        entities, relations, weak = self.resolve(index, query, run, question)
        common = [n for n, cs in entities.items() if weak_choice("ENT", n, cs, self.threshold)
                  and written_in_lower_case(question, n)]
        if common and len(common) < len(query.entities()):
            # "[ENT: movie]" for "sports movies": a common word the question writes in lower
            # case is no name to refuse for; the query runs without it
            run.record("names", common_words=common)
            query = query.keeping_names([n for n in query.entities() if n not in common])
            entities, relations, weak = self.resolve(index, query, run, question)
        weak_names = [w for w in weak if w.startswith("[ENT:")]
        if weak_names or (weak and not (self.paths and self.groundable(query))):
            return self.refuse(question, run, "not_in_store", "not in the store: " + "; ".join(weak), allow_parametric)
        found = None
        grounded = self.paths and self.groundable(query)
        # a name in two patterns asks for two roles at once where the question joins two
        # ("the movies X directed and starred in"); each of the store's paths from it says
        # one, so the draft runs as written first, and is grounded if it returns nothing.
        # Where the question joins none, the draft conflated a chain's two hops ("who wrote
        # the screenplay for the movies directed by X" drafted as X's films both written and
        # directed by X) and is grounded as any chain
        both_roles = (grounded and query.roles_of_one_name > 1 and not weak
                      and self.context.read(question).conjoins)
        if both_roles:
            found = self.execute(query, entities, relations, run)
        if found is None and grounded:
            # a chain is grounded in the store's own paths, which need none of the draft's
            # relation words to resolve: a weak one ("[REL: Célestin Poux]", a character
            # written as a relation) only ranks the paths, and no path is a refusal
            found = self.ground(index, question, query, entities, run)
            if found is None and weak:
                return self.refuse(question, run, "not_in_store", "not in the store: " + "; ".join(weak),
                                   allow_parametric)
        if found is None and not both_roles:
            found = self.execute(query, entities, relations, run)
        if found is None and len(entities) > 1:
            # two names only a mediator joins (an actor and a film): the answer is what else
            # the joining node holds, whatever structure the draft gave them
            found = through_a_shared_mediator(self.store, index, question, [entities[n][0].iri for n in entities],
                                              run, timeout_s=self.timeout_s, max_rows=self.max_rows)
            if found is None:
                # a name an entity bears that a node holds as a value too (a character named
                # like a person: "Charles Robinson" in a film): the other name and that value
                found = self.beside_a_value(index, question, literal_names(self.store, list(entities)), run)
        answer = self.query_answer(question, run, found,
                                   "not in the store: no resolution of the query's placeholders returns rows",
                                   allow_parametric=allow_parametric, limit=self.max_answers,
                                   timeout_s=self.timeout_s)
        if answer.refused:
            # every name and relation resolved, and no structure of them returned rows: the
            # relations the model wrote are still its reading of what is asked (a vote where
            # the question is composed: "what kind of cancer did X die of", drafted with the
            # cause of death and "Cancer" as a second name)
            answer.draft_relations = list(dict.fromkeys(cs[0].iri for cs in relations
                                                      if cs and cs[0].score >= self.relation_threshold))
        return answer

    def as_drafted(self, index, question: str, query: PlaceholderQuery, run: MethodRun):
        """(query, rows) of ``query`` executed as the model wrote it, when every name in it
        resolves; else None. Only the entities that bear a name count: a neighbour in
        meaning (*Comedy* for "[ENT: Drama]") would make the draft say something else."""
        entities, relations, weak = self.resolve(index, query, run, question)
        if weak:
            return None
        named = {n: [c for c in cs if c.score >= self.threshold] for n, cs in entities.items()}
        return self.execute(query, named, relations, run)

    def beside_a_value(self, index, question: str, literal: dict[str, str], run: MethodRun):
        """(query, rows) of what the node joining a value the draft names and an entity the
        question names holds (:func:`through_a_shared_mediator`), or None."""
        linked = [c for c in question_entities(index, question, k=20) if c.span]
        for name, term in literal.items():
            named = [c.iri for c in linked if question[c.span[0]:c.span[1]].casefold() not in name.casefold()]
            for iri in list(dict.fromkeys(named))[:3]:
                found = through_a_shared_mediator(self.store, index, question, [iri, term], run,
                                                  timeout_s=self.timeout_s, max_rows=self.max_rows)
                if found is not None:
                    return found
        return None

    # -- 1. examples from the store ---------------------------------------------------------
    def example_text(self, index, question: str, run: MethodRun) -> str:
        """Placeholder queries for real paths around the question's named entities."""
        return store_examples(self.store, index, question, run, self.examples,
                              lambda p: f"Question: {p.question()}\nSPARQL: {p.sparql()}")

    # -- 2. generate ------------------------------------------------------------------------
    def generate(self, question: str, examples: str, run: MethodRun) -> PlaceholderQuery | None:
        check = parse_or_retry(parse_placeholder_query, PlaceholderSyntaxError, "pgmr_retry", "query")
        done = generate_checked(run, "generate", "pgmr_generate", {"question": question, "examples": examples},
                                check, max_tokens=self.generate_tokens, temperature=0.0,
                                grammar=grammar_text("pgmr_sparql"))
        run.record("generate", attempts=done.attempts, query=done.text.strip())
        return done.value

    # -- 3. resolve -------------------------------------------------------------------------
    def resolve(self, index, query: PlaceholderQuery, run: MethodRun, question: str = ""):
        """Candidates per entity placeholder and per pattern's relation, best first, and
        the placeholders whose best candidate is under its threshold (in words)."""
        entities = entity_choices(index, query.entities(), self.candidates, question=question)
        words = query.relations()
        relations = relation_choices(index, words, self.candidates)
        weak = [w for w in [weak_choice("ENT", n, cs, self.threshold) for n, cs in entities.items()]
                + [weak_choice("REL", w, cs, self.relation_threshold) for w, cs in zip(words, relations)] if w]
        run.record("resolve", threshold=self.threshold, relation_threshold=self.relation_threshold,
                   entities={n: [c.to_dict() for c in cs] for n, cs in entities.items()},
                   relations=[{"placeholder": w, "candidates": [c.to_dict() for c in cs]}
                              for w, cs in zip(words, relations)],
                   weak=weak)
        return entities, relations, weak

    # -- 4. ground in the store's real paths -----------------------------------------------
    @staticmethod
    def groundable(query: PlaceholderQuery) -> bool:
        """A chain from one named entity to the answer, with nothing the paths cannot say
        (a second entity, a FILTER, a COUNT, an ORDER BY)."""
        return len(query.entities()) == 1 and not (query.filter or query.tail or query.counts)

    def ground(self, index, question: str, query: PlaceholderQuery, entities, run: MethodRun):
        """The draft's words grounded in the store's relation paths from its entity
        (:mod:`qa.steps._path_grounding`); with ``choose_path`` the model picks among the paths
        that return rows. None when none does."""
        anchor = entities[query.entities()[0]][0]
        # a draft asking two roles of one name at once, grounded as a chain, wrote its hops
        # in no order: which of the two is on the answer the question says, not the draft
        # ("who directed the movies written by X" drafted as X's films X directed and wrote)
        ends = (None, None) if query.roles_of_one_name > 1 else query.end_relations()
        draft = ChainDraft(tuple(query.relations()), query.written_patterns, ends, query.answer_var,
                           off_anchor=query.patterns_off_entities)
        grounder = PathGrounder(self.store, index.embed, options=self.path_options, beam=self.beam,
                                answer_weight=self.answer_weight, timeout_s=self.timeout_s, max_rows=self.max_rows,
                                read=self.read_answers, round_trips=self.round_trips,
                                lead_margin=self.lead_margin)
        choose = (lambda paths: self.choose(question, query, paths, run)) if self.choose_path else None
        return grounder.ground(question, anchor, draft, run, choose=choose)

    def choose(self, question: str, query: PlaceholderQuery, options, run: MethodRun) -> int:
        """The model's choice among ``options`` (0-based), held by a grammar to a number shown."""
        listing = "\n".join(f"{i + 1}. {p.example().sparql()}" for i, p in enumerate(options))
        grammar = "root ::= " + " | ".join(f'"{i + 1}"' for i in range(len(options))) + "\n"
        done = run.ask("ground", "pgmr_choose", {"question": question, "draft": query.source, "options": listing},
                       grammar=grammar, max_tokens=2, temperature=0.0)
        return int(done.text.strip()) - 1

    # -- 5. execute -------------------------------------------------------------------------
    def execute(self, query: PlaceholderQuery, entities, relations, run: MethodRun):
        """The first combination, best joint score first, whose query returns rows:
        (the built query, its rows); None if none does."""
        names = list(entities)
        combos = sorted(itertools.product(*([entities[n] for n in names] + relations)),
                        key=lambda c: -float(np.mean([x.score for x in c])))
        tried = []
        # the question's own entities are kept out of the answer, unless nothing else answers
        # ("the husband of X's wife" is X); then the draft with a constraint moved off the
        # answer onto the node before it, each move tried as written
        passes = [(query, True, combo) for combo in combos[:self.max_combinations]]
        passes += [(query, False, combo) for combo in combos[:self.max_combinations]]
        passes += [(moved, True, combo) for moved in query.reattached() for combo in combos[:self.max_combinations]]
        for query, exclude, combo in passes:
            entity_iris = {n: c.iri for n, c in zip(names, combo[:len(names)])}
            built = query.build(entity_iris, [(c.iri, c.backward) for c in combo[len(names):]],
                                exclude=list(entity_iris.values()) if exclude else ())
            rows, error = sb.execute(self.store, built, timeout_s=self.timeout_s, max_rows=self.max_rows)
            rows = sb.answering_rows(self.store, built, rows)  # rows ending on mediators answer nothing
            tried.append({"query": built.render(), "rows": len(rows),
                          "score": round(float(np.mean([x.score for x in combo])), 4),
                          **({"error": error} if error else {})})
            if rows:
                run.record("execute", tried=len(tried), attempts=tried[-5:], final_query=built.render())
                return built, rows
        run.record("execute", tried=len(tried), attempts=tried[-5:], final_query=None)
        return None

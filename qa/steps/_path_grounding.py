"""Grounding a drafted chain in the store's real relation paths: the step pgmr and memq
end in when what the model wrote is a chain from one named entity to the answer.

A 1.5B model writes the *words* of a multi-hop question well and its *structure* badly (a
relation in the wrong direction, two patterns hanging off the topic where the question
walks a chain, one hop too few). So only the draft's words are trusted: the store
enumerates the relation paths of one to three hops from the entity (:mod:`qa.steps._paths`),
the encoder ranks them against the question and the draft's relation words, the best few
and the best of each length run in the sandbox, and each one's answers are read against
the question (people where it asks "who", films where it asks for films). The best that
returns rows is the final query. Every path is real, so no identifier can be invented.
"""
from __future__ import annotations

import os
import re

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from . import _sparql_build as sb
from ._answering import ask_for_answers
from ._graph_text import labelled, triple_lines
from ._grounding import normalise_label
from ._paths import ANSWER_SAMPLE, MAX_HOPS, PathScorer, RelationPath, path_options, relation_paths
from ._resolution import Choice
from ._retrieval import is_mediator


@dataclass(frozen=True)
class ChainDraft:
    """What a method's draft says of a chain from one entity: its relation ``words`` in
    the order written, how many ``hops`` it wrote, the words of its first and last
    relation (``ends``) and the variable it answers with."""

    words: tuple[str, ...]
    hops: int
    ends: tuple[str | None, str | None]
    answer_var: str = "?answer"
    # how many of the draft's patterns do not touch the named entity (None: not known): a
    # pattern hanging off the entity is no hop further, however many the draft wrote
    off_anchor: int | None = None

    def with_first_hop(self, words: str) -> "ChainDraft":
        """The draft with ``words`` as one more hop at its start ("[ENT: X's heir]": heir
        is the first hop from X)."""
        return ChainDraft((words,) + self.words, self.hops + 1, (words, self.ends[1]), self.answer_var,
                          None if self.off_anchor is None else self.off_anchor + 1)

    @property
    def trip_hops(self) -> int:
        """The length a round trip should have for this draft: two hops (there and back)
        when the draft names one relation, however often it wrote it ("X directed by ?d .
        X directed by ?d2 . X directed by ?d3"), or when every other pattern hangs off the
        entity too ("X directed by ?d . X has genre ?g": a star, not a chain); else one hop
        more for each pattern past the way back ("X directed by ?d . ?f directed by ?d . ?f
        has genre ?g": the films that share directors with X were in which genres)."""
        if len(set(self.words)) <= 1:
            return 2
        if self.off_anchor == 0:  # a star: counted only where the question asks for the sharers (trip_lengths)
            return 2
        return max(min(self.hops, MAX_HOPS), 2)


@dataclass(frozen=True)
class PathRun:
    """A candidate path, run: its score before the answer check, the query, its rows (or
    the error) and their answer terms, labelled."""

    path: RelationPath
    score: float
    built: sb.BuiltQuery
    rows: list
    error: str | None
    terms: list

    @property
    def answers(self) -> list[str]:
        """The first answers' labels, for the answer check and the trace."""
        return [t.label for t in self.terms[:ANSWER_SAMPLE]]


# the method's choice among paths that returned rows (0-based), given them best first
Chooser = Callable[[Sequence[RelationPath]], int]


class PathGrounder:
    """Grounds drafts in one store; ``options`` paths (and the best of each length) run,
    ``beam`` prefixes are extended per hop, ``answer_weight`` weighs the answer check.
    With ``read`` the model then reads ``read_rows`` facts of each of up to ``read_paths``
    paths and marks the answer (:meth:`read_answers`; not when a method's ``choose`` picks)."""

    def __init__(self, store, embed, *, options: int = 6, beam: int = 12, answer_weight: float = 0.5,
                 timeout_s: float = 5.0, max_rows: int = 1000, read: bool = False, read_paths: int = 6,
                 read_rows: int = 3, round_trips: bool = True, lead_margin: float = 0.25,
                 extension_margin: float = 0.08):
        self.store = store
        self.embed = embed
        self.options = options
        self.beam = beam
        self.answer_weight = answer_weight
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.read = read
        self.read_paths = read_paths
        self.read_rows = read_rows
        self.round_trips = round_trips  # False: ground as before round trips were told apart (ablation)
        self.lead_margin = lead_margin  # how far a three-hop path must lead to stand over the reading
        # how much better than the trip the draft wrote a trip one hop on must fit the
        # question alone (question words and answers, without the draft's words) to stand:
        # MetaQA 3-hop dev traces, where 0.08 kept every 2-hop trip it should
        self.extension_margin = extension_margin

    def ground(self, question: str, anchor: Choice, draft: ChainDraft, run, *, step: str = "ground",
               choose: Chooser | None = None):
        """(the built query, its rows) of the best path from ``anchor`` (the resolved entity
        the draft starts from) that returns rows, or None; every option, scored, goes to
        the trace under ``step``. A name that wrote a relation into it ("[X's heir]")
        resolved to X with those words left over: they are the chain's first hop."""
        if anchor.relation_words:
            draft = draft.with_first_hop(anchor.relation_words)
        anchor_label, anchor_iri = anchor.label, anchor.iri
        reading = self.read and not choose
        scorer = PathScorer(self.embed, question, draft.words, hops_hint={min(draft.hops, MAX_HOPS)},
                            ends=draft.ends)
        paths = relation_paths(self.store, anchor_label, anchor_iri, scorer.prefix_scores, beam=self.beam,
                               timeout_s=self.timeout_s)
        if not paths:
            run.record(step, anchor=anchor_iri, paths=0)
            return None
        scores = scorer.scores(paths)
        chosen = path_options(paths, scores, self.options)
        # the paths read are at most one hop longer than the draft: one hop short is the
        # draft's common slip ("where is the club X plays for" written as the club), while a
        # longer path from a one-hop draft is mostly a walk there and back ("films of the
        # co-stars of the films of X"), whose facts lead the model to mark the wrong film
        read_hops = draft.hops + 1
        trip = self.round_trips and asks_round_trip(question)
        if trip:
            # "countries that share a border with Peru": the cue word is the name of a
            # relation the store holds ("shares border with"), not others met on a way back
            best_way = max((i for i in range(len(paths)) if not paths[i].round_trip), key=lambda i: scores[i],
                           default=None)
            named = best_way is not None and cue_in_labels(question, paths[best_way].labels)
            if named:
                run.record(step, trip_cue_in_relation=named)
                trip = False
        trip_hops, longest = trip_lengths(question, draft)
        words = question_words(question)
        if trip:
            # "the director of X also directed …": the answer is back where X is, so the
            # round trips compete even when the draft's words fit the way out better
            # (those of the trip's length first: longer trips that go on from the others are
            # many, and would crowd out the trip along the role the question names)
            trips = [i for i in sorted(range(len(paths)),
                                       key=lambda i: (not trip_hops <= paths[i].hops <= longest, -scores[i]))
                     if paths[i].round_trip]
            chosen += [i for i in trips[:self.options] if i not in chosen]
            if longest > trip_hops:
                # the steps on from the best trip of the draft's length run too, best by the
                # question alone, so that one may stand (:func:`extension_leads`)
                base = next((i for i in trips if paths[i].hops == trip_hops), None)
                on = [] if base is None else sorted(
                    (i for i in range(len(paths)) if paths[i].goes_on_from(paths[base])),
                    key=lambda i: -scorer.question_fit(paths[i]))
                chosen += [i for i in on[:self.options] if i not in chosen]
            # the reading sees the trips of the draft's length: a longer one mostly goes on
            # from the others to what they share ("the director of X also directed …"
            # answered with the director), and the model marks that first
            read_hops = trip_hops
        led = None  # the index in ``chosen`` (so in ``runs``) of the path the question alone fits best
        if reading:
            chosen += [i for i in best_per_last_step(paths, scores, self.read_paths, max_hops=read_hops)
                       if i not in chosen]
            if not trip:
                # the path the question alone fits best, whatever the draft wrote, is read
                # too: a draft's wrong relation words pull its neighbours up ("what county is
                # houston tx in" drafted as the country: the county path, first by the
                # question's words, was the seventh kind of answer and never shown)
                plain = question_led(paths, scorer, read_hops)
                if plain is not None and plain not in chosen:
                    chosen.append(plain)
                led = None if plain is None else chosen.index(plain)
        runs = [self.run_path(paths[i], draft.answer_var, anchor_iri, scores[i]) for i in chosen]
        fits = scorer.answer_scores([r.answers for r in runs], topic=anchor_label)
        final = [r.score + self.answer_weight * fit for r, fit in zip(runs, fits)]
        order = sorted(range(len(runs)), key=lambda k: -final[k])
        record = [{"path": runs[k].path.example().sparql(), "score": round(runs[k].score, 4),
                   "answer_fit": round(fits[k], 4), "final": round(final[k], 4), "rows": len(runs[k].rows),
                   "answers": runs[k].answers, **({"error": runs[k].error} if runs[k].error else {})}
                  for k in order]
        ranked = [k for k in order if runs[k].rows]
        further, question_fit = False, []
        if trip:
            # only round trips of the draft's trip length, or one hop on where the question asks
            # for something of the others ("the languages of the films whose directors also
            # directed X" goes one hop on from the director's films), else longer
            question_fit = [scorer.question_fit(r.path) + self.answer_weight * fit for r, fit in zip(runs, fits)]
            for entry, k in zip(record, order):
                entry["question_fit"] = round(question_fit[k], 4)
            ranked, further = self.trips_in_reach(runs, ranked, trip_hops, longest, question_fit,
                                                  self.extension_margin, words)
        # after the trips are told apart: a long walk leading every shorter path is no reason
        # to leave the trip the question asks for ("films by the same director as X" answered
        # with those films' actors)
        # (a longer trip in the lead is the default already, and the reading may still
        # mark an answer of the trip the draft wrote)
        lead = None if further else self.long_lead(runs, final, ranked)
        if not ranked:
            run.record(step, anchor=anchor_iri, paths=len(paths), options=record)
            return None
        shown = ranked[:self.options]
        pick = shown[choose([runs[k].path for k in shown]) if choose and len(shown) > 1 else 0]
        readable = [k for k in ranked if len(runs[k].path.steps) <= read_hops]
        onward = self.onward_steps(runs, [k for k in order if runs[k].rows], trip_hops, question_fit) \
            if trip and longest > trip_hops else []
        if further:
            run.record(step, further_trip=runs[pick].path.hops)
        marks: list[str] = []
        if reading and readable:
            # the reading sees the trips of the draft's length, and of the steps on from the
            # best of them their last hop only (:meth:`onward_steps`): where a longer trip
            # leads, it stands unless the model marks an answer of one of those ("Jonas
            # Inde starred together with who": his co-stars, not their films' writers)
            before = pick
            # the path the draft wrote, relation for relation, as the store holds it
            written = None if trip else next(
                (i for i, k in enumerate(readable) if same_words(runs[k].path.labels, draft.words)), None)
            pick, marks = self.read_answers(question, [runs[k] for k in readable + onward], run, step=step, default=pick,
                                     ids=readable + onward, first_mark=trip, last_hop_only=len(readable),
                                     also=readable.index(led) if led in readable else None, written=written,
                                     drafted_hops=None if trip else draft.hops)
            if not trip and self.unasked_trip(runs[pick].path, runs[before].path, words):
                # others sharing a value with the one named ("Colombia | official language |
                # Spanish Language" beside Costa Rica's) answer a question that asks for
                # them; asked "what type of money do they use in costa rica", the model
                # marked Colombia and the currency the draft wrote was left (WebQSP dev-train)
                run.record(step, trip_unasked=runs[pick].path.labels[0])
                pick = before
        named_trip = self.draft_trip(runs, ranked, pick, draft) if trip else pick
        if named_trip != pick:
            run.record(step, draft_trip=runs[named_trip].path.labels[0])
            pick = named_trip
        role_trip = self.role_trip(runs, ranked, pick, role_words(question),
                                   words_naming_relations(words, anchor_label)) if trip else pick
        if role_trip != pick and runs[role_trip].path.hops < runs[pick].path.hops:
            # the pick went on past its trip (to the languages of the films sharing an actor):
            # the named trip goes on so too, one run more, or the pick stands, since the trip
            # alone answers with other things than the question asks for (the films)
            onward = self.onward_run(paths, scores, runs[role_trip], runs[pick].path, draft.answer_var, anchor_iri)
            if onward is None:
                run.record(step, role_trip_not_on=runs[role_trip].path.labels[0])
                role_trip = pick
            else:
                runs.append(onward)
                ranked = [len(runs) - 1] + list(ranked)
                role_trip = len(runs) - 1
        if role_trip != pick:
            run.record(step, role_trip=runs[role_trip].path.labels[0])
            pick = role_trip
        led = lead is not None and runs[pick].path.hops < runs[lead].path.hops
        if led:
            # a three-hop path that leads every shorter path by a wide margin stands over a
            # shorter pick: the question's words and its answers fit the long walk ("the
            # languages of the films written by the writer of X"), which the draft cut short
            # (one hop written) and the reading too (the model marks the facts nearest X)
            pick = lead
        chosen = runs[pick]
        rows = marked_first(chosen, marks)
        if rows != chosen.rows:
            run.record(step, marked_first=True)
        run.record(step, anchor=anchor_iri, paths=len(paths), options=record,
                   # a step on from the trip the reading marked is in the order, not the trips ranked
                   chosen=ranked.index(pick) + 1 if pick in ranked and not led else order.index(pick) + 1,
                   final_query=chosen.built.render(), **({"long_lead": True} if led else {}))
        return chosen.built, rows

    @staticmethod
    def trips_in_reach(runs: Sequence[PathRun], ranked: Sequence[int], trip_hops: int, longest: int,
                       question_fit: Sequence[float] | None = None,
                       margin: float = 0.08, words: Sequence[str] | None = None) -> tuple[list[int], bool]:
        """The ranked runs a trip question chooses among, and whether the best of them is a
        trip past the draft's length. Round trips of ``trip_hops``; a trip up to
        ``longest`` where it leads every trip of the draft's length, question and answers
        read by the encoder with the draft's words ("what languages are the films that share
        directors with X in": the languages, not the films), or where it goes one hop on
        from the best of them, along a relation one of the question's ``words`` names, and
        fits the question alone (``question_fit``, per run) by ``margin`` better
        (:func:`extension_leads`); else longer trips, else any path."""
        trip_runs = [k for k in ranked if runs[k].path.round_trip and runs[k].path.hops >= trip_hops]
        in_reach = [k for k in trip_runs if runs[k].path.hops <= longest]
        if words is not None:
            # a trip past the draft's ends on a step the question names, or is not in reach:
            # a step it does not name is one it did not ask for (the encoder read the actors
            # of "the director of X is also the director of which films" as fitting better
            # than the films, by 0.16; MetaQA 2-hop dev)
            in_reach = [k for k in in_reach if runs[k].path.hops == trip_hops
                        or _names_role(runs[k].path.labels[-1], words)]
        further = bool(in_reach) and runs[in_reach[0]].path.hops > trip_hops
        if not further and in_reach and question_fit is not None:
            extended = extension_leads(runs, in_reach, question_fit, margin)
            if extended is not None:
                return [extended] + [k for k in in_reach if k != extended], True
        if not further:
            in_reach = [k for k in in_reach if runs[k].path.hops <= trip_hops]
        return (in_reach or trip_runs or list(ranked)), further

    def onward_steps(self, runs: Sequence[PathRun], ranked: Sequence[int], trip_hops: int,
                     question_fit: Sequence[float]) -> list[int]:
        """The runs that go one hop on from the best-ranked trip of ``trip_hops`` (its steps,
        then one more along another relation than the trip's), best by the question alone,
        at most ``read_paths // 2``: what the reading sees of "something of the others"
        beside the trip itself. A step back along the trip's relation reaches what the
        others share (the director again), which the model marks first; it is not shown."""
        base = next((k for k in ranked if runs[k].path.round_trip and runs[k].path.hops == trip_hops), None)
        if base is None or not question_fit:
            return []
        trip = runs[base].path
        steps = trip.steps
        # what the others share (the director of X), where its one-hop path ran: a step on
        # that reaches it again (his films' writers, himself among them) would take the
        # model's mark of it, and the question names it to say who the others are
        shared = {t.label for k in ranked if runs[k].path.steps == steps[:1] for t in runs[k].terms}
        on = [k for k in ranked if runs[k].path.goes_on_from(trip) and runs[k].path.steps[-1][0] != steps[0][0]
              and not shared & {t.label for t in runs[k].terms}]
        return sorted(on, key=lambda k: -question_fit[k])[:max(self.read_paths // 2, 1)]

    @staticmethod
    def unasked_trip(picked: RelationPath, before: RelationPath, words: Sequence[str]) -> bool:
        """Whether the reading moved the pick from a path that is no round trip to a round
        trip of two hops along a relation none of the question's ``words`` names: the
        others that share something the question does not speak of."""
        return (picked is not before and picked.round_trip and picked.hops == 2 and not before.round_trip
                and not _names_role(picked.labels[0], words))

    @staticmethod
    def draft_trip(runs: Sequence[PathRun], ranked: Sequence[int], pick: int, draft: ChainDraft) -> int:
        """The pick, or, when it is a round trip along another relation than the one the draft
        names by its label (its only relation), the best-ranked trip along that one. A trip
        along a broad relation (films sharing a *genre*) holds hundreds of films, so any film
        the model marks while reading is among them, and the reading picks it; the draft's
        own relation ("which movies share the same actor of X": starred actors) is what the
        question says the others share. Only a label written as the store writes it counts:
        the encoder puts "screenwriter" nearer *directed by* than *written by*."""
        if len(set(draft.words)) != 1 or not runs[pick].path.round_trip:
            return pick
        named = normalise_label(draft.words[0])
        if normalise_label(runs[pick].path.labels[0]) == named:
            return pick
        along = [k for k in ranked if runs[k].path.round_trip and normalise_label(runs[k].path.labels[0]) == named]
        return along[0] if along else pick

    @staticmethod
    def role_trip(runs: Sequence[PathRun], ranked: Sequence[int], pick: int, roles: Sequence[str],
                  words: Sequence[str] = ()) -> int:
        """The pick, or, when the question writes the role the others share ("whoever
        directed X", "the writer of X") and the pick's trip goes along a relation whose
        label is no form of it, the best-ranked trip along one that is ("directed by"). The
        model reading the facts marks the films of whichever trip it saw first, and a trip
        along a genre holds the most films. Where no role word names a trip's relation
        ("movies directed by the same person as X": the person), the question's other
        ``words`` are read so, the same way (*directed*)."""
        picked = runs[pick].path
        if not picked.round_trip:
            return pick
        for names in (roles, words):
            if not names:
                continue
            if _names_role(picked.labels[0], names):
                return pick
            along = [k for k in ranked if runs[k].path.round_trip and _names_role(runs[k].path.labels[0], names)]
            # the trip along the named relation that goes on as the pick does ("the languages
            # of the films whose directors also directed X": on to the language), else the
            # trip itself
            onward = [k for k in along if runs[k].path.steps[2:] == picked.steps[2:]]
            trips = [k for k in along if runs[k].path.hops == 2]
            if onward or trips:
                return (onward or trips)[0]
        return pick

    def onward_run(self, paths: Sequence[RelationPath], scores: Sequence[float], trip: PathRun,
                   picked: RelationPath, answer_var: str, anchor_iri: str) -> PathRun | None:
        """The trip ``trip`` went along, then on as ``picked`` went past its own trip (the
        languages of the films sharing a director, where the pick went on from films
        sharing an actor), run; None when the store has no such path among those walked, or
        it returns no rows."""
        steps = trip.path.steps[:2] + picked.steps[2:]
        found = next((i for i, p in enumerate(paths) if p.steps == steps), None)
        if found is None:
            return None
        onward = self.run_path(paths[found], answer_var, anchor_iri, scores[found])
        return onward if onward.rows else None

    def long_lead(self, runs: Sequence[PathRun], final: Sequence[float], ranked: Sequence[int]) -> int | None:
        """The best path that returned rows, when it has :data:`MAX_HOPS` hops and leads the
        best shorter path by ``lead_margin`` or more; else None. Measured on the MetaQA dev
        traces: on 3-hop questions the best three-hop path led by 0.26 to 0.62 where it was
        right and the reading was not; on 1-hop and 2-hop questions a three-hop best path
        led by at most 0.21 where a shorter one was right. A two-hop path in the lead is
        left to the reading, which was right each time it differed (2 of 2)."""
        if not ranked or runs[ranked[0]].path.hops < MAX_HOPS:
            return None
        shorter = [k for k in ranked if runs[k].path.hops < MAX_HOPS]
        if shorter and final[ranked[0]] - final[shorter[0]] < self.lead_margin:
            return None
        return ranked[0]

    def read_answers(self, question: str, ranked: Sequence[PathRun], run, *, step: str, default: int,
                     ids: Sequence[int], first_mark: bool = False, last_hop_only: int | None = None,
                     also: int | None = None, written: int | None = None,
                     drafted_hops: int | None = None) -> int:
        """The model reads the facts of the best paths, instantiated, and marks the answer;
        the best path whose answers hold what it marked is the pick (``ids[i]`` for
        ``ranked[i]``; ``default`` when it marks nothing a path answers).

        The encoder ranks relation *types* and judges answers by their names, which tells a
        country from a club badly and a path one hop short from the right one hardly at
        all; a model that reads "Tigres UANL | is in country | Mexico" beside "Alan PULIDO |
        plays in club | Tigres UANL" knows which of the two answers "where is the club".
        Reading real facts and naming one of their entities is the kind of choice a small
        model makes well. One path is shown per last relation (what kind of thing
        answers) and per answers: the best few paths by the encoder are mostly one
        relation walked there and back, with the same answers. ``ranked[last_hop_only:]``
        are steps on from a trip: each is shown past those, by its last hop's facts only.
        ``ranked[written]`` is the path the draft wrote: it stands over ``default`` when
        the model marks nothing any path answers. ``default`` stands over the path the
        model's marks fit where that path is ``default``'s first hops and the draft wrote
        ``drafted_hops``, as many as ``default`` walks (:func:`marks_the_middle`)."""
        distinct, seen = [], set()
        for i, r in enumerate(ranked):
            onward = last_hop_only is not None and i >= last_hop_only
            # a step on from the trip shows its own last hop, whatever shorter path ends alike
            keys = {("answers", tuple(r.answers))} | (set() if onward else {("last", r.path.steps[-1])})
            if not keys & seen:
                seen |= keys
                distinct.append(i)
        if last_hop_only is not None:
            # the steps on from a trip are read past the paths shown: one fact each of their
            # last hop ("Down with Love | written by | Eve Ahlert"), beside the trip's own
            shown = [i for i in distinct if i < last_hop_only][:self.read_paths]
            distinct = shown + [i for i in distinct if i >= last_hop_only]
        else:
            distinct = distinct[:self.read_paths]
        if also is not None and also not in distinct and not any(
                ranked[i].answers == ranked[also].answers or ranked[i].path.steps[-1] == ranked[also].path.steps[-1]
                for i in distinct):
            distinct.append(also)  # ``ranked[also]``: shown whatever its rank (see :meth:`ground`)
        if len(distinct) < 2:
            return default, []
        facts, mediators = [], {}
        for i in distinct:
            found = sb.evidence(self.store, ranked[i].built, timeout_s=self.timeout_s, limit=self.read_rows)
            if last_hop_only is not None and i >= last_hop_only:
                found = [e for e in found if e.p == ranked[i].path.steps[-1][0]]
            facts += labelled(found, self.mediator_names(found, mediators))
        answers = {i: {normalise_label(t.label) for t in r.terms} for i, r in enumerate(ranked)}
        # any entity the facts name may be marked: one in the middle of a path is the answer
        # of another; a mediator only joins facts
        short_names = set(mediators.values())
        choices = list(dict.fromkeys([label for s, _, o in facts for label in (s, o) if label not in short_names]
                                     + [label for i in distinct for label in ranked[i].answers]))
        marks = ask_for_answers(run, step, "path_read", {"facts": triple_lines(facts), "question": question},
                                max_tokens=40, terms=choices, shape="path_read")
        marked = {normalise_label(m) for m in marks}
        first = normalise_label(marks[0]) if marks else None
        hits = {i: len(marked & answers[i]) for i in answers}
        # The path that holds the first mark (the model's best; the later ones it often
        # takes from other paths' facts), then the one whose answers are most nearly the
        # marks, both ways (F1: a path to every country holds the one marked too, and a
        # path to one of three films marked two misses one), then the encoder's order.
        # Every path that ran competes, not only those shown: one is shown per last step, and
        # the one shown may reach the marked film through a co-star and back (twelve films)
        # where a path not shown reaches it alone.
        best = max(answers, key=lambda i: (*marks_fit(answers[i], marked, first), -i))
        if not hits[best] and written is not None and ids[written] != default:
            # The model's reading says nothing of these paths (it marked the named entity,
            # or "unknown"), so it cannot tell the draft's slip from the encoder's: the draft
            # is the model's own reading of the question, and where the store holds the
            # path it wrote, that stands over the encoder's order, which the answers' names
            # sway ("who does amy stiller play in dodgeball", drafted as her characters:
            # the encoder put her films first, for DodgeBall's name in the question)
            run.record(step, read={"marked": marks, "paths_shown": len(distinct), "picked": None,
                                   "draft_written": written + 1})
            return ids[written], marks
        pick = ids[best] if hits[best] else default
        drafted = ids.index(default) if default in ids else None
        if drafted is not None and best != drafted and keeps_draft(
                answers[drafted], ranked[drafted].path.hops, ranked[best].path.hops, marked, first, answers[best]):
            # The model marked every answer of the path its own draft became, first mark
            # included: its reading agrees with its draft, and a longer path that holds more
            # of the marks holds what the model also took from the facts of the hops beyond
            # ("countries Nepal borders": China and India, then Bhutan from "Bhutan | shares
            # border with | China", which a walk two borders on holds too)
            run.record(step, draft_confirmed={"kept": ranked[drafted].answers, "over": ranked[best].answers})
            best, pick = drafted, default
        elif drafted is not None and best != drafted and hits[best] and marks_the_middle(
                ranked[drafted].path, answers[best], [(r.path, answers[i]) for i, r in enumerate(ranked)],
                drafted_hops):
            # The model marked the entities one hop short of the chain that both the draft
            # and the encoder walk: the facts nearest the named entity ("what is X's
            # offspring's offspring": X's children marked, where the draft wrote two hops
            # and the encoder put X's grandchildren first; PathQuestion 2-hop). The path
            # its marks fit may be that middle walked on and back, with the same answers.
            run.record(step, chain_middle={"kept": ranked[drafted].answers, "over": ranked[best].answers})
            best, pick = drafted, default
        if first_mark and first not in answers[best]:
            # a round trip's question names what the others share ("the director of X also
            # directed …"), and the model marks it; its later marks then come from the
            # facts of other trips (co-stars' films), so the encoder's order stands
            pick = default
        run.record(step, read={"marked": marks, "paths_shown": len(distinct),
                               "picked": best + 1 if hits[best] and pick == ids[best] else None,
                               "shown": best in distinct if hits[best] else None})
        return pick, marks

    def mediator_names(self, found: Sequence, names: dict[str, str]) -> dict[str, str]:
        """``names`` (IRI → name) with a short name, ``#1``, ``#2``… in the order met, for
        each mediator without a label the facts ``found`` pass through (a Freebase CVT, a
        statement): its generated IRI says nothing to the model and crowds the facts it
        joins."""
        for e in found:
            for iri, label in ((e.s, e.s_label), (None if e.literal else e.o, e.o_label)):
                if iri and not label and iri not in names and is_mediator(self.store, iri):
                    names[iri] = f"#{len(names) + 1}"
        return names

    def run_path(self, path: RelationPath, answer_var: str, anchor_iri: str, score: float) -> PathRun:
        """``path`` run in the sandbox as the query for ``answer_var``, with the first
        answers' labels for the answer check."""
        built = path.query(answer=answer_var, exclude=[anchor_iri])
        rows, error = sb.execute(self.store, built, timeout_s=self.timeout_s, max_rows=self.max_rows)
        # every row's label is read anyway (answer_terms labels them all), and reading the
        # paths needs them all: kept, not read again
        terms = sb.answer_terms(self.store, built, rows, limit=len(rows)) if rows else []
        if rows and not terms:
            rows = []  # it ends on mediators only: a path one hop longer reads what they hold
        return PathRun(path, score, built, rows, error, terms)


def marked_first(chosen: PathRun, marks: Sequence[str]) -> list:
    """The rows of the path picked, those whose answer the model marked reading the facts
    first, in the order it marked them, where its first mark is among the path's answers
    (the path that holds Ohio's symbols holds its bird and its motto; the model marked the
    motto). Otherwise, and where it marked none of them, the rows as they are."""
    labels = [normalise_label(m) for m in marks]
    if not labels or labels[0] not in {normalise_label(t.label) for t in chosen.terms}:
        return chosen.rows
    var = chosen.built.answer.lstrip("?")
    named = {t.iri: normalise_label(t.label) for t in chosen.terms if t.iri}
    rank = {label: i for i, label in reversed(list(enumerate(labels)))}

    def place(row: dict) -> int:
        value = row.get(var)
        text = getattr(value, "value", "")
        return rank.get(named.get(text, normalise_label(text)), len(labels))

    return sorted(chosen.rows, key=place)  # stable: the rows not marked keep their order


def extension_leads(runs: Sequence[PathRun], ranked: Sequence[int], question_fit: Sequence[float],
                    margin: float) -> int | None:
    """The run that goes one hop on from the best-ranked run (its steps, then one more)
    and fits the question alone by ``margin`` better than it, the best such; else None.

    The draft's words pull a path toward the hops the draft wrote, and a draft one hop
    short ("the films that share directors with X were in which genres" drafted as the
    films) ranks its own trip first. The question's words and the answers say the rest
    ("genres"; Drama and Music read as genres); only a step on from the ranked trip is
    weighed, so the trip the draft and the reading chose stays the one walked."""
    base = runs[ranked[0]].path
    on = [k for k in ranked if runs[k].path.goes_on_from(base)]
    if not on:
        return None
    best = max(on, key=lambda k: question_fit[k])
    return best if question_fit[best] - question_fit[ranked[0]] >= margin else None


def trip_lengths(question: str, draft: ChainDraft) -> tuple[int, int]:
    """The shortest and the longest round trip that answer ``question`` as ``draft`` wrote it.
    The others themselves ("which films share a director with X", "which other films did
    X's director make") are the trip the draft says, or two hops. Something of theirs ("the
    films that share directors with X were in which genres") is that trip or one hop on: a
    draft that folds "the genres of the films that share" into one step is a hop short, and
    the store's paths, not the count of steps written, say how far the answer is. A draft
    that is a star (every pattern on the entity) is a two-hop trip only where the question
    asks for the sharers; where it asks for something of theirs the hops it wrote stand."""
    if asks_for_others(question):
        return 2, 2
    sharers = asks_for_the_sharers(question)
    hops = (draft if sharers else replace(draft, off_anchor=None)).trip_hops
    return hops, hops if sharers else hops + 1


def same_words(labels: Sequence[str], words: Sequence[str]) -> bool:
    """Whether a path's relation ``labels`` are the draft's relation ``words``, one for one
    (as :meth:`PathGrounder.draft_trip` compares them: by :func:`normalise_label`)."""
    return len(labels) == len(words) and all(normalise_label(a) == normalise_label(b) for a, b in zip(labels, words))


def marks_the_middle(drafted: RelationPath, marked: set[str], runs: Sequence[tuple[RelationPath, set[str]]],
                     drafted_hops: int | None) -> bool:
    """Whether the answers the model's marks fit, ``marked``, are those of the middle of the
    ``drafted`` path (a run of ``runs``, path and answers, that ``drafted`` goes one hop on
    from), while the draft wrote ``drafted_hops``, as many hops as ``drafted`` walks: the
    draft's length and the encoder's pick agree, and the marks stop short of both.

    Never where ``drafted`` ends walking back along the relation of the hop before: the
    draft wrote a chain (a trip's draft reads none of this), so that walk back is not the
    draft's chain, and the middle it leaves is what the others share, which the question
    may ask for itself or go on past ("which team has a player from Japan": the clubs of
    Japan's players marked, the encoder's pick their team-mates; WorldCup2014 2-hop. "The
    screenwriters of the films directed by X's director": the director marked, the pick
    the director's other films; MetaQA 3-hop)."""
    return drafted_hops is not None and drafted.hops == drafted_hops and not drafted.ends_walking_back and any(
        drafted.goes_on_from(path) and answers == marked for path, answers in runs)


def marks_fit(answers: set[str], marked: set[str], first: str | None) -> tuple[bool, float, int]:
    """How well a path's answers fit the model's marks, to compare paths by: holds the first
    mark, then F1 between the answers and the marks, then how many marks it holds."""
    hits = len(answers & marked)
    return first in answers, 2 * hits / max(len(answers) + len(marked), 1), hits


def keeps_draft(drafted: set[str], drafted_hops: int, best_hops: int, marked: set[str], first: str | None,
                best: set[str] | None = None) -> bool:
    """Whether the drafted path's answers stand over a path that fits the marks better.
    Over a longer one: the first mark is among them and every one of them is marked (a path
    to every country holds the one marked too, but not all of it is marked). Over one of
    the same length whose answers (``best``) are a part of the draft's: the first mark is
    among them and at least half of them are marked, so the marks fit both and do not
    tell the two apart (asked for X's writing credits, the model marked two of his three
    films, the two he also directed, and *directed by* held exactly those). A path of the
    same length that holds more marks is another relation ("written by" beside "directed
    by") and wins as before; a path a hop short of the answer holds no first mark."""
    if not drafted or first not in drafted:
        return False
    if best_hops > drafted_hops:
        return drafted <= marked
    return (best is not None and best_hops == drafted_hops and best < drafted
            and 2 * len(drafted & marked) >= len(drafted))


# Words with which English asks for the others that share something with the named one:
# "X's director also directed …", "co-stars of X", "films that share a writer with X",
# "the same actor as X". Grammar, not any one dataset's relations.
_ROUND_TRIP = re.compile(r"\b(?:also|co-\w+|co\w*(?:star|direct|writ|author|found|produc)\w*|shares?|shared|same|"
                         r"as well|together with|alongside)\b", re.I)


# "which other films did the director of X make", "X's writer wrote what else", "the other
# films by whoever directed X": the others of something reached from X (a role of X, written
# "the R of X", "X's R", or a clause "whoever/the person who R-ed X") are a trip back
# (others are several: "other films", "other people", not "the other half", a spouse)
_OTHERS = re.compile(r"\bother\s+(?:[a-z-]+s|people|men|women|children|ones)\b|\belse\b", re.I)
_ROLE_OF = re.compile(r"\bthe\s+([a-z-]+)\s+of\b|'s\s+([a-z-]+)|\bwho(?:m)?ever\s+([a-z-]+)"
                      r"|\bthe\s+(?:person|people|one|ones|man|woman)\s+(?:who|that)\s+([a-z-]+)", re.I)


def cue_in_labels(question: str, labels: Sequence[str]) -> str | None:
    """The relation label among ``labels`` that holds a form of one of the question's
    round-trip cue words ("share" in "shares border with"), or None."""
    cues = [w.lower() for m in _ROUND_TRIP.finditer(question) for w in m.group().split()]
    for label in labels:
        if any(_same_stem(word, cue) for word in normalise_label(label).split() for cue in cues):
            return label
    return None


def asks_round_trip(question: str) -> bool:
    """Whether the question asks for others sharing something with the entity it names."""
    return bool(_ROUND_TRIP.search(question)) or bool(_OTHERS.search(question) and _ROLE_OF.search(question))


# irregular forms whose stem is not their start ("wrote" is a form of "write")
_IRREGULAR = {"wrote": "write", "made": "make", "sang": "sing", "sung": "sing", "drew": "draw", "drawn": "draw",
              "led": "lead", "built": "build", "taught": "teach", "won": "win", "fought": "fight"}
# a role of the named entity (:data:`_ROLE_OF`), or the one the others share with it
_ROLE_WORDS = re.compile(_ROLE_OF.pattern + r"|\bshared?s?\s+(?:a|an|the|their|its)\s+([a-z-]+)"
                         r"|\bthe\s+same\s+([a-z-]+)", re.I)


def question_words(question: str) -> list[str]:
    """The question's words in lower case, hyphened ones apart ("co-wrote": "co", "wrote")."""
    return re.findall(r"[a-z]+", question.lower())


def role_words(question: str) -> list[str]:
    """The words naming a role of the entity the question names, or the one the others
    share: "director" in "the director of X", "X's director", "share a director with X"
    and "the same director as X", "directed" in "whoever directed X"."""
    return [w.lower() for m in _ROLE_WORDS.finditer(question) for w in m.groups() if w]


def words_naming_relations(words: Sequence[str], named: str, *, shortest: int = 5) -> list[str]:
    """The question's ``words`` that may name a relation: those of ``shortest`` letters or
    more ("with", "the" and "has" name none) that are not words of the ``named`` entity's
    label (*The Language of Love* names no language)."""
    own = set(question_words(named))
    return [w for w in dict.fromkeys(words) if len(w) >= shortest and w not in own]


def _same_stem(a: str, b: str) -> bool:
    """Two forms of one word, by a shared start ("directed", "director"; "writer",
    "written"; "starred", "star"), irregular past forms first made regular."""
    a, b = _IRREGULAR.get(a, a), _IRREGULAR.get(b, b)
    shared = len(os.path.commonprefix([a, b]))
    return shared >= 4 and shared >= 0.6 * min(len(a), len(b))


def _names_role(label: str, roles: Sequence[str]) -> bool:
    return any(_same_stem(word, form) for word in normalise_label(label).split() for role in roles
               for form in _forms(role))


def _forms(word: str, *, shortest: int = 5) -> list[str]:
    """``word``, and the words a compound of it ends in (of ``shortest`` letters or more,
    after three or more of its own): a "screenwriter" is a writer, a "filmmaker" a maker."""
    return [word] + [word[k:] for k in range(3, len(word) - shortest + 1)]


# "name the other films by whoever directed X", "what else did X's director direct": the
# others asked for are the things that share the role with X, there and back (two hops),
# however many patterns the draft wrote
_OTHERS_ASKED = re.compile(r"^\W*(?:(?:which|what|name|list|give me|tell me|show me|find)\s+"
                           r"(?:the\s+|some\s+|all\s+|any\s+)?other\s+[a-z-]+|what\s+else)\b|\bwhat\s+else\s*\W*$",
                           re.I)


def asks_for_others(question: str) -> bool:
    """Whether the question's wh-phrase asks for the others of a role of the entity it
    names ("which other films did the director of X make"), so they are a two-hop trip."""
    return bool(_OTHERS_ASKED.search(question) and _ROLE_OF.search(question))


# "which films share a director with X", "what movies were also directed by X's director",
# "name the films that share …", "films by the same director as X", "movies made by the
# same writer as X": the things asked for are the ones that share, so the answer is back
# where X is, two hops away, whatever else the draft hangs off X
_ASKED_THINGS = (r"(?:(?:which|what)\s+(?:other\s+)?[a-z-]+"
                 r"|(?:name|list|give me|tell me|show me|find)\s+(?:the\s+|some\s+|all\s+)?(?:other\s+)?[a-z-]+"
                 r"(?:\s+(?:that|which))?"
                 r"|(?:other\s+)?[a-z-]+s)")  # a bare plural: "films by the same director as X?"
_SHARING = (r"(?:(?:also\s+|were\s+also\s+|have\s+)?(?:share|shared|have the same|had the same|were also|also)"
            r"|(?:(?:are|were|was|is)\s+)?(?:[a-z]+\s+)?(?:by|from|with|having)\s+the\s+same"
            r"|(?:did|does|do|has|have|had)\s+the\s+[a-z-]+\s+of)")  # "which other films did the director of X make"
_SHARERS = re.compile(rf"^\W*{_ASKED_THINGS}\s+{_SHARING}\b", re.I)


def asks_for_the_sharers(question: str) -> bool:
    """Whether the question asks for the things that share something with the one it names
    (the wh-phrase is what shares), not for something of theirs ("… were released when")."""
    return bool(_SHARERS.search(question))


def question_led(paths: Sequence[RelationPath], scorer: PathScorer, max_hops: int) -> int | None:
    """The path of at most ``max_hops`` steps that the question's words alone fit best
    (:meth:`PathScorer.question_fit`, paths already scored), or None."""
    within = [i for i in range(len(paths)) if len(paths[i].steps) <= max_hops]
    return max(within, key=lambda i: scorer.question_fit(paths[i]), default=None)


def best_per_last_step(paths: Sequence[RelationPath], scores: Sequence[float], n: int, *,
                       max_hops: int = MAX_HOPS) -> list[int]:
    """The best-scoring path of each last step (relation and direction), for the ``n``
    last steps whose best path scores highest, best first: paths that answer with
    different kinds of things. Only paths of at most ``max_hops`` steps count."""
    best: dict[tuple[str, bool], int] = {}
    for i in sorted(range(len(paths)), key=lambda i: -scores[i]):
        if len(paths[i].steps) <= max_hops:
            best.setdefault(paths[i].steps[-1], i)
    return list(best.values())[:n]


__all__ = ["ChainDraft", "PathRun", "PathGrounder", "Chooser", "best_per_last_step", "asks_round_trip", "trip_lengths",
           "extension_leads",
           "asks_for_the_sharers", "asks_for_others"]

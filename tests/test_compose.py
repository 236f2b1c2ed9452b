"""Composing query graphs from the store (qa.compose): the question read once, candidates
enumerated in stages and executed, verbalized, shortlisted and picked.

The scripted model picks the option whose words hold what the test names, so these tests
check the enumeration, the verbalizing and the plumbing around the model; the real model's
picks are measured by the benchmarks and shown in test_compose_llm.py."""
from __future__ import annotations

import re

import pytest

from qa import MethodRun, QAContext, ScriptedLLM
from qa.compose import ComposeOptions, compose_answer, enumerate_candidates, rank, read_question, verbalize

from test_query_graph import indexed_store

FILMS = """Night Harbor|directed_by|Ann Lee
Night Harbor|has_genre|Comedy
Night Harbor|release_year|1979
Paper Lanterns|directed_by|Ann Lee
Paper Lanterns|has_genre|Drama
Paper Lanterns|release_year|1985
Glass River|directed_by|Ann Lee
Glass River|has_genre|Comedy
Glass River|release_year|1999
Quiet Engines|directed_by|Ann Lee
Quiet Engines|has_genre|Thriller
Quiet Engines|release_year|2007
Salt Road|directed_by|Bo Park
Salt Road|has_genre|Comedy
Salt Road|release_year|1998
Glass River|starred_actors|Bo Park
Salt Road|starred_actors|Bo Park
"""

# Freebase-shaped: a player's teams through roster (CVT) nodes, as WebQSP's paths are
ROSTERS = """</en/hank_moss> <name> "Hank Moss" .
</en/hank_moss> </sports/pro_athlete/teams> _:r1 .
_:r1 </sports/sports_team_roster/team> </en/red_harbor> .
_:r1 </sports/sports_team_roster/position> </en/wide_receiver> .
</en/hank_moss> </sports/pro_athlete/teams> _:r2 .
_:r2 </sports/sports_team_roster/team> </en/blue_ridge> .
_:r2 </sports/sports_team_roster/position> </en/punt_returner> .
</en/red_harbor> <name> "Red Harbor Gulls" .
</en/blue_ridge> <name> "Blue Ridge Foxes" .
</en/wide_receiver> <name> "Wide receiver" .
</en/punt_returner> <name> "Punt returner" .
</en/hank_moss> </people/person/place_of_birth> </en/lake_town> .
</en/lake_town> <name> "Lake Town" .
_:r1 </sports/sports_team_roster/from> "2004"^^<http://www.w3.org/2001/XMLSchema#gYear> .
_:r1 </sports/sports_team_roster/to> "2009"^^<http://www.w3.org/2001/XMLSchema#gYear> .
_:r2 </sports/sports_team_roster/from> "2010"^^<http://www.w3.org/2001/XMLSchema#gYear> .
"""


@pytest.fixture(scope="module")
def films(tmp_path_factory):
    store, index = indexed_store(tmp_path_factory, "films", "tsv", FILMS)
    with store:
        yield store, index


def enumerated(films, question: str):
    """The question's reading on the films store, its candidates, and those by their words."""
    store, index = films
    reading = read_question(index, question)
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    return reading, candidates, {verbalize(c): c for c in candidates}


@pytest.fixture(scope="module")
def rosters(tmp_path_factory):
    store, index = indexed_store(tmp_path_factory, "rosters", "freebase", ROSTERS)
    with store:
        yield store, index


def judge(pattern: str):
    """A scripted model that says yes to the option whose query in words matches ``pattern``."""
    def say(messages):
        query = re.search(r"^Query: (.*)$", messages[-1]["content"], re.M).group(1)
        return "yes" if re.search(pattern, query) else "no"
    return say


def composed(store_index, question, pattern):
    store, index = store_index
    llm = ScriptedLLM([judge(pattern)] * 14)  # one judgement an option shown (6, the seats a denial or a shape adds,
    # and 2 for the options refinements narrow)
    run = MethodRun(llm)
    with store.reading():
        picked = compose_answer(store, index, question, run, "test")
        answer = picked.answer if picked else None
    return answer, run, llm


# -- reading --------------------------------------------------------------------------------
def test_the_question_is_read_once_into_linked_mentions_values_and_cues(films):
    store, index = films
    reading = read_question(index, "how many films did ann lee direct before 1990")
    assert reading.mentions[0].text == "ann lee" and reading.mentions[0].best.label == "Ann Lee"
    assert [(v.op, v.low, v.year) for v in reading.values] == [("<", 1990.0, True)]
    assert {"how", "many", "before"} <= reading.cues


def test_brackets_mark_a_name_and_are_read_out_of_the_text(films):
    _, index = films
    reading = read_question(index, "Which films did [Ann Lee] direct?")
    assert reading.text == "Which films did Ann Lee direct?"
    assert reading.mentions[0].bracketed and reading.mentions[0].span == (16, 23)


@pytest.mark.parametrize("typed, label, like", [
    ("celtics", "Boston Celtics", True), ("the eu", "European Union", True), ("uk", "United Kingdom", True),
    ("jamaican", "Jamaica", True), ("lincoln", "Abraham Lincoln", True),
    ("zorblax mountains", "Rocky Mountains", False), ("vp lincoln", "Abraham Lincoln", False),
    ("saint george day", "St George's Day", True), ("mt hood", "Mount Hood", True), ("sat", "Saint", False),
    ("toussaint l'ouverture", "Toussaint Louverture", True), ("o'hare", "Hare Krishna", False),
    ("nafta", "North American Free Trade Agreement", True), ("nafta", "North American Trade", False),
    ("vince scully", "Vin Scully", True), ("vince", "Vin Scully", False), ("car park", "Cars Park", False),
    ("george herbert walker bush", "George H. W. Bush", True), ("john fish", "John F. Kennedy", False),
    ("john fitzgerald smith", "John F. Kennedy", False),
])
def test_a_name_read_by_meaning_must_be_written_in_the_label(typed, label, like):
    from qa.compose import written_like

    assert written_like(typed, label) is like


def test_middle_names_spelled_out_count_only_where_they_spell_every_initial_of_the_label():
    # "george herbert walker bush" writes George and Bush of George W. Bush, not the W.:
    # two of its four words, so it is not asked about as a name written another way
    from qa.compose._reading import _written_words

    assert _written_words("george herbert walker bush", "George W. Bush") == 2
    assert _written_words("george herbert walker bush", "George H. W. Bush") == 4


@pytest.mark.parametrize("typed, label, whole", [
    ("australians", "Australia", True), ("afl", "American Football League", True), ("st", "Saint", True),
    ("first", "First Shot", False), ("king", "The Man Who Would Be King", False),
    ("without", "Me Without You", False), ("appear", "The Appeared", False), ("australia", "Australia", False),
])
def test_a_name_typed_in_a_derived_form_writes_the_whole_label(typed, label, whole):
    """The lower bar of meaning (a demonym, initials) is for a typed form derived from the
    whole name; a common word that is one word of a title, or a title of its own, is not."""
    from qa.compose._reading import writes_whole

    assert writes_whole(typed, label) is whole


def test_the_parts_of_a_name_the_store_lacks_name_nothing_else(films):
    _, index = films
    reading = read_question(index, "which films did zorblax park direct")
    assert [m.best.label for m in reading.mentions] == ["Bo Park"]  # "park", read alone
    assert reading.without_absent(["Zorblax Park"]).mentions == ()
    assert read_question(index, "which films did bo park direct").without_absent(["Zorblax"]).mentions[0].text == "bo park"
    # a draft's guess at the answer written as a possessive lacks only what follows the "'s"
    assert read_question(index, "which films did bo park's brother direct").without_absent(
        ["Bo Park's brother"]).mentions[0].best.label == "Bo Park"


def test_a_name_the_store_lacks_is_its_name_words_not_the_words_of_what_is_asked(films):
    """A drafted name is read by its name words: the words of the store's relations say
    what is asked of it. "[ENT: Comedy genre]" is borne by *Comedy*; "[ENT: genre]" names
    nothing, so composing after its refusal reads the whole question."""
    _, index = films
    reading = read_question(index, "which comedy films did ann lee direct")
    assert "Comedy" in {m.best.label for m in reading.mentions}
    assert "Comedy" not in {m.best.label for m in reading.without_absent(["Comedy genre"]).mentions}
    assert "Comedy" in {m.best.label for m in reading.without_absent(["Comedy genre"], index).mentions}
    asked = read_question(index, "which genre are the films ann lee directed")
    assert asked.about(["genre"], index).mentions == asked.mentions
    # without the relations' words, "genre" is read as a name written nowhere a name is:
    # the name of two words the question writes whole is what it asks about
    assert [m.best.label for m in asked.about(["genre"]).mentions] == ["Ann Lee"]
    # a name word the store lacks is still lacked: "zorblax genre" is no comedy
    assert "Comedy" not in {m.best.label for m in read_question(
        index, "which zorblax comedy films did ann lee direct").without_absent(["Zorblax comedy"], index).mentions}


@pytest.mark.parametrize("typed, label, written", [
    ("ben franklin", "Benjamin Franklin", True), ("alex ross", "Alexander Ross", True),
    ("ben", "Benjamin Franklin", False),  # a short form alone begins too many names
    ("volkswagen car", "Volkswagen Passenger Cars", False),  # a plural's stem is no short form
    ("bent franklin", "Benjamin Franklin", False),
])
def test_a_given_name_typed_short_is_written_in_the_name(typed, label, written):
    from qa.compose._reading import written_like

    assert written_like(typed, label) is written


@pytest.mark.parametrize("typed, label, spells", [
    ("nafta", "North American Free Trade Agreement", True), ("nato", "North Atlantic Treaty Organization", True),
    ("naft", "North American Free Trade Agreement", False), ("eu", "European Union", False),
    ("north america", "North American Free Trade Agreement", False),
])
def test_initials_of_a_long_name_name_it(typed, label, spells):
    from qa.compose._reading import spells_initials

    assert spells_initials(typed, label) is spells


def test_two_compared_names_a_draft_joined_into_one_are_each_kept(films):
    _, index = films
    # the draft wrote "[ENT: Harbor vs Glass River]", a name the store lacks; either side of
    # the "vs" is a name of its own, and the one the store holds whole stays read
    reading = read_question(index, "Night Harbor vs Glass River: which is newer?")
    kept = reading.without_absent(["Harbor vs Glass River"])
    assert {"Night Harbor", "Glass River"} <= {m.best.label for m in kept.mentions}
    # without a word that compares, the joined name is one name the store lacks
    assert "Glass River" not in {m.best.label for m in read_question(
        index, "who directed Harbor Glass River").without_absent(["Harbor Glass River"]).mentions}


def test_after_a_name_the_store_lacks_only_where_it_is_written_is_read(films):
    _, index = films
    reading = read_question(index, "which comedies did ann lee direct")
    assert {m.best.label for m in reading.mentions} >= {"Ann Lee", "Comedy"}
    # pgmr found no "Ann Lee" as it wrote it: composing looks for that name, not for the
    # question's other words; a name written joined ("AnnLee") is found there too
    assert {m.best.label for m in reading.about(["Ann Lee"]).mentions} == {"Ann Lee"}
    assert {m.best.label for m in reading.about(["AnnLee"]).mentions} == {"Ann Lee"}
    renamed = read_question(index, "which comedies did zorblax quintana direct")
    assert renamed.mentions and renamed.about(["Zorblax Quintana"]).mentions == ()
    # a letter is inside any name: a mention "O" locates no "O'Malley", only an "O"
    from dataclasses import replace

    letter = replace(reading, text="which comedies did o'malley direct",
                     mentions=(replace(reading.mentions[0], text="O"),))
    assert letter.about(["O'Malley"]).mentions == () and len(letter.about(["O"]).mentions) == 1
    # a draft's variable names nothing, and a name the question writes nowhere is the
    # draft's own guess (at the answer, often): neither restricts the reading
    assert reading.about(["name ?director"]).mentions == reading.mentions
    assert reading.about(["Night Harbor"]).mentions == reading.mentions
    assert not reading.writes("Night Harbor") and reading.writes("AnnLee") and reading.writes("comedy")


def test_a_bracketed_name_the_store_lacks_links_to_nothing(films):
    _, index = films
    assert read_question(index, "Which films did [Zorblax Quintana] direct?").mentions == ()


# -- enumeration: every kind of stage, each executed -----------------------------------------
def _texts(store_index, question):
    store, index = store_index
    reading = read_question(index, question)
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    return {verbalize(c): c for c in candidates}


def test_core_chains_come_from_the_store_and_carry_their_answers(films):
    texts = _texts(films, "which films did ann lee direct")
    [chain] = [c for c in texts.values() if c.topic.label == "Ann Lee" and c.stage == "chain" and c.path.hops == 1]
    assert chain.size == 4 and set(chain.answers) == {"Night Harbor", "Paper Lanterns", "Glass River",
                                                      "Quiet Engines"}


def test_an_entity_constraint_ties_the_answer_to_another_mention(films):
    texts = _texts(films, "which comedy films did ann lee direct")
    tied = [c for c in texts.values() if c.stage == "entity constraint" and c.ties[0].entity.label == "Comedy"
            and c.path.hops == 1 and c.topic.label == "Ann Lee"]
    assert tied and {frozenset(c.answers) for c in tied} == {frozenset({"Night Harbor", "Glass River"})}


def test_the_best_chain_of_every_topic_grows_its_constraints(films):
    """Only the best few chains grow constraints; the best of each named topic (and of
    each length) grows too,
    so a question whose words fit one topic's chains (here only one grows: ``cores=1``)
    still gets the other's chain tied to the first ("which of Darrell Roodt's films are in
    Zulu" read as the film *Zulu*'s chains)."""
    store, index = films
    reading = read_question(index, "which films of ann lee star bo park")
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading, ComposeOptions(cores=1))
    tied = {(c.topic.label, c.ties[0].entity.label): frozenset(c.answers) for c in candidates
            if c.stage == "entity constraint" and c.path.hops == 1}
    assert tied[("Ann Lee", "Bo Park")] == {"Glass River"}
    assert ("Bo Park", "Ann Lee") in tied


def test_a_negated_constraint_keeps_the_answers_the_store_does_not_tie(films):
    texts = _texts(films, "which films did ann lee direct that are not comedies")
    denied = [c for c in texts.values() if c.stage == "negation" and c.path.hops == 1 and c.topic.label == "Ann Lee"]
    assert {frozenset(c.answers) for c in denied} == {frozenset({"Paper Lanterns", "Quiet Engines"})}
    assert all(c.ties[0].node == "?answer" and "not:" in verbalize(c) for c in denied)
    # a question that denies nothing gets no negated constraint
    assert not any(c.stage == "negation" for c in _texts(films, "which comedy films did ann lee direct").values())


def _denial_reached(store_index, question):
    """The reading, and what reading where its denial stands changes in each candidate's
    score (against every negation gaining the cue alike)."""
    from dataclasses import replace

    store, index = store_index
    reading = read_question(index, question)
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    changed = [a - b for a, b in zip(rank(index.embed, reading, candidates),
                                     rank(index.embed, replace(reading, denial_at=None), candidates))]
    return reading, {c: round(a, 6) for c, a in zip(candidates, changed)}


def test_among_negations_a_denial_favours_the_names_written_after_it(films):
    question = "which ann lee films aren't comedies"
    reading, changed = _denial_reached(films, question)
    assert reading.denial_at == question.index("aren't")
    denied = {c.ties[0].entity.label: c for c in changed if c.stage == "negation" and c.path.hops == 1}
    # Ann Lee's films that are not comedies, and the comedies that are not Ann Lee's
    assert {"Comedy", "Ann Lee"} <= set(denied)
    assert changed[denied["Comedy"]] == 0.0 and changed[denied["Ann Lee"]] == -0.1
    # the subject of a denied verb stands before it: no negation's names follow the
    # denial, and each gains the cue as before
    _, changed = _denial_reached(films, "which ann lee films did bo park not act in")
    assert set(changed.values()) == {0.0}
    assert read_question(films[1], "which films did ann lee direct other than comedies").denial_at is not None
    assert read_question(films[1], "which films did ann lee direct").denial_at is None


def test_the_model_picks_a_negation_and_the_query_says_not_exists(films):
    answer, run, _ = composed(films, "which of ann lee's films aren't comedies", r"^Ann Lee directed what; where not:")
    assert set(answer.answers) == {"Paper Lanterns", "Quiet Engines"} and "NOT EXISTS" in answer.query


def test_a_conjunction_ties_the_answer_back_to_the_topic_by_a_second_relation(films):
    # Bo Park acted in Glass River and Salt Road, and directed Salt Road
    texts = _texts(films, "which films did bo park both direct and act in")
    both = [c for c in texts.values() if c.stage == "conjunction" and c.topic.label == "Bo Park"]
    assert both and {c.answers for c in both} == {("Salt Road",)}
    assert all(c.ties[-1].entity.label == "Bo Park" and "and also" in verbalize(c) for c in both)
    # the chain's own relation is not a second role, and a question with one role gets none
    assert all(c.ties[-1].relation != c.path.steps[0][0] for c in both)
    assert not any(c.stage == "conjunction" for c in _texts(films, "which films did bo park act in").values())


def test_the_model_picks_a_conjunction_and_the_query_joins_both_roles(films):
    answer, run, _ = composed(films, "which films did bo park both star in and direct", r"and also")
    assert answer.answers == ["Salt Road"] and run.trace["compose"]["stage"] == "conjunction"
    assert answer.query.count("<http://kgstore.local/entity/Bo_Park>") >= 2


def test_a_value_constraint_compares_a_value_the_node_holds(films):
    texts = _texts(films, "which films did ann lee direct before 1990")
    tied = [c for c in texts.values() if c.stage == "value constraint" and c.path.hops == 1 and c.topic.label == "Ann Lee"]
    assert {frozenset(c.answers) for c in tied} == {frozenset({"Night Harbor", "Paper Lanterns"})}


def test_a_superlative_orders_by_a_value_the_node_holds(films):
    texts = _texts(films, "what is the newest film directed by ann lee")
    ordered = {c.ordering.ascending: c.answers for c in texts.values()
               if c.ordering and c.path.hops == 1 and c.topic.label == "Ann Lee"}
    assert ordered == {True: ("Night Harbor",), False: ("Quiet Engines",)}


def test_a_superlative_asked_for_its_value_orders_the_values_themselves(films):
    # "in what year did ann lee first direct a film": the chain answers years, and the
    # question asks for the first of them, not for a film
    texts = _texts(films, "in what year did ann lee first direct a film")
    ordered = {c.ordering.ascending: c.answers for c in texts.values()
               if c.stage == "superlative value" and c.topic.label == "Ann Lee"}
    assert ordered == {True: ("1979",), False: ("2007",)}
    assert not any(c.stage == "superlative value" for c in _texts(films, "which years did ann lee direct films in").values())


def test_the_ordering_word_breaks_the_tie_between_the_first_and_the_last(films):
    store, index = films
    for question, ascending in (("in what year did ann lee first direct a film", True),
                                ("in what year did ann lee last direct a film", False)):
        reading = read_question(index, question)
        assert reading.order_ascending is ascending
        with store.reading():
            candidates = [c for c in enumerate_candidates(store, index.embed, reading) if c.stage == "superlative value"]
        scores = rank(index.embed, reading, candidates)
        best = max(range(len(candidates)), key=lambda i: scores[i])
        assert candidates[best].ordering.ascending is ascending


def test_a_count_is_offered_for_a_question_that_asks_how_many(films):
    texts = _texts(films, "how many films did ann lee direct")
    assert any(c.count and c.answers == ("4",) and c.path.hops == 1 and c.topic.label == "Ann Lee" for c in texts.values())
    assert not any(c.count for c in _texts(films, "which films did ann lee direct").values())


def test_chains_walk_through_mediators_and_never_answer_with_one(rosters):
    texts = _texts(rosters, "what teams did hank moss play for")
    through = [c for c in texts.values() if c.path.hops == 2 and c.path.labels[1].endswith(" team")]
    assert through and set(through[0].answers) == {"Red Harbor Gulls", "Blue Ridge Foxes"}
    store, _ = rosters
    for c in texts.values():
        assert not any(a.startswith("http") for a in c.answers)  # no mediator or blank node


def test_rows_that_end_on_mediators_answer_nothing(rosters):
    # "what part did X play in Y" drafted as X's films: the rows are film performances,
    # which are never answers, so the draft's next reading is tried, as if none had returned
    from qa.steps import _sparql_build as sb
    store, _ = rosters
    moss = "http://rdf.freebase.com/ns/en.hank_moss"
    teams = sb.BuiltQuery("?answer", [[[sb.TriplePattern(f"<{moss}>", "<http://rdf.freebase.com/ns/sports.pro_athlete.teams>",
                                                         "?answer")]]])
    rows, _ = sb.execute(store, teams, timeout_s=5, max_rows=10)
    assert len(rows) == 2 and sb.answering_rows(store, teams, rows) == []
    through = sb.BuiltQuery("?answer", [[[sb.TriplePattern(f"<{moss}>", "<http://rdf.freebase.com/ns/sports.pro_athlete.teams>", "?m"),
                                          sb.TriplePattern("?m", "<http://rdf.freebase.com/ns/sports.sports_team_roster.team>",
                                                           "?answer")]]])
    rows, _ = sb.execute(store, through, timeout_s=5, max_rows=10)
    assert len(sb.answering_rows(store, through, rows)) == 2


def test_answers_more_paths_reach_come_first_and_an_ordered_query_keeps_its_order(films):
    # Ann Lee's genres: Comedy through two of her films, Drama and Thriller through one each
    from qa.steps import _sparql_build as sb
    store, _ = films
    with store.reading():
        lee, genre, directed = (store.resolve(n) for n in ("Ann Lee", "has_genre", "directed_by"))
        genres = sb.BuiltQuery("?answer", [[[sb.TriplePattern("?f", f"<{directed}>", f"<{lee}>"),
                                             sb.TriplePattern("?f", f"<{genre}>", "?answer")]]])
        rows, _ = sb.execute(store, genres, timeout_s=5, max_rows=10)
        answer = sb.query_answer(store, "what genres are ann lee's films", "test", genres, rows, limit=10, timeout_s=5)
        assert answer.answers[0] == "Comedy" and sorted(answer.answers) == ["Comedy", "Drama", "Thriller"]
        # the rows as they came, turned so that Comedy is last: support alone brings it first
        last = sorted(rows, key=lambda r: "comedy" in r["answer"].value.lower())
        assert sb.query_answer(store, "q", "test", genres, last, limit=10, timeout_s=5).answers[0] == "Comedy"
        # a query that orders its own rows keeps them as they are
        ordered = sb.BuiltQuery(genres.answer, genres.steps, tail="ORDER BY ?answer")
        kept = sb.query_answer(store, "q", "test", ordered, last, limit=10, timeout_s=5)
        assert kept.answers[0] != "Comedy"


def test_a_constraint_on_the_mediator_keeps_the_role_the_question_names(rosters):
    texts = _texts(rosters, "what team did hank moss play for as a punt returner")
    tied = [c for c in texts.values() if c.stage == "entity constraint" and c.ties[0].node == "?m1"]
    assert {c.answers for c in tied if c.path.labels[1].endswith(" team")} == {("Blue Ridge Foxes",)}


@pytest.mark.parametrize("year, team", [("2006", "Red Harbor Gulls"), ("2009", "Red Harbor Gulls"),
                                         ("2012", "Blue Ridge Foxes")])
def test_a_year_is_kept_inside_the_span_of_the_mediator_s_dates(rosters, year, team):
    # the roster from 2004 to 2009, and the one from 2010 with no end yet: "in 2012" is
    # the one still held, though no date on it is 2012
    texts = _texts(rosters, f"who did hank moss play for in {year}")
    spans = {c.answers for c in texts.values() if c.stage == "time span" and c.path.labels[1].endswith(" team")}
    assert (team,) in spans and all(len(a) == 1 for a in spans)
    assert not any(c.stage == "time span" for c in _texts(rosters, "who did hank moss play for").values())


def test_a_time_span_is_said_in_words(rosters):
    texts = _texts(rosters, "who did hank moss play for in 2012")
    said = [t for t, c in texts.items() if c.stage == "time span" and c.answers == ("Blue Ridge Foxes",)]
    assert said and "held in 2012" in said[0]


# -- comparisons of two named things ----------------------------------------------------------
def _comparisons(store_index, question):
    store, index = store_index
    from qa.compose import comparisons

    reading = read_question(index, question)
    with store.reading():
        return {(c.relation_label, c.kind): c.answers[0] for c in comparisons(store, reading, timeout_s=5.0)}


def test_two_roles_asked_favour_the_candidate_that_holds_both(films):
    from qa.compose import enumerate_candidates
    from qa.compose._choose import asked_roles, topic_roles

    store, index = films
    reading = read_question(index, "which films did bo park both direct and act in")
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    assert asked_roles(index.embed, reading, candidates) == {"directed by", "starred actors"}
    both = [c for c in candidates if topic_roles(c) == {"directed by", "starred actors"}]
    assert both and all(c.stage == "conjunction" for c in both)
    # the candidates that hold both roles, and only they, gain the cue's tie-break
    favoured = [a - b for a, b in zip(rank(index.embed, reading, candidates),
                                      rank(index.embed, reading, candidates, ComposeOptions(cue_weight=0.0)))]
    assert [round(f, 6) for f in favoured] == [0.1 if c in both else 0.0 for c in candidates]
    # without a word that joins two roles, no candidate is
    plain = read_question(index, "which films did bo park direct")
    assert not plain.conjoins and rank(index.embed, plain, candidates) == rank(
        index.embed, plain, candidates, ComposeOptions(cue_weight=0.0))


def test_a_constraint_may_tie_to_any_entity_that_bears_the_mention_s_name():
    from qa.compose import LinkedEntity, Mention, QuestionReading

    topic = LinkedEntity("x:ann", "Ann Lee", 0.9, "exact")
    tag, genre, near = (LinkedEntity("x:family", "family", 0.6, "exact"), LinkedEntity("x:Family", "Family", 0.5, "label"),
                        LinkedEntity("x:kin", "kinship", 0.4, "vector"))
    reading = QuestionReading("q", "the family films of Ann Lee", (
        Mention("Ann Lee", (20, 27), (topic,), bracketed=True), Mention("family", (4, 10), (tag, genre, near))))
    # "family" is a tag and a genre: both are offered, the store's ties say which the
    # answers hold; a neighbour in meaning is someone else
    assert reading.others(topic) == [tag, genre]


def test_two_named_things_are_compared_on_every_relation_both_hold(films):
    found = _comparisons(films, "night harbor vs glass river")
    assert found[("release year", "earlier")] == "Night Harbor" and found[("release year", "later")] == "Glass River"
    assert found[("release year", "difference")] == "20"
    assert found[("release year", "same")] == "no" and found[("has genre", "same")] == "yes"
    assert found[("directed by", "same")] == "yes"


@pytest.mark.parametrize("question, kind", [
    ("night harbor vs glass river: which is older", "earlier"), ("which came out earlier, night harbor or glass river", "earlier"),
    ("night harbor or glass river, which is newer", "later"), ("which came out later, glass river or night harbor", "later"),
    # an ordering word asks for one end of two things as a comparative does
    ("[Night Harbor] versus Glass River, which came first?", "earlier"),
    ("glass river or night harbor: which was released last", "later"),
])
def test_a_comparative_offers_only_the_end_it_asks_for(films, question, kind):
    # the encoder reads "earlier" and "later" alike: the word decides which end is offered
    kinds = {k for (_, k) in _comparisons(films, question) if k in ("earlier", "later")}
    assert kinds == {kind}


def test_a_word_linked_by_meaning_alone_is_not_a_thing_compared():
    from qa.compose._comparisons import pair
    from qa.compose._reading import LinkedEntity, Mention, QuestionReading

    pianist = LinkedEntity("x:pianist", "The Pianist", 0.76, "exact")
    movie_movie = LinkedEntity("x:movie_movie", "Movie Movie", 0.49, "vector")
    question = "Which movies have the same screenwriter as The Pianist?"
    reading = QuestionReading("q", question, (Mention("The Pianist", (43, 54), (pianist,)),
                                              Mention("movies", (6, 12), (movie_movie,))))
    assert pair(reading) is None  # one name written: nothing to compare
    bracketed = QuestionReading("q", question, (Mention("The Pianist", (43, 54), (pianist,)),
                                                Mention("movies", (6, 12), (movie_movie,), bracketed=True)))
    assert pair(bracketed) == (movie_movie, pianist)  # a bracket says it is a name


def test_a_yes_no_comparison_offers_only_whether_the_two_share_a_value(films):
    found = _comparisons(films, "were night harbor and glass river released in the same year")
    assert {kind for _, kind in found} == {"same"} and found[("release year", "same")] == "no"
    # a title's words are no cue: "After Hours" asks for no end
    assert read_question(films[1], "Was [After Hours] or Night Harbor first?").cues.isdisjoint({"after"})


def test_counts_are_compared_when_both_hold_several_values(films):
    found = _comparisons(films, "who directed more films, ann lee or bo park")
    assert found[("directed by", "count difference")] == "3" and found[("directed by", "more")] == "Ann Lee"
    # "how many more" asks for a number: only the kinds that answer with one are offered
    found = _comparisons(films, "how many more films did ann lee direct than bo park")
    assert found[("directed by", "count difference")] == "3" and ("directed by", "more") not in found
    assert {kind for _, kind in found} <= {"difference", "count difference"}


def test_a_comparative_of_values_offers_no_count_comparison(films):
    # "who is younger" asks which value is higher, not who directed more films
    found = _comparisons(films, "ann lee or bo park: who came later")
    assert found and not {kind for _, kind in found} & {"more", "fewer", "count difference"}
    found = _comparisons(films, "ann lee or bo park: who directed more, and who came later")
    assert found[("directed by", "more")] == "Ann Lee"


def test_comparisons_are_offered_only_when_a_word_compares(films):
    store, index = films
    for question, offered in (("were night harbor and glass river released in the same year", True),
                              ("which films did ann lee direct starring bo park", False)):
        reading = read_question(index, question)
        with store.reading():
            stages = {c.stage for c in enumerate_candidates(store, index.embed, reading)}
        assert ("comparison" in stages) is offered


def test_the_model_picks_a_comparison_and_its_facts_are_the_evidence(films):
    answer, run, _ = composed(films, "were night harbor and glass river released in the same year",
                              r"^do Night Harbor and Glass River have the same release year")
    assert answer.answers == ["no"] and answer.values[0]["datatype"].endswith("#boolean")
    assert {f.o for f in answer.evidence} >= {"1979", "1999"}
    assert run.trace["compose"]["stage"] == "comparison"


# -- choosing ---------------------------------------------------------------------------------
def test_the_model_picks_among_the_shortlist_and_the_pick_is_executed(films):
    answer, run, llm = composed(films, "what is the newest film directed by ann lee", r"^Ann Lee directed what; only the last")
    assert answer.answers == ["Quiet Engines"] and "ORDER BY DESC" in answer.query
    assert run.trace["compose"]["chosen"].endswith("release year")
    # each option is judged on its own, yes or no under a grammar
    options = run.trace["compose"]["options"]
    assert len(llm.calls) == len(options) > 1 and all(c["grammar"] == 'root ::= "yes" | "no"\n' for c in llm.calls)
    assert [o["model_p"] for o in options].count(1.0) == 1


def test_a_chain_one_hop_on_gains_from_the_model_only_what_it_prefers_it_by_past_a_margin(films):
    """The model's yes leans to a longer chain whatever it reaches: a step on from a shown
    chain counts as that chain's judgement until it leads by the margin, then less it."""
    from qa.compose import onward_judged

    _, _, texts = enumerated(films, "which comedy films did ann lee direct")
    chain = next(c for t, c in texts.items() if t == "Ann Lee directed what")
    onward = next(c for c in texts.values() if c.stage == "chain" and c.path.goes_on_from(chain.path))
    assert onward_judged([chain, onward], [0.35, 0.51], 0.2) == [0.35, 0.35]
    assert onward_judged([chain, onward], [0.3, 0.9], 0.2) == pytest.approx([0.3, 0.7])
    assert onward_judged([chain, onward], [0.6, 0.4], 0.2) == [0.6, 0.4]  # the model prefers the chain: as it said
    # a step on from a chain not shown, or a refinement of the chain, is judged as it is
    tied = next(c for c in texts.values() if c.ties)
    assert onward_judged([onward, tied], [0.51, 0.9], 0.2) == [0.51, 0.9]


def test_a_question_asking_for_sharers_takes_the_trip_back_as_the_model_judged_it(films):
    """"which films share a director with X" asks for the step on that comes back along
    the same relation (the director's other films, not the director): that one is not
    held to the chain it goes on from; a step on along another relation still is."""
    from qa.compose import onward_judged

    _, _, texts = enumerated(films, "which films share a director with night harbor")
    chain = texts["Night Harbor directed by what"]
    trip = texts["Night Harbor directed by what; it directed what"]
    assert trip.path.round_trip and trip.path.goes_on_from(chain.path)
    assert onward_judged([chain, trip], [0.39, 0.51], 0.2) == [0.39, 0.39]
    assert onward_judged([chain, trip], [0.39, 0.51], 0.2, sharers=True) == [0.39, 0.51]
    _, _, texts = enumerated(films, "which comedy films did ann lee direct")
    chain = texts["Ann Lee directed what"]
    onward = next(c for c in texts.values() if c.stage == "chain" and c.path.goes_on_from(chain.path))
    assert not onward.path.round_trip
    assert onward_judged([chain, onward], [0.39, 0.51], 0.2, sharers=True) == [0.39, 0.39]


def test_the_sharing_cue_words_are_read_as_features(films):
    from qa.compose import read_question

    _, index = films
    assert read_question(index, "who starred together with Ann Lee").asks_sharers
    assert read_question(index, "who co-wrote films with Ann Lee").asks_sharers
    assert read_question(index, "which films share a director with night harbor").asks_sharers
    assert not read_question(index, "who starred in films with Ann Lee").asks_sharers


def test_the_shortlist_is_ranked_by_the_encoder_against_the_question(films):
    store, index = films
    reading = read_question(index, "which films did ann lee direct")
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    scores = rank(index.embed, reading, candidates)
    shortlist = sorted(range(len(candidates)), key=lambda i: -scores[i])[:6]
    assert any(candidates[i].path.hops == 1 and candidates[i].topic.label == "Ann Lee" for i in shortlist)
    # the words of a chain the question never walks read far from it
    assert all(candidates[i].topic.label == "Ann Lee" for i in shortlist[:3])


def test_nothing_to_compose_gives_no_answer(films):
    store, index = films
    run = MethodRun(ScriptedLLM([]))
    with store.reading():
        assert compose_answer(store, index, "what is the airspeed velocity of a swallow", run, "test") is None


# -- the cascade: composing narrows a draft's answer -------------------------------------------
def _cascade(store_index, llm):
    from qa.methods.cascade import CascadeMethod

    store, index = store_index
    context = QAContext(store, llm)
    context.index = index
    return CascadeMethod(context)


def _films_of(store, names):
    from qa import Answer

    iris = [iri for iri, label in store.labels([iri for iri in _all_subjects(store)]).items() if label in names]
    return Answer(question="", method="pgmr", answers=sorted(names), answer_iris=iris, values=[None] * len(iris))


def _all_subjects(store):
    from qa.sandbox import run_sparql

    return [r["s"].value for r in run_sparql(store, "SELECT DISTINCT ?s WHERE { ?s ?p ?o }").rows]


def _refined(films, question, yes_to):
    """The cascade's narrowing of a draft that answered all of Ann Lee's films, with a model
    that says yes to the option matching ``yes_to``: (the answer or None, the run)."""
    store, _ = films
    draft = _films_of(store, {"Night Harbor", "Paper Lanterns", "Glass River", "Quiet Engines"})
    cascade = _cascade(films, ScriptedLLM([judge(yes_to)] * 8))  # 6 seats, and 2 for the options refinements narrow
    run = MethodRun(cascade.context.llm)
    with store.reading():
        return cascade.refined(question, draft, run), run


def test_the_cascade_takes_the_composed_answer_that_narrows_the_draft_s(films):
    refined, run = _refined(films, "which comedy films did ann lee direct",
                            r"^Ann Lee directed what; where the answer has genre Comedy$")
    assert refined is not None and set(refined.answers) == {"Night Harbor", "Glass River"}
    assert run.trace["cascade"]["refined"] is True


def test_the_draft_stands_when_nothing_could_narrow_it(films):
    store, _ = films
    draft = _films_of(store, {"Night Harbor", "Paper Lanterns", "Glass River", "Quiet Engines"})
    # a model that judges the plain chain best: the constraint on the genre the question
    # names inherits that judgement, and the encoder reads "comedy" (the draft left it out)
    refined, _ = _refined(films, "which comedy films did ann lee direct", r"^Ann Lee directed what$")
    assert refined is not None and set(refined.answers) == {"Night Harbor", "Glass River"}
    # a plain chain question composes nothing, and asks the model nothing
    quiet = _cascade(films, ScriptedLLM([]))
    with store.reading():
        assert quiet.refined("which films did ann lee direct", draft, MethodRun(quiet.context.llm)) is None


def test_the_model_is_not_asked_where_no_candidate_could_narrow_the_draft(films):
    # "comedy" is a second mention, so a constraint could be composed; but the draft answered
    # one film, and no refinement of fewer answers, negation, second role or comparison is
    # among the candidates: nothing composed could be taken, and nothing is judged
    store, _ = films
    draft = _films_of(store, {"Night Harbor"})
    quiet = _cascade(films, ScriptedLLM([]))  # any call to the model fails the test
    run = MethodRun(quiet.context.llm)
    with store.reading():
        assert quiet.refined("which comedy did ann lee direct first", draft, run) is None
    assert run.trace["compose"]["judged"] is False and run.trace["compose"]["candidates"] > 0


def test_a_name_the_draft_wrote_short_leaves_the_question_s_other_name_its_topic(films):
    # the draft wrote "[ENT: Harbor]" for *Night Harbor* and left Ann Lee a variable: refused
    # for that name, composing looks for it alone, and sets Ann Lee aside (never an answer);
    # the model says no to all that is about Night Harbor, so the pick composed from the
    # whole question, which it says yes to, is taken
    store, _ = films
    draft = "SELECT DISTINCT ?f WHERE { ?f [REL: made after] [ENT: Harbor] }"
    picks = judge(r"^Ann Lee directed what$")
    reader = lambda messages: picks(messages) if "\nQuery: " in messages[-1]["content"] else "no"
    cascade = _cascade(films, ScriptedLLM([draft] + [reader] * 30))
    with store.reading():
        answer = cascade.answer("which films did ann lee make after harbor")
    assert answer.trace["pgmr"]["resolve"] and answer.trace["cascade"]["first_refusal"] == "not_in_store"
    about = answer.trace["compose_about"]
    assert [m["text"] for m in about["reading"]["mentions"]] == ["harbor"]
    assert about["reading"]["set_aside"] and all("Ann Lee" not in o["answers"] for o in about["options"])
    assert {"Paper Lanterns", "Glass River", "Quiet Engines"} <= set(answer.answers)


def test_a_name_the_store_lacks_is_refused_before_anything_is_composed(films):
    store, index = films
    cascade = _cascade(films, ScriptedLLM([]))  # any call to the model fails the test
    for question in ("Which films did [Zorblax Quintana] direct?", "Which films did Zorblax Quintana direct?"):
        answer = cascade.answer(question)
        assert answer.refused and answer.refusal.reason == "not_in_store", question
        assert "compose" not in answer.trace


def test_the_cascade_takes_a_picked_conjunction_the_draft_did_not_hold(films):
    # the draft answered one role (Ann Lee's films); two roles at once stand on their own
    refined, run = _refined(films, "which films did bo park both direct and act in", r"and also")
    assert refined is not None and refined.answers == ["Salt Road"]
    assert run.trace["compose"]["stage"] == "conjunction" and run.trace["cascade"]["refined"] is True


def test_the_question_is_read_once_by_the_cascade_its_draft_and_its_composing(films, monkeypatch):
    # pgmr's draft answers one role; the cascade composes (two roles at once) and pgmr
    # checks the names it drafted: every step reads the question from the one reading
    import qa.compose

    store, _ = films
    reads = []
    real = qa.compose.read_question
    monkeypatch.setattr(qa.compose, "read_question", lambda index, q, **kw: reads.append(q) or real(index, q, **kw))
    draft = "SELECT DISTINCT ?f WHERE { ?f [REL: directed by] [ENT: bo park] }"
    picks = judge(r"and also")
    # the draft's paths are read by the model too: it marks the films Bo Park directed
    reader = lambda messages: picks(messages) if "\nQuery: " in messages[-1]["content"] else "{Salt Road}"
    cascade = _cascade(films, ScriptedLLM([draft] + [reader] * 8))
    answer = cascade.answer("which films did bo park both direct and act in")
    assert answer.answers == ["Salt Road"] and answer.trace["cascade"]["refined"] is True
    assert reads == ["which films did bo park both direct and act in"]
    # the reading is the question's, not the context's: the next question is read afresh
    assert cascade.context.read("which films did ann lee direct").text == "which films did ann lee direct"
    assert cascade.context._readings == {"which films did ann lee direct": cascade.context.read("which films did ann lee direct")}
    with cascade.context.asking():
        cascade.context.read("which films did ann lee direct")
    assert cascade.context._readings == {}


def test_a_refused_draft_s_relations_vote_for_the_candidates_that_walk_them(films):
    from qa.compose import relations_of

    store, index = films
    reading, candidates, _ = enumerated(films, "what kind of drama is glass river")
    genre = next(r for c in candidates for r in relations_of(c) if r.endswith("has_genre"))
    plain = rank(index.embed, reading, candidates)
    voted = rank(index.embed, reading, candidates, votes=frozenset({genre}))
    walks = [genre in relations_of(c) for c in candidates]
    assert any(walks) and not all(walks)
    assert [round(v - p, 6) for v, p in zip(voted, plain)] == [ComposeOptions().vote_weight if w else 0.0
                                                               for w in walks]


def test_a_draft_refused_for_want_of_rows_votes_with_its_relations_where_the_cascade_composes(films):
    # "what kind of cancer did X die of", drafted with the cause of death and "Cancer" as a
    # second name: every name and relation resolved, and nothing returned rows; the relation
    # the model wrote is its vote among the composed candidates
    store, _ = films
    draft = ("SELECT DISTINCT ?answer WHERE { [ENT: Glass River] [REL: has genre] [ENT: Drama] . "
             "?answer [REL: has genre] ?answer }")
    cascade = _cascade(films, ScriptedLLM([draft] + [lambda messages: "yes"] * 30))
    with store.reading():
        answer = cascade.answer("what kind of drama is glass river")
    assert answer.trace["cascade"]["first_refusal"] == "no_rows"
    assert [v.rsplit("/", 1)[-1] for v in answer.trace["compose"]["votes"]] == ["has_genre"]
    # a name the store lacks casts no vote: nothing is composed after it
    refused = _cascade(films, ScriptedLLM(["SELECT DISTINCT ?g WHERE { [ENT: Zorblax Quintana] [REL: has genre] ?g }"]))
    with store.reading():
        lacking = refused.answer("what kind of drama is zorblax quintana")
    assert lacking.refused and lacking.refusal.reason == "not_in_store" and not lacking.draft_relations


def test_a_method_that_builds_queries_falls_back_on_the_composed_query_graph(films):
    """The step the methods that build queries share (pgmr, memq, queryagent): a refusal of
    the method's own query is followed by the composed pick; a name the store lacks is not,
    nor is a method run inside another's answer (the cascade composes around it)."""
    from qa import Answer, Refusal
    from qa.methods._base import QAMethod

    class Refusing(QAMethod):
        name, description, composes = "refusing", "refuses with the reason it is given", True

        def __init__(self, context, reason):
            super().__init__(context)
            self.reason = reason

        def _answer(self, question, run, *, allow_parametric):
            return Answer(question=question, method=self.name, refusal=Refusal(self.reason, "its own query"))

    store, _ = films
    question = "which films did ann lee direct"

    def method(reason):
        return Refusing(QAContext(store=store, llm=ScriptedLLM([judge(r"^Ann Lee directed what$")] * 8)), reason)

    composed = method("no_rows").answer(question)
    assert set(composed.answers) == {"Night Harbor", "Paper Lanterns", "Glass River", "Quiet Engines"}
    assert composed.trace["composed"]["after"] == "no_rows" and composed.method == "refusing"
    assert method("not_in_store").answer(question).refused
    assert method("no_rows").answer(question, in_shape=False).refused


# -- the shapes take composed comparisons and orderings ---------------------------------------
def _in_shape(store_index, question, yes_to):
    """``question`` answered in its shape with a model that says yes to the composed option
    matching ``yes_to``; the method's own chain must not be needed."""
    from qa.shapes import answer_in_shape

    store, index = store_index
    run = MethodRun(ScriptedLLM([judge(yes_to)] * 11))  # a shape's stages take up to three more seats, refinements two

    def chain(*_):
        raise AssertionError("the composed answer should have been taken")

    with store.reading():
        return answer_in_shape(store, index, question, run, "test", chain), run


def test_an_unsure_composed_ordering_answers_where_nothing_orders_the_chain(films):
    # the model doubts every option (p 0.4): the ordering is not taken at once; the
    # method's chain then finds nothing to order, and the first of Ann Lee's comedies the
    # store composed answers "the oldest", not a refusal; an ordering the model denies
    # (p 0.1) is not fallen back on
    import math

    from qa import Answer, Refusal
    from qa.llm import Completion, TokenLogprobs
    from qa.shapes import answer_in_shape

    store, index = films

    def doubt(p):
        yes, no = math.log(p), math.log(1 - p)
        return Completion("no", 10, 1, 0.01, [TokenLogprobs("no", no, {"yes": yes, "no": no}, {})], "stop")

    def chain(text=None):
        return Answer(question=text or "", method="test", refusal=Refusal("no_rows", "no query returned rows"))

    question = "What is the oldest comedy Ann Lee directed?"
    doubting, denying = MethodRun(ScriptedLLM([doubt(0.4)] * 11)), MethodRun(ScriptedLLM([doubt(0.1)] * 11))
    with store.reading():
        unsure = answer_in_shape(store, index, question, doubting, "test", chain)
        denied = answer_in_shape(store, index, question, denying, "test", chain)
    assert unsure.answers == ["Night Harbor"] and doubting.trace["shape"]["taken"] is False
    assert doubting.trace["compose"]["stage"] == "constrained superlative"
    assert denied.refused and "fallback" not in denying.trace["shape"]


# a player's teams through roster nodes that hold when each began and ended, and nothing else
SPANS = """</en/ida_vale> <name> "Ida Vale" .
</en/ida_vale> </sports/pro_athlete/teams> _:s1 .
_:s1 </sports/sports_team_roster/team> </en/north_pier> .
_:s1 </sports/sports_team_roster/from> "2001"^^<http://www.w3.org/2001/XMLSchema#gYear> .
_:s1 </sports/sports_team_roster/to> "2006"^^<http://www.w3.org/2001/XMLSchema#gYear> .
</en/ida_vale> </sports/pro_athlete/teams> _:s2 .
_:s2 </sports/sports_team_roster/team> </en/south_mill> .
_:s2 </sports/sports_team_roster/from> "2007"^^<http://www.w3.org/2001/XMLSchema#gYear> .
</en/north_pier> <name> "North Pier Herons" .
</en/south_mill> <name> "South Mill Otters" .
"""


def test_a_year_no_answer_holds_is_composed_on_the_node_that_holds_it(tmp_path_factory):
    # the chain answers both teams, and no team holds a date: the word rules drop "in
    # 2012"; the roster node holds the span, and the composed constraint answers
    from qa import Answer
    from qa.shapes import answer_in_shape

    store, index = indexed_store(tmp_path_factory, "spans", "freebase", SPANS)
    teams = {"http://rdf.freebase.com/ns/en.north_pier": "North Pier Herons",
             "http://rdf.freebase.com/ns/en.south_mill": "South Mill Otters"}

    def chain(text=None):
        return Answer(question=text or "", method="test", answers=list(teams.values()), answer_iris=list(teams),
                      values=[None, None], query="SELECT ?answer WHERE { }")

    run = MethodRun(ScriptedLLM([judge(r"team of it; where the link held in 2012")] * 8))
    with store, store.reading():
        answer = answer_in_shape(store, index, "who did ida vale play for in 2012", run, "test", chain)
    assert answer.answers == ["South Mill Otters"] and run.trace["compose"]["stage"] == "time span"
    assert "dropped" in run.trace["shape"]["fallback"]


def test_a_count_that_compares_two_named_things_is_a_composed_comparison(films):
    answer, run = _in_shape(films, "how many more films did ann lee direct than bo park", r"^how many more")
    assert answer.answers == ["3"] and run.trace["shape"]["kind"] == "count"
    assert run.trace["compose"]["stage"] == "comparison"


def test_a_superlative_inside_a_constraint_is_composed_from_both_stages(films):
    answer, run = _in_shape(films, "which of ann lee's comedies is the newest",
                            r"where the answer has genre Comedy; only the last")
    assert answer.answers == ["Glass River"] and run.trace["compose"]["stage"] == "constrained superlative"
    assert "ORDER BY DESC" in answer.query and "Comedy" in answer.query


def test_a_refinement_is_judged_at_least_as_well_as_its_own_chain_and_the_encoder_decides(films):
    """The model reads "X's films not comedies" as "X's films" and says yes to the plainer:
    a refinement takes its shown core chain's judgement, so the encoder's reading of the
    refinement's words decides between the two."""
    from dataclasses import replace

    from qa.compose._candidates import Ordering
    from qa.compose._choose import core_of, inherited
    _, index = films
    reading, candidates, by_text = enumerated(films, "which films did ann lee direct that are not comedies")
    chain = by_text["Ann Lee directed what"]
    denied = next(c for c in candidates if c.stage == "negation" and c.topic.label == "Ann Lee" and c.path.hops == 1)
    assert verbalize(core_of(denied)) == verbalize(chain) and core_of(chain) is None
    assert inherited([chain, denied], [0.9, 0.4]) == [0.9, 0.9]
    # a refinement judged better keeps its own; without its chain shown it keeps its own too
    assert inherited([chain, denied], [0.3, 0.8]) == [0.3, 0.8] and inherited([denied], [0.4]) == [0.4]
    # only the chain the model judges best passes its judgement on
    genres = by_text["Ann Lee directed what; it has genre what"]
    assert inherited([genres, chain, denied], [0.7, 0.9, 0.4]) == [0.7, 0.9, 0.9]
    assert inherited([genres, chain, denied], [0.95, 0.9, 0.4]) == [0.95, 0.9, 0.4]
    # siblings are lifted together: the model's reading of "not" over "has" stands
    tied = next(c for c in candidates if c.stage == "entity constraint" and c.topic.label == "Ann Lee"
                and c.path.hops == 1 and c.ties[0].entity.label == "Comedy")
    assert [round(p, 2) for p in inherited([chain, denied, tied], [0.8, 0.55, 0.33])] == [0.8, 0.8, 0.58]
    # a count aggregates the chain and refines nothing; "the first of" its own values orders it
    assert core_of(replace(chain, count=True)) is None
    assert verbalize(core_of(replace(chain, ordering=Ordering("?answer", "", "value", True)))) == verbalize(chain)
    # the question denies: the negation has the cue's tie-break, the chain not; both the
    # negation and the tie use the genre the question names ("comedies"), the chain not
    from qa.compose._choose import rank
    plainly = rank(index.embed, reading, [chain, denied, tied], ComposeOptions(cue_weight=0.0))
    cued = rank(index.embed, reading, [chain, denied, tied])
    assert [round(b - a, 4) for a, b in zip(plainly, cued)] == [0.0, 0.2, 0.1]
    # "than" alone compares: negations are offered, but a denial is not read
    comparing = read_question(index, "how many more films did ann lee direct than bo park")
    assert comparing.negates and not comparing.denies
    assert read_question(index, "which films did ann lee direct other than the comedies").denies
    # a model that says yes only to the plain chain: the refinement the encoder ranks above
    # it is chosen, and without inheriting, the chain is
    from qa.compose._choose import choose
    for inherit, stage in ((True, "negation"), (False, "chain")):
        run = MethodRun(ScriptedLLM([judge(r"^Ann Lee directed what$")] * 2))
        picked = choose(run, reading, [chain, denied], [0.90, 1.10], ComposeOptions(inherit_core=inherit))
        assert picked.chosen.stage == stage and sorted(picked.model_p) == [0.0, 1.0]
        # the pick is as sure as the choice weighed it: the negation, as its chain
        assert picked.chosen_p == 1.0


def test_a_comparison_on_the_best_chain_s_relation_is_lifted_with_it(films):
    """"A versus B, which came out later": the model says yes to "the release year of A"
    above the comparison; the comparison on that relation is lifted to it."""
    from qa.compose._choose import inherited, refines
    store, index = films
    reading = read_question(index, "night harbor versus glass river, which came out later")
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    later = next(c for c in candidates if c.stage == "comparison" and c.kind == "later")
    year = next(c for c in candidates if c.stage == "chain" and c.hops == 1
                and c.path.steps[0][0] == later.relation and c.topic.iri == later.first.entity.iri)
    other = next(c for c in candidates if c.stage == "chain" and c.hops == 1 and c.path.steps[0][0] != later.relation)
    assert refines(later, year) and not refines(later, other)
    assert inherited([year, later], [0.9, 0.7]) == [0.9, 0.9]
    assert inherited([other, year, later], [0.95, 0.9, 0.7]) == [0.95, 0.9, 0.7]


def test_a_question_asking_for_a_value_falls_through_to_an_option_that_answers_values(films):
    """"In which year did Ann Lee first direct a film": a model that says yes to "Ann Lee
    directed what" (films) does not get it picked; the first of the release years is, and
    a question asking which films is not held to values."""
    from qa.compose._choose import choose, has_form
    store, index = films
    reading = read_question(index, "in which year did ann lee first direct a film")
    assert reading.form == "value" and read_question(index, "which film did ann lee direct first").form == "entities"
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    chain = next(c for c in candidates if verbalize(c) == "Ann Lee directed what")
    first = next(c for c in candidates if c.stage == "superlative value" and c.topic.label == "Ann Lee")
    assert has_form(first, "value") and not has_form(chain, "value") and first.answers == ("1979",)
    # a store that names days and dated events as entities ("April 23", "1983 World Series")
    from dataclasses import replace
    assert has_form(replace(chain, answers=("April 23",)), "value")
    assert not has_form(replace(chain, answers=("April 23", "Assassination")), "value")
    for question, stage in ((reading, "superlative value"),
                            (read_question(index, "which film did ann lee direct first"), "chain")):
        run = MethodRun(ScriptedLLM([judge(r"^Ann Lee directed what$")] * 2))
        picked = choose(run, question, [chain, first], [1.10, 1.00])
        assert picked.chosen.stage == stage
    assert run.trace.get("compose", {}).get("fell_through") is None
    # among the chains of the form asked, the best passes its judgement on: the chain of
    # the years, not of the films, lifts the first of the years
    from qa.compose._choose import inherited
    years = next(c for c in candidates if verbalize(c) == "Ann Lee directed what; what is the release year of it")
    shown = [chain, years, first]
    fitting = [n for n, c in enumerate(shown) if has_form(c, "value")]
    assert fitting == [1, 2] and inherited(shown, [0.9, 0.7, 0.6], fitting) == [0.9, 0.7, 0.7]
    assert inherited(shown, [0.9, 0.7, 0.6]) == [0.9, 0.7, 0.6]



def test_a_question_asking_how_many_falls_through_to_an_option_that_answers_a_number(films):
    """"How many more films did Ann Lee direct than Bo Park": "which of the two directed
    more" answers a name; the count's difference answers the question."""
    from qa.compose._choose import choose, has_form
    store, index = films
    reading = read_question(index, "how many more films did ann lee direct than bo park")
    assert reading.form == "number"
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
        # a question asking how many is offered only the comparisons that answer a number;
        # one asking which is offered the others
        which = enumerate_candidates(store, index.embed, read_question(index, "which of ann lee and bo park directed more films"))
    assert not [c for c in candidates if c.stage == "comparison" and c.kind == "more"]
    more = next(c for c in which if c.stage == "comparison" and c.kind == "more")
    apart = next(c for c in candidates if c.stage == "comparison" and c.kind == "count difference")
    assert has_form(apart, "number") and not has_form(more, "number") and has_form(more, "entities")
    run = MethodRun(ScriptedLLM([judge(r"has more")] * 4))
    picked = choose(run, reading, [more, apart], [1.10, 1.00])
    assert picked.chosen is apart and run.trace["compose"]["fell_through"] == "the question asks for a number"
    # the count of Ann Lee's films is what the count difference refines: it is judged as that count
    from qa.compose._choose import inherited
    count = next(c for c in candidates if c.count and not c.ties and c.hops == 1 and c.topic.label == "Ann Lee"
                 and c.path.steps[0][0] == apart.relation)
    assert inherited([count, apart], [0.6, 0.5], [0, 1]) == [0.6, 0.6]


def test_an_option_using_a_name_the_question_writes_is_judged_as_the_plainer_one_it_narrows(films):
    """"The newest of the Comedy films Ann Lee directed": the model judges "the newest of
    Ann Lee's films" (which leaves "Comedy" unused) above the option tied to Comedy; that
    option inherits the judgement of the one it narrows by the tie alone, and the feature for
    a written name used lets the encoder decide between the two."""
    from qa.compose._choose import name_ties, named_dominance, names_used

    store, index = films
    from dataclasses import replace

    reading = read_question(index, "Which is the newest of the Comedy films Ann Lee directed?")
    comedy = next(m.best.iri for m in reading.mentions if m.text == "Comedy")
    assert comedy in reading.written_names
    # a name in lower case, or its plural, names it too; the first word of a question does not
    assert comedy in read_question(index, "which is the newest of the comedies ann lee directed").written_names
    assert comedy not in read_question(index, "Comedy films by Ann Lee: which is the newest?").written_names
    lower = replace(reading, mentions=tuple(m for m in reading.mentions if m.text != "Comedy"))
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    by_text = {verbalize(c): c for c in candidates}
    plain = by_text["Ann Lee directed what; only the last (latest, highest) by the answer's release year"]
    tied = by_text["Ann Lee directed what; where the answer has genre Comedy; only the last (latest, highest) "
                   "by the answer's release year"]
    assert name_ties(tied, reading.written_names) and not name_ties(plain, reading.written_names)
    assert named_dominance([plain, tied], [0.9, 0.2], reading.written_names) == [0.9, 0.9]
    assert named_dominance([plain, tied], [0.9, 0.2], lower.written_names) == [0.9, 0.2]
    with_name, without = rank(index.embed, reading, [plain, tied]), rank(index.embed, lower, [plain, tied])
    assert with_name[1] - with_name[0] > without[1] - without[0]
    # and judged alike, the option that leaves the name unused never ends above the one
    # that uses it, however the encoder reads the two
    assert names_used([plain, tied], [2.5, 2.4], reading.written_names) == [2.4 - 1e-3, 2.4]
    assert names_used([plain, tied], [2.5, 2.4], lower.written_names) == [2.5, 2.4]


def test_an_option_that_uses_fewer_of_the_written_names_ends_below_one_that_uses_them_all(films):
    """"How many of Ann Lee's films did Bo Park star in?": Bo Park's films use one of the two
    names, Ann Lee's films with Bo Park in them both. The model may judge the wider count
    likelier (it reads a count as any count); unless it says no to the narrower option,
    that one ends above, whichever topic each starts from."""
    from qa.compose._choose import more_names_used, names_in

    reading, _, by_text = enumerated(films, "How many of Ann Lee's films did Bo Park star in?")
    bo_park = by_text["how many: what starred actors Bo Park"]
    both = by_text["how many: Ann Lee directed what; where the answer starred actors Bo Park"]
    written = reading.written_mentions
    assert names_in(bo_park, written) < names_in(both, written)
    assert more_names_used([bo_park, both], [2.5, 2.4], [0.8, 0.6], written) == [2.4 - 1e-3, 2.4]
    # a narrower option the model says no to places nothing
    assert more_names_used([bo_park, both], [2.5, 2.4], [0.8, 0.3], written) == [2.5, 2.4]


def test_a_seated_refinement_of_a_topic_with_no_chain_shown_brings_the_option_it_narrows(films):
    """"How many of Darrell Roodt's films are in Zulu?", unbracketed: the encoder seated Roodt's
    films in Zulu and five chains of the film *Zulu*, but not Roodt's films, so the
    refinement was judged alone and lost to the cast of *Zulu*. The option a seated
    refinement narrows gets a seat where no chain of its topic is shown; where one is, none
    ("the oldest film in English Roger Vadim directed": the seated chain of his films' years,
    judged above his films, took the judgement his films' refinements inherit)."""
    from qa.compose._choose import is_plain_chain, plainer_seats

    reading, candidates, by_text = enumerated(films, "How many of Ann Lee's films did Bo Park star in?")
    both = by_text["how many: Ann Lee directed what; where the answer starred actors Bo Park"]
    plain = by_text["how many: Ann Lee directed what"]
    lee = both.topic.iri
    elsewhere = [n for n, c in enumerate(candidates) if c.topic.iri != lee and is_plain_chain(c)]
    lee_chains = [n for n, c in enumerate(candidates) if c.topic.iri == lee and is_plain_chain(c) and c is not plain]
    assert elsewhere and lee_chains
    shortlist = [candidates.index(both)] + elsewhere[:3]
    assert plainer_seats(candidates, shortlist, reading.written_names) == [candidates.index(plain)]
    # a seated plainer option takes no second seat; a chain of the topic shown adds none
    assert plainer_seats(candidates, shortlist + [candidates.index(plain)], reading.written_names) == []
    assert plainer_seats(candidates, shortlist + lee_chains[:1], reading.written_names) == []
    assert plainer_seats(candidates, elsewhere[:3], reading.written_names) == []


def test_any_entity_that_bears_a_written_name_uses_it(films):
    """"How many of [Kate Nelligan]'s films are horror movies?": "horror" is a tag and a
    genre; her films with the tag and her films of the genre use the same two names, and
    neither is placed below the other for it (issue 41's dev-test counted the tag's one
    film where the genre holds two)."""
    from dataclasses import replace

    from qa.compose._choose import more_names_used, names_in

    reading, _, by_text = enumerated(films, "which comedy films did ann lee direct")
    genre = next(c for c in by_text.values() if c.stage == "entity constraint" and c.path.hops == 1
                 and c.topic.label == "Ann Lee" and c.ties[0].entity.label == "Comedy")
    tie = genre.ties[0]
    tag = replace(genre, ties=(replace(tie, entity=replace(tie.entity, iri="urn:tag:comedy")),))
    written = (frozenset({genre.topic.iri}), frozenset({tie.entity.iri, "urn:tag:comedy"}))
    assert names_in(genre, written) == names_in(tag, written) == {0, 1}
    assert more_names_used([tag, genre], [2.5, 2.4], [0.6, 0.6], written) == [2.5, 2.4]
    # the reading counts a mention's entities that bear its name, not those near in meaning
    assert all(iris for iris in reading.written_mentions)
    # and a word inside a longer name is no name of its own ("Romantic" of "Born Romantic")
    titled = read_question(films[1], "which films like Night Harbor did ann lee direct")
    outer = next(m for m in titled.mentions if m.best.label == "Night Harbor")
    inner = replace(outer, text="Harbor", span=(outer.span[1] - 6, outer.span[1]),
                    entities=(replace(outer.best, iri="urn:tag:harbor", label="harbor"),))
    nested = replace(titled, mentions=titled.mentions + (inner,))
    assert outer.best.iri in nested.written_names and "urn:tag:harbor" not in nested.written_names


def test_a_pick_falls_through_to_the_stage_the_shape_asks_for(films):
    """"Which film did Ann Lee direct first": a shape read as a superlative asks for an
    ordering; a model that says yes only to "Ann Lee directed what" gets the best ordering
    shown, lifted by that judgement, and without the shape's stages the chain stands."""
    from qa.compose._choose import choose

    store, index = films
    reading = read_question(index, "which film did ann lee direct first")
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    chain = next(c for c in candidates if verbalize(c) == "Ann Lee directed what")
    first = next(c for c in candidates if c.stage == "superlative" and c.topic.label == "Ann Lee"
                 and c.ordering.ascending and c.hops == 1)
    stages = frozenset({"superlative", "constrained superlative", "superlative value"})
    for asked, stage in ((stages, "superlative"), (None, "chain")):
        run = MethodRun(ScriptedLLM([judge(r"^Ann Lee directed what$")] * 2))
        picked = choose(run, reading, [chain, first], [1.10, 1.00], ComposeOptions(stages=asked))
        assert picked.chosen.stage == stage and picked.chosen_p == 1.0  # the ordering as its chain is judged
        assert ("shape asks" in (run.trace["compose"]["fell_through"] or "")) is (asked is not None)
    assert first.answers == ("Night Harbor",)


def test_the_kinds_answering_in_the_form_asked_are_seated_first(films):
    """"How many years apart …": the difference gets a seat in the shortlist however the
    encoder ranks it, since the question asks for a number."""
    from qa.compose._choose import choose

    store, index = films
    reading = read_question(index, "how many years apart were Night Harbor and Salt Road released")
    assert reading.form == "number"
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    scores = rank(index.embed, reading, candidates)
    apart = [n for n, c in enumerate(candidates) if getattr(c, "kind", "") == "difference"]
    assert apart and len({(c.stage, c.hops, getattr(c, "kind", "")) for c in candidates}) > 4
    for n in apart:
        scores[n] = min(scores) - 1.0
    picked = choose(MethodRun(ScriptedLLM(["yes"] * 6)), reading, candidates, scores, ComposeOptions(shortlist=4))
    # four seats, and up to two for the options the seated refinements narrow
    assert 4 <= len(picked.options) <= 6 and any(getattr(c, "kind", "") == "difference" for c in picked.options)
    # a question asking which things gets no such seat
    which = read_question(index, "which films did ann lee direct")
    assert which.form == "entities"
    plain = choose(MethodRun(ScriptedLLM(["yes"] * 6)), which, candidates, scores, ComposeOptions(shortlist=4))
    assert not any(getattr(c, "kind", "") == "difference" for c in plain.options)


def test_an_ordering_s_own_values_do_not_answer_a_question_asking_for_a_thing(films):
    """"Which film did Ann Lee direct first": the shape asks for an ordering, and of the
    orderings the one answering a film is taken over the first of the years."""
    from qa.compose._choose import choose

    store, index = films
    reading = read_question(index, "which film did ann lee direct first")
    with store.reading():
        candidates = enumerate_candidates(store, index.embed, reading)
    film = next(c for c in candidates if c.stage == "superlative" and c.topic.label == "Ann Lee"
                and c.ordering.ascending and c.hops == 1)
    year = next(c for c in candidates if c.stage == "superlative value" and c.topic.label == "Ann Lee")
    stages = frozenset({"superlative", "superlative value"})
    picked = choose(MethodRun(ScriptedLLM(["yes"] * 2)), reading, [year, film], [1.2, 1.0],
                    ComposeOptions(stages=stages))
    assert picked.chosen is film and year.literal and not film.literal


def test_a_comparing_question_asking_for_a_number_prefers_the_difference(films):
    """"How far apart in years …" asks for a value and "how many years apart" for a
    number: the difference answers both, and has the cue tie-break over the two years."""
    from qa.compose._choose import has_form

    store, index = films
    for question, form in (("how far apart in years are Night Harbor and Salt Road", "value"),
                           ("how many years apart were Night Harbor and Salt Road released", "number")):
        reading = read_question(index, question)
        assert reading.form == form and reading.compares
        with store.reading():
            candidates = enumerate_candidates(store, index.embed, reading)
        apart = next(c for c in candidates if getattr(c, "kind", "") == "difference")
        year = next(c for c in candidates if verbalize(c) == "what is the release year of Night Harbor")
        assert has_form(apart, form) and apart.answers == ("19",)
        plainly = rank(index.embed, reading, [apart, year], ComposeOptions(cue_weight=0.0))
        cued = rank(index.embed, reading, [apart, year])
        assert [round(b - a, 4) for a, b in zip(plainly, cued)] == [0.1, 0.0]


def test_a_hop_onto_mediators_is_walked_on_though_its_words_score_low(rosters):
    # the beam keeps one prefix, the place of birth; the teams hop lands on roster (CVT)
    # nodes, which answer nothing themselves: it is walked on, to the teams they join
    from qa.steps._paths import relation_paths

    store, _ = rosters
    birth_first = lambda paths: [1.0 if "birth" in p.labels[-1] else 0.0 for p in paths]
    with store.reading():
        paths = relation_paths(store, "Hank Moss", "http://rdf.freebase.com/ns/en.hank_moss", birth_first,
                               max_hops=2, beam=1, timeout_s=5.0)
    assert ("sports pro athlete teams", "sports sports team roster team") in {p.labels for p in paths}


def test_every_method_s_list_named_by_years_is_put_in_the_order_the_question_asks(films):
    # the finishing every method's answer passes (QAMethod.answer): a list whose members are
    # each named by one year comes last first for "last", and as it was without an ordering word
    from qa import Answer
    from qa.methods._base import QAMethod

    class Listing(QAMethod):
        name, description, index_kinds = "listing", "answers three finals in the order the store gave", ("entities",)

        def _answer(self, question, run, *, allow_parametric):
            return Answer(question=question, method=self.name, answer_iris=["urn:f89", "urn:f04", "urn:f90"],
                          answers=["1989 Harbor Finals", "2004 Harbor Finals", "1990 Harbor Finals"])

    store, index = films
    context = QAContext(store, ScriptedLLM([]))
    context.index = index
    last = Listing(context).answer("when did ann lee last win the finals")
    assert last.answers == ["2004 Harbor Finals", "1990 Harbor Finals", "1989 Harbor Finals"]
    assert last.answer_iris[0] == "urn:f04" and last.trace["order"]["ascending"] is False
    plain = Listing(context).answer("when did ann lee win the finals")
    assert plain.answers == ["1989 Harbor Finals", "2004 Harbor Finals", "1990 Harbor Finals"]


def test_pgmr_runs_a_draft_asking_two_roles_of_one_name_as_written(films):
    # "directed and starred in": the name stands in two patterns; each store path from it
    # says one role (Glass River and Salt Road for "starred"), so the draft runs as written
    from qa.methods import make_method

    store, index = films
    draft = ("SELECT DISTINCT ?f WHERE { ?f [REL: directed by] [ENT: Bo Park] . "
             "?f [REL: starred actors] [ENT: Bo Park] }")
    context = QAContext(store, ScriptedLLM([draft]))
    context.index = index
    pgmr = make_method("pgmr", context, read_answers=False)
    with store.reading():
        answer = pgmr.answer("which films did [Bo Park] both direct and star in", in_shape=False)
    assert answer.answers == ["Salt Road"] and "ground" not in answer.trace
    # one role: the paths from the name still ground the draft
    context = QAContext(store, ScriptedLLM(["SELECT DISTINCT ?f WHERE { ?f [REL: starred actors] [ENT: Bo Park] }"]))
    context.index = index
    pgmr = make_method("pgmr", context, read_answers=False)
    with store.reading():
        answer = pgmr.answer("which films did [Bo Park] star in", in_shape=False)
    assert sorted(answer.answers) == ["Glass River", "Salt Road"] and "ground" in answer.trace
    # the same draft for a question that joins no two roles conflated a chain's two hops
    # ("who directed the films starring X"): grounded as any chain, not run as written
    context = QAContext(store, ScriptedLLM([draft]))
    context.index = index
    pgmr = make_method("pgmr", context, read_answers=False)
    with store.reading():
        answer = pgmr.answer("who directed the films starring [Bo Park]", in_shape=False)
    # the directors of his films but himself (the question's own entity is never the answer)
    assert "ground" in answer.trace and answer.answers == ["Ann Lee"]


def test_a_two_roles_draft_grounded_as_a_chain_says_neither_end(films, monkeypatch):
    """Drafted as the films X both directed and starred in, "who directed the films starring
    X" wrote its two hops in no order: the draft's first and last relations do not pull the
    paths (the question's words decide which hop is on the answer); a chain's draft still does."""
    from qa.methods import make_method
    from qa.steps._path_grounding import PathGrounder

    drafts = []
    monkeypatch.setattr(PathGrounder, "ground", lambda self, question, anchor, draft, run, **_: drafts.append(draft))
    store, index = films
    for text in ("SELECT DISTINCT ?f WHERE { ?f [REL: directed by] [ENT: Bo Park] . ?f [REL: starred actors] [ENT: Bo Park] }",
                 "SELECT DISTINCT ?d WHERE { ?f [REL: starred actors] [ENT: Bo Park] . ?f [REL: directed by] ?d }"):
        context = QAContext(store, ScriptedLLM([text]))
        context.index = index
        with store.reading():
            make_method("pgmr", context, read_answers=False).answer("who directed the films starring [Bo Park]",
                                                                     in_shape=False)
    assert drafts[0].ends == (None, None) and drafts[0].words == ("directed by", "starred actors")
    assert drafts[1].ends == ("starred actors", "directed by")


def test_a_name_followed_by_its_kind_as_the_question_writes_it_resolves_to_the_label(films):
    from qa.steps._resolution import entity_choices, kind_after

    store, index = films
    asked = " which comedy genre films did ann lee direct "
    assert kind_after("Comedy", "Comedy genre", asked) == "genre"
    assert kind_after("Comedy", "Comedy genre", " which comedy films did ann lee direct ") is None  # not written so
    assert kind_after("Comedy", "Comedy Zorblax genre", asked) is None  # two words more: another name
    with store.reading():
        found = entity_choices(index, ["Comedy genre", "Comedy Zorblax"], 3,
                               question="which Comedy-genre films did Ann Lee direct? Comedy Zorblax")
    assert found["Comedy genre"][0].label == "Comedy" and found["Comedy genre"][0].score == 1.0
    # a word the store names no relation like is part of another name, which it lacks
    assert found["Comedy Zorblax"][0].score < 1.0


def test_pgmr_keeps_an_unbracketed_name_the_question_writes_where_the_draft_keeping_it_returns_rows(films):
    # with brackets only the bracketed names are kept, so "[ENT: Comedy]" became a variable
    # and the chain was grounded without it; the question writes "comedies", and the draft
    # keeping it returns rows, so it answers
    from qa.methods import make_method

    store, index = films

    def pgmr_for(draft):
        context = QAContext(store, ScriptedLLM([draft]))
        context.index = index
        return make_method("pgmr", context, read_answers=False)

    draft = "SELECT DISTINCT ?f WHERE { ?f [REL: directed by] [ENT: Ann Lee] . ?f [REL: has genre] [ENT: Comedy] }"
    with store.reading():
        answer = pgmr_for(draft).answer("Which of [Ann Lee]'s films are comedies?", in_shape=False)
    assert sorted(answer.answers) == ["Glass River", "Night Harbor"]
    assert answer.trace["names"]["as_drafted"] == ["Comedy"]
    # a written word the draft took for a name that returns nothing with it ("[ENT: Drama]"
    # for a film Bo Park starred in, none of which is a drama) runs without it, as before
    draft = "SELECT DISTINCT ?f WHERE { ?f [REL: starred actors] [ENT: Bo Park] . ?f [REL: has genre] [ENT: Drama] }"
    with store.reading():
        answer = pgmr_for(draft).answer("Which dramatic films did [Bo Park] star in?", in_shape=False)
    assert "as_drafted" not in answer.trace["names"] and answer.answers


@pytest.fixture(scope="module")
def tagged(tmp_path_factory):
    # "comedy" is a tag too, held by one of Ann Lee's two comedies
    store, index = indexed_store(tmp_path_factory, "tagged", "tsv", FILMS + "Night Harbor|has_tags|comedy\n")
    with store:
        yield store, index


def test_a_namesake_of_the_draft_s_constraint_does_not_narrow_it(tagged):
    # the draft tied Ann Lee's films to the genre Comedy; the composed pick ties them to the
    # tag "comedy": fewer films, but by reading the one name otherwise, so the draft stands
    store, index = tagged
    iri = {c.label: c.iri for name in ("Ann Lee", "Comedy", "comedy") for c in index.link(name, k=3)}
    draft = _films_of(store, {"Night Harbor", "Glass River"})
    draft.query = (f"SELECT DISTINCT ?f WHERE {{\n  ?f <http://kgstore.local/relation/directed_by> <{iri['Ann Lee']}> .\n"
                   f"  ?f <http://kgstore.local/relation/has_genre> <{iri['Comedy']}> .\n"
                   f"  FILTER(?f != <{iri['Ann Lee']}>)\n}}")
    cascade = _cascade(tagged, ScriptedLLM([judge(r"has tags comedy$")] * 8))
    run = MethodRun(cascade.context.llm)
    with store.reading():
        refined = cascade.refined("which of ann lee's films are comedy films", draft, run)
    assert run.trace["compose"]["chosen"].endswith("has tags comedy")
    assert refined is None and run.trace["cascade"] == {"refined": False, "namesakes_only": True}


def test_the_facts_read_for_the_paths_write_a_mediator_by_a_short_name(rosters):
    # a roster (CVT) node has no label: its generated IRI said nothing to the model and
    # crowded the facts; it is written #1, #2…, and it cannot be marked as an answer
    from qa.methods import make_method

    store, index = rosters
    context = QAContext(store, ScriptedLLM(["SELECT DISTINCT ?t WHERE { [ENT: Hank Moss] [REL: teams] ?t }",
                                            "{Blue Ridge Foxes}"]))
    context.index = index
    pgmr = make_method("pgmr", context, read_answers=True)
    with store.reading():
        answer = pgmr.answer("which teams did hank moss play for", in_shape=False)
    prompt, grammar = context.llm.prompts[1], context.llm.calls[1]["grammar"]
    assert "Hank Moss | sports pro athlete teams | #1; #2" in prompt and "#1 | sports sports team roster team | " in prompt
    assert ".well-known" not in prompt and '"#1"' not in grammar and '"Blue Ridge Foxes"' in grammar
    assert answer.answers[0] == "Blue Ridge Foxes" and set(answer.answers) == {"Blue Ridge Foxes", "Red Harbor Gulls"}


ARTICLE_TITLES = """The Italian|in_language|English
The Italian|directed_by|Ann Lee
Paper Moon|in_language|Italian
Paper Moon|directed_by|Ann Lee
"""


def test_a_name_after_a_lower_case_article_is_written_even_where_the_article_begins_a_title(tmp_path_factory):
    # "the Italian" of "the Italian-language films" is also the title *The Italian*; the
    # language stays a name the question writes, so the option tied to it is not left below
    # the one that leaves it unused. "The" written capital begins the title.
    store, index = indexed_store(tmp_path_factory, "articles", "tsv", ARTICLE_TITLES)
    with store:
        labels = {m.best.label: m.best.iri for m in read_question(
            index, "Which of the Italian-language films Ann Lee directed is the newest?").mentions}
        asked = read_question(index, "Which of the Italian-language films Ann Lee directed is the newest?")
        assert labels["Italian"] in asked.written_names and labels["The Italian"] in asked.written_names
        titled = read_question(index, "Who directed The Italian?")
        assert labels["Italian"] not in titled.written_names and labels["The Italian"] in titled.written_names


ROLES = """Red Dawn|directed_by|Cy Moss
Red Dawn|has_genre|Drama
Blue Noon|directed_by|Cy Moss
Blue Noon|has_genre|Comedy
Blue Noon|starred_actors|Cy Moss
Gray Dusk|starred_actors|Cy Moss
Gray Dusk|has_genre|Thriller
Gray Dusk|directed_by|Di Wu
Old Mill|has_genre|Comedy
Old Mill|directed_by|Di Wu
Old Mill|starred_actors|Di Wu
"""


def test_the_negations_the_denial_reaches_take_the_negations_seats(tmp_path_factory):
    # "that aren't comedies": the two best negations of Comedy (what the denial reaches) are
    # shown, his films as director and as actor, for the model to tell apart; a negation of
    # Cy Moss (written before the denial: Comedy's films without him) is not
    from qa.compose._choose import choose

    store, index = indexed_store(tmp_path_factory, "roles", "tsv", ROLES)
    with store:
        reading = read_question(index, "Which films did Cy Moss direct that aren't comedies?")
        with store.reading():
            candidates = enumerate_candidates(store, index.embed, reading)
    from qa.compose._choose import denial_reaches, is_negation

    # scores set so the encoder would seat the negation of Cy Moss, and fill the rest of
    # the list with the other kinds
    reached = [denial_reaches(reading, c) for c in candidates]
    scores = [(0.5 if r else 0.9) if is_negation(c) else 1.0 for c, r in zip(candidates, reached)]
    assert sum(reached) >= 2 and any(is_negation(c) and not r for c, r in zip(candidates, reached))
    composed = choose(MethodRun(ScriptedLLM([judge(r"directed what; where not: the answer has genre Comedy")] * 12)),
                      reading, candidates, scores)
    negations = sorted(c.answers for c in composed.options if "not:" in verbalize(c))
    assert negations == [("Gray Dusk",), ("Red Dawn",)]
    assert composed.chosen.answers == ("Red Dawn",)


# -- a name the store lacks, written another way ---------------------------------------------
def test_an_entity_writing_all_of_a_lacking_names_words_but_one_is_near_it(films):
    """Refused for "Sir Ann Lee" (no entity bears it), the mention "ann lee" is dropped as
    any part of a name the store lacks, and kept aside as near: *Ann Lee* writes all its
    words but "sir". A one-word name has no near entity; nor does one writing fewer words."""
    _, index = films
    reading = read_question(index, "which films did sir ann lee direct")
    assert not any(m.text == "ann lee" for m in reading.without_absent(["Sir Ann Lee"], index).mentions)
    near = reading.near_absent(["Sir Ann Lee"], index)
    assert [(name, m.text, [e.label for e in m.entities]) for name, m in near] == [("Sir Ann Lee", "ann lee",
                                                                                     ["Ann Lee"])]
    assert reading.near_absent(["Sir Ann Lee Park"], index) == ()  # two words unwritten
    assert read_question(index, "which films did annlee direct").near_absent(["Annlee"], index) == ()


@pytest.mark.parametrize("says, kept", [("yes", True), ("no", False)])
def test_a_near_entity_stands_as_the_topic_only_where_the_model_says_the_question_means_it(films, says, kept):
    """After a refusal for a name the store lacks, the model is asked of a near entity
    whether the question means it; only a yes lets composing answer about it."""
    store, index = films
    asked = []

    def name_check(messages):
        asked.append(messages[-1]["content"])
        return says

    llm = ScriptedLLM([name_check] + [judge(r"^Ann Lee directed what$")] * 12)
    run = MethodRun(llm)
    with store.reading():
        picked = compose_answer(store, index, "which films did sir ann lee direct", run, "test",
                                absent=("Sir Ann Lee",))
    assert "Name in the question: Sir Ann Lee" in asked[0] and "Entity in the graph: Ann Lee" in asked[0]
    assert run.trace["compose"]["name_checks"] == [{"name": "Sir Ann Lee", "entity": "Ann Lee",
                                                     "p": 1.0 if kept else 0.0}]
    if kept:
        assert picked is not None and "Glass River" in picked.answer.answers
    else:
        assert picked is None  # no mention is left to compose about


def _one_mention(text: str, typed: str, *labels: str) -> "QuestionReading":
    from qa.compose import LinkedEntity, Mention, QuestionReading

    at = text.index(typed)
    entities = tuple(LinkedEntity(f"ex:{label.replace(' ', '_')}", label, 0.5, "vector") for label in labels)
    return QuestionReading(text, text, (Mention(typed, (at, at + len(typed)), entities),))


def test_a_name_written_whole_in_a_derived_form_stands_without_the_models_check():
    """Refused for the draft's "[ENT: Jamaican money]", the mention "jamaican" writes the
    whole of *Jamaica* as its adjective: it stands, unasked (the model, asked whether
    "Jamaican money" means *Jamaica*, says no). Its other entities, which write it only in
    part (*Jamaican English*), and a name spliced from a whole one as written ("Kismet
    Venable") are still asked."""
    from qa.compose import confirmed_names

    reading = _one_mention("what jamaican money called", "jamaican", "Jamaican English", "Jamaica")
    near = reading.near_absent(["Jamaican money"])
    assert [[e.label for e in m.entities] for _, m in near] == [["Jamaican English", "Jamaica"]]
    run = MethodRun(ScriptedLLM([]))  # no model call may be made
    kept = confirmed_names(run, reading, near, threshold=0.55)
    assert [[e.label for e in m.entities] for m in kept] == [["Jamaica"]]
    assert run.trace["compose"]["derived_names"] == ["Jamaica"] and run.trace["compose"]["name_checks"] == []
    # initials write a whole name too ("uk yahoo", a search engine's name typed after it)
    uk = _one_mention("what countries are in the uk yahoo", "uk", "United Kingdom")
    assert [e.label for m in confirmed_names(MethodRun(ScriptedLLM([])), uk, uk.near_absent(["uk yahoo"]),
                                             threshold=0.55) for e in m.entities] == ["United Kingdom"]
    spliced = _one_mention("who directed kismet venable", "kismet", "Kismet")
    asked = MethodRun(ScriptedLLM(["no"]))
    assert confirmed_names(asked, spliced, spliced.near_absent(["Kismet Venable"]), threshold=0.55) == ()
    assert [c["entity"] for c in asked.trace["compose"]["name_checks"]] == ["Kismet"]


def test_a_drafted_name_in_a_derived_form_keeps_the_mention_of_the_entity_it_derives_from():
    """The draft wrote "[ENT: Serbian]" for "serbs": the store lacks "Serbian" as a name,
    and composing after that refusal reads where the name is written. "serbs" is written
    alike to no word of it, but links *Serbia*, whose whole name "Serbian" writes: it stays.
    A drafted name another entity's ("Croatian") does not keep it."""
    reading = _one_mention("what language do serbs and croatians speak", "serbs", "Serbia")
    assert [m.best.label for m in reading.about(["Serbian"]).mentions] == ["Serbia"]
    assert reading.about(["Croatians"]).mentions == ()


def test_where_the_drafted_names_are_written_only_as_other_words_a_whole_name_of_two_words_is_read():
    """The draft's names "[ENT: body_of_water]" and "[ENT: river]" are words the question
    writes, but no name of the store is where they are: what the question asks about is
    the name of two words or more it writes whole (*Saint Lawrence River*). A single word
    read as a title ("movies" as *Movie Movie*) could be any title's, and is not read."""
    question = "what body of water does st lawrence river flow into"
    reading = _one_mention(question, "st lawrence river", "Saint Lawrence River")
    assert [m.best.label for m in reading.about(["body_of_water", "river"]).mentions] == ["Saint Lawrence River"]
    assert reading.about(["body_of_water"]).set_aside == frozenset()
    one_word = _one_mention("which movies did zorblax venable direct", "movies", "Movie Movie")
    assert one_word.about(["zorblax venable"]).mentions == ()


@pytest.mark.parametrize("typed, label, written", [
    ("billy d williams", "Billy Dee Williams", True), ("john f kennedy", "John Fitzgerald Kennedy", True),
    ("billy d smith", "Billy Dee Williams", False),  # every other typed word is the label's
    ("billy d williams", "Billy Williams", False),  # a letter stands for a word the label has
    ("billy j williams", "Billy Dee Williams", False), ("george h w bush", "George W. Bush", False),
])
def test_a_middle_name_typed_as_its_initial_is_written_in_the_name(typed, label, written):
    from qa.compose._reading import written_like

    assert written_like(typed, label) is written


def test_a_name_read_by_meaning_may_hold_function_words_between_its_three_content_words():
    """"fellowship of the ring" is two content words and four words: read by meaning as
    *The Lord of the Rings: The Fellowship of the Ring*; no span reaches a fourth content
    word, nor starts or ends on a function word."""
    from types import SimpleNamespace

    from qa.compose._reading import _add_typed_names

    label = "The Lord of the Rings: The Fellowship of the Ring"
    embedded = []

    class Index:
        def can_search(self, kind):
            return True

        def relation_word(self, word):
            return word == "played"

        def embed(self, texts):
            embedded.extend(texts)
            return texts

        def search_vectors(self, kind, texts, k):
            return [[SimpleNamespace(iri="ex:fotr", label=label, score=0.94 if t == "fellowship of the ring" else 0.3)]
                    for t in texts]

    text = "who played bilbo in the fellowship of the ring"
    by_span = {}
    _add_typed_names(Index(), text, by_span)
    assert [text[a:b] for a, b in by_span] == ["fellowship of the ring"]
    assert "bilbo in the fellowship" in embedded and "bilbo in the fellowship of" not in embedded
    assert not any(t.startswith(("in ", "the ")) or t.endswith((" the", " of")) for t in embedded)
    assert "bilbo fellowship ring" not in embedded and not any(len(t.split()) > 5 for t in embedded)


@pytest.mark.parametrize("typed, label, joined", [
    ("fellowship of the ring", "The Lord of the Rings: The Fellowship of the Ring", True),
    ("language do the maasai", "Maasai Language", False), ("billy d williams", "Billy Dee Williams", True),
    ("statue of liberty", "Statue Liberty", False),
])
def test_a_name_read_by_meaning_joins_its_words_as_the_label_does(typed, label, joined):
    from qa.compose._reading import _joined_as_written

    assert _joined_as_written(typed, label) is joined

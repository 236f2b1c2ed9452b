"""Questions read as query graphs (issue 41): value constraints read from the words, names
linked with or without brackets (demonyms and names with lower-case words inside), each
constraint kind and aggregation applied on a chain's answers in a real store, yes/no
against a constant, and the answer form checked against the question. The chain is given
(no model); the real-model runs are in test_shapes_llm.py."""
from __future__ import annotations

import re

import pytest

import kgstore
from kgstore import Store
from kgstore.terms import WD, WDT
from qa import Answer, QAContext, ScriptedLLM
from qa.methods import MethodRun
from qa.shapes import answer_in_shape, question_mentions
from qa.shapes._words import without_constraints
from qa.steps._query_graph import answer_form, form_fits, read_value_constraints
from qa.steps._retrieval import bracketed_spans, capitalised_runs, names_not_held, question_names_not_held

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)


# -- value constraints, from the words alone ------------------------------------------------
@pytest.mark.parametrize("question, op, low, high, year, unit", [
    ("Which films did [Ann Lee] direct in 1985?", "=", 1985, None, True, None),
    ("Which films has Ann Lee directed since 2005?", ">=", 2005, None, True, None),
    ("What did Ann Lee make before 1980?", "<", 1980, None, True, None),
    ("Was Douglas Adams born after 1950?", ">", 1950, None, True, None),
    ("films from Ann Lee between 1990 and 2000", "between", 1990, 2000, True, None),
    ("What movies did Ann Lee make in the 1990s?", "between", 1990, 1999, True, None),
    ("Is Mount Everest over 8,000 m tall?", ">", 8000, None, False, "m"),
    ("Which countries have more than 10 million people?", ">", 10_000_000, None, False, "people"),
    ("Which rivers are at least 2.5 km long?", ">=", 2.5, None, False, "km"),
    ("Does [Big] predate 2005?", "<", 2005, None, True, None),
    ("Is [Big] more recent than 1970?", ">", 1970, None, True, None),
    ("Did Douglas Adams die before 2000, right?", "<", 2000, None, True, None),
    ("Give me Ann Lee's films from 1990 to 1995.", "between", 1990, 1995, True, None),
    ("Which films did Ann Lee make from 2001 onwards?", ">=", 2001, None, True, None),
    ("Is [Big] from 1950?", "=", 1950, None, True, None),  # the year itself, not a bound
    ("Was [Big] a 2009 release?", "=", 2009, None, True, None),
])
def test_value_constraints_are_read_with_their_operator_and_kind(question, op, low, high, year, unit):
    [c] = read_value_constraints(question)
    assert (c.op, c.low, c.high, c.year, c.unit) == (op, low, high, year, unit)
    assert c.words in question


def test_a_count_of_things_and_a_title_s_digits_are_no_value_constraint():
    assert read_value_constraints("Which actors appeared in more than 3 films?") == []
    assert read_value_constraints("Who directed [The Class of 1984]?") == []  # a bracketed name is a name
    assert read_value_constraints("Who won the 2014 World Cup?") == []  # "the" year names one thing
    # names found by linking are blanked by the caller first
    assert [c.words for c in read_value_constraints("Who directed [                  ] in 1999?")] == ["in 1999"]


def test_the_chain_is_asked_without_its_value_constraints():
    question = "How many of [Ann Lee]'s films are from before 1980?"
    assert without_constraints(question, read_value_constraints(question)) == "How many of [Ann Lee]'s films?"
    question = "Which films did Ann Lee direct in 1985?"
    assert without_constraints(question, read_value_constraints(question)) == "Which films did Ann Lee direct?"


def test_the_answer_form_is_read_from_the_question_and_checked():
    assert answer_form("Is X a comedy?", "boolean") == "yes_no"
    assert answer_form("How many films did X direct?", "count") == "number"
    assert answer_form("When was X released?", "chain") == "value"
    assert answer_form("Which capital does X have?", "chain") == "entities"
    number = [{"kind": "number"}]
    assert form_fits("entities", ["1"], number, counted=True) == "a 'which/who/what' question answered with a count"
    assert form_fits("number", ["A", "B"], [None, None], counted=False).startswith("a 'how many' question")
    assert form_fits("yes_no", ["Comedy"], [None], counted=False).startswith("a yes/no question")
    assert form_fits("entities", ["Lima"], [None], counted=False) is None


@pytest.mark.parametrize("answer, value, reads", [
    ("1901-09-14", {"kind": "date"}, True), ("April 23", None, True), ("23 April", None, True),
    ("1983 World Series", None, True), ("Miss USA 1993", None, True),
    ("Assassination", None, False), ("May Day", None, False), ("Apollo 13", None, False),
])
def test_a_value_is_a_literal_or_a_thing_named_by_a_time(answer, value, reads):
    """What a "when" question may be answered with: a literal, or an entity a store names
    by a day or a year (Freebase's "April 23", "1983 World Series")."""
    from qa.steps._values import answers_a_value, reads_as_value

    assert reads_as_value(answer, value) is reads
    assert answers_a_value(["Assassination", answer], [None]) is reads  # values may be recorded for fewer


# -- names, with or without brackets ---------------------------------------------------------
@pytest.mark.parametrize("question, names", [
    ("Who played Clown #3 in [Dumbo]?", ["Clown #3"]),
    ("Did Tom Hanks star in Apollo 13?", ["Tom Hanks", "Apollo 13"]),
    ("Was Douglas Adams born after 1950?", ["Douglas Adams"]),  # a year is no part of a name
    ("How many films did [Ann Lee] appear in as Émilien Coutant-Kerbalec?", ["[Ann Lee]", "Émilien Coutant-Kerbalec?"]),
])
def test_a_number_ends_a_name_run(question, names):
    assert [question[a:b] for a, b in capitalised_runs(question)] == names


def test_a_name_run_holds_lower_case_joining_words():
    question = "Who directed Children of Men?"
    assert [question[a:b].rstrip("?") for a, b in capitalised_runs(question)] == ["Children of Men"]
    question = "Who wrote The Lord of the Rings?"
    assert [question[a:b].rstrip("?") for a, b in capitalised_runs(question)] == ["The Lord of the Rings"]
    # a store that holds only "Men" does not hold the title: "Children" is not covered
    question = "Who directed Children of Men?"
    assert names_not_held(question, [(question.index("Men"), question.index("Men") + 3)]) == ["Children of Men"]
    assert names_not_held(question, [(13, 28)]) == []


@pytest.fixture(scope="module")
def demo(demo_store):
    with Store.open(demo_store, read_only=True) as store:
        context = QAContext(store, ScriptedLLM([]))
        yield store, context.get_index()


def test_names_outside_brackets_are_names_too(demo):
    _, index = demo
    # brackets say "this is a name", never "nothing else is"
    assert question_names_not_held(index, "Is [Mount Everest] in Nepal?") == []
    assert question_names_not_held(index, "Was Douglas Adams born in [Cambridge]?") == []
    assert question_names_not_held(index, "Is Santa Barbara in [South America]?") == []
    mentions = question_mentions(index, "Is [Mount Everest] in Nepal?", bracketed_spans("Is [Mount Everest] in Nepal?"))
    assert [m.iri for m in mentions] == [WD + "Q513", WD + "Q837"]
    # a name the store lacks is still refused, bracketed or not
    assert question_names_not_held(index, "Is Zorblax Quintana taller than [Mount Everest]?") == ["Zorblax Quintana"]


@pytest.mark.parametrize("question, iri", [
    ("Which Asian country has the largest population?", WD + "Q48"),
    ("Which South American country borders the fewest countries?", WD + "Q18"),
    ("Which Andean countries border Peru?", WD + "Q5456"),
])
def test_a_demonym_links_to_the_name_it_is_made_from(demo, question, iri):
    _, index = demo
    assert question_names_not_held(index, question) == []
    assert iri in [m.iri for m in question_mentions(index, question, bracketed_spans(question))]


# -- constraints and aggregations on a chain's answers ---------------------------------------
HIMALAYAS_COUNTRIES = f"SELECT DISTINCT ?c WHERE {{\n  <{WD}Q5451> <{WDT}P17> ?c .\n}}"
ANDES_COUNTRIES = f"SELECT DISTINCT ?c WHERE {{\n  <{WD}Q5456> <{WDT}P17> ?c .\n}}"


def chain_of(store, query):
    """A chain method's answer: the query's rows, labelled."""
    from qa.sandbox import run_sparql

    iris = [r["c"].value for r in run_sparql(store, query).rows]
    labels = store.labels(iris)
    return Answer(question="", method="test", answers=[labels[i] for i in iris], answer_iris=iris,
                  values=[None] * len(iris), query=query)


def shaped(demo, question, query):
    store, index = demo
    # a model that judges no composed query graph an answer: the shape's own reading answers
    run = MethodRun(ScriptedLLM(["no"] * 40))
    asked = []

    def chain(text=question):
        asked.append(text)
        return chain_of(store, query)

    return answer_in_shape(store, index, question, run, "test", chain), run, asked


def test_an_entity_constraint_keeps_the_answers_related_to_it(demo):
    answer, run, _ = shaped(demo, "Which countries of the Andes border Peru?", ANDES_COUNTRIES)
    assert set(answer.answer_iris) == {WD + q for q in ("Q736", "Q750", "Q298", "Q739")}
    [applied] = answer.constraints
    assert applied["applied"] and applied["entity"] == "Peru" and applied["kept"] == 4 and applied["of"] == 7
    assert f"<{WDT}P47>" in answer.query and any(e.p == WDT + "P47" for e in answer.evidence)
    assert [g["relation"] for g in run.trace["query_graph"]["grounded"] if g["constraint"] == "Peru"] == [
        "shares border with"]


def test_a_value_constraint_filters_on_the_value_the_words_name(demo):
    answer, _, asked = shaped(demo, "Which countries does the Himalayas cover with more than 100 million people?",
                              HIMALAYAS_COUNTRIES)
    assert answer.answers == ["India"]
    assert "100" not in asked[0]
    [applied] = [c for c in answer.constraints if "value" in c]
    assert applied["applied"] and applied["relation"] == "population"
    assert any(e.p == WDT + "P1082" and e.o == "1210854977" for e in answer.evidence)


def test_a_count_with_a_constraint_counts_only_what_meets_it(demo):
    answer, _, asked = shaped(demo, "How many countries of the Andes border Peru?", ANDES_COUNTRIES)
    assert answer.answers == ["4"] and answer.shape == "count"
    assert asked[0].lower().startswith("which countries")


def test_a_constraint_no_relation_carries_is_reported_not_dropped(demo):
    answer, _, _ = shaped(demo, "Which countries of the Andes border Mount Everest?", ANDES_COUNTRIES)
    [dropped] = answer.constraints
    assert dropped["applied"] is False and dropped["entity"] == "Mount Everest"
    assert "no answer of the chain is related to Mount Everest" in dropped["why"]


def test_a_superlative_over_a_count_picks_one(demo):
    query = (f"SELECT DISTINCT ?c WHERE {{\n  ?c <{WDT}P30> <{WD}Q18> .\n  ?c <{WDT}P31> <{WD}Q6256> .\n}}")
    answer, run, _ = shaped(demo, "Which South American country borders the fewest countries?", query)
    assert answer.answers == ["Venezuela"] and answer.shape == "superlative"
    assert run.trace["superlative"]["measures"][0]["measure"]["label"] == "shares border with"


@pytest.mark.parametrize("question, verdict, relation", [
    ("Was Douglas Adams born after 1950?", "yes", WDT + "P569"),
    ("Was Douglas Adams born before 1950?", "no", WDT + "P569"),
    ("Was Douglas Adams born in 1952?", "yes", WDT + "P569"),
    ("Did Douglas Adams die before 2000?", "no", WDT + "P570"),
    ("Is Mount Everest over 8,000 m tall?", "yes", WDT + "P2044"),
    ("Does Nepal have more than 50 million people?", "no", WDT + "P1082"),
    ("Does Douglas Adams's birth predate 1950?", "no", WDT + "P569"),
    ("Douglas Adams was born after 1950, wasn't he?", "yes", WDT + "P569"),
])
def test_yes_no_against_a_constant_reads_the_value_the_words_name(demo, question, verdict, relation):
    answer, _, asked = shaped(demo, question, HIMALAYAS_COUNTRIES)
    assert asked == []  # no chain
    assert answer.answers == [verdict] and answer.shape == "boolean"
    assert {e.p for e in answer.evidence} == {relation}


def test_yes_no_against_a_constant_the_store_cannot_judge_is_refused(demo):
    answer, _, _ = shaped(demo, "Was the Andes formed after 1950?", HIMALAYAS_COUNTRIES)
    assert answer.refused and answer.refusal.reason == "no_answer"


def test_a_which_question_answered_with_a_count_is_refused(demo):
    store, index = demo
    run = MethodRun(ScriptedLLM([]))
    counted = Answer(question="", method="test", answers=["1"], answer_iris=[None],
                     values=[{"kind": "number", "value": "1"}],
                     query=f"SELECT (COUNT(DISTINCT ?c) AS ?count) WHERE {{ <{WD}Q956> <{WDT}P1376> ?c }}")
    answer = answer_in_shape(store, index, "Which country is Beijing the capital of?", run, "test",
                             lambda *_: counted)
    assert answer.refused and answer.refusal.reason == "wrong_form"
    assert run.trace["answer_form"]["expected"] == "entities"


def test_a_yes_no_question_never_answers_with_a_value(demo):
    store, index = demo
    run = MethodRun(ScriptedLLM([]))
    value = chain_of(store, ANDES_COUNTRIES)
    # "Is the Andes a Zorblax?" names one entity; the chain's list is no yes or no
    answer = answer_in_shape(store, index, "Is the Andes long?", run, "test", lambda *_: value)
    assert answer.refused and answer.refusal.reason == "wrong_form"


# -- a film store: genres and years ----------------------------------------------------------
FILMS = """Night Harbor|director|Ann Lee
Night Harbor|genre|Comedy
Night Harbor|year|1979
Paper Lanterns|director|Ann Lee
Paper Lanterns|genre|Drama
Paper Lanterns|year|1985
Glass River|director|Ann Lee
Glass River|genre|Comedy
Glass River|year|1999
Quiet Engines|director|Ann Lee
Quiet Engines|genre|Thriller
Quiet Engines|year|2007
Salt Road|director|Bo Park
Salt Road|genre|Comedy
Salt Road|year|1999
"""


def indexed_store(tmp_path_factory, name: str, fmt: str, text: str):
    """``text`` ingested as ``fmt`` into a new store with its names indexed, opened
    read-only: (store, index)."""
    from indexer import build_index

    folder = tmp_path_factory.mktemp(name)
    (folder / name).write_text(text)
    with Store.init(folder / "store") as store:
        kgstore.ingest(store, fmt, folder / name)
        build_index(store, kinds=("entities", "uris", "relations"))
    store = Store.open(folder / "store", read_only=True)
    return store, QAContext(store, ScriptedLLM([])).get_index()


def store_fixture(name: str, fmt: str, text: str):
    """A module-scoped fixture: ``text`` ingested as ``fmt`` and indexed
    (:func:`indexed_store`), open for the module's tests as (store, index)."""
    @pytest.fixture(scope="module")
    def opened(tmp_path_factory):
        store, index = indexed_store(tmp_path_factory, name, fmt, text)
        with store:
            yield store, index
    return opened


films = store_fixture("films.txt", "tsv", FILMS)


def film_chain(films, question):
    store, index = films
    from qa.steps._retrieval import exact_entities

    [(ann, _)] = exact_entities(index, "Ann Lee", 1)
    [(director, _)] = [(iri, label) for iri, label in store.labels([r for r in _relations(store)]).items()
                       if label == "director"]
    query = f"SELECT DISTINCT ?c WHERE {{\n  ?c <{director}> <{ann}> .\n}}"
    return shaped(films, question, query)


def _relations(store):
    from qa.sandbox import run_sparql

    return {r["p"].value for r in run_sparql(store, "SELECT DISTINCT ?p WHERE { ?s ?p ?o }").rows}


@pytest.mark.parametrize("question, expected", [
    ("Which films did [Ann Lee] direct before 1980?", {"Night Harbor"}),
    ("Which films did Ann Lee direct since 1999?", {"Glass River", "Quiet Engines"}),
    ("Which films did [Ann Lee] direct in 1985?", {"Paper Lanterns"}),
    ("Which films did Ann Lee direct in the 1990s?", {"Glass River"}),
    ("Which films did [Ann Lee] direct between 1980 and 2000?", {"Paper Lanterns", "Glass River"}),
])
def test_year_constraints_on_a_chain(films, question, expected):
    answer, _, asked = film_chain(films, question)
    assert set(answer.answers) == expected
    assert all(c["applied"] and c["relation"] == "year" for c in answer.constraints)
    assert "19" not in asked[0] and "20" not in asked[0]


def test_a_genre_word_constrains_the_answers_with_or_without_brackets(films):
    for question in ("Which comedies did [Ann Lee] direct?", "Which comedy films did Ann Lee direct?",
                     "Which of Ann Lee's films are comedies?"):
        answer, _, _ = film_chain(films, question)
        assert set(answer.answers) == {"Night Harbor", "Glass River"}, question


def test_a_count_with_a_year_constraint(films):
    answer, _, _ = film_chain(films, "How many of [Ann Lee]'s films are from before 1990?")
    assert answer.answers == ["2"]


def test_a_genre_word_picks_the_namesake_that_joins_the_answers(films_with_tags):
    # the store holds a tag "comedy" on one film and the genre "Comedy" on two
    answer, run, asked = film_chain(films_with_tags, "Which comedies did Ann Lee direct?")
    assert set(answer.answers) == {"Night Harbor", "Glass River"}
    answer, run, asked = film_chain(films_with_tags, "What comedy films did Ann Lee direct?")
    assert set(answer.answers) == {"Night Harbor", "Glass River"}
    assert asked == ["What films did Ann Lee direct?"]  # the chain is asked without its modifier


def films_with(tmp_path_factory, extra: str):
    """FILMS and ``extra`` lines, indexed and open for reading, for a module's tests."""
    store, index = indexed_store(tmp_path_factory, "films.txt", "tsv", FILMS + extra)
    with store:
        yield store, index


@pytest.fixture(scope="module")
def films_with_tags(tmp_path_factory):
    yield from films_with(tmp_path_factory, "Paper Lanterns|tag|comedy\nSalt Road|tag|comedy\n")


# -- mediators: a film's performances hold the actor and the character (a string) ----------
PERFORMANCES = """</en/raiders> <name> "Raiders of the Lost Ark" .
</en/raiders> <type> </film/film> .
</en/temple> <name> "Temple of Doom" .
</en/temple> <type> </film/film> .
</en/star_wars> <name> "Star Wars" .
</en/star_wars> <type> </film/film> .
</en/harrison_ford> <name> "Harrison Ford" .
</en/harrison_ford> <type> </people/person> .
</en/karen_allen> <name> "Karen Allen" .
</en/karen_allen> <type> </people/person> .
</en/raiders> </film/film/starring> _:p1 .
_:p1 </film/performance/actor> </en/harrison_ford> .
_:p1 </film/performance/character> "Indiana Jones" .
</en/raiders> </film/film/starring> _:p2 .
_:p2 </film/performance/actor> </en/karen_allen> .
_:p2 </film/performance/character> "Marion Ravenwood" .
</en/temple> </film/film/starring> _:p3 .
_:p3 </film/performance/actor> </en/harrison_ford> .
_:p3 </film/performance/character> "Indiana Jones" .
</en/star_wars> </film/film/starring> _:p4 .
_:p4 </film/performance/actor> </en/harrison_ford> .
</en/temple> </film/film/tagline> "If adventure has a name, it must be Indiana Jones " .
_:p4 </film/performance/character> "Han Solo" .
</en/heat> <name> "Heat Wave" .
</en/heat> <type> </film/film> .
</en/heat> </film/film/starring> _:p5 .
_:p5 </film/performance/actor> </en/karen_allen> .
_:p5 </film/performance/character> "Harrison Ford" .
"""
FB = "http://rdf.freebase.com/ns/"


performances = store_fixture("movies.nq", "freebase", PERFORMANCES)


def chain_rows(store, query, var):
    """A chain method's answer to ``query``: its ``var`` terms, entities labelled, literals as values."""
    from qa.sandbox import run_sparql
    from qa.steps._sparql_build import BuiltQuery, answer_terms

    rows = run_sparql(store, query).rows
    terms = answer_terms(store, BuiltQuery("?" + var, []), rows, limit=100)
    return Answer(question="", method="test", answers=[t.label for t in terms], answer_iris=[t.iri for t in terms],
                  values=[t.value.to_dict() if t.value else None for t in terms], query=query)


def mediated(performances, question, query, var):
    store, index = performances
    run = MethodRun(ScriptedLLM([]))
    answer = answer_in_shape(store, index, question, run, "test", lambda *_: chain_rows(store, query, var))
    return answer, run


def test_a_mediator_is_never_an_answer(performances):
    store, _ = performances
    answer = chain_rows(store, f"SELECT DISTINCT ?m WHERE {{ <{FB}en.raiders> <{FB}film.film.starring> ?m }}", "m")
    assert answer.answers == []


def test_a_constraint_on_the_mediator_picks_the_character(performances):
    query = (f"SELECT DISTINCT ?c WHERE {{\n  <{FB}en.raiders> <{FB}film.film.starring> ?m .\n"
             f"  ?m <{FB}film.performance.character> ?c .\n}}")
    answer, run = mediated(performances, "Which character did Harrison Ford play in Raiders of the Lost Ark?",
                           query, "c")
    assert answer.answers == ["Indiana Jones"]
    [applied] = [g for g in run.trace["query_graph"]["grounded"] if g["applied"]]
    assert applied["entity"] == "Harrison Ford" and applied["relation"] == "film performance actor"


def test_a_name_held_as_a_value_is_a_constraint_not_a_refusal(performances):
    store, index = performances
    question = "Who played Indiana Jones in Raiders of the Lost Ark?"
    assert question_names_not_held(index, question) == []
    assert question_names_not_held(index, "Who played Zorro Quintana in Raiders of the Lost Ark?") == [
        "Zorro Quintana"]
    query = (f"SELECT DISTINCT ?a WHERE {{\n  <{FB}en.raiders> <{FB}film.film.starring> ?m .\n"
             f"  ?m <{FB}film.performance.actor> ?a .\n}}")
    answer, _ = mediated(performances, question, query, "a")
    assert answer.answers == ["Harrison Ford"]
    assert answer.constraints[0]["constraint"] == "Indiana Jones" and answer.constraints[0]["applied"]


def test_a_count_through_mediators(performances):
    query = (f"SELECT DISTINCT ?f WHERE {{\n  ?f <{FB}film.film.starring> ?m .\n"
             f"  ?m <{FB}film.performance.actor> <{FB}en.harrison_ford> .\n}}")
    answer, _ = mediated(performances, "In how many films did Harrison Ford play Indiana Jones?", query, "f")
    assert answer.answers == ["2"]


def test_a_count_whose_chain_ends_on_the_named_character_counts_the_films_holding_it(performances):
    # the chain ends on the actor's characters and the constraint keeps the one the
    # question names: the films are one hop back from the performances that hold it
    query = (f"SELECT DISTINCT ?c WHERE {{\n  ?m <{FB}film.performance.actor> <{FB}en.harrison_ford> .\n"
             f"  ?m <{FB}film.performance.character> ?c .\n}}")
    answer, run = mediated(performances, "In how many films did Harrison Ford play Indiana Jones?", query, "c")
    assert answer.answers == ["2"]
    assert run.trace["mediators"]["backward"] is True


# a film whose name is a number, a year a question could mean as well
NUMBERED = PERFORMANCES + """</en/film_1776> <name> "1776" .
</en/film_1776> <type> </film/film> .
</en/film_1776> </film/film/starring> _:n1 .
_:n1 </film/performance/actor> </en/harrison_ford> .
_:n1 </film/performance/character> "John Adams" .
"""


numbered = store_fixture("numbered.nq", "freebase", NUMBERED)


def test_a_number_no_answer_holds_as_a_year_is_read_as_the_name_the_store_holds(numbered):
    store, index = numbered
    characters = (f"SELECT DISTINCT ?c WHERE {{\n  ?m <{FB}film.performance.actor> <{FB}en.harrison_ford> .\n"
                  f"  ?m <{FB}film.performance.character> ?c .\n}}")
    in_1776 = (f"SELECT DISTINCT ?c WHERE {{\n  <{FB}en.film_1776> <{FB}film.film.starring> ?m .\n"
               f"  ?m <{FB}film.performance.actor> <{FB}en.harrison_ford> .\n  ?m <{FB}film.performance.character> ?c .\n}}")
    asked = []

    def chain(text):  # the method: the film when the question names it, else every role
        asked.append(text)
        return chain_rows(store, in_1776 if "1776" in text else characters, "c")

    run = MethodRun(ScriptedLLM([lambda m: "no"] * 12))  # the model picks no composed year
    answer = answer_in_shape(store, index, "Which character did Harrison Ford play in 1776?", run, "test", chain)
    # "in 1776" read as a year holds for none of his roles; read as the film, one
    assert asked == ["Which character did Harrison Ford play?", "Which character did Harrison Ford play in 1776?"]
    assert answer.answers == ["John Adams"]
    assert run.trace["shape"]["fallback"] == "a number the question writes, read as the name the store holds"
    # a reading of the name that does not narrow the chain's answers is no evidence for it
    wider = MethodRun(ScriptedLLM([lambda m: "no"] * 12))
    answer = answer_in_shape(store, index, "Which character did Harrison Ford play in 1776?", wider, "test",
                             lambda text: chain_rows(store, characters, "c"))
    assert sorted(answer.answers) == ["Han Solo", "Indiana Jones", "John Adams"]


def test_a_superlative_over_a_value_is_not_pulled_to_a_noun_before_it(demo):
    query = (f"SELECT DISTINCT ?c WHERE {{\n  ?c <{WDT}P30> <{WD}Q48> .\n  ?c <{WDT}P31> <{WD}Q6256> .\n}}")
    answer, run, _ = shaped(demo, "Which Asian country has the largest population?", query)
    assert answer.answers == ["India"]  # the only Asian country with a population in the sample, and the largest
    assert run.trace["superlative"]["measures"][0]["measure"]["label"] == "population"


def test_eval_counts_failures_by_kind():
    from qa.eval import failure_counts, failure_kind

    right = {"hits@1": 1.0, "answers": ["yes"], "gold": ["yes"]}
    wrong_no = {"hits@1": 0.0, "answers": ["no"], "gold": ["yes"], "refused": False}
    typed_no = {"hits@1": 0.0, "answers": ["no"], "gold": ["true"], "refused": False,
                "gold_values": [{"kind": "boolean", "value": True}]}
    refused = {"hits@1": 0.0, "answers": [], "gold": ["x"], "refused": True, "refusal_reason": "wrong_form"}
    dropped = {"hits@1": 0.0, "answers": ["A", "B"], "gold": ["A"], "refused": False,
               "constraints": [{"constraint": "Zorblax", "applied": False}]}
    other = {"hits@1": 0.0, "answers": ["B"], "gold": ["A"], "refused": False}
    assert failure_kind(right) is None
    assert failure_kind(wrong_no) == failure_kind(typed_no) == "wrong no"
    assert failure_kind(refused) == "refused: wrong_form"
    assert failure_kind(dropped) == "constraint dropped"
    assert failure_kind(other) == "wrong answer"
    assert failure_kind({"question": "How many films did X direct?", "answers": ["4"], "gold": ["3"],
                         "hits@1": 0.0}) == "wrong count"
    assert failure_kind({"question": "When was X released?", "answers": ["1987"], "gold": ["1988"],
                         "hits@1": 0.0}) == "wrong answer"  # a year, not a count
    records = [{**r, "failure": failure_kind(r)} for r in (right, wrong_no, typed_no, refused, dropped, other)]
    assert failure_counts(records) == {"wrong no": 2, "refused: wrong_form": 1, "constraint dropped": 1,
                                       "wrong answer": 1}


def test_a_round_trip_asked_for_the_sharers_is_two_hops_whatever_else_the_draft_hangs_off_the_entity():
    from qa.steps._path_grounding import ChainDraft, asks_for_the_sharers

    assert asks_for_the_sharers("Which films share a director with [Dark Habits]?")
    assert asks_for_the_sharers("Name the films that share a writer with Big.")
    assert not asks_for_the_sharers("the films that share directors with [X] were released in which years")
    # "by / with / made by the same … as X", the thing asked for written first
    assert asks_for_the_sharers("Songs by the same composer as Yesterday?")
    assert asks_for_the_sharers("Which novels were published by the same house as Emma?")
    assert asks_for_the_sharers("Books with the same author as Dune")
    assert not asks_for_the_sharers("Songs by Paul McCartney?")
    assert asks_for_the_sharers("Which other novels did the author of Emma write?")
    star = ChainDraft(("directed by", "has genre", "written by"), 3, ("directed by", "written by"), off_anchor=0)
    assert star.trip_hops == 2
    chained = ChainDraft(("directed by", "directed by", "has genre"), 3, ("directed by", "has genre"))
    assert chained.trip_hops == 3  # not known to ask for the sharers: one hop on from them
    # the star counts as one only where the question asks for the sharers themselves
    from qa.steps._path_grounding import trip_lengths
    assert trip_lengths("Which films share a director with [Dark Habits]?", star) == (2, 2)
    assert trip_lengths("the films that share directors with [X] were released in which years", star) == (3, 4)


def test_something_of_the_others_may_be_one_hop_past_the_trip_the_draft_wrote():
    from qa.steps._path_grounding import ChainDraft, trip_lengths

    one_relation = ChainDraft(("directed by", "directed by"), 2, ("directed by", "directed by"))
    # a draft that folds "the genres of the films that share" into one step is a hop short
    assert trip_lengths("the films that share directors with Black Snake Moan were in which genres",
                        one_relation) == (2, 3)
    # the others themselves are the trip the draft says
    assert trip_lengths("Which films share a director with [Dark Habits]?", one_relation) == (2, 2)
    assert trip_lengths("which other films did the director of Popeye make", one_relation) == (2, 2)


def test_a_trip_past_the_drafts_length_stands_only_where_it_leads():
    from types import SimpleNamespace

    from qa.steps._path_grounding import PathGrounder

    def runs(*hops):  # ranked best first: (hops, round trip)
        return [SimpleNamespace(path=SimpleNamespace(hops=h, round_trip=t, labels=("directed by",) * (h - 1)
                                                     + ("in language",))) for h, t in hops]

    # the languages of the films that share directors: the three-hop trip leads
    leading = runs((3, True), (2, True), (1, False))
    assert PathGrounder.trips_in_reach(leading, [0, 1, 2], 2, 3) == ([0, 1], True)
    words = "what languages are the films that share directors with x in".split()
    assert PathGrounder.trips_in_reach(leading, [0, 1, 2], 2, 3, words=words) == ([0, 1], True)
    # a step on that the question does not name ("… also directed which films") is out of reach
    words = "the director of x also directed which films".split()
    assert PathGrounder.trips_in_reach(leading, [0, 1, 2], 2, 3, words=words) == ([1], False)
    # the director's other films: the two-hop trip leads, and the longer one is dropped
    trailing = runs((2, True), (3, True), (1, False))
    assert PathGrounder.trips_in_reach(trailing, [0, 1, 2], 2, 3) == ([0], False)
    # no trip of the draft's length: longer ones, then any path
    assert PathGrounder.trips_in_reach(runs((1, False), (3, True)), [0, 1], 2, 2) == ([1], False)
    assert PathGrounder.trips_in_reach(runs((1, False)), [0], 2, 3) == ([0], False)


def test_a_trip_one_hop_on_stands_where_the_question_alone_fits_it_by_the_margin():
    from types import SimpleNamespace

    from qa.steps._path_grounding import PathGrounder, extension_leads
    from qa.steps._paths import RelationPath

    def run(*steps):
        return SimpleNamespace(path=RelationPath("X", "x", tuple(steps), tuple(r for r, _ in steps)))

    there, back = ("directed_by", False), ("directed_by", True)
    # ranked by the draft's words: the films first; the genres of those films and of
    # another trip's films trail
    runs = [run(there, back), run(there, back, ("has_genre", False)), run(("written_by", False), ("written_by", True),
                                                                          ("has_genre", False)),
            run(there, back, ("starred_actors", False))]
    ranked = [0, 3, 2, 1]
    # "… were in which genres": the question's words and the answers fit the genres best
    fits = [0.80, 0.95, 0.99, 0.70]
    assert extension_leads(runs, ranked, fits, 0.08) == 1  # the other trip's step on is not weighed
    # only a step the question names: "genres" names *has_genre*; "films" names no step on
    assert PathGrounder.trips_in_reach(runs, ranked, 2, 3, fits, 0.08, "were in which genres".split()) == ([1, 0, 2],
                                                                                                       True)
    assert PathGrounder.trips_in_reach(runs, ranked, 2, 3, fits, 0.08, "also directed which films".split()) == ([0],
                                                                                                            False)
    assert PathGrounder.trips_in_reach(runs, ranked, 2, 3, fits, 0.08) == ([1, 0, 3, 2], True)
    # by less than the margin the films stand ("the director of X also directed which movies")
    close = [0.90, 0.95, 0.99, 0.70]
    assert extension_leads(runs, ranked, close, 0.08) is None
    assert PathGrounder.trips_in_reach(runs, ranked, 2, 3, close, 0.08) == ([0], False)
    # where the question asks for the others themselves, no trip past two hops is in reach
    assert PathGrounder.trips_in_reach(runs, ranked, 2, 2, fits, 0.08) == ([0], False)


def test_the_reading_sees_the_last_hop_of_the_steps_on_from_the_best_trip():
    from types import SimpleNamespace

    from qa.steps._path_grounding import PathGrounder
    from qa.steps._paths import RelationPath

    def run(*steps):
        return SimpleNamespace(path=RelationPath("X", "x", tuple(steps), tuple(r for r, _ in steps)),
                               terms=[SimpleNamespace(label=f"{steps[-1][0]} {len(steps)}")])

    there, back = ("directed_by", False), ("directed_by", True)
    runs = [run(there, back), run(there, back, ("written_by", False)), run(there, back, ("starred_actors", False)),
            run(there, back, there), run(("written_by", False), ("written_by", True), ("has_genre", False)),
            run(there)]
    fits = [0.7, 0.8, 0.9, 0.95, 0.99, 0.5]
    grounder = PathGrounder(None, None, read_paths=4)
    # the steps on from the trip, best by the question alone, at most half the paths read;
    # not the step back along the trip's own relation (to what the others share), nor a
    # step on from another trip
    assert grounder.onward_steps(runs, [0, 5, 1, 2, 3, 4], 2, fits) == [2, 1]
    # no trip of the draft's length, or no fits (not a trip question): nothing
    assert grounder.onward_steps(runs, [5, 1], 2, fits) == []
    # a step on whose answers hold what the others share (the director wrote some of his
    # films) is not shown: the model marks the director, and would pick his films' writers
    runs[1].terms.append(SimpleNamespace(label="directed_by 1"))
    assert grounder.onward_steps(runs, [0, 5, 1, 2, 3, 4], 2, fits) == [2]
    assert grounder.onward_steps(runs, [0, 1], 2, []) == []


def test_a_chain_that_stops_on_mediators_walks_on_to_what_they_hold(performances):
    # the performance joining the actor and the film is no answer: the character it holds is
    query = (f"SELECT DISTINCT ?p WHERE {{\n  ?p <{FB}film.performance.actor> <{FB}en.harrison_ford> .\n"
             f"  <{FB}en.raiders> <{FB}film.film.starring> ?p .\n}}")
    answer, run = mediated(performances, "Which character did Harrison Ford play in Raiders of the Lost Ark?",
                           query, "p")
    assert answer.answers == ["Indiana Jones"]
    assert run.trace["mediators"]["relation"].endswith("character")


def test_a_count_is_asked_as_the_list_it_counts_in_other_wordings():
    from qa.shapes._detect import listing_question

    assert listing_question("Count the films in which Ann Lee played Rose.") == \
        "which films in which Ann Lee played Rose."
    assert listing_question("How many times did Ann Lee play Rose in a film?") == \
        "in which films did Ann Lee play Rose?"


def pgmr_answer(performances, draft: str, question: str):
    """pgmr's answer to ``question`` on the performances store, the model writing ``draft``."""
    from qa import make_method

    store, index = performances
    return make_method("pgmr", QAContext(store, ScriptedLLM([draft] * 2), index=index)).answer(question)


def test_pgmr_moves_a_constraint_off_the_answer_onto_the_mediator(performances):
    # the draft hangs the actor on the character; the performance node holds both
    draft = ("SELECT DISTINCT ?answer WHERE { [ENT: Raiders of the Lost Ark] [REL: film starring] ?m . "
             "?m [REL: performance character] ?answer . ?answer [REL: performance actor] [ENT: Harrison Ford] }")
    result = pgmr_answer(performances, draft, "Which character did Harrison Ford play in Raiders of the Lost Ark?")
    assert result.answers == ["Indiana Jones"]
    assert f"?m <{FB}film.performance.actor> <{FB}en.harrison_ford>" in result.query


def test_pgmr_answers_from_the_mediator_two_names_share(performances):
    # a draft no reading of which returns rows: the actor and the film meet on one
    # performance, and what else it holds that the question names is the answer
    draft = ("SELECT DISTINCT ?answer WHERE { [ENT: Harrison Ford] [REL: character] ?answer . "
             "[ENT: Harrison Ford] [REL: directed] [ENT: Raiders of the Lost Ark] }")
    result = pgmr_answer(performances, draft, "What was Harrison Ford's character in Raiders of the Lost Ark?")
    assert result.answers == ["Indiana Jones"]
    assert result.trace["shared_mediator"]["relation"] == "film performance character"
    assert f"<{FB}en.raiders> <{FB}film.film.starring> ?m" in result.query


def test_an_answer_that_is_the_constraint_itself_walks_on_from_its_node(performances):
    # the chain ends on the characters, the constraint keeps the one the question names:
    # the question asks who played it, so the answer is one hop on from the performance
    query = (f"SELECT DISTINCT ?c WHERE {{\n  <{FB}en.raiders> <{FB}film.film.starring> ?m .\n"
             f"  ?m <{FB}film.performance.character> ?c .\n}}")
    answer, run = mediated(performances, "In Raiders of the Lost Ark, who was Indiana Jones?", query, "c")
    assert answer.answers == ["Harrison Ford"]
    assert run.trace["mediators"]["beside_the_constraint"] == "Indiana Jones"


def test_a_name_held_with_a_stray_space_is_held(performances):
    from qa.steps._retrieval import literal_names

    store, _ = performances
    assert literal_names(store, ["If adventure has a name, it must be Indiana Jones"]) == {
        "If adventure has a name, it must be Indiana Jones": '"If adventure has a name, it must be Indiana Jones "'}
    assert literal_names(store, ["Indiana Smith"]) == {}


def test_a_word_before_a_name_is_a_verb_not_a_modifier():
    from types import SimpleNamespace

    from qa.shapes import without_modifiers

    play = SimpleNamespace(text="play", written_as_name=False)
    crime = SimpleNamespace(text="crime", written_as_name=False)
    assert without_modifiers("In how many films did X play Leonard Chess?", [play]) == \
        "In how many films did X play Leonard Chess?"
    x = SimpleNamespace(text="X", written_as_name=True)
    assert without_modifiers("Which crime films did X direct?", [crime, x]) == "Which films did X direct?"


def test_a_name_in_lower_case_is_the_topic_not_a_modifier():
    from types import SimpleNamespace

    from qa.shapes import without_modifiers

    def mention(text):
        return SimpleNamespace(text=text, written_as_name=False)

    # the only name: the topic, whatever word follows it
    assert without_modifiers("where was sasha vujačić born", [mention("sasha vujačić")]) == \
        "where was sasha vujačić born"
    # several: the name of the most words (else the last) is the topic, the others modify
    assert without_modifiers("which crime films did tom hanks direct", [mention("crime"), mention("tom hanks")]) == \
        "which films did tom hanks direct"
    assert without_modifiers("which comedy films did madonna direct", [mention("comedy"), mention("madonna")]) == \
        "which films did madonna direct"
    # after a verb, a lower-case name is the topic, not a word of the asked phrase
    assert without_modifiers("what kind of music does peter elkas make?", [mention("music"), mention("peter elkas")]) \
        == "what kind of music does peter elkas make?"
    assert without_modifiers("How many comedy movies did [X] direct?",
                             [mention("comedy"), SimpleNamespace(text="X", written_as_name=True)]) == \
        "How many movies did [X] direct?"


def test_others_of_a_role_of_the_entity_are_a_round_trip():
    from qa.steps._path_grounding import asks_round_trip

    assert asks_round_trip("Which other songs did the composer of Yesterday write?")
    assert asks_round_trip("Emma's author wrote which other novels?")
    assert asks_round_trip("What else has the publisher of Dune published?")
    # "other" without a role of the entity, or a role without "other": no trip back
    assert not asks_round_trip("What other names does Madonna have?")
    assert not asks_round_trip("Who is the author of Emma?")


def test_a_bracketed_name_is_its_mention_not_a_value_to_match(performances):
    # the store holds every name as a value too ("Harrison Ford" on its entity): a name in
    # brackets that a mention covers is that entity, and only the character is a value
    from qa.shapes import read_shape

    store, index = performances
    question = "In how many films did [Harrison Ford] play Indiana Jones?"
    found = read_shape(store, index, question).literals
    assert [c.words for c in found] == ["Indiana Jones"]


def test_pgmr_reads_a_name_cut_out_of_a_value_as_that_value(performances):
    # the model writes "[ENT: Indiana]" of the character "Indiana Jones", which the store
    # holds as a value: the chain runs from the actor, and the value constrains its films
    draft = ("SELECT DISTINCT ?answer WHERE { [ENT: Harrison Ford] [REL: performance actor] ?m . "
             "?answer [REL: film starring] ?m . [ENT: Indiana] [REL: performance character] ?m }")
    result = pgmr_answer(performances, draft, "Which films did [Harrison Ford] play Indiana Jones in?")
    assert sorted(result.answers) == ["Raiders of the Lost Ark", "Temple of Doom"]
    assert result.trace["names"]["merged_into_value"] == ["Harrison Ford", "Indiana Jones"]


def test_pgmr_answers_from_the_node_a_drafted_value_and_a_named_film_share(performances):
    # the draft names only the character, a value: the film the question names and that
    # value meet on one performance, and the actor it holds is the answer
    draft = "SELECT DISTINCT ?actor WHERE { [ENT: Marion Ravenwood] [REL: performance actor] ?actor }"
    result = pgmr_answer(performances, draft, "Name the actor who portrayed Marion Ravenwood in Raiders of the Lost Ark.")
    assert result.answers == ["Karen Allen"]
    assert result.trace["shared_mediator"]["joined"] == [f"{FB}en.raiders", '"Marion Ravenwood"']


def test_pgmr_finds_the_films_on_the_nodes_an_actor_and_a_drafted_value_share(performances):
    # the draft names only the character; the actor and the value meet on performances,
    # and the films are one hop back from them (the film holds its performances)
    draft = "SELECT DISTINCT ?answer WHERE { [ENT: Indiana Jones] [REL: performance character] ?answer }"
    result = pgmr_answer(performances, draft, "In which movies did [Harrison Ford] take the role of Indiana Jones?")
    assert sorted(result.answers) == ["Raiders of the Lost Ark", "Temple of Doom"]
    assert result.trace["shared_mediator"]["backward"] is True


def test_pgmr_reads_a_person_s_name_as_the_character_a_film_holds(performances):
    # in Heat Wave, Karen Allen plays a character named "Harrison Ford": the draft ties the
    # person to the film as an actor, which no row holds; the name as a value does
    draft = ("SELECT DISTINCT ?answer WHERE { [ENT: Heat Wave] [REL: film starring] ?m . "
             "?m [REL: performance actor] [ENT: Harrison Ford] }")
    result = pgmr_answer(performances, draft, "Which actor was Harrison Ford in Heat Wave?")
    assert result.answers == ["Karen Allen"]
    assert result.trace["shared_mediator"]["joined"] == [f"{FB}en.heat", '"Harrison Ford"']


@pytest.mark.parametrize("question, word, verb", [
    ("Count the films in which [Cameron Diaz] played the role of Fiona.", "played", True),
    ("who starred in Alien", "starred", True),
    ("which animated films did Pixar make", "animated", False),
    ("Is [Up] an animated film?", "animated", False),
    ("How fast is the speed of light", "speed", False),
])
def test_a_past_form_not_after_a_determiner_is_a_verb_not_a_name(question, word, verb):
    from qa.shapes._mentions import reads_as_verb

    at = question.index(word)
    assert reads_as_verb(question, (at, at + len(word))) is verb


def test_a_no_stands_only_when_no_namesake_of_the_value_joins_the_subject(tmp_path_factory):
    # "comedy" names the genre and a tag: with the tag chosen, the film's other tags would
    # say "no", though the film's genre is Comedy
    from qa.shapes import ShapeReading, answer_boolean, detect_shape
    from qa.shapes._mentions import Mention
    from qa.shapes._words import without_mentions

    store, index = indexed_store(tmp_path_factory, "tagged.txt", "tsv",
                                 FILMS + "Night Harbor|tags|harbor\nSalt Road|tags|comedy\n")
    with store:
        [film] = [c for c in index.link("Night Harbor", k=3) if c.label == "Night Harbor"]
        found = {c.label: c.iri for c in index.link("comedy", k=5) if c.label.lower() == "comedy"}
        assert set(found) == {"Comedy", "comedy"}
        question = "Is [Night Harbor] a comedy?"
        subject = Mention((1, 13), "Night Harbor", film.iri, film.label)
        tag = Mention((17, 23), "comedy", found["comedy"], "comedy", namesakes=(found["Comedy"],))
        run = MethodRun(ScriptedLLM([]))
        reading = ShapeReading(question, [subject, tag], [], detect_shape(question), "yes_no",
                               asked_of_names=without_mentions(question, [subject, tag]))
        answer = answer_boolean(store, index, reading, "test", run)
        assert answer.answers == ["yes"]
        assert run.trace["boolean"]["checks"][0]["relation"] == "genre"


@pytest.fixture(scope="module")
def tagged(tmp_path_factory):
    """FILMS with tags that are also genre words and a year ("film", "1979")."""
    store, index = indexed_store(tmp_path_factory, "kinds.txt", "tsv",
                                 FILMS + "Night Harbor|tags|harbor\nSalt Road|tags|film\nSalt Road|tags|1979\n")
    with store:
        yield store, index


@pytest.mark.parametrize("question, verdict", [
    ("Is [Night Harbor] a Comedy film?", "yes"),
    ("Is [Night Harbor] a comedy film?", "yes"),
    ("Is [Night Harbor] a Drama film?", "no"),
    ("Is [Night Harbor] a comedy and a film?", "no"),
    ("Is [Night Harbor] a 1979 film?", "yes"),  # the year a literal, not the entity "1979"
    ("Is [Night Harbor] a 1985 film?", "no"),
])
def test_the_word_that_closes_a_value_s_noun_phrase_names_the_kind_not_a_second_value(tagged, question, verdict):
    # the store also holds a tag "film", which Night Harbor lacks: "a Comedy film" asks
    # about the genre; "a comedy and a film" asks about both
    from qa.shapes import answer_in_shape, read_shape

    store, index = tagged
    assert read_shape(store, index, question).mentions[-1].text == "film"
    with store.reading():
        answer = answer_in_shape(store, index, question, MethodRun(ScriptedLLM([])), "test", chain=None)
    assert answer.answers == [verdict]


@pytest.mark.parametrize("question, expected", [
    ("When was the last film written by [Ann Lee] released?", ["2007"]),
    ("What year did [Ann Lee]'s first film come out?", ["1979"]),
])
def test_a_superlative_over_values_is_the_extreme_value(question, expected):
    # the chain answers the years themselves: the superlative is the first or last year,
    # not the list of them
    from qa.shapes import ShapeReading, answer_superlative, detect_shape

    years = ["1985", "2007", "1979"]
    chain = Answer(question=question, method="test", answers=years, answer_iris=[None] * 3,
                   values=[{"value": y, "lexical": y, "datatype": "http://www.w3.org/2001/XMLSchema#integer", "kind": "number"} for y in years])
    shape = detect_shape(question)
    assert shape.kind == "superlative"
    reading = ShapeReading(question, [], [], shape, "value")
    answer = answer_superlative(None, None, reading, chain, "test", MethodRun(ScriptedLLM([])))
    assert answer.answers == expected and answer.shape == "superlative"


ROLES = """Salt Road|directed_by|Bo Park
Salt Road|starred_actors|Bo Park
Glass River|starred_actors|Bo Park
Glass River|directed_by|Ann Lee
Night Harbor|directed_by|Ann Lee
Night Harbor|starred_actors|Cy Moss
Iron Bay|directed_by|Ann Lee
Rust Hill|starred_actors|Bo Park
"""


roles = store_fixture("roles.txt", "tsv", ROLES)


@pytest.mark.parametrize("question, verdict", [
    ("Did [Bo Park] both direct and act in Salt Road?", "yes"),
    ("Did [Bo Park] direct Salt Road and appear in it too?", "yes"),
    ("Did Bo Park direct Salt Road and appear in it too?", "yes"),
    ("Did [Bo Park] both direct and act in Glass River?", "no"),  # acted only; directed other films
    ("Was [Glass River] directed and acted in by Bo Park?", "no"),
    ("Did [Bo Park] act in Glass River?", "yes"),  # one role: one relation is enough
    # Ann Lee acted in nothing: the film's own actors say who plays the other role
    ("Did [Ann Lee] both direct and act in Night Harbor?", "no"),
    # Rust Hill has no director in the store, but Bo Park's directed films are known
    ("Did [Bo Park] both direct and act in Rust Hill?", "no"),
    # Iron Bay has no actors in the store, and Ann Lee acted in nothing: no one can say
    ("Did [Ann Lee] both direct and act in Iron Bay?", None),
])
def test_two_roles_asked_at_once_must_both_hold(roles, question, verdict):
    store, index = roles
    with store.reading():
        answer = answer_in_shape(store, index, question, MethodRun(ScriptedLLM([])), "test", chain=None)
    if verdict is None:
        assert answer.answers == [] and answer.refusal.reason == "no_answer"
    else:
        assert answer.answers == [verdict]


# MetaQA-shaped: one entity "Zulu" is both a film and a language
LANGUAGES = """Zulu Dawn|in_language|English
Zulu Dawn|in_language|Zulu
Zulu|in_language|English
Sunrise Road|in_language|Zulu
Sunrise Road|in_language|English
Cold Harbour|in_language|Zulu
"""


languages = store_fixture("languages.txt", "tsv", LANGUAGES)


def test_a_name_written_twice_is_linked_where_it_stands_alone(languages):
    from qa.steps._retrieval import question_names_not_held

    _, index = languages
    question = "Are Zulu Dawn and Zulu in the same language?"
    spans = {c.label: c.span for c in index.link_question(question)}
    assert spans["Zulu Dawn"] == (4, 13) and spans["Zulu"] == (18, 22)  # not the "Zulu" of "Zulu Dawn"
    assert question_names_not_held(index, question) == []


@pytest.mark.parametrize("question, verdict", [
    # a fact joins each pair (the film is in the language Zulu), but the question compares
    # the two films' languages: Zulu the film is in English only
    ("Do [Sunrise Road] and Zulu share a language?", "yes"),
    ("Are [Cold Harbour] and Zulu in the same language?", "no"),
    ("Is Cold Harbour in the same language as Zulu?", "no"),
])
def test_two_named_things_compared_are_compared_even_where_a_fact_joins_them(languages, question, verdict):
    from qa.shapes import answer_in_shape

    store, index = languages
    same = lambda m: "yes" if re.search(r"^Query: do .* have the same in language", m[-1]["content"], re.M) else "no"  # noqa: E731
    with store.reading():
        answer = answer_in_shape(store, index, question, MethodRun(ScriptedLLM([same] * 6)), "test", chain=None)
    assert answer.answers == [verdict] and answer.shape == "comparison"


def test_words_after_a_constant_open_its_end_whatever_came_before():
    from qa.steps._query_graph import read_value_constraints
    (later,) = read_value_constraints("How many of [Steven Spielberg]'s films were released in 1991 or later?")
    assert (later.op, later.low, later.words) == (">=", 1991.0, "in 1991 or later")
    (earlier,) = read_value_constraints("Which films of X were released 1990 or earlier?")
    assert (earlier.op, earlier.low) == ("<=", 1990.0)
    (exact,) = read_value_constraints("Which films of X came out in 1985?")
    assert exact.op == "="


@pytest.fixture(scope="module")
def films_with_sports(tmp_path_factory):
    # a tag "sports" on another director's film, the genre "Sport" on one of Ann Lee's
    yield from films_with(tmp_path_factory, "Quiet Engines|genre|Sport\nSalt Road|tag|sports\n")


def test_a_constraint_word_may_name_an_entity_in_its_other_number(films_with_sports):
    """"sports" names the tag exactly and the genre "Sport" in the singular: the one the
    chain's answers are tied to is meant, and the count counts only those (it counted all
    five of a director's films when only the tag was tried)."""
    for question in ("How many sports films did Ann Lee direct?", "Which sports films did [Ann Lee] direct?"):
        answer, _, _ = film_chain(films_with_sports, question)
        assert answer.answers in (["1"], ["Quiet Engines"]), question
        assert any(c["applied"] and c["entity"] == "Sport" for c in answer.constraints), answer.constraints


def test_the_reading_leaves_no_unasked_trip_for_the_path_it_moved_from():
    """Marking a country that shares Costa Rica's official language does not move "what
    type of money do they use in costa rica" from its currency to those countries; a trip
    along a relation the question names ("the films directed by the director of X"), or
    one from a path that is a trip itself, still may be taken."""
    from qa.steps._path_grounding import PathGrounder, question_words
    from qa.steps._paths import RelationPath

    def path(*steps):
        return RelationPath("Costa Rica", "x", tuple(steps), tuple(r.replace("_", " ") for r, _ in steps))

    currency = path(("currency_used", False))
    shares_language = path(("official_language", False), ("official_language", True))
    words = question_words("what type of money do they use in costa rica")
    assert PathGrounder.unasked_trip(shares_language, currency, words)
    assert not PathGrounder.unasked_trip(currency, currency, words)
    assert not PathGrounder.unasked_trip(shares_language, currency,
                                         question_words("which countries have the official language of costa rica"))
    on = path(("official_language", False), ("official_language", True), ("currency_used", False))
    assert not PathGrounder.unasked_trip(on, currency, words)  # a step on is a trip of its own kind

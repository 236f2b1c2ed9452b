"""Question shapes beyond chains (qa.shapes): the shape read from a question, literal
values printed as people read them, and yes/no, comparison, count and superlative answers
on the demo store, with the chain part given (no model: the real-model runs are in
test_shapes_llm.py)."""
from __future__ import annotations

import json

import pytest

import kgstore
from kgstore import Store
from kgstore.terms import WD, WDT
from qa import Answer, QAContext, ScriptedLLM
from qa.methods import MethodRun
from qa.shapes import answer_in_shape, counted_query, detect_shape, question_mentions
from qa.shapes._mentions import choose_namesake
from qa.steps._path_grounding import asks_round_trip
from qa.steps._values import date_text, literal_value

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)
from test_qa_fixtures import full_statements_store

XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.mark.parametrize("question, kind, cue, phrase, yes_no", [
    ("How many countries does the Andes cover?", "count", None, "", False),
    ("What is the number of films directed by X?", "count", None, "", False),
    ("Is Mount Everest in Nepal?", "boolean", None, "", False),
    ("Did Douglas Adams study at Cambridge?", "boolean", None, "", False),
    ("Which country has the larger population, India or Nepal?", "comparison", "larger", "population", False),
    ("Who covers more countries, the Andes or the Himalayas?", "comparison", "more", "countries", False),
    ("Is India larger than Nepal?", "comparison", "larger", "india", True),
    ("Who was born first, Douglas Adams or Barack Obama?", "comparison", "first", "born", False),
    ("What is the highest mountain in the Himalayas?", "superlative", "highest", "mountain", False),
    ("Which film directed by X is the most recent?", "superlative", "most recent", None, False),
    ("When was Douglas Adams born?", "chain", None, "", False),
    ("What is the first name of Douglas Adams?", "chain", None, "", False),
    ("the director of [Big] also directed which movies", "chain", None, "", False),
    # yes/no put to the reader, and statements with a tag that asks whether they hold
    ("Would you call [Big] a comedy?", "boolean", None, "", False),
    ("Would you say Douglas Adams studied at Cambridge?", "boolean", None, "", False),
    ("Can you name a film directed by X?", "chain", None, "", False),
    ("Could you tell me who directed [Big]?", "chain", None, "", False),
    ("[Penny Marshall] directed Big, didn't she?", "boolean", None, "", False),
    ("[Big]: is that a comedy?", "boolean", None, "", False),
    ("Big: is that a comedy?", "boolean", None, "", False),
    ("[Big]: who directed it?", "chain", None, "", False),
    ("Mount Everest is in Nepal, isn't it?", "boolean", None, "", False),
    ("Douglas Adams studied at Cambridge, right?", "boolean", None, "", False),
    ("Who directed Big, do you know?", "chain", None, "", False),
    # verbs of time compare dates
    ("Does [Big] predate Splash?", "comparison", "predate", None, True),
    ("[Big] came out after Splash, didn't it?", "comparison", "after", None, True),
    ("Which films did [Ann Lee] direct after 1990?", "chain", None, "", False),
    # two options joined by "or" ask to choose, whatever the question opens with
    ("Was [Big] or Splash made first?", "comparison", "first", None, False),
    ("Is India larger than Nepal or not?", "comparison", "larger", "india", True),
])
def test_the_shape_is_read_from_the_question(question, kind, cue, phrase, yes_no):
    shape = detect_shape(question)
    assert shape.kind == kind
    assert shape.cue == cue
    if phrase is not None:
        assert shape.phrase == phrase
    assert shape.yes_no == yes_no


def test_directions_follow_the_word_and_the_kind_of_value():
    older = detect_shape("Who is older, Douglas Adams or Terry Pratchett?")
    assert older.direction(dates=True) == "min"  # the earlier birth date
    assert older.direction(dates=False) == "max"  # the larger age
    assert detect_shape("Which is smaller, India or Nepal?").direction(dates=False) == "min"


@pytest.mark.parametrize("lexical, datatype, precision, text", [
    ("1952-03-11T00:00:00Z", XSD + "dateTime", None, "1952-03-11"),
    ("1952-01-01T00:00:00Z", XSD + "dateTime", "year", "1952"),
    ("1952-03-01T00:00:00Z", XSD + "dateTime", "month", "1952-03"),
    ("-0500-01-01T00:00:00Z", XSD + "dateTime", "year", "-0500"),
    ("2001-05-11T14:30:00Z", XSD + "dateTime", None, "2001-05-11 14:30:00 UTC"),
    ("+8848.86", XSD + "decimal", None, "8848.86"),
    ("1210854977", XSD + "integer", None, "1210854977"),
    ("Bharat", None, None, "Bharat"),
])
def test_literals_print_as_people_read_them(lexical, datatype, precision, text):
    assert literal_value(lexical, datatype, precision=precision).text == text


def test_a_quantity_prints_with_its_unit_and_json_keeps_the_lexical_form():
    value = literal_value("+8848.86", XSD + "decimal", unit="metre")
    assert value.text == "8848.86 metre"
    assert value.to_dict() == {"value": "8848.86 metre", "lexical": "+8848.86", "datatype": XSD + "decimal",
                               "kind": "number", "unit": "metre"}
    assert date_text("not a date") is None


@pytest.mark.parametrize("question, plain", [
    ("what is the oldest film starring [Bill Cosby]", "what is the film starring [Bill Cosby]"),
    ("what is the most recent film written by [X]", "what is the film written by [X]"),
    ("Which film directed by X is the most recent?", "Which film directed by X is?"),
])
def test_a_superlative_s_chain_is_asked_without_the_superlative(question, plain):
    from qa.shapes._detect import without_superlative

    assert without_superlative(question, detect_shape(question).cue) == plain


def test_a_chain_query_is_counted_as_written():
    query = "SELECT DISTINCT ?x WHERE {\n  <a> <p> ?x .\n}"
    assert counted_query(query) == "SELECT (COUNT(DISTINCT ?x) AS ?count) WHERE {\n  <a> <p> ?x .\n}"
    assert counted_query("ASK { ?s ?p ?o }") is None


@pytest.mark.parametrize("question, trip", [
    ("the director of [X] also directed which movies", True),
    ("who are co-stars of [C]", True),
    ("which films share the same actor of [A]", True),
    ("who is the costume designer of [X]", False),
    ("what films did [X] direct", False),
    ("Name the other films by whoever directed [X].", True),
    ("Which other books did the person who wrote [X] write?", True),
    ("Name the other films of [X].", False),
    ("what is the henry_vii_of_england 's wife 's other half ?", False),  # one spouse, not others
])
def test_round_trip_questions_are_recognised(question, trip):
    assert asks_round_trip(question) is trip


@pytest.mark.parametrize("question, others", [
    ("Name the other films by whoever directed [X].", True),
    ("What else did [X]'s director direct?", True),
    ("[X]'s writer wrote what else?", True),
    ("Which other movies did the director of [X] make?", True),
    ("The director of [X] also directed which films?", False),  # a trip, but not worded as "others"
    ("Which other films are there?", False),  # no role of a named thing
])
def test_others_of_a_role_are_a_trip_there_and_back(question, others):
    from qa.steps._path_grounding import asks_for_others

    assert asks_for_others(question) is others


@pytest.fixture(scope="module")
def demo(demo_store):
    with Store.open(demo_store, read_only=True) as store:
        context = QAContext(store, ScriptedLLM([]))
        yield store, context.get_index()


def shaped(demo, question, chain=None):
    store, index = demo
    # a model that judges no composed query graph an answer: the shape's own reading answers
    run = MethodRun(ScriptedLLM(["no"] * 40))
    fallback = chain or (lambda *_: pytest.fail(f"{question!r} fell back to the chain"))
    return answer_in_shape(store, index, question, run, "test", fallback), run


def test_yes_comes_with_the_fact(demo):
    answer, _ = shaped(demo, "Is Mount Everest in Nepal?")
    assert answer.answers == ["yes"] and answer.shape == "boolean"
    assert answer.values[0]["datatype"] == XSD + "boolean"
    assert [(e.s, e.p, e.o) for e in answer.evidence] == [(WD + "Q513", WDT + "P17", WD + "Q837")]


def test_no_comes_with_the_store_s_other_values(demo):
    answer, _ = shaped(demo, "Is Mount Everest in Chile?")
    assert answer.answers == ["no"]
    assert {e.o for e in answer.evidence} == {WD + "Q837", WD + "Q148"}  # Nepal and China
    assert {e.p for e in answer.evidence} == {WDT + "P17"}


def test_a_fact_the_store_cannot_judge_is_refused(demo):
    # Douglas Adams has no relation whose values are mountain ranges: open world, no answer
    answer, _ = shaped(demo, "Did Douglas Adams climb the Himalayas?")
    assert answer.refused and answer.refusal.reason == "no_answer"
    assert "cannot say" in answer.refusal.message


def test_comparison_answers_with_both_values_as_evidence(demo):
    answer, run = shaped(demo, "Which country has the larger population, India or Nepal?")
    assert answer.answers == ["India"] and answer.answer_iris == [WD + "Q668"]
    compared = {(e.s, e.p) for e in answer.evidence}
    assert compared == {(WD + "Q668", WDT + "P1082"), (WD + "Q837", WDT + "P1082")}
    assert run.trace["comparison"]["direction"] == "max"


def test_comparison_counts_facts_when_the_words_name_an_entity_relation(demo):
    answer, _ = shaped(demo, "Who covers more countries, the Andes or the Himalayas?")
    assert answer.answers == ["Andes"]
    smaller, _ = shaped(demo, "Which covers fewer countries, the Andes or the Himalayas?")
    assert smaller.answers == ["Himalayas"]


def test_a_yes_no_comparison_says_yes_or_no(demo):
    assert shaped(demo, "Is India larger than Nepal?")[0].answers == ["yes"]
    assert shaped(demo, "Is Nepal larger than India?")[0].answers == ["no"]


def test_count_is_the_chain_counted_with_its_entities_as_evidence(demo):
    store, _ = demo
    countries = ["Q414", "Q750", "Q298", "Q739", "Q736", "Q419", "Q717"]
    query = f"SELECT DISTINCT ?c WHERE {{\n  <{WD}Q5456> <{WDT}P17> ?c .\n}}"
    # a chain that returned only 3 of the 7 rows (a capped query): the count runs the query
    chain = Answer(question="q", method="test", answers=["a", "b", "c"],
                   answer_iris=[WD + q for q in countries[:3]], query=query)
    asked = []
    answer, run = shaped(demo, "How many countries does the Andes cover?", lambda *text: asked.append(text) or chain)
    assert asked == [("which countries does the Andes cover?",)]  # the list it counts
    assert answer.answers == ["7"] and answer.shape == "count"
    assert answer.values[0]["datatype"] == XSD + "integer"
    assert run.trace["count"]["total"] == 7


def test_superlative_orders_the_chain_s_answers(demo):
    iris = [WD + "Q668", WD + "Q837", WD + "Q148"]  # India, Nepal, China
    chain = Answer(question="q", method="test", answers=["India", "Nepal", "China"], answer_iris=iris)
    asked = []
    answer, run = shaped(demo, "Which of the countries bordering Nepal has the largest population?",
                         lambda *text: asked.append(text) or chain)
    assert asked == [("Which of the countries bordering Nepal has the population?",)]  # the chain it orders
    assert answer.shape == "superlative"
    # the sample holds no population for China: India (1.2 billion) against Nepal
    assert answer.answer_iris == [WD + "Q668"]
    assert run.trace["superlative"]["measures"][0]["measure"]["label"] == "population"
    assert run.trace["superlative"]["valued"] == 2
    assert {e.s for e in answer.evidence if e.p == WDT + "P1082"} == {WD + "Q668", WD + "Q837"}


def test_the_namesake_is_chosen_by_the_rest_of_the_question(tmp_path):
    from indexer import build_index

    def item(qid, label, description, claims):
        return {"type": "item", "id": qid, "labels": {"en": {"language": "en", "value": label}},
                "descriptions": {"en": {"language": "en", "value": description}}, "aliases": {},
                "claims": {p: [{"mainsnak": {"snaktype": "value", "property": p, "datatype": "wikibase-item",
                                             "datavalue": {"type": "wikibase-entityid",
                                                           "value": {"entity-type": "item", "id": o}}},
                                "type": "statement", "rank": "normal"}] for p, o in claims.items()}}
    dump = [item("Q90", "Paris", "capital and largest city of France", {"P17": "Q142"}),
            item("Q830149", "Paris", "city in Lamar County, Texas, United States", {"P17": "Q30"}),
            item("Q142", "France", "country in Western Europe", {}),
            item("Q30", "United States", "country in North America", {}),
            {"type": "property", "id": "P17", "datatype": "wikibase-item",
             "labels": {"en": {"language": "en", "value": "country"}}, "descriptions": {}, "aliases": {}, "claims": {}}]
    path = tmp_path / "dump.json"
    path.write_text("[\n" + ",\n".join(json.dumps(d) for d in dump) + "\n]\n")
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "wikidata-json", path)
        build_index(store, kinds=("entities",))
    with Store.open(tmp_path / "store", read_only=True) as store:
        index = QAContext(store, ScriptedLLM([])).get_index()
        texas = question_mentions(index, "Which county of Texas is the small town of Paris in?", [])
        assert [m.iri for m in texas] == [WD + "Q830149"]
        assert texas[0].namesakes == (WD + "Q90",)
        france = question_mentions(index, "What is the capital city Paris of France known for?", [])
        assert france[0].iri == WD + "Q90"
        candidates = [c for c in index.link_question("Paris in Texas", k=5) if c.label == "Paris"]
        assert choose_namesake(index, "Paris in Texas", candidates[0].span, candidates).iri == WD + "Q830149"


def test_statement_nodes_give_a_quantity_its_unit_and_a_date_its_precision(sample_dir, tmp_path):
    from qa.steps._value_details import literal_details

    full_statements_store(tmp_path / "full", sample_dir / "sample-wikidata.json")
    with Store.open(tmp_path / "full", read_only=True) as store:
        unit, _ = literal_details(store, WD + "Q513", WDT + "P2044", "8848.86")
        assert unit == "metre"
        assert literal_details(store, WD + "Q42", WDT + "P569", "1952-03-11T00:00:00Z") == (None, "day")
        assert literal_details(store, WD + "Q668", WDT + "P1082", "1210854977") == (None, None)  # a plain number
    assert literal_value("8848.86", XSD + "decimal", unit=unit).text == "8848.86 metre"


def test_a_question_at_a_time_reads_the_statement_nodes(sample_dir, tmp_path):
    full_statements_store(tmp_path / "full", sample_dir / "sample-wikidata.json", index_kinds=("entities",))
    with Store.open(tmp_path / "full", read_only=True) as store:
        index = QAContext(store, ScriptedLLM([])).get_index()
        for year, population in (("2011", "26494504"), ("2021", "29164578")):
            answer, run = shaped((store, index), f"What was the population of Nepal in {year}?")
            assert answer.answers == [population] and answer.shape == "qualifier"
            assert run.trace["qualifiers"]["relation"] == "population"
            assert any(e.p.endswith("qualifier/P585") and e.o.startswith(year) for e in answer.evidence)
        # no statement holds 1990: the chain answers instead
        chain = Answer(question="q", method="test", answers=["29164578"], answer_iris=[None])
        assert shaped((store, index), "What was the population of Nepal in 1990?", lambda *_: chain)[0] is chain


@pytest.fixture(scope="module")
def values_store(sample_dir, tmp_path_factory):
    """data/sample-wikidata-values.json with its statement nodes, and an entities index."""
    path = full_statements_store(tmp_path_factory.mktemp("values") / "store",
                                 sample_dir / "sample-wikidata-values.json", index_kinds=("entities",))
    with Store.open(path, read_only=True) as store:
        yield store, QAContext(store, ScriptedLLM([])).get_index()


def test_a_start_time_without_an_end_is_still_open(values_store):
    for question, spouse in (("Who was Douglas Adams's spouse in 1995?", "Jane Belson"),
                             ("Who was [Michelle Obama]'s spouse in 2015?", "Barack Obama")):
        answer, run = shaped(values_store, question)
        assert answer.answers == [spouse] and answer.shape == "qualifier", run.trace
    # after the marriage's end time, no statement holds: the chain answers
    chain = Answer(question="q", method="test", answers=["?"], answer_iris=[None])
    assert shaped(values_store, "Who was Douglas Adams's spouse in 2005?", lambda *_: chain)[0] is chain


def test_when_a_joining_statement_began_or_ended(values_store):
    for question, date in (("When did Douglas Adams marry Jane Belson?", "1991-11-25"),
                           ("When did Douglas Adams get married to Jane Belson?", "1991-11-25"),
                           ("When did Douglas Adams's marriage to Jane Belson end?", "2001-05-11")):
        answer, run = shaped(values_store, question)
        assert answer.answers == [date], (question, run.trace)


def test_how_many_at_a_time_is_the_number_a_dated_statement_holds(values_store):
    answer, run = shaped(values_store, "How many people lived in Italy in 2001?")
    assert answer.answers == ["56995744"] and answer.shape == "qualifier", run.trace


def test_a_round_trip_is_two_hops_when_the_draft_names_one_relation():
    from qa.steps._path_grounding import ChainDraft

    def draft(*words):
        return ChainDraft(tuple(words), len(words), (words[0], words[-1]))

    assert draft("directed by", "directed by", "directed by").trip_hops == 2  # written three times, one relation
    assert draft("directed by", "directed by").trip_hops == 2
    assert draft("directed by", "directed by", "has genre").trip_hops == 3  # a hop on from the others
    assert draft("directed by").trip_hops == 2


def test_a_draft_keeps_only_the_names_the_question_brackets():
    from qa.methods.pgmr._placeholders import parse_placeholder_query

    def kept(draft, names):
        query = parse_placeholder_query(draft).keeping_names(names)
        return query.entities(), [(p.subject.text, p.object.text) for p in query.patterns]

    # a common word drafted as an entity becomes a variable
    assert kept("SELECT DISTINCT ?answer WHERE { [ENT: Together] [REL: starred actors] ?answer . "
                "?answer [REL: starred actors] [ENT: Tom Neal] }", ["Tom Neal"]) == \
        (["Tom Neal"], [("?named1", "?answer"), ("?answer", "Tom Neal")])
    # part of a bracketed name is that name
    assert kept("SELECT DISTINCT ?answer WHERE { [ENT: Erik the Viking] [REL: directed by] ?d . "
                "?answer [REL: directed by] [ENT: The Viking] }", ["Erik the Viking"])[0] == ["Erik the Viking"]
    # a name that writes a relation into a bracketed name stays, and "It" is not inside "Italy"
    assert kept("SELECT DISTINCT ?answer WHERE { [ENT: X's heir] [REL: heir] ?answer }", ["X"])[0] == ["X's heir"]
    assert kept("SELECT DISTINCT ?answer WHERE { [ENT: Italy] [REL: capital] ?answer }", ["It"])[0] == []
    # no brackets: the draft as written
    query = parse_placeholder_query("SELECT DISTINCT ?answer WHERE { [ENT: Together] [REL: directed by] ?answer }")
    assert query.keeping_names([]) is query


def test_a_draft_s_part_of_a_longer_name_is_that_name_and_other_names_stay():
    from qa.methods.pgmr._placeholders import parse_placeholder_query

    query = parse_placeholder_query("SELECT DISTINCT ?answer WHERE { [ENT: I Am the Law] [REL: directed by] ?m . "
                                    "[ENT: The Law] [REL: directed by] ?m . [ENT: Tom Neal] [REL: starred] ?answer }")
    merged = query.merged_into(["I Am the Law", "Tom Neal"])
    assert merged.entities() == ["I Am the Law", "Tom Neal"]
    assert len(merged.patterns) == 2  # the two patterns that became one are one
    # a name no longer one holds is kept as written (merging never drops a name)
    assert query.merged_into(["Big"]) is query
    # the same words, punctuated otherwise by the model, are written as the question writes them
    quoted = parse_placeholder_query("SELECT DISTINCT ?answer WHERE { [ENT: Anne Nagel] [REL: actor] ?m . "
                                     "?m [REL: character] [ENT: Leonore Casey Case] }")
    assert quoted.merged_into(['Leonore "Casey" Case']).entities() == ["Anne Nagel", 'Leonore "Casey" Case']


def test_the_role_a_round_trip_shares_is_read_from_the_question_and_matched_to_labels():
    from qa.steps._path_grounding import _names_role, role_words

    assert role_words("Name the other films by whoever directed [X].") == ["directed"]
    assert role_words("Which films share a writer with [X]?") == ["writer"]
    assert role_words("What else did [X]'s director direct?") == ["director"]
    assert _names_role("directed by", ["director"]) and _names_role("written by", ["wrote"])
    assert not _names_role("has genre", ["directed"]) and not _names_role("directed by", ["writer"])
    # a compound names what it ends in: a screenwriter is a writer
    assert _names_role("written by", ["screenwriter"]) and not _names_role("directed by", ["screenwriter"])
    assert not _names_role("starred actors", ["directors"]) and not _names_role("in language", ["screenwriter"])


def test_a_round_trip_turns_back_at_the_named_entity_s_first_hop():
    from qa.steps._paths import RelationPath

    def path(*steps):
        return RelationPath("X", "x", tuple(steps), tuple(p for p, _ in steps))

    assert path(("directed_by", False), ("directed_by", True)).round_trip
    assert path(("starred", False), ("starred", True), ("release_year", False)).round_trip
    assert not path(("directed_by", False), ("born_in", False)).round_trip
    assert not path(("directed_by", False)).round_trip
    # there and back and there again: the director once more, not the director's films
    assert not path(("directed_by", False), ("directed_by", True), ("directed_by", False)).round_trip
    # a round trip that does not start at the named entity: the films sharing actors with X's films
    assert not path(("written_by", True), ("starred", False), ("starred", True)).round_trip


def test_more_than_a_number_is_a_filter_not_a_comparison():
    assert detect_shape("Which country of the Himalayas has more than 100 million people?").kind == "chain"
    assert detect_shape("Which films have more than a million votes?").kind == "chain"
    assert detect_shape("Is India larger than Nepal?").kind == "comparison"


def test_first_and_last_order_things_where_a_determiner_or_which_thing_asks_so():
    # "the last <noun>", "X's first <noun>", "which <noun> … first": one thing first or last in time
    for question in ("What was the last novel with a foreword by Ann Patchett?",
                     "Which Ridley Scott film was released first?",
                     "Ann Patchett's earliest novel as an editor?",
                     "What is their largest city?"):
        assert detect_shape(question).kind == "superlative", question
    # a name, a time, a kinship or a yes/no question about that one: no order asked for
    for question in ("What is the first name of Ann Patchett?", "When was the last time Brazil won?",
                     "Where was Alien released first?", "Who is Ann Patchett's first cousin?",
                     "Was the first album of Queen released in 1973?"):
        assert detect_shape(question).kind != "superlative", question

"""Open answers (qa.open): the checker, the template verbalizer and the writer's parsing
as pure functions; the whole answer on the demo store with a ScriptedLLM (the code around
the model) and through `kgstore ask`; the real model in test_open_answers_llm.py."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore import Store
from kgstore.cli import main
from kgstore.terms import WD
from qa import QAContext, ScriptedLLM, make_method
from qa.open import (Fact, check_sentence, claims, fact_sentence, parse_drafts, read_open, settle, verbalize)
from qa.open._writer import write_grammar
from qa.steps._result import Evidence

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

XSD = "http://www.w3.org/2001/XMLSchema#"
BIRTH = Fact(1, "Douglas Adams", "date of birth", ("1952-03-11",),
             (Evidence(WD + "Q42", "p", "1952-03-11T00:00:00Z", "Douglas Adams", "date of birth", None, True,
                       XSD + "dateTime"),))
PLACE = Fact(2, "Douglas Adams", "place of birth", ("Cambridge",))
COUNTRY = Fact(3, "Nepal", "population", ("29164578",))
FACTS = {1: BIRTH, 2: PLACE, 3: COUNTRY}

SKETCH = '''```cypher
CREATE (adams:Person {name: "Douglas Adams"}),
       (adams)-[:OCCUPATION]->(:Occupation {name: "writer"}),
       (adams)-[:PLACE_OF_BIRTH]->(:City {name: "London"})
```'''


# -- the checker ------------------------------------------------------------------------------
def test_names_numbers_and_months_are_the_claims_and_opening_function_words_are_not():
    assert claims("He was born in Cambridge on 11 March 1952.") == ["11", "1952", "Cambridge", "March"]
    assert claims("The Andes cross Peru.") == ["Andes", "Peru"]


def test_a_sentence_backed_by_its_cited_facts_passes_and_numbers_compare_by_value():
    assert check_sentence("Douglas Adams was born in Cambridge on March 11, 1952.", [1, 2], FACTS,
                          "Tell me about Douglas Adams").ok
    assert check_sentence("Nepal has 29,164,578 people.", [3], FACTS, "Describe Nepal.").ok


def test_a_claim_from_the_models_memory_fails_the_check():
    check = check_sentence("He wrote The Hitchhiker's Guide to the Galaxy in 1979.", [1], FACTS,
                           "Tell me about Douglas Adams")
    assert not check.ok and "1979" in check.unsupported and "Galaxy" in check.unsupported
    assert check_sentence("He was born in Cambridge.", [], FACTS, "").why() == "cites no fact"


def test_settle_keeps_backed_sentences_recites_a_neighbour_and_verbalizes_the_rest():
    drafts = parse_drafts("He was born in Cambridge [1].\nHe was born on 11 March 1952 [1].\n"
                          "He won the Hugo Award in 1980 [3].\n")
    sentences = settle(drafts, list(FACTS.values()), "Tell me about Douglas Adams", cover=False)
    assert [(s.text, s.facts, s.status) for s in sentences] == [
        ("He was born in Cambridge.", (2,), "written"),            # cited [1], backed by [2]
        ("He was born on 11 March 1952.", (1,), "written"),
        ("Nepal's population is 29164578.", (3,), "verbalized"),  # the model's claim replaced
    ]
    assert sentences[2].dropped == "He won the Hugo Award in 1980." and "Hugo" in sentences[2].unsupported


def test_value_words_must_cite_their_fact_and_badly_grouped_numbers_back_nothing():
    facts = [Fact(1, "Mount Everest", "instance of", ("mountain",)), Fact(2, "Asia", "instance of", ("continent",)),
             COUNTRY]
    drafts = parse_drafts("It is an instance of a mountain [2].\nNepal has 291,645,78 people [3].\n")
    sentences = settle(drafts, facts, "Why is Mount Everest famous?", cover=False)
    assert [(s.facts, s.status) for s in sentences] == [((1,), "written"), ((3,), "verbalized")]


def test_a_sentence_citing_a_fact_about_another_subject_must_name_that_subject():
    # the model read "John Steinbeck | influenced by | Robert Burns" as Burns's own fact
    facts = [Fact(1, "Robert Burns", "profession", ("Poet",)),
             Fact(2, "John Steinbeck", "influenced by", ("Robert Burns",), source="telling")]
    by_number = {f.n: f for f in facts}
    turned = check_sentence("He was influenced by Robert Burns.", [2], by_number, "what was robert burns famous for",
                            topic="Robert Burns")
    assert not turned.ok and turned.unnamed == (2,) and turned.why() == "does not name the subject of [2]"
    assert check_sentence("Steinbeck was influenced by him.", [2], by_number, "", topic="Robert Burns").ok
    # the topic as another store names it is still the topic: a pronoun may stand for it
    assert check_sentence("He was a poet.", [1], {1: Fact(1, "Robert Burns Sr.", "profession", ("Poet",))}, "",
                          topic="Robert Burns").ok
    drafts = parse_drafts("He was a poet [1].\nHe was influenced by Robert Burns [2].\n")
    sentences = settle(drafts, facts, "what was robert burns famous for", cover=False)
    assert [(s.facts, s.status) for s in sentences] == [((1,), "written"), ((2,), "verbalized")]
    assert sentences[1].text.startswith("John Steinbeck") and sentences[1].unsupported == (
        "does not name the subject of [2]",)


def test_settle_covers_uncited_facts_in_plain_sentences_up_to_six():
    facts = [Fact(n, "X", f"r{n}", (f"v{n}",)) for n in range(1, 20)]
    sentences = settle([], facts, "Tell me about X")
    assert len(sentences) == 6 and all(s.status == "added" for s in sentences)


# -- the verbalizer and the writer's text -----------------------------------------------------
def test_the_template_verbalizer_writes_one_sentence_a_fact():
    assert verbalize([PLACE, Fact(4, "Andes", "country", ("Peru", "Chile", "Bolivia"))]) == [
        "Douglas Adams' place of birth is Cambridge.", "Andes' country are Peru, Chile and Bolivia."]
    assert fact_sentence(Fact(5, "Abilene", "is part of", ("Texas",))) == "Abilene is part of Texas."
    assert fact_sentence(Fact(6, "Nepal", "description", ("landlocked country",))) == "Nepal is a landlocked country."


def test_drafts_take_their_citations_off_and_the_grammar_allows_only_the_facts_numbers():
    drafts = parse_drafts("Nepal is in Asia [1][3].\nIts capital is Kathmandu. [2]\nIts capital is Kathmandu. [2]\n")
    assert [(d.text, d.cites) for d in drafts] == [("Nepal is in Asia.", (1, 3)), ("Its capital is Kathmandu.", (2,))]
    grammar = write_grammar([1, 2, 10], 3)
    assert 'fact  ::= "10" | "1" | "2"' in grammar and grammar.startswith("root ::= line (line (line)?)?")


# -- on the demo store, the model scripted ----------------------------------------------------
def test_an_open_question_is_answered_from_store_facts_and_a_made_up_sentence_is_replaced(demo_store):  # noqa: F811
    writing = ("Douglas Adams was an English writer and humorist [1].\n"
               "He was born in London in 1927 [3].\n"
               "He was educated at Brentwood School and St John's College [8].\n")
    llm = ScriptedLLM([SKETCH, writing])
    with Store.open(demo_store, read_only=True) as store:
        result = make_method("pseudo-graph", QAContext(store, llm)).answer("Tell me about Douglas Adams.")
    assert not result.refused and result.method == "open"
    statuses = [s["status"] for s in result.sentences]
    assert statuses[:3] == ["written", "verbalized", "written"] and len(statuses) <= 6
    assert "London" not in result.text and "1927" not in result.text and "[1]" in result.text
    facts = {f["n"]: f for f in result.facts}
    for sentence in result.sentences:  # every sentence rests on cited store facts about Douglas Adams
        assert sentence["facts"] and all(n in facts for n in sentence["facts"])
    assert all(e.s == WD + "Q42" for e in result.evidence)
    assert result.tokens.calls == 2


def test_an_open_question_about_an_entity_the_store_lacks_is_refused_without_the_model(demo_store):  # noqa: F811
    llm = ScriptedLLM([])
    with Store.open(demo_store, read_only=True) as store:
        result = make_method("cascade", QAContext(store, llm)).answer("Tell me about Barack Obama")
    assert result.refused and result.refusal.reason == "not_in_store" and "Barack Obama" in result.refusal.message
    assert not llm.calls


@pytest.mark.parametrize("question", ["What is Barack Obama famous for?",
                                      # "who was X in Y" asks what X was in Y (a role in a film)
                                      "Who was Barack Obama in 2008?"])
def test_a_renown_or_who_question_whose_subject_is_not_named_as_written_is_handed_to_the_precise_path(
        demo_store, question):  # noqa: F811
    """"What is X famous for" or "who was X" whose X no entity bears as written goes on to
    the method, which links names as typed (and here finds none either: the name check
    refuses). A request ("tell me about X") is refused where it stands (the test above)."""
    llm = ScriptedLLM([])
    with Store.open(demo_store, read_only=True) as store:
        result = make_method("cascade", QAContext(store, llm)).answer(question)
    assert result.refused and result.refusal.reason == "not_in_store" and result.method == "cascade"
    assert "Barack Obama" in result.trace["open"]["handed_on"] and "names" in result.trace
    assert not llm.calls


def test_a_precise_question_keeps_its_methods_path(demo_store):  # noqa: F811
    assert read_open("Which countries does the Andes cover?") is None
    draft = "```sparql\nSELECT ?x WHERE { [ENT: Andes] [REL: country] ?x }\n```"
    # a refusal of the draft's query is followed by the composed query graph, which the model judges
    llm = ScriptedLLM([lambda m: "no" if m[-1]["content"].endswith("(yes or no)?") else draft] * 12)
    with Store.open(demo_store, read_only=True) as store:
        result = make_method("pgmr", QAContext(store, llm)).answer("Which countries does the Andes cover?")
    assert result.method == "pgmr" and result.text is None and "reading" not in result.trace
    assert "text" not in result.to_dict()


def test_kgstore_ask_prints_the_paragraph_and_json_has_text_sentences_and_evidence(demo_store):  # noqa: F811
    writing = "Nepal is a landlocked country in South Asia [1].\nIts capital is Kathmandu [2].\n"
    sketch = '```cypher\nCREATE (n:Country {name: "Nepal"}),\n       (n)-[:CAPITAL]->(:City {name: "Kathmandu"})\n```'
    result = CliRunner().invoke(main, ["ask", str(demo_store), "Describe Nepal.", "--format", "json"],
                                obj={"llm": ScriptedLLM([sketch, writing])})
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["method"] == "open" and doc["text"].startswith("Nepal is a landlocked country in South Asia [1].")
    assert doc["sentences"][0] == {"text": "Nepal is a landlocked country in South Asia.", "facts": [1],
                                   "status": "written"}
    assert {f["n"] for f in doc["facts"]} >= {1, 2} and doc["evidence"]
    table = CliRunner().invoke(main, ["ask", str(demo_store), "Describe Nepal."],
                               obj={"llm": ScriptedLLM([sketch, writing])})
    assert table.exit_code == 0, table.output
    assert "Answer: Nepal is a landlocked country" in table.output and "Facts cited" in table.output
    refused = CliRunner().invoke(main, ["ask", str(demo_store), "Tell me about Barack Obama"],
                                 obj={"llm": ScriptedLLM([])})
    assert refused.exit_code == 0 and "Refused (not_in_store)" in refused.output



def test_a_sketch_cut_off_mid_fact_keeps_its_complete_facts():
    from qa.open._ground import complete_lines
    from qa.sandbox import run_pseudo_graph

    cut = ('```cypher\nCREATE (nepal:Country {name: "Nepal"}),\n'
           '       (nepal)-[:CAPITAL]->(:City {name: "Kathmandu"}),\n'
           '       (nepal)-[:POPULATION]->(:Number {name: "30,000,000"}),\n'
           '       (nepal)-[:AREA]->(:Number {name: "147,18')
    triples = [tuple(t) for t in run_pseudo_graph(complete_lines(cut)).triples]
    assert triples == [("Nepal", "CAPITAL", "Kathmandu"), ("Nepal", "POPULATION", "30,000,000")]
    assert complete_lines('```cypher\nCREATE (x:Thing {name: "X') == ""

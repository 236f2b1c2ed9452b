"""The QA methods' control flow with a ScriptedLLM (fixed model outputs) over the real demo
store and its real semantic index: what each step sends, what it keeps, when it refuses."""
from __future__ import annotations

import pytest

from kgstore import Store
from kgstore.errors import LLMRequestError, LLMUnavailableError, UnknownMethodError, UnknownOptionError
from kgstore.terms import WD, WDT
from qa import QAContext, ScriptedLLM, make_method, method_names
from qa.steps._graph_text import parse_triple_lines

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

ANDES, HIMALAYAS = WD + "Q5456", WD + "Q5451"
ANDES_COUNTRIES = {WD + q for q in ("Q414", "Q750", "Q298", "Q739", "Q736", "Q419", "Q717")}
HIMALAYA_COUNTRIES = {WD + q for q in ("Q917", "Q148", "Q668", "Q837", "Q843")}
QUESTION = "Who covers more countries, the Andes or the Himalayas?"

CYPHER = """```cypher
CREATE (andes:MountainRange {name: "Andes"}),
       (himalayas:MountainRange {name: "Himalayas"}),
       (andes)-[:COUNTRY]->(:Country {name: "Peru"}),
       (himalayas)-[:COUNTRY]->(:Country {name: "Nepal"})
```"""
VERIFIED = "Andes | country | Peru; Chile\nHimalayas | country | Nepal\nAndes | highest point | Aconcagua\n"
ANSWER = "Andes: 7 countries. Himalayas: 5 countries. 7 is more than 5, so the answer is {Andes}"
ALPS_CYPHER = 'CREATE (alps:MountainRange {name: "Alps"})-[:COUNTRY]->(:Country {name: "France"})'


@pytest.fixture
def store(demo_store):
    with Store.open(demo_store, read_only=True) as st:
        yield st


def ask(store, responses, question=QUESTION, method="pseudo-graph", allow_parametric=False, **params):
    llm = ScriptedLLM(responses)
    result = make_method(method, QAContext(store=store, llm=llm), **params).answer(
        question, allow_parametric=allow_parametric)
    return result, llm


def test_pseudo_graph_answers_with_evidence_from_the_store(store):
    result, llm = ask(store, [CYPHER, VERIFIED, ANSWER])
    assert not result.refused and not result.parametric
    assert result.answers == ["Andes"]
    assert result.answer_iris == [ANDES]
    assert list(result.trace) == ["pseudo_graph", "semantic_query", "pruning", "verification", "answer", "grounding"]
    assert (result.tokens.calls, len(llm.calls)) == (3, 3)

    # Step 1: the pseudo-triples decoded from the Cypher.
    assert result.trace["pseudo_graph"]["triples"] == [["Andes", "COUNTRY", "Peru"], ["Himalayas", "COUNTRY", "Nepal"]]
    # Step 2: each pseudo-triple searched in the index's own text form, top 10.
    queries = result.trace["semantic_query"]["queries"]
    # The ranges are named in the question; the countries are guesses, so each is also
    # searched by its known end and relation alone.
    assert [q["query"] for q in queries] == ["Andes | country | Peru", "Andes | country",
                                             "Himalayas | country | Nepal", "Himalayas | country"]
    # Both are store entities by name, so each search is over that entity's own triples
    # (the Andes have 9 in the demo store, the Himalayas 8).
    assert [q["about"] for q in queries] == [[ANDES], [ANDES], [HIMALAYAS], [HIMALAYAS]]
    assert [len(q["hits"]) for q in queries] == [9, 9, 8, 8]
    assert all(h[0].startswith("Andes | ") for h in queries[0]["hits"])
    assert queries[0]["hits"][0] == ["Andes | country | Peru", 1.0]
    # Step 3: k = 2 distinct subjects; the two ranges kept, weakest first.
    pruning = result.trace["pruning"]
    assert pruning["k"] == 2
    assert {g["iri"] for g in pruning["kept"]} == {ANDES, HIMALAYAS}
    assert pruning["kept"][0]["score"] <= pruning["kept"][1]["score"]
    assert pruning["threshold"] == 0.55 and all(g["score"] >= 0.55 for g in pruning["kept"])
    # Step 4: the verification prompt lists the ground graph per entity, best entity last
    # (nearest the draft), and the draft; the model's partial lists are completed from the
    # ground graph and its unsupported fact dropped.
    verify_input = llm.prompts[1]
    ground_part = verify_input.split("Trusted facts:\n")[1].split("\n\nDraft:\n")[0]
    blocks = ground_part.split("\n\n")
    assert [b.split(" | ")[0] for b in blocks] == [g["label"] for g in pruning["kept"]]
    assert verify_input.endswith("Draft:\nAndes | country | Peru\nHimalayas | country | Nepal")
    assert result.trace["verification"]["aligned"] == {
        "completed": ["Andes | country", "Himalayas | country"], "dropped": ["Andes | highest point | Aconcagua"]}
    # Step 5: the answer prompt holds the completed lists with their counts.
    facts = llm.prompts[2].split("Facts:\n")[1].split("\n\nQuestion:")[0].splitlines()
    assert facts[0].startswith("Andes | country | ") and facts[0].endswith("(7 values)")
    assert facts[1].startswith("Himalayas | country | ") and facts[1].endswith("(5 values)")
    assert len(parse_triple_lines("\n".join(facts))) == 12
    # ...and its grammar lets a mark name only the fixed graph's subjects and objects.
    names = {n for s, _, o in parse_triple_lines("\n".join(facts)) for n in (s, o)}
    term_rule = llm.calls[2]["grammar"].splitlines()[-1]
    assert term_rule.startswith('term ::= "unknown" | ')
    assert set(term_rule.removeprefix('term ::= "unknown" | ').strip('"').split('" | "')) == names
    assert len(names) == 14  # the two ranges and their 7 + 5 countries
    # The evidence: store triples with IRIs, every country fact of both ranges.
    country = [e for e in result.evidence if e.p == WDT + "P17"]
    assert {e.o for e in country if e.s == ANDES} == ANDES_COUNTRIES
    assert {e.o for e in country if e.s == HIMALAYAS} == HIMALAYA_COUNTRIES
    assert all(e.s_label and e.o_label and e.p_label == "country" for e in country)
    assert {e.s for e in result.evidence} == {ANDES, HIMALAYAS}


CHAIN_CYPHER = """```cypher
CREATE (adams:Person {name: "Douglas Adams"}),
       (england:Country {name: "England"}),
       (answer:City {name: "Manchester"}),
       (adams)-[:COUNTRY_OF_CITIZENSHIP]->(england),
       (england)-[:CAPITAL]->(answer)
```"""


def test_a_guessed_intermediate_entity_is_replaced_by_the_store_entity_the_first_hop_reaches(store):
    question = "What is the capital of the country Douglas Adams was a citizen of?"
    result, llm = ask(store, [CHAIN_CYPHER, "United Kingdom | capital\n", "The capital is {London}"],
                      question=question)
    queries = [q["query"] for q in result.trace["semantic_query"]["queries"]]
    # Hop 1 from the entity the question names; hop 2 about the store's United Kingdom,
    # not the model's "England".
    assert queries == ["Douglas Adams | country of citizenship | England", "Douglas Adams | country of citizenship",
                       "United Kingdom | capital | Manchester", "United Kingdom | capital"]
    assert result.trace["semantic_query"]["stand_ins"] == {"england": ["United Kingdom"], "manchester": ["London"]}
    # each hop's best hit replaces the draft's guess, in lookup order, before what the model named
    assert result.trace["verification"]["replacing"] == ["Douglas Adams | country of citizenship",
                                                         "United Kingdom | capital"]
    assert result.trace["verification"]["fixed_graph"] == ["Douglas Adams | country of citizenship | United Kingdom",
                                                          "United Kingdom | capital | London"]
    assert result.answers == ["London"] and result.answer_iris == [WD + "Q84"]
    evidence = [(e.s, e.p, e.o) for e in result.evidence]
    assert (WD + "Q42", WDT + "P27", WD + "Q145") in evidence and (WD + "Q145", WDT + "P36", WD + "Q84") in evidence
    assert all(WD + "Q84" in (s, o) or (s, o) == (WD + "Q42", WD + "Q145") for s, _, o in evidence)


SHORT_CYPHER = """```cypher
CREATE (adams:Person {name: "Douglas Adams"}),
       (answer:Country {name: "England"}),
       (adams)-[:COUNTRY_OF_CITIZENSHIP]->(answer)
```"""


def test_a_sketch_one_hop_short_gets_the_reached_entities_facts_for_the_question(store):
    question = "What is the capital of the country Douglas Adams was a citizen of?"
    result, llm = ask(store, [SHORT_CYPHER, "Douglas Adams | country of citizenship\nUnited Kingdom | capital\n",
                              "The capital is {London}"], question=question)
    queries = result.trace["semantic_query"]["queries"]
    assert [q["query"] for q in queries] == ["Douglas Adams | country of citizenship | England",
                                             "Douglas Adams | country of citizenship", question]
    assert queries[2]["about"] == [WD + "Q145"] and len(queries[2]["hits"]) == 3
    assert "United Kingdom | capital | London" in [h[0] for h in queries[2]["hits"]]
    # the reached entity joins the ground graph farthest from the draft (first)
    kept = result.trace["pruning"]["kept"]
    assert kept[0]["iri"] == WD + "Q145" and kept[-1]["iri"] == WD + "Q42"
    ground = llm.prompts[1].split("Trusted facts:\n")[1].split("\n\nDraft:\n")[0]
    assert ground.startswith("United Kingdom | ") and "United Kingdom | capital | London" in ground
    # the reached entity's facts for the question join the fixed graph: the hop the draft missed
    assert result.trace["verification"]["fixed_graph"] == [
        "Douglas Adams | country of citizenship | United Kingdom", "United Kingdom | capital | London",
        "United Kingdom | instance of | country", "United Kingdom | continent | Europe"]
    assert result.answers == ["London"] and result.answer_iris == [WD + "Q84"]


def test_a_comparison_of_named_entities_is_not_extended(store):
    result, _ = ask(store, [CYPHER, VERIFIED, ANSWER])
    assert QUESTION not in [q["query"] for q in result.trace["semantic_query"]["queries"]]


def test_a_parse_error_goes_back_once_with_its_position(store):
    broken = 'CREATE (alps:MountainRange {name: "Alps"})-[:COUNTRY]->(:Country {name: "France"'
    result, llm = ask(store, [broken, ALPS_CYPHER])
    retry = llm.prompts[1]
    assert "Your Cypher was:\n```cypher\n" + broken + "\n```" in retry
    assert "It does not parse: " in retry
    assert "The problem is at line 1, column " in retry
    caret_line = retry.split(broken + "\n")[-1].splitlines()[0]
    assert caret_line.strip() == "^"
    assert result.trace["pseudo_graph"]["attempts"] == 2
    assert result.trace["pseudo_graph"]["error_1"].startswith("Cypher syntax error at line 1, column ")
    # The corrected graph is about the Alps, which the store does not hold: refusal.
    assert result.refused and result.refusal.reason == "empty_ground_graph"
    assert result.refusal.message.startswith("not in the store")
    assert result.answers == [] and result.answer_iris == [] and result.evidence == []
    assert len(llm.calls) == 2


def test_nodes_without_relationships_go_back_once(store):
    nodes_only = 'CREATE (alps:MountainRange {name: "Alps"}), (fr:Country {name: "France"})'
    result, llm = ask(store, [nodes_only, ALPS_CYPHER], question="Which countries do the Alps cover?")
    assert "It creates nodes but no relationships" in llm.prompts[1]
    assert "Your Cypher was:\n```cypher\n" + nodes_only + "\n```" in llm.prompts[1]
    assert result.trace["pseudo_graph"]["error_1"] == "the Cypher creates no relationships"
    assert result.trace["pseudo_graph"]["triples"] == [["Alps", "COUNTRY", "France"]]
    assert result.refused and result.refusal.reason == "empty_ground_graph"


def test_two_parse_errors_end_in_a_refusal_without_a_third_call(store):
    result, llm = ask(store, ["CREATE (a {name: 'x'", "CREATE (b:"])
    assert result.refused and result.refusal.reason == "no_pseudo_graph"
    assert len(llm.calls) == 2
    assert "error_2" in result.trace["pseudo_graph"]


def test_cypher_that_does_more_than_create_is_refused_without_retry(store):
    result, llm = ask(store, ["MATCH (n) DETACH DELETE n"])
    assert result.refused and result.refusal.reason == "no_pseudo_graph"
    assert "DETACH DELETE are not allowed in a pseudo-graph" in result.trace["pseudo_graph"]["error_1"]
    assert len(llm.calls) == 1


def test_an_entity_not_in_the_store_is_refused(store):
    result, llm = ask(store, [ALPS_CYPHER], question="Which countries do the Alps cover?")
    assert result.refused and result.refusal.reason == "empty_ground_graph"
    assert result.trace["pruning"]["kept"] == []
    best = max(result.trace["pruning"]["dropped"], key=lambda g: g["score"])
    assert best["score"] < 0.55  # the nearest store triples are about other ranges: under the threshold
    assert len(llm.calls) == 1


def test_allow_parametric_answers_from_the_model_and_flags_it(store):
    result, llm = ask(store, [ALPS_CYPHER, "The Alps are in {France}, {Italy} and {Switzerland}"],
                      question="Which countries do the Alps cover?", allow_parametric=True)
    assert not result.refused and result.parametric
    assert result.answers == ["France", "Italy", "Switzerland"]
    assert result.answer_iris == [None, None, None]  # no store entity has these labels
    assert result.evidence == []
    assert result.trace["parametric"]["reason"] == "empty_ground_graph"
    assert llm.calls[1]["messages"][-1]["content"] == "Question: Which countries do the Alps cover?"


def test_an_answer_outside_the_evidence_is_refused(store):
    result, _ = ask(store, [CYPHER, VERIFIED, "The answer is {Aconcagua}"])
    assert result.refused and result.refusal.reason == "not_in_store"
    assert "'Aconcagua'" in result.refusal.message
    assert result.trace["grounding"] == {"marked": ["Aconcagua"], "grounded": [], "unmatched": ["Aconcagua"]}


def test_answer_terms_off_lets_marks_hold_any_text(store):
    result, llm = ask(store, [CYPHER, VERIFIED, ANSWER], answer_terms=False)
    assert result.answers == ["Andes"]
    assert llm.calls[2]["grammar"].splitlines()[-1] == 'term ::= [^{}\\n]+'


def test_unknown_from_the_model_is_a_refusal(store):
    result, _ = ask(store, [CYPHER, VERIFIED, "The facts do not say: {unknown}"])
    assert result.refused and result.refusal.reason == "no_answer"


def test_the_similarity_threshold_is_a_parameter(store):
    result, llm = ask(store, [CYPHER], threshold=0.99)
    assert result.refused and result.refusal.reason == "empty_ground_graph"
    assert result.trace["pruning"]["threshold"] == 0.99
    assert len(llm.calls) == 1


def test_an_unreachable_model_raises_instead_of_refusing(store):
    def down(messages):
        raise LLMUnavailableError("the LLM endpoint http://127.0.0.1:9/v1 is unreachable")

    with pytest.raises(LLMUnavailableError):
        ask(store, [down])


def test_a_failed_request_becomes_an_error_refusal(store):
    def bad(messages):
        raise LLMRequestError("llama.cpp rejected the request: too long")

    result, _ = ask(store, [bad])
    assert result.refused and result.refusal.reason == "error"
    assert result.refusal.message == "LLMRequestError: llama.cpp rejected the request: too long"
    assert result.trace["error"]["type"] == "LLMRequestError"


def test_a_fault_in_kgstore_is_an_error_refusal_with_its_traceback_in_the_trace(store, monkeypatch):
    """A bug met on one question (here a ValueError where the model's reply is read) refuses
    that question, so an eval goes on; the trace keeps where it was. KGSTORE_DEBUG=1 raises it."""
    def broken(messages):
        raise ValueError("'Altman' is not in list")

    monkeypatch.delenv("KGSTORE_DEBUG", raising=False)
    result, _ = ask(store, [broken])
    assert result.refused and result.refusal.reason == "error"
    assert result.refusal.message.startswith("internal error (a bug in kgstore; please report it): "
                                             "ValueError: 'Altman' is not in list")
    assert result.trace["error"]["type"] == "InternalError"
    assert "Traceback" in result.trace["error"]["where"] and "broken" in result.trace["error"]["where"]
    monkeypatch.setenv("KGSTORE_DEBUG", "1")
    with pytest.raises(ValueError, match="is not in list"):
        ask(store, [broken])


def test_an_option_value_the_model_cannot_work_with_is_raised_not_refused(store):
    """answer_tokens=0 leaves no token to answer in: every question would fail alike, so
    the caller who gave it hears it (the server's 400, the CLI's exit code 2)."""
    from kgstore.errors import OptionValueError

    with pytest.raises(OptionValueError, match="max_tokens must be at least 1, got 0"):
        ask(store, ["{Andes}"], method="io", answer_tokens=0)


def test_io_baseline_answers_alone_and_is_parametric(store):
    result, llm = ask(store, ["The Andes span 7 countries: {Andes}"], method="io")
    assert result.answers == ["Andes"] and result.answer_iris == [ANDES] and result.parametric
    assert list(result.trace) == ["parametric"] and len(llm.calls) == 1
    refused, _ = ask(store, ["{unknown}"], method="io")
    assert refused.refused and refused.refusal.reason == "no_answer"


def test_qsm_baseline_answers_from_the_top_triples_of_the_question(store):
    result, llm = ask(store, ["{Peru}, {Chile} and {Atlantis}"], method="qsm",
                      question="Which countries does the Andes cover?", top_k=10)
    facts = llm.prompts[0].split("Facts:\n")[1].split("\n\nQuestion:")[0]
    assert "Andes | country | " in facts
    assert len(result.trace["semantic_query"]["hits"]) == 10
    assert result.answers == ["Peru", "Chile", "Atlantis"]
    assert result.answer_iris == [WD + "Q419", WD + "Q298", None]
    assert not result.parametric
    assert {e.o for e in result.evidence} >= {WD + "Q419", WD + "Q298"}


def test_registry_by_name():
    assert method_names() == ["io", "qsm", "pseudo-graph", "pgmr", "memq", "prograg", "queryagent", "cascade"]
    with pytest.raises(UnknownMethodError, match="unknown QA method 'magic'; choose one of: io, qsm, pseudo-graph"):
        make_method("magic", QAContext(store=None, llm=ScriptedLLM([])))
    method = make_method("pseudo-graph", QAContext(store=None, llm=ScriptedLLM([])), threshold=0.5, top_k=5)
    assert (method.threshold, method.top_k, method.name) == (0.5, 5, "pseudo-graph")
    with pytest.raises(UnknownOptionError, match="method io has no option 'top_k'; its options: answer_tokens"):
        make_method("io", QAContext(store=None, llm=ScriptedLLM([])), top_k=3)


RENAMED_CYPHER = """```cypher
CREATE (adams:Person {name: "Doug N. Adams"}),
       (answer:City {name: "London"}),
       (adams)-[:PLACE_OF_BIRTH]->(answer)
```"""


def test_a_renamed_start_entity_is_replaced_by_the_one_the_question_names(store):
    # "Doug N. Adams" names nothing in the store; the question names Douglas Adams
    result, _ = ask(store, [RENAMED_CYPHER, "Douglas Adams | place of birth\n", "He was born in {Cambridge}"],
                    question="Where was Douglas Adams born?")
    queries = result.trace["semantic_query"]["queries"]
    assert queries[0]["query"] == "Douglas Adams | place of birth | London" and queries[0]["about"] == [WD + "Q42"]
    assert result.answers == ["Cambridge"] and result.answer_iris == [WD + "Q350"]


def test_a_sketch_about_another_entity_than_the_question_names_is_not_renamed(store):
    # the question compares two ranges; a sketch about the Alps is no renaming of either
    result, _ = ask(store, [ALPS_CYPHER, "{unknown}"])
    assert result.trace["semantic_query"]["queries"][0]["about"] == []
    assert result.refused


def test_a_list_named_by_years_comes_first_or_last_first_as_the_question_asks():
    from qa import Answer
    from qa.methods._base import in_named_year_order, named_years

    finals = Answer(question="", method="m", answers=["1989 NBA Finals", "2004 NBA Finals", "1990 NBA Finals"],
                    answer_iris=["f89", "f04", "f90"], values=[None, None, None])
    assert named_years(finals) == [1989, 2004, 1990]
    last = in_named_year_order(finals, ascending=False)
    assert last.answers == ["2004 NBA Finals", "1990 NBA Finals", "1989 NBA Finals"]
    assert last.answer_iris == ["f04", "f90", "f89"]
    assert in_named_year_order(finals, ascending=True).answers[0] == "1989 NBA Finals"
    # a name with no year, or two, or a value answer: the order stays as it is
    for answers in (["1989 NBA Finals", "Detroit"], ["Tours of 1985 and 1990", "2004 NBA Finals"]):
        mixed = Answer(question="", method="m", answers=answers, answer_iris=["a", "b"])
        assert named_years(mixed) is None and in_named_year_order(mixed, False) is mixed
    years = Answer(question="", method="m", answers=["1999", "2004"], answer_iris=[None, None])
    assert in_named_year_order(years, False) is years

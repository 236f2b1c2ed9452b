"""The query agent (queryagent) on the real demo store, its real index and the real SPARQL
sandbox: a ScriptedLLM plays the model, so each test fixes what the model chose and
asserts what the checks, the corrections and the executed query made of it. One test,
marked ``llm``, runs the real local model."""
from __future__ import annotations

from dataclasses import replace

import pytest

from kgstore import Store
from kgstore.config import LLMConfig
from kgstore.terms import WD, WDT
from qa import QAContext, ScriptedLLM, make_method
from qa.methods.queryagent._checks import check_action
from qa.methods.queryagent._grammar import step_grammar
from qa.methods.queryagent._state import Action, AgentState, Binding, Entity, Fact, Link, Relation
from qa.methods.queryagent._tools import AgentTools

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

ANDES = WD + "Q5456"
QUESTION = "What are the capitals of the countries the Andes cover?"
CAPITALS = {"Buenos Aires", "Sucre", "Santiago", "Bogotá", "Quito", "Lima", "Caracas"}
COUNTRIES = {"Argentina", "Bolivia", "Chile", "Colombia", "Ecuador", "Peru", "Venezuela"}


@pytest.fixture
def store(demo_store):  # noqa: F811
    with Store.open(demo_store, read_only=True) as st:
        yield st


def ask(store, steps, question=QUESTION, reads=None, **options):
    """The agent with scripted ``steps``; its chain is grounded only where a test scripts
    the model's ``reads`` of the paths (the checks are tested on the agent's own query)."""
    script = [f"Thought: {thought}\nAction: {action}" for thought, action in steps] + list(reads or [])

    def respond(messages):
        # a superlative is composed first: the model judges no composed query graph an
        # answer, and the agent's own steps answer
        if messages[-1]["content"].endswith("Does this answer the question (yes or no)?"):
            return "no"
        return script.pop(0)  # an unexpected extra call fails here

    llm = ScriptedLLM([respond] * (len(script) + 12))
    options.setdefault("ground", reads is not None)
    result = make_method("queryagent", QAContext(store=store, llm=llm), **options).answer(question)
    return result, llm


def test_a_wrong_relation_is_caught_by_the_empty_result_and_corrected_on_the_redo(store):
    result, llm = ask(store, [("The countries of the Andes.", "add_fact(Andes, country, ?c)"),
                              ("Their capitals.", "add_fact(Andes, capital, ?c)"),  # matches nothing, either way
                              ("The capital of each country.", "add_fact(?c, capital, ?x)"),
                              ("?x is the answer.", "set_answer(?x)")])
    assert not result.refused and set(result.answers) == CAPITALS
    assert f"<{ANDES}> <{WDT}P17> ?c" in result.query and f"?c <{WDT}P36> ?x" in result.query
    assert {(e.p_label) for e in result.evidence} == {"country", "capital"}
    agent = result.trace["agent"]
    assert agent["checks"] == ["execution:empty_fact"]
    assert agent["corrections"] == [{"step": 3, "check": "execution:empty_fact", "fixed": True}]
    # only the failed step is redone: one extra call, shown the error and the guideline
    assert len(llm.calls) == 4
    redo = llm.prompts[2]
    assert ("Action: add_fact(Andes, capital, ?c)\nObservation: Error (execution: empty_fact): "
            "Andes capital ?c matches nothing in the store, either way round") in redo
    assert "Guideline: No fact in the knowledge graph matches, in either direction" in redo
    assert "Error" not in llm.prompts[3]  # the failed attempt is not kept once redone
    # the redo's grammar cannot write the failed fact again, but can use the relation elsewhere
    grammar = llm.calls[2]["grammar"]
    assert grammar and '"add_fact(" other-' in grammar
    assert [s["action"] for s in agent["steps"]] == ["get_relations(Andes)", "add_fact(Andes, country, ?c)",
                                                     "add_fact(?c, capital, ?x)", "set_answer(?x)", "execute()"]


def test_without_correction_the_wrong_relation_stays_and_nothing_answers(store):
    result, llm = ask(store, [("The countries of the Andes.", "add_fact(Andes, country, ?c)"),
                              ("Their capitals.", "add_fact(Andes, capital, ?c)"),
                              ("?c is the answer.", "set_answer(?c)")], correction=False)
    # the agent's own query finds nothing; the query graph composed from the store (the
    # step every method that builds queries shares) is what answers, judged by the model
    assert result.trace["composed"]["after"] == "no_rows"
    agent_calls = [p for p in llm.prompts if not p.endswith("Does this answer the question (yes or no)?")]
    assert len(agent_calls) == 3 and not any("Guideline" in p for p in agent_calls)
    assert result.trace["agent"]["corrections"] == []


def test_an_empty_fact_is_first_read_the_other_way_round_without_the_model(store):
    result, llm = ask(store, [("The countries of the Andes.", "add_fact(?c, country, Andes)"),
                              ("?c is the answer.", "set_answer(?c)")])
    assert set(result.answers) == COUNTRIES
    assert f"<{ANDES}> <{WDT}P17> ?c" in result.query
    assert len(llm.calls) == 2  # no redo
    step = result.trace["agent"]["steps"][1]
    assert step["action"] == "add_fact(?c, country, Andes)"
    assert step["checks"] == [{"kind": "execution", "name": "empty_fact", "message": "?c country Andes matches nothing",
                               "fixed": "read the other way round: Andes country ?c"}]


def test_a_label_written_for_an_id_is_fixed_without_the_model(store):
    result, llm = ask(store, [("The countries.", 'add_fact("andes", country, ?c)'), ("Done.", "set_answer(?c)")])
    assert set(result.answers) == COUNTRIES and len(llm.calls) == 2
    assert result.trace["agent"]["checks"] == ["validity:label_for_id"]


def test_an_action_the_grammar_cannot_express_is_refused_and_redone(store):
    # capital is no relation of the Andes, ?c is bound by nothing, Peru is not in the question
    tools = AgentTools(store, make_index(store), QUESTION)
    state = tools.get_relations(AgentState(QUESTION, entities=(Entity("Andes", ANDES, "Andes"),)), "Andes").state
    grammar = step_grammar(state)
    thought = "Thought: Done: nothing yet. Plan: Andes -> country -> capital. Next: country."
    assert grammar.accepts(f"{thought}\nAction: add_fact(Andes, country, ?x1)")
    assert grammar.accepts(f"{thought}\nAction: add_fact(?x1, country, Andes)")
    for action in ["add_fact(Andes, capital, ?x1)", "set_answer(?x1)", "get_relations(?x1)",
                   "add_fact(Peru, country, ?x1)", "get_relations(Andes)", "add_fact(?x1, country, ?x2)",
                   "add_fact(Andes, country, Andes)", "execute()"]:
        assert not grammar.accepts(f"{thought}\nAction: {action}"), action
    assert not grammar.accepts("Thought: no plan.\nAction: add_fact(Andes, country, ?x1)")
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(grammar.gbnf(), verbose=False)  # llama.cpp reads it
    # the same action from a model that ignores grammars: the validity check stops it
    result, llm = ask(store, [("Their capitals.", "add_fact(Andes, capital, ?c)"),
                              ("The countries.", "add_fact(Andes, country, ?c)"),
                              ("Done.", "set_answer(?c)")])
    assert set(result.answers) == COUNTRIES
    assert result.trace["agent"]["checks"] == ["validity:unknown_relation"]
    assert "Guideline: Use only a relation listed by get_relations" in llm.prompts[1]


def test_a_chain_one_hop_short_is_grounded_and_read_to_the_answer(store):
    # the agent stops at the countries; the grounding runs the paths from the Andes up to
    # one hop longer, the model reads their facts and marks a capital
    steps = [("The countries of the Andes.", "add_fact(Andes, country, ?c)"), ("Done.", "set_answer(?c)")]
    result, llm = ask(store, steps, reads=["{Quito}"])
    assert not result.refused and set(result.answers) == CAPITALS
    # the final query is the grounded path, one hop longer than the agent's
    assert result.query == result.trace["ground"]["final_query"] != result.trace["agent"]["final_query"]
    assert result.query.count(" .\n") == 2
    read = result.trace["ground"]["read"]
    assert read["marked"] == ["Quito"] and read["shown"] is True
    # the model read the store's facts of the paths past the countries
    facts = llm.prompts[-1]
    assert "Andes | country | Ecuador; Venezuela; Bolivia\nQuito | country | Ecuador\n" in facts
    # with grounding off the agent's own query answers
    result, _ = ask(store, steps, ground=False)
    assert set(result.answers) == COUNTRIES


def test_a_query_from_one_entity_is_a_draft_and_one_from_none_or_two_is_not():
    andes, peru = Entity("Andes", ANDES, "Andes"), Entity("Peru", WD + "Q419", "Peru")
    country, capital = Relation("country", WDT + "P17", "country"), Relation("capital", WDT + "P36", "capital")
    state = AgentState(QUESTION, entities=(andes, peru), relations=(country, capital),
                       facts=(Fact("Andes", "country", "?c"), Fact("?c", "capital", "?x")),
                       bindings={"?c": Binding(7), "?x": Binding(7)})
    assert state.draft() == (andes, ("country", "capital"), ("country", "capital"), "?x")
    # the answer set on the middle: it answers, and the last fact that touches it is the end
    assert replace(state, answer="?c").draft() == (andes, ("country", "capital"), ("country", "capital"), "?c")
    # two facts hung off the entity, as a small model writes a chain: only the words count
    tree = replace(state, facts=(Fact("Andes", "country", "?c"), Fact("Andes", "capital", "?x")))
    assert tree.draft() == (andes, ("country", "capital"), ("country", "capital"), "?x")
    assert replace(state, count=True).draft() is None
    assert replace(state, facts=state.facts + (Fact("?x", "country", "Peru"),)).draft() is None  # a second entity
    assert replace(state, facts=(Fact("?c", "capital", "?x"),)).draft() is None  # no entity


def make_index(store):
    from indexer import Index

    return Index.open(store)


# -- the real local model -------------------------------------------------------------------------
@pytest.mark.llm
def test_real_model_answers_a_two_hop_demo_question_with_its_query_as_evidence(store):
    from qa.llm import llm_from_config

    llm = llm_from_config(LLMConfig(n_ctx=4096))
    result = make_method("queryagent", QAContext(store, llm)).answer(QUESTION)
    assert not result.refused, result.refusal
    assert set(result.answers) == CAPITALS
    assert f"<{ANDES}> <{WDT}P17> ?" in result.query and f"<{WDT}P36>" in result.query
    assert {e.p for e in result.evidence} == {WDT + "P17", WDT + "P36"}
    assert {e.s for e in result.evidence if e.p == WDT + "P17"} == {ANDES}


def test_checks_name_what_is_wrong_before_anything_runs():
    andes, peru = Entity("Andes", ANDES, "Andes"), Entity("Peru", WD + "Q419", "Peru")
    country = Relation("country", WDT + "P17", "country")
    state = AgentState(QUESTION, entities=(andes, peru), relations=(country,),
                       fetched={"Andes": (Link("country", False),)})
    bound = state.with_fact(Fact("Andes", "country", "?m"), {"?m": Binding(3, ("Chile",), mediator=True)})

    def fired(st, name, *args):
        return [(c.kind, c.name) for c in check_action(st, Action(name, args))[1]]

    assert fired(state, "add_fact", "Andes", "country") == [("validity", "arg_count")]
    assert fired(state, "add_fact", "?a", "country", "?b") == [("rationality", "two_new_variables")]
    assert fired(state, "add_fact", "Peru", "country", "?x") == [("execution", "fact_before_relations")]
    assert fired(state, "add_fact", "Andes", "capital", "?x") == [("validity", "unknown_relation")]
    assert fired(state, "add_fact", "Chile", "country", "?x") == [("validity", "unknown_entity")]
    assert fired(state, "get_relations", "?m") == [("validity", "unbound_variable")]
    assert fired(state, "execute") == [("validity", "no_answer")]
    assert fired(bound, "set_answer", "?m") == [("rationality", "answer_on_mediator")]
    assert fired(bound, "add_filter", "?m", "~", "3") == [("validity", "bad_operator")]
    # a label for an id is fixed, and the fixed action passes
    action, checks = check_action(state, Action("add_fact", ('"andes"', "Country", "?x")))
    assert action == Action("add_fact", ("Andes", "country", "?x"))
    assert [(c.name, c.fixed) for c in checks] == [("label_for_id", '"andes" -> Andes'),
                                                   ("label_for_id", "Country -> country")]


def test_a_filter_that_leaves_nothing_is_redone_and_max_keeps_the_largest(store):
    question = "Which country of the Himalayas has more than 100 million people?"
    result, llm = ask(store, [("The countries.", "add_fact(Himalayas, country, ?c)"),
                              ("Their populations.", "add_fact(?c, population, ?p)"),
                              ("Over 100 million.", "add_filter(?p, >, 10000000000)"),  # nobody: redone
                              ("Over 100 million.", "add_filter(?p, >, 100000000)"),
                              ("Done.", "set_answer(?c)")], question=question)
    assert result.answers == ["India"]
    assert result.trace["agent"]["corrections"] == [{"step": 4, "check": "execution:empty_filter", "fixed": True}]
    assert "FILTER(<http://www.w3.org/2001/XMLSchema#double>(STR(?p)) > 100000000)" in result.query
    result, _ = ask(store, [("The countries.", "add_fact(Himalayas, country, ?c)"),
                            ("Their populations.", "add_fact(?c, population, ?p)"),
                            ("The largest.", "add_max(?p)"), ("Done.", "set_answer(?c)")],
                    question="Which country of the Himalayas has the most people?")
    assert result.answers == ["India"] and result.query.endswith("LIMIT 1")

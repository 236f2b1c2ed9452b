"""The real local model (marked ``llm``; these run in CI, so they stay few and short)."""
from __future__ import annotations

import re

import pytest

from kgstore.config import LLMConfig
from qa.llm import PACKAGED_MODEL_SHA256, llm_from_config, packaged_model_path, verify_model_file
from qa.prompts import grammar_text, render_prompt
from qa.steps._answering import answers_in
from qa.steps._graph_text import answer_terms_grammar

pytestmark = pytest.mark.llm


@pytest.fixture(scope="module")
def llm():
    return llm_from_config(LLMConfig(n_ctx=1024))


def test_packaged_model_file_verifies():
    path = packaged_model_path()
    assert path.name == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert path.stat().st_size == 1_117_320_768
    assert verify_model_file(path, PACKAGED_MODEL_SHA256)


def test_llama_backend_follows_a_json_schema(llm):
    schema = {"type": "object", "properties": {"capital": {"type": "string"}}, "required": ["capital"],
              "additionalProperties": False}
    c = llm.complete("What is the capital of France? Reply in JSON.", schema=schema, max_tokens=16, logprobs=3)
    assert c.json() == {"capital": "Paris"}
    assert c.prompt_tokens > 10 and 0 < c.completion_tokens <= 16
    assert len(c.top_logprobs) == c.completion_tokens
    assert all(len(step.top) == 3 and step.logprob <= 0.0 for step in c.top_logprobs)
    assert c.top_logprobs[0].token == '{"'  # the grammar's choice, not the model's favourite (a fence)


def test_llama_backend_follows_a_gbnf_grammar(llm):
    c = llm.complete("Is Paris in France? Answer yes or no.", grammar='root ::= "yes" | "no"', max_tokens=4)
    assert c.text == "yes"


def test_answer_marks_can_only_name_terms_of_the_facts(llm):
    # Without the grammar the answer step writes the fact's value in its own spelling
    # ("Russian empire" for the store's "russian empire"; with earlier examples in the
    # prompt, "man" for "male"), and a mark that is not a store term is not grounded.
    # The grammar holds the mark to the facts' own terms.
    facts = "irina godunova | spouse | feodor i of russia\nfeodor i of russia | nationality | russian empire"
    prompt = render_prompt("pseudo_graph_answer", facts=facts,
                           question="what country was irina_godunova 's husband from ?")
    free = llm.complete(prompt, grammar=grammar_text("answer_marks"), max_tokens=80)
    held = llm.complete(prompt, grammar=answer_terms_grammar(["irina godunova", "feodor i of russia", "russian empire"]),
                        max_tokens=80)
    assert answers_in(free.text) == ["Russian empire"]
    assert answers_in(held.text) == ["russian empire"]


def test_greedy_under_a_grammar_picks_the_tokens_of_llama_cpps_own_chain(llm):
    # The grammar is asked about the model's best token alone, and about the whole
    # vocabulary only when that token breaks it; the text and the recorded distributions
    # must be those of llama-cpp-python's chain, which asks about every token every step.
    # Each prompt is evaluated whole: logits computed after a reused prefix differ in the
    # last bits (another batch shape), which can tip a near tie either way.
    model = llm.model
    fast, prompt_cache = model._init_sampler, model.cache
    samplers = []
    model._init_sampler = lambda **options: samplers.append(fast(**options)) or samplers[-1]
    model.set_cache(None)
    schema = {"type": "object", "properties": {"capital": {"type": "string"}}, "required": ["capital"],
              "additionalProperties": False}
    asks = [dict(prompt="What is the capital of France? Reply in JSON.", schema=schema, max_tokens=16, logprobs=3),
            dict(prompt="Name two rivers of France, one per line.", grammar='root ::= ([A-Z][a-z]+ "\\n"){2}',
                 max_tokens=12, logprobs=2)]

    def complete(ask):
        model.reset()
        return llm.complete(**ask)

    try:
        ours = [complete(ask) for ask in asks]
        model._init_sampler = type(model)._init_sampler.__get__(model)
        theirs = [complete(ask) for ask in asks]
    finally:
        model._init_sampler = fast
        model.set_cache(prompt_cache)
    assert [c.text for c in ours] == [c.text for c in theirs]
    assert [c.top_logprobs for c in ours] == [c.top_logprobs for c in theirs]
    assert [type(s).__name__ for s in samplers] == ["GrammarLastGreedy"] * 2
    assert samplers[0].full_checks >= 1  # the model's favourite first token is a fence, not '{"'
    assert samplers[0].steps == ours[0].completion_tokens + 1  # and the step that chose the end


# -- the SPARQL-building methods on the demo store, with the real model ---------------------
from kgstore import Store  # noqa: E402
from qa import QAContext, make_method  # noqa: E402

from test_qa_fixtures import demo_store  # noqa: E402,F401  (session fixture)

ANDES = "http://www.wikidata.org/entity/Q5456"
P17 = "http://www.wikidata.org/prop/direct/P17"
ANDES_COUNTRIES = {"Argentina", "Bolivia", "Chile", "Colombia", "Ecuador", "Peru", "Venezuela"}


@pytest.fixture(scope="module")
def demo(demo_store):  # noqa: F811
    with Store.open(demo_store, read_only=True) as store:
        yield store


@pytest.mark.parametrize("method", ["pgmr", "memq"])
def test_sparql_methods_answer_a_demo_question_with_the_right_query(llm, demo, method):
    result = make_method(method, QAContext(demo, llm)).answer("Which countries does the Andes cover?")
    assert not result.refused, result.refusal
    assert f"<{ANDES}> <{P17}> ?" in result.query
    assert set(result.answers) == ANDES_COUNTRIES
    assert {(e.s, e.p) for e in result.evidence} == {(ANDES, P17)}


def test_pgmr_refuses_a_question_about_an_entity_not_in_the_store(llm, demo):
    # in lower case, so that the model writes the name and the store judges it (a name
    # written in capitals is refused before the model: test_sparql_methods)
    result = make_method("pgmr", QAContext(demo, llm)).answer("who is the spouse of barack obama?")
    assert result.refused and result.refusal.reason == "not_in_store"
    # the model writes the name as it reads it ("Barack Obama", "Barack_Obama")
    assert re.search(r"\[ENT: barack[ _]obama\] found nothing", result.refusal.message, re.I), result.refusal.message


def test_a_grammars_forced_opening_is_read_in_as_prompt_and_returned_in_the_text(llm):
    # The opening is part of the text, the grammar holds what follows it, and the tokens
    # generated are only those after it.
    grammar = 'root ::= "Answer: the capital city of the country of France is" " " [A-Z][a-z]+ "."'
    c = llm.complete("What is the capital of France? One sentence.", grammar=grammar, max_tokens=8)
    assert c.text == "Answer: the capital city of the country of France is Paris."
    assert c.completion_tokens <= 4  # " is", " Paris", "." (and the end), not the opening's eleven
    short = llm.complete("Is Paris in France? Answer yes or no.", grammar='root ::= "Answer: " ("yes" | "no")',
                         max_tokens=4)
    assert short.text == "Answer: yes" and short.completion_tokens >= 3  # a short opening is generated

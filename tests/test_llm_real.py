"""The real local model (marked ``llm``; these run in CI, so they stay few and short)."""
from __future__ import annotations

import pytest

from kgstore.config import LLMConfig
from qa._graph_text import answer_terms_grammar
from qa.llm import PACKAGED_MODEL_SHA256, llm_from_config, packaged_model_path, verify_model_file
from qa._answering import answers_in
from qa.prompts import grammar_text, render_prompt

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
    # A PQ-2H question the pseudo-graph answer step got right but marked "{man}": a
    # paraphrase of the store's "male", so grounding refused it. The grammar holds the
    # mark to the facts' own terms.
    facts = "irina godunova | spouse | feodor i of russia\nfeodor i of russia | gender | male"
    prompt = render_prompt("pseudo_graph_answer", facts=facts,
                           question="is irina_godunova 's other half a man or a woman ?")
    free = llm.complete(prompt, grammar=grammar_text("answer_marks"), max_tokens=80)
    held = llm.complete(prompt, grammar=answer_terms_grammar(["irina godunova", "feodor i of russia", "male"]),
                        max_tokens=80)
    assert answers_in(free.text) == ["man"]
    assert answers_in(held.text) == ["male"]

"""An open answer with the real local model (marked ``llm``, as test_llm_real.py): one of
the four demo questions, every sentence backed by the store facts it cites."""
from __future__ import annotations

import pytest

from kgstore import Store
from kgstore.config import LLMConfig
from kgstore.terms import WD
from qa import QAContext, make_method
from qa.llm import llm_from_config
from qa.open import Fact, check_sentence

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

pytestmark = pytest.mark.llm


def test_describe_nepal_is_a_paragraph_of_sentences_backed_by_cited_store_facts(demo_store):  # noqa: F811
    llm = llm_from_config(LLMConfig(n_ctx=2048))
    with Store.open(demo_store, read_only=True) as store:
        result = make_method("cascade", QAContext(store, llm)).answer("Describe Nepal.")
    assert not result.refused, result.refusal
    assert result.method == "open" and 1 <= len(result.sentences) <= 6
    facts = {f["n"]: Fact(f["n"], f["subject"], f["relation"], tuple(f["values"])) for f in result.facts}
    for sentence in result.sentences:
        assert sentence["facts"], sentence
        if sentence["status"] == "written":  # the model's own sentence passed the checker
            assert check_sentence(sentence["text"], sentence["facts"], facts, "Describe Nepal.").ok, sentence
    assert "Kathmandu" in result.text or "Asia" in result.text
    assert any(e.s == WD + "Q837" for e in result.evidence)

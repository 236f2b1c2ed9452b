"""prograg (progressive retrieval and reasoning): the uncertainty formula on known logits,
the pure steps (decomposition, PageRank, nucleus, prefixes, packing), and the method with a
ScriptedLLM over the real demo store and its real index: a two-hop path answered, the gate
widening an unsure pick, and refusals when no path reaches an answer."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

from kgstore import Store
from kgstore.errors import UnknownOptionError
from kgstore.terms import WD, WDT
from qa import QAContext, ScriptedLLM, make_method
from qa.llm import CachingLLM, Completion, TokenLogprobs
from qa.methods.prograg._decomposition import SubQuestion, cut_restatement, parse_decomposition
from qa.methods.prograg._graph_scores import nucleus, personalized_pagerank
from qa.methods.prograg._progressive import choice_grammar, parse_choices
from qa.methods.prograg._reasoning_paths import ReasoningPath, Step, pack, prefixes
from qa.methods.prograg._uncertainty import aleatoric_uncertainty, digamma, option_logits
from qa.steps._result import Evidence

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

EULER = 0.5772156649015329
EVEREST, NEPAL, CHINA = WD + "Q513", WD + "Q837", WD + "Q148"
QUESTION = "What are the capitals of the countries Mount Everest is in?"
DECOMPOSITION = ("Entity: Mount Everest\n1. Which countries is Mount Everest in? | country\n"
                 "2. What is the capital of [ANS1]? | city\n")


def harmonic(n: int) -> Fraction:
    return sum((Fraction(1, k) for k in range(1, n + 1)), Fraction(0))


# -- the uncertainty formula ------------------------------------------------------------------
def test_digamma_matches_known_values():
    assert digamma(1.0) == -EULER
    assert digamma(0.5) == pytest.approx(-EULER - 2 * math.log(2), abs=1e-13)
    for n in (2, 5, 9, 10, 30):  # ψ(n) = −γ + H(n−1)
        assert digamma(float(n)) == pytest.approx(-EULER + float(harmonic(n - 1)), abs=1e-13)
    with pytest.raises(ValueError):
        digamma(0.0)


def test_aleatoric_uncertainty_on_known_logits():
    # integer logits make every digamma a harmonic number, so AU is an exact fraction:
    # AU = −Σ (αk/α0)[ψ(αk+1) − ψ(α0+1)] = Σ (αk/α0)(H(α0) − H(αk))
    assert aleatoric_uncertainty([3, 1]) == pytest.approx(11 / 24, abs=1e-13)
    assert aleatoric_uncertainty([2, 2]) == pytest.approx(7 / 12, abs=1e-13)
    assert aleatoric_uncertainty([1, 1, 1, 1, 1]) == pytest.approx(77 / 60, abs=1e-13)
    assert aleatoric_uncertainty([20, 5, 4, 3, 2]) == pytest.approx(float(
        sum(Fraction(a, 34) * (harmonic(34) - harmonic(a)) for a in (20, 5, 4, 3, 2))), abs=1e-12)
    # a logit at or under zero is no evidence; one option leaves nothing to be unsure between
    assert aleatoric_uncertainty([3, 1, -2.5, 0]) == aleatoric_uncertainty([3, 1])
    assert aleatoric_uncertainty([17.0]) == 0.0 and aleatoric_uncertainty([]) == 0.0
    # near-equal large logits approach ln k; one dominant logit is far below
    assert 1.55 < aleatoric_uncertainty([20, 20, 20, 20, 20]) < math.log(5)
    assert aleatoric_uncertainty([30, 5, 4, 3, 2]) < 1.1


def test_option_logits_keeps_the_options_among_the_top_tokens():
    top = {"A": 21.5, " B": 19.0, "The": 25.0, "None": 17.25, "C": 12.0, "B": 18.0}
    assert option_logits(top, ["A", "B", "C", "None"], 3) == [21.5, 19.0, 17.25]
    assert option_logits(top, ["D"], 5) == []


# -- the pure steps --------------------------------------------------------------------------
def test_decomposition_parses_chains_and_fills_the_answer_slot():
    chains = parse_decomposition(DECOMPOSITION + "Entity: K2\n1. Which countries is K2 in? | country\n"
                                 "Entity: nothing\n")
    assert [(c.entity, len(c.steps)) for c in chains] == [("Mount Everest", 2), ("K2", 1)]
    assert chains[0].steps[1] == SubQuestion("What is the capital of [ANS1]?", "city")
    assert chains[0].steps[1].filled("Nepal") == "What is the capital of Nepal?"
    assert len(parse_decomposition(DECOMPOSITION, max_hops=1)[0].steps) == 1
    # a sub-question that says again what the one before asked ends the chain
    said = {("What is the capital of it?", "Which city is the capital of it?"): 0.93}
    chain = parse_decomposition(DECOMPOSITION + "3. Which city is the capital of [ANS1]? | city\n")[0]
    assert cut_restatement(chain, lambda a, b: said.get((a, b), 0.4), 0.85) == chains[0]


def test_personalized_pagerank_favours_ends_reached_by_more_paths():
    rank = personalized_pagerank([("t", "a"), ("t", "b"), ("a", "x"), ("b", "x"), ("a", "y")], ["t"])
    assert sum(rank.values()) == pytest.approx(1.0)
    assert rank["x"] > rank["y"] > 0 and rank["t"] == max(rank.values())
    assert personalized_pagerank([("q", "z")], ["t"])["z"] == 0.0


def test_nucleus_keeps_top_p_between_the_bounds():
    scores = {"a": 0.9, "b": 0.85, "c": 0.5, "d": 0.4, "e": 0.3, "f": 0.2, "g": 0.1}
    assert nucleus(scores, at_least=2, at_most=10) == ["a", "b"]  # 0.9 of the mass in the first two
    assert nucleus(scores) == ["a", "b", "c", "d", "e"]  # widened to 5
    assert nucleus({i: 0.5 for i in range(20)}) == list(range(10))  # flat: cut to 10


def test_prefixes_and_packing_within_a_budget():
    f1 = Evidence("t", "r1", "m", "T", "one", "M")
    f2 = Evidence("m", "r2", "x", "M", "two", "X")
    f3 = Evidence("y", "r3", "m", "Y", "three", "M")
    long = ReasoningPath("t", "T", (Step(f1), Step(f2)))
    other = ReasoningPath("t", "T", (Step(f1), Step(f3, backward=True)))
    pool = prefixes([long, other])
    assert [p.end_label for p in pool] == ["M", "X", "Y"]
    assert [p.text() for p in pool][1] == "T | one | M; M | two | X"
    assert [p.line() for p in pool][1:] == ["T -> one -> M -> two -> X", "T -> one -> M <- three <- Y"]
    # best first; a path over the budget is skipped, a smaller one after it still fits
    cost = lambda p: 10 * len(p.steps)  # noqa: E731
    assert [p.end_label for p in pack(pool, [0.5, 0.9, 0.7], 35, cost)] == ["X", "M"]
    assert [p.end_label for p in pack(pool, [0.5, 0.9, 0.7], 50, cost)] == ["X", "Y", "M"]


def test_choice_grammar_and_parsing():
    assert choice_grammar(3, none=False, most=2) == 'root ::= pick(", " pick)?\npick ::= "A" | "B" | "C"\n'
    assert choice_grammar(2) == 'root ::= "None" | pick (", " pick)*\npick ::= "A" | "B"\n'
    assert parse_choices("B, A, B, E", 4) == [1, 0]
    assert parse_choices("None", 4) == []


def test_caching_llm_keeps_raw_logits_for_a_sweep(tmp_path):
    step = TokenLogprobs("A", -0.1, {"A": -0.1, "B": -2.4}, {"A": 21.0, "B": 18.7})
    inner = ScriptedLLM([Completion("A", 10, 1, 0.1, [step], "stop")])
    path = tmp_path / "cache.jsonl"
    first = CachingLLM(inner, path).complete("pick one", logprobs=5)
    again = CachingLLM(inner, path).complete("pick one", logprobs=5)  # the script is spent: from the file
    assert again.top_logprobs == first.top_logprobs == [step]


# -- the method on the demo store ------------------------------------------------------------
@pytest.fixture
def store(demo_store):  # noqa: F811
    with Store.open(demo_store, read_only=True) as st:
        yield st


def ask(store, responses, question=QUESTION, **params):
    llm = ScriptedLLM(responses)
    return make_method("prograg", QAContext(store=store, llm=llm), **params).answer(question), llm


def pick(text: str, logits: dict[str, float]) -> Completion:
    """A pick whose first token had these raw logits."""
    return Completion(text, 100, 1, 0.01, [TokenLogprobs(text[:1], -0.1, {}, logits)], "stop")


def test_a_two_hop_path_is_walked_and_answered_with_its_facts_as_evidence(store):
    result, llm = ask(store, [DECOMPOSITION, "A", "A, B", "A", "{Kathmandu}, {Beijing}"])
    assert not result.refused, result.refusal
    assert result.answers == ["Kathmandu", "Beijing"] and result.answer_iris == [WD + "Q3037", WD + "Q956"]
    assert {(e.s, e.p, e.o) for e in result.evidence} == {
        (EVEREST, WDT + "P17", NEPAL), (NEPAL, WDT + "P36", WD + "Q3037"),
        (EVEREST, WDT + "P17", CHINA), (CHINA, WDT + "P36", WD + "Q956")}
    prompts = llm.prompts
    # hop 1: Everest's relations ranked by similarity, the model prunes them to `country`,
    # whose two facts are taken without a pick (any pick would stand for both)
    assert "Expected answer type: country" in prompts[1] and "A. what is the country of Mount Everest" in prompts[1]
    hops = result.trace["walk"]["chains"][0]["hops"]
    assert hops[0]["pick"] == "(not asked: one relation)" and len(hops[0]["picked"]) == 2
    # hop 2: [ANS1] is both countries; the model picks one capital fact, its sibling comes along
    assert "[ANS1] is: Nepal; People's Republic of China" in prompts[2]
    assert prompts[3].startswith("Sub-question: What is the capital of [ANS1]?\n[ANS1] is: Nepal; People's "
                                 "Republic of China\nFacts:\nA. Nepal | capital | Kathmandu\n")
    assert "People's Republic of China | capital | Beijing" in prompts[3]
    # the answer step sees the packed paths and may mark only their ends
    assert "Mount Everest -> country -> Nepal -> capital -> Kathmandu\n" in prompts[4]
    assert "Mount Everest -> country -> People's Republic of China\n" in prompts[4]  # a prefix
    assert '"Kathmandu"' in llm.calls[4]["grammar"] and '"Mount Everest"' not in llm.calls[4]["grammar"]
    assert hops[1]["au"] is None and not hops[1]["gate"]  # a scripted pick has no logits: the gate stays closed


def test_an_unsure_none_opens_the_gate_and_a_sure_one_refuses(store):
    # hop 1 keeps `country` and `continent`: three facts, and the pick's options are A, B, C and None
    unsure = {"None": 20.0, "A": 19.9, "B": 19.8, "C": 19.7, "The": 25.0}  # AU = 1.3676 > 1.0 (k = 4)
    sure = {"None": 30.0, "A": 1.0, "B": 0.5, "C": 0.25}  # AU = 0.2321
    result, _ = ask(store, [DECOMPOSITION, "A, B", pick("None", unsure), "A, B", "A", "{Kathmandu}"],
                    au_threshold=1.0)
    hop = result.trace["walk"]["chains"][0]["hops"][0]
    assert hop["logits"] == [20.0, 19.9, 19.8, 19.7]  # "The" is no option
    assert hop["au"] == pytest.approx(aleatoric_uncertainty([20.0, 19.9, 19.8, 19.7]), abs=1e-4) and hop["gate"]
    assert set(hop["picked"]) == {"Mount Everest | country | Nepal", "Mount Everest | continent | Asia",
                                  "Mount Everest | country | People's Republic of China"}
    assert result.answers == ["Kathmandu"]
    result, llm = ask(store, [DECOMPOSITION, "A, B", pick("None", sure)], au_threshold=1.0)
    assert result.trace["walk"]["chains"][0]["hops"][0]["au"] == pytest.approx(0.2321, abs=1e-4)
    assert result.refused and result.refusal.reason == "no_path" and len(llm.calls) == 3
    assert "no path from 'Mount Everest' reaches a candidate answer" in result.refusal.message


def test_without_prefixes_the_middle_of_a_path_cannot_be_the_answer(store):
    responses = [DECOMPOSITION, "A", "A, B", "A", "{Nepal}"]
    with_prefixes, _ = ask(store, list(responses))
    assert with_prefixes.answers == ["Nepal"]  # a prefix ends at Nepal
    without, llm = ask(store, list(responses), prefixes=False)
    assert '"Nepal"' not in llm.calls[4]["grammar"]
    assert without.refused and without.refusal.reason == "not_in_store"


def test_a_question_about_no_store_entity_is_refused(store):
    result, llm = ask(store, ["Entity: Zorblax Mountains\n1. Which countries are the Zorblax Mountains in? | country\n"],
                      question="Which countries do the Zorblax Mountains cover?")
    assert result.refused and result.refusal.reason == "not_in_store" and len(llm.calls) == 1


def test_without_decomposition_the_question_is_asked_at_every_hop(store):
    result, llm = ask(store, ["A", "A, B", "None", "{Nepal}"], decompose=False)
    assert "llm" not in result.trace["decompose"]  # no call: the trace holds only the chain
    assert [p.split("\n")[0] for p in llm.prompts[:3]] == [f"Sub-question: {QUESTION}"] * 3
    assert result.answers == ["Nepal"] and len(result.trace["walk"]["chains"][0]["hops"]) == 2
    with pytest.raises(UnknownOptionError, match="au_threshold"):
        make_method("prograg", QAContext(store=store, llm=ScriptedLLM([])), threshold=0.5)


# -- the real local model (marked ``llm``: runs in CI, so one short question) -----------------
@pytest.mark.llm
def test_real_model_answers_a_two_hop_question_with_its_path_as_evidence(store):
    from kgstore.config import LLMConfig
    from qa.llm import llm_from_config

    # its own model instance (a context size no other test asks for: instances are shared by
    # it): llama.cpp's prompt cache, shared with earlier tests' prompts, evaluates a cached
    # prefix with other numerics, and a 1.5B model's chain can change with it
    result = make_method("prograg", QAContext(store, llm_from_config(LLMConfig(n_ctx=2304)))).answer(QUESTION)
    assert not result.refused, result.refusal
    assert set(result.answers) == {"Kathmandu", "Beijing"}
    assert {(EVEREST, WDT + "P17", NEPAL), (NEPAL, WDT + "P36", WD + "Q3037"),
            (EVEREST, WDT + "P17", CHINA), (CHINA, WDT + "P36", WD + "Q956")} <= {(e.s, e.p, e.o)
                                                                                 for e in result.evidence}
    assert result.trace["walk"]["chains"][0]["iri"] == EVEREST

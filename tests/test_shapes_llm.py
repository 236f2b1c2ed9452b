"""Question shapes with the real local model, through `kgstore ask` (the default cascade)
on the demo store: a count answered with the number, a yes with its fact and a no with the
store's other values, a comparison with both values as evidence, a date printed as a
date, and the three questions of issue 41 that need constraints and aggregations. Marked ``llm``: they run in CI, a few questions, each short."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore.cli import main
from kgstore.terms import WD, WDT

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

pytestmark = pytest.mark.llm


@pytest.fixture(scope="module")
def answers(demo_store, tmp_path_factory):
    """The four questions asked in one process (one model load), as JSON answers by question."""
    questions = ["How many countries does the Andes cover?", "Is Mount Everest in Nepal?",
                 "Is Mount Everest in Chile?", "Which country has the larger population, India or Nepal?",
                 "When was Douglas Adams born?",
                 # issue 41: a demonym as a constraint, a superlative over a count, yes/no against a constant
                 "Which Asian country has the largest population?",
                 "Which South American country borders the fewest countries?",
                 "Was Douglas Adams born after 1950?"]
    folder = tmp_path_factory.mktemp("shapes")
    (folder / "q.txt").write_text("\n".join(questions) + "\n")
    out = folder / "a.jsonl"
    result = CliRunner().invoke(main, ["ask", str(demo_store), "--questions", str(folder / "q.txt"),
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    return {d["question"]: d for d in docs}


def test_a_count_is_answered_with_the_number(answers):
    doc = answers["How many countries does the Andes cover?"]
    assert doc["answers"] == ["7"] and doc["shape"] == "count"
    assert doc["values"][0]["datatype"].endswith("#integer")
    assert {e["o"] for e in doc["evidence"] if e["p"] == WDT + "P17"} == {
        WD + q for q in ("Q414", "Q750", "Q298", "Q739", "Q736", "Q419", "Q717")}


def test_yes_with_its_fact_and_no_with_the_store_s_other_values(answers):
    yes = answers["Is Mount Everest in Nepal?"]
    assert yes["answers"] == ["yes"]
    assert [(e["s"], e["p"], e["o"]) for e in yes["evidence"]] == [(WD + "Q513", WDT + "P17", WD + "Q837")]
    no = answers["Is Mount Everest in Chile?"]
    assert no["answers"] == ["no"]
    assert {e["o"] for e in no["evidence"]} == {WD + "Q837", WD + "Q148"}


def test_a_comparison_has_both_values_as_evidence(answers):
    doc = answers["Which country has the larger population, India or Nepal?"]
    assert doc["answers"] == ["India"] and doc["answer_iris"] == [WD + "Q668"]
    populations = {e["s"]: e["o"] for e in doc["evidence"] if e["p"] == WDT + "P1082"}
    assert set(populations) == {WD + "Q668", WD + "Q837"}


def test_a_date_prints_as_a_date(answers):
    doc = answers["When was Douglas Adams born?"]
    assert doc["answers"] == ["1952-03-11"]
    assert doc["values"][0]["lexical"] == "1952-03-11T00:00:00Z"
    assert doc["values"][0]["kind"] == "date"


def test_questions_with_constraints_and_aggregations_in_any_wording(answers):
    # the sample holds a population for India and Nepal only; Venezuela borders one country
    assert answers["Which Asian country has the largest population?"]["answers"] == ["India"]
    assert answers["Which South American country borders the fewest countries?"]["answers"] == ["Venezuela"]
    born = answers["Was Douglas Adams born after 1950?"]
    assert born["answers"] == ["yes"]
    assert [(e["p"], e["o"]) for e in born["evidence"]] == [(WDT + "P569", "1952-03-11T00:00:00Z")]

"""Acceptance: `kgstore ask` with the real local model over the demo sample answers the
README's question correctly, with evidence, and refuses a question about an entity the
store does not hold. Several generations per question: ``llm`` and ``slow``."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore.cli import main
from kgstore.terms import WD, WDT

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def ask(store, question):
    result = CliRunner().invoke(main, ["ask", str(store), question, "-m", "pseudo-graph", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_demo_question_is_answered_from_the_store(demo_store):
    doc = ask(demo_store, "Who covers more countries, the Andes or the Himalayas?")
    assert doc["refused"] is False and doc["parametric"] is False
    assert doc["answers"] == ["Andes"]
    assert doc["answer_iris"] == [WD + "Q5456"]
    andes_countries = {e["o"] for e in doc["evidence"] if e["s"] == WD + "Q5456" and e["p"] == WDT + "P17"}
    assert andes_countries == {WD + q for q in ("Q414", "Q750", "Q298", "Q739", "Q736", "Q419", "Q717")}


def test_question_about_an_entity_not_in_the_store_is_refused(demo_store):
    doc = ask(demo_store, "Which countries do the Alps cover?")
    assert doc["refused"] is True
    assert doc["refusal"]["message"].startswith("not in the store")
    assert doc["answers"] == [] and doc["answer_iris"] == []

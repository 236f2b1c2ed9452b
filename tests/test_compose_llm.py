"""Composed query graphs picked by the real local model, through `kgstore ask` (the default
cascade) on a small film store: a count that compares two named people, two roles at once,
and which of two films is older. Marked ``llm``: a few short questions in one model load."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore.cli import main

from test_compose import FILMS

pytestmark = pytest.mark.llm

QUESTIONS = {
    "How many more films did Ann Lee direct than Bo Park?": ["3"],
    "Which films did Bo Park both direct and act in?": ["Salt Road"],
    "Night Harbor vs Glass River: which is older?": ["Night Harbor"],
    "Were Night Harbor and Glass River released in the same year?": ["no"],
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compose_llm")
    (folder / "films.txt").write_text(FILMS)
    store = str(folder / "store")
    runner = CliRunner()
    for args in (["init", store], ["ingest", store, "tsv", str(folder / "films.txt")], ["index", store]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    (folder / "q.txt").write_text("\n".join(QUESTIONS) + "\n")
    out = folder / "a.jsonl"
    result = runner.invoke(main, ["ask", store, "--questions", str(folder / "q.txt"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {d["question"]: d for d in map(json.loads, out.read_text().splitlines())}


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_the_model_picks_the_composed_query_graph(answers, question):
    doc = answers[question]
    assert doc["answers"] == QUESTIONS[question], json.dumps(doc.get("trace", {}).get("compose", {}), indent=1)[:3000]
    assert doc["evidence"]  # every composed answer rests on store facts

"""`kgstore ask` through click's CliRunner, with a ScriptedLLM passed as the CLI's obj."""
from __future__ import annotations

import json

from click.testing import CliRunner

from kgstore.cli import main
from kgstore.terms import WD
from qa import ScriptedLLM

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)
from test_qa_methods import ALPS_CYPHER, ANSWER, CYPHER, QUESTION, VERIFIED


def run(args, responses):
    llm = ScriptedLLM(responses)
    return CliRunner().invoke(main, args, obj={"llm": llm}), llm


def test_ask_json_has_the_documented_keys(demo_store):
    result, llm = run(["ask", str(demo_store), QUESTION, "--method", "pseudo-graph", "--format", "json"],
                      [CYPHER, VERIFIED, ANSWER])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {"answers", "answer_iris", "refused", "evidence", "trace", "seconds"} <= set(doc)
    assert doc["answers"] == ["Andes"] and doc["answer_iris"] == [WD + "Q5456"] and doc["refused"] is False
    first = doc["evidence"][0]
    assert set(first) == {"s", "s_label", "p", "p_label", "o", "o_label", "literal", "datatype", "score", "via"}
    assert doc["trace"]["pruning"]["k"] == 2
    assert doc["tokens"]["calls"] == 3 and len(llm.calls) == 3


def test_ask_table_shows_answer_evidence_and_trace(demo_store):
    result, _ = run(["ask", str(demo_store), QUESTION, "--trace", "-m", "pseudo-graph"], [CYPHER, VERIFIED, ANSWER])
    assert result.exit_code == 0, result.output
    assert "Answer: Andes  wd:Q5456" in result.output
    assert "Evidence" in result.output and "Peru (wd:Q419)" in result.output
    assert "pseudo-graph: " in result.output and "3 LLM calls" in result.output
    assert '"semantic_query"' in result.output  # the trace, as JSON


def test_ask_refuses_an_entity_not_in_the_store(demo_store):
    result, _ = run(["ask", str(demo_store), "Which countries do the Alps cover?", "-m", "pseudo-graph"],
                    [ALPS_CYPHER])
    assert result.exit_code == 0, result.output
    assert "Refused (empty_ground_graph): not in the store" in result.output


def test_ask_allow_parametric_flags_the_answer(demo_store):
    result, _ = run(["ask", str(demo_store), "Which countries do the Alps cover?", "--allow-parametric",
                     "-m", "pseudo-graph", "--format", "json"], [ALPS_CYPHER, "{France}"])
    doc = json.loads(result.output)
    assert doc["answers"] == ["France"] and doc["parametric"] is True and doc["refused"] is False


def test_ask_method_options_and_errors(demo_store):
    result, _ = run(["ask", str(demo_store), QUESTION, "-m", "pseudo-graph", "-o", "threshold=0.99",
                     "--format", "json"], [CYPHER])
    assert json.loads(result.output)["refusal"]["reason"] == "empty_ground_graph"
    bad, _ = run(["ask", str(demo_store), QUESTION, "--method", "magic"], [])
    assert bad.exit_code == 2 and "unknown QA method 'magic'" in bad.output
    typo, _ = run(["ask", str(demo_store), QUESTION, "-m", "pseudo-graph", "-o", "treshold=0.5"], [])
    assert typo.exit_code == 2 and "method pseudo-graph has no option 'treshold'" in typo.output
    assert "threshold (default 0.55)" in typo.output
    malformed, _ = run(["ask", str(demo_store), QUESTION, "-o", "threshold"], [])
    assert malformed.exit_code == 2 and "'threshold' is not KEY=VALUE" in malformed.output


def test_ask_without_an_index_fails_before_calling_the_model(tmp_path, sample_dir):
    import kgstore
    from kgstore import Store

    with Store.init(tmp_path / "s") as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
    result, llm = run(["ask", str(tmp_path / "s"), QUESTION, "-m", "pseudo-graph"], [])
    assert result.exit_code == 10
    assert f"has no triple index yet; build it with `kgstore index {tmp_path / 's'}`" in result.output
    assert llm.calls == []


def test_public_surface():
    import qa
    import qa.eval
    import qa.llm

    for module in (qa, qa.llm, qa.eval):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"

"""The evaluation harness: benchmark readers on the real files, the metrics, and
`kgstore eval` end to end with a ScriptedLLM (report files, exact scores, resume)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore import Store
from kgstore.cli import main
from kgstore.errors import DatasetError
from kgstore.terms import WD
from qa import ScriptedLLM, iris_missing_from_store, normalise_label
from qa.eval import f1, hits_at_1, metaqa_question, pathquestion_line, percentile, query_iris, read_dataset, \
    select_items, summarise, wc2014_line

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)


def test_metaqa_reader_scores_only_answerable_questions(shared_data):
    ds = read_dataset("metaqa", hops=1, split="dev", data_dir=shared_data / "qa")
    assert (len(ds.items), ds.unanswerable_skipped) == (9411, 581)
    first = ds.items[0]
    assert first.id == "metaqa-1hop-dev:1"
    assert first.question == "what movies did Temuera Morrison act in"
    assert first.gold == ("Once Were Warriors", "Tracker", "River Queen")
    assert (first.topic, first.qtype) == ("Temuera Morrison", "actor_to_movie")
    two = read_dataset("metaqa", hops=2, split="dev", data_dir=shared_data / "qa")
    assert (len(two.items), two.unanswerable_skipped) == (12555, 2317)


def test_pathquestion_and_worldcup_readers(shared_data):
    pq = read_dataset("pathquestion", hops=2, data_dir=shared_data / "qa")
    assert len(pq.items) == 1908
    assert pq.items[0].question == "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
    assert pq.items[0].gold == ("united_kingdom",) and pq.items[0].topic == "frederica_of_mecklenburg-strelitz"
    assert "no dev split" in pq.notes[0]
    wc = read_dataset("wc2014", hops=2, data_dir=shared_data / "qa")
    assert len(wc.items) == 1472
    assert wc.items[1].gold[0] == "Tigres_UANL" and len(wc.items[1].gold) == 12  # answer first, then the set


def test_reader_errors(tmp_path, shared_data):
    with pytest.raises(DatasetError, match="unknown dataset 'webqsp'"):
        read_dataset("webqsp", hops=1, data_dir=tmp_path)
    with pytest.raises(DatasetError, match="pathquestion has 2/3-hop questions, not 1-hop"):
        read_dataset("pathquestion", hops=1, data_dir=shared_data / "qa")
    with pytest.raises(DatasetError, match="vanilla_qa_test.txt not found; pass --data-dir"):
        read_dataset("metaqa", hops=1, split="test", data_dir=tmp_path)


def test_line_parsers():
    assert metaqa_question("what does [Tom Cullen] act in\tWeekend") == (
        "what does Tom Cullen act in", ("Weekend",), "Tom Cullen")
    assert pathquestion_line("q ?\tb(b/c/)\ta#r#x#r2#b#<end>#b") == ("q ?", ("b", "c"), "a")
    assert wc2014_line("q ?\tMexico\tA#r#B#s#Mexico\tMexico/\tctx") == ("q ?", ("Mexico",), "A")


def test_select_items_spreads_over_the_file():
    items = list(range(100))
    assert select_items(items, 4) == [0, 25, 50, 75]
    assert select_items(items, 3, sample="head") == [0, 1, 2]
    assert select_items(items, None) == items and select_items(items, 500) == items


def test_metrics():
    assert normalise_label("The_Little Colonel!") == normalise_label("little colonel") == "little colonel"
    assert normalise_label("Pérou") == "perou" and normalise_label("7.0") == "7"
    assert hits_at_1(["united kingdom", "x"], ["united_kingdom"]) == 1.0
    assert hits_at_1(["x", "united kingdom"], ["united_kingdom"]) == 0.0
    assert hits_at_1([], ["a"]) == 0.0
    assert f1(["a", "b"], ["a", "c", "d"]) == pytest.approx(0.4)  # P 1/2, R 1/3
    assert f1([], ["a"]) == 0.0
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([5.0], 90) == 5.0 and percentile([], 50) is None


def test_summarise_counts_refusals_and_hallucinated_iris():
    def rec(h, f, refused=False, bad=(), seconds=1.0):
        return {"hits@1": h, "f1": f, "refused": refused, "hallucinated_iris": list(bad), "seconds": seconds,
                "tokens": {"prompt": 10, "completion": 5, "total": 15, "calls": 1}}

    s = summarise([rec(1, 1), rec(0, 0, refused=True, seconds=3.0), rec(0, 0.5, bad=["x"], seconds=2.0)])
    assert s["questions"] == 3 and s["hits@1"] == pytest.approx(1 / 3) and s["f1"] == pytest.approx(0.5)
    assert s["refusal_rate"] == pytest.approx(1 / 3) and s["hallucinated_identifier_rate"] == pytest.approx(1 / 3)
    assert (s["latency_p50_s"], s["tokens_total"], s["hits@1_answered"]) == (2.0, 45, 0.5)


def test_iris_missing_from_store(demo_store):
    with Store.open(demo_store, read_only=True) as store:
        assert iris_missing_from_store(store, [WD + "Q5456", None, WD + "Q99999999", "http://x/<bad>"]) == [
            WD + "Q99999999", "http://x/<bad>"]
        # The country property exists as a triple predicate even if not as a catalog entity.
        assert iris_missing_from_store(store, ["http://www.wikidata.org/prop/direct/P17"]) == []


def test_a_querys_identifiers_leave_out_sparqls_datatype_casts():
    query = ("SELECT ?y WHERE { <http://kgstore.local/entity/Taxi> <http://kgstore.local/relation/release_year> ?y "
             "FILTER(<http://www.w3.org/2001/XMLSchema#double>(STR(?y)) = 1998) }")
    assert query_iris(query) == ["http://kgstore.local/entity/Taxi", "http://kgstore.local/relation/release_year"]


def _metaqa_dir(tmp_path):
    """A MetaQA-format folder (question<TAB>a|b, topic in brackets, answerable flags)."""
    hop = tmp_path / "qa" / "metaqa" / "1-hop"
    hop.mkdir(parents=True)
    (hop / "vanilla_qa_dev.txt").write_text(
        "which countries does [Andes] cover\tPeru|Chile\n"
        "which range is [Mount Everest] in\tHimalayas\n"
        "what is the capital of [Atlantis]\tPoseidonia\n"
        "which countries does [Himalayas] cover\tBhutan|Nepal\n")
    flags = tmp_path / "qa" / "metaqa" / "answerable_flags"
    flags.mkdir()
    (flags / "1-hop_dev_answerable_in_partial_kb.txt").write_text("1\n1\n0\n1\n")
    return tmp_path / "qa"


def test_eval_cli_writes_reports_with_exact_scores(demo_store, tmp_path):
    data = _metaqa_dir(tmp_path)
    out = tmp_path / "report"
    llm = ScriptedLLM(["{Peru}", "It is in the {Andes}", "{unknown}"])
    result = CliRunner().invoke(main, [
        "eval", str(demo_store), "--dataset", "metaqa", "--hops", "1", "--split", "dev", "--method", "io",
        "--limit", "0", "--data-dir", str(data), "--out", str(out), "--format", "json"], obj={"llm": llm})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["summary"][0]
    assert summary["method"] == "io" and summary["questions"] == 3
    assert summary["hits@1"] == pytest.approx(1 / 3)
    assert summary["f1"] == pytest.approx((2 / 3) / 3)
    assert summary["refusal_rate"] == pytest.approx(1 / 3)
    assert summary["hallucinated_identifier_rate"] == 0.0
    assert llm.prompts == ["Question: which countries does Andes cover", "Question: which range is Mount Everest in",
                           "Question: which countries does Himalayas cover"]
    report = json.loads((out / "report.json").read_text())
    assert report["dataset"]["unanswerable_skipped"] == 1
    questions = report["runs"][0]["questions"]
    assert [q["id"] for q in questions] == ["metaqa-1hop-dev:1", "metaqa-1hop-dev:2", "metaqa-1hop-dev:4"]
    assert questions[0]["answers"] == ["Peru"] and questions[0]["answer_iris"] == [WD + "Q419"]
    assert questions[1]["answer_iris"] == [WD + "Q5456"] and questions[1]["hits@1"] == 0.0
    md = (out / "report.md").read_text()
    assert "| io | 3 | 0.333 | 0.222 | 0.333 | 0.000 |" in md
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len((out / "results-io.jsonl").read_text().splitlines()) == 3

    # --resume reuses the saved answers: no model call at all.
    again = CliRunner().invoke(main, [
        "eval", str(demo_store), "-d", "metaqa", "--method", "io", "--limit", "0", "--data-dir", str(data),
        "--out", str(out), "--resume"], obj={"llm": ScriptedLLM([])})
    assert again.exit_code == 0, again.output
    assert "0.333" in again.output and "report:" in again.output

    # --replay answers the prompts already in OUT/llm-cache.jsonl from the file: the same
    # questions answered afresh (no --resume) with no model call, and the run says so
    replayed = CliRunner().invoke(main, [
        "eval", str(demo_store), "-d", "metaqa", "--method", "io", "--limit", "0", "--data-dir", str(data),
        "--out", str(out), "--replay", "--format", "json"], obj={"llm": ScriptedLLM([])})
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.output)["summary"][0]["hits@1"] == pytest.approx(1 / 3)
    assert json.loads((out / "report.json").read_text())["runs"][0]["params"]["replay"] is True


def test_eval_cli_rejects_unknown_methods(demo_store, tmp_path):
    result = CliRunner().invoke(main, ["eval", str(demo_store), "-d", "metaqa", "-m", "magic",
                                       "--data-dir", str(tmp_path)], obj={"llm": ScriptedLLM([])})
    assert result.exit_code == 2
    assert "unknown QA method 'magic'; choose one of: io, qsm, pseudo-graph" in result.output


def _placeholder_query(messages):
    """A scripted pgmr model: the question's topic as [ENT], its country as the relation."""
    question = messages[-1]["content"].rsplit("Question: ", 1)[1].split("\n")[0]
    for head, tail in (("which countries does ", " cover"), ("which range is ", " in")):
        if question.startswith(head):
            topic = question[len(head):-len(tail)]
    return f"SELECT DISTINCT ?x WHERE {{ [ENT: {topic}] [REL: country] ?x }}"


def test_eval_cli_not_in_store_questions_and_a_threshold_sweep(demo_store, tmp_path):
    data = _metaqa_dir(tmp_path)
    out = tmp_path / "absent"
    llm = ScriptedLLM([_placeholder_query] * 3)
    result = CliRunner().invoke(main, [
        "eval", str(demo_store), "-d", "metaqa", "-m", "pgmr", "--limit", "0", "--data-dir", str(data),
        "--out", str(out), "--unanswerable", "--format", "json"], obj={"llm": llm})
    assert result.exit_code == 0, result.output
    # "Mount Himalayas" finds the Himalayas ("Himalayas, mountain range in Asia") at 0.81, under
    # the default threshold of 0.95: only a name the store holds passes
    assert json.loads(result.output)["summary"][0]["refusal_rate"] == 1.0
    questions = json.loads((out / "report.json").read_text())["runs"][0]["questions"]
    assert [q["question"] for q in questions] == ["which countries does Andes Everest cover",
                                                  "which range is Mount Himalayas in",
                                                  "which countries does Himalayas Andes cover"]
    assert [q["refusal_reason"] for q in questions] == ["not_in_store"] * 3
    # "Mount Himalayas" is written in capitals, and no store name covers "Mount" in it:
    # refused before the model is asked; the other two reach the model's placeholders
    assert [q["tokens"]["calls"] for q in questions] == [1, 0, 1]

    sweep_out = tmp_path / "sweep"
    llm = ScriptedLLM([_placeholder_query] * 6)
    result = CliRunner().invoke(main, [
        "eval", str(demo_store), "-d", "metaqa", "-m", "pgmr", "--limit", "0", "--data-dir", str(data),
        "--out", str(sweep_out), "--sweep", "threshold=0.95:1.05:0.1", "-o", "read_answers=false",
        "--format", "json"], obj={"llm": llm})
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["pgmr"]["rows"]
    assert [r["value"] for r in rows] == [0.95, 1.05]
    # three answerable and three not-in-store questions, each asked of the model once for both
    # values, but for "Mount Himalayas", refused before the model
    assert len(llm.calls) == 5
    assert rows[0]["wrongful_refusal"] == 0.0 and rows[0]["refusal_not_in_store"] == 1.0
    assert rows[1]["wrongful_refusal"] == 1.0 and rows[1]["hits@1"] == 0.0  # no name scores above 1.0
    assert (sweep_out / "sweep-pgmr-threshold.png").read_bytes()[:4] == b"\x89PNG"

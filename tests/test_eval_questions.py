"""`kgstore eval --questions FILE`: typed scoring, the TSV/JSONL/QALD readers (QALD-10's
real file), the shape classifier on real QALD-10 gold queries, and --gold-from-sparql on
the demo store end to end with a ScriptedLLM."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore.cli import main
from kgstore.errors import DatasetError
from kgstore.terms import WD
from qa import ScriptedLLM
from qa.eval import (QAItem, TypedValue, by_shape, detect_format, gold_values, item_shape, literal_value, matches,
                     predicted_values, query_shape, read_questions_file, sparql_json_values, summarise, typed_f1,
                     typed_hits_at_1)
from qa.eval._typed import value_from_dict

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

XSD = "http://www.w3.org/2001/XMLSchema#"
QALD10 = "qa/qald10/qald_10.json"


def _one(text: str, iri: str | None = None) -> TypedValue:
    return predicted_values([text], [iri])[0]


# -- typed scoring ---------------------------------------------------------------------------------
def test_numbers_match_by_value_whatever_their_form():
    seven = literal_value("7", datatype=XSD + "integer")
    assert seven == TypedValue("number", 7.0, datatype=XSD + "integer")
    for said in ("7", "7.0", "+7", "7e0", "7.000"):
        assert matches(seven, _one(said)), said
    assert not matches(seven, _one("8")) and not matches(seven, _one("seven")) and not matches(seven, _one("17"))
    assert matches(gold_values(["7"])[0], _one("7.0"))
    assert matches(literal_value("100", datatype=XSD + "decimal"), _one("100.0"))
    # a number is not a boolean, nor a date
    assert not matches(seven, _one("true")) and not matches(seven, _one("0007-01-01"))


def test_booleans_yes_and_true_are_the_same():
    true, false = gold_values(["true"])[0], gold_values(["No"])[0]
    assert (true.kind, true.value, false.value) == ("boolean", True, False)
    assert matches(true, _one("Yes")) and matches(true, _one("TRUE")) and not matches(true, _one("no"))
    assert matches(false, _one("false")) and not matches(false, _one("0"))
    ask = sparql_json_values({"head": {}, "boolean": True})
    assert ask == [TypedValue("boolean", True, datatype=XSD + "boolean")]
    assert typed_hits_at_1([_one("yes")], ask) == 1.0 and typed_hits_at_1([_one("no")], ask) == 0.0


def test_dates_match_at_the_golds_precision():
    day = literal_value("1952-03-11T00:00:00Z", datatype=XSD + "dateTime")
    assert (day.kind, day.value, day.precision) == ("date", (1952, 3, 11), "day")
    for said in ("1952-03-11", "1952-03-11T00:00:00Z", "11 March 1952", "March 11, 1952"):
        assert matches(day, _one(said)), said
    # a less precise prediction, or another day, is wrong
    for said in ("1952", "1952-03", "1952-03-12", "March 1952"):
        assert not matches(day, _one(said)), said
    year = literal_value("1952", datatype=XSD + "gYear")
    assert (year.value, year.precision) == ((1952, None, None), "year")
    assert matches(year, _one("1952-03-11")) and matches(year, _one("1952")) and matches(year, _one("June 1952"))
    assert not matches(year, _one("1953-01-01"))
    month = gold_values(["1952-03"])[0]
    assert month.precision == "month" and matches(month, _one("1952-03-30")) and not matches(month, _one("1952-04-01"))
    # an untyped four-digit gold (a TSV file's "1952") is a number that also reads as a year
    plain = gold_values(["1952"])[0]
    assert (plain.kind, plain.year_like) == ("number", True)
    assert matches(plain, _one("1952")) and matches(plain, _one("1952-03-11")) and not matches(plain, _one("1953"))
    # BCE years stay dates
    assert literal_value("-3600000-01-01T00:00:00Z", datatype=XSD + "dateTime").value == (-3600000, 1, 1)


def test_an_answers_typed_value_is_scored_as_the_store_holds_it():
    """The value a method reports with its answer (``Answer.values``) is scored, not the
    text printed: a quantity with its unit, a date at the store's precision."""
    metres = {"value": "8126 metre", "lexical": "8126", "datatype": XSD + "decimal", "kind": "number", "unit": "metre"}
    [height] = predicted_values(["8126 metre"], [None], values=[metres])
    assert (height.kind, height.value, height.unit) == ("number", 8126.0, "metre")
    assert matches(gold_values(["8126"])[0], height) and not matches(gold_values(["8127"])[0], height)
    assert not matches(TypedValue("number", 8126.0, unit="foot"), height)
    born = {"value": "1265", "lexical": "1265-01-01T00:00:00Z", "datatype": XSD + "dateTime", "kind": "date",
            "precision": "year"}
    [year] = predicted_values(["1265"], [None], values=[born])
    assert (year.kind, year.value, year.precision) == ("date", (1265, None, None), "year")
    assert matches(literal_value("1265", datatype=XSD + "gYear"), year)
    assert not matches(literal_value("1265-05-21", datatype=XSD + "date"), year)  # the store knows only the year
    # an untyped "1265" read back from a results file still reads as a year
    plain = value_from_dict(predicted_values(["1265"])[0].to_dict())
    assert plain.year_like and matches(literal_value("1265", datatype=XSD + "gYear"), plain)


def test_entities_by_iri_or_by_label():
    andes = TypedValue("entity", WD + "Q5456", label="Andes")
    assert matches(andes, _one("something else", WD + "Q5456"))  # the IRI decides
    assert not matches(andes, _one("Andes", WD + "Q999"))  # the same name on another entity is wrong
    assert matches(andes, _one("the andes"))  # no predicted IRI: the labels, normalised
    assert not matches(TypedValue("entity", WD + "Q5456"), _one("Andes"))  # no gold label known: no match
    label_only = gold_values(["Once Were Warriors"])[0]
    assert label_only == TypedValue("entity", "Once Were Warriors")
    assert matches(label_only, _one("once were warriors", WD + "Q1"))
    assert gold_values(["<http://www.wikidata.org/entity/Q42>"])[0].iri == WD + "Q42"
    # a name that reads as a literal still matches by its text
    assert matches(TypedValue("entity", WD + "Q1", label="1984"), _one("1984"))
    assert matches(gold_values(["1984"])[0], _one("1984", WD + "Q208460"))


def test_literals_with_language_tags_compare_their_text():
    cologne = sparql_json_values({"head": {"vars": ["r"]}, "results": {"bindings": [
        {"r": {"type": "literal", "value": "Köln", "xml:lang": "de"}}]}})[0]
    assert (cologne.kind, cologne.value, cologne.lang) == ("string", "Köln", "de")
    assert matches(cologne, _one("Koln")) and matches(cologne, _one("köln")) and not matches(cologne, _one("Cologne"))


def test_typed_f1_over_answer_sets():
    gold = gold_values(["Peru", "Chile", "7"])
    assert typed_f1(predicted_values(["peru", "7.0"]), gold) == pytest.approx(0.8)  # P 2/2, R 2/3
    assert typed_f1(predicted_values(["Peru", "peru", "Bolivia"]), gold) == pytest.approx(0.4)  # P 1/2, R 1/3
    assert typed_f1([], gold) == 0.0 and typed_f1(predicted_values(["x"]), []) == 0.0
    assert typed_hits_at_1(predicted_values(["Bolivia", "Peru"]), gold) == 0.0


# -- readers ---------------------------------------------------------------------------------------
def test_qald10_reader_on_the_real_file(shared_data):
    ds = read_questions_file(shared_data / QALD10)
    assert (ds.format, len(ds.items), ds.notes) == ("qald", 394, [])
    items = {item.id: item for item in ds.items}
    riemann = items["0"]  # a uri answer
    assert riemann.question == "After whom is the Riemannian geometry named?"
    assert riemann.gold_values == (TypedValue("entity", WD + "Q42299"),)
    assert "wd:Q761383 wdt:P138 ?result" in riemann.sparql and riemann.shape == "chain"
    murakami = items["17"]  # a boolean answer
    assert murakami.gold_values == (TypedValue("boolean", False, datatype=XSD + "boolean"),)
    assert murakami.shape == "boolean" and matches(murakami.gold_values[0], _one("no"))
    madonna = items["42"]  # a count
    assert madonna.question == "On how many albums does Madonna perform?"
    assert madonna.gold_values == (TypedValue("number", 28.0, datatype=XSD + "integer"),) and madonna.shape == "count"
    assert typed_hits_at_1([_one("28")], madonna.gold_values) == 1.0
    ginsberg = items["240"]  # a date
    assert ginsberg.question == "When did Allen Ginsberg die?"
    assert ginsberg.gold_values == (TypedValue("date", (1997, 4, 5), datatype=XSD + "dateTime", precision="day"),)
    assert ginsberg.shape == "literal" and matches(ginsberg.gold_values[0], _one("5 April 1997"))
    turkish = items["38"]  # a language-tagged literal
    assert turkish.gold_values[0].lang == "tr"
    german = read_questions_file(shared_data / QALD10, language="de")
    assert {i.id: i for i in german.items}["0"].question == "Nach wem ist die Riemannsche Geometrie benannt?"
    with pytest.raises(DatasetError, match="no question of .* is written in 'xx'"):
        read_questions_file(shared_data / QALD10, language="xx")


def test_tsv_reader(tmp_path):
    path = tmp_path / "mine.tsv"
    path.write_text("# my questions\nwhat does [Tom Cullen] act in\tWeekend|The Last Days\n\n"
                    "when was [Taxi] released\t1998\nis [Peru] in South America\tyes\nwho am I\n", encoding="utf-8")
    ds = read_questions_file(path)
    assert ds.format == "tsv" and [i.id for i in ds.items] == ["mine:2", "mine:4", "mine:5", "mine:6"]
    first = ds.items[0]
    assert (first.question, first.topic, first.gold) == ("what does Tom Cullen act in", "Tom Cullen",
                                                         ("Weekend", "The Last Days"))
    assert [v.kind for v in first.gold_values] == ["entity", "entity"] and first.unscorable is None
    assert ds.items[1].gold_values[0].kind == "number" and ds.items[1].shape == "literal"
    assert ds.items[2].gold_values[0].value is True and ds.items[2].shape == "boolean"
    assert ds.items[3].unscorable == "no gold answers"  # no tab, no answers


def test_jsonl_reader_and_format_detection(tmp_path):
    path = tmp_path / "mine.jsonl"
    lines = [{"question": "Which countries does the Andes cover?", "answers": ["Peru", "Chile"], "id": "andes"},
             {"question": "How many?", "answers": [7], "type": "Count"},
             {"question": "Is Peru in the Andes?", "answers": {"head": {}, "boolean": True}},
             {"question": "Which?", "sparql": "SELECT ?c WHERE { wd:Q5456 wdt:P17 ?c }", "type": "round-trip"}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    ds = read_questions_file(path)
    assert ds.format == "jsonl" and [i.id for i in ds.items] == ["andes", "mine:2", "mine:3", "mine:4"]
    assert ds.items[1].gold_values == (TypedValue("number", 7.0),) and ds.items[1].shape == "count"
    assert ds.items[2].gold_values[0].value is True and ds.items[2].shape == "boolean"
    assert ds.items[3].shape == "round trip" and ds.items[3].unscorable is None  # a query can give the gold
    assert detect_format('{"questions": []}') == "qald"
    assert detect_format('\ufeff# c\n{"question": "q"}\n') == "jsonl" and detect_format("q\ta\n") == "tsv"
    # the format can be forced
    assert read_questions_file(path, fmt="tsv").items[0].question.startswith('{"question"')

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "a", "answers": ["x"]}\n{"question": "b", "answers": [}\n')
    with pytest.raises(DatasetError, match="bad.jsonl line 2 is not valid JSON"):
        read_questions_file(bad)
    bad.write_text('{"question": "a", "id": 1}\n{"question": "b", "id": "1"}\n')
    with pytest.raises(DatasetError, match="line 2: id '1' was already used on line 1"):
        read_questions_file(bad)
    with pytest.raises(DatasetError, match="not found"):
        read_questions_file(tmp_path / "missing.tsv")


# -- shapes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("qid,shape", [
    ("0", "chain"), ("26", "chain"), ("286", "chain"),  # wd:Q183883 wdt:P50/wdt:P19 ?result: a path
    ("42", "count"), ("13", "count"), ("65", "count"),
    ("17", "boolean"), ("7", "boolean"), ("12", "boolean"),  # "ASk" in any case
    ("172", "superlative"), ("338", "superlative"), ("90", "superlative"),  # ORDER BY .. LIMIT; MAX(
    ("293", "comparison"), ("290", "comparison"), ("299", "comparison"),  # IF(?q < ?p ..), FILTER(?lp > ?lk)
    ("3", "constraint"), ("10", "constraint"), ("130", "constraint"),
    ("312", "round trip"), ("1", "round trip"),
    ("240", "literal"), ("8", "literal"), ("39", "literal"),
])
def test_shapes_of_real_qald10_gold_queries(shared_data, qid, shape):
    items = {i.id: i for i in read_questions_file(shared_data / QALD10).items}
    assert items[qid].shape == shape, items[qid].sparql


def test_shape_rules_on_small_queries():
    assert query_shape("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 FILTER(YEAR(?d) >= 1910) }") == "chain"  # a constant
    assert query_shape("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 ; wdt:P27 wd:Q30 . OPTIONAL { ?x wdt:P1 ?y } }") == \
        "constraint"
    assert query_shape("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 . OPTIONAL { ?x wdt:P1 ?y } }") == "chain"
    assert query_shape("SELECT ?x WHERE { wd:Q1 wdt:P1 ?x }", ["date"]) == "literal"
    assert query_shape("not a query at all") == "chain"
    # UNION branches are alternatives: two patterns in different branches restrict nothing
    assert query_shape("SELECT ?r WHERE { { wd:Q1 wdt:P25 ?r } UNION { wd:Q1 wdt:P22 ?r } }") == "chain"
    assert query_shape("SELECT ?r WHERE { { wd:Q1 wdt:P25 ?r . ?r wdt:P21 wd:Q2 } UNION { wd:Q1 wdt:P22 ?r } }") == \
        "constraint"
    assert query_shape("SELECT ?r WHERE { { wd:Q1 wdt:P25 ?r } UNION { wd:Q1 wdt:P22 ?r } ?r wdt:P21 wd:Q2 }") == \
        "constraint"
    # ORDER BY .. LIMIT over answers the query names picks one of them: a comparison
    assert query_shape("SELECT ?x WHERE { ?x wdt:P2048 ?h FILTER(?x IN (wd:Q1, wd:Q2)) } ORDER BY DESC(?h) LIMIT 1") \
        == "comparison"
    assert query_shape("SELECT ?x WHERE { VALUES ?x { wd:Q1 wd:Q2 } ?x wdt:P2048 ?h } ORDER BY DESC(?h) LIMIT 1") \
        == "comparison"
    assert query_shape("SELECT ?x WHERE { VALUES ?x { wd:Q1 } ?x wdt:P2048 ?h } ORDER BY DESC(?h) LIMIT 1") == \
        "superlative"
    assert query_shape("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 ; wdt:P2048 ?h } ORDER BY DESC(?h) LIMIT 1") == \
        "superlative"
    assert item_shape("Superlatives", None) == "superlative" and item_shape("multi-intent", None) == "multi-intent"
    assert item_shape(None, None, ["boolean"]) == "boolean" and item_shape(None, None, ["entity"]) == "unknown"


def test_summary_per_shape_leaves_out_unscorable_questions():
    def rec(shape, h, f, **kw):
        return {"shape": shape, "hits@1": h, "f1": f, "refused": False, "hallucinated_iris": [], "seconds": 1.0,
                "tokens": {"prompt": 1, "completion": 1, "total": 2, "calls": 1}, **kw}

    records = [rec("count", 1.0, 1.0), rec("count", 0.0, 0.5), rec("boolean", 1.0, 1.0),
               {"id": "x", "shape": "chain", "unscorable": "gold query failed: boom"}]
    s = summarise(records)
    assert (s["questions"], s["unscorable"], s["hits@1"]) == (3, 1, pytest.approx(2 / 3))
    assert list(s["by_shape"]) == ["count", "boolean"]
    assert s["by_shape"]["count"] == {"questions": 2, "hits@1": 0.5, "f1": 0.75}
    assert by_shape([rec("zeta", 1, 1), rec("literal", 0, 0)]).keys() == {"literal", "zeta"}


# -- end to end ------------------------------------------------------------------------------------
def _andes_questions(tmp_path):
    lines = [
        {"id": "countries", "question": "Which countries does the Andes cover?",
         "sparql": "SELECT ?c WHERE { wd:Q5456 wdt:P17 ?c }"},
        {"id": "ask", "question": "Does the Andes cover Peru?", "sparql": "ASK { wd:Q5456 wdt:P17 wd:Q419 }"},
        {"id": "count", "question": "How many countries does the Andes cover?",
         "sparql": "SELECT (COUNT(?c) AS ?n) WHERE { wd:Q5456 wdt:P17 ?c }"},
        {"id": "broken", "question": "What breaks?", "sparql": "SELECT ?x WHERE { wd:Q5456 ?? }"},
        {"id": "absent", "question": "Who founded the Andes?", "sparql": "SELECT ?x WHERE { wd:Q5456 wdt:P112 ?x }",
         "answers": ["Pachamama"]},
    ]
    path = tmp_path / "andes.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_eval_questions_with_gold_from_sparql_on_the_demo_store(demo_store, tmp_path):
    questions, out = _andes_questions(tmp_path), tmp_path / "report"
    llm = ScriptedLLM(["{Peru}", "{yes}", "{7}"])
    args = ["eval", str(demo_store), "--questions", str(questions), "--gold-from-sparql", "-m", "io",
            "--limit", "0", "--sample", "head", "--out", str(out)]
    result = CliRunner().invoke(main, args + ["--format", "json"], obj={"llm": llm})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"][0]
    # three scorable questions: the broken query and the one finding nothing are not asked
    assert llm.prompts == ["Question: Which countries does the Andes cover?", "Question: Does the Andes cover Peru?",
                           "Question: How many countries does the Andes cover?"]
    assert (summary["questions"], summary["unscorable"], summary["hits@1"]) == (3, 2, 1.0)
    assert summary["f1"] == pytest.approx((0.25 + 1 + 1) / 3)  # Peru is 1 of the Andes' 7 countries
    assert summary["by_shape"] == {"count": {"questions": 1, "hits@1": 1.0, "f1": 1.0},
                                   "boolean": {"questions": 1, "hits@1": 1.0, "f1": 1.0},
                                   "chain": {"questions": 1, "hits@1": 1.0, "f1": 0.25}}
    report = json.loads((out / "report.json").read_text())
    assert report["gold_from_sparql"] is True and report["dataset"]["format"] == "jsonl"
    records = {r["id"]: r for r in report["runs"][0]["questions"]}
    countries = records["countries"]
    assert len(countries["gold_values"]) == 7 and "Peru" in countries["gold"]  # labelled from the store
    assert countries["predicted_values"] == [{"kind": "entity", "value": WD + "Q419", "label": "Peru"}]
    assert records["ask"]["gold_values"] == [{"kind": "boolean", "value": True, "datatype": XSD + "boolean"}]
    assert records["count"]["gold_values"][0]["value"] == 7.0
    assert records["broken"]["unscorable"].startswith("gold query failed: SPARQL syntax error")
    assert records["absent"]["unscorable"] == "gold query returned no answers from this store"
    assert "hits@1" not in records["broken"]
    md = (out / "report.md").read_text()
    assert "- unscorable: 2 questions" in md and "## Per shape" in md
    assert "| count | 1 | 1.000 | 1.000 |" in md and "| chain | 1 | 1.000 | 0.250 |" in md

    # --resume asks nothing again; the table shows the shapes and the unscorable reasons
    again = CliRunner().invoke(main, args + ["--resume"], obj={"llm": ScriptedLLM([])})
    assert again.exit_code == 0, again.output
    assert "per shape" in again.output and "round trip" not in again.output
    assert "2 unscorable question(s), not scored: 1 gold query failed; 1 gold query returned no answers" in \
        again.output


def test_eval_questions_scores_the_files_own_gold_with_types(demo_store, tmp_path):
    path = tmp_path / "mine.tsv"
    path.write_text("which countries does [Andes] cover\tPeru|Chile\nhow many countries does [Andes] cover\t7\n"
                    "does the [Andes] cover Peru\tyes\n", encoding="utf-8")
    out = tmp_path / "tsv"
    llm = ScriptedLLM(["{Chile}", "{7.0}", "{no}"])
    result = CliRunner().invoke(main, ["eval", str(demo_store), "--questions", str(path), "-m", "io", "--limit", "0",
                                       "--out", str(out), "--format", "json"], obj={"llm": llm})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"][0]
    assert summary["hits@1"] == pytest.approx(2 / 3) and "unscorable" not in summary
    assert summary["by_shape"]["literal"]["hits@1"] == 1.0 and summary["by_shape"]["boolean"]["hits@1"] == 0.0


def test_eval_questions_usage_errors(demo_store, tmp_path):
    questions = _andes_questions(tmp_path)

    def run(*extra):
        return CliRunner().invoke(main, ["eval", str(demo_store), *extra], obj={"llm": ScriptedLLM([])})

    both = run("--dataset", "metaqa", "--questions", str(questions))
    assert both.exit_code == 2 and "either --dataset NAME" in both.output
    assert "--dataset metaqa|pathquestion|wc2014, or --questions FILE" in run().output
    assert "--hops goes with --dataset" in run("--questions", str(questions), "--hops", "2").output
    assert "--gold-from-sparql goes with --questions FILE" in run("-d", "metaqa", "--gold-from-sparql").output
    empty = tmp_path / "empty.tsv"
    empty.write_text("# nothing\n")
    result = run("--questions", str(empty))
    assert result.exit_code == 2 and "no questions in" in result.output and "Traceback" not in result.output


def test_gold_notes_say_what_the_stores_gold_means():
    from qa.eval import gold_notes

    def item(qid, values, unscorable=None):
        return QAItem(id=qid, question="q", gold=(), gold_values=tuple(values), unscorable=unscorable)

    before = [item("a", gold_values(["true"])), item("b", gold_values(["12"])), item("c", gold_values(["x"])),
              item("d", [])]
    after = [item("a", gold_values(["false"])), item("b", gold_values(["12.0"])), item("c", [], "no answers"),
             item("d", gold_values(["0"]))]
    assert gold_notes(before, after) == [
        "1 of 4 gold queries gave no usable gold on this store (unscorable)",
        "2 gold answers are an ASK that is false or a count of 0: where the store lacks the question's facts, "
        "they only say so",
        "the store's gold equals the file's gold on 1 of the 2 scorable questions that have both"]


def test_a_questions_item_without_gold_is_unscorable_not_wrong():
    item = QAItem(id="q", question="q?", gold=(), gold_values=(), unscorable="no gold answers", shape="unknown")
    from qa.eval import unscorable_record

    assert unscorable_record(item)["unscorable"] == "no gold answers"


def test_a_gold_query_past_the_time_limit_or_the_row_cap_is_unscorable(demo_store):
    from kgstore import Store
    from qa.eval import gold_from_sparql, run_gold_query

    with Store.open(demo_store, read_only=True) as store:
        store.config.sparql.max_rows = 3
        values, reason = run_gold_query(store, "SELECT ?c WHERE { wd:Q5456 wdt:P17 ?c }")
        assert values is None and reason == "gold query returned more than the store's row cap (3 rows)"
        store.config.sparql.max_rows = 10_000
        store.config.sparql.timeout_s = 1e-6
        slow = QAItem(id="slow", question="q", gold=(), sparql="SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        [item] = gold_from_sparql([slow], store)
        assert item.unscorable.startswith("gold query failed: the query ran past the time limit")
        store.config.sparql.timeout_s = 30.0
        values, reason = run_gold_query(store, "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 1")
        assert values is None and "must be a SELECT or an ASK" in reason

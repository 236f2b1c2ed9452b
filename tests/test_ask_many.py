"""`kgstore ask --questions FILE` (many questions, one model load, resumable) and
`kgstore ask --server URL` (a running `kgstore serve` answers), on the indexed demo store.
A ScriptedLLM stands in for the model, in the CLI and in the live server."""
from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner

from kgstore.cli import main
from kgstore.server import ServeOptions
from qa import ScriptedLLM

from serve_fixtures import LiveServer
from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)
from test_qa_methods import ANSWER, CYPHER, QUESTION, VERIFIED

httpx = pytest.importorskip("httpx")


def invoke(args, llm=None, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], obj={"llm": llm} if llm else None, env=env)


def echo_answers(asked: list[str]):
    """A responder for the io method: notes the question it was given, answers "{Andes}"."""
    def respond(messages):
        asked.append(messages[-1]["content"])
        return "{Andes}"
    return respond


def asked_questions(asked: list[str], questions: list[str]) -> list[str]:
    """Which of ``questions`` the model prompts were about, in order."""
    return [next(q for q in questions if q in prompt) for prompt in asked]


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_no_traceback(result):
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


PLAIN = """# mountain ranges
Which countries does the Andes cover?

Which range is in Nepal?
   # an indented comment
Where is Aconcagua?
"""
PLAIN_QUESTIONS = ["Which countries does the Andes cover?", "Which range is in Nepal?", "Where is Aconcagua?"]


# -- many questions -----------------------------------------------------------------------------
def test_plain_questions_give_one_json_line_each(demo_store, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text(PLAIN, encoding="utf-8")
    asked: list[str] = []
    llm = ScriptedLLM([echo_answers(asked)] * 3)
    result = invoke(["ask", demo_store, "--questions", questions, "-m", "io"], llm)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # the answers go to the file, the summary to stderr
    assert "3 line(s) done" in result.stderr and "3 answered (0 refused), 0 error(s)" in result.stderr
    assert "answers in " + str(questions.with_name("questions.answers.jsonl")) in result.stderr
    out = records(tmp_path / "questions.answers.jsonl")
    assert [(r["line"], r["id"], r["question"]) for r in out] == list(zip([2, 4, 6], [None] * 3, PLAIN_QUESTIONS))
    for r in out:
        assert r["answers"] == ["Andes"] and r["method"] == "io" and r["error"] is None
        assert {"answer_iris", "refused", "evidence", "tokens", "seconds", "trace"} <= set(r)
    assert asked_questions(asked, PLAIN_QUESTIONS) == PLAIN_QUESTIONS
    assert len(llm.calls) == 3


def test_a_record_is_the_json_of_a_single_ask_plus_where_it_came_from(demo_store, tmp_path):
    single = invoke(["ask", demo_store, QUESTION, "-m", "pseudo-graph", "--format", "json"],
                    ScriptedLLM([CYPHER, VERIFIED, ANSWER]))
    questions = tmp_path / "one.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    many = invoke(["ask", demo_store, "--questions", questions, "-m", "pseudo-graph", "--out", "-"],
                  ScriptedLLM([CYPHER, VERIFIED, ANSWER]))
    assert single.exit_code == 0 and many.exit_code == 0, many.output
    [line] = many.stdout.splitlines()
    record = json.loads(line)
    assert list(record)[:3] == ["line", "id", "question"] and record["line"] == 1
    expected = {"line": 1, "id": None, **json.loads(single.stdout), "error": None}
    assert _timeless(record) == _timeless(expected)


def test_jsonl_questions_with_ids_and_bad_lines(demo_store, tmp_path):
    lines = [
        '{"question": "Which countries does the Andes cover?", "id": "andes"}',
        "",
        "# a comment in JSONL too",
        '{"question": "Which range is in Nepal?", "id": 7}',
        '{"question": "Where is Aconcagua?"',  # cut: not JSON
        '{"id": "no-question"}',
        '["not", "an", "object"]',
        '{"question": "Which range is in Chile?", "id": "andes"}',  # the id repeats line 1's
        '{"question": "Where is Aconcagua?", "extra": "ignored"}',
    ]
    questions = tmp_path / "qs.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    asked: list[str] = []
    llm = ScriptedLLM([echo_answers(asked)] * 3)
    result = invoke(["ask", demo_store, "--questions", questions, "-m", "io", "--out", "-"], llm)
    assert result.exit_code == 0, result.output
    assert_no_traceback(result)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["line"], r["id"]) for r in out] == [(1, "andes"), (4, 7), (5, None), (6, "no-question"), (7, None),
                                                 (8, "andes"), (9, None)]
    good = [r for r in out if r["error"] is None]
    assert [r["question"] for r in good] == ["Which countries does the Andes cover?", "Which range is in Nepal?",
                                             "Where is Aconcagua?"]
    assert all(r["answers"] == ["Andes"] for r in good)
    bad = {r["line"]: r["error"] for r in out if r["error"] is not None}
    assert all(e["type"] == "MalformedRecordError" for e in bad.values())
    assert bad[5]["message"].startswith(f"{questions}:5: not valid JSON")
    assert bad[6]["message"] == f'{questions}:6: "question" (a non-empty string) is missing'
    assert "not a JSON object" in bad[7]["message"]
    assert bad[8]["message"] == f"{questions}:8: id 'andes' was already used on line 1"
    assert len(llm.calls) == 3  # bad lines never reach the model
    assert "7 line(s) done" in result.stderr and "3 answered (0 refused), 4 error(s)" in result.stderr


def test_questions_from_stdin_answer_on_stdout(demo_store):
    asked: list[str] = []
    result = CliRunner().invoke(main, ["ask", str(demo_store), "--questions", "-", "-m", "io"],
                                input="Which range is in Nepal?\n", obj={"llm": ScriptedLLM([echo_answers(asked)])})
    assert result.exit_code == 0, result.output
    [record] = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["question"] == "Which range is in Nepal?" and record["answers"] == ["Andes"]


def test_an_interrupted_run_resumes_with_only_the_rest(demo_store, tmp_path):
    questions = [f"Which country is number {n} of the Andes?" for n in range(1, 6)]
    qfile = tmp_path / "qs.txt"
    qfile.write_text("\n".join(questions) + "\n", encoding="utf-8")
    out = tmp_path / "answers.jsonl"

    def ctrl_c(messages):
        raise KeyboardInterrupt

    first_asked: list[str] = []
    first = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", out],
                   ScriptedLLM([echo_answers(first_asked)] * 2 + [ctrl_c]))
    assert first.exit_code == 130, first.output
    assert_no_traceback(first)
    assert "interrupted: 2 of 5 questions have answers in" in first.stderr and "--resume" in first.stderr
    assert [r["question"] for r in records(out)] == questions[:2]

    # a kill in the middle of writing leaves a cut last line: it is not trusted
    with open(out, "a", encoding="utf-8") as f:
        f.write('{"line": 3, "id": null, "question": "Which country is number 3 of the Andes?", "answ')

    again = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", out], ScriptedLLM([]))
    assert again.exit_code == 2 and "already holds 2 answer(s): add --resume" in again.output

    rest_asked: list[str] = []
    llm = ScriptedLLM([echo_answers(rest_asked)] * 3)
    second = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", out, "--resume"], llm)
    assert second.exit_code == 0, second.output
    assert asked_questions(rest_asked, questions) == questions[2:]
    final = records(out)  # every line parses: the cut one is gone
    assert [r["question"] for r in final] == questions and [r["line"] for r in final] == [1, 2, 3, 4, 5]
    assert "3 line(s) done" in second.stderr and "2 kept from before" in second.stderr

    done = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", out, "--resume"], ScriptedLLM([]))
    assert done.exit_code == 0 and "all 5 question(s)" in done.stderr and "nothing to ask" in done.stderr


def test_resume_asks_a_line_again_when_its_question_changed(demo_store, tmp_path):
    qfile = tmp_path / "qs.txt"
    qfile.write_text("Which range is in Nepal?\nWhich range is in Peru?\n", encoding="utf-8")
    out = tmp_path / "answers.jsonl"
    assert invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", out],
                  ScriptedLLM(["{Himalayas}", "{Andes}"])).exit_code == 0
    qfile.write_text("Which range is in Nepal?\nWhich range is in Chile?\n", encoding="utf-8")
    asked: list[str] = []
    result = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", out, "--resume"],
                    ScriptedLLM([echo_answers(asked)]))
    assert result.exit_code == 0, result.output
    assert len(asked) == 1 and "Which range is in Chile?" in asked[0]


def test_wrong_combinations_are_usage_errors(demo_store, tmp_path):
    qfile = tmp_path / "qs.txt"
    qfile.write_text("Which range is in Nepal?\n", encoding="utf-8")
    cases = [
        (["ask", demo_store, QUESTION, "--questions", qfile], "either QUESTION or --questions FILE, not both"),
        (["ask", demo_store, "--questions", qfile, "--resume", "--out", "-"], "--resume needs the answers in a file"),
        (["ask", demo_store, QUESTION, "--resume"], "--resume goes with --questions FILE"),
        (["ask", demo_store, QUESTION, "--out", "x.jsonl"], "--out goes with --questions FILE"),
        (["ask", demo_store, QUESTION, "--token", "t"], "--token goes with --server URL"),
        (["ask", demo_store, QUESTION, "--timeout", "5"], "--timeout goes with --server URL"),
        (["ask", demo_store, "Which", "range", "is", "in", "Nepal?"], "put the question in quotes"),
        (["ask", demo_store], "missing QUESTION"),
        (["ask", "--server", "http://127.0.0.1:9", demo_store, QUESTION], "drop STORE"),
        (["ask", "--server", "http://127.0.0.1:9", demo_store, "--questions", qfile], "give no STORE or QUESTION"),
        (["ask", "--server", "http://127.0.0.1:9"], "give the QUESTION to send"),
        (["ask", "--server", "127.0.0.1:7878", QUESTION], "is not an http(s) URL"),
        (["ask", demo_store, "--questions", qfile, "--trace"], "holds its trace already"),
        (["ask", demo_store, "--questions", qfile, "--format", "table"], "--format table does not apply"),
        (["ask", demo_store, "--questions", qfile, "--out", qfile], "--out is the questions file itself"),
    ]
    for args, message in cases:
        llm = ScriptedLLM([])
        result = invoke(args, llm, env={"KGSTORE_PATH": None, "KGSTORE_TOKEN": None})
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
        assert_no_traceback(result)
        assert llm.calls == []


def test_unreadable_questions_file_and_answers_file(demo_store, tmp_path):
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Où est le Népal ?\n".encode("latin-1"))
    result = invoke(["ask", demo_store, "--questions", latin1, "-m", "io"], ScriptedLLM([]))
    assert result.exit_code == 2 and "is not UTF-8 text" in result.output
    assert_no_traceback(result)
    qfile = tmp_path / "qs.txt"
    qfile.write_text("\ufeffWhich range is in Nepal?\n", encoding="utf-8")  # a BOM is no part of the question
    (tmp_path / "a-folder").mkdir()
    result = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", tmp_path / "a-folder"],
                    ScriptedLLM([]))
    assert result.exit_code == 1 and "Could not open file" in result.output and "a-folder" in result.output
    assert_no_traceback(result)
    result = invoke(["ask", demo_store, "--questions", qfile, "-m", "io", "--out", "-"], ScriptedLLM(["{Andes}"]))
    assert json.loads(result.stdout)["question"] == "Which range is in Nepal?"


def test_store_from_kgstore_path(demo_store, tmp_path):
    result = invoke(["ask", "Which range is in Nepal?", "-m", "io", "--format", "json"], ScriptedLLM(["{Andes}"]),
                    env={"KGSTORE_PATH": str(demo_store)})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["answers"] == ["Andes"]


def test_help_says_which_way_to_ask_when():
    result = invoke(["ask", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "ask [OPTIONS] [STORE...] [QUESTION]" in text
    for example in ('kgstore ask ./mystore "Which countries does the Andes cover?"',
                    'kgstore ask ./wikidata ./freebase "Tell me about Douglas Adams"',
                    "kgstore ask ./mystore --questions questions.txt --resume",
                    'kgstore ask --server http://127.0.0.1:7878 "Which countries does the Andes cover?"'):
        assert example in text
    assert "loads the model once" in text and "keeps its model warm" in text
    assert "every argument before the question is a store" in text


# -- a running server ---------------------------------------------------------------------------
def _timeless(doc):
    if isinstance(doc, dict):
        return {k: _timeless(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_timeless(v) for v in doc]
    return doc


def test_server_answers_with_the_json_and_table_of_a_local_ask(demo_store):
    llm = ScriptedLLM([CYPHER, VERIFIED, ANSWER] * 3)
    with LiveServer(demo_store, llm=llm) as live, httpx.Client(base_url=live.url, timeout=60) as c:
        direct = c.post("/ask", json={"question": QUESTION, "method": "pseudo-graph"})
        assert direct.status_code == 200, direct.text
        result = invoke(["ask", "--server", live.url, QUESTION, "-m", "pseudo-graph", "--format", "json"])
        assert result.exit_code == 0, result.output
        assert _timeless(json.loads(result.stdout)) == _timeless(direct.json())
        table = invoke(["ask", "--server", live.url + "/", QUESTION, "-m", "pseudo-graph"])
        assert table.exit_code == 0, table.output
    assert "Answer: Andes  wd:Q5456" in table.stdout
    assert "Peru (wd:Q419)" in table.stdout and "pseudo-graph: " in table.stdout and "3 LLM calls" in table.stdout
    assert len(llm.calls) == 9  # the server's model answered all three


def test_server_token_is_sent_and_checked(demo_store):
    llm = ScriptedLLM(["{Andes}"] * 2)
    ask = ["ask", "--server", None, "Which range is in Peru?", "-m", "io", "--format", "json"]
    with LiveServer(demo_store, ServeOptions(token="s3cret"), llm=llm) as live:
        ask[2] = live.url
        missing = invoke(ask, env={"KGSTORE_TOKEN": None})
        wrong = invoke(ask + ["--token", "guess"])
        right = invoke(ask, env={"KGSTORE_TOKEN": "s3cret"})
        right_flag = invoke(ask + ["--token", "s3cret"], env={"KGSTORE_TOKEN": "stale"})
    assert missing.exit_code == 13 and "requires a token (401): pass --token TOKEN or set KGSTORE_TOKEN" in missing.output
    assert wrong.exit_code == 13 and f"the server at {live.url} rejected the token (401)" in wrong.output
    for refused in (missing, wrong):
        assert_no_traceback(refused)
    assert right.exit_code == 0, right.output
    assert json.loads(right.stdout)["answers"] == ["Andes"]
    assert right_flag.exit_code == 0 and json.loads(right_flag.stdout)["answers"] == ["Andes"]
    assert len(llm.calls) == 2


def test_server_refusals_are_worded_and_one_bad_question_does_not_stop_a_file(demo_store, tmp_path):
    qfile = tmp_path / "qs.txt"
    qfile.write_text("Which range is in Peru?\n" + "x" * 600 + "\nWhich range is in Nepal?\n", encoding="utf-8")
    llm = ScriptedLLM(["{Andes}", "{Himalayas}"])
    with LiveServer(demo_store, ServeOptions(max_body_bytes=500), llm=llm) as live:
        unknown = invoke(["ask", "--server", live.url, QUESTION, "-m", "magic"])
        many = invoke(["ask", "--server", live.url, "--questions", qfile, "-m", "io"])
        typo = invoke(["ask", "--server", live.url, "--questions", qfile, "-m", "io", "-o", "no_such=1",
                       "--out", "-"])
    assert unknown.exit_code == 13
    assert f"the server at {live.url} refused the question (400): unknown QA method 'magic'" in unknown.output
    assert many.exit_code == 0, many.output
    out = records(tmp_path / "qs.answers.jsonl")
    assert [r["answers"] for r in out if r["error"] is None] == [["Andes"], ["Himalayas"]]
    [too_long] = [r for r in out if r["error"]]
    assert too_long["line"] == 2 and too_long["error"]["type"] == "ServerRefusedError"
    assert "too large (413)" in too_long["error"]["message"]
    # an option the method lacks would fail every question: the run stops at the first
    assert typo.exit_code == 13 and "no_such" in typo.output and typo.stdout == ""
    assert_no_traceback(typo)


def test_questions_file_through_a_server(demo_store, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text(PLAIN, encoding="utf-8")
    asked: list[str] = []
    llm = ScriptedLLM([echo_answers(asked)] * 3)
    with LiveServer(demo_store, llm=llm) as live:
        result = invoke(["ask", "--server", live.url, "--questions", questions, "-m", "io"])
    assert result.exit_code == 0, result.output
    out = records(tmp_path / "questions.answers.jsonl")
    assert [(r["line"], r["question"], r["answers"]) for r in out] == \
        [(2, PLAIN_QUESTIONS[0], ["Andes"]), (4, PLAIN_QUESTIONS[1], ["Andes"]), (6, PLAIN_QUESTIONS[2], ["Andes"])]
    assert asked_questions(asked, PLAIN_QUESTIONS) == PLAIN_QUESTIONS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_is_a_clear_error(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}"
    result = invoke(["ask", "--server", url, "Which range is in Peru?"])
    assert result.exit_code == 12
    assert f"Error: no kgstore server answered at {url}" in result.output
    assert "start one with `kgstore serve STORE`" in result.output
    assert_no_traceback(result)
    qfile = tmp_path / "qs.txt"
    qfile.write_text("Which range is in Peru?\n", encoding="utf-8")
    many = invoke(["ask", "--server", url, "--questions", qfile])
    assert many.exit_code == 12 and "no kgstore server answered" in many.output
    assert not (tmp_path / "qs.answers.jsonl").exists()  # nothing answered, nothing written


def test_a_slow_server_times_out_with_a_clear_error(demo_store):
    import time

    def slow(messages):
        time.sleep(1.5)
        return "{Andes}"

    with LiveServer(demo_store, llm=ScriptedLLM([slow])) as live:
        result = invoke(["ask", "--server", live.url, "Which range is in Peru?", "-m", "io", "--timeout", "0.3"])
    assert result.exit_code == 12
    assert f"the server at {live.url} did not answer within 0.3 s" in result.output and "raise --timeout" in result.output
    assert_no_traceback(result)

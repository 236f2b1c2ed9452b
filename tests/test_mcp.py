"""`kgstore mcp` as an MCP client sees it: the SDK's own stdio client spawns the real
command on the demo store, lists the tools and calls each one; `ask` runs on a scripted
model (the CLI's ``obj={"llm": ...}``, as the eval kill tests pass one to a child) and,
once, on the packaged model; streamable HTTP checks the token."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver")

import anyio  # noqa: E402
import httpx  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from test_qa_fixtures import demo_store  # noqa: F401,E402  (session fixture)

BIN = Path(sys.executable).parent
KGSTORE = str(BIN / "kgstore")
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
QUESTION = "Which countries does the Andes cover?"
DRAFT = "SELECT DISTINCT ?x WHERE { [ENT: Andes] [REL: country] ?x }"
ANDES_COUNTRIES = {"Argentina", "Bolivia", "Chile", "Colombia", "Ecuador", "Peru", "Venezuela"}
ANDES, COUNTRY = "http://www.wikidata.org/entity/Q5456", "http://www.wikidata.org/prop/direct/P17"
TOOLS = {"sparql", "search", "link", "entity", "relations", "ask"}

# `kgstore mcp` with a scripted model: the draft SPARQL when asked for SPARQL, else (pgmr
# reads the paths' facts) an answer mark.
SCRIPTED = ("import sys\nfrom kgstore.cli import main\nfrom qa import ScriptedLLM\n"
            f"said = lambda m: {DRAFT!r} if m[-1]['content'].endswith('SPARQL:') else '{{Peru}}'\n"
            "main(sys.argv[1:], prog_name='kgstore', obj={'llm': ScriptedLLM([said] * 20)})\n")


def run_client(params: StdioServerParameters, errlog, work):
    """``await work(session)`` on an initialized session with the server ``params`` starts;
    the SDK's client stops the server when the block ends."""
    async def main():
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return anyio.run(main)


def kgstore_mcp(store, *args) -> StdioServerParameters:
    return StdioServerParameters(command=KGSTORE, args=["mcp", str(store), *args], env=ENV)


def doc(result) -> dict:
    assert not result.is_error, result.content[0].text
    parsed = json.loads(result.content[0].text)
    assert parsed == result.structured_content
    return parsed


def error_text(result) -> str:
    assert result.is_error
    return result.content[0].text


def test_tools_have_schemas_and_each_answers_on_the_demo_store(demo_store, tmp_path):
    async def work(session):
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert tool.description and "\n" not in tool.description
            assert tool.annotations.read_only_hint is True
            for name, prop in tool.input_schema["properties"].items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"
        assert listed["search"].input_schema["properties"]["kind"]["enum"] == [
            "entities", "relations", "triples", "statements", "uris"]
        assert listed["sparql"].input_schema["required"] == ["query"]
        assert "cascade" in json.dumps(listed["ask"].input_schema["properties"]["method"])

        out = {}
        out["sparql"] = doc(await session.call_tool("sparql", {
            "query": "SELECT ?c ?name WHERE { wd:Q5456 wdt:P17 ?c . ?c rdfs:label ?name } ORDER BY ?name"}))
        out["capped"] = doc(await session.call_tool("sparql", {"query": "SELECT * WHERE { ?s ?p ?o }", "limit": 3}))
        out["ask_query"] = doc(await session.call_tool("sparql", {"query": "ASK { wd:Q5456 wdt:P17 wd:Q419 }"}))
        out["search"] = doc(await session.call_tool("search", {"text": "mountains in Nepal", "kind": "triples",
                                                               "k": 5}))
        out["entities"] = doc(await session.call_tool("search", {"text": "Andes", "k": 3}))
        out["link"] = doc(await session.call_tool("link", {"mention_or_question": QUESTION}))
        out["entity"] = doc(await session.call_tool("entity", {"id": "wd:Q419", "limit": 5, "incoming": 3}))
        out["relations"] = doc(await session.call_tool("relations", {"words": "country"}))
        out["all_relations"] = doc(await session.call_tool("relations", {"limit": 2}))
        out["stats"] = json.loads((await session.read_resource("kgstore://stats")).contents[0].text)
        out["page"] = json.loads((await session.read_resource("kgstore://entity/Q5456")).contents[0].text)
        return out

    with open(tmp_path / "stderr.txt", "w") as errlog:
        out = run_client(kgstore_mcp(demo_store), errlog, work)

    sparql = out["sparql"]
    assert sparql["variables"] == ["c", "name"] and sparql["truncated"] is False
    assert [r["name"] for r in sparql["rows"]] == sorted(ANDES_COUNTRIES)
    assert {r["c"] for r in sparql["rows"]} >= {"wd:Q419", "wd:Q414"}  # IRIs with the store's prefixes
    assert len(out["capped"]["rows"]) == 3 and out["capped"]["truncated"] is True
    assert out["ask_query"] == {"boolean": True}
    hits = out["search"]["hits"]
    assert out["search"]["kind"] == "triples" and len(hits) == 5
    assert hits[0]["text"].startswith("Himalayas") and hits[0]["score"] >= hits[-1]["score"]
    assert out["entities"]["hits"][0]["label"] == "Andes"
    best = out["link"]["candidates"][0]
    assert (best["label"], best["id"], best["iri"]) == ("Andes", "wd:Q5456", ANDES)
    assert best["description"] == "mountain range in South America" and 0 < best["score"] <= 1
    peru = out["entity"]
    assert peru["label"] == "Peru" and len(peru["facts"]) == 5
    assert 0 < len(peru["incoming_facts"]) <= 3
    assert {"relation", "relation_id", "value", "value_iri"} <= set(peru["facts"][0])
    relations = out["relations"]["relations"]
    assert relations[0] == {"label": "country", "id": "P17", "prefixed": "wdt:P17", "facts": 30,
                            "description": "sovereign state that this item is in"}
    assert out["relations"]["total"] == len(relations)
    assert all("country" in (r["label"] + " " + (r["description"] or "")).lower() for r in relations)
    assert len(out["all_relations"]["relations"]) == 2 and out["all_relations"]["total"] > 2
    assert out["stats"]["triples"] == 390 and out["stats"]["entities"] > 0
    assert out["page"]["label"] == "Andes" and out["page"]["facts"]


def test_bad_arguments_and_updates_are_tool_errors_and_the_server_lives_on(demo_store, tmp_path):
    async def work(session):
        said = {
            "wrong_type": await session.call_tool("search", {"text": 5}),
            "missing": await session.call_tool("link", {}),
            "out_of_range": await session.call_tool("search", {"text": "Andes", "k": 0}),
            "bad_kind": await session.call_tool("search", {"text": "Andes", "kind": "people"}),
            "bad_method": await session.call_tool("ask", {"question": QUESTION, "method": "magic"}),
            "update": await session.call_tool("sparql", {"query": "DELETE WHERE { ?s ?p ?o }"}),
            "service": await session.call_tool("sparql", {
                "query": "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"}),
            "syntax": await session.call_tool("sparql", {"query": "SELECT WHERE {"}),
            "no_entity": await session.call_tool("entity", {"id": "Q99999999"}),
            "blank": await session.call_tool("search", {"text": "   "}),
        }
        try:
            await session.read_resource("kgstore://entity/Q99999999")
            said["no_page"] = None
        except Exception as exc:  # the SDK raises the server's resource error
            said["no_page"] = str(exc)
        said["after"] = await session.call_tool("sparql", {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"})
        return said

    with open(tmp_path / "stderr.txt", "w") as errlog:
        said = run_client(kgstore_mcp(demo_store), errlog, work)

    assert "text" in error_text(said["wrong_type"]) and "valid string" in error_text(said["wrong_type"])
    assert "mention_or_question" in error_text(said["missing"]) and "required" in error_text(said["missing"])
    assert "greater than or equal to 1" in error_text(said["out_of_range"])
    assert "'entities'" in error_text(said["bad_kind"])
    assert "'cascade'" in error_text(said["bad_method"])
    # the sentences `kgstore sparql` and `kgstore entity` print
    assert error_text(said["update"]).startswith("DELETE is a SPARQL update; queries here only read")
    assert error_text(said["service"]).startswith("SERVICE (federated query) is refused")
    assert error_text(said["syntax"])
    assert error_text(said["no_entity"]) == f"no entity 'Q99999999' in {demo_store}"
    assert error_text(said["blank"]) == "text (the words to search for) is required"
    assert said["no_page"] and "no entity 'Q99999999'" in said["no_page"]
    assert doc(said["after"])["rows"] == [{"n": "390"}]  # nothing was deleted, and the server still answers


def test_ask_with_a_scripted_model_reports_progress(demo_store, tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-c", SCRIPTED, "mcp", str(demo_store)], env=ENV)
    progress: list[list[str]] = [[], []]

    async def work(session):
        answers = []
        for i in range(2):
            async def on_progress(done, total, message, i=i):
                progress[i].append(message)

            answers.append(await session.call_tool("ask", {"question": QUESTION, "method": "pgmr"},
                                                   progress_callback=on_progress))
        return answers

    with open(tmp_path / "stderr.txt", "w") as errlog:
        first, second = run_client(params, errlog, work)

    answer = doc(first)
    assert answer["refused"] is False and answer["refusal"] is None and answer["method"] == "pgmr"
    assert set(answer["answers"]) == ANDES_COUNTRIES
    assert f"<{ANDES}> <{COUNTRY}> ?x" in answer["query"]
    assert {(e["s"], e["p"]) for e in answer["evidence"]} == {(ANDES, COUNTRY)}
    assert {e["o_label"] for e in answer["evidence"]} == ANDES_COUNTRIES
    assert "meant" in answer and "trace" not in answer
    assert progress[0][:3] == ["loading the model", "linking/started", "model call 1"]
    assert progress[0][-1] == "done: answered"
    assert progress[1][0] == "linking/started" and "loading the model" not in progress[1]  # the model stays warm
    assert set(doc(second)["answers"]) == ANDES_COUNTRIES


@pytest.mark.llm
def test_ask_with_the_packaged_model(demo_store, tmp_path):
    messages: list[str] = []

    async def work(session):
        async def on_progress(done, total, message):
            messages.append(message)

        return await session.call_tool("ask", {"question": QUESTION}, progress_callback=on_progress,
                                       read_timeout_seconds=600)

    with open(tmp_path / "stderr.txt", "w") as errlog:
        answer = doc(run_client(kgstore_mcp(demo_store), errlog, work))
    assert not answer["refused"], answer["refusal"]
    assert set(answer["answers"]) & ANDES_COUNTRIES and answer["query"] and answer["evidence"]
    assert "linking/started" in messages and messages[-1] == "done: answered"


# -- streamable HTTP ----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"kgstore mcp --http exited with {proc.returncode}: {log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"kgstore mcp --http did not listen on {port}: {log.read_text()}")


def test_streamable_http_needs_the_token(demo_store, tmp_path):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    log = tmp_path / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([KGSTORE, "mcp", str(demo_store), "--http", "--port", str(port), "--token", "s3cret"],
                                stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **ENV})
    try:
        wait_for_port(port, proc, log)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        headers = {"Accept": "application/json, text/event-stream"}
        bare = httpx.post(url, json=init, headers=headers, timeout=30)
        wrong = httpx.post(url, json=init, headers={**headers, "Authorization": "Bearer nope"}, timeout=30)
        assert bare.status_code == wrong.status_code == 401
        assert bare.text == "a valid 'Authorization: Bearer TOKEN' header is required\n"
        assert bare.headers["www-authenticate"] == "Bearer"

        async def main():
            client = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=60)
            async with client, streamable_http_client(url, http_client=client) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                rows = doc(await session.call_tool("sparql", {"query": "ASK { wd:Q5456 wdt:P17 wd:Q419 }"}))
                refused = await session.call_tool("sparql", {"query": "DELETE WHERE { ?s ?p ?o }"})
                return tools, rows, refused

        tools, rows, refused = anyio.run(main)
        assert tools == TOOLS and rows == {"boolean": True}
        assert error_text(refused).startswith("DELETE is a SPARQL update")
        assert "over MCP (streamable HTTP) at " + url in log.read_text()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


# -- the command ----------------------------------------------------------------------------------------
def test_help_teaches_and_does_not_import_the_sdk():
    code = ("import sys\nfrom kgstore.cli import main\n"
            "try:\n    main(['--help'], prog_name='kgstore')\nexcept SystemExit:\n    pass\n"
            "print('imported' if 'mcp' in sys.modules else 'not imported')\n")
    top = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "mcp " in top.stdout and top.stdout.rstrip().endswith("not imported")
    helped = subprocess.run([KGSTORE, "mcp", "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0
    for taught in ('"mcpServers"', '"args": ["mcp", "/path/to/store"]', "kgstore mcp ./mystore --http",
                   "ask(question, method?)", "kgstore://stats"):
        assert taught in helped.stdout


def test_missing_extra_and_stray_options_are_one_line_errors(demo_store, monkeypatch):
    from click.testing import CliRunner

    from kgstore.cli import main

    stray = CliRunner().invoke(main, ["mcp", str(demo_store), "--token", "s3cret"])
    assert stray.exit_code == 2 and "--token applies to --http only" in stray.output
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "kgstore.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp now fails as when it is not installed
    missing = CliRunner().invoke(main, ["mcp", str(demo_store)])
    assert missing.exit_code == 1
    assert missing.output.startswith("Error: `kgstore mcp` needs the mcp extra (mcp")
    assert missing.output.endswith("is missing): pip install 'kgstore[mcp]'\n") and missing.output.count("\n") == 1


def test_public_surface():
    import kgstore.mcp

    assert set(kgstore.mcp.__all__) == {"McpOptions", "StoreServer", "serve_stdio", "serve_http", "HTTP_PATH"}
    for name in kgstore.mcp.__all__:
        assert getattr(kgstore.mcp, name) is not None


def test_http_options_reach_the_server_and_exposure_is_warned(demo_store, monkeypatch):
    from click.testing import CliRunner

    import kgstore.mcp
    from kgstore.cli import main

    calls = []
    monkeypatch.setattr(kgstore.mcp, "serve_http", lambda store, options, **kw: calls.append((store, options, kw)))
    exposed = CliRunner().invoke(main, ["mcp", str(demo_store), "--http", "--host", "0.0.0.0", "--max-rows", "7"])
    assert exposed.exit_code == 0
    assert ("Warning: serving on 0.0.0.0 without --token: anyone who can reach this address can read the store."
            in exposed.output)
    monkeypatch.setenv("KGSTORE_TOKEN", "from-env")
    quiet = CliRunner().invoke(main, ["mcp", str(demo_store), "--http", "--host", "0.0.0.0", "--port", "8123"])
    assert quiet.exit_code == 0 and "Warning" not in quiet.output
    (_, first, first_kw), (_, _, second_kw) = calls
    assert first.max_rows == 7 and first_kw["host"] == "0.0.0.0" and first_kw["token"] is None
    assert second_kw["token"] == "from-env" and second_kw["port"] == 8123

"""The server's /search, /link and /ask on the indexed demo store, against `kgstore search`,
`kgstore link` and `kgstore ask` (a ScriptedLLM stands in for the model)."""
from __future__ import annotations

import json
import threading
import time

import pytest
from click.testing import CliRunner

from kgstore.cli import main
from kgstore.server import ServeOptions
from qa import ScriptedLLM

from serve_fixtures import LiveServer
from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)
from test_qa_methods import ANSWER, CYPHER, QUESTION, VERIFIED

httpx = pytest.importorskip("httpx")


def cli(*args, llm=None):
    result = CliRunner().invoke(main, [str(a) for a in args], obj={"llm": llm} if llm else None)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _timeless(doc):
    """An answer document without what differs from run to run (timings)."""
    if isinstance(doc, dict):
        return {k: _timeless(v) for k, v in doc.items() if k not in ("seconds",)}
    if isinstance(doc, list):
        return [_timeless(v) for v in doc]
    return doc


def test_search_and_link_match_the_cli(demo_store):
    with LiveServer(demo_store) as live, httpx.Client(base_url=live.url, timeout=60) as c:
        hits = c.get("/search", params={"kind": "triples", "q": "mountains in Nepal", "k": 5})
        assert hits.status_code == 200
        assert hits.json() == cli("search", demo_store, "mountains in Nepal", "--kind", "triples", "-k", 5,
                                  "--format", "json")
        assert hits.json()[0]["text"].startswith("Himalayas")
        entities = c.get("/search", params={"kind": "entities", "q": "Andes", "k": 3}).json()
        assert entities[0]["label"] == "Andes"
        linked = c.get("/link", params={"q": "which countries does the Andes cover"})
        assert linked.json() == cli("link", demo_store, "which countries does the Andes cover", "--format", "json")
        assert linked.json()[0]["label"] == "Andes"


def test_ask_returns_the_json_of_kgstore_ask(demo_store):
    expected = cli("ask", demo_store, QUESTION, "-m", "pseudo-graph", "--format", "json",
                   llm=ScriptedLLM([CYPHER, VERIFIED, ANSWER]))
    llm = ScriptedLLM([CYPHER, VERIFIED, ANSWER])
    with LiveServer(demo_store, llm=llm) as live, httpx.Client(base_url=live.url, timeout=60) as c:
        response = c.post("/ask", json={"question": QUESTION, "method": "pseudo-graph"})
        assert response.status_code == 200, response.text
        doc = response.json()
        assert doc["answers"] == ["Andes"] and doc["refused"] is False
        assert _timeless(doc) == _timeless(expected)
        assert len(llm.calls) == 3
        bad = c.post("/ask", json={"question": QUESTION, "method": "magic"})
        assert bad.status_code == 400 and "unknown QA method 'magic'" in bad.json()["error"]
        assert c.post("/ask", content=b"not json").status_code == 400
        assert c.post("/ask", json={"method": "io"}).json()["error"] == '"question" (a string) is required'
        option = c.post("/ask", json={"question": QUESTION, "options": {"no_such_option": 1}})
        assert option.status_code == 400 and "no_such_option" in option.json()["error"]


def test_ask_requests_queue_for_the_one_model(demo_store):
    """Concurrent /ask requests reach the model one at a time, and all are answered; the
    SPARQL endpoint keeps answering meanwhile."""
    active, overlaps = [0], []
    lock = threading.Lock()

    def slow_answer(messages):
        with lock:
            active[0] += 1
            overlaps.append(active[0])
        time.sleep(0.3)
        with lock:
            active[0] -= 1
        return "{Andes}"

    llm = ScriptedLLM([slow_answer] * 3)
    with LiveServer(demo_store, ServeOptions(), llm=llm) as live, \
            httpx.Client(base_url=live.url, timeout=60) as c:
        results = []

        def ask():
            results.append(c.post("/ask", json={"question": "Which range is in Peru?", "method": "io"}))

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.1)
        assert c.get("/sparql", params={"query": "ASK { wd:Q5456 ?p ?o }"}).json()["boolean"] is True
        sparql_done = time.monotonic()
        for t in threads:
            t.join()
        asks_done = time.monotonic()
    assert [r.status_code for r in results] == [200, 200, 200]
    assert all(r.json()["answers"] == ["Andes"] for r in results)
    assert max(overlaps) == 1 and len(llm.calls) == 3
    assert asks_done - sparql_done > 0.3  # SPARQL was answered while questions still queued

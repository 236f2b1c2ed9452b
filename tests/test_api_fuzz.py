"""`kgstore serve` under schemathesis: requests generated from the server's own OpenAPI
description (GET /openapi.json), sent to a real server on 127.0.0.1 over the indexed demo
store. Every answer must match the description, no 5xx may come but the documented 503 of
a query past its time limit, and the server must still answer /health afterwards.

/ask runs on a ScriptedLLM (the HTTP layer is the point here, not the model). The plain
tests at the end are the bugs the fuzzing found, kept as regression tests.
"""
from __future__ import annotations

import json
import os
import re

import pytest

schemathesis = pytest.importorskip("schemathesis")
httpx = pytest.importorskip("httpx")

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402

from kgstore.server import ServeOptions  # noqa: E402
from kgstore.server._app import KINDS  # noqa: E402
from kgstore.server._openapi import openapi_document  # noqa: E402
from qa import ScriptedLLM  # noqa: E402

from serve_fixtures import LiveServer  # noqa: E402
from test_qa_fixtures import demo_store  # noqa: E402,F401  (session fixture)

# Examples per operation: ~20 operations on a 2-core machine shared with other jobs keep
# the whole run under a minute (KGSTORE_FUZZ_EXAMPLES=200 for a deeper run by hand). The
# examples in the description (real queries, Q5456) run first, so the response schemas
# are checked against real data too.
MAX_EXAMPLES = int(os.environ.get("KGSTORE_FUZZ_EXAMPLES", "25"))
# A model that always answers the same short line: methods parse it, find nothing, and
# answer or refuse quickly. Enough replies for every /ask the run can make.
MODEL_REPLY = "I do not know."
# The server runs with a token, so the fuzzing also checks that no operation but the
# public ones answers without it.
TOKEN = "fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

# The body of POST /sparql with Content-Type: application/sparql-query: real queries, their
# fragments, and any text.
_SPARQL_TEXTS = st.one_of(
    st.sampled_from([
        "SELECT ?p ?o WHERE { wd:Q5456 ?p ?o }",
        "ASK { wd:Q5456 wdt:P17 wd:Q419 }",
        "CONSTRUCT { wd:Q5456 wdt:P17 ?c } WHERE { wd:Q5456 wdt:P17 ?c }",
        "DESCRIBE wd:Q5456",
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
        "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
        "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
        "SELECT ?s WHERE {",
    ]),
    st.text(max_size=200),
).map(lambda text: text.encode("utf-8", errors="surrogatepass"))
schemathesis.openapi.media_type("application/sparql-query", _SPARQL_TEXTS)


@pytest.fixture(scope="module")
def live(demo_store):  # noqa: F811
    llm = ScriptedLLM([MODEL_REPLY] * 100_000)
    with LiveServer(demo_store, ServeOptions(token=TOKEN, timeout_s=2.0, max_rows=1000), llm=llm) as server:
        yield server


@pytest.fixture(scope="module")
def client(live):
    with httpx.Client(base_url=live.url, headers=AUTH, timeout=60) as c:
        yield c


def no_5xx_but_time_limits(ctx, response, case):
    """5xx only as the documented 503 of a SPARQL query past its time limit."""
    if response.status_code >= 500 and not (response.status_code == 503 and "time limit" in response.text):
        raise AssertionError(f"{case.method} {case.formatted_path}: HTTP {response.status_code}: "
                             f"{response.text[:300]}")


def _description() -> dict:
    """The document the server answers on /openapi.json, built the same way here (the
    schema must exist when the tests are collected; the first test checks it is the one
    served). schemathesis's fixture-based loader does not run on pytest 9."""
    from qa.methods import DEFAULT_METHOD, method_names, method_options

    methods = {name: method_options(name) for name in method_names()}
    return openapi_document(kinds=KINDS, methods=methods, default_method=DEFAULT_METHOD)


schema = schemathesis.openapi.from_dict(_description())
# Unknown query parameters are ignored, as HTTP APIs usually do, and the description does
# not forbid them; the token is sent on every request (the ignored_auth check still sends
# some without it and expects 401).
schema.config.generation.update(allow_extra_parameters=False, with_security_parameters=False)


def test_the_served_description_is_the_one_fuzzed(client):
    served = client.get("/openapi.json")
    assert served.status_code == 200 and served.headers["content-type"] == "application/json"
    assert served.json() == json.loads(json.dumps(_description()))


# Where the description cannot say what a valid request is, a 400 for schema-valid data is
# right: a SPARQL query or graph IRI is any string to the schema but must parse, and /ask's
# options depend on the method chosen.
_GRAMMAR_BOUND = {"/sparql", "/query", "/ask"}


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_conforms_to_the_description(case, live):
    excluded = [not_a_server_error]
    if case.path in _GRAMMAR_BOUND:
        excluded.append(positive_data_acceptance)
    case.call_and_validate(base_url=live.url, headers=AUTH, excluded_checks=excluded,
                           additional_checks=[no_5xx_but_time_limits], timeout=60)


def test_the_server_still_answers_health_after_the_fuzzing(live, client):
    assert live.thread.is_alive()
    response = client.get("/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert client.get("/sparql", params={"query": "ASK { wd:Q5456 wdt:P17 wd:Q419 }"}).json()["boolean"] is True


def test_the_description_names_every_route_of_the_app(live, client):
    """The truth test of the document itself: every path the app routes is described, with
    the same methods, and nothing it does not route."""
    doc = client.get("/openapi.json").json()
    described = {path: {m.upper() for m in ops if m in ("get", "post")} for path, ops in doc["paths"].items()}
    routed = {}
    for route in live.app.routes:
        if isinstance(route, Mount):
            routed["/static/{file}"] = {"GET"}
        elif isinstance(route, Route):
            path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
            routed[path] = set(route.methods) - {"HEAD"}
    assert described == routed


# -- what the fuzzing found -------------------------------------------------------------------------------
def test_an_entity_ref_with_a_newline_is_a_json_404(client):
    """Starlette's ``path`` parameter stops at a newline: /entity/a%0Ab matched no route and
    got a plain-text 404 instead of /entity's JSON one."""
    response = client.get("/entity/Q5456%0Ax")
    assert response.status_code == 404 and response.headers["content-type"] == "application/json"
    assert response.json() == {"error": "no entity 'Q5456\\nx' in this store", "type": "NotFound"}


def test_an_ask_queue_ticket_longer_than_any_ask_takes_is_a_400(client):
    """It was answered 200 with state "unknown", while /ask refuses such a ticket."""
    response = client.get("/ask/queue", params={"ticket": "t" * 65})
    assert response.status_code == 400 and response.json()["type"] == "BadRequest"
    assert client.get("/ask/queue", params={"ticket": "t" * 64}).json()["state"] == "unknown"


@pytest.mark.parametrize("body, message", [
    # bool("false") is True: a string here silently allowed the model's own knowledge.
    ({"allow_parametric": "false"}, '"allow_parametric" must be true or false'),
    # `options or {}` let any falsy value through as "no options".
    ({"options": []}, '"options" must be an object of method options'),
    ({"options": ""}, '"options" must be an object of method options'),
    # Values went to the method unchecked; a string where it counts tokens failed later, in the queue.
    ({"method": "io", "options": {"answer_tokens": "80"}}, 'option "answer_tokens" of method io must be integer'),
    ({"method": "io", "options": {"answer_tokens": True}}, 'option "answer_tokens" of method io must be integer'),
    ({"method": ["io"]}, "unknown QA method"),
    ({"method": "io", "options": {"answer_tokens": -1}}, 'option "answer_tokens" of method io must be 0 or more'),
    # A client could hold the one model or a query thread for as long as it liked.
    ({"method": "io", "options": {"answer_tokens": 100000}}, 'option "answer_tokens" of method io may be at most 320'),
    ({"method": "pgmr", "options": {"timeout_s": 3600}}, 'option "timeout_s" of method pgmr may be at most 20.0'),
    # Right type, but the model layer refused it: a ValueError, answered as a plain-text 500.
    ({"method": "io", "options": {"answer_tokens": 0}}, "method io cannot run with the options"),
])
def test_ask_body_fields_of_the_wrong_type_are_400s(client, body, message):
    response = client.post("/ask", json={"question": "Which countries does the Andes cover?", **body})
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]


def test_ask_takes_a_null_ticket_and_null_options_as_absent(live, client):
    """null for the two optional fields means "none", as documented (nullable)."""
    response = client.post("/ask", json={"question": "Which countries does the Andes cover?", "method": "io",
                                         "ticket": None, "options": None})
    assert response.status_code == 200, response.text
    assert response.json()["method"] == "io"


def test_a_bug_is_answered_as_json_500_without_a_traceback(live, client, monkeypatch):
    """The catch-all: an exception outside the error tree was Starlette's plain-text
    "Internal Server Error", and uvicorn then closed the connection (the client's next
    request on it was reset); now it is the JSON error shape, on a connection that stays."""
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in a QA method, with a secret path /home/x")

    monkeypatch.setattr(live.state, "method", broken)
    response = client.post("/ask", json={"question": "Which countries does the Andes cover?", "method": "io"})
    assert response.status_code == 500 and response.headers["content-type"] == "application/json"
    assert response.json()["type"] == "InternalError"
    assert "secret" not in response.text and "Traceback" not in response.text
    for _ in range(3):  # the same keep-alive connection
        assert client.get("/health").status_code == 200

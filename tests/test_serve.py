"""`kgstore serve` against real clients on 127.0.0.1: SPARQLWrapper, rdflib's SPARQLStore and
httpx, every protocol error code, the limits, and the server staying up through abuse."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import kgstore
from kgstore import Store
from kgstore.cli import main
from kgstore.config import StoreConfig
from kgstore.server import MAX_ROWS_HEADER, TRUNCATED_HEADER, ServeOptions

from serve_fixtures import LiveServer

httpx = pytest.importorskip("httpx")

COUNTRIES = "SELECT ?c ?name WHERE { wd:Q5456 wdt:P17 ?c . ?c rdfs:label ?name } ORDER BY ?name"
ASK_ANDES = "ASK { wd:Q5456 wdt:P17 wd:Q419 }"
CONSTRUCT = "CONSTRUCT { wd:Q5456 wdt:P17 ?c } WHERE { wd:Q5456 wdt:P17 ?c }"
# Every triple x every triple x every triple: 59 million rows, each a step at which the
# worker checks its deadline (the server under test keeps up to a million rows).
CROSS = "SELECT ?a WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
SERVICE = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
JSON = "application/sparql-results+json"


def _store(path: Path, sample_dir: Path, **sparql) -> Path:
    config = StoreConfig()
    for key, value in sparql.items():
        setattr(config.sparql, key, value)
    with Store.init(path, config=config) as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
    return path


@pytest.fixture(scope="module")
def store_path(tmp_path_factory, sample_dir) -> Path:
    return _store(tmp_path_factory.mktemp("serve") / "store", sample_dir)


@pytest.fixture(scope="module")
def server(store_path):
    with LiveServer(store_path, ServeOptions(timeout_s=1.0, max_rows=1_000_000)) as live:
        yield live


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def cli_json(*args) -> dict:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# -- real SPARQL clients get what `kgstore sparql` gives -----------------------------------------------
def test_sparqlwrapper_select_ask_construct_match_kgstore_sparql(server, store_path):
    SPARQLWrapper = pytest.importorskip("SPARQLWrapper")
    endpoint = SPARQLWrapper.SPARQLWrapper(f"{server.url}/sparql")
    endpoint.setReturnFormat(SPARQLWrapper.JSON)
    endpoint.setQuery(COUNTRIES)
    assert endpoint.query().convert() == cli_json("sparql", store_path, COUNTRIES, "--format", "json")
    endpoint.setMethod(SPARQLWrapper.POST)
    endpoint.setQuery(ASK_ANDES)
    assert endpoint.query().convert()["boolean"] is True
    endpoint.setQuery(CONSTRUCT)
    endpoint.setReturnFormat(SPARQLWrapper.TURTLE)
    graph_text = endpoint.query().convert()
    rdflib = pytest.importorskip("rdflib")
    graph = rdflib.Graph().parse(data=graph_text, format="turtle")
    assert len(graph) == 7


def test_rdflib_sparqlstore_select_ask_construct_match_kgstore_sparql(server, store_path):
    rdflib = pytest.importorskip("rdflib")
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    # rdflib's default asks for XML: SPARQL results XML for SELECT/ASK, RDF/XML for CONSTRUCT.
    remote = rdflib.Graph(SPARQLStore(f"{server.url}/sparql"))
    expected = cli_json("sparql", store_path, COUNTRIES, "--format", "json")["results"]["bindings"]
    rows = [(str(r.c), str(r.name)) for r in remote.query(COUNTRIES)]
    assert rows == [(b["c"]["value"], b["name"]["value"]) for b in expected]
    assert remote.query(ASK_ANDES).askAnswer is True
    assert len(remote.query(CONSTRUCT).graph) == 7


# -- the protocol ---------------------------------------------------------------------------------------
def test_get_post_form_and_post_query_give_the_same_document(client, store_path):
    expected = cli_json("sparql", store_path, COUNTRIES, "--format", "json")
    got = client.get("/sparql", params={"query": COUNTRIES})
    assert got.status_code == 200 and got.headers["content-type"] == JSON and got.json() == expected
    assert client.post("/sparql", data={"query": COUNTRIES}).json() == expected
    posted = client.post("/sparql", content=COUNTRIES, headers={"Content-Type": "application/sparql-query"})
    assert posted.json() == expected
    assert client.get("/query", params={"query": COUNTRIES}).json() == expected  # `oxigraph serve`'s path


@pytest.mark.parametrize("accept, media, first_line", [
    (None, JSON, '{"head":{"vars":["c","name"]}'),
    ("*/*", JSON, '{"head":{"vars":["c","name"]}'),
    ("application/sparql-results+xml", "application/sparql-results+xml", '<?xml version="1.0"?>'),
    ("text/csv", "text/csv; charset=utf-8", "c,name"),
    ("text/tab-separated-values", "text/tab-separated-values; charset=utf-8", "?c\t?name"),
    ("text/html;q=0.9, text/csv;q=0.5", "text/csv; charset=utf-8", "c,name"),
])
def test_select_content_negotiation(client, accept, media, first_line):
    headers = {"Accept": accept} if accept else {}
    response = client.get("/sparql", params={"query": COUNTRIES}, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == media
    assert response.text.startswith(first_line)


@pytest.mark.parametrize("accept, media, needle", [
    ("text/turtle", "text/turtle; charset=utf-8", "wd:Q5456 wdt:P17 wd:"),
    ("application/n-triples", "application/n-triples",
     "<http://www.wikidata.org/entity/Q5456> <http://www.wikidata.org/prop/direct/P17> "),
    ("*/*", "text/turtle; charset=utf-8", "@prefix wd: <http://www.wikidata.org/entity/>"),
])
def test_construct_content_negotiation(client, accept, media, needle):
    response = client.get("/sparql", params={"query": CONSTRUCT}, headers={"Accept": accept})
    assert response.status_code == 200 and response.headers["content-type"] == media
    assert needle in response.text


def test_unsupported_accept_is_406(client):
    response = client.get("/sparql", params={"query": COUNTRIES}, headers={"Accept": "image/png"})
    assert response.status_code == 406 and "application/sparql-results+json" in response.text
    graph = client.get("/sparql", params={"query": CONSTRUCT}, headers={"Accept": JSON})
    assert graph.status_code == 406 and "text/turtle" in graph.text


def test_malformed_query_is_400_with_the_parsers_message_and_position(client):
    response = client.get("/sparql", params={"query": "SELECT ?s WHERE {\n  ?s ?p }"})
    assert response.status_code == 400
    assert response.text.startswith("SPARQL syntax error: error at 2:10: expected one of")


@pytest.mark.parametrize("request_kwargs", [
    {"method": "POST", "data": {"update": "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }"}},
    {"method": "POST", "content": "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }",
     "headers": {"Content-Type": "application/sparql-update"}},
    {"method": "GET", "params": {"query": "DELETE WHERE { ?s ?p ?o }"}},
    {"method": "GET", "params": {"query": "LOAD <http://example.org/data.ttl>"}},
    {"method": "POST", "url": "/update", "content": "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }",
     "headers": {"Content-Type": "application/sparql-update"}},
])
def test_updates_and_load_are_403(client, request_kwargs):
    method = request_kwargs.pop("method")
    response = client.request(method, request_kwargs.pop("url", "/sparql"), **request_kwargs)
    assert response.status_code == 403
    assert "read-only" in response.text or "refused" in response.text or "update" in response.text
    assert client.get("/stats").json()["triples"] == 390  # nothing was written


def test_service_is_403_unless_the_store_allows_federation(client, tmp_path, sample_dir, server):
    refused = client.get("/sparql", params={"query": SERVICE})
    assert refused.status_code == 403
    assert refused.text.startswith("SERVICE (federated query) is refused: a query may not reach the network")
    # With [sparql] allow_service = true the query runs: here against the first server, on loopback.
    federated = _store(tmp_path / "fed", sample_dir, allow_service=True)
    query = ("SELECT ?name WHERE { SERVICE <%s/sparql> { wd:Q5456 rdfs:label ?name } }" % server.url)
    with LiveServer(federated) as second, httpx.Client(base_url=second.url, timeout=30) as c:
        response = c.get("/sparql", params={"query": query})
    assert response.status_code == 200, response.text
    assert [b["name"]["value"] for b in response.json()["results"]["bindings"]] == ["Andes"]


@pytest.mark.parametrize("kwargs, status", [
    ({"method": "GET", "url": "/sparql"}, 400),
    ({"method": "POST", "url": "/sparql", "content": "SELECT * {}", "headers": {"Content-Type": "text/plain"}}, 415),
    ({"method": "PUT", "url": "/sparql", "content": "x"}, 405),
])
def test_missing_query_wrong_type_wrong_method(client, kwargs, status):
    assert client.request(**kwargs).status_code == status


def test_dataset_parameters(client):
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    whole = client.get("/sparql", params={"query": query}).json()["results"]["bindings"][0]["n"]["value"]
    assert whole == "390"
    other = client.get("/sparql", params={"query": query, "default-graph-uri": "http://example.org/g"})
    assert other.json()["results"]["bindings"][0]["n"]["value"] == "0"
    named = client.get("/sparql", params={"query": "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
                                          "named-graph-uri": "http://example.org/g"})
    assert named.status_code == 200 and named.json()["results"]["bindings"] == []


def test_prefixes_are_predeclared(client):
    response = client.get("/sparql", params={"query": "SELECT ?l WHERE { wd:Q5456 rdfs:label ?l }"})
    assert response.json()["results"]["bindings"][0]["l"] == {"type": "literal", "value": "Andes", "xml:lang": "en"}


def test_row_cap_truncates_with_a_header(store_path):
    with LiveServer(store_path, ServeOptions(max_rows=50)) as live, httpx.Client(base_url=live.url) as c:
        response = c.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"})
        assert response.status_code == 200
        assert response.headers[TRUNCATED_HEADER] == "true" and response.headers[MAX_ROWS_HEADER] == "50"
        assert len(response.json()["results"]["bindings"]) == 50
        graph = c.get("/sparql", params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"},
                      headers={"Accept": "application/n-triples"})
        assert graph.headers[TRUNCATED_HEADER] == "true" and graph.text.count("\n") == 50
        small = c.get("/sparql", params={"query": COUNTRIES})
        assert TRUNCATED_HEADER.lower() not in small.headers and len(small.json()["results"]["bindings"]) == 7


def test_query_past_the_time_limit_is_503_and_others_are_served(client):
    started = time.monotonic()
    slow = client.get("/sparql", params={"query": CROSS})
    assert slow.status_code == 503
    assert "ran past the time limit of 1 s" in slow.text
    assert time.monotonic() - started < 5
    assert client.get("/sparql", params={"query": ASK_ANDES}).json()["boolean"] is True


def test_slow_query_does_not_stall_the_others(client, server):
    finished = {}

    def slow():
        status = client.get("/sparql", params={"query": CROSS}).status_code
        finished["slow"] = (time.monotonic(), status)

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.1)
    for _ in range(5):
        assert client.get("/sparql", params={"query": ASK_ANDES}).status_code == 200
    answered = time.monotonic()
    thread.join()
    assert finished["slow"][1] == 503
    assert answered < finished["slow"][0]  # all five were answered while the slow one still ran


def test_a_10mb_body_is_413_and_the_server_goes_on(client):
    big = b"SELECT * WHERE { ?s ?p ?o } #" + b"x" * (10 * 1024 * 1024)
    response = client.post("/sparql", content=big, headers={"Content-Type": "application/sparql-query"})
    assert response.status_code == 413 and "larger than the limit of 1000000 bytes" in response.text

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(10):
            yield b"#" + b"y" * (1024 * 1024)

    chunked = client.post("/sparql", content=chunks(), headers={"Content-Type": "application/sparql-query"})
    assert chunked.status_code == 413
    assert client.get("/sparql", params={"query": ASK_ANDES}).status_code == 200


def test_client_disconnecting_mid_response_leaves_the_server_serving(server, client):
    request = (f"GET /sparql?query=SELECT+*+WHERE+%7B+%3Fs+%3Fp+%3Fo+%7D HTTP/1.1\r\n"
               f"Host: 127.0.0.1\r\nAccept: application/sparql-results+xml\r\n\r\n").encode()
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(request)
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
    assert client.get("/sparql", params={"query": ASK_ANDES}).json()["boolean"] is True


# -- safety settings -------------------------------------------------------------------------------------
def test_token_and_cors(store_path):
    options = ServeOptions(token="s3cret", cors_origins=("http://notebook.local",))
    with LiveServer(store_path, options) as live, httpx.Client(base_url=live.url) as c:
        denied = c.get("/sparql", params={"query": ASK_ANDES})
        assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer"
        assert c.get("/stats", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = c.get("/sparql", params={"query": ASK_ANDES},
                   headers={"Authorization": "Bearer s3cret", "Origin": "http://notebook.local"})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "http://notebook.local"
        # lookups answered at the front door keep the token rule
        lookup = {"query": "SELECT ?p ?o WHERE { wd:Q5456 ?p ?o }"}
        assert c.get("/sparql", params=lookup, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/sparql", params=lookup, headers={"Authorization": "Bearer s3cret"}).json()["results"]["bindings"]
        assert c.get("/health").json()["status"] == "ok"  # liveness needs no token


def test_cors_is_off_by_default(client):
    response = client.get("/sparql", params={"query": ASK_ANDES}, headers={"Origin": "http://elsewhere.example"})
    assert response.status_code == 200 and "access-control-allow-origin" not in response.headers


# -- JSON endpoints ----------------------------------------------------------------------------------------
def test_entity_stats_health(client, store_path):
    assert client.get("/entity/Q5456").json() == cli_json("entity", store_path, "Q5456", "--format", "json")
    assert client.get("/entity/wd:Q5456").json()["label"] == "Andes"
    missing = client.get("/entity/Q999999999")
    assert missing.status_code == 404 and missing.json()["error"] == "no entity 'Q999999999' in this store"
    assert client.get("/stats").json() == {**cli_json("stats", store_path, "--format", "json"), "snapshot": 0}
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["timeout_s"] == 1.0 and health["max_rows"] == 1_000_000


def test_search_without_an_index_says_what_to_run(client):
    response = client.get("/search", params={"q": "mountains in Nepal"})
    assert response.status_code == 409 and "kgstore index" in response.json()["error"]
    assert client.get("/search", params={"q": "x", "kind": "planets"}).status_code == 400
    assert client.get("/search", params={"q": "x", "k": "many"}).json()["error"] == "k= must be an integer, not 'many'"


def test_reload_picks_up_data_ingested_while_serving(tmp_path, sample_dir):
    path = tmp_path / "grow"
    with Store.init(path) as store:
        store.add_triples([kgstore.Triple("http://example.org/a", "http://example.org/p", "http://example.org/b")])
    data = tmp_path / "more.tsv"
    data.write_text("Kismet\tdirected_by\tWilliam Dieterle\nKismet\tstarred_actors\tMarlene Dietrich\n")
    with LiveServer(path) as live, httpx.Client(base_url=live.url) as c:
        assert c.get("/stats").json()["triples"] == 1
        code = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
        writer = subprocess.run([sys.executable, "-c", code, "ingest", str(path), "tsv", str(data)],
                                capture_output=True, text=True, timeout=120)
        assert writer.returncode == 0, writer.stderr
        assert c.get("/stats").json()["triples"] == 1  # still the snapshot it opened
        reloaded = c.post("/reload").json()
        assert reloaded["status"] == "reloaded" and reloaded["snapshot"] == 1 and reloaded["triples"] > 1
        stats = c.get("/stats").json()
        assert stats["triples"] == reloaded["triples"] and stats["snapshot"] == 1
        ask = c.get("/sparql", params={"query": "ASK { kg:Kismet kgr:directed_by kg:William_Dieterle }"})
        assert ask.json()["boolean"] is True


def spawn_serve(store_path, *args) -> tuple[subprocess.Popen, str]:
    """`kgstore serve STORE --port FREE *args` in a subprocess, once /health answers: the
    process and its URL. Stop it with :func:`stop_serve`."""
    code = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", str(store_path), "--port", str(port), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/health", timeout=2).raise_for_status()
            return proc, url
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(proc.communicate()[1])
            time.sleep(0.2)


def stop_serve(proc: subprocess.Popen) -> str:
    """Ctrl-C, as a person stops it; its stderr."""
    proc.send_signal(__import__("signal").SIGINT)
    return proc.communicate(timeout=30)[1]


def test_cli_serve_starts_answers_and_stops(store_path, tmp_path):
    proc, url = spawn_serve(store_path, "--max-rows", "3", "--log-level", "warning")
    try:
        health = httpx.get(f"{url}/health", timeout=2).json()
        assert health["max_rows"] == 3 and health["timeout_s"] == 30.0
    finally:
        err = stop_serve(proc)
    assert f"Serving {store_path} read-only at {url}/" in err
    assert "Traceback" not in err


def test_cli_serve_with_two_workers_answers_reloads_everywhere_and_stops(store_path):
    proc, url = spawn_serve(store_path, "--workers", "2", "--log-level", "warning")
    try:
        assert httpx.get(f"{url}/sparql", params={"query": ASK_ANDES}).json()["boolean"] is True
        assert httpx.post(f"{url}/reload", timeout=30).json()["snapshot"] == 1
        # Each request a new connection: the two processes take them in turn, and both serve
        # the reloaded snapshot.
        assert {httpx.get(f"{url}/health").json()["snapshot"] for _ in range(20)} == {1}
        assert {httpx.get(f"{url}/stats").json()["snapshot"] for _ in range(10)} == {1}
    finally:
        err = stop_serve(proc)
    assert "2 worker processes" in err and "Traceback" not in err
    assert proc.returncode == 0


def test_cli_serve_on_granian_answers_with_the_same_rules_and_stops(store_path):
    pytest.importorskip("granian")
    proc, url = spawn_serve(store_path, "--http", "granian", "--token", "s3cret", "--log-level", "warning")
    auth = {"Authorization": "Bearer s3cret"}
    try:
        assert httpx.get(f"{url}/sparql", params={"query": ASK_ANDES}).status_code == 401
        lookup = httpx.get(f"{url}/sparql", params={"query": "SELECT ?l WHERE { wd:Q5456 rdfs:label ?l }"},
                           headers=auth)
        assert lookup.json()["results"]["bindings"][0]["l"]["value"] == "Andes"
        joined = httpx.get(f"{url}/sparql", params={"query": COUNTRIES}, headers=auth)
        assert len(joined.json()["results"]["bindings"]) == 7
        assert httpx.post(f"{url}/sparql", content="INSERT DATA { <a:a> <a:b> <a:c> }", headers={
            **auth, "Content-Type": "application/sparql-update"}).status_code == 403
    finally:
        err = stop_serve(proc)
    assert "on granian" in err and "Traceback" not in err
    assert proc.returncode == 0


def test_cli_serve_on_granian_takes_one_process():
    pytest.importorskip("granian")
    result = CliRunner().invoke(main, ["serve", "unused", "--http", "granian", "--workers", "2"])
    assert result.exit_code != 0 and "--http granian serves with one process" in result.output


def test_cli_serve_on_a_missing_store_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(main, ["serve", str(tmp_path / "nope")])
    assert result.exit_code == 3 and "no kgstore store at" in result.output


@pytest.mark.slow
def test_bench_serve_runs_bounded_and_reports(tmp_path, shared_data):
    """bench/serve.py end to end, shortened, on the MetaQA KB without an index (lookups only)."""
    path = tmp_path / "metaqa"
    with Store.init(path) as store:
        kgstore.ingest(store, "tsv", shared_data / "qa" / "metaqa" / "kb_partial.txt")
    bench = Path(__file__).resolve().parents[1] / "bench" / "serve.py"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(bench), "--store", str(path), "--seconds", "3", "--phase", "1", "--repeat", "1",
                           "--clients", "4"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio" in proc.stdout and "/sparql" in proc.stdout and "errors 0 (target 0)" in proc.stdout
    assert time.monotonic() - started < 120


@pytest.mark.parametrize("accept", ["application/sparql-results+json", "text/csv", "application/sparql-results+xml"])
def test_a_lookup_answered_before_the_routing_is_the_routes_own_answer(client, accept):
    # GET lookups take the fast path; the same query POSTed takes the /sparql route
    lookup = "SELECT ?p ?o WHERE { wd:Q5456 ?p ?o }"
    fast = client.get("/sparql", params={"query": lookup}, headers={"Accept": accept})
    routed = client.post("/sparql", content=lookup, headers={"Accept": accept,
                                                             "Content-Type": "application/sparql-query"})
    assert fast.status_code == routed.status_code == 200
    assert fast.content == routed.content and fast.headers["content-type"] == routed.headers["content-type"]
    assert fast.headers["vary"] == routed.headers["vary"] == "Accept"
    # a lookup the store refuses still gets the route's error
    refused = client.get("/sparql", params={"query": "SELECT ?s WHERE { SERVICE <http://x> { ?s ?p ?o } }"})
    assert refused.status_code == 403

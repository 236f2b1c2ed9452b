"""The web page of `kgstore serve` in a real browser (Debian's chromium, driven by
playwright) against a live server on the indexed demo store. Every request the browser
makes is routed through :func:`_loopback_only`: one that leaves 127.0.0.1 fails the test.

Each test saves a screenshot under its tmp_path; with KGSTORE_PAGE_SCREENSHOTS=DIR set,
the SPARQL and real-model ask screenshots also go to DIR (how docs/images/page-*.png are made).
"""
from __future__ import annotations

import csv
import io
import os
import re
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from kgstore.server import ServeOptions
from qa import ScriptedLLM

from serve_fixtures import LiveServer
from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)
from test_qa_methods import ANSWER, CYPHER, QUESTION, VERIFIED

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path("/usr/bin/chromium")
ANDES_COUNTRIES = ["Argentina", "Bolivia", "Chile", "Colombia", "Ecuador", "Peru", "Venezuela"]
COUNTRIES_QUERY = "SELECT ?country ?name WHERE { wd:Q5456 wdt:P17 ?country . ?country rdfs:label ?name }"
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=[
            "--no-sandbox", "--disable-background-networking", "--disable-component-update"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def server(demo_store):  # noqa: F811
    with LiveServer(demo_store) as live:
        yield live


class Visit:
    """One browser context on the page: its requests checked, its console errors kept."""

    def __init__(self, browser, base_url: str):
        self.context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.outside: list[str] = []
        self.requests: list = []
        self.context.route("**/*", self._loopback_only)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", lambda request: self.requests.append(request))
        self.base_url = base_url

    def _loopback_only(self, route):
        host = urlsplit(route.request.url).hostname
        if host != "127.0.0.1":
            self.outside.append(route.request.url)
            return route.abort()
        return route.continue_()

    def open(self, path: str = "/"):
        self.page.goto(self.base_url + path)
        return self.page

    def ask(self, method: str, question: str):
        """Open the Ask tab, choose ``method`` once the server's list holds it, and submit."""
        page = self.open("/ui/ask")
        sync_api.expect(page.locator(f"#ask-method option[value={method}]")).to_have_count(1)
        page.select_option("#ask-method", method)
        page.fill("#ask-question", question)
        page.click("#ask-submit")
        return page

    def shot(self, path: Path, *, doc_name: str | None = None) -> None:
        self.page.screenshot(path=str(path), full_page=True)
        target = os.environ.get("KGSTORE_PAGE_SCREENSHOTS")
        if doc_name and target:
            shutil.copyfile(path, Path(target) / doc_name)

    def close(self) -> None:
        self.context.close()
        assert self.outside == [], f"requests left 127.0.0.1: {self.outside}"
        assert self.errors == [], f"errors in the page: {self.errors}"


@pytest.fixture
def visit(browser, server):
    v = Visit(browser, server.url)
    yield v
    v.close()


def run_sparql(page, query: str) -> None:
    editor = page.locator(".yasqe .CodeMirror")
    editor.wait_for()
    page.evaluate("q => kgstore.sparql.yasgui.getTab().getYasqe().setValue(q)", query)
    page.locator(".yasqe_queryButton").click()


def test_page_loads_offline_with_tabs(visit, tmp_path):
    page = visit.open("/")
    sync_api.expect(page.locator(".tabs a")).to_have_text(["SPARQL", "Search", "Ask"])
    sync_api.expect(page.locator("#tab-sparql")).to_have_class(re.compile("active"))
    sync_api.expect(page.locator(".yasqe .CodeMirror")).to_be_visible()
    sync_api.expect(page.locator("#store-name")).to_contain_text("triples")
    page.wait_for_load_state("networkidle")
    visit.shot(tmp_path / "page.png")
    urls = {r.url for r in visit.requests}
    assert any(u.endswith("/static/vendor/yasgui/yasgui.min.js") for u in urls)
    assert any(u.endswith("/static/vendor/cytoscape/cytoscape.min.js") for u in urls)
    assert all(urlsplit(u).hostname == "127.0.0.1" for u in urls if not u.startswith("data:"))


def test_sparql_query_shows_the_andes_countries_linked_and_downloadable(visit, tmp_path):
    page = visit.open("/")
    run_sparql(page, COUNTRIES_QUERY)
    table = page.locator(".yasr .dataTable")
    sync_api.expect(table.locator("tbody tr")).to_have_count(7)
    names = sorted(table.locator("tbody tr td:nth-child(3)").all_inner_texts())
    assert [n.strip().strip('"').split('"')[0] for n in names] == ANDES_COUNTRIES
    assert page.locator(".yasqe .parseErrorIcon").count() == 0  # wd:, wdt:, rdfs: are known to the editor
    link = table.locator("a.entity-link", has_text="wd:Q414")
    assert link.get_attribute("href") == "/ui/entity/Q414"  # entity IRIs link to the entity page
    visit.shot(tmp_path / "sparql.png", doc_name="page-sparql.png")

    with page.expect_download() as csv_download:  # the table plugin's download: CSV
        page.locator(".yasr_downloadIcon").click()
    csv_rows = list(csv.reader(io.StringIO(Path(csv_download.value.path()).read_text())))
    assert csv_rows[0] == ["country", "name"] and sorted(r[1] for r in csv_rows[1:]) == ANDES_COUNTRIES
    page.locator(".yasr .select_response").click()  # the response plugin's download: the JSON itself
    with page.expect_download() as json_download:
        page.locator(".yasr_downloadIcon").click()
    json_text = Path(json_download.value.path()).read_text()
    assert '"bindings"' in json_text and "Venezuela" in json_text

    page.locator(".yasr .select_table").click()
    page.locator(".yasr .dataTable a.entity-link", has_text="wd:Q414").click()
    sync_api.expect(page.locator("#entity-label")).to_have_text("Argentina")


def test_search_finds_douglas_adams(visit, tmp_path):
    page = visit.open("/ui/search")
    page.fill("#search-text", "Douglas Adams")
    page.click("#search-form button[type=submit]")
    first = page.locator("#search-results tbody tr").first
    sync_api.expect(first.locator("td").nth(0)).to_have_text("Douglas Adams")
    sync_api.expect(first.locator("td").nth(1)).to_contain_text("writer")
    sync_api.expect(first.locator("td").nth(2)).to_have_text("Q42")
    assert re.fullmatch(r"0\.\d{3}", first.locator("td").nth(3).inner_text())
    page.select_option("#search-mode", "link")
    page.fill("#search-text", "Which countries does the Andes cover?")
    page.click("#search-form button[type=submit]")
    sync_api.expect(page.locator("#search-results tbody tr").first.locator("td").first).to_have_text("Andes")
    visit.shot(tmp_path / "search.png")


def test_entity_page_links_onwards(visit, tmp_path):
    page = visit.open("/ui/entity/Q5456")
    sync_api.expect(page.locator("#entity-label")).to_have_text("Andes")
    sync_api.expect(page.locator("#entity")).to_contain_text("mountain range in South America")
    sync_api.expect(page.locator("#entity")).to_contain_text("Cordillera de los Andes")  # an alias
    visit.shot(tmp_path / "entity.png")
    page.locator("table.facts a.entity-link", has_text="Peru").click()
    sync_api.expect(page.locator("#entity-label")).to_have_text("Peru")
    assert page.url.endswith("/ui/entity/Q419")
    incoming = page.locator("table.facts").nth(1)
    sync_api.expect(incoming.locator("a.entity-link", has_text="Andes")).to_be_visible()  # Andes -country-> Peru
    page.go_back()
    sync_api.expect(page.locator("#entity-label")).to_have_text("Andes")


def test_entity_page_shows_dates_at_their_precision(visit, tmp_path):
    page = visit.open("/ui/entity/Q42")
    sync_api.expect(page.locator("#entity-label")).to_have_text("Douglas Adams")
    born = page.locator("table.facts tr", has_text="date of birth")
    sync_api.expect(born.locator(".literal")).to_have_text("1952-03-11")
    assert born.locator(".literal").get_attribute("title") == "1952-03-11T00:00:00Z"  # the lexical form on hover
    sync_api.expect(page.locator("#entity")).not_to_contain_text("T00:00:00Z")
    visit.shot(tmp_path / "entity-dates.png")


XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"


def test_prefixed_query_and_literal_text_in_the_page(visit):
    """The page's own writing of a query with the store's prefixes and of a date, checked
    on the cases that must stay as they are."""
    page = visit.open("/")
    page.wait_for_function("() => kgstore.prefixes && kgstore.prefixes.wd")
    cases = {
        f"SELECT ?m WHERE {{ <{WD}Q5451> <{WDT}P17> ?m }}": "SELECT ?m WHERE { wd:Q5451 wdt:P17 ?m }",
        # inside strings and comments, IRIs stay as they are
        f'SELECT * WHERE {{ ?s ?p "<{WD}Q1>" }} # <{WD}Q2>': f'SELECT * WHERE {{ ?s ?p "<{WD}Q1>" }} # <{WD}Q2>',
        # a prefix the query declares itself is not the store's
        f"PREFIX wd: <http://example.org/> SELECT * WHERE {{ <{WD}Q1> ?p ?o }}":
            f"PREFIX wd: <http://example.org/> SELECT * WHERE {{ <{WD}Q1> ?p ?o }}",
        # names SPARQL could not read back, and a namespace alone, stay IRIs
        f"SELECT * WHERE {{ <{WD}a(b)> ?p <{WD}> . <{WD}x.> ?q ?o }}":
            f"SELECT * WHERE {{ <{WD}a(b)> ?p <{WD}> . <{WD}x.> ?q ?o }}",
        "SELECT * WHERE { ?s <http://rdf.freebase.com/ns/film.film.starring> ?o }":
            "SELECT * WHERE { ?s fb:film.film.starring ?o }",
    }
    for query, expected in cases.items():
        assert page.evaluate("q => kgstore.prefixedQuery(q)", query) == expected
    texts = page.evaluate("""dt => [kgstore.literalText("1952-03-11T00:00:00Z", dt),
        kgstore.literalText("1952-03-11T10:30:00Z", dt), kgstore.literalText("+2011-01-01T00:00:00Z", dt),
        kgstore.literalText("1952-03-11T00:00:00Z", null), kgstore.literalText("Andes", dt)]""", XSD_DATETIME)
    assert texts == ["1952-03-11", "1952-03-11 10:30:00 UTC", "2011-01-01", "1952-03-11T00:00:00Z", "Andes"]


def test_ask_shows_the_executed_query_with_prefixes_and_dates_as_read(visit, tmp_path):
    """An answer with a query and a date in its evidence (a method's answer, replayed to
    the page); the query shown runs as it is in the SPARQL editor."""
    import json

    answer = {
        "question": "Which countries does the Himalayas cover?", "method": "pgmr", "answers": ["Nepal"],
        "answer_iris": [WD + "Q837"], "refused": False, "refusal": None, "parametric": False,
        "query": f"SELECT ?m WHERE {{ <{WD}Q5451> <{WDT}P17> ?m }}",
        "values": [None], "shape": None, "meant": [], "constraints": [],
        "evidence": [{"s": WD + "Q42", "s_label": "Douglas Adams", "p": WDT + "P569", "p_label": "date of birth",
                      "o": "1952-03-11T00:00:00Z", "o_label": None, "literal": True, "datatype": XSD_DATETIME,
                      "score": None, "via": None}],
        "seconds": 0.1, "tokens": {"prompt": 0, "completion": 0, "total": 0, "calls": 0},
    }
    visit.page.route(lambda url: urlsplit(url).path == "/ask",
                     lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(answer)))
    page = visit.ask("io", answer["question"])
    sync_api.expect(page.locator("#ask-query")).to_have_text("SELECT ?m WHERE { wd:Q5451 wdt:P17 ?m }")
    sync_api.expect(page.locator("#ask-evidence tbody tr").first.locator("td").nth(2)).to_have_text("1952-03-11")
    visit.shot(tmp_path / "ask-prefixed.png")
    page.click("#ask-open-query")  # the shortened query runs as it is: the Himalayas' five countries
    sync_api.expect(page.locator(".yasr .dataTable tbody tr")).to_have_count(5)


def test_ask_shows_answer_evidence_graph_and_refusal(browser, demo_store, tmp_path):  # noqa: F811
    llm = ScriptedLLM([CYPHER, VERIFIED, ANSWER, CYPHER, VERIFIED, "The facts do not say: {unknown}"])
    with LiveServer(demo_store, llm=llm) as live:
        v = Visit(browser, live.url)
        try:
            page = v.ask("pseudo-graph", QUESTION)
            sync_api.expect(page.locator("#ask-answer .value")).to_have_text("Andes")
            rows = page.locator("#ask-evidence tbody tr")
            sync_api.expect(rows.first).to_contain_text("country")
            assert rows.count() >= 7
            nodes = page.evaluate("kgstore.ask.graph.nodes().length")
            edges = page.evaluate("kgstore.ask.graph.edges().length")
            assert nodes >= 8 and edges == rows.count()
            assert page.locator("#ask-graph canvas").count() > 0
            v.shot(tmp_path / "ask.png")
            assert len(llm.calls) == 3
            page.click("#ask-submit")  # the same question again: now the model does not know
            sync_api.expect(page.locator("#ask-answer")).to_contain_text("No answer")
            sync_api.expect(page.locator("#ask-answer")).to_contain_text("reason: no_answer")
            v.shot(tmp_path / "ask-refused.png")
            assert len(llm.calls) == 6
        finally:
            v.close()


def test_queued_questions_wait_visibly(browser, demo_store, tmp_path):  # noqa: F811
    """A question asked while another holds the model says that it waits, then is answered."""
    import threading

    import httpx

    release = threading.Event()

    def held(messages):
        release.wait(30)
        return "{Andes}"

    llm = ScriptedLLM([held, "{Andes}"])
    with LiveServer(demo_store, llm=llm) as live:
        first = threading.Thread(target=lambda: httpx.post(
            live.url + "/ask", json={"question": "Which range is in Peru?", "method": "io"}, timeout=60))
        first.start()
        deadline = time.monotonic() + 30
        while httpx.get(live.url + "/ask/queue").json()["running"] != 1:  # the first holds the model
            assert time.monotonic() < deadline, "the first question never reached the model"
            time.sleep(0.05)
        v = Visit(browser, live.url)
        try:
            page = v.ask("io", "Which range is in Chile?")
            sync_api.expect(page.locator("#ask-progress-text")).to_contain_text("1 question ahead of yours")
            v.shot(tmp_path / "queued.png")
            release.set()
            sync_api.expect(page.locator("#ask-answer .value")).to_have_text("Andes")
            sync_api.expect(page.locator("#ask-progress")).to_be_hidden()
        finally:
            release.set()
            first.join(30)
            v.close()


def test_wrong_token_shows_a_clear_message(browser, demo_store, tmp_path):  # noqa: F811
    with LiveServer(demo_store, ServeOptions(token="s3cret")) as live:
        v = Visit(browser, live.url)
        try:
            page = v.open("/")  # the page itself loads without the token
            dialog = page.locator("#token-dialog")
            sync_api.expect(dialog).to_be_visible()
            sync_api.expect(page.locator("#notice")).to_contain_text("needs a token")
            page.fill("#token-input", "wrong")
            page.click("#token-save")
            sync_api.expect(page.locator("#notice")).to_contain_text("Wrong token")
            sync_api.expect(dialog).to_be_visible()
            v.shot(tmp_path / "wrong-token.png")
            page.fill("#token-input", "s3cret")
            page.click("#token-save")
            sync_api.expect(dialog).to_be_hidden()
            sync_api.expect(page.locator("#notice")).to_be_hidden()
            sync_api.expect(page.locator("#store-name")).to_contain_text("triples")
            run_sparql(page, COUNTRIES_QUERY)  # YASGUI's own requests carry the token too
            sync_api.expect(page.locator(".yasr .dataTable tbody tr")).to_have_count(7)
            assert page.evaluate("sessionStorage.getItem('kgstore-token')") == "s3cret"
            sparql = [r for r in v.requests if urlsplit(r.url).path == "/sparql"]
            assert sparql and all(r.headers.get("authorization") == "Bearer s3cret" for r in sparql)
        finally:
            v.close()


@pytest.mark.llm
def test_real_model_answers_in_the_page(browser, demo_store, tmp_path):  # noqa: F811
    with LiveServer(demo_store) as live:  # the store's configured model: the packaged one
        v = Visit(browser, live.url)
        try:
            page = v.ask("pgmr", "Which countries does the Andes cover?")
            sync_api.expect(page.locator("#ask-progress")).to_be_visible()
            sync_api.expect(page.locator("#ask-answer .value")).to_be_visible(timeout=300_000)
            answers = page.locator("#ask-answer .value a").all_inner_texts()
            assert sorted(answers) == ANDES_COUNTRIES
            sync_api.expect(page.locator("#ask-query")).to_contain_text("Q5456")
            assert page.evaluate("kgstore.ask.graph.nodes().length") == 8
            v.shot(tmp_path / "ask-real.png", doc_name="page-ask.png")
            page.click("#ask-open-query")  # the executed query, run in the SPARQL editor
            sync_api.expect(page.locator(".yasr .dataTable tbody tr")).to_have_count(7)
        finally:
            v.close()


@pytest.fixture(scope="module")
def full_statement_store(tmp_path_factory, sample_dir):
    """The demo sample with Wikidata's full statements (qualifiers), not indexed."""
    from test_qa_fixtures import full_statements_store

    return full_statements_store(tmp_path_factory.mktemp("full") / "store", sample_dir / "sample-wikidata.json")


def test_entity_page_shows_qualifiers_on_a_full_statement_store(browser, full_statement_store, tmp_path):
    with LiveServer(full_statement_store) as live:
        v = Visit(browser, live.url)
        try:
            page = v.open("/ui/entity/Q668")
            sync_api.expect(page.locator("#entity-label")).to_have_text("India")
            population = page.locator("table.facts tr", has_text="population")
            sync_api.expect(population.locator(".qualifiers")).to_contain_text("point in time: 2011-01-01")
            incoming = page.locator("table.facts").nth(1)
            sync_api.expect(incoming.locator("tr", has_text="capital of")).to_contain_text("New Delhi")
            v.shot(tmp_path / "qualifiers.png")
        finally:
            v.close()


def test_the_json_endpoints_the_page_uses(full_statement_store):
    import httpx

    from kgstore import Store
    from qa import method_names

    with LiveServer(full_statement_store, ServeOptions(token="s3cret")) as live, \
            httpx.Client(base_url=live.url, timeout=30, headers={"Authorization": "Bearer s3cret"}) as c:
        methods = c.get("/ask/methods").json()
        assert [m["name"] for m in methods["methods"]] == method_names()
        assert methods["default"] in method_names() and all(m["description"] for m in methods["methods"])
        assert c.get("/ask/queue").json() == {"running": 0, "waiting": 0, "running_s": None}
        assert c.get("/ask/queue", params={"ticket": "t1"}).json()["state"] == "unknown"
        with Store.open(full_statement_store, read_only=True) as store:
            assert c.get("/prefixes").json() == store.config.prefixes
        plain = c.get("/entity/Q668").json()  # without the page's parameters: `kgstore entity` as before
        assert "incoming_facts" not in plain and all("qualifiers" not in f for f in plain["facts"])
        detailed = c.get("/entity/Q668", params={"incoming": 2, "qualifiers": "true"}).json()
        assert len(detailed["incoming_facts"]) == 2 and detailed["incoming"] >= 2
        assert {k: v for k, v in detailed.items() if k not in ("incoming_facts", "facts")} == \
               {k: v for k, v in plain.items() if k != "facts"}
        bad = c.get("/entity/Q668", params={"qualifiers": "maybe"})
        assert bad.status_code == 400 and "qualifiers= must be true or false" in bad.json()["error"]
        long_ticket = c.post("/ask", json={"question": "Where is Peru?", "ticket": "x" * 65})
        assert long_ticket.status_code == 400 and '"ticket"' in long_ticket.json()["error"]
        # The page itself holds no data and loads without the token; the data does not.
        bare = httpx.Client(base_url=live.url, timeout=30)
        for path in ("/", "/ui/ask", "/ui/entity/Q668", "/static/page.css", "/static/js/api.js",
                     "/static/vendor/cytoscape/cytoscape.min.js"):
            assert bare.get(path).status_code == 200, path
        for path in ("/prefixes", "/ask/methods", "/ask/queue", "/entity/Q668", "/stats"):
            assert bare.get(path).status_code == 401, path
        bare.close()


def test_an_open_answer_from_two_stores_has_footnotes_that_mark_its_facts(browser, sample_dir, tmp_path):
    """A paragraph from the demo Wikidata store and a Freebase store (multistore_fixtures):
    each footnote names its fact, and a click marks that fact's rows and graph edges; every
    row says its store."""
    from multistore_fixtures import FREEBASE_FILE, FREEBASE_IDS, build_store, with_freebase_ids
    from test_multistore import QUESTION as OPEN_QUESTION, SKETCH, WRITING

    sample = with_freebase_ids(sample_dir / "sample-wikidata.json", tmp_path / "sample.json", FREEBASE_IDS)
    wikidata = build_store(tmp_path / "wikidata", "wikidata-json", sample)
    freebase = build_store(tmp_path / "freebase", "freebase", FREEBASE_FILE)
    with LiveServer(wikidata, ServeOptions(ask_stores=(str(freebase),)), llm=ScriptedLLM([SKETCH, WRITING])) as live:
        v = Visit(browser, live.url)
        try:
            page = v.ask("cascade", OPEN_QUESTION)
            sync_api.expect(page.locator("#ask-answer .value")).to_contain_text("Douglas Adams was an English writer")
            cites = page.locator("#ask-answer a.cite")
            assert cites.count() >= 3 and cites.first.inner_text() == "[1]"
            assert "Douglas Adams | description" in cites.first.get_attribute("title")
            sync_api.expect(page.locator("#ask-evidence th.col-store")).to_be_visible()
            stores = set(page.locator("#ask-evidence tbody td.col-store").all_inner_texts())
            assert stores == {"wikidata", "freebase"}
            page.locator("#ask-answer a.cite[data-fact='2']").first.click()
            cited = page.locator("#ask-evidence tbody tr.cited")
            assert cited.count() >= 1 and set(cited.locator("td.col-fact").all_inner_texts()) == {"[2]"}
            assert cited.first.locator("td.col-store").inner_text() == "freebase"
            marked = page.evaluate("kgstore.ask.graph.edges('.cited').map(e => e.data('fact'))")
            assert marked and set(marked) == {2}
            v.shot(tmp_path / "ask-open.png")
        finally:
            v.close()

"""A store whose triples live in a SPARQL endpoint, against real engines on 127.0.0.1:
Oxigraph server and Virtuoso 7, each loaded with the demo sample's triples, compared with
the local store that ingested the same sample. Servers are stopped by their pid.

Virtuoso missing on a developer machine: these tests skip, saying how to install it; in CI
(.ci/run sets ``KGSTORE_REQUIRE_ENGINES``) they fail instead, since .ci/run installs it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

import kgstore
from kgstore import Store
from kgstore.cli import main
from kgstore.config import StoreConfig
from kgstore.errors import (EndpointUnreachableError, QueryRefusedError, ReadOnlyError, StoreError)

from metaqa_slice import metaqa_local  # noqa: F401  (module fixture)
from metaqa_slice import METAQA_GRAPH, slice_ntriples
from sparql_servers import (OXIGRAPH_INSTALL_HINT, VIRTUOSO_INSTALL_HINT, OxigraphServer, VirtuosoServer,
                            oxigraph_binary, virtuoso_binaries)

pytestmark = pytest.mark.endpoint

GRAPH = "http://kgstore.test/demo"
ENGINES = ["oxigraph", "virtuoso"]
ONE_HOP = "SELECT ?c ?name WHERE { wd:Q5456 wdt:P17 ?c . ?c rdfs:label ?name }"
TWO_HOP = "SELECT ?country ?capital WHERE { wd:Q5456 wdt:P17 ?country . ?country wdt:P36 ?capital }"
TWO_HOP_LABELS = ("SELECT ?m ?range ?l WHERE { ?m wdt:P4552 ?range . ?range wdt:P30 ?c . ?c rdfs:label ?l "
                  "FILTER(LANGMATCHES(LANG(?l), \"en\")) }")
COUNT_BY_RELATION = "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(isIRI(?o)) } GROUP BY ?p"
ASK = "ASK { wd:Q5456 wdt:P17 wd:Q419 }"
CONSTRUCT = "CONSTRUCT { wd:Q5456 wdt:P17 ?c } WHERE { wd:Q5456 wdt:P17 ?c }"
DOTTED = "SELECT ?s WHERE { ?s fb:film.film.starring ?o }"
QUERIES = [ONE_HOP, TWO_HOP, TWO_HOP_LABELS, COUNT_BY_RELATION, DOTTED]


def _required(what: str, hint: str):
    if os.environ.get("KGSTORE_REQUIRE_ENGINES"):
        pytest.fail(f"{what} is required in CI: {hint}")
    pytest.skip(hint)


# -- the data and the engines ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def local_store(tmp_path_factory, sample_dir) -> Path:
    """The demo sample ingested into a local store, as every other test has it."""
    path = tmp_path_factory.mktemp("endpoint_local") / "store"
    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
    return path


@pytest.fixture(scope="module")
def demo_ntriples(local_store, tmp_path_factory) -> Path:
    """The local store's triples as N-Triples: what both engines bulk-load."""
    out = tmp_path_factory.mktemp("endpoint_data") / "demo.nt"
    with Store.open(local_store, read_only=True) as store:
        store.rdf.dump(output=str(out), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    return out


@pytest.fixture(scope="module")
def engines(demo_ntriples, tmp_path_factory):
    """Started on first use, stopped (by pid) at the end of the module."""
    started: dict[str, object] = {}

    def get(name: str):
        if name not in started:
            base = tmp_path_factory.mktemp(f"engine_{name}")
            if name == "oxigraph":
                if oxigraph_binary() is None:
                    _required("the oxigraph server", OXIGRAPH_INSTALL_HINT)
                started[name] = OxigraphServer.create(base, [demo_ntriples], GRAPH)
            else:
                if virtuoso_binaries() is None:
                    _required("Virtuoso", VIRTUOSO_INSTALL_HINT)
                started[name] = VirtuosoServer.create(base, [demo_ntriples], GRAPH)
        return started[name]

    yield get
    for server in started.values():
        server.stop()


def _init(path: Path, url: str, *extra: str) -> dict:
    result = CliRunner().invoke(main, ["init", str(path), "--endpoint", url, "--graph", GRAPH, *extra])
    assert result.exit_code == 0, result.output
    return StoreConfig.load(path).endpoint_capabilities.__dict__


def _fast_faults(path: Path, *, timeout_s: float = 30.0) -> None:
    """Short retries and limits, so that the fault tests take seconds."""
    config = StoreConfig.load(path)
    config.endpoint.retries, config.endpoint.backoff_s, config.endpoint.timeout_s = 1, 0.1, timeout_s
    config.save(path)


@pytest.fixture(scope="module")
def synced(engines, tmp_path_factory):
    """name -> a store over that engine, initialised and synced once."""
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            server = engines(name)
            path = tmp_path_factory.mktemp(f"over_{name}") / "store"
            _init(path, server.url)
            with Store.open(path) as store:
                summary = kgstore.sync(store)
            assert summary.status == "done"
            done[name] = path
        return done[name]

    return get


def _rows(store: Store, sparql: str) -> list:
    result = store.query(sparql)
    if isinstance(result, ox.QueryBoolean):
        return [bool(result)]
    if isinstance(result, ox.QueryTriples):
        return sorted(str(t) for t in result)
    names = [v.value for v in result.variables]
    return sorted(tuple(str(row[n]) for n in names) for row in result)


def _stats(path: Path) -> dict:
    with Store.open(path, read_only=True) as store:
        return store.stats()


def _entity(path: Path, ref: str) -> dict:
    result = CliRunner().invoke(main, ["entity", str(path), ref, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    # RDF keeps no order: aliases come in the endpoint's order, not the dump's.
    doc["aliases"] = sorted(doc["aliases"])
    # Virtuoso stores WKT literals as its own geometries: POINT(...) comes back in upper case,
    # typed as its own geometry datatype.
    for fact in doc["facts"]:
        if fact["relation_id"] == "P625":
            fact["value"] = fact["value"].upper()
            fact.pop("datatype", None)
    return doc


# -- the tests ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_catalog_counts_after_sync_equal_the_local_store(engine, synced, local_store):
    assert _stats(synced(engine)) == _stats(local_store)


@pytest.mark.parametrize("engine", ENGINES)
def test_one_and_two_hop_queries_give_the_same_rows(engine, synced, local_store):
    with Store.open(local_store, read_only=True) as local, Store.open(synced(engine), read_only=True) as remote:
        for sparql in QUERIES + [ASK, CONSTRUCT]:
            expected = _rows(local, sparql)
            assert _rows(remote, sparql) == expected, sparql
        assert len(_rows(local, TWO_HOP)) == 7


@pytest.mark.parametrize("engine", ENGINES)
def test_kgstore_entity_agrees(engine, synced, local_store):
    for ref in ("Q513", "Q5456", "wd:Q42", "P17"):
        assert _entity(synced(engine), ref) == _entity(local_store, ref), ref


@pytest.mark.parametrize("engine", ENGINES)
def test_sandbox_run_sparql_gives_the_same_rows(engine, synced, local_store):
    from qa.sandbox import run_sparql

    with Store.open(local_store, read_only=True) as local, Store.open(synced(engine), read_only=True) as remote:
        for sparql in (ONE_HOP, TWO_HOP, ASK):
            mine, theirs = run_sparql(local, sparql), run_sparql(remote, sparql)
            key = lambda rows: sorted(sorted((k, str(v)) for k, v in row.items()) for row in rows)  # noqa: E731
            assert key(theirs.rows) == key(mine.rows), sparql
            assert theirs.boolean == mine.boolean and not theirs.truncated


@pytest.mark.parametrize("engine", ENGINES)
def test_relation_paths_read_both_directions(engine, synced, local_store):
    """Virtuoso has no boolean type: ``BIND(true AS ?back)`` comes back as the integer 1.
    Read as "not true", every backward hop was taken forward and found nothing, and pgmr
    answered a different entity over Virtuoso (test_endpoint_ask found it)."""
    from qa.steps._paths import next_hops

    wd = "http://www.wikidata.org/entity/"
    found = {}
    for name, path in (("local", local_store), (engine, synced(engine))):
        with Store.open(path, read_only=True) as store:
            hops = next_hops(store, "Q419", wd + "Q419", None, timeout_s=10)
        found[name] = sorted((p.steps, p.reaches) for p in hops)
    assert found[engine] == found["local"]
    assert any(back for steps, _ in found["local"] for _, back in steps)  # Peru is reached from its mountains


def test_init_records_what_each_engine_supports(engines, tmp_path):
    """Capabilities are probed, not looked up by name: Virtuoso caps results at its
    ResultSetMaxRows (10,000 in the fixture's ini, Debian's default) and honours a per-query
    timeout parameter; Oxigraph server does neither."""
    virtuoso = _init(tmp_path / "v", engines("virtuoso").url)
    oxigraph = _init(tmp_path / "o", engines("oxigraph").url)
    assert virtuoso["result_cap"] == 10_000 and virtuoso["page_rows"] <= 5_000
    assert virtuoso["timeout_param"] == "timeout" and virtuoso["partial_on_timeout"]
    assert oxigraph["result_cap"] == 0 and oxigraph["timeout_param"] == ""
    # Virtuoso's TSV writes bare values (no types, no language tags): sync reads its XML.
    assert virtuoso["results_format"] == "xml" and oxigraph["results_format"] == "tsv"
    for caps in (virtuoso, oxigraph):
        assert caps["count_distinct"] and caps["lang_filter"] and caps["keyset_paging"]
    assert "Virtuoso" in virtuoso["server"] and "Oxigraph" in oxigraph["server"]


def test_a_page_at_the_result_cap_is_read_again_smaller(engines, tmp_path, local_store):
    """With a cap of 5 rows (as if the endpoint cut there), pages shrink to one subject and a
    subject with more triples than the cap is read in OFFSET pages: the catalog is whole."""
    path = tmp_path / "capped"
    _init(path, engines("oxigraph").url)
    config = StoreConfig.load(path)
    config.endpoint_capabilities.result_cap, config.endpoint_capabilities.page_rows = 5, 2
    config.save(path)
    with Store.open(path) as store:
        summary = kgstore.sync(store)
    assert summary.counts["pages"] == summary.counts["subjects"] == 69
    assert _stats(path) == _stats(local_store)


def test_a_stream_in_no_subject_order_syncs_whole_and_says_subjects_were_not_counted(engines, tmp_path, local_store):
    """Virtuoso whose cap is lifted is read as a stream, and streams ``?s ?p ?o`` in its own
    index order, not a subject's triples together: every subject arrives in many places. The
    catalog is whole all the same; the subjects are not counted (counting starts would
    count each subject many times) and the rate is given in triples."""
    path = tmp_path / "streamed"
    _init(path, engines("virtuoso").url)
    config = StoreConfig.load(path)
    config.endpoint_capabilities.result_cap, config.endpoint_capabilities.page_rows = 0, 200  # as if lifted
    config.save(path)
    result = CliRunner().invoke(main, ["sync", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["status"] == "done" and summary["subjects"].startswith("not counted")
    assert "subjects_per_s" not in summary and summary["triples_per_s"] > 0
    assert summary["triples"] == summary["endpoint_triples"]
    assert _stats(path) == _stats(local_store)


def test_second_sync_catches_up(synced, local_store):
    path = synced("oxigraph")
    with Store.open(path) as store:
        assert kgstore.sync(store).status == "up to date"
        again = kgstore.sync(store, full=True)
    assert again.status == "done" and again.counts["subjects"] == 69
    stats = _stats(path)
    assert stats.pop("ingest_runs") == 2
    expected = _stats(local_store)
    expected.pop("ingest_runs")
    assert stats == expected  # the earlier run's facts were replaced, not doubled


@pytest.mark.parametrize("engine", ENGINES)
def test_sync_resumes_after_the_endpoint_stopped_mid_sync(engine, engines, tmp_path, local_store):
    server = engines(engine)
    path = tmp_path / "resumed"
    _init(path, server.url)
    _fast_faults(path)
    stopped = []

    def stop_at_page_three(progress) -> None:
        if progress.pages == 3 and not stopped:
            server.stop()  # by pid, while the sync goes on
            stopped.append(True)

    try:
        with Store.open(path) as store:
            with pytest.raises(EndpointUnreachableError) as caught:
                kgstore.sync(store, page_rows=40, segment_rows=80, progress=stop_at_page_three)
        assert server.url in str(caught.value)
    finally:
        server.start(wait_s=120)
    result = CliRunner().invoke(main, ["runs", str(path), "--format", "json"])
    assert json.loads(result.output)[0]["status"] == "failed"
    with Store.open(path) as store:
        summary = kgstore.sync(store, page_rows=40, segment_rows=80)
    # Oxigraph is read in requests of 80 rows (2 pages), two requests in flight: the page
    # after the stop, and the next request's two, may still have come.
    assert summary.status == "done" and 3 <= summary.resumed_from_page <= 6
    assert summary.counts["subjects"] == 69 and summary.counts["subjects_this_run"] < 69
    assert _stats(path) == _stats(local_store)


@pytest.mark.parametrize("engine", ENGINES)
def test_endpoint_paused_or_killed_during_a_query_gives_a_clear_error(engine, engines, synced, tmp_path):
    """A hung endpoint: the CLI stops at the timeout with one line, no traceback. Killed
    while the query waits: 'unreachable', with the URL."""
    import shutil

    server = engines(engine)
    path = tmp_path / "store"
    shutil.copytree(synced(engine), path)
    _fast_faults(path, timeout_s=2.0)
    command = [str(Path(sys.executable).with_name("kgstore")), "sparql", str(path), ONE_HOP]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    try:
        server.pause()
        started = time.monotonic()
        hung = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        waited = time.monotonic() - started
        assert hung.returncode == 5, hung.stderr
        assert "did not answer the query within 2 s" in hung.stderr and "Traceback" not in hung.stderr
        assert waited < 2 + 8  # the limit, plus starting Python

        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(1.0)  # the query is sent and waits on the paused endpoint
        server.kill()
        out, err = child.communicate(timeout=60)
        assert child.returncode in (5, 15), err
        assert server.url in err and "Traceback" not in err
    finally:
        if server.process is not None:
            server.resume()
        else:
            server.start(wait_s=120)


def test_endpoint_store_never_writes(synced, tmp_path, sample_dir):
    with Store.open(synced("oxigraph")) as store:
        with pytest.raises(ReadOnlyError, match="never writes to an endpoint"):
            store.update("INSERT DATA { wd:Q1 wdt:P31 wd:Q2 }")
        with pytest.raises(ReadOnlyError):
            kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
        with pytest.raises(QueryRefusedError):
            store.query("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
        with pytest.raises(QueryRefusedError):
            store.query("INSERT DATA { wd:Q1 wdt:P31 wd:Q2 }")
        with pytest.raises(StoreError, match="no local Oxigraph store"):
            store.rdf  # noqa: B018


def test_sync_of_a_local_store_is_refused(local_store, tmp_path):
    import shutil

    shutil.copytree(local_store, tmp_path / "copy")
    result = CliRunner().invoke(main, ["sync", str(tmp_path / "copy")])
    assert result.exit_code == 3 and "use `kgstore ingest`" in result.output


def test_unreachable_endpoint_at_init_is_one_clear_line(tmp_path):
    from sparql_servers import free_port

    url = f"http://127.0.0.1:{free_port()}/sparql"
    result = CliRunner().invoke(main, ["init", str(tmp_path / "s"), "--endpoint", url])
    assert result.exit_code == 15 and url in result.output and "unreachable" in result.output
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("engine", ENGINES)
def test_serve_forwards_sparql_to_the_endpoint(engine, synced, local_store):
    pytest.importorskip("uvicorn")
    import httpx
    from serve_fixtures import LiveServer

    from kgstore.server import ServeOptions

    answers = []
    for path in (local_store, synced(engine)):
        with LiveServer(path, ServeOptions(timeout_s=10.0)) as live:
            r = httpx.get(f"{live.url}/sparql", params={"query": TWO_HOP},
                          headers={"Accept": "application/sparql-results+json"}, timeout=30)
            assert r.status_code == 200, r.text
            bindings = r.json()["results"]["bindings"]
            answers.append(sorted(json.dumps(b, sort_keys=True) for b in bindings))
            stats = httpx.get(f"{live.url}/stats", timeout=30).json()
            assert stats["triples"] == 390
    assert answers[0] == answers[1]


def test_queries_from_threads_share_the_pool(synced, local_store):
    """The endpoint client is used from the server's query threads at once."""
    with Store.open(synced("virtuoso"), read_only=True) as remote, Store.open(local_store, read_only=True) as local:
        expected = _rows(local, TWO_HOP)
        results, errors = [], []

        def work():
            try:
                for _ in range(5):
                    results.append(_rows(remote, TWO_HOP) == expected)
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not errors and len(results) == 20 and all(results)


def test_index_search_and_link_work_unchanged(synced, local_store, tmp_path):
    """The semantic index reads the catalog: over an endpoint it finds what it finds locally."""
    import shutil

    pytest.importorskip("hnswlib")
    from indexer import Index, build_index

    hits = {}
    for name, source in (("local", local_store), ("endpoint", synced("oxigraph"))):
        path = tmp_path / name
        shutil.copytree(source, path)
        with Store.open(path) as store:
            build_index(store, kinds=["uris"])
        with Store.open(path, read_only=True) as store:
            found = Index.open(store).search("uris", "highest mountain on Earth", k=3)
            hits[name] = [h.iri for h in found]
    assert hits["endpoint"] == hits["local"] and hits["local"][0].endswith("/Q513")


def test_a_query_the_endpoint_refuses_reads_in_its_own_words(synced):
    """Virtuoso refuses, before running it, a query its cost estimator finds too costly:
    the CLI says so with Virtuoso's message, as a query error (exit 5)."""
    side = " ".join(str(i) for i in range(200))
    values = " ".join(f"VALUES ?{v} {{ {side} }}" for v in "abcd")
    result = CliRunner().invoke(main, ["sparql", str(synced("virtuoso")),
                                       f"SELECT (COUNT(*) AS ?n) WHERE {{ {values} }}"])
    assert result.exit_code == 5, result.output
    assert "refused the query (500)" in result.output and "estimated execution time" in result.output


def test_basic_auth_is_sent_and_503s_are_retried_with_backoff(engines):
    """In front of Oxigraph server, a proxy that asks for HTTP basic auth and is busy (503)
    for its first requests: the client sends the credentials on every request, waits and
    retries the 503s, and gets the engine's own answer; a wrong password is refused at
    once (no retry), and a busy spell longer than the retries ends in a clear error."""
    from fault_proxy import FaultProxy

    from kgstore._endpoint_client import EndpointAuth, EndpointClient
    from kgstore.errors import EndpointAuthError

    upstream = engines("oxigraph").url
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }}"
    direct = EndpointClient(upstream).query(query).body
    reader = EndpointAuth(user="reader", password="s3cret")
    with FaultProxy(upstream, user="reader", password="s3cret", fail_first=2) as proxy:
        started = time.monotonic()
        answer = EndpointClient(proxy.url, auth=reader, retries=3, backoff_s=0.2).query(query)
        assert answer.body == direct and json.loads(direct)["results"]["bindings"][0]["n"]["value"] == "390"
        assert proxy.statuses == [503, 503, 200]
        assert time.monotonic() - started >= 0.2 + 0.4  # backoff doubles: 0.2 s, then 0.4 s
        wrong = EndpointClient(proxy.url, auth=EndpointAuth(user="reader", password="guess"), retries=3)
        with pytest.raises(EndpointAuthError, match=r"refused the credentials \(401\)"):
            wrong.query(query)
        assert proxy.statuses == [503, 503, 200, 401]
    with FaultProxy(upstream, user="reader", password="s3cret", fail_first=100) as proxy:
        with pytest.raises(EndpointUnreachableError) as failed:
            EndpointClient(proxy.url, auth=reader, retries=2, backoff_s=0.01).query(query)
        assert proxy.url in str(failed.value) and "503" in str(failed.value)
        assert proxy.statuses == [503, 503, 503]  # the first try and two retries


def test_init_with_basic_auth_through_the_cli(engines, tmp_path):
    from fault_proxy import FaultProxy

    upstream = engines("oxigraph").url
    with FaultProxy(upstream, user="reader", password="s3cret") as proxy:
        refused = CliRunner().invoke(main, ["init", str(tmp_path / "bad"), "--endpoint", proxy.url,
                                            "--graph", GRAPH, "--user", "reader", "--password", "guess"])
        assert refused.exit_code == 15 and "refused the credentials (401)" in refused.output
        assert "Traceback" not in refused.output and not (tmp_path / "bad").exists()
        _init(tmp_path / "s", proxy.url, "--user", "reader", "--password", "s3cret")
        assert "s3cret" not in (tmp_path / "s" / "kgstore.toml").read_text()
        result = CliRunner().invoke(main, ["sparql", str(tmp_path / "s"), ASK, "--format", "json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["boolean"] is True


def test_credentials_stay_out_of_the_config(engines, tmp_path):
    from kgstore._endpoint import CREDENTIALS_NAME

    path = tmp_path / "s"
    _init(path, engines("oxigraph").url, "--token", "s3cret-token")
    assert "s3cret-token" not in (path / "kgstore.toml").read_text()
    assert (path / CREDENTIALS_NAME).stat().st_mode & 0o777 == 0o600
    with Store.open(path, read_only=True) as store:
        assert store.triples.client._client.headers["authorization"] == "Bearer s3cret-token"
        assert store.triple_count() == 390  # Oxigraph server ignores the header


# -- a MetaQA slice: kg: IRIs minted by the tsv loader, labels without a language tag -------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_metaqa_slice_over_the_endpoint_matches_the_local_store(engine, engines, metaqa_local, tmp_path):
    server = engines(engine)
    data = slice_ntriples(metaqa_local, server.directory / f"metaqa-{engine}.nt")
    if not getattr(server, "metaqa_loaded", False):
        server.load_more([data], METAQA_GRAPH)
        server.metaqa_loaded = True
    path = tmp_path / "store"
    result = CliRunner().invoke(main, ["init", str(path), "--endpoint", server.url, "--graph", METAQA_GRAPH])
    assert result.exit_code == 0, result.output
    with Store.open(path) as store:
        kgstore.sync(store)
    local_stats, remote_stats = _stats(metaqa_local), _stats(path)
    # The endpoint holds the labels as triples too (the local store has them in its catalog).
    assert remote_stats.pop("triples") == local_stats.pop("triples") + local_stats["entities_labelled"] \
        + local_stats["relations"]
    assert remote_stats == local_stats
    two_hop = ("SELECT ?film ?other WHERE { ?film kgr:directed_by ?d . ?other kgr:directed_by ?d "
               "FILTER(?film != ?other) }")
    with Store.open(metaqa_local, read_only=True) as local, Store.open(path, read_only=True) as remote:
        for sparql in (two_hop, "SELECT ?f ?y WHERE { ?f kgr:release_year ?y FILTER(?y > 1990) }"):
            expected = _rows(local, sparql)
            assert expected and _rows(remote, sparql) == expected, sparql
    for ref in ("kg:Something_Borrowed", "kg:Emily_Giffin"):
        mine, theirs = _entity(metaqa_local, ref), _entity(path, ref)
        # The tsv loader's id is the name as written ("Emily Giffin"); from triples alone
        # the id is the IRI's local name ("Emily_Giffin"). Everything else agrees.
        assert theirs.pop("id") == mine.pop("id").replace(" ", "_")
        assert theirs == mine, ref

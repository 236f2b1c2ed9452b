"""kgstore.run_bounded: the time limit (a watchdog over a fixed worker pool), the row cap,
the query guard, and results written out by pyoxigraph's own serializers."""
from __future__ import annotations

import json
import threading
import time

import pyoxigraph as ox
import pytest

import kgstore
from kgstore import BoundedResult, QueryPool, Store, run_bounded
from kgstore.errors import QueryError, QueryRefusedError, QueryTimeoutError
from kgstore.records import Triple

EX = "http://example.org/"
# N subjects x 1 link each; the 3-way cross join below has N^3 = 64,000 rows (seconds to
# sort on a quiet machine).
N = 40
TRIPLES = [Triple(f"{EX}s{i}", f"{EX}p", f"{EX}o{i % 7}") for i in range(N)] + [
    Triple(f"{EX}s0", f"{EX}name", "zero", literal=True, lang="en"),
    Triple(f"{EX}s1", f"{EX}age", "41", literal=True, datatype="http://www.w3.org/2001/XMLSchema#integer"),
    Triple(f"{EX}s2", f"{EX}name", 'say "hi"\n\\ \x01 é\t', literal=True),  # escapes survive the replay
]
CROSS = "SELECT * WHERE { ?a <http://example.org/p> ?x . ?b <http://example.org/p> ?y . ?c <http://example.org/p> ?z }"
# Sorting the cross join yields no row until all of it is sorted: a long step with no row.
SLOW_SORT = CROSS.replace("SELECT *", "SELECT ?a ?b ?c") + " ORDER BY DESC(CONCAT(STR(?a), STR(?b), STR(?c)))"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("bounded") / "store"
    with Store.init(path) as st:
        st.add_triples(TRIPLES)
    with Store.open(path, read_only=True) as st:
        yield st


@pytest.fixture
def pool():
    p = QueryPool(workers=2)
    yield p
    p.shutdown()


def test_public_surface():
    assert {"run_bounded", "BoundedResult", "QueryPool", "QueryTimeoutError"} <= set(kgstore.__all__)
    assert issubclass(QueryTimeoutError, QueryError) and QueryTimeoutError.exit_code == 5


def test_select_rows_in_order_with_prefixes(store, pool):
    result = run_bounded(store, "SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o } ORDER BY ?s LIMIT 3",
                         timeout_s=10, max_rows=100, pool=pool)
    assert result.kind == "solutions" and result.variables == ("s", "o") and not result.truncated
    assert [(r[0].value, r[1].value) for r in result.rows] == [
        (f"{EX}s0", f"{EX}o0"), (f"{EX}s1", f"{EX}o1"), (f"{EX}s10", f"{EX}o3")]
    assert len(result) == 3 and result.seconds > 0


def test_row_cap_truncates_and_says_so(store, pool):
    result = run_bounded(store, "SELECT ?s WHERE { ?s <http://example.org/p> ?o } ORDER BY ?s",
                         timeout_s=10, max_rows=5, pool=pool)
    assert result.truncated and len(result.rows) == 5
    exact = run_bounded(store, "SELECT ?s WHERE { ?s <http://example.org/p> ?o }", timeout_s=10, max_rows=N,
                        pool=pool)
    assert not exact.truncated and len(exact) == N


def test_graph_results_capped_and_serialized(store, pool):
    result = run_bounded(store, "CONSTRUCT { ?s <http://example.org/q> ?o } WHERE { ?s <http://example.org/p> ?o }",
                         timeout_s=10, max_rows=10, pool=pool)
    assert result.kind == "graph" and result.truncated and len(result.triples) == 10
    nt = result.serialize(ox.RdfFormat.N_TRIPLES).decode()
    assert nt.count("<http://example.org/q>") == 10
    turtle = result.serialize(ox.RdfFormat.TURTLE, prefixes={"ex": EX}).decode()
    assert "@prefix ex: <http://example.org/>" in turtle and "ex:q" in turtle
    with pytest.raises(ValueError, match="written as RDF"):
        result.serialize(ox.QueryResultsFormat.JSON)


def test_ask(store, pool):
    yes = run_bounded(store, "ASK { <http://example.org/s0> ?p ?o }", timeout_s=10, max_rows=1, pool=pool)
    no = run_bounded(store, "ASK { <http://example.org/nobody> ?p ?o }", timeout_s=10, max_rows=1, pool=pool)
    assert (yes.kind, yes.boolean, no.boolean) == ("boolean", True, False)
    assert json.loads(yes.serialize(ox.QueryResultsFormat.JSON)) == {"head": {}, "boolean": True}
    assert json.loads(no.serialize(ox.QueryResultsFormat.JSON)) == {"head": {}, "boolean": False}


def test_serialized_solutions_equal_pyoxigraphs_own(store, pool):
    """Every term kind (IRI, language-tagged and typed literal, unbound) and every results
    format come out byte for byte as pyoxigraph writes the live result."""
    query = ("SELECT ?s ?name ?age WHERE { ?s <http://example.org/p> ?o "
             "OPTIONAL { ?s <http://example.org/name> ?name } OPTIONAL { ?s <http://example.org/age> ?age } } "
             "ORDER BY ?s")
    result = run_bounded(store, query, timeout_s=10, max_rows=1000, pool=pool)
    for fmt in (ox.QueryResultsFormat.JSON, ox.QueryResultsFormat.XML, ox.QueryResultsFormat.CSV,
                ox.QueryResultsFormat.TSV):
        assert result.serialize(fmt) == store.query(query).serialize(format=fmt), fmt


def test_blank_nodes_and_a_variable_named_like_the_row_counter(pool, tmp_path):
    with Store.init(tmp_path / "s") as st:
        st.add_ntriples(b'_:b1 <http://example.org/p> "x" .\n')
        result = run_bounded(st, "SELECT ?kgstore_row ?o WHERE { ?kgstore_row <http://example.org/p> ?o }",
                             timeout_s=10, max_rows=10, pool=pool)
    doc = json.loads(result.serialize(ox.QueryResultsFormat.JSON))
    assert doc["head"]["vars"] == ["kgstore_row", "o"]
    assert doc["results"]["bindings"][0]["kgstore_row"]["type"] == "bnode"
    assert doc["results"]["bindings"][0]["o"] == {"type": "literal", "value": "x"}


def test_refused_and_malformed_queries_raise_the_store_errors(store, pool):
    with pytest.raises(QueryRefusedError, match="SERVICE"):
        run_bounded(store, "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
                    timeout_s=10, max_rows=10, pool=pool)
    with pytest.raises(QueryRefusedError, match="LOAD"):
        run_bounded(store, "LOAD <http://example.org/data.ttl>", timeout_s=10, max_rows=10, pool=pool)
    with pytest.raises(QueryError, match="SPARQL syntax error"):
        run_bounded(store, "SELECT ?s WHERE { ?s ", timeout_s=10, max_rows=10, pool=pool)
    with pytest.raises(ValueError):
        run_bounded(store, "ASK {}", timeout_s=0, max_rows=10, pool=pool)


def test_default_graph_selects_the_graph_read(store, pool):
    # The store's triples live in the default graph: naming another graph as the default
    # graph leaves nothing to read.
    query = "SELECT ?s WHERE { ?s ?p ?o }"
    assert len(run_bounded(store, query, timeout_s=10, max_rows=1000, pool=pool)) == len(TRIPLES)
    assert len(run_bounded(store, query, timeout_s=10, max_rows=1000, pool=pool,
                           default_graph=[f"{EX}graph"])) == 0


def test_timeout_on_a_query_streaming_rows_stops_the_worker(store, pool):
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError, match="time limit of 0.2 s"):
        run_bounded(store, CROSS, timeout_s=0.2, max_rows=10**9, pool=pool)
    assert time.monotonic() - started < 2.0
    # The worker stopped at its next row: the pool answers at once again.
    result = run_bounded(store, "ASK { ?s ?p ?o }", timeout_s=5, max_rows=1, pool=pool)
    assert result.boolean is True


def test_runaway_queries_occupy_at_most_the_pool(store):
    """Long steps that yield no row keep their worker; the pool never grows past its size
    and a query queued behind them times out on its own limit."""
    # Threads of pools other tests left winding down (a live server's runaway query) are not this pool's.
    before = {t for t in threading.enumerate() if t.name.startswith("kgstore-query")}
    pool = QueryPool(workers=1)
    try:
        with pytest.raises(QueryTimeoutError):
            run_bounded(store, SLOW_SORT, timeout_s=0.1, max_rows=10, pool=pool)
        started = time.monotonic()
        with pytest.raises(QueryTimeoutError):
            run_bounded(store, "ASK { ?s ?p ?o }", timeout_s=0.1, max_rows=1, pool=pool)
        assert time.monotonic() - started < 1.0  # well before the sort ahead of it ends
        busy = [t for t in threading.enumerate() if t.name.startswith("kgstore-query") and t not in before]
        assert len([t for t in busy if t.is_alive()]) <= 1
    finally:
        pool.shutdown()


def test_bindings_and_result_record(store, pool):
    result = run_bounded(store, "SELECT ?s ?name WHERE { ?s <http://example.org/p> ?o "
                                "OPTIONAL { ?s <http://example.org/name> ?name } } ORDER BY ?s LIMIT 2",
                         timeout_s=10, max_rows=10, pool=pool)
    assert isinstance(result, BoundedResult)
    assert result.bindings() == [{"s": ox.NamedNode(f"{EX}s0"), "name": ox.Literal("zero", language="en")},
                                 {"s": ox.NamedNode(f"{EX}s1")}]


def test_a_row_with_a_blank_node_and_one_without_replay_alike(pool, tmp_path):
    with Store.init(tmp_path / "s") as st:
        st.add_ntriples(b'_:b1 <http://example.org/p> "x" .\n<http://example.org/a> <http://example.org/p> "y" .\n')
        query = "SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o } ORDER BY ?o"
        mixed = run_bounded(st, query, timeout_s=10, max_rows=10, pool=pool)
        plain = run_bounded(st, query + " OFFSET 1", timeout_s=10, max_rows=10, pool=pool)
        for fmt in (ox.QueryResultsFormat.JSON, ox.QueryResultsFormat.TSV):
            assert plain.serialize(fmt) == st.query(query + " OFFSET 1").serialize(format=fmt)
    doc = json.loads(mixed.serialize(ox.QueryResultsFormat.JSON))
    assert [b["s"]["type"] for b in doc["results"]["bindings"]] == ["bnode", "uri"]


def test_async_variant_answers_and_times_out(store, pool):
    import asyncio

    from kgstore import run_bounded_async

    async def both():
        ok = await run_bounded_async(store, "ASK { ?s ?p ?o }", timeout_s=5, max_rows=1, pool=pool)
        with pytest.raises(QueryTimeoutError):
            await run_bounded_async(store, CROSS, timeout_s=0.2, max_rows=10**9, pool=pool)
        return ok

    assert asyncio.run(both()).boolean is True
    assert run_bounded(store, "ASK { ?s ?p ?o }", timeout_s=5, max_rows=1, pool=pool).boolean is True


# -- write_bounded: the document written in the worker (what the server sends) -----------------------
JSON_FMT, XML_FMT, CSV_FMT, TSV_FMT = (ox.QueryResultsFormat.JSON, ox.QueryResultsFormat.XML,
                                       ox.QueryResultsFormat.CSV, ox.QueryResultsFormat.TSV)
RESULTS_FORMATS = (JSON_FMT, XML_FMT, CSV_FMT, TSV_FMT)


def _always(fmt):
    return lambda kind: fmt


@pytest.mark.parametrize("fmt", RESULTS_FORMATS, ids=lambda f: f.file_extension)
@pytest.mark.parametrize("max_rows", [0, 1, N - 1, N, N + 1, 10_000])
def test_written_document_is_run_bounded_serialized_at_every_cap(store, pool, fmt, max_rows):
    """Straight from the live result or the long way, the document and the cap are those
    of run_bounded: a budget of bytes too small for max_rows + 1 rows decides which."""
    query = "SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o } ORDER BY ?s"
    written = kgstore.write_bounded(store, query, _always(fmt), timeout_s=10, max_rows=max_rows, pool=pool)
    kept = run_bounded(store, query, timeout_s=10, max_rows=max_rows, pool=pool)
    assert (written.kind, written.format, written.truncated) == ("solutions", fmt, kept.truncated)
    assert written.body == kept.serialize(fmt)
    assert written.truncated == (max_rows < N)


def test_written_ask_construct_and_every_term_kind(store, pool):
    ask = kgstore.write_bounded(store, "ASK { ?s ?p ?o }", _always(JSON_FMT), timeout_s=10, max_rows=1, pool=pool)
    assert json.loads(ask.body) == {"head": {}, "boolean": True} and ask.kind == "boolean"
    query = ("SELECT ?s ?name ?age WHERE { ?s <http://example.org/p> ?o "
             "OPTIONAL { ?s <http://example.org/name> ?name } OPTIONAL { ?s <http://example.org/age> ?age } } "
             "ORDER BY ?s")
    for fmt in RESULTS_FORMATS:  # byte for byte pyoxigraph's own writing of the live result
        written = kgstore.write_bounded(store, query, _always(fmt), timeout_s=10, max_rows=1000, pool=pool)
        assert written.body == store.query(query).serialize(format=fmt), fmt
    construct = "CONSTRUCT { ?s <http://example.org/q> ?o } WHERE { ?s <http://example.org/p> ?o }"
    graph = kgstore.write_bounded(store, construct, _always(ox.RdfFormat.TURTLE), timeout_s=10, max_rows=5,
                                  prefixes={"ex": EX}, pool=pool)
    assert graph.kind == "graph" and graph.truncated and graph.body.count(b"ex:q") == 5
    assert b"@prefix ex: <http://example.org/>" in graph.body


def test_no_format_for_the_kind_writes_nothing(store, pool):
    written = kgstore.write_bounded(store, "ASK {}", lambda kind: None, timeout_s=10, max_rows=1, pool=pool)
    assert (written.kind, written.format, written.body) == ("boolean", None, None)


def test_a_result_past_the_byte_budget_goes_the_long_way(store, pool, monkeypatch):
    import kgstore._bounded_query as bounded

    monkeypatch.setattr(bounded, "DIRECT_WRITE_MAX_BYTES", 100)  # under one document of this query
    query = "SELECT ?s ?o WHERE { ?s <http://example.org/p> ?o } ORDER BY ?s"
    written = kgstore.write_bounded(store, query, _always(JSON_FMT), timeout_s=10, max_rows=10_000, pool=pool)
    assert written.body == store.query(query).serialize(format=JSON_FMT) and not written.truncated


def test_written_query_past_its_limit_times_out_and_frees_the_worker(store, pool):
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        kgstore.write_bounded(store, CROSS, _always(JSON_FMT), timeout_s=0.2, max_rows=10**9, pool=pool)
    assert time.monotonic() - started < 2.0
    ok = kgstore.write_bounded(store, "ASK { ?s ?p ?o }", _always(JSON_FMT), timeout_s=5, max_rows=1, pool=pool)
    assert json.loads(ok.body)["boolean"] is True


def test_write_bounded_async_answers_refuses_and_times_out(store, pool):
    import asyncio

    async def all_three():
        ok = await kgstore.write_bounded_async(store, "ASK { ?s ?p ?o }", _always(TSV_FMT), timeout_s=5,
                                               max_rows=1, pool=pool)
        with pytest.raises(QueryRefusedError):
            await kgstore.write_bounded_async(store, "LOAD <http://example.org/x>", _always(TSV_FMT), timeout_s=5,
                                              max_rows=1, pool=pool)
        with pytest.raises(QueryTimeoutError):
            await kgstore.write_bounded_async(store, CROSS, _always(JSON_FMT), timeout_s=0.2, max_rows=10**9,
                                              pool=pool)
        return ok

    assert b"true" in asyncio.run(all_three()).body


# -- the pool --------------------------------------------------------------------------------------------
def test_pool_runs_calls_for_threads_and_loops_and_shuts_down():
    import asyncio

    pool = QueryPool(workers=1)
    release = threading.Event()
    blocker = pool.submit(release.wait, 10)
    queued = pool.submit(lambda: "never")
    assert queued.cancel()  # still waiting behind the blocker: cancelled, it never runs
    release.set()
    assert blocker.result(timeout=5) is True

    async def on_a_loop():
        assert await pool.submit_async(lambda x: x * 2, 21) == 42
        with pytest.raises(ZeroDivisionError):
            await pool.submit_async(lambda: 1 / 0)

    asyncio.run(on_a_loop())
    pool.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(lambda: None)
    deadline = time.monotonic() + 5
    while any(t.is_alive() for t in pool._threads) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.is_alive() for t in pool._threads)


# -- the guard's shortcuts ---------------------------------------------------------------------------------
@pytest.mark.parametrize("query", [
    "SELECT * WHERE { ?s ?p ?o }",
    "select * where { service <http://x/> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s <http://x/load> ?o }",  # the word only inside an IRI
    'SELECT * WHERE { ?s ?p "insert here" }',
    "SELECT * WHERE { ?service ?p ex:drop }",
    "CLEAR ALL",
    "# a comment that says DELETE\nSELECT * WHERE { ?s ?p ?o }",
    "SELECT * WHERE { " + "{ " * 300 + "}" * 300 + " }",  # too deep
    "SELECT * WHERE { " + "{ " * 100 + "}" * 100 + " FILTER(((((?x)))))}",
])
def test_refused_operation_shortcuts_agree_with_the_full_scan(query):
    from kgstore._query_guard import MAX_NESTING, keywords, refused_operation, too_deeply_nested

    def full_scan(text):
        depth, deepest = 0, None
        for offset, ch in enumerate(text):
            if ch in "({[":
                depth += 1
                if depth > MAX_NESTING and deepest is None:
                    deepest = offset
            elif ch in ")}]":
                depth = max(0, depth - 1)
        return deepest

    assert too_deeply_nested(query, MAX_NESTING) == full_scan(query)
    refused = refused_operation(query)
    words = [w for w, _ in keywords(query) if w in {"SERVICE", "LOAD", "CLEAR", "DELETE", "INSERT", "DROP"}]
    assert (refused is not None) == bool(words or full_scan(query) is not None)


@pytest.mark.parametrize("fmt", RESULTS_FORMATS, ids=lambda f: f.file_extension)
def test_a_lookup_written_inline_is_the_pools_document_or_none_past_the_budget(store, pool, fmt):
    from kgstore._bounded_query import write_inline

    lookup = "SELECT ?p ?o WHERE { <http://example.org/s0> ?p ?o }"
    inline = write_inline(store, lookup, _always(fmt), max_rows=1000)
    pooled = kgstore.write_bounded(store, lookup, _always(fmt), timeout_s=10, max_rows=1000, pool=pool)
    assert (inline.kind, inline.format, inline.body, inline.truncated) == \
        (pooled.kind, pooled.format, pooled.body, pooled.truncated)
    # more rows than the cap allows: no document here, the pool cuts it at the cap
    assert write_inline(store, "SELECT * WHERE { ?s ?p ?o }", _always(fmt), max_rows=3) is None
    with pytest.raises(QueryRefusedError):
        write_inline(store, "SELECT * WHERE { SERVICE <http://x> { ?s ?p ?o } }", _always(fmt), max_rows=3)

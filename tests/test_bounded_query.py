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

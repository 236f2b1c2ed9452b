"""Several stores at once (qa.multistore): the demo Wikidata sample and a small Freebase
store that share Douglas Adams through Wikidata's Freebase ID (P646), see
multistore_fixtures. The model is scripted here (the code around it is the point); the
real model answers over both stores in test_multistore_llm.py."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgstore import Store
from kgstore.cli import main
from kgstore.terms import FB, WD
from qa import QAContext, ScriptedLLM
from qa.multistore import (SeveralStores, StoreSource, freebase_id, freebase_iri, held_as, identity_keys,
                           method_over, store_names)

from multistore_fixtures import FREEBASE_FILE, FREEBASE_IDS, build_store, with_freebase_ids
from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

QUESTION = "Tell me about Douglas Adams"
SKETCH = '''```cypher
CREATE (adams:Person {name: "Douglas Adams"}),
       (adams)-[:WROTE]->(:Book {name: "The Hitchhiker's Guide to the Galaxy"}),
       (adams)-[:PLACE_OF_BIRTH]->(:City {name: "London"})
```'''
WRITING = ("Douglas Adams was an English writer and humorist [1].\n"
           "He wrote The Hitchhiker's Guide to the Galaxy [2].\n"
           "He was born in London in 1927 [5].\n")
BORN = "SELECT DISTINCT ?answer WHERE { [ENT: Douglas Adams] [REL: place of birth] ?answer }"
ADAMS_FB = FB + "m.0282x"


@pytest.fixture(scope="module")
def stores(sample_dir, tmp_path_factory):
    """(wikidata, freebase): the sample with P646 on Q42 and Q350, and the Freebase file."""
    base = tmp_path_factory.mktemp("multistore")
    sample = with_freebase_ids(sample_dir / "sample-wikidata.json", base / "sample-p646.json", FREEBASE_IDS)
    return (build_store(base / "wikidata", "wikidata-json", sample),
            build_store(base / "freebase", "freebase", FREEBASE_FILE))


@pytest.fixture(scope="module")
def same_as_store(tmp_path_factory):
    """The Freebase file again, saying owl:sameAs wd:Q42 instead of any Freebase ID."""
    base = tmp_path_factory.mktemp("same_as")
    lines = FREEBASE_FILE.read_text() + (f"<{ADAMS_FB}>\t<http://www.w3.org/2002/07/owl#sameAs>\t<{WD}Q42>\t.\n")
    (base / "fb.nt").write_text(lines)
    return build_store(base / "freebase-same-as", "freebase", base / "fb.nt")


def ask(args, llm):
    return CliRunner().invoke(main, ["ask", *map(str, args)], obj={"llm": llm}, env={"KGSTORE_PATH": None})


def answer_over(paths, llm, question, method="cascade"):
    """``question`` answered from the stores at ``paths`` (opened and closed here)."""
    opened = [Store.open(p, read_only=True) for p in paths]
    try:
        sources = [StoreSource(n, QAContext(s, llm)) for n, s in zip(store_names(paths), opened)]
        return method_over(sources, method).answer(question)
    finally:
        for store in opened:
            store.close()


# -- identity -----------------------------------------------------------------------------------
def test_freebase_ids_and_iris_map_both_ways_and_store_names_are_unique(tmp_path):
    assert freebase_iri("/m/0282x") == ADAMS_FB and freebase_id(ADAMS_FB) == "/m/0282x"
    assert freebase_iri("Q42") is None and freebase_id(WD + "Q42") is None
    assert store_names([tmp_path / "a" / "store", tmp_path / "b" / "store", tmp_path / "wd"]) == \
        ["a/store", "b/store", "wd"]


def test_p646_and_a_freebase_iri_name_one_entity(stores):
    wikidata, freebase = stores
    with Store.open(wikidata, read_only=True) as wd, Store.open(freebase, read_only=True) as fb:
        keys = identity_keys(wd, WD + "Q42")
        assert keys == {WD + "Q42", ADAMS_FB}
        assert held_as(fb, keys) == [ADAMS_FB]
        assert held_as(wd, identity_keys(fb, ADAMS_FB)) == [WD + "Q42"]
        assert held_as(fb, identity_keys(wd, WD + "Q837")) == []  # Nepal: no Freebase ID, not in the store


def test_owl_same_as_names_one_entity(demo_store, same_as_store):  # noqa: F811
    with Store.open(demo_store, read_only=True) as wd, Store.open(same_as_store, read_only=True) as fb:
        assert held_as(fb, identity_keys(wd, WD + "Q42")) == [ADAMS_FB]  # the demo store has no P646
        assert held_as(wd, identity_keys(fb, ADAMS_FB)) == [WD + "Q42"]


# -- open answers -------------------------------------------------------------------------------
def test_an_open_answer_from_two_stores_cites_facts_of_both_each_marked_with_its_store(stores):
    result = ask([*stores, QUESTION, "--format", "json"], ScriptedLLM([SKETCH, WRITING]))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["method"] == "open" and not doc["refused"]
    facts = {f["n"]: f for f in doc["facts"]}
    assert {f["store"] for f in facts.values()} == {"wikidata", "freebase"}
    for fact in facts.values():  # every fact's triples are the store's own, about its Douglas Adams
        subject = {"wikidata": WD + "Q42", "freebase": ADAMS_FB}
        assert all(e["s"] == subject[e["store"]] for e in fact["evidence"]), fact
    works = next(f for f in facts.values() if f["relation"] == "works written")
    assert works["store"] == "freebase" and "The Hitchhiker's Guide to the Galaxy" in works["values"]
    born = next(f for f in facts.values() if f["relation"] == "place of birth")
    assert born["stores"] == ["wikidata", "freebase"] and born["values"] == ["Cambridge"]  # both hold it: one fact
    assert all(e["store"] in ("wikidata", "freebase") for e in doc["evidence"])
    assert "London" not in doc["text"] and "1927" not in doc["text"]  # the made-up sentence did not stand
    assert doc["answer_stores"] == [["wikidata", "freebase"]]
    assert [(s["store"], s["as"], s["entity"]) for s in doc["by_store"]] == [
        ("wikidata", "subject", WD + "Q42"), ("freebase", "same entity", ADAMS_FB)]
    table = ask([*stores, QUESTION], ScriptedLLM([SKETCH, WRITING]))
    assert table.exit_code == 0, table.output
    assert "wikidata, freebase" in table.output and "Store freebase: same entity" in table.output


def test_a_namesake_no_store_joins_is_held_apart(demo_store, stores):  # noqa: F811
    _, freebase = stores  # the demo store holds no P646: its Douglas Adams and Freebase's stay two
    answer = answer_over([demo_store, freebase], ScriptedLLM([SKETCH, WRITING]), QUESTION)
    assert not answer.refused
    assert {f["store"] for f in answer.facts} == {"store"}  # the demo store's directory name
    assert [(s["as"], s["entity"]) for s in answer.by_store] == [("subject", WD + "Q42"), ("held apart", ADAMS_FB)]
    assert all(e.s == WD + "Q42" for e in answer.evidence)


def test_the_same_as_store_pools_its_facts(demo_store, same_as_store):  # noqa: F811
    answer = answer_over([demo_store, same_as_store], ScriptedLLM([SKETCH, WRITING]), QUESTION)
    assert {f["store"] for f in answer.facts} == {"store", "freebase-same-as"}


def test_an_entity_no_store_holds_is_refused_without_the_model(stores):
    llm = ScriptedLLM([])
    result = ask([*stores, "Tell me about Barack Obama", "--format", "json"], llm)
    doc = json.loads(result.output)
    assert doc["refused"] and doc["refusal"]["reason"] == "not_in_store" and not llm.calls
    assert [s["as"] for s in doc["by_store"]] == ["not held", "not held"]


# -- precise answers ----------------------------------------------------------------------------
def test_a_precise_question_runs_on_each_store_and_one_entity_is_one_answer(stores):
    result = ask([*stores, "Where was Douglas Adams born?", "-m", "pgmr", "--format", "json"],
                 ScriptedLLM([BORN] * 8))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["answers"] == ["Cambridge"] and doc["answer_iris"] == [WD + "Q350"]  # Q350's P646 is m.09b8m
    assert doc["answer_stores"] == [["wikidata", "freebase"]]
    assert {(e["s"], e["o"], e["store"]) for e in doc["evidence"]} == {
        (WD + "Q42", WD + "Q350", "wikidata"), (ADAMS_FB, FB + "m.09b8m", "freebase")}
    assert [(s["store"], s["answers"], bool(s["query"])) for s in doc["by_store"]] == [
        ("wikidata", ["Cambridge"], True), ("freebase", ["Cambridge"], True)]


def test_precise_answers_the_stores_do_not_join_stay_two(demo_store, stores):  # noqa: F811
    answer = answer_over([demo_store, stores[1]], ScriptedLLM([BORN] * 8), "Where was Douglas Adams born?", "pgmr")
    assert answer.answers == ["Cambridge", "Cambridge"] and answer.answer_stores == [["store"], ["freebase"]]
    assert answer.answer_iris == [WD + "Q350", FB + "m.09b8m"]


def test_each_answer_keeps_the_store_that_gave_it(stores):
    works = "SELECT DISTINCT ?answer WHERE { [ENT: Douglas Adams] [REL: works written] ?answer }"
    result = ask([*stores, "Which works did Douglas Adams write?", "-m", "pgmr", "--format", "json"],
                 ScriptedLLM([works] * 8))
    doc = json.loads(result.output)
    given = dict(zip(doc["answers"], doc["answer_stores"]))
    # only Freebase holds works written; Wikidata's URI memory resolves the relation to its
    # nearest one, and what that query returned is marked as Wikidata's
    assert given["The Hitchhiker's Guide to the Galaxy"] == given["Dirk Gently's Holistic Detective Agency"] == \
        ["freebase"]
    by_store = {s["store"]: s for s in doc["by_store"]}
    assert all(given[a] == ["wikidata"] for a in by_store["wikidata"]["answers"])
    assert len(doc["answers"]) == len(by_store["wikidata"]["answers"]) + 2


# -- the retrievers ------------------------------------------------------------------------------
def test_the_retrievers_take_several_stores_and_mark_every_record(stores):
    pytest.importorskip("langchain_core")
    from kgstore.integrations import KgstoreSource
    from kgstore.integrations.langchain import KgstoreRetriever

    retriever = KgstoreRetriever(list(stores), llm=ScriptedLLM([SKETCH, WRITING]))
    try:
        doc, = retriever.invoke(QUESTION)
    finally:
        retriever.close()
    assert doc.metadata["kind"] == "open_answer" and doc.metadata["answer_stores"] == [["wikidata", "freebase"]]
    assert {f["store"] for f in doc.metadata["facts"]} == {"wikidata", "freebase"}
    source = KgstoreSource(list(stores), mode="search", k=6)
    try:
        hits = source.records("Douglas Adams place of birth")
    finally:
        source.close()
    assert len(hits) == 6 and {r.metadata["store"] for r in hits} == {"wikidata", "freebase"}
    assert [r.score for r in hits] == sorted((r.score for r in hits), reverse=True)


# -- serve and mcp -------------------------------------------------------------------------------
# `kgstore mcp` in a child, with a scripted model: the sketch when asked for one, else the writing
SCRIPTED_MCP = ("import sys\nfrom kgstore.cli import main\nfrom qa import ScriptedLLM\n"
                f"said = lambda m: {WRITING!r} if 'Facts:' in m[-1]['content'] else {SKETCH!r}\n"
                "main(sys.argv[1:], prog_name='kgstore', obj={'llm': ScriptedLLM([said] * 4)})\n")


def test_serve_answers_ask_from_several_stores(stores):
    httpx = pytest.importorskip("httpx")
    from kgstore.server import ServeOptions

    from serve_fixtures import LiveServer

    wikidata, freebase = stores
    options = ServeOptions(ask_stores=(str(freebase),))
    with LiveServer(wikidata, options, llm=ScriptedLLM([SKETCH, WRITING])) as live, \
            httpx.Client(base_url=live.url, timeout=60) as client:
        assert client.get("/health").json()["ask_stores"] == ["wikidata", "freebase"]
        doc = client.post("/ask", json={"question": QUESTION}).json()
    assert doc["method"] == "open" and {f["store"] for f in doc["facts"]} == {"wikidata", "freebase"}
    assert doc["answer_stores"] == [["wikidata", "freebase"]]


def test_serve_and_mcp_refuse_a_store_that_does_not_exist(stores, tmp_path):
    for command in ("serve", "mcp"):
        result = ask_like([command, stores[0], tmp_path / "nowhere"])
        assert result.exit_code != 0 and "no kgstore store at" in result.output, (command, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)


def ask_like(args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"KGSTORE_PATH": None})


def test_mcp_ask_returns_the_paragraph_and_structured_citations_from_several_stores(stores, tmp_path):
    pytest.importorskip("mcp.server.mcpserver")
    import sys

    from mcp.client.stdio import StdioServerParameters

    from test_mcp import ENV, run_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-c", SCRIPTED_MCP, "mcp", *map(str, stores)], env=ENV)

    async def work(session):
        return await session.call_tool("ask", {"question": QUESTION})

    with open(tmp_path / "stderr.txt", "w") as errlog:
        result = run_client(params, errlog, work)
    assert not result.is_error, result.content[0].text
    text, whole = result.content[0].text, json.loads(result.content[1].text)
    assert text.startswith("Douglas Adams was an English writer and humorist [1].") and "Facts cited:" in text
    assert "(wikidata, freebase)" in text  # the place of birth both stores hold
    cited = result.structured_content["citations"]
    assert whole == result.structured_content and result.structured_content["method"] == "open"
    assert [c["n"] for c in cited] == [f["n"] for f in whole["facts"]]
    assert {store for c in cited for store in c["stores"]} == {"wikidata", "freebase"}
    assert cited[0]["sentences"] == [0] and all(e["store"] for c in cited for e in c["evidence"])


# -- bad input ----------------------------------------------------------------------------------
def test_a_store_path_that_does_not_exist_is_an_error_not_a_traceback(stores, tmp_path):
    result = ask([stores[0], tmp_path / "nowhere", QUESTION], ScriptedLLM([]))
    assert result.exit_code != 0 and "no kgstore store at" in result.output and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    twice = ask([stores[0], stores[0], QUESTION], ScriptedLLM([]))
    assert twice.exit_code == 2 and "given twice" in twice.output


def test_several_stores_need_two_and_distinct_names(stores):
    with Store.open(stores[0], read_only=True) as wd:
        source = StoreSource("wikidata", QAContext(wd, ScriptedLLM([])))
        with pytest.raises(ValueError, match="two stores or more"):
            SeveralStores([source], "cascade")
        with pytest.raises(ValueError, match="share a name"):
            SeveralStores([source, source], "cascade")

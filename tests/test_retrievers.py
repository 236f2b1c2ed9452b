"""The RAG retrievers on the demo store, through the frameworks' own base classes and with
no model: search mode reads the semantic index, ask mode runs pgmr on a scripted SPARQL
draft (as tests/test_sparql_methods.py does) and returns the evidence facts."""
from __future__ import annotations

import subprocess
import sys

import pytest

from kgstore import Store
from kgstore.integrations import KgstoreSource
from qa import ScriptedLLM

from test_qa_fixtures import demo_store  # noqa: F401  (session fixture)

QUESTION = "Which countries does the Andes cover?"
DRAFT = "SELECT DISTINCT ?x WHERE { [ENT: Andes] [REL: country] ?x }"
ANDES, COUNTRY = "http://www.wikidata.org/entity/Q5456", "http://www.wikidata.org/prop/direct/P17"
ANDES_COUNTRIES = {"Argentina", "Bolivia", "Chile", "Colombia", "Ecuador", "Peru", "Venezuela"}
FACT_KEYS = {"subject", "subject_id", "subject_label", "relation", "relation_id", "relation_label", "object",
             "object_id", "object_label", "object_literal", "score"}


def scripted(**more):
    """Ask mode on pgmr with the scripted draft (the model is not asked to read the facts)."""
    return dict(method="pgmr", llm=ScriptedLLM([DRAFT]), options={"read_answers": False}, **more)


def check_search(items):
    """(text, metadata, score) of search hits for 'mountains in Nepal'."""
    assert len(items) == 5
    text, meta, score = items[0]
    assert text == "Himalayas | country | Nepal"
    assert FACT_KEYS | {"kind", "source"} <= set(meta)
    assert (meta["subject_label"], meta["relation_id"], meta["object_id"]) == ("Himalayas", "wdt:P17", "wd:Q837")
    assert meta["kind"] == "triples" and meta["source"] == "kgstore:search" and score == meta["score"] > 0.5
    assert [s for _, _, s in items] == sorted((s for _, _, s in items), reverse=True)


def check_evidence(items):
    """(text, metadata, score) of the Andes question's evidence."""
    assert len(items) == len(ANDES_COUNTRIES)
    for text, meta, _ in items:
        assert FACT_KEYS <= set(meta)
        assert (meta["subject"], meta["relation"]) == (ANDES, COUNTRY)
        assert (meta["subject_id"], meta["relation_id"]) == ("wd:Q5456", "wdt:P17")
        assert text == f"Andes | country | {meta['object_label']}"
        assert meta["object_id"] == "wd:" + meta["object"].rsplit("/", 1)[1]
        assert set(meta["answers"]) == ANDES_COUNTRIES and meta["refused"] is False and meta["refusal"] is None
        assert f"<{ANDES}> <{COUNTRY}> ?x" in meta["query"] and meta["method"] == "pgmr"
    assert {meta["object_label"] for _, meta, _ in items} == ANDES_COUNTRIES


# -- LangChain ------------------------------------------------------------------------------------------
def test_langchain_search_mode(demo_store):
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from kgstore.integrations.langchain import KgstoreRetriever

    retriever = KgstoreRetriever(demo_store, mode="search", k=5)
    try:
        assert isinstance(retriever, BaseRetriever)
        docs = retriever.invoke("mountains in Nepal")
    finally:
        retriever.close()
    assert all(isinstance(d, Document) and d.id for d in docs)
    check_search([(d.page_content, d.metadata, d.metadata["score"]) for d in docs])


def test_langchain_ask_mode_returns_the_evidence(demo_store):
    pytest.importorskip("langchain_core")
    from kgstore.integrations.langchain import KgstoreRetriever

    with Store.open(demo_store, read_only=True) as store:  # an open Store is used, and left open
        retriever = KgstoreRetriever(store, **scripted())
        docs = retriever.invoke(QUESTION)
        retriever.close()
        assert store.triple_count() == 390
    check_evidence([(d.page_content, d.metadata, d.metadata["score"]) for d in docs])
    assert len({d.id for d in docs}) == len(docs)


# -- LlamaIndex -----------------------------------------------------------------------------------------
def test_llamaindex_search_mode(demo_store):
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    from kgstore.integrations.llamaindex import KgstoreRetriever

    retriever = KgstoreRetriever(demo_store, mode="search", k=5)
    try:
        assert isinstance(retriever, BaseRetriever)
        nodes = retriever.retrieve("mountains in Nepal")
    finally:
        retriever.close()
    assert all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    check_search([(n.node.text, n.node.metadata, n.score) for n in nodes])
    # the metadata stays out of what a model reads: the fact's text says it
    assert nodes[0].node.get_content(metadata_mode="llm") == "Himalayas | country | Nepal"


def test_llamaindex_ask_mode_returns_the_evidence(demo_store):
    pytest.importorskip("llama_index.core")
    from kgstore.integrations.llamaindex import KgstoreRetriever

    retriever = KgstoreRetriever(demo_store, **scripted())
    try:
        nodes = retriever.retrieve(QUESTION)
    finally:
        retriever.close()
    check_evidence([(n.node.text, n.node.metadata, n.score) for n in nodes])


# -- what both share ------------------------------------------------------------------------------------
def test_both_frameworks_get_the_same_records(demo_store):
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from kgstore.integrations.langchain import KgstoreRetriever as LangChainRetriever
    from kgstore.integrations.llamaindex import KgstoreRetriever as LlamaIndexRetriever

    with Store.open(demo_store, read_only=True) as store:
        docs = LangChainRetriever(store, **scripted(k=3)).invoke(QUESTION)
        nodes = LlamaIndexRetriever(store, **scripted(k=3)).retrieve(QUESTION)
    assert len(docs) == 3  # k caps the evidence too
    assert [(d.id, d.page_content, d.metadata) for d in docs] == [(n.node.id_, n.node.text, n.node.metadata)
                                                                   for n in nodes]


def test_an_open_answer_is_one_item_the_paragraph_with_its_facts(demo_store):
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from kgstore.integrations.langchain import KgstoreRetriever as LangChainRetriever
    from kgstore.integrations.llamaindex import KgstoreRetriever as LlamaIndexRetriever

    sketch = '```cypher\nCREATE (n:Country {name: "Nepal"}),\n       (n)-[:CAPITAL]->(:City {name: "Kathmandu"})\n```'
    writing = "Nepal is a landlocked country in South Asia [1].\nIts capital is Kathmandu [2].\n"
    with Store.open(demo_store, read_only=True) as store:
        docs = LangChainRetriever(store, llm=ScriptedLLM([sketch, writing])).invoke("Describe Nepal.")
        nodes = LlamaIndexRetriever(store, llm=ScriptedLLM([sketch, writing])).retrieve("Describe Nepal.")
    assert len(docs) == 1 and docs[0].page_content.startswith("Nepal is a landlocked country in South Asia [1].")
    meta = docs[0].metadata
    assert meta["kind"] == "open_answer" and meta["method"] == "open" and meta["question"] == "Describe Nepal."
    cited = {n for s in meta["sentences"] for n in s["facts"]}
    assert cited == {f["n"] for f in meta["facts"]} and all(f["evidence"] for f in meta["facts"])
    assert [(n.node.id_, n.node.text, n.node.metadata) for n in nodes] == [(docs[0].id, docs[0].page_content, meta)]


def test_a_refusal_without_facts_gives_no_records(demo_store):
    question = "Which countries does Gandalf cover?"
    llm = ScriptedLLM(["SELECT DISTINCT ?x WHERE { [ENT: Gandalf] [REL: country] ?x }"] * 2)
    source = KgstoreSource(demo_store, method="pgmr", llm=llm, options={"read_answers": False})
    try:
        answer = source.answer(question)
        assert answer.refused and answer.refusal.reason == "not_in_store" and not answer.evidence
        assert source.records(question) == []
    finally:
        source.close()


def test_bad_options_and_a_missing_framework_are_sentences(demo_store):
    with pytest.raises(ValueError, match="unknown mode 'graph'; choose one of: ask, search"):
        KgstoreSource(demo_store, mode="graph")
    code = ("import sys\nsys.modules['langchain_core'] = None\nsys.modules['llama_index'] = None\n"
            "for name in ('langchain', 'llamaindex'):\n"
            "    try:\n        __import__('kgstore.integrations.' + name)\n"
            "    except ModuleNotFoundError as exc:\n        print(exc)\n"
            "import kgstore.integrations\nprint(any(m.startswith(('langchain', 'llama_index')) and sys.modules[m]\n"
            "          for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines() == [
        "kgstore.integrations.langchain needs the langchain extra (langchain_core is missing): "
        "pip install 'kgstore[langchain]'",
        "kgstore.integrations.llamaindex needs the llamaindex extra (llama_index is missing): "
        "pip install 'kgstore[llamaindex]'",
        "False",
    ], out.stderr


def test_public_surface():
    import kgstore.integrations

    for name in kgstore.integrations.__all__:
        assert getattr(kgstore.integrations, name) is not None

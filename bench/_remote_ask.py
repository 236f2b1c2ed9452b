"""``ask`` p50 on each backend for bench/remote.py: pgmr on MetaQA 1-hop dev questions over
a MetaQA slice held by the local store, Oxigraph server and Virtuoso (tests/metaqa_slice.py,
the data of tests/test_endpoint_ask.py).

The real model answers each question on the local store, filling one LLM cache; then each
endpoint store answers them once untimed (Virtuoso orders unordered rows its own way, so
the facts sampled for the model to read can differ: those prompts call the model here,
and are counted). The timed rounds (alternating backend order) then run through the warm
cache on every backend, local included, so the times measure the store side (examples,
resolution, grounding, execution, labels), not the model; model calls in them are
counted too (0 expected), with whether the answers (labels and IRIs) agree everywhere.
"""
from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path

PGMR_KINDS = ["entities", "uris", "relations"]  # qa/methods/pgmr PGMRMethod.index_kinds


def ask_latency(work: Path, engines: list[str], shared_data: Path, *, questions: int, rounds: int,
                cache_from: Path | None = None) -> dict:
    """``cache_from``: an LLM cache to start from (a copy), e.g. the one tests/test_endpoint_ask.py
    filled on the same questions, so that the local run need not wait for the model."""
    from click.testing import CliRunner
    from indexer import build_index
    from metaqa_slice import METAQA_GRAPH, slice_ntriples, slice_questions, slice_store
    from sparql_servers import OxigraphServer, VirtuosoServer

    import kgstore
    from kgstore import Store
    from kgstore.cli import main as cli

    metaqa = shared_data / "qa" / "metaqa"
    base = work / "ask"
    base.mkdir(parents=True, exist_ok=True)
    local = slice_store(metaqa / "kb_partial.txt", base)
    data = slice_ntriples(local, base / "metaqa.nt")
    stores, servers = {"local": local}, []
    try:
        for name in engines:
            make = OxigraphServer if name == "oxigraph" else VirtuosoServer
            server = make.create(base / name, [data], METAQA_GRAPH)
            servers.append(server)
            path = base / f"over_{name}"
            result = CliRunner().invoke(cli, ["init", str(path), "--endpoint", server.url, "--graph", METAQA_GRAPH])
            assert result.exit_code == 0, result.output
            with Store.open(path) as store:
                kgstore.sync(store)
            stores[name] = path
        for path in stores.values():
            with Store.open(path) as store:
                build_index(store, kinds=PGMR_KINDS)
        asked = slice_questions(metaqa / "1-hop" / "vanilla_qa_dev.txt", base / "slice.txt", questions)
        cache = base / "llm-cache.jsonl"
        if cache_from:
            shutil.copyfile(cache_from, cache)
        return _timed(stores, asked, cache, rounds)
    finally:
        for server in servers:
            server.stop()


def _timed(stores: dict[str, Path], asked: list[str], cache: Path, rounds: int) -> dict:
    from kgstore import Store
    from kgstore.config import StoreConfig
    from qa.llm import CachingLLM, llm_from_config
    from qa.methods import QAContext, make_method

    llm = CachingLLM(llm_from_config(StoreConfig.load(stores["local"]).llm), cache)
    opened = {name: Store.open(path, read_only=True) for name, path in stores.items()}
    try:
        methods = {name: make_method("pgmr", QAContext(store=store, llm=llm)) for name, store in opened.items()}

        def answer(name: str, question: str) -> tuple:
            a = methods[name].answer(question)
            return tuple(sorted(zip(a.answers, a.answer_iris)))

        t, before = time.monotonic(), _lines(cache)
        expected = [answer("local", q) for q in asked]  # the model answers: the cache fills
        fill_s, calls = time.monotonic() - t, {"local": _lines(cache) - before}
        same, names = True, list(methods)
        for name in names[1:]:  # untimed: the index and encoder load, prompts of their own reach the model
            before = _lines(cache)
            same = [answer(name, q) for q in asked] == expected and same
            calls[name] = _lines(cache) - before
        filled = _lines(cache)
        times: dict[str, list[float]] = {name: [] for name in methods}
        for round_no in range(rounds):
            for name in names if round_no % 2 == 0 else names[::-1]:
                for question, want in zip(asked, expected):
                    t = time.perf_counter()
                    got = answer(name, question)
                    times[name].append(time.perf_counter() - t)
                    same = same and got == want
        return {"questions": len(asked), "rounds": rounds, "local_fill_s": round(fill_s, 1),
                "model_calls_untimed": calls, "model_calls_timed": _lines(cache) - filled,
                "answered": sum(1 for a in expected if a), "same_answers": same,
                "p50_ms": {name: round(statistics.median(v) * 1000, 1) for name, v in times.items()}}
    finally:
        for store in opened.values():
            store.close()


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0

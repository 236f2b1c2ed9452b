"""Vector backends: a store indexed on disk with usearch (quantized, memory-mapped) answers
link, search and ask as the in-RAM hnswlib index does, on the demo store and a MetaQA
slice; incremental builds, kill-resume, the recorded choice and a missing package."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import kgstore
from indexer import Encoder, Index, build_index
from indexer import _build
from indexer._backends import VectorBackend, choose_backend, graph_degree, search_breadth, vector_path
from indexer._backends_usearch import UsearchFile
from indexer._hnsw import VectorFile
from kgstore import Store, VectorIndexError
from kgstore.config import IndexConfig, StoreConfig
from qa import QAContext, ScriptedLLM, make_method
from test_index_fixtures import metaqa_lines, write_lines
from test_qa_methods import ANSWER, CYPHER, QUESTION, VERIFIED

pytest.importorskip("usearch")

METAQA_HEAD = 2000  # first lines of the MetaQA KB: ~1,600 entities, ~2,000 triples
METAQA_QUESTIONS = [
    "who directed Kismet", "what films did Ronald Colman act in", "when was The Machinist released",
    "which movies are about boxing", "what genre is Kismet", "who wrote the screenplay of a film noir",
    "movies starring Christian Bale", "what language is Spirited Away in", "a comedy from 1934",
    "films directed by Michael Curtiz",
]


class CachedEncoder(Encoder):
    """The real model, each text embedded once per session: the stores compared here
    differ in their vector backend only, so their vectors need not be computed twice."""

    _vectors: dict[str, np.ndarray] = {}

    def embed(self, texts, **kwargs):
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts")
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            self._vectors.update(zip(new, super().embed(new, **kwargs)))
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._vectors[t] for t in texts]).astype(np.float32)


ENCODER = CachedEncoder()


def new_store(path: Path, backend: str, **index) -> Path:
    Store.init(path).close()
    config = StoreConfig.load(path)
    config.index.backend = backend
    for key, value in index.items():
        setattr(config.index, key, value)
    config.save(path)
    return path


def set_backend(path: Path, backend: str) -> None:
    config = StoreConfig.load(path)
    config.index.backend = backend
    config.save(path)


def backends_of(path: Path) -> dict[str, str]:
    with Store.open(path, read_only=True) as store:
        return {k: m["backend"] for k, m in Index.open(store, encoder=ENCODER).info().items()}


def metaqa_head(shared_data: Path, path: Path, lines: int = METAQA_HEAD) -> Path:
    return write_lines(path, metaqa_lines(shared_data)[:lines])


_stores: dict[tuple, Path] = {}


def indexed(tmp_path_factory, source: str, backend: str, shared_data=None, sample_dir=None) -> Path:
    """One store per (data, backend) for the module: ingested, every kind indexed.
    ``backend``: hnswlib, usearch (the default ``ondisk_dtype``), usearch-f16, usearch-i8."""
    key = (source, backend)
    if key not in _stores:
        root = tmp_path_factory.mktemp(f"{source}_{backend}")
        name, _, dtype = backend.partition("-")
        path = new_store(root / "store", name, **({"ondisk_dtype": dtype} if dtype else {}))
        with Store.open(path) as store:
            if source == "demo":
                kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
            else:
                kgstore.ingest(store, "tsv", metaqa_head(shared_data, root / "kb.txt"))
            build_index(store, encoder=ENCODER)
        _stores[key] = path
    return _stores[key]


@pytest.fixture(scope="module")
def demo_pair(sample_dir, tmp_path_factory):
    return {b: indexed(tmp_path_factory, "demo", b, sample_dir=sample_dir) for b in ("hnswlib", "usearch")}


@pytest.fixture(scope="module")
def metaqa_stores(shared_data, tmp_path_factory):
    return {b: indexed(tmp_path_factory, "metaqa", b, shared_data=shared_data)
            for b in ("hnswlib", "usearch-f16", "usearch-i8")}


def answers(path: Path, mentions, questions):
    """What link, link_question and search say, as comparable values."""
    with Store.open(path, read_only=True) as store:
        index = Index.open(store, encoder=ENCODER)
        linked = {m: {c.iri: c.score for c in index.link(m, k=5)} for m in mentions}
        in_questions = {q: [(c.iri, c.match) for c in index.link_question(q, k=3)] for q in questions}
        searched = {q: {h.text: h.score for h in index.search("triples", q, k=10)} for q in questions}
        memory_mapped = {k: index._file(k).memory_mapped for k in index.kinds}
    return linked, in_questions, searched, memory_mapped


def assert_close(disk: dict, ram: dict, tolerance: float, what: str) -> None:
    """Scores of what both found agree (quantization moves a cosine a little)."""
    common = sorted(set(disk) & set(ram))
    assert np.allclose([disk[x] for x in common], [ram[x] for x in common], atol=tolerance), what


def assert_same_answers(ram_store, disk_store, mentions, questions, *, tolerance: float):
    """The same best candidate and best triple, mostly the same rest, and the same scores
    within ``tolerance``. The rest can differ a little whatever the vectors: two HNSW
    graphs (built on all cores, so not even the same graph twice) each miss a different
    few weak neighbours at ef 64, e.g. Comedy (a popular genre) among the candidates for
    "Hustle". Quantization shows in the scores: f16 moves a cosine by under 0.002, i8 by up
    to ~0.02, enough to reorder weaker vector neighbours and to change the best of them
    when no name in a question matched (Spirited Away is not in the MetaQA slice)."""
    ram = answers(ram_store, mentions, questions)
    disk = answers(disk_store, mentions, questions)
    assert set(ram[3].values()) == {False} and set(disk[3].values()) == {True}
    for m in mentions:
        assert list(disk[0][m])[:1] == list(ram[0][m])[:1], m
        assert len(set(disk[0][m]) & set(ram[0][m])) >= len(ram[0][m]) - 1, m
        assert_close(disk[0][m], ram[0][m], tolerance, m)
    for q in questions:
        if ram[1][q] and ram[1][q][0][1] != "vector":  # a name in the question matched
            assert disk[1][q][:1] == ram[1][q][:1], q
        assert max(disk[2][q], key=disk[2][q].get) == max(ram[2][q], key=ram[2][q].get), q  # the best triple
        assert len(set(disk[2][q]) & set(ram[2][q])) >= 8, q
        assert_close(disk[2][q], ram[2][q], tolerance, q)


# -- the choice ------------------------------------------------------------------------------
def test_auto_picks_usearch_above_the_threshold_and_names_are_checked():
    cfg = IndexConfig()
    assert cfg.backend == "auto" and cfg.ondisk_above == 1_000_000
    assert choose_backend(cfg, 1_000_000) == "hnswlib" and choose_backend(cfg, 1_000_001) == "usearch"
    assert choose_backend(IndexConfig(backend="hnswlib"), 10**9) == "hnswlib"
    assert choose_backend(IndexConfig(backend="usearch"), 3) == "usearch"
    with pytest.raises(VectorIndexError, match="unknown vector backend 'faiss'"):
        choose_backend(IndexConfig(backend="faiss"), 3)
    with pytest.raises(VectorIndexError, match="unknown \\[index\\] ondisk_dtype 'f8'"):
        UsearchFile.create(Path("unused.usearch"), 8, dtype="f8", M=16, ef_construction=100, ef=64)


@pytest.mark.parametrize("backend", ["hnswlib", "usearch"])
def test_a_large_kind_gets_the_larger_graph_and_search(shared_data, tmp_path, backend):
    # large_above lowered so that 300 MetaQA lines make the triples kind large and leave
    # the relations kind small; the defaults are M 16 / ef 64 up to 100,000 vectors
    path = new_store(tmp_path / "store", backend, large_above=100, M_large=24, ef_large=120)
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", metaqa_head(shared_data, tmp_path / "kb.txt", 300))
        build_index(store, kinds=["relations", "triples"], encoder=ENCODER)
        with Index.open(store, encoder=ENCODER) as index:
            info = index.info()
            assert info["triples"]["items"] > 100 >= info["relations"]["items"]
            assert (info["triples"]["M"], info["relations"]["M"]) == (24, 16)
            assert index.search("triples", "Kismet directed by", k=3)  # opens the file
            assert index.search("relations", "directed by", k=1)
            assert (index._files["triples"].ef, index._files["relations"].ef) == (120, 64)
    assert graph_degree(IndexConfig(), 100_000) == 16 and graph_degree(IndexConfig(), 100_001) == 32
    assert search_breadth(IndexConfig(), None) == 64 and search_breadth(IndexConfig(), 100_001) == 256


def test_usearch_file_adds_deletes_saves_and_is_viewed_read_only(tmp_path):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    path = tmp_path / "x.usearch"
    vf = UsearchFile.create(path, 16, dtype="i8", M=16, ef_construction=100, ef=64)
    assert isinstance(vf, VectorBackend) and vf.name == "usearch"
    assert isinstance(VectorFile.create(tmp_path / "x.hnsw", 16, M=16, ef_construction=100, ef=64), VectorBackend)
    vf.add(vectors[:200], np.arange(200))
    assert vf.mark_deleted([5, 199, 5]) == 2  # 199 is the highest label: hidden, not removed
    vf.save()
    assert not path.with_name("x.usearch.tmp").exists()

    viewed = UsearchFile.load(path, 16, ef=64)
    assert viewed.memory_mapped and viewed.count == 200  # the next build resumes at label 200
    labels, sims = viewed.search(vectors[:3], 5)
    assert labels[:, 0].tolist() == [0, 1, 2] and np.allclose(sims[:, 0], 1.0, atol=0.01)
    assert 5 not in viewed.search(vectors[5], 10)[0][0]
    with pytest.raises(VectorIndexError, match="memory-mapped"):
        viewed.add(vectors[200:], np.arange(200, 300))  # usearch itself would crash the process
    with pytest.raises(VectorIndexError, match="memory-mapped"):
        viewed.mark_deleted([1])
    with pytest.raises(RuntimeError):
        viewed.vectors([5])  # removed: the caller falls back as for a label hnswlib lacks
    assert np.allclose(viewed.vectors([7])[0] @ vectors[7], 1.0, atol=0.01)

    grown = UsearchFile.load(path, 16, ef=64, writable=True)
    grown.mark_deleted([199])  # a resumed build marks the dead again
    grown.add(vectors[200:], np.arange(200, 300))
    grown.save()
    again = UsearchFile.load(path, 16, ef=64)
    assert again.count == 300
    assert 199 not in again.search(vectors[199], 10)[0][0]  # removed once a higher label came
    assert again.search(vectors[250], 1)[0][0, 0] == 250
    with pytest.raises(VectorIndexError, match="holds 16-dimensional vectors; the encoder makes 8"):
        UsearchFile.load(path, 8, ef=64)


# -- same answers ---------------------------------------------------------------------------
def test_demo_store_answers_the_same_from_disk(demo_pair):
    assert set(backends_of(demo_pair["usearch"]).values()) == {"usearch"}
    assert set(backends_of(demo_pair["hnswlib"]).values()) == {"hnswlib"}
    assert (demo_pair["usearch"] / "index" / "triples.usearch").is_file()
    assert not (demo_pair["usearch"] / "index" / "triples.hnsw").exists()
    mentions = ["Andes", "andes", "Himalaya", "Mount Everest", "Peru", "Aconcagua", "Himalayas mountains"]
    questions = [QUESTION, "What is the highest point of the Andes?", "Which countries does the Himalaya cover?",
                 "Where is Mount Everest?"]
    assert_same_answers(demo_pair["hnswlib"], demo_pair["usearch"], mentions, questions, tolerance=0.002)


def test_demo_store_asks_the_same_from_disk(demo_pair):
    results = {}
    for backend, path in demo_pair.items():
        with Store.open(path, read_only=True) as store:
            context = QAContext(store, ScriptedLLM([CYPHER, VERIFIED, ANSWER]), Index.open(store, encoder=ENCODER))
            result = make_method("pseudo-graph", context).answer(QUESTION)
        results[backend] = (result.answers, result.answer_iris, [(e.s, e.p, e.o) for e in result.evidence])
    assert results["usearch"][0] == ["Andes"]
    assert results["usearch"] == results["hnswlib"]


@pytest.mark.parametrize("dtype", ["f16", "i8"])
def test_metaqa_slice_answers_the_same_from_disk(metaqa_stores, shared_data, dtype):
    names = list(dict.fromkeys(line.split("|")[0] for line in metaqa_lines(shared_data)[:METAQA_HEAD]))
    mentions = names[::40] + ["kismet", "Ronald Colman", "christian bale", "Michael Curtis"]
    assert_same_answers(metaqa_stores["hnswlib"], metaqa_stores[f"usearch-{dtype}"], mentions, METAQA_QUESTIONS,
                        tolerance=0.002 if dtype == "f16" else 0.02)


# -- builds ---------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["hnswlib", "usearch"])
def test_incremental_add_keeps_the_recorded_backend(shared_data, tmp_path, backend):
    lines = metaqa_lines(shared_data)
    path = new_store(tmp_path / "store", backend)
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "a.txt", lines[:300]))
        first = build_index(store, kinds=["entities", "triples"], encoder=ENCODER)
    # a config that now says otherwise does not switch a built kind; a rebuild would
    set_backend(path, "usearch" if backend == "hnswlib" else "hnswlib")
    extra = [line for line in lines[300:400] if line not in lines[:300]]
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "b.txt", lines[300:400]))
        second = build_index(store, kinds=["entities", "triples"], encoder=ENCODER)
        index = Index.open(store, encoder=ENCODER)
        newest = extra[-1].split("|")
        hits = index.search("triples", " ".join(newest), k=3)
        linked = index.link(newest[0], k=1)
    assert second.kinds["triples"].added == len(set(extra)) and second.kinds["triples"].embedded <= len(set(extra))
    assert second.kinds["triples"].items == first.kinds["triples"].items + len(set(extra))
    assert any(h.label == newest[0] for h in hits) and linked[0].label == newest[0]
    assert backends_of(path) == {"entities": backend, "triples": backend}
    assert vector_path(path / "index", "triples", backend).is_file()

    with Store.open(path) as store:
        build_index(store, kinds=["triples"], rebuild=True, encoder=ENCODER)
    assert backends_of(path)["triples"] != backend
    assert not vector_path(path / "index", "triples", backend).exists()


def killed_build_resumes(path, backend: str, shared_data, tmp_path, monkeypatch) -> int:
    """Index a 1,000-line MetaQA head into ``path`` with a checkpoint after every chunk of
    100, killed during the fourth chunk; the next build embeds only what was not saved and
    finds what it should. The number of triples indexed (the backend's own checks follow)."""
    monkeypatch.setattr(_build, "SAVE_EVERY_S", 0.0)  # a checkpoint after every chunk
    monkeypatch.setattr(_build, "CHUNK_ROWS", 100)
    seen = []

    def killed_after_three_chunks(progress):
        if progress.kind == "triples" and progress.phase == "embed":
            seen.append(progress.done)
            if len(seen) == 4:
                raise KeyboardInterrupt

    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", metaqa_head(shared_data, tmp_path / "kb.txt", 1000))
        with pytest.raises(KeyboardInterrupt):
            build_index(store, kinds=["triples"], encoder=ENCODER, progress=killed_after_three_chunks)
        with store.catalog.connect() as con:
            saved = con.execute("SELECT saved_max_label + 1, backend FROM index_manifest "
                                "WHERE kind = 'triples'").fetchone()
        assert saved == (seen[2], backend)  # the fourth chunk was embedded but not saved
        resumed = build_index(store, kinds=["triples"], encoder=ENCODER)
        total = resumed.kinds["triples"].items
        assert resumed.kinds["triples"].added == total - seen[2]
        with Index.open(store, encoder=ENCODER) as index:
            hits = index.search("triples", "Paragraph 175 directed by Jeffrey Friedman", k=1)
    assert total == len(set(metaqa_lines(shared_data)[:1000]))
    assert hits[0].text == "Paragraph 175 | directed by | Jeffrey Friedman"
    return total


def test_a_killed_usearch_build_resumes_without_re_embedding(shared_data, tmp_path, monkeypatch):
    path = new_store(tmp_path / "store", "usearch", batch_size=6)  # chunks of 100 rows
    killed_build_resumes(path, "usearch", shared_data, tmp_path, monkeypatch)


def test_a_missing_backend_package_says_what_to_install(shared_data, tmp_path, monkeypatch):
    path = new_store(tmp_path / "store", "usearch")
    with Store.open(path) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "a.txt", metaqa_lines(shared_data)[:50]))
        build_index(store, kinds=["entities"], encoder=ENCODER)
    monkeypatch.setitem(sys.modules, "usearch", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    message = r"the usearch vector backend needs the 'usearch' package.*pip install usearch"
    with Store.open(path, read_only=True) as store:
        with pytest.raises(VectorIndexError, match=message):
            Index.open(store, encoder=ENCODER).search("entities", "Kismet")
    other = new_store(tmp_path / "other", "usearch")
    with Store.open(other) as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "a.txt", metaqa_lines(shared_data)[:50]))
        with pytest.raises(VectorIndexError, match=message):
            build_index(store, kinds=["entities"], encoder=ENCODER)

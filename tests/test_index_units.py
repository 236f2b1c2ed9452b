"""Pieces of the index: verbalizers, names, the hnswlib file, mediators, the public surface."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import indexer
from indexer import Index, build_index, name_key, relation_phrases
from indexer._hnsw import VectorFile
from indexer._verbalize import entity_text, fallback_label, mediated_triple_text, relation_text, triple_text, uri_text
import kgstore
from kgstore import Store
from kgstore.terms import FB, SKOLEM
from test_index_fixtures import freebase_film_slice


def test_public_surface():
    assert set(indexer.__all__) >= {"Index", "SearchHit", "Candidate", "build_index", "update_index", "Encoder",
                                    "KINDS", "entity_text", "triple_text", "relation_phrases"}
    for name in indexer.__all__:
        assert getattr(indexer, name) is not None
    assert indexer.KINDS == ("entities", "relations", "uris", "statements", "triples")


def test_verbalizers():
    assert entity_text("Douglas Adams", "English writer") == "Douglas Adams (English writer)"
    assert entity_text(" Kismet ", None) == "Kismet"
    assert relation_text("spouse", "the subject has the object as their spouse") == \
        "spouse: the subject has the object as their spouse"
    assert uri_text("Justin Bieber", "Canadian singer") == "Justin Bieber, Canadian singer"
    assert triple_text("Kismet", "directed by", "William Dieterle") == "Kismet | directed by | William Dieterle"
    assert mediated_triple_text("Larry Fine", "film performance actor", "film performance film", "Pals") == \
        "Larry Fine | film performance actor / film performance film | Pals"
    assert fallback_label(FB + "film.performance.actor") == "film performance actor"
    assert fallback_label("http://www.wikidata.org/entity/Q42") == "Q42"


@pytest.mark.parametrize("label, forward, backward", [
    ("spouse", "?e2 is the spouse of ?e1", "?e1 has spouse ?e2"),
    ("directed by", "?e1 directed by ?e2", "?e2 directed ?e1"),
    ("written by", "?e1 written by ?e2", "?e2 wrote ?e1"),
    ("has genre", "?e1 has genre ?e2", "?e2 is the genre of ?e1"),
    ("in language", "?e1 in language ?e2", "?e2 is the language of ?e1"),
    ("release year", "?e2 is the release year of ?e1", "?e1 has release year ?e2"),
    ("country of citizenship", "?e2 is the country of citizenship of ?e1", "?e1 has country of citizenship ?e2"),
])
def test_relation_phrases(label, forward, backward):
    assert relation_phrases(label) == (forward, backward)


def test_inverse_label_phrases_the_backward_memory():
    assert relation_phrases("father", "child") == ("?e2 is the father of ?e1", "?e1 is the child of ?e2")


def test_name_keys():
    assert name_key("Ocean's Eleven") == "ocean s eleven"
    assert name_key("Amélie") == "amelie"
    assert name_key("ludwig_ii_of_bavaria") == name_key("Ludwig II of Bavaria") == "ludwig ii of bavaria"
    assert name_key("  $ ") == "$"
    assert name_key("Daddy-Long-Legs") == "daddy long legs"


def test_vector_file_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vf = VectorFile.create(tmp_path / "x.hnsw", 8, M=8, ef_construction=50, ef=20, capacity=16)
    vf.add(vectors, np.arange(50))  # grows past the initial capacity
    vf.mark_deleted([3])
    vf.save()
    loaded = VectorFile.load(tmp_path / "x.hnsw", 8, ef=20)
    labels, scores = loaded.search(vectors[[3, 7]], 1)
    assert labels[1, 0] == 7 and scores[1, 0] == pytest.approx(1.0, abs=1e-5)
    assert labels[0, 0] != 3  # deleted
    assert np.allclose(loaded.vectors([7])[0], vectors[7], atol=1e-6)
    assert not (tmp_path / "x.hnsw.tmp").exists()


def test_help_does_not_import_torch():
    code = ("import sys; from click.testing import CliRunner; from kgstore.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0; "
            "r = CliRunner().invoke(main, ['index', '--help']); assert r.exit_code == 0, r.output; "
            "import indexer; "
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'hnswlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_mediator_nodes_read_as_two_hop_statements(shared_data, tmp_path):
    path = freebase_film_slice(shared_data, "/en/christmas_with_the_kranks", tmp_path / "kranks.nq")
    with Store.init(tmp_path / "store") as store:
        loaded = kgstore.ingest(store, "freebase", path)
        assert loaded.counts["mediators"] == 7
        summary = build_index(store, kinds=["triples", "statements"])
        index = Index.open(store)
        with store.catalog.connect() as con:
            texts = {r[0] for r in con.execute("SELECT text FROM index_items WHERE kind = 'triples'").fetchall()}
            halves = con.execute("SELECT count(*) FROM statements st JOIN entities m ON m.iri = st.s "
                                 "WHERE m.is_mediator").fetchone()[0]
        assert halves == 8  # 7 performances: 7 actors, 1 character
        # one text per (performance, actor/character) pair, plus the film's two direct facts
        assert len(texts) == summary.kinds["triples"].items == halves + 2
        assert "Christmas with the Kranks | film film directed by | Joe Roth" in texts
        assert "Christmas with the Kranks | type object type | film film" in texts
        assert "Christmas with the Kranks | film film starring / film performance actor | Tim Allen" in texts
        assert "Christmas with the Kranks | film film starring / film performance character | Luther Krank" in texts
        assert not any(" | film film starring | " in t for t in texts)  # no raw halves through the mediator
        hit = index.search("triples", "Tim Allen starred in Christmas with the Kranks", k=1)[0]
        assert hit.extra["o_label"] == "Tim Allen" and hit.extra["via"].startswith(SKOLEM)
        assert hit.extra["p"] == [FB + "film.film.starring", FB + "film.performance.actor"]

        memories = {h.text: h.pattern for h in index.search("statements", "x", k=20)}
        starring = "?e1 fb:film.film.starring ?m . ?m fb:film.performance"
        assert memories == {
            "?e1 film film directed by ?e2": "?e1 fb:film.film.directed_by ?e2",
            "?e2 directed ?e1": "?e1 fb:film.film.directed_by ?e2",
            "?e2 is the type object type of ?e1": "?e1 fb:type.object.type ?e2",
            "?e1 has type object type ?e2": "?e1 fb:type.object.type ?e2",
            "?e2 is the film performance actor of the film film starring of ?e1": f"{starring}.actor ?e2",
            "?e2 is the film performance character of the film film starring of ?e1": f"{starring}.character ?e2",
            "?e1 has film film starring with film performance actor ?e2 and film performance character ?e3":
                f"{starring}.actor ?e2 . ?m fb:film.performance.character ?e3",
        }


@pytest.mark.parametrize("one, other", [("zone", "zones"), ("movie", "movies"), ("country", "countries"),
                                        ("director", "directed"), ("writer", "written"), ("play", "played"),
                                        ("release", "released"), ("genre", "genres")])
def test_a_word_and_its_plural_or_other_form_share_a_stem(one, other):
    from indexer._verbalize import stem

    # "time zone" in a question is the relation "time zones", not an entity read by meaning
    assert stem(one) == stem(other)
    assert stem("zone") != stem("zoo") and stem("play") != stem("plan")

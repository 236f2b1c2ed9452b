"""Entity linking: exact, lower-cased and alias mentions; mentions found in whole questions."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import kgstore
from indexer import Candidate, Index, build_index
from kgstore import Store
from kgstore.cli import main
from kgstore.terms import KG, WD
from test_index_fixtures import metaqa_store, wikidata_fixture_dump  # noqa: F401


def test_exact_mention(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        candidates = Index.open(store).link("Kismet")
    assert isinstance(candidates[0], Candidate)
    assert candidates[0].iri == KG + "Kismet" and candidates[0].match == "exact"
    assert candidates[0].similarity == 1.0
    assert [c.score for c in candidates] == sorted((c.score for c in candidates), reverse=True)


def test_lower_cased_mention(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        top = Index.open(store).link("kismet")[0]
    assert top.iri == KG + "Kismet" and top.match == "label" and top.mention == "kismet"


def test_case_tells_namesakes_apart(metaqa_store):
    # MetaQA has the director "William Dieterle" and the tag "william dieterle"
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        assert index.link("William Dieterle")[0].iri == KG + "William_Dieterle"
        assert index.link("william dieterle")[0].iri == KG + "william_dieterle"
        assert {c.iri for c in index.link("WILLIAM DIETERLE")[:2]} == {KG + "William_Dieterle",
                                                                        KG + "william_dieterle"}


def test_unknown_mention_falls_back_to_vector_neighbours(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        candidates = index.link("Kismett", k=5)
        assert candidates and all(c.match == "vector" for c in candidates)
        assert candidates[0].iri == KG + "Kismet"
        assert index.link("Kismett", vectors=False) == []


def test_alias_mentions(shared_data, tmp_path):
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "wikidata-json", wikidata_fixture_dump(shared_data))
        build_index(store, kinds=["entities"])
        index = Index.open(store)
        douglas = index.link("Douglas Noel Adams")[0]
        assert (douglas.iri, douglas.label, douglas.match) == (WD + "Q42", "Douglas Adams", "alias")
        assert douglas.description == "English writer and humorist"
        assert index.link("cosmos")[0].iri == WD + "Q1"
        assert index.link("the universe")[0].iri == WD + "Q1"  # alias "The Universe", lower-cased
        assert index.link("Douglas Noël Adams")[0].iri == WD + "Q42"
        hits = index.search("entities", "Douglas Noël Adams", k=2)
        # the model is uncased and accent-blind: both aliases embed alike
        assert {(h.iri, h.extra["alias"], h.text) for h in hits} == {
            (WD + "Q42", "Douglas Noël Adams", "Douglas Noël Adams (English writer and humorist)"),
            (WD + "Q42", "Douglas Noel Adams", "Douglas Noel Adams (English writer and humorist)")}
        found = index.link_question("Where was Douglas Noel Adams born?")[0]
        assert found.iri == WD + "Q42" and found.span == (10, 28)


def test_link_question_skips_relation_words(metaqa_store):
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        top = index.link_question("who directed Kismet")[0]
        assert (top.iri, top.mention, top.span) == (KG + "Kismet", "Kismet", (13, 19))
        # "William Dieterle" (the director) over the lower-case tag of the same name
        assert index.link_question("what films did William Dieterle direct")[0].iri == KG + "William_Dieterle"


def test_link_question_on_metaqa_dev_questions(shared_data, metaqa_store):
    """Every 1-hop dev question whose topic entity is in the slice, brackets removed."""
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        with store.catalog.connect() as con:
            labels = {r[0] for r in con.execute("SELECT label FROM entities WHERE label IS NOT NULL").fetchall()}
        questions = []
        for line in (shared_data / "qa" / "metaqa" / "1-hop" / "vanilla_qa_dev.txt").open(encoding="utf-8"):
            question = line.split("\t")[0]
            gold = re.search(r"\[(.+?)\]", question).group(1)
            if gold in labels:
                questions.append((question.replace("[", "").replace("]", ""), gold))
        top1 = sum(index.link_question(q, k=5)[0].label == gold for q, gold in questions)
    assert len(questions) == 34
    assert top1 == 34


def test_cli_link(metaqa_store):
    runner = CliRunner()
    result = runner.invoke(main, ["link", str(metaqa_store), "who directed [Kismet]", "--format", "json"])
    assert result.exit_code == 0, result.output
    candidates = json.loads(result.output)
    assert candidates[0]["iri"] == KG + "Kismet" and candidates[0]["label"] == "Kismet"
    assert candidates[0]["score"] >= candidates[-1]["score"]
    result = runner.invoke(main, ["link", str(metaqa_store), "who directed kismet", "-k", "2"])
    assert result.exit_code == 0 and "kg:Kismet" in result.output
    result = runner.invoke(main, ["link", str(metaqa_store), "[Kismet] or [Ronald Colman]", "-k", "1",
                                  "--no-vectors", "--format", "json"])
    assert [c["iri"] for c in json.loads(result.output)] == [KG + "Kismet", KG + "Ronald_Colman"]


HARD_QUESTIONS = [  # real dev questions whose topic is a title of common words or punctuation
    ("who acted in [$]", "$"),
    ("who stars in [Her]", "Her"),
    ("what is the genre for the film [May]", "May"),
    ("[Mud] is a film written by this person", "Mud"),
    ("what was the release date of the movie [+1]", "+1"),
    ("who directed films for the writer of [Another Year]", "Another Year"),
    ("who wrote films that share directors with the film [Can-Can]", "Can-Can"),
    ("what are the genres of the movies whose writers also wrote [You and Me]", "You and Me"),
    ("who are the directors of movies whose writers also wrote [$]", "$"),
]


def test_link_question_on_the_whole_metaqa_kb_by_names(shared_data, tmp_path):
    """All 43k MetaQA entities, names only (no vectors): hard questions and a sample of the
    1-hop dev set, brackets removed."""
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "tsv", shared_data / "qa" / "metaqa" / "kb_partial.txt")
        build_index(store, kinds=[])  # no vectors: only the name table
        index = Index.open(store)
        assert index.kinds == []
        with index.session():
            for question, gold in HARD_QUESTIONS:
                top = index.link_question(question.replace("[", "").replace("]", ""))[0]
                assert top.label == gold, question
            lines = (shared_data / "qa" / "metaqa" / "1-hop" / "vanilla_qa_dev.txt").read_text().splitlines()[:500]
            golds = [re.search(r"\[(.+?)\]", line).group(1) for line in lines]
            found = [index.link_question(re.sub(r"[\[\]]", "", line.split("\t")[0]))[:1] for line in lines]
            correct = sum(bool(f) and f[0].label == g for f, g in zip(found, golds))
            with store.catalog.connect() as con:
                in_kb = sum(bool(con.execute("SELECT 1 FROM entities WHERE label = ?", [g]).fetchone()) for g in golds)
    assert (in_kb, correct) == (496, 496)


def test_search_about_scores_only_the_named_entities_triples(metaqa_store):
    # MetaQA has the director "William Dieterle" and the tag "william dieterle"
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        director, tag = KG + "William_Dieterle", KG + "william_dieterle"
        about_director, about_both, nobody = index.search_about(
            "triples", ["William Dieterle | directed by"] * 3, [[director], [director, tag], []], k=50)
        assert all(director in (h.extra["s"], h.extra["o"]) for h in about_director)
        facts = list(store.query(f"SELECT * WHERE {{ {{ <{director}> ?p ?o }} UNION {{ ?s ?p <{director}> }} "
                                 "FILTER(?p != rdfs:label) }"))
        assert 0 < len(about_director) == len(facts)
        scores = [h.score for h in about_director]
        assert scores == sorted(scores, reverse=True)
        # the best is scored as a whole-index search scores the same triple
        top = about_director[0]
        again = [h for h in index.search("triples", "William Dieterle | directed by", 200) if h.text == top.text]
        assert again and abs(again[0].score - top.score) < 1e-4
        assert {h.extra["o"] for h in about_both} >= {director, tag}
        assert nobody == []
        with pytest.raises(ValueError):
            index.search_about("entities", ["x"], [[director]])

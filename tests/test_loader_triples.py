"""The plain-triple loader (format ``tsv``) on MetaQA, PathQuestion and WorldCup2014 KBs.

Expected counts were computed independently of kgstore with coreutils, e.g. for MetaQA:
``LC_ALL=C sort -u kb_partial.txt | wc -l`` (unique triples) and
``awk -F'|' '{print $1; print $3}'`` + ``sort -u`` for the distinct names; entity counts are
the distinct subjects plus the distinct objects that are not canonical numerals (those
become xsd literals).
"""
import bz2
import gzip

import pyoxigraph as ox
import pytest

from kgstore import LoadOptions, Store, ingest
from kgstore.terms import KG, KGR, XSD, iri_is_valid
from loaders.triples import (PlainTriplesLoader, guess_separator, guess_underscores_are_spaces,
                             local_name_for, numeric_datatype)


def _rows(store, sparql):
    return [[term.value if term is not None else None for term in row] for row in store.query(sparql)]


def _count(store, sql):
    with store.catalog.connect() as con:
        return con.execute(sql).fetchone()[0]


@pytest.fixture(scope="module")
def metaqa_store(shared_data, tmp_path_factory):
    path = tmp_path_factory.mktemp("metaqa") / "store"
    with Store.init(path) as store:
        summary = ingest(store, "tsv", shared_data / "qa" / "metaqa" / "kb_partial.txt")
    store = Store.open(path, read_only=True)
    yield store, summary
    store.close()


def test_metaqa_loads_with_labels(metaqa_store):
    store, summary = metaqa_store
    assert summary.status == "done"
    assert summary.counts["lines"] == 134741
    assert summary.rejected == 0
    assert store.triple_count() == 128185  # the file repeats 6,556 of its lines
    stats = store.stats()
    assert stats["entities"] == 42617
    assert stats["entities_labelled"] == 42617
    assert stats["relations"] == 9

    rows = _rows(store, "SELECT ?w WHERE { kg:Something_Borrowed kgr:written_by ?w }")
    assert rows == [[KG + "Emily_Giffin"]]
    # years are integer literals, so SPARQL can compare them
    rows = _rows(store, "SELECT ?y WHERE { kg:Something_Borrowed kgr:release_year ?y FILTER(?y > 2010) }")
    assert rows == [["2011"]]

    view = store.entity("Something Borrowed")
    assert view.iri == KG + "Something_Borrowed"
    assert view.label == "Something Borrowed"
    assert view.aliases == []
    facts = {(f.relation_label, f.value_label or f.value) for f in view.facts}
    assert ("written by", "Emily Giffin") in facts
    assert ("directed by", "Luke Greenfield") in facts
    assert ("release year", "2011") in facts
    assert len(facts) == 10  # grep -c '^Something Borrowed|' kb_partial.txt
    assert store.label(KGR + "starred_actors") == "starred actors"


def test_metaqa_number_titled_movie_is_an_entity_and_year_a_literal(metaqa_store):
    store, _ = metaqa_store
    # "2012" the film is a subject (an entity); 2012 the year is a value
    view = store.entity(KG + "2012")
    assert view.label == "2012"
    assert ("directed by", "Roland Emmerich") in {(f.relation_label, f.value_label) for f in view.facts}
    rows = _rows(store, 'SELECT ?y WHERE { kg:2012 kgr:release_year ?y }')
    assert rows == [["2009"]]


def test_pathquestion_underscore_names_get_spaced_labels(shared_data, tmp_path):
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "tsv", shared_data / "qa" / "pathquestion" / "2H-kb.txt")
        assert summary.counts["lines"] == 1211 and summary.rejected == 0
        assert store.triple_count() == 1211
        stats = store.stats()
        assert (stats["entities"], stats["relations"]) == (1056, 13)
        view = store.entity("ludwig_ii_of_bavaria")
        assert view.iri == KG + "ludwig_ii_of_bavaria"
        assert view.label == "ludwig ii of bavaria"
        assert view.aliases == ["ludwig_ii_of_bavaria"]
        assert ("parents", "maximilian ii of bavaria") in {(f.relation_label, f.value_label) for f in view.facts}
        rows = _rows(store, "SELECT ?o WHERE { kg:ludwig_ii_of_bavaria kgr:parents ?o }")
        assert rows == [[KG + "maximilian_ii_of_bavaria"]]


def test_worldcup_numeric_objects_are_literals(shared_data, tmp_path):
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "tsv", shared_data / "qa" / "wc2014" / "WC2014.txt")
        assert summary.counts["lines"] == 6482 and summary.rejected == 0
        assert store.triple_count() == 6482
        stats = store.stats()
        # SOURCES.md counts 1,127 entities including the 39 distinct ages and shirt numbers
        assert (stats["entities"], stats["relations"]) == (1088, 10)
        rows = _rows(store, "SELECT ?age ?n WHERE { kg:Rickie_LAMBERT kgr:is_aged ?age ; kgr:wears_number ?n }")
        assert rows == [["32", "18"]]
        age = next(iter(store.query("SELECT ?a WHERE { kg:Rickie_LAMBERT kgr:is_aged ?a }")))["a"]
        assert age.datatype == ox.NamedNode(XSD + "integer")
        view = store.entity("Esseid_BELKALEM")
        assert (view.label, view.aliases) == ("Esseid BELKALEM", ["Esseid_BELKALEM"])
        assert store.label(KGR + "plays_in_club_inverse") == "plays in club inverse"
        rows = _rows(store, "SELECT ?p WHERE { kg:Watford_FC kgr:plays_in_club_inverse ?p "
                            "FILTER(?p = kg:Esseid_BELKALEM) }")
        assert rows == [[KG + "Esseid_BELKALEM"]]


def test_rejects_bad_lines_with_their_numbers(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(
        b"Alice\tknows\tBob\n"  # 1 ok
        b"\n"  # 2 blank: ignored
        b"Alice\tknows\n"  # 3 two fields
        b"Bob\tknows\tCarol\textra\n"  # 4 four fields
        b"Carol\t\tDave\n"  # 5 empty relation
        b"\tknows\t \n"  # 6 empty subject and object
        b"Dave\tlikes\t\xff\xfe\n"  # 7 not UTF-8
        b"   \n"  # 8 whitespace only: ignored
        b"Carol\tknows\tDave\r\n"  # 9 ok (CRLF)
    )
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "tsv", bad)
        assert summary.status == "done"
        assert summary.rejected == 5
        assert store.triple_count() == 2
        with store.catalog.connect() as con:
            rows = con.execute("SELECT line_no, reason, raw FROM rejected ORDER BY line_no").fetchall()
    assert [r[0] for r in rows] == [3, 4, 5, 6, 7]
    assert rows[0][1] == "expected 3 tab-separated fields (subject, relation, object), found 2"
    assert rows[1][1] == "expected 3 tab-separated fields (subject, relation, object), found 4"
    assert rows[2][1] == "empty relation"
    assert rows[3][1] == "empty subject and object"
    assert rows[4][1].startswith("not valid UTF-8")
    assert rows[0][2] == "Alice\tknows"


def test_max_errors_stops_with_committed_prefix(tmp_path):
    from kgstore import TooManyErrorsError
    bad = tmp_path / "bad.txt"
    bad.write_text("a|r|b\nbroken\nc|r|d\nalso broken\n")
    with Store.init(tmp_path / "s") as store:
        with pytest.raises(TooManyErrorsError):
            ingest(store, "tsv", bad, max_errors=1, options=LoadOptions(batch_size=2))
        assert store.triple_count() == 2  # everything read before the limit is kept


def test_compressed_inputs_and_separator_guess(shared_data, tmp_path):
    text = (shared_data / "qa" / "metaqa" / "kb_partial.txt").read_bytes().splitlines(keepends=True)[:300]
    (tmp_path / "kb.txt.gz").write_bytes(gzip.compress(b"".join(text)))
    (tmp_path / "kb.txt.bz2").write_bytes(bz2.compress(b"".join(text)))
    expected = len(set(text))
    for name in ("kb.txt.gz", "kb.txt.bz2"):
        with Store.init(tmp_path / name.replace(".", "_")) as store:
            summary = ingest(store, "tsv", tmp_path / name)
            assert (summary.counts["lines"], summary.rejected) == (300, 0)
            assert store.triple_count() == expected
            assert store.query("ASK { kg:Something_Borrowed kgr:written_by kg:Emily_Giffin }")


def test_given_separator_and_namespaces_are_used_as_is(tmp_path):
    f = tmp_path / "kb.csv"
    f.write_text("Ann Lee;born in;Paris\nParis;capital of;France\n")
    opts = LoadOptions(separator=";", namespace="http://example.org/e/", relation_namespace="http://example.org/r/")
    with Store.init(tmp_path / "s") as store:
        assert ingest(store, "tsv", f, options=opts).rejected == 0
        assert store.query("ASK { <http://example.org/e/Ann_Lee> <http://example.org/r/born%20in> "
                           "<http://example.org/e/Paris> }")
        assert store.label("http://example.org/r/born%20in") == "born in"
    # without a relation namespace, relations go under the entity namespace
    with Store.init(tmp_path / "s2") as store:
        ingest(store, "tsv", f, options=LoadOptions(separator=";", namespace="http://example.org/e/"))
        assert store.query("ASK { ?s <http://example.org/e/relation/capital%20of> ?o }")


def test_awkward_names_become_valid_distinct_iris(tmp_path):
    names = ["Something Borrowed", "Something_Borrowed", 'Say "Cheese"', "Smith, John", "Peter Franzén",
             "AC/DC", "C#", "100%", "a<b>", "tab\there", "Ludwig II of Bavaria", "Ni\u00f1o", "ÆON Flux?",
             "007", "+5", "1.50", "{curly}|pipe^`grave`\\"]
    for underscores in (False, True):
        iris = [KG + local_name_for(n, underscores_are_spaces=underscores) for n in names]
        assert all(iri_is_valid(i) for i in iris)
        assert len(set(iris)) == len(names)  # never two names on one IRI
    assert local_name_for("Something Borrowed", underscores_are_spaces=False) == "Something_Borrowed"
    assert local_name_for("Something_Borrowed", underscores_are_spaces=False) == "Something%5FBorrowed"
    assert local_name_for("Esseid_BELKALEM", underscores_are_spaces=True) == "Esseid_BELKALEM"
    assert local_name_for("Peter Franzén", underscores_are_spaces=False) == "Peter_Franzén"
    assert local_name_for('Say "Cheese"', underscores_are_spaces=False) == "Say_%22Cheese%22"

    # and they load: a '|' file of awkward names round-trips labels through the store
    f = tmp_path / "kb.txt"
    f.write_text("".join(f"{n.replace(chr(9), ' ')}|related_to|Something Borrowed\n"
                         for n in names if "|" not in n), encoding="utf-8")
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "tsv", f)
        assert summary.rejected == 0
        with store.catalog.connect() as con:
            labels = {r[0] for r in con.execute("SELECT label FROM entities").fetchall()}
    assert 'Say "Cheese"' in labels and "Peter Franzén" in labels and "AC/DC" in labels and "007" in labels
    assert "+5" in labels and "1.50" in labels  # non-canonical numerals stay entities


def test_numeric_rule_and_sniffing():
    assert numeric_datatype("23") == XSD + "integer"
    assert numeric_datatype("-4") == XSD + "integer"
    assert numeric_datatype("7.5") == XSD + "decimal"
    for value in ("007", "+5", "1.50", "1.", "1e3", "12 Angry Men", "", "-0"):
        assert numeric_datatype(value) is None
    assert guess_separator(["a|b|c", "d|e|f"]) == "|"
    assert guess_separator(["a\tb\tc", "a|b\tc\td"]) == "\t"
    assert guess_underscores_are_spaces(["x_y\tr\tz"], "\t") is True
    assert guess_underscores_are_spaces(["x y|r_1|z_w"], "|") is False
    assert guess_underscores_are_spaces(["x|r|z"], "|") is False


def _snapshot(store):
    triples = sorted(str(q) for q in store.rdf)
    with store.catalog.connect() as con:
        statements = con.execute(
            "SELECT s, p, o, o_literal, datatype, lang FROM statements ORDER BY ALL").fetchall()
        entities = con.execute("SELECT iri, id, label, aliases, popularity FROM entities ORDER BY iri").fetchall()
        relations = con.execute("SELECT iri, id, label, usage FROM relations ORDER BY iri").fetchall()
    return triples, statements, entities, relations


def test_interrupted_ingest_resumes_to_the_same_result(shared_data, tmp_path):
    kb = shared_data / "qa" / "wc2014" / "WC2014.txt"
    opts = LoadOptions(batch_size=1000)
    with Store.init(tmp_path / "whole") as store:
        ingest(store, "tsv", kb, options=opts)
        expected = _snapshot(store)

    batches = []

    def stop_after_two(progress):
        batches.append(progress)
        if len(batches) == 2:
            raise KeyboardInterrupt

    with Store.init(tmp_path / "resumed") as store:
        with pytest.raises(KeyboardInterrupt):
            ingest(store, "tsv", kb, options=opts, progress=stop_after_two)
        assert store.triple_count() == 2000  # two committed batches of 1000 distinct lines
        with store.catalog.connect() as con:
            status, line = con.execute("SELECT status, checkpoint_line FROM ingest_runs").fetchone()
        assert (status, line) == ("interrupted", 2000)
        summary = ingest(store, "tsv", kb, options=opts)
        assert summary.status == "done"
        assert summary.resumed_from_line == 2000
        assert summary.counts["lines"] == 6482 and summary.counts["triples"] == 6482
        assert _snapshot(store) == expected
        # a finished file is a no-op the next time
        assert ingest(store, "tsv", kb, options=opts).status == "skipped"


def test_loader_is_resumable_at_any_checkpoint(shared_data):
    kb = str(shared_data / "qa" / "pathquestion" / "2H-kb.txt")
    loader = PlainTriplesLoader()
    opts = LoadOptions(batch_size=100)
    batches = list(loader.batches(kb, opts))
    whole = [t for b in batches for t in b.triples]
    restart = batches[4].checkpoint
    assert restart.line_no == 500
    tail = [t for b in PlainTriplesLoader().batches(kb, opts, restart) for t in b.triples]
    assert [t for b in batches[:5] for t in b.triples] + tail == whole

"""The Freebase loader on real dump slices (native, prefix-stripped, schema) and Cayley's
30k-movie quads with mediator (CVT) blank nodes.

Expected numbers were counted with coreutils on the files themselves, e.g.
``grep -cP '"@en\\t' names.nt`` or, for the movies' blank nodes,
``zcat 30kmoviedata.nq.gz | tr ' ' '\\n' | grep '^_:' | sort -u | wc -l`` (136,737).

Note: SPARQL queries here write Freebase IRIs in full because pyoxigraph 0.5.13 rejects
prefixed names with two unescaped dots (``fb:film.film.starring``; ``fb:film\\.film\\.starring``
works).
"""
import gzip

import pytest

from kgstore import LoadOptions, Store, ingest
from kgstore.terms import FB, RDFS, SKOLEM
from loaders.freebase import FreebaseLoader, expand_iri, label_from_id

FREEBASE = "formats/freebase_rdf"
MOVIES = "kg/freebase_movies_30k/30kmoviedata.nq.gz"
LARRY = "</en/larry_fine_1902>"


def _one(store, sql, params=()):
    with store.catalog.connect() as con:
        return con.execute(sql, list(params)).fetchone()


def _entity_row(store, iri):
    return _one(store, "SELECT label, description, aliases, is_mediator FROM entities WHERE iri = ?", [iri])


def _relation_row(store, iri):
    return _one(store, "SELECT id, label, description FROM relations WHERE iri = ?", [iri])


def test_expand_iri_rules():
    assert expand_iri("http://rdf.freebase.com/ns/m.0abc") == FB + "m.0abc"
    assert expand_iri("/m.0abc") == FB + "m.0abc"
    assert expand_iri("/film/performance/actor") == FB + "film.performance.actor"
    assert expand_iri("/en/larry_fine_1902") == FB + "en.larry_fine_1902"
    assert expand_iri("name") == FB + "type.object.name"
    assert expand_iri("type") == FB + "type.object.type"
    assert expand_iri("rdf-schema#label") == RDFS + "label"
    assert expand_iri("owl#inverseOf") == "http://www.w3.org/2002/07/owl#inverseOf"
    assert label_from_id("film.performance.actor") == "film performance actor"


def test_dump_head_gives_relation_labels_from_schema(shared_data, tmp_path):
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "freebase", shared_data / FREEBASE / "fb-rdf-10k-head.nt")
        assert (summary.status, summary.rejected, summary.counts["lines"]) == ("done", 0, 10000)
        assert store.triple_count() == 10000
        # 6 type.object.name + 6 rdfs:label lines are annotations, not statements
        assert store.stats()["statements"] == 9988
        # name after the type line (in-stream) and before it (fixed at finalize)
        footballdb = FB + "american_football.football_player.footballdb_id"
        tank = FB + "automotive.body_style.fuel_tank_capacity"
        assert _relation_row(store, footballdb) == ("american_football.football_player.footballdb_id",
                                                    "footballdb ID", None)
        assert _relation_row(store, tank)[1] == "Fuel Tank Capacity"
        assert _entity_row(store, tank) is None  # a property, not an entity
        # no schema for these predicates: a label from the id
        assert _relation_row(store, FB + "type.type.instance")[1] == "type type instance"
        assert _one(store, "SELECT usage FROM relations WHERE iri = ?", [FB + "type.type.instance"])[0] == 9945
        rows = list(store.query(f"SELECT ?l WHERE {{ <{tank}> rdfs:label ?l }}"))
        assert [r["l"].value for r in rows] == ["Fuel Tank Capacity"]

        # the schema slice names properties by mid + type.object.id: their descriptions
        # reach the relations they describe
        ingest(store, "freebase",
               shared_data / FREEBASE / "schema_prefix_stripped/fb-rdf-pred-schema-properties-ids-1-byalpha-desc.nt")
        assert _relation_row(store, footballdb) == ("american_football.football_player.footballdb_id",
                                                    "footballdb ID", "The ID from footballdb.com")
        assert _entity_row(store, FB + "m.075xcx7")[1] == "The ID from footballdb.com"


def test_names_and_descriptions_fill_the_catalog(shared_data, tmp_path):
    base = shared_data / FREEBASE / "derived_reexpanded"
    with Store.init(tmp_path / "s") as store:
        names = ingest(store, "freebase", base / "fb-rdf-10k-names-all-s01-c01.reexpanded.nt")
        descs = ingest(store, "freebase", base / "fb-rdf-10k-desc-all-s01-c01.reexpanded.nt")
        assert names.rejected == descs.rejected == 0
        # grep -cvP '"@en\t' (untagged names are kept: 12 lines)
        assert names.counts["filtered_language"] == 2901
        assert descs.counts["filtered_language"] == 5426
        stats = store.stats()
        assert stats["statements"] == 0  # names and descriptions are annotations only
        assert stats["entities_labelled"] == 2479  # distinct subjects with an English name
        with store.catalog.connect() as con:
            described = con.execute("SELECT count(*) FROM entities WHERE description IS NOT NULL").fetchone()[0]
        assert described == 4516  # distinct subjects with an English description
        assert _entity_row(store, FB + "g.112yggswr") == (
            "Novo Millennium", "Novo Millennium is a 2005 compilation album by Ivete Sangalo.", None, False)
        hack = _entity_row(store, FB + "m.015jd2")
        assert hack[1].startswith("Hack is a 1985 roguelike video game")
        view = store.entity("g.112yggswr")
        assert (view.iri, view.label) == (FB + "g.112yggswr", "Novo Millennium")


def test_more_languages_give_aliases(shared_data, tmp_path):
    path = shared_data / FREEBASE / "derived_reexpanded" / "fb-rdf-10k-names-all-s01-c01.reexpanded.nt"
    with Store.init(tmp_path / "s") as store:
        ingest(store, "freebase", path, options=LoadOptions(languages=("en", "fr")))
        assert _entity_row(store, FB + "award.award_winner")[:3] == ("Award Winner", None, ["Lauréat"])
        assert store.query(f'ASK {{ <{FB}award.award_winner> <{FB}type.object.name> "Lauréat"@fr }}')
        assert not store.query(f'ASK {{ <{FB}g.112yggswr> <{FB}type.object.name> "Novo Millennium"@pt }}')
    with Store.init(tmp_path / "all") as store:
        summary = ingest(store, "freebase", path, options=LoadOptions(languages=("*",)))
        assert summary.counts.get("filtered_language", 0) == 0
        assert store.query(f'ASK {{ <{FB}g.112yggswr> <{FB}type.object.name> "Novo Millennium"@pt }}')


def test_prefix_stripped_slices_load_like_native_ones(shared_data, tmp_path):
    snapshots = []
    for rel in ("prefix_stripped/fb-rdf-10k-names-all-s01-c01.nt",
                "derived_reexpanded/fb-rdf-10k-names-all-s01-c01.reexpanded.nt"):
        with Store.init(tmp_path / rel.split("/")[0]) as store:
            assert ingest(store, "freebase", shared_data / FREEBASE / rel).rejected == 0
            snapshots.append(sorted(str(q) for q in store.rdf))
    assert snapshots[0] == snapshots[1]
    assert len(snapshots[0]) == 2491
    # W3 terms cut to their last segment in the tail slice
    with Store.init(tmp_path / "tail") as store:
        summary = ingest(store, "freebase", shared_data / FREEBASE / "prefix_stripped/fb-rdf-10k-tail-s01-c01.nt")
        assert summary.rejected == 0
        assert store.query(f"ASK {{ <{FB}tv.tv_series_season> rdfs:label \"TV Season\"@en }}")
        assert store.query("ASK { ?p <http://www.w3.org/2002/07/owl#inverseOf> ?q }")
        assert store.query(f"ASK {{ <{FB}tv.tv_series_season> rdf:type rdfs:Class }}")


def test_bad_lines_are_rejected_with_numbers(tmp_path):
    good = f"<{FB}m.01>\t<{FB}type.object.name>\t\"One\"@en\t.\n"
    bad = tmp_path / "bad.nt"
    bad.write_bytes((
        good  # 1
        + f"<{FB}m.02>\t<{FB}type.object.name>\t\"Two\"@en\n"  # 2 no final dot
        + f"<{FB}m.0 3>\t<{FB}type.object.name>\t\"Three\"@en\t.\n"  # 3 space in IRI
        + f"<{FB}m.04>\t<{FB}type.object.name>\t\"Four\"@1x\t.\n"  # 4 bad language tag
        + f"\"lit\"\t<{FB}type.object.name>\t\"Five\"\t.\n"  # 5 literal subject
        + f"<{FB}m.06>\t<{FB}type.object.name>\t\"Six\t.\n"  # 6 unterminated literal
        + "\n"  # 7 blank
        + f"<{FB}m.08>\t<{FB}common.topic.description>\t\"bad \\q escape\"@en\t.\n"  # 8 bad escape
        + f"<{FB}m.09>\t<{FB}type.object.name>\n"  # 9 two terms
        + "# a comment\n"  # 10
        + f"<{FB}m.11>\t<{FB}type.object.name>\t\"Eleven \\u00e9\"@en\t.\n"  # 11 ok, escaped é
    ).encode() + b"<" + FB.encode() + b"m.12>\t<x:p>\t\"\xff\"\t.\n")  # 12 not UTF-8
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "freebase", bad)
        assert summary.status == "done" and summary.rejected == 8
        assert store.triple_count() == 2
        assert _entity_row(store, FB + "m.11")[0] == "Eleven é"
        with store.catalog.connect() as con:
            rows = con.execute("SELECT line_no, reason FROM rejected ORDER BY line_no").fetchall()
    assert rows == [
        (2, "statement does not end with ' .'"),
        (3, f"character ' ' is not allowed in IRI <{FB}m.0 3>"),
        (4, "invalid language tag '1x'"),
        (5, "a literal cannot be a subject"),
        (6, "unterminated string literal"),
        (8, "invalid escape \\q"),
        (9, "statement does not end with ' .'"),
        (12, rows[-1][1]),
    ]
    assert rows[-1][1].startswith("not valid UTF-8")


def test_mediator_types_flag_their_instances_in_any_order(tmp_path):
    f = tmp_path / "cvt.nt"
    f.write_text(
        # an instance typed before the schema says the type is a mediator
        f"<{FB}m.0early>\t<{FB}type.object.type>\t<{FB}film.performance>\t.\n"
        f"<{FB}film.performance>\t<{FB}freebase.type_hints.mediator>\t\"true\"\t.\n"
        f"<{FB}m.0late>\t<{FB}type.object.type>\t<{FB}film.performance>\t.\n"
        f"<{FB}m.0film>\t<{FB}film.film.starring>\t<{FB}m.0late>\t.\n"
        f"<{FB}m.0film>\t<{FB}type.object.type>\t<{FB}film.film>\t.\n")
    with Store.init(tmp_path / "s") as store:
        ingest(store, "freebase", f, options=LoadOptions(batch_size=1))
        with store.catalog.connect() as con:
            flagged = [r[0] for r in con.execute("SELECT iri FROM entities WHERE is_mediator ORDER BY iri").fetchall()]
    assert flagged == [FB + "m.0early", FB + "m.0late"]


def _larry_fine_subset(shared_data, path):
    """Real lines from the movies file: Larry Fine's films, all their performances (CVTs)
    and those performances' actors."""
    with gzip.open(shared_data / MOVIES, "rt", encoding="utf-8") as f:
        rows = [line.split(" ", 3) for line in f]
    perfs = {r[0] for r in rows if r[1] == "</film/performance/actor>" and r[2] == LARRY}
    films = {r[0] for r in rows if r[1] == "</film/film/starring>" and r[2] in perfs}
    all_perfs = {r[2] for r in rows if r[1] == "</film/film/starring>" and r[0] in films}
    actors = {r[2] for r in rows if r[1] == "</film/performance/actor>" and r[0] in all_perfs}
    keep = films | all_perfs | actors | {LARRY}
    lines = [" ".join(r) for r in rows if r[0] in keep]
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(lines)
    return len(lines)


@pytest.fixture(scope="module")
def larry_subset(shared_data, tmp_path_factory):
    path = tmp_path_factory.mktemp("movies") / "larry.nq.gz"
    assert _larry_fine_subset(shared_data, path) == 4397
    return path


def _snapshot(store):
    with store.catalog.connect() as con:
        statements = con.execute("SELECT s, p, o, o_literal, datatype, lang FROM statements ORDER BY ALL").fetchall()
        entities = con.execute("SELECT iri, id, label, is_mediator, popularity FROM entities ORDER BY iri").fetchall()
        relations = con.execute("SELECT iri, id, label, usage FROM relations ORDER BY iri").fetchall()
    return sorted(str(q) for q in store.rdf), statements, entities, relations


def test_movie_mediators_are_flagged_and_traversable(larry_subset, tmp_path):
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "freebase", larry_subset, options=LoadOptions(batch_size=1000))
        assert (summary.rejected, summary.counts["lines"]) == (0, 4397)
        assert store.stats()["mediators"] == 1571  # distinct _: nodes in the subset
        assert _relation_row(store, FB + "film.performance.actor")[1] == "film performance actor"
        rows = list(store.query(f"""
            SELECT DISTINCT ?film ?title WHERE {{
                ?film <{FB}film.film.starring> ?perf .
                ?perf <{FB}film.performance.actor> <{FB}en.larry_fine_1902> .
                ?film <{FB}type.object.name> ?title }}"""))
        assert len(rows) == 198
        titles = {r["title"].value for r in rows}
        assert "The Three Stooges Go Around the World in a Daze" in titles
        # the mediator itself: a skolem IRI flagged in the catalog, one hop from the actor
        perf = next(iter(store.query(f"""
            SELECT ?perf WHERE {{ <{FB}en.the_three_stooges_go_around_the_world_in_a_daze> <{FB}film.film.starring> ?perf .
                                 ?perf <{FB}film.performance.actor> <{FB}en.larry_fine_1902> }}""")))["perf"].value
        assert perf.startswith(SKOLEM)
        view = store.entity(perf)
        assert view.is_mediator and view.id.startswith("_:")
        assert [(f.relation_label, f.value_label) for f in view.facts] == [("film performance actor", "Larry Fine")]
        assert store.entity("en.larry_fine_1902").label == "Larry Fine"


def test_interrupted_freebase_ingest_resumes_with_the_same_blank_nodes(larry_subset, tmp_path):
    opts = LoadOptions(batch_size=1000)
    with Store.init(tmp_path / "whole") as store:
        ingest(store, "freebase", larry_subset, options=opts)
        expected = _snapshot(store)

    def stop(progress):
        raise KeyboardInterrupt

    with Store.init(tmp_path / "resumed") as store:
        with pytest.raises(KeyboardInterrupt):
            ingest(store, "freebase", larry_subset, options=opts, progress=stop)
        summary = ingest(store, "freebase", larry_subset, options=opts)
        assert summary.resumed_from_line == 1000
        assert _snapshot(store) == expected


def test_loader_batches_follow_options(larry_subset):
    batches = list(FreebaseLoader().batches(str(larry_subset), LoadOptions(batch_size=2000)))
    assert [b.checkpoint.line_no for b in batches] == [2000, 4000, 4397]
    assert sum(len(b.triples) for b in batches) == 4397
    only = LoadOptions(properties=frozenset({"film.film.starring"}))
    kept = [t for b in FreebaseLoader().batches(str(larry_subset), only) for t in b.triples]
    # names are annotations and always kept; other predicates are filtered
    assert {t.p for t in kept} == {FB + "film.film.starring", FB + "type.object.name"}


@pytest.mark.slow
def test_full_movies_30k(shared_data, tmp_path):
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "freebase", shared_data / MOVIES)
        assert (summary.status, summary.rejected, summary.counts["lines"]) == ("done", 0, 471705)
        assert store.triple_count() == 471705
        stats = store.stats()
        assert stats["mediators"] == 136737
        assert stats["statements"] == 471705 - 74950  # <name> lines are annotations
        rows = list(store.query(f"""
            SELECT (COUNT(DISTINCT ?film) AS ?n) WHERE {{
                ?film <{FB}film.film.starring> ?perf .
                ?perf <{FB}film.performance.actor> <{FB}en.larry_fine_1902> }}"""))
        assert int(rows[0]["n"].value) == 198


def test_aliases_and_description_languages(tmp_path):
    f = tmp_path / "topic.nt"
    f.write_text(
        f'<{FB}m.0hack>\t<{FB}type.object.name>\t"Hack"@en\t.\n'
        f'<{FB}m.0hack>\t<{FB}common.topic.alias>\t"Hack (video game)"@en\t.\n'
        f'<{FB}m.0hack>\t<{FB}common.topic.alias>\t"Hack (video game)"@en\t.\n'
        f'<{FB}m.0hack>\t<{FB}common.topic.alias>\t"Hack (jeu vidéo)"@fr\t.\n'
        f'<{FB}m.0hack>\t<{FB}common.topic.description>\t"Un jeu."@fr\t.\n'
        f'<{FB}m.0hack>\t<{FB}common.topic.description>\t"A roguelike."@en\t.\n'
        f'<{FB}m.0hack>\t<{FB}common.topic.alias>\t"NetHack ancestor"\t.\n', encoding="utf-8")
    with Store.init(tmp_path / "s") as store:
        summary = ingest(store, "freebase", f)
        assert summary.counts["filtered_language"] == 2
        assert _entity_row(store, FB + "m.0hack") == ("Hack", "A roguelike.", ["Hack (video game)", "NetHack ancestor"],
                                                      False)
        assert store.triple_count() == 4

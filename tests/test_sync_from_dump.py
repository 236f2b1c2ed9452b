"""`kgstore sync --from-dump`: the catalog of a store over an endpoint built from the dump
its engine was loaded from equals the one an endpoint sync builds, on real engines on
127.0.0.1 (Oxigraph server and Virtuoso, as in test_endpoint_store.py), for the demo
sample (wikidata-json) and the PathQuestion PQL3 KB (tsv; the MetaQA slice when PQL3 is
missing). A killed run resumes to the uninterrupted result.

Engines missing: these tests skip, saying how to install them; with
``KGSTORE_REQUIRE_ENGINES`` (CI) they fail instead.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import duckdb
import pyoxigraph as ox
import pytest
from click.testing import CliRunner

import kgstore
from kgstore import Store
from kgstore.cli import main
from kgstore.errors import EndpointMismatchError, StoreError
from kill_helper import run_killed
from metaqa_slice import METAQA_LINES, slice_ntriples
from sparql_servers import (OXIGRAPH_INSTALL_HINT, VIRTUOSO_INSTALL_HINT, OxigraphServer, VirtuosoServer,
                            oxigraph_binary, virtuoso_binaries)

pytestmark = pytest.mark.endpoint

ENGINES = ["oxigraph", "virtuoso"]
DEMO_GRAPH = "http://kgstore.test/demo"
KB_GRAPH = "http://kgstore.test/pql3"
DEMO_REFS = ("Q513", "Q5456", "wd:Q42", "P17")
DEMO_LINKS = ("Mount Everest", "Peru", "Douglas Adams")


def _required(what: str, hint: str):
    if os.environ.get("KGSTORE_REQUIRE_ENGINES"):
        pytest.fail(f"{what} is required in CI: {hint}")
    pytest.skip(hint)


# -- the data ----------------------------------------------------------------------------------------
class Dataset:
    """A dump, its format, the N-Triples an engine loads for it, the graph, and what to compare."""

    def __init__(self, name, dump, fmt, ntriples, graph, refs, links):
        self.name, self.dump, self.fmt, self.ntriples, self.graph = name, dump, fmt, ntriples, graph
        self.refs, self.links = refs, links


@pytest.fixture(scope="module")
def datasets(sample_dir, shared_data, tmp_path_factory) -> dict[str, Dataset]:
    base = tmp_path_factory.mktemp("dumps")
    with Store.init(base / "demo") as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
        store.rdf.dump(output=str(base / "demo.nt"), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    demo = Dataset("demo", sample_dir / "sample-wikidata.json", "wikidata-json", base / "demo.nt", DEMO_GRAPH,
                   DEMO_REFS, DEMO_LINKS)
    kb = _kb_file(shared_data, base)
    if kb is None:
        pytest.skip("neither the PQL3 KB nor the MetaQA KB is under the shared data folder")
    with Store.init(base / "kb") as store:
        kgstore.ingest(store, "tsv", kb)
        with store.catalog.connect() as con:
            names = [r[0] for r in con.execute("SELECT iri FROM entities ORDER BY popularity DESC, iri "
                                               "LIMIT 3").fetchall()]
            labels = [r[0] for r in con.execute("SELECT label FROM entities WHERE label IS NOT NULL "
                                                "ORDER BY popularity DESC, iri LIMIT 2").fetchall()]
    nt = _names_as_triples(base / "kb", base / "kb.nt")
    refs = tuple(n.replace("http://kgstore.local/entity/", "kg:") for n in names)
    return {"demo": demo, "kb": Dataset("kb", kb, "tsv", nt, KB_GRAPH, refs, tuple(labels))}


def _names_as_triples(local: Path, out: Path) -> Path:
    """The tsv loader keeps names in the catalog only: what the engine loads is the store's
    triples, its labels (rdfs:label, as slice_ntriples writes them) and its aliases
    (skos:altLabel), untagged as the loader has them."""
    slice_ntriples(local, out)
    with Store.open(local, read_only=True) as store, store.catalog.connect() as con:
        aliases = con.execute("SELECT iri, unnest(aliases) FROM entities WHERE len(aliases) > 0").fetchall()
    alt = ox.NamedNode("http://www.w3.org/2004/02/skos/core#altLabel")
    with open(out, "ab") as f:
        f.write(ox.serialize([ox.Triple(ox.NamedNode(iri), alt, ox.Literal(text)) for iri, text in aliases],
                             format=ox.RdfFormat.N_TRIPLES))
    return out


def _kb_file(shared_data: Path, base: Path) -> Path | None:
    pql3 = shared_data / "qa" / "pathquestion" / "3H-kb.txt"
    if pql3.is_file():
        return pql3
    metaqa = shared_data / "qa" / "metaqa" / "kb_partial.txt"
    if not metaqa.is_file():
        return None
    with open(metaqa, encoding="utf-8") as f:
        (base / "slice.txt").write_text("".join(f.readline() for _ in range(METAQA_LINES)), encoding="utf-8")
    return base / "slice.txt"


@pytest.fixture(scope="module")
def engines(datasets, tmp_path_factory):
    """name -> a server holding both datasets, each in its graph; stopped (by pid) at the end."""
    started: dict[str, object] = {}

    def get(name: str):
        if name not in started:
            base = tmp_path_factory.mktemp(f"engine_{name}")
            base.mkdir(parents=True, exist_ok=True)
            # Virtuoso loads only from folders it allows: the server's own.
            files = {}
            for key, data in datasets.items():
                files[key] = base / f"{key}.nt"
                files[key].write_bytes(data.ntriples.read_bytes())
            if name == "oxigraph":
                if oxigraph_binary() is None:
                    _required("the oxigraph server", OXIGRAPH_INSTALL_HINT)
                server = OxigraphServer.create(base, [files["demo"]], DEMO_GRAPH)
            else:
                if virtuoso_binaries() is None:
                    _required("Virtuoso", VIRTUOSO_INSTALL_HINT)
                server = VirtuosoServer.create(base, [files["demo"]], DEMO_GRAPH)
            started[name] = server
            server.load_more([files["kb"]], KB_GRAPH)
        return started[name]

    yield get
    for server in started.values():
        server.stop()


def _init(path: Path, url: str, graph: str) -> None:
    result = CliRunner().invoke(main, ["init", str(path), "--endpoint", url, "--graph", graph])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def built(engines, datasets, tmp_path_factory):
    """(engine, dataset) -> (store built by sync, store built by sync --from-dump)."""
    done: dict[tuple[str, str], tuple[Path, Path]] = {}

    def get(engine: str, name: str) -> tuple[Path, Path]:
        if (engine, name) not in done:
            server, data = engines(engine), datasets[name]
            base = tmp_path_factory.mktemp(f"{engine}_{name}")
            _init(base / "synced", server.url, data.graph)
            with Store.open(base / "synced") as store:
                assert kgstore.sync(store).status == "done"
            _init(base / "dumped", server.url, data.graph)
            result = CliRunner().invoke(main, ["sync", str(base / "dumped"), "--from-dump", str(data.dump),
                                               "--dump-format", data.fmt, "--format", "json"])
            assert result.exit_code == 0, result.output
            summary, _ = json.JSONDecoder().raw_decode(result.output[result.output.index("{"):])
            assert summary["status"] == "done"
            assert summary["sampled_subjects_found"] == "20 of 20"
            done[(engine, name)] = (base / "synced", base / "dumped")
        return done[(engine, name)]

    return get


# -- comparing ------------------------------------------------------------------------------------------
def _catalog(path: Path) -> dict[str, list]:
    with Store.open(path, read_only=True) as store, store.catalog.connect() as con:
        def rows(sql):
            return con.execute(sql).fetchall()

        return {
            "entities": rows("SELECT iri, id, label, description, array_to_string(list_sort(aliases), '|'), "
                             "popularity, is_mediator, kind FROM entities ORDER BY iri"),
            "sitelinks": rows("SELECT iri, sitelinks FROM entities ORDER BY iri"),
            "relations": rows("SELECT iri, id, label, description, inverse_label, datatype, is_mediator_type, usage "
                              "FROM relations ORDER BY iri"),
            "facts": rows("SELECT s, p, o, o_literal, datatype, lang FROM statements ORDER BY ALL"),
        }


def _differences(got: list, expected: list) -> tuple:
    mine, theirs = set(got), set(expected)
    return len(got), len(expected), sorted(mine - theirs)[:4], sorted(theirs - mine)[:4]


def _virtuoso_literals(catalog: dict) -> dict:
    """Virtuoso keeps WKT points as its own geometries: they come back in upper case, typed
    virtrdf:Geometry (an endpoint sync reads them so; the dump has them as written)."""
    catalog["facts"] = sorted((s, p, o.upper(), lit, "wkt", lang) if p.endswith("/P625")
                              else (s, p, o, lit, dt, lang) for s, p, o, lit, dt, lang in catalog["facts"])
    return catalog


def _entity(path: Path, ref: str) -> dict:
    result = CliRunner().invoke(main, ["entity", str(path), ref, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    doc["aliases"] = sorted(doc["aliases"])  # RDF keeps no order
    # Virtuoso's geometries: upper case, and typed virtrdf:Geometry when read from it.
    doc["facts"] = [{"relation_id": "P625", "value": f["value"].upper()} if f.get("relation_id") == "P625" else f
                    for f in doc.get("facts", [])]
    return doc


def _link(path: Path, text: str) -> list:
    from indexer import refresh_labels

    with Store.open(path) as store:
        refresh_labels(store)  # the names linking reads first (no model needed)
    result = CliRunner().invoke(main, ["link", str(path), text, "--no-vectors", "-k", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    return [(c["iri"], c["label"], round(c["score"], 6)) for c in json.loads(result.output)]


# -- the tests ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["demo", "kb"])
@pytest.mark.parametrize("engine", ENGINES)
def test_from_dump_equals_an_endpoint_sync(engine, name, built, datasets):
    synced, dumped = built(engine, name)
    expected, got = _catalog(synced), _catalog(dumped)
    if engine == "virtuoso":
        expected, got = _virtuoso_literals(expected), _virtuoso_literals(got)
    assert got["entities"] and got["facts"]
    for table in ("entities", "relations", "facts"):
        assert got[table] == expected[table], (table, _differences(got[table], expected[table]))
    # A Wikidata JSON dump knows each item's sitelinks; the triples kgstore exports, which the
    # engines loaded, do not carry them: the dump may know more, never something else.
    assert all(theirs is None or mine == theirs
               for (_, mine), (_, theirs) in zip(got["sitelinks"], expected["sitelinks"]))
    for ref in datasets[name].refs:
        assert _entity(dumped, ref) == _entity(synced, ref), ref
    for text in datasets[name].links:
        top = _link(dumped, text)
        assert top and top == _link(synced, text), text


def test_a_second_run_is_up_to_date_and_checks_again(built, datasets):
    _, dumped = built("oxigraph", "demo")
    with Store.open(dumped) as store:
        summary = kgstore.sync_from_dump(store, datasets["demo"].dump, "wikidata-json")
    assert summary.status == "skipped" and summary.check.sampled == 20 and not summary.check.missing
    assert summary.check.endpoint_triples == summary.check.dump_triples


def test_an_engine_without_the_dump_is_a_clear_error(engines, datasets, tmp_path):
    """The kb dump against the demo graph: every sampled subject is missing."""
    path = tmp_path / "wrong"
    _init(path, engines("oxigraph").url, DEMO_GRAPH)
    result = CliRunner().invoke(main, ["sync", str(path), "--from-dump", str(datasets["kb"].dump),
                                       "--dump-format", "tsv"])
    assert result.exit_code == EndpointMismatchError.exit_code, result.output
    assert "lacks 20 of 20 sampled subjects" in result.output and "Traceback" not in result.output
    assert "the endpoint holds" in result.output  # the counts differ too


def test_from_dump_on_a_local_store_is_refused(datasets, tmp_path):
    Store.init(tmp_path / "local").close()
    result = CliRunner().invoke(main, ["sync", str(tmp_path / "local"), "--from-dump", str(datasets["demo"].dump)])
    assert result.exit_code == StoreError.exit_code and "use `kgstore ingest`" in result.output


# -- a kill mid-run ---------------------------------------------------------------------------------------
# The child waits a moment after each commit it reports, so that the kill lands between two
# commits: with a parsing worker the KB's 2,839 lines commit in groups whose second report
# comes with every line read, and on a busy machine (CI, two test workers) the run finished
# between that report and the kill, and the resume found nothing to resume.
SYNC = (
    "import sys, time\nimport kgstore._ingest as ingest_module\nfrom kgstore import Store, sync_from_dump\n"
    "from kgstore.records import LoadOptions\n"
    "ingest_module.GROUP_TRIPLES = 3000\n"
    "def said(progress):\n    print('committed', flush=True)\n    time.sleep(0.3)\n"
    "with Store.open(sys.argv[1]) as s:\n"
    "    sync_from_dump(s, sys.argv[2], 'tsv', options=LoadOptions(batch_size=200), progress=said)\n"
)


def _checkpoint_line(store_dir: Path) -> int:
    try:
        con = duckdb.connect(str(store_dir / "catalog.duckdb"), read_only=True)
    except duckdb.IOException:
        return 0  # the writer holds it
    try:
        return con.execute("SELECT max(checkpoint_line) FROM ingest_runs").fetchone()[0] or 0
    finally:
        con.close()


@pytest.mark.parametrize("workers", ["0", "1"])
def test_sigkill_mid_run_then_resume_equals_uninterrupted(workers, engines, datasets, built, tmp_path):
    from kgstore.records import LoadOptions

    server, data = engines("oxigraph"), datasets["kb"]
    _, clean = built("oxigraph", "kb")
    killed = tmp_path / "killed"
    _init(killed, server.url, data.graph)
    env = {**os.environ, "KGSTORE_INGEST_WORKERS": workers}
    seen = []

    def committed(output: str) -> bool:
        if workers == "1":
            return output.count("committed") >= 1
        seen.append(_checkpoint_line(killed))
        return seen[-1] >= 400

    kill = run_killed([sys.executable, "-c", SYNC, str(killed), str(data.dump)], seed=int(workers), max_s=0.05,
                      until=committed, env=env)
    assert kill, f"the sync finished before it could be killed; make the input larger\n{kill.output}"
    for _ in range(200):  # the parsing worker dies a moment after its parent
        try:
            store = Store.open(killed)
            break
        except kgstore.StoreLockedError:
            time.sleep(0.05)
    with store:
        summary = kgstore.sync_from_dump(store, data.dump, "tsv", options=LoadOptions(batch_size=200))
    assert summary.status == "done" and summary.load.resumed_from_line > 0
    assert _catalog(killed) == _catalog(clean)
    with Store.open(killed, read_only=True) as store, store.catalog.connect() as con:
        assert con.execute("SELECT count(*), min(status) FROM ingest_runs").fetchone() == (1, "done")

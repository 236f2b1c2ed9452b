"""`kgstore export STORE DIR --ntriples`: partitioned .nt.gz files that load back, through
the existing ingest, into a store with the same triples and answers; the manifest; and the
errors (a directory in use, no format)."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import kgstore
from kgstore import ExportError, Store
from kgstore._export_ntriples import export_ntriples
from kgstore.cli import main

QUERIES = [
    "SELECT ?country ?name WHERE { wd:Q5456 wdt:P17 ?country . ?country rdfs:label ?name } ORDER BY ?name",
    "SELECT ?name WHERE { wd:Q42 wdt:P69 ?x . ?x rdfs:label ?name } ORDER BY ?name",
    "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p",
    "SELECT ?o WHERE { wd:Q5451 ?p ?o FILTER(isLiteral(?o)) } ORDER BY ?o",
]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory, sample_dir) -> Path:
    path = tmp_path_factory.mktemp("export") / "store"
    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", sample_dir / "sample-wikidata.json")
    return path


def rows(path: Path, sparql: str) -> list[tuple]:
    with Store.open(path, read_only=True) as store:
        return [tuple(str(term) for term in solution) for solution in store.query(sparql)]


def test_export_loads_back_into_a_fresh_store_with_the_same_triples_and_answers(demo_store, tmp_path):
    out = tmp_path / "nt"
    result = run("export", demo_store, out, "--ntriples", "--part-triples", 100, "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    with Store.open(demo_store, read_only=True) as store:
        total = store.triple_count()
    parts = sorted(out.glob("*.nt.gz"))
    assert [p.name for p in parts] == [f"part-{i:05d}.nt.gz" for i in range(len(parts))]
    assert len(parts) == -(-total // 100) > 1 and summary["triples"] == total
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == summary and manifest["format"] == "N-Triples" and manifest["named_graph_quads"] == 0
    assert Path(manifest["directory"]) == out.absolute()
    for part, listed in zip(parts, manifest["parts"]):
        lines = gzip.decompress(part.read_bytes()).decode("utf-8").splitlines()
        assert listed == {"file": part.name, "triples": len(lines), "bytes": part.stat().st_size}
        assert all(line.endswith(" .") for line in lines)
    assert [p["triples"] for p in manifest["parts"]][:-1] == [100] * (len(parts) - 1)
    assert "part-00000.nt.gz written" in result.stderr  # progress on stderr, a line per file
    assert not list(out.glob("*.tmp"))

    fresh = tmp_path / "fresh"
    assert run("init", fresh).exit_code == 0
    for part in parts:  # the existing ingest, as a user would load them
        loaded = run("ingest", fresh, "wikidata-rdf", part)
        assert loaded.exit_code == 0, loaded.output
    with Store.open(fresh, read_only=True) as store:
        assert store.triple_count() == total
        andes = store.entity("Q5456")
    for sparql in QUERIES:
        assert rows(fresh, sparql) == rows(demo_store, sparql), sparql
    assert len(rows(demo_store, QUERIES[0])) == 7
    with Store.open(demo_store, read_only=True) as store:
        original = store.entity("Q5456")
    assert (andes.label, andes.description) == (original.label, original.description)


def test_export_streams_parts_and_reports_progress_through_the_api(demo_store, tmp_path):
    seen = []
    with Store.open(demo_store, read_only=True) as store:
        summary = export_ntriples(store, tmp_path / "api", part_triples=1000, progress=seen.append)
        total = store.triple_count()
    assert [p.file for p in summary.parts] == ["part-00000.nt.gz"] and summary.triples == total
    assert seen[-1].part_done and seen[-1].done == total == seen[-1].total
    # --force replaces an earlier export: parts it no longer writes are gone too
    with Store.open(demo_store, read_only=True) as store:
        many = export_ntriples(store, tmp_path / "api2", part_triples=50)
        again = export_ntriples(store, tmp_path / "api2", part_triples=1000, force=True)
    assert len(many.parts) > 1 and len(again.parts) == 1
    assert sorted(p.name for p in (tmp_path / "api2").iterdir()) == ["manifest.json", "part-00000.nt.gz"]


def test_export_refuses_a_directory_in_use_and_says_how(demo_store, tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    result = run("export", demo_store, used, "--ntriples")
    assert result.exit_code == ExportError.exit_code == 2
    assert "is not empty" in result.output and "--force" in result.output and "Traceback" not in result.output
    forced = run("export", demo_store, used, "--ntriples", "--force")
    assert forced.exit_code == 2 and "not a kgstore export (notes.txt)" in forced.output
    assert sorted(p.name for p in used.iterdir()) == ["notes.txt"]  # --force removes only an export

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert "is not a directory" in run("export", demo_store, a_file, "--ntriples").output
    no_format = run("export", demo_store, tmp_path / "new")
    assert no_format.exit_code == 2 and "--ntriples" in no_format.output
    assert not (tmp_path / "new").exists()
    assert run("export", demo_store, tmp_path / "new", "--ntriples", "--part-triples", 0).exit_code == 2
    missing = run("export", tmp_path / "no-store", tmp_path / "x", "--ntriples")
    assert missing.exit_code != 0 and "Traceback" not in missing.output

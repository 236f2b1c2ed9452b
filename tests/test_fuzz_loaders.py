"""Issue 32: every loader on generated files of valid and mutated records (tests/fuzz_records.py).

For each generated file, one ingest, then:

* it ends cleanly: done, or a :class:`~kgstore.errors.KgstoreError` (through the CLI: a
  message and a non-zero exit, never a traceback);
* every valid record's facts are in the store, and nothing but them (and what the
  records of open fate may add);
* every broken record's line is in the catalog's rejected lines with its line number,
  and no valid record's line is.

``KGSTORE_FUZZ_EXAMPLES`` sets the number of files per loader (default 20, about five
seconds a loader); ``bench/fuzz_loaders.py`` runs the coverage-guided fuzzer.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgstore import LoadOptions, Store, ingest
from kgstore.cli import main
from kgstore.errors import KgstoreError
from kgstore.terms import WDT
from loaders.triples import numeric_datatype

sys.path.insert(0, str(Path(__file__).parent))
from fuzz_records import BOM, FILE_NAMES, FORMATS, HUGE, GeneratedFile, generated_file  # noqa: E402

EXAMPLES = int(os.environ.get("KGSTORE_FUZZ_EXAMPLES", "20"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
KGSTORE = Path(sys.executable).parent / "kgstore"
WIKIDATA_PROP = "http://www.wikidata.org/prop/"


def _options(fmt: str) -> LoadOptions:
    # The generated names may hold '|': the test fixes the separator rather than the sniffer.
    return LoadOptions(separator="\t") if fmt == "tsv" else LoadOptions()


def _workdir(tmp_path: Path) -> Path:
    path = tmp_path / uuid.uuid4().hex[:8]  # a fresh one per example (tmp_path is per test)
    path.mkdir()
    return path


# -- what the store holds ---------------------------------------------------------------------
def store_triples(store: Store) -> set[tuple]:
    out = set()
    for row in store.query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }"):
        s, p, o = row
        literal = isinstance(o, ox.Literal)
        out.add((s.value, p.value, o.value, literal, (o.language or None) if literal else None))
    return out


def rejected_lines(store: Store) -> dict[int, str]:
    """Line number → reason, as ``kgstore rejects`` lists them."""
    with store.catalog.connect() as con:
        return {line: reason for line, reason in con.execute("SELECT line_no, reason FROM rejected").fetchall()}


def _tsv_facts(store: Store, facts: set[tuple]) -> set[tuple]:
    """The tsv facts (names) as triples, with IRIs from the catalog's entity and relation ids."""
    with store.catalog.connect() as con:
        entities = dict(con.execute("SELECT id, iri FROM entities").fetchall())
        relations = dict(con.execute("SELECT id, iri FROM relations").fetchall())
    out = set()
    for s, p, o in facts:
        assert s in entities, f"entity {s!r} is not in the catalog"
        assert p in relations, f"relation {p!r} is not in the catalog"
        if numeric_datatype(o):
            out.add((entities[s], relations[p], o, True, None))
        else:
            assert o in entities, f"entity {o!r} is not in the catalog"
            out.add((entities[s], relations[p], entities[o], False, None))
    return out


def _statement_part(triple: tuple, subjects: set[str]) -> bool:
    """In full mode: a triple of the statement graph (p:, ps:, pq:, pr:, value and reference
    nodes), which the generator does not spell out."""
    s, p = triple[0], triple[1]
    return s not in subjects or (p.startswith(WIKIDATA_PROP) and not p.startswith(WDT))


def check_store(store: Store, gen: GeneratedFile, options: LoadOptions | None = None) -> None:
    """The three properties above, for a finished ingest of ``gen``."""
    triples = store_triples(store)
    expected = gen.expected_facts()
    if gen.fmt == "tsv":
        expected = _tsv_facts(store, expected)
    missing = expected - triples
    assert not missing, f"valid records lost: {sorted(missing)[:5]}"
    open_subjects = {r.subject for r in gen.records if r.must == "either"}
    extra = {t for t in triples - expected if t[0] not in open_subjects}
    if options is not None and options.statements == "full":
        subjects = {r.subject for r in gen.records}
        extra = {t for t in extra if not _statement_part(t, subjects)}
    assert not extra, f"triples no valid record holds: {sorted(extra)[:5]}"

    rejects = rejected_lines(store)
    lines = gen.line_numbers()
    for line, record in lines.items():
        if record.must == "reject":
            assert line in rejects, f"line {line} ({record.kind}: {record.raw[:80]!r}) is not in the rejects"
        elif record.must == "load":
            assert line not in rejects, f"valid line {line} ({record.kind}) rejected: {rejects[line]}"
    stray = {n: r for n, r in rejects.items() if n not in lines or lines[n].must == "load"}
    assert not stray, f"rejects for lines that hold no broken record: {stray}"
    assert all(reason.strip() for reason in rejects.values()), "a reject without a reason"


def ingest_generated(workdir: Path, gen: GeneratedFile, options: LoadOptions) -> Store:
    path = workdir / FILE_NAMES[gen.fmt]
    path.write_bytes(gen.content())
    store = Store.init(workdir / "store")
    try:
        summary = ingest(store, gen.fmt, path, options=options)
        assert summary.status == "done"
        # (a line may count more than once: a JSON array of three non-objects is three rejects)
        assert summary.rejected >= sum(1 for r in gen.records if r.must == "reject")
    except BaseException:
        store.close()
        raise
    return store


def _run(workdir: Path, gen: GeneratedFile, options: LoadOptions | None = None) -> None:
    options = options or _options(gen.fmt)
    store = ingest_generated(workdir, gen, options)
    try:
        check_store(store, gen, options)
    finally:
        store.close()


# -- the properties, one test per loader ---------------------------------------------------------
@FUZZ
@given(gen=generated_file("tsv"))
def test_tsv_loader_keeps_valid_lines_and_rejects_broken_ones(tmp_path, gen):
    _run(_workdir(tmp_path), gen)


@FUZZ
@given(gen=generated_file("wikidata-json"), statements=st.sampled_from(["truthy", "full"]))
def test_wikidata_json_loader_keeps_valid_lines_and_rejects_broken_ones(tmp_path, gen, statements):
    # truthy lines go through msgspec's typed decoder, full ones through orjson: both are fuzzed
    _run(_workdir(tmp_path), gen, LoadOptions(statements=statements))


@FUZZ
@given(gen=generated_file("wikidata-rdf"))
def test_wikidata_rdf_loader_keeps_valid_lines_and_rejects_broken_ones(tmp_path, gen):
    _run(_workdir(tmp_path), gen)


@FUZZ
@given(gen=generated_file("freebase"))
def test_freebase_loader_keeps_valid_lines_and_rejects_broken_ones(tmp_path, gen):
    _run(_workdir(tmp_path), gen)


# -- through the CLI: a message and an exit code, never a traceback --------------------------------
def _cli(*args, env=None) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=env)
    return result.exit_code, result.output


@settings(FUZZ, max_examples=max(2, EXAMPLES // 3))
@given(fmt=st.sampled_from(FORMATS), worker=st.booleans(), data=st.data())
def test_cli_ingest_of_fuzzed_files_exits_cleanly(tmp_path, fmt, worker, data):
    """Also with the parsing worker process (kgstore/_pipeline.py), which small files skip."""
    gen = data.draw(generated_file(fmt, max_records=10))
    workdir = _workdir(tmp_path)
    path = workdir / FILE_NAMES[fmt]
    path.write_bytes(gen.content())
    store = workdir / "store"
    assert _cli("init", store)[0] == 0
    extra = ["--separator", "tab"] if fmt == "tsv" else []
    code, output = _cli("ingest", store, fmt, path, *extra, env={"KGSTORE_INGEST_WORKERS": "1" if worker else "0"})
    assert "Traceback" not in output
    assert code == 0, output
    code, output = _cli("rejects", store, "--format", "json", "--limit", "100000")
    assert code == 0 and "Traceback" not in output
    listed = {row["line"] for row in json.loads(output)}
    broken = {n for n, r in gen.line_numbers().items() if r.must == "reject"}
    assert broken <= listed


# -- explicit examples: every mutation kind at once, and the bugs the fuzzing found ----------------
EVERYTHING = {
    # one line of each kind, with the line numbers the rejects must carry
    "tsv": (b"\xef\xbb\xbfa b\tr\tc\n" + b"x\x00y\tr\t12\r\n" + b"a\tr\n" + b"a\t \tc\n" + b"a\xff\tr\tc\n"
            + b"a\tr\tc\rd\tr\te\n" + b"big\tr\t" + b"h" * HUGE + b"\n",
            {3, 4, 5, 6}),
    "wikidata-json": (BOM + b"[\n" + b'{"id":"Q1","type":"item","labels":{"en":{"language":"en","value":"A"}}},\n'
                      + b'{"id":"Q2","type":"item","labels":{"en":{"language":"en","value":"a\\u0000b"}}},\r\n'
                      + b'{"id":"Q3","type":"item","labels":{"en":{"language":"en","value":"a\\qb"}}},\n'
                      + b'{"id":"Q4","type":"item","labels":{"en":{"language":"en","value":"a\xffb"}}},\n'
                      + b'{"id":"Q5","type":"item","x":' + b"[" * 5000 + b"]" * 5000 + b"},\n"
                      + b'{"id":5,"type":"item"},\n' + b'{"id":"Q7","type":"item","lab\n'
                      # a crash once (OverflowError): a coordinate too big for a double
                      + b'{"id":"Q9","type":"item","labels":{"en":{"language":"en","value":"C"}},"claims":{"P625":[{'
                      + b'"type":"statement","rank":"normal","mainsnak":{"snaktype":"value","property":"P625",'
                      + b'"datatype":"globe-coordinate","datavalue":{"type":"globecoordinate","value":{"latitude":1'
                      + b"0" * 400 + b',"longitude":1}}}}]}}\n' + b"]\n",
                      {4, 5, 6, 7, 8}),
    "wikidata-rdf": (BOM + b'<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P31> '
                     b'<http://www.wikidata.org/entity/Q5> .\r'
                     b'<http://www.wikidata.org/entity/Q2> <http://www.wikidata.org/prop/direct/P31> '
                     b'<http://www.wikidata.org/entity/Q\\u0035> .\r\n'
                     b'<http://www.wikidata.org/entity/Q3> <http://www.w3.org/2000/01/rdf-schema#label> "a\\qb"@en .\n'
                     b'<http://www.wikidata.org/entity/Q4> <http://www.w3.org/2000/01/rdf-schema#label> "a\xffb" .\n'
                     b'<http://www.wikidata.org/entity/Q5> <http://www.w3.org/2000/01/rdf-schema#label> "a\n',
                     {2, 3, 4}),
    "freebase": (BOM + b'<http://rdf.freebase.com/ns/m.01>\t<http://rdf.freebase.com/ns/type.object.name>\t"A"@en\t.\r'
                 b'</m.02>\t</type.object.name>\t"B"\t.\r\n'
                 b'<http://rdf.freebase.com/ns/m.\\u0030\\u0033> <http://rdf.freebase.com/ns/type.object.name> '
                 b'"a\\u0000b" .\n'
                 b'<http://rdf.freebase.com/ns/m.04> <http://rdf.freebase.com/ns/type.object.name> "a\\qb" .\n'
                 b'<http://rdf.freebase.com/ns/m.05> <http://rdf.freebase.com/ns/type.object.name> "a\xffb" .\n'
                 b'<http://rdf.freebase.com/ns/m.06> <http://rdf.freebase.com/ns/type.object.name> "a\n'
                 # a crash once (found by atheris): an IRI with DEL passed the loader's check and
                 # failed Oxigraph's load of the whole batch, with a traceback
                 b'<http://rdf.freebase.com/ns\x7f/a.b>\t<http://rdf.freebase.com/ns/type.property.unique>'
                 b'\t"false"\t.\n',
                 {3, 4, 5, 6}),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_mutation_at_once_through_the_api(tmp_path, fmt):
    content, broken = EVERYTHING[fmt]
    path = tmp_path / FILE_NAMES[fmt]
    path.write_bytes(content)
    with Store.init(tmp_path / "store") as store:
        summary = ingest(store, fmt, path, options=_options(fmt))
        assert summary.status == "done"
        assert set(rejected_lines(store)) == broken
        subjects = {t[0] for t in store_triples(store)}
    # the first record, behind a BOM, is there under its own name
    first = {"tsv": "a_b", "wikidata-json": "Q1", "wikidata-rdf": "Q1", "freebase": "m.01"}[fmt]
    assert any(s.endswith("/" + first) for s in subjects), subjects


def test_every_mutation_at_once_through_the_cli(tmp_path):
    """The real command, in a subprocess: clean exits, no traceback, rejects with line numbers."""
    store = tmp_path / "store"
    subprocess.run([KGSTORE, "init", store], check=True, capture_output=True)
    for fmt in FORMATS:
        content, _ = EVERYTHING[fmt]
        path = tmp_path / FILE_NAMES[fmt]
        path.write_bytes(content)
        extra = ["--separator", "tab"] if fmt == "tsv" else []
        # half of them parsed in the worker process, whose errors travel back pickled
        env = dict(os.environ, KGSTORE_INGEST_WORKERS="1" if fmt in ("wikidata-json", "freebase") else "0")
        done = subprocess.run([KGSTORE, "ingest", store, fmt, path, *extra], capture_output=True, text=True,
                              env=env)
        assert "Traceback" not in done.stdout + done.stderr
        assert done.returncode == 0, done.stderr
        assert "malformed line(s) skipped" in done.stderr
    done = subprocess.run([KGSTORE, "rejects", store, "--format", "json", "--limit", "1000"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    listed: dict[str, set[int]] = {}
    for row in json.loads(done.stdout):
        listed.setdefault(Path(row["file"]).name, set()).add(row["line"])
    assert listed == {FILE_NAMES[fmt]: EVERYTHING[fmt][1] for fmt in FORMATS}


def test_a_file_of_nothing_but_broken_lines_is_a_clear_error(tmp_path):
    """Every line broken: a clean error ("is this the right format?") from the CLI, not a traceback."""
    path = tmp_path / "kb.tsv"
    path.write_bytes(b"\xff\xfe\x00\x00\n" * 3 + b"{" * 1000 + b"\n")
    store = tmp_path / "store"
    subprocess.run([KGSTORE, "init", store], check=True, capture_output=True)
    done = subprocess.run([KGSTORE, "ingest", store, "wikidata-json", path], capture_output=True, text=True)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.strip().startswith("Error:"), done.stderr

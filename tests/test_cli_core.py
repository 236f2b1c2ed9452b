"""The CLI contract other tools rely on: init, ingest, stats, sparql, entity, rejects, exit codes."""
import json

import pytest
from click.testing import CliRunner

from kgstore.cli import main


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory, sample_dir):
    path = tmp_path_factory.mktemp("cli") / "store"
    runner = CliRunner()
    assert runner.invoke(main, ["init", str(path)]).exit_code == 0
    result = runner.invoke(main, ["ingest", str(path), "wikidata-json", str(sample_dir / "sample-wikidata.json"),
                                  "--format", "json"])
    assert result.exit_code == 0, result.output
    return path, json.loads(result.output)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_help_lists_commands_without_importing_heavy_libraries():
    import subprocess
    import sys

    code = ("import sys\nfrom click.testing import CliRunner\nfrom kgstore.cli import main\n"
            "r = CliRunner().invoke(main, ['--help'])\nassert r.exit_code == 0\n"
            "print(r.output)\nprint('HEAVY', sorted(m for m in ('torch','hnswlib','llama_cpp','sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    for name in ("init", "ingest", "sparql", "entity", "index", "search", "ask", "eval", "cypher"):
        assert f"  {name} " in out


def test_ingest_summary_counts(demo_store):
    _, summary = demo_store
    assert summary["status"] == "done"
    assert summary["entities"] == 69
    assert summary["properties"] == 21
    assert summary["rejected"] == 0


def test_sparql_json_is_standard_results_document(demo_store):
    path, _ = demo_store
    result = run("sparql", path, "SELECT ?x WHERE { wd:Q5456 wdt:P17 ?x } ORDER BY ?x", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["head"] == {"vars": ["x"]}
    got = [b["x"]["value"].rsplit("/", 1)[1] for b in doc["results"]["bindings"]]
    assert got == sorted(["Q414", "Q750", "Q298", "Q739", "Q736", "Q419", "Q717"])


def test_sparql_table_and_csv(demo_store):
    path, _ = demo_store
    query = "SELECT ?name WHERE { wd:Q42 wdt:P69 ?x . ?x rdfs:label ?name } ORDER BY ?name"
    csv_out = run("sparql", path, query, "--format", "csv")
    assert csv_out.exit_code == 0
    assert csv_out.output.splitlines() == ["name", "Brentwood School", "St John's College"]
    table = run("sparql", path, query)
    assert "Brentwood School" in table.output and "St John's College" in table.output


def test_sparql_syntax_error_exits_nonzero_with_message(demo_store):
    path, _ = demo_store
    result = run("sparql", path, "SELECT WHERE {")
    assert result.exit_code == 5
    assert "Error: SPARQL syntax error" in result.output


def test_sparql_refuses_update_text(demo_store):
    path, _ = demo_store
    result = run("sparql", path, "DELETE WHERE { ?s ?p ?o }")
    assert result.exit_code == 5
    assert "update" in result.output
    assert json.loads(run("stats", path, "--format", "json").output)["triples"] > 0


SERVICE_QUERY = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"


@pytest.mark.parametrize("query, word", [(SERVICE_QUERY, "SERVICE (federated query) is refused"),
                                         ("LOAD <http://example.org/data.ttl>", "LOAD is refused")])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_sparql_refuses_network_reach_with_a_clear_error_and_no_traceback(demo_store, query, word, fmt):
    """The issue's example, as a new user runs it: a real process, no host lookup, exit 5."""
    import subprocess
    import sys

    path, _ = demo_store
    code = "import sys; from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()"
    proc = subprocess.run([sys.executable, "-c", code, "sparql", str(path), query, "--format", fmt],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 5
    assert proc.stderr.startswith(f"Error: {word}") and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_entity_shows_label_description_aliases_and_facts(demo_store):
    path, _ = demo_store
    result = run("entity", path, "Q42", "--format", "json")
    assert result.exit_code == 0, result.output
    view = json.loads(result.output)
    assert view["label"] == "Douglas Adams"
    assert view["description"] == "English writer and humorist (1952–2001)"
    assert view["aliases"] == ["Douglas Noel Adams", "Douglas Noël Adams", "DNA"]
    educated = sorted(f["value"] for f in view["facts"] if f["relation"] == "educated at")
    assert educated == ["Brentwood School", "St John's College"]
    table = run("entity", path, "wd:Q42")
    assert "Douglas Adams  [wd:Q42]" in table.output and "educated at" in table.output


XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def test_dates_read_at_their_precision_in_tables_and_stay_typed_in_json(demo_store):
    path, _ = demo_store
    born = "SELECT ?d WHERE { wd:Q42 wdt:P569 ?d }"
    table = run("sparql", path, born)
    assert table.exit_code == 0, table.output
    assert "1952-03-11" in table.output and "T00:00:00Z" not in table.output
    binding = json.loads(run("sparql", path, born, "--format", "json").output)["results"]["bindings"][0]["d"]
    assert binding == {"type": "literal", "value": "1952-03-11T00:00:00Z", "datatype": XSD_DATETIME}
    assert run("sparql", path, born, "--format", "csv").output.splitlines() == ["d", "1952-03-11T00:00:00Z"]
    timed = run("sparql", path, 'SELECT ?d WHERE { BIND("1952-03-11T10:30:00Z"^^xsd:dateTime AS ?d) }')
    assert "1952-03-11 10:30:00 UTC" in timed.output  # a time other than midnight is kept
    entity = run("entity", path, "Q42")
    born_row = next(line for line in entity.output.splitlines() if "date of birth" in line)
    assert "1952-03-11" in born_row and "T00:00:00Z" not in entity.output
    facts = json.loads(run("entity", path, "Q42", "--format", "json").output)["facts"]
    birth = next(f for f in facts if f["relation_id"] == "P569")
    assert (birth["value"], birth["datatype"], birth["value_iri"]) == ("1952-03-11T00:00:00Z", XSD_DATETIME, None)
    assert all(f["datatype"] is None for f in facts if f["value_iri"])


def test_date_text_has_one_home_that_qa_uses():
    import qa.steps._values as values
    from kgstore import date_text, literal_text

    assert values.date_text is date_text
    assert date_text("+1952-03-11T00:00:00Z") == "1952-03-11"
    assert date_text("1952-03-11T00:00:00Z", "year") == "1952" and date_text("1952-03-11", "month") == "1952-03"
    assert date_text("-0500-01-01T00:00:00Z") == "-0500-01-01" and date_text("soon") is None
    assert literal_text("1952-03-11T00:00:00Z", XSD_DATETIME) == "1952-03-11"
    assert literal_text("1952-03-11T00:00:00Z") == "1952-03-11T00:00:00Z"  # a plain string stays as it is


def test_entity_unknown_is_an_error(demo_store):
    path, _ = demo_store
    result = run("entity", path, "Q99999999")
    assert result.exit_code == 1
    assert "no entity 'Q99999999'" in result.output


def test_stats_json(demo_store):
    path, _ = demo_store
    stats = json.loads(run("stats", path, "--format", "json").output)
    assert stats["ingest_runs"] == 1
    assert stats["relations"] == 21
    assert stats["rejected_lines"] == 0


def test_reingest_is_a_noop_unless_forced(demo_store, sample_dir):
    path, _ = demo_store
    before = json.loads(run("stats", path, "--format", "json").output)
    again = run("ingest", path, "wikidata-json", sample_dir / "sample-wikidata.json")
    assert again.exit_code == 0
    assert "already loaded" in again.output
    forced = run("ingest", path, "wikidata-json", sample_dir / "sample-wikidata.json", "--force", "--format", "json")
    assert forced.exit_code == 0, forced.output
    after = json.loads(run("stats", path, "--format", "json").output)
    assert after["triples"] == before["triples"]
    assert after["statements"] == before["statements"]


def test_unknown_format_and_missing_store(tmp_path, sample_dir):
    bad = run("ingest", tmp_path / "s", "yaml", sample_dir / "sample-wikidata.json")
    assert bad.exit_code == 2
    assert "Invalid value for 'FORMAT'" in bad.output
    missing = run("stats", tmp_path / "nowhere")
    assert missing.exit_code == 3
    assert "kgstore init" in missing.output


def test_max_errors_fails_with_clear_message_and_keeps_good_lines(tmp_path, shared_data):
    store = tmp_path / "s"
    assert run("init", store).exit_code == 0
    result = run("ingest", store, "wikidata-json", shared_data / "formats/wikidata_json/wdtk_mock-dump-with-bugs.json",
                 "--max-errors", "0")
    assert result.exit_code == 7
    assert "exceeded --max-errors 0" in result.output
    rejects = json.loads(run("rejects", store, "--format", "json").output)
    assert rejects and all(r["reason"] for r in rejects)
    assert json.loads(run("stats", store, "--format", "json").output)["triples"] > 0


def test_tables_print_brackets_in_titles_and_values_as_written(capsys):
    # rich reads "[cambridge]" as markup unless it is given as Text; a linked mention or a
    # "[ENT: ...]" refusal would lose its words.
    from kgstore.cli._common import emit_rows

    emit_rows([{"value": "[ENT: Barack Obama]"}], ["value"], "table", title="Entities for 'born in [cambridge]'")
    out = capsys.readouterr().out
    assert "[cambridge]" in out and "[ENT: Barack Obama]" in out


@pytest.mark.parametrize("debug", [False, True])
def test_a_fault_in_kgstore_itself_is_one_line_not_a_traceback(demo_store, debug):
    """A bug (here: a division by zero put into ``Store.stats``) that no error of the tree
    names is said in one line with exit code 70; ``KGSTORE_DEBUG=1`` shows the traceback."""
    import os
    import subprocess
    import sys

    path, _ = demo_store
    code = ("import sys, kgstore; kgstore.Store.stats = lambda self: 1 / 0\n"
            "from kgstore.cli import main; sys.argv[0] = 'kgstore'; main()")
    env = {k: v for k, v in os.environ.items() if k != "KGSTORE_DEBUG"} | ({"KGSTORE_DEBUG": "1"} if debug else {})
    proc = subprocess.run([sys.executable, "-c", code, "stats", str(path)], capture_output=True, text=True,
                          timeout=60, env=env)
    if debug:
        assert proc.returncode == 1 and "Traceback" in proc.stderr and "ZeroDivisionError" in proc.stderr
    else:
        assert proc.returncode == 70, proc.stderr
        assert proc.stderr.startswith("Error: internal error (a bug in kgstore; please report it): "
                                      "ZeroDivisionError: division by zero; run again with KGSTORE_DEBUG=1")
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1

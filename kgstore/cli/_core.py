"""Core commands: init, ingest, stats, sparql, entity, rejects, runs."""
from __future__ import annotations

import contextlib
import json
import sys

import click

from .._ingest import IngestProgress, ingest
from .._literal_text import literal_text
from .._malloc import limit_malloc_arenas
from .._registry import LOADERS
from .._store import Store
from ..config import StoreConfig
from ..records import LoadOptions
from ..terms import KG, KGR
from ._common import STORE_ARG, emit_mapping, emit_rows, format_option, open_store, stderr_console


@click.command("init")
@STORE_ARG
@click.option("--languages", default="en", show_default=True,
              help="Comma-separated language codes whose labels and descriptions are kept.")
@click.option("--graph-backend", type=click.Choice(["ladybug", "neo4j"]), default="ladybug", show_default=True,
              help="Property-graph backend for `kgstore graph sync` and `kgstore cypher`.")
@click.option("--endpoint", metavar="URL",
              help="Keep no triples here: read them from this SPARQL endpoint (read-only), e.g. "
                   "http://127.0.0.1:8890/sparql; then run `kgstore sync STORE` to build the catalog.")
@click.option("--graph", "graph_iri", metavar="IRI", help="With --endpoint: the graph to read (default-graph-uri).")
@click.option("--token", envvar="KGSTORE_ENDPOINT_TOKEN", help="With --endpoint: a Bearer token.")
@click.option("--user", help="With --endpoint: the user for HTTP basic auth.")
@click.option("--password", envvar="KGSTORE_ENDPOINT_PASSWORD", help="With --endpoint and --user: the password.")
def init_cmd(store, languages, graph_backend, endpoint, graph_iri, token, user, password):
    """Create an empty store in directory STORE.

    The directory gets an Oxigraph triple store, a DuckDB catalog and a kgstore.toml
    config you can edit (prefixes, languages, backends, index and LLM settings).

    \b
    With --endpoint the triples stay in a SPARQL endpoint (Virtuoso, Oxigraph server,
    QLever...): init probes what it supports and caps and records that in kgstore.toml;
    the token or password is kept in STORE/endpoint-credentials.json (mode 0600).
    """
    config = StoreConfig(languages=_split(languages))
    config.graph.backend = graph_backend
    if endpoint is None:
        if graph_iri or token or user or password:
            raise click.UsageError("--graph, --token, --user and --password go with --endpoint")
        Store.init(store, config=config).close()
        click.echo(f"Created store {store} (languages: {', '.join(config.languages)})")
        return
    from .._endpoint import save_credentials
    from .._endpoint_client import EndpointAuth, EndpointClient
    from .._endpoint_probe import probe_endpoint
    from .._sync import reads_ntriples

    if token and user:
        raise click.UsageError("give --token or --user/--password, not both")
    config.endpoint.url, config.endpoint.graph, config.endpoint.user = endpoint, graph_iri or "", user or ""
    client = EndpointClient(endpoint, auth=EndpointAuth(token or "", user or "", password or ""),
                            timeout_s=config.endpoint.timeout_s, retries=1)
    try:
        config.endpoint_capabilities = caps = probe_endpoint(client)
    finally:
        client.close()
    with Store.init(store, config=config):
        save_credentials(store, token=token or "", password=password or "")
    click.echo(f"Created store {store} over the SPARQL endpoint {endpoint}"
               + (f" (graph {graph_iri})" if graph_iri else ""))
    click.echo(f"  server: {caps.server or 'unknown'}; COUNT(DISTINCT): {_yes(caps.count_distinct)}; "
               f"language filters: {_yes(caps.lang_filter)}; keyset paging: {_yes(caps.keyset_paging)}")
    cap = f"{caps.result_cap:,} rows" if caps.result_cap else "none seen"
    reads = "N-Triples" if reads_ntriples(caps, graph_iri) else caps.results_format.upper()
    click.echo(f"  result cap: {cap}; per-query timeout parameter: {caps.timeout_param or 'not honoured'}; "
               f"sync reads {reads} in pages of {caps.page_rows:,} rows")
    click.echo(f"Next: kgstore sync {store}")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _split(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


@click.command("ingest")
@STORE_ARG
@click.argument("format", metavar="FORMAT", type=click.Choice(sorted(LOADERS)))
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--languages", help="Comma-separated languages to keep (default: the store's languages).")
@click.option("--properties", help="Allowlist of relation ids to keep, e.g. P31,P279,P17.")
@click.option("--entities", "entities_file", type=click.Path(exists=True, dir_okay=False),
              help="File with one entity id per line: keep only these entities.")
@click.option("--statements", type=click.Choice(["truthy", "full"]), default="truthy", show_default=True,
              help="Wikidata: 'full' also keeps p:/ps:/pq: statement nodes with ranks and qualifiers.")
@click.option("--namespace", default=KG, show_default=True, help="tsv: namespace for minted entity IRIs.")
@click.option("--separator", type=click.Choice(["tab", "pipe"]), help="tsv: column separator (default: guessed).")
@click.option("--batch-size", type=click.IntRange(1), default=5000, show_default=True,
              help="Entities (JSON) or lines per committed batch; a checkpoint follows each batch.")
@click.option("--max-errors", type=click.IntRange(0), default=None,
              help="Fail (non-zero exit) once more than N malformed lines were seen.")
@click.option("--force", is_flag=True, help="Load the file again even if it was loaded before.")
@click.option("--graph", "mirror_graph", is_flag=True,
              help="Mirror the store into the property graph: with the neo4j backend as the ingest goes "
                   "(what each committed batch changed), with ladybug once at the end.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Summary format.")
@click.pass_context
def ingest_cmd(ctx, store, format, path, languages, properties, entities_file, statements, namespace,
               separator, batch_size, max_errors, force, mirror_graph, fmt):
    """Load PATH (plain, .gz or .bz2) in FORMAT into STORE.

    \b
    FORMAT is one of:
      wikidata-json  Wikidata JSON dump (latest-all.json.gz/.bz2) or entity documents
      wikidata-rdf   Wikidata truthy N-Triples or full Turtle
      freebase       Freebase RDF dump (freebase-rdf-latest.gz)
      tsv            subject<TAB>relation<TAB>object or subject|relation|object lines

    Malformed lines are quarantined (see `kgstore rejects STORE`) and loading goes on.
    An interrupted ingest resumes from its last checkpoint when run again; a finished
    file is skipped unless --force.
    """
    limit_malloc_arenas()  # before the store's threads exist (see kgstore/_malloc.py)
    st = open_store(ctx, store, read_only=False)
    options = LoadOptions(
        languages=tuple(_split(languages) or st.config.languages),
        properties=frozenset(_split(properties)) if properties else None,
        entities=frozenset(_read_ids(entities_file)) if entities_file else None,
        statements=statements,
        namespace=namespace,
        relation_namespace=KGR if namespace == KG else namespace.rstrip("/#") + "/relation/",
        separator={"tab": "\t", "pipe": "|", None: None}[separator],
        batch_size=batch_size,
    )
    held_entities = format in ("wikidata-json", "wikidata-rdf") and _holds_entities(st)
    mirror = None
    if mirror_graph:
        from ..graph import GraphMirror

        mirror = GraphMirror(st)
    with contextlib.ExitStack() as stack:
        if mirror is not None:
            stack.enter_context(mirror)
        with _progress_bar(path) as on_progress:
            summary = ingest(st, format, path, options=options, force=force, max_errors=max_errors,
                             progress=on_progress, on_commit=mirror.committed if mirror else None)
        if summary.status == "skipped":
            click.echo(f"{path} was already loaded (run {summary.run_id}); nothing to do. "
                       "Use --force to load it again.")
        else:
            _ingest_summary(summary, path, format, store, fmt)
            if held_entities:
                click.echo(f"Note: ingest adds. Entities of {path} that {store} already held were merged with "
                           f"their older versions, not replaced; `kgstore update {store} {path}` replaces "
                           "them (docs/keeping-current.md).", err=True)
        if mirror is not None:
            # Also after a skipped file: an ingest killed after its last commit resumes here.
            report = mirror.finish()
            click.echo(f"Property graph ({report.mode} sync, {len(mirror.syncs)} in all): {report}")


def _holds_entities(st: Store) -> bool:
    with st.catalog.connect() as con:
        return con.execute("SELECT EXISTS (SELECT 1 FROM entities)").fetchone()[0]


def _ingest_summary(summary, path, format, store, fmt) -> None:
    info = {"file": path, "format": format, "run": summary.run_id, "status": summary.status,
            "seconds": round(summary.seconds, 2)}
    if summary.resumed_from_line:
        info["resumed_from_line"] = summary.resumed_from_line
    info.update(summary.counts)
    if summary.seconds > 0:
        info["triples_per_s"] = round(summary.counts.get("triples", 0) / summary.seconds)
    emit_mapping(info, fmt, title="Ingest summary")
    if summary.rejected:
        click.echo(f"{summary.rejected} malformed line(s) skipped; see `kgstore rejects {store}`.", err=True)


def _read_ids(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [ln.strip().rsplit("/", 1)[-1] for ln in f if ln.strip() and not ln.startswith("#")]


class _progress_bar:
    """A rich progress bar on stderr (bytes of the file, entities/s, triples/s)."""

    def __init__(self, path: str):
        self.path = path
        self.progress = None

    def __enter__(self):
        if not sys.stderr.isatty():
            return None
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(),
                                 TextColumn("{task.fields[rates]}"), TimeRemainingColumn(),
                                 console=stderr_console(), transient=False)
        self.progress.start()
        self.task = self.progress.add_task(self.path.rsplit("/", 1)[-1], total=None, rates="")
        return self.update

    def update(self, p: IngestProgress) -> None:
        secs = max(p.seconds, 1e-6)
        rates = (f"{p.counts.get('entities', 0) / secs:,.0f} entities/s  "
                 f"{p.counts.get('triples', 0) / secs:,.0f} triples/s  {p.counts.get('rejected', 0)} rejected")
        self.progress.update(self.task, completed=p.raw_position, total=p.total_size, rates=rates)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()


@click.command("stats")
@STORE_ARG
@format_option("table", "json")
@click.pass_context
def stats_cmd(ctx, store, fmt):
    """Counts of triples, facts, entities, relations, ingest runs and rejected lines."""
    st = open_store(ctx, store)
    emit_mapping(st.stats(), fmt, title=f"Store {store}")


@click.command("sparql")
@STORE_ARG
@click.argument("query")
@format_option("table", "json", "csv")
@click.pass_context
def sparql_cmd(ctx, store, query, fmt):
    """Run a read-only SPARQL 1.1 QUERY (SELECT, ASK, CONSTRUCT, DESCRIBE).

    The store's prefixes (wd:, wdt:, p:, ps:, pq:, rdfs:, schema:, fb:, kg:, ...) are
    predeclared. Pass '-' as QUERY to read it from standard input.

    \b
    --format json prints the standard SPARQL 1.1 Query Results JSON document.
    Example:
      kgstore sparql ./mystore 'SELECT ?x ?l WHERE { wd:Q42 wdt:P69 ?x . ?x rdfs:label ?l }'
    """
    import pyoxigraph as ox

    if query == "-":
        query = sys.stdin.read()
    st = open_store(ctx, store)
    if fmt == "json":
        sys.stdout.write(st.query_json(query).decode("utf-8") + "\n")
        return
    result = st.query(query)
    if isinstance(result, ox.QueryBoolean):
        click.echo("true" if bool(result) else "false")
        return
    if isinstance(result, ox.QueryTriples):
        for t in result:
            click.echo(f"{t.subject} {t.predicate} {t.object} .")
        return
    columns = [v.value for v in result.variables]
    rows = [{c: _term_text(sol[c], st, fmt) for c in columns} for sol in result]
    emit_rows(rows, columns, fmt)


def _term_text(term, store: Store, fmt: str) -> str | None:
    """A cell: IRIs with the store's prefixes; literals as they are, but a date in the
    table as people read it (``1952-03-11``; CSV, for programs, keeps the lexical form)."""
    import pyoxigraph as ox

    from ..terms import shorten

    if term is None:
        return None
    if isinstance(term, ox.Literal):
        return literal_text(term.value, term.datatype.value) if fmt == "table" else term.value
    if isinstance(term, ox.NamedNode):
        return shorten(term.value, store.config.prefixes)
    return str(term)


@click.command("entity")
@STORE_ARG
@click.argument("ref")
@click.option("--limit", type=click.IntRange(1), default=200, show_default=True, help="Most facts to show.")
@format_option("table", "json")
@click.pass_context
def entity_cmd(ctx, store, ref, limit, fmt):
    """Show entity REF (Q42, wd:Q42, a full IRI or a short id): label, description,
    aliases and its outgoing facts with labels."""
    from ..terms import shorten

    st = open_store(ctx, store)
    view = st.entity(ref, max_facts=limit)
    if view is None:
        raise click.ClickException(f"no entity {ref!r} in {store}")
    pre = st.config.prefixes
    doc = view.to_dict(pre)
    facts = doc["facts"]
    if fmt == "json":
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    click.echo(f"{view.label or '(no label)'}  [{shorten(view.iri, pre)}]")
    if view.description:
        click.echo(f"  {view.description}")
    if view.aliases:
        click.echo(f"  also known as: {', '.join(view.aliases)}")
    click.echo(f"  {len(view.facts)} outgoing facts shown, {view.incoming} incoming")
    if facts:
        rows = [{**f, "value": literal_text(f["value"], f["datatype"])} for f in facts]  # dates as people read them
        emit_rows(rows, ["relation", "relation_id", "value"], "table")


@click.command("rejects")
@STORE_ARG
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@format_option("table", "json", "csv")
@click.pass_context
def rejects_cmd(ctx, store, limit, fmt):
    """List malformed lines quarantined during ingest: file, line number, reason, text."""
    st = open_store(ctx, store)
    with st.catalog.connect() as con:
        rows = con.execute("SELECT file, line_no, reason, raw FROM rejected ORDER BY file, line_no LIMIT ?",
                           [limit]).fetchall()
    emit_rows([dict(zip(["file", "line", "reason", "raw"], r)) for r in rows],
              ["file", "line", "reason", "raw"], fmt)


@click.command("runs")
@STORE_ARG
@format_option("table", "json", "csv")
@click.pass_context
def runs_cmd(ctx, store, fmt):
    """List ingest runs: file, format, status, checkpoint line, counts."""
    st = open_store(ctx, store)
    with st.catalog.connect() as con:
        rows = con.execute("SELECT run_id, file, format, status, checkpoint_line, counts, error "
                           "FROM ingest_runs ORDER BY run_id").fetchall()
    cols = ["run", "file", "format", "status", "checkpoint_line", "counts", "error"]
    emit_rows([dict(zip(cols, r)) for r in rows], cols, fmt)

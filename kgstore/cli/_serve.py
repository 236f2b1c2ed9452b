"""`kgstore serve`: the store over HTTP (SPARQL 1.1 Protocol, JSON endpoints, a web page)."""
from __future__ import annotations

import click

from ._common import STORE_ARG, other_stores, warn_if_exposed


@click.command("serve")
@STORE_ARG
@click.argument("ask_stores", nargs=-1, type=click.Path(file_okay=False, path_type=str), metavar="[STORE...]")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback exposes the store to the network: add --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=7878, show_default=True)
@click.option("--token", envvar="KGSTORE_TOKEN", default=None,
              help="Require 'Authorization: Bearer TOKEN' on every data request (all but /health and the "
                   "page's own files; the page asks for the token once per tab). Or set KGSTORE_TOKEN.")
@click.option("--cors", "cors", multiple=True, metavar="ORIGIN",
              help="Allow browser pages from ORIGIN (repeatable). CORS is off by default.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.001), default=None,
              help="Seconds a SPARQL query may run (default: [sparql] timeout_s in kgstore.toml, 30).")
@click.option("--max-rows", type=click.IntRange(0), default=None,
              help="Rows a SPARQL result keeps at most; more are cut and the X-Kgstore-Truncated header "
                   "says so (default: [sparql] max_rows, 10000).")
@click.option("--max-body", "max_body_bytes", type=click.IntRange(1), default=1_000_000, show_default=True,
              help="Largest request body in bytes; larger ones get 413.")
@click.option("--query-workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Threads that run SPARQL queries (a query past its limit keeps one until its next row).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Processes answering on the port: SPARQL is served on that many cores. Each loads "
                   "its own model on its first /ask; /reload reaches them all.")
@click.option("--http", "http_server", type=click.Choice(["uvicorn", "granian"]), default="uvicorn",
              show_default=True,
              help="The HTTP server. granian (pip install granian) parses HTTP in Rust threads: SPARQL "
                   "lookups were answered about 15% faster (docs: Serving benchmark); one process only.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              default="info", show_default=True)
def serve_cmd(store, ask_stores, host, port, token, cors, timeout_s, max_rows, max_body_bytes, query_workers, workers,
              http_server, log_level):
    """Serve STORE over HTTP, read-only, until Ctrl-C; /ask also answers from the other
    STOREs given (several stores: each fact marked with its store, see `kgstore ask --help`).

    \b
    Open http://127.0.0.1:7878/ in a browser for the page: a SPARQL editor (YASGUI, the
    store's prefixes predeclared, results as CSV or JSON), search and entity linking,
    entity pages (/ui/entity/Q42) and Ask (the answer, its query and its evidence as a
    table and a graph, with the model's queue shown). It works offline: its libraries
    ship inside kgstore. With --token it asks for the token and sends it on each request.

    \b
    Endpoints (http://127.0.0.1:7878 by default):
      /sparql          SPARQL 1.1 Protocol: GET ?query=, POST form, POST application/sparql-query;
                       results as JSON (default), XML, CSV, TSV; graphs as Turtle or N-Triples
      /search          ?q=TEXT&kind=triples|entities|relations|statements|uris&k=10
      /link            ?q=QUESTION or ?q=[mention]&k=10
      /entity/ID       an entity's label, description, aliases and facts (Q42, wd:Q42, an IRI);
                       &incoming=N adds the facts pointing at it, &qualifiers=true their qualifiers
      /ask             POST {"question": "...", "method": "pseudo-graph"}: the JSON of `kgstore ask`
      /ask/methods     the QA methods /ask takes, and the default
      /ask/queue       questions running and waiting for the model (?ticket= for one of them)
      /prefixes        the prefixes every query has predeclared
      /stats /health   counts; liveness
      /reload          POST: serve the data written since start (by `kgstore ingest`)

    \b
    The server keeps serving the snapshot it opened; `kgstore ingest` may write meanwhile,
    and POST /reload picks the new data up. Updates, LOAD and SERVICE are refused (403;
    SERVICE is allowed by [sparql] allow_service = true in kgstore.toml).

    \b
    Examples:
      kgstore serve ./mystore                  # then open http://127.0.0.1:7878/
      kgstore serve ./mystore --http granian   # the faster HTTP server, one process
      kgstore serve ./wikidata ./freebase      # SPARQL on ./wikidata; /ask reads both
      curl -H 'Accept: application/sparql-results+json' \\
           'http://127.0.0.1:7878/sparql?query=SELECT+*+WHERE+{+?s+?p+?o+}+LIMIT+3'
      curl 'http://127.0.0.1:7878/search?kind=triples&q=mountains+in+Nepal&k=5'
    """
    try:
        from ..server import ServeOptions, serve
    except ModuleNotFoundError as exc:
        raise click.ClickException(f"`kgstore serve` needs the serve extra ({exc.name} is missing): "
                                   "pip install 'kgstore[serve]'") from exc
    warn_if_exposed(host, token)
    options = ServeOptions(host=host, port=port, token=token, cors_origins=tuple(cors), timeout_s=timeout_s,
                           max_rows=max_rows, max_body_bytes=max_body_bytes, query_workers=query_workers,
                           workers=workers, http=http_server, ask_stores=other_stores(store, ask_stores))
    serve(store, options, log_level=log_level, announce=lambda line: click.echo(line, err=True))

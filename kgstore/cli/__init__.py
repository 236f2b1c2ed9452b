"""The ``kgstore`` command line. Commands are registered here by name and imported only
when run, so ``kgstore --help`` starts without loading torch, hnswlib or llama.cpp."""
from __future__ import annotations

import importlib

import click

from ..errors import InternalError, KgstoreError, showing_tracebacks

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module:attribute, one-line help shown by `kgstore --help`)
    "init": ("kgstore.cli._core:init_cmd", "Create an empty store directory."),
    "ingest": ("kgstore.cli._core:ingest_cmd", "Load a dump file (Wikidata JSON/RDF, Freebase, triples)."),
    "update": ("kgstore.cli._update:update_cmd", "Apply changed entity documents: each replaces its entity everywhere."),
    "delete": ("kgstore.cli._update:delete_cmd", "Delete entities from every part of a store."),
    "sync": ("kgstore.cli._sync:sync_cmd", "Build the catalog of a store over a SPARQL endpoint (or from its dump)."),
    "stats": ("kgstore.cli._core:stats_cmd", "Counts of triples, entities, relations, runs."),
    "sparql": ("kgstore.cli._core:sparql_cmd", "Run a read-only SPARQL 1.1 query."),
    "entity": ("kgstore.cli._core:entity_cmd", "Show an entity: label, description, aliases, facts."),
    "rejects": ("kgstore.cli._core:rejects_cmd", "List malformed lines quarantined during ingest."),
    "runs": ("kgstore.cli._core:runs_cmd", "List ingest runs with their status and checkpoints."),
    "export": ("kgstore.cli._export:export_cmd", "Write the store's triples as gzipped N-Triples for bulk loaders."),
    "graph": ("kgstore.cli._graph:graph_group", "Mirror the store into the property graph."),
    "cypher": ("kgstore.cli._graph:cypher_cmd", "Run a Cypher query on the property graph."),
    "index": ("kgstore.cli._index:index_cmd", "Build or update the semantic (HNSW) indexes."),
    "search": ("kgstore.cli._index:search_cmd", "Search entities, relations, triples or statements by meaning."),
    "link": ("kgstore.cli._index:link_cmd", "Entity linking: candidates for a mention, with scores."),
    "ask": ("kgstore.cli._ask:ask_cmd", "Answer a question from the store, with evidence (or refuse)."),
    "eval": ("kgstore.cli._eval:eval_cmd", "Score a QA method on a dataset (Hits@1, F1, refusals...)."),
    "serve": ("kgstore.cli._serve:serve_cmd", "Serve the store over HTTP: SPARQL 1.1 Protocol, search, ask."),
    "mcp": ("kgstore.cli._mcp:mcp_cmd", "Serve the store to AI agents over MCP: SPARQL, search, ask."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        module_name, _, attr = entry[0].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("kgstore.cli."):
                return None  # a command whose module is not written yet
            raise
        return getattr(module, attr)

    def format_commands(self, ctx, formatter):
        # Help text from the table above, so listing commands imports nothing.
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KgstoreError as exc:
            raise _said(exc) from exc
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit, BrokenPipeError):
            raise  # click's own: usage errors, Ctrl-C, exit codes, a closed pipe (`| head`)
        except Exception as exc:
            # a fault no error of the tree names: one line that says so, never a traceback
            # (KGSTORE_DEBUG=1 shows it)
            if showing_tracebacks():
                raise
            raise _said(InternalError(exc)) from exc


def _said(exc: KgstoreError) -> click.ClickException:
    """The error as click prints it: ``Error: ...`` on stderr, with the error's exit code."""
    err = click.ClickException(str(exc))
    err.exit_code = exc.exit_code
    return err


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kgstore")
def main():
    """kgstore: a local knowledge-graph store you can query with SPARQL and Cypher,
    search by meaning, and ask questions answered offline from its own data.

    \b
    A typical session:
      kgstore init ./mystore
      kgstore ingest ./mystore wikidata-json latest-all.json.bz2 --languages en
      kgstore stats ./mystore
      kgstore sparql ./mystore 'SELECT ?x WHERE { wd:Q42 wdt:P69 ?x }'
      kgstore entity ./mystore Q42
      kgstore index ./mystore
      kgstore ask ./mystore "Where was Douglas Adams educated?"

    Run `kgstore COMMAND --help` for the options of each command.
    """

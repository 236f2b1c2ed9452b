"""`kgstore graph sync|status` and `kgstore cypher`: the property-graph mirror of a store."""
from __future__ import annotations

import json
import sys

import click

from ._common import STORE_ARG, emit_mapping, emit_rows, format_option, open_store, stderr_console

BACKEND_OPTION = click.option(
    "--backend", type=click.Choice(["ladybug", "neo4j"]), default=None,
    help="Property-graph backend (default: [graph] backend in the store's kgstore.toml, else ladybug).")


@click.group("graph")
def graph_group():
    """Mirror the store into the property graph, and check the mirror.

    \b
    The embedded backend (Ladybug) keeps the graph in STORE/graph/ladybug.db; the Neo4j
    backend writes to the server named in kgstore.toml ([graph] neo4j_uri, or NEO4J_URI).
    Then query it with `kgstore cypher STORE 'MATCH ...'`.
    """


@graph_group.command("sync")
@STORE_ARG
@BACKEND_OPTION
@click.option("--full", is_flag=True, help="neo4j: send every row again (and delete what the server holds beyond "
                                          "them) instead of only what changed since the last sync.")
@format_option("table", "json")
@click.pass_context
def sync_cmd(ctx, store, backend, full, fmt):
    """Mirror STORE's triples into the property graph (safe to rerun).

    \b
    Every entity becomes an :Entity node (iri, id, label, description, popularity,
    is_mediator); every entity-to-entity fact a :REL relationship (pid, label, iri);
    every literal fact a :HAS_VALUE relationship to a :Literal node (value, datatype, lang).
    Ladybug rebuilds its file each time. Neo4j gets only what changed since the last
    sync (new or changed rows, and deletions of what the store no longer holds); the
    first sync, --full, or a server that no longer holds what the last sync left gets
    everything. Afterwards the graph holds exactly the store's rows.
    Example:
      kgstore graph sync ./mystore
      kgstore cypher ./mystore 'MATCH (a:Entity {id:"Q42"})-[r]->(b) RETURN r.label, b.label'
    """
    from ..graph import sync_graph

    # The writer lock: no ingest may change the catalog while it is being mirrored.
    st = open_store(ctx, store, read_only=False)
    with _SyncProgress() as on_progress:
        report = sync_graph(st, on_progress, backend=backend, full=full)
    if fmt == "json":
        emit_mapping(report.as_dict(), fmt)
        return
    c = report.counts
    emit_mapping({
        "backend": report.backend, "location": report.location, "mode": report.mode,
        "rows sent": report.upserted, "rows deleted": report.deleted,
        "entities": c.entities, "literals": c.literals, "edges (entity to entity)": c.edges,
        "values (entity to literal)": c.values, "seconds": round(report.seconds, 2),
        "export seconds": round(report.export_seconds, 2), "load seconds": round(report.load_seconds, 2),
        "relationships/s": round(report.edges_per_second),
    }, fmt, title="Graph sync")


@graph_group.command("export")
@STORE_ARG
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--neo4j-import", "neo4j_import", is_flag=True,
              help="Write CSV files for `neo4j-admin database import full` instead of Parquet.")
@click.option("--database", default="neo4j", show_default=True, help="--neo4j-import: the database the printed "
                                                                      "command imports into.")
@format_option("table", "json")
@click.pass_context
def export_cmd(ctx, store, directory, neo4j_import, database, fmt):
    """Write STORE's property graph as files in DIRECTORY: one per row set, in Parquet, or
    with --neo4j-import as CSV files for Neo4j's bulk importer.

    \b
    The bulk importer loads hundreds of millions of relationships into a new database far
    faster than `graph sync` can over Bolt. It needs the database stopped (or absent):
      kgstore graph export ./mystore /var/lib/neo4j/import/kg --neo4j-import
      neo4j-admin database import full neo4j --overwrite-destination --multiline-fields=true \\
        --nodes=.../Entity-header.csv,.../Entity.csv ...     (printed in full by this command)
      cypher-shell -f .../schema.cypher                      (indexes and constraints, once started)
    """
    from ..graph import export_parquet
    from ..graph._neo4j_import import export_neo4j_import, import_command

    st = open_store(ctx, store)
    if neo4j_import:
        files = export_neo4j_import(st, directory)
        info = {"directory": str(files.directory), **{f"{t} rows": n for t, n in files.rows.items()},
                "seconds": round(files.seconds, 2), "command": import_command(files, database),
                "then": f"cypher-shell -d {database} -f {files.schema_path}"}
    else:
        files = export_parquet(st, directory)
        info = {"directory": str(directory), **{f"{f.row_set.name} rows": f.rows for f in files.files},
                "seconds": round(files.seconds, 2)}
    emit_mapping(info, fmt, title="Graph export")


@graph_group.command("status")
@STORE_ARG
@BACKEND_OPTION
@format_option("table", "json")
@click.pass_context
def status_cmd(ctx, store, backend, fmt):
    """When STORE was last mirrored, what the graph holds, and whether ingests happened since."""
    from ..graph import open_graph
    from ..graph._export import catalog_state

    st = open_store(ctx, store)
    with open_graph(st, backend) as graph:
        last = graph.last_sync()
    if last is None:
        info = {"backend": backend or st.config.graph.backend, "synced": False,
                "hint": f"run `kgstore graph sync {store}`"}
    else:
        with st.catalog.connect() as con:
            current = catalog_state(con)
        info = {"backend": last["backend"], "synced": True, "synced_at": last.get("synced_at"),
                "location": last.get("location"), **last["counts"],
                "up_to_date": current == last.get("catalog_state")}
        if not info["up_to_date"]:
            info["hint"] = f"the store changed since; run `kgstore graph sync {store}`"
    emit_mapping(info, fmt, title=f"Property graph of {store}")


@click.command("cypher")
@STORE_ARG
@click.argument("query")
@format_option("table", "json", "csv")
@click.option("--param", "-p", "params", multiple=True, metavar="NAME=VALUE",
              help="A query parameter ($NAME); VALUE is read as JSON when it parses, else as a string.")
@click.option("--write", is_flag=True, help="Allow queries that write (CREATE, MERGE, SET, DELETE, ...).")
@BACKEND_OPTION
@click.pass_context
def cypher_cmd(ctx, store, query, fmt, params, write, backend):
    """Run a Cypher QUERY on STORE's property graph (read-only unless --write).

    Run `kgstore graph sync STORE` first. Pass '-' as QUERY to read it from standard input.
    --format json prints a list of rows, each an object keyed by the returned column names.

    \b
    Schema: (:Entity {iri, id, label, description, popularity, is_mediator})
              -[:REL {pid, label, iri}]->(:Entity)
              -[:HAS_VALUE {pid, label, iri}]->(:Literal {value, label, datatype, lang})
    Examples:
      kgstore cypher ./mystore 'MATCH (a:Entity {id:"Q42"})-[r]->(b) RETURN r.label, b.label LIMIT 10'
      kgstore cypher ./mystore 'MATCH (a:Entity {id: $id})-[:REL]->()-[r:REL]->(c) RETURN DISTINCT c.label' -p id=Q42
    """
    from ..graph import open_graph

    if query == "-":
        query = sys.stdin.read()
    # Writes take the store's writer lock, so they never race a sync.
    st = open_store(ctx, store, read_only=not write)
    with open_graph(st, backend) as graph:
        rows = graph.query(query, _parse_params(params), write=write)
        columns = list(graph.last_columns) or (list(rows[0]) if rows else [])
    emit_rows(rows, columns, fmt)


def _parse_params(items: tuple[str, ...]) -> dict:
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--param")
        try:
            params[name.lstrip("$")] = json.loads(value)
        except json.JSONDecodeError:
            params[name.lstrip("$")] = value
    return params


class _SyncProgress:
    """A rich progress bar on stderr over the rows loaded, stage by stage."""

    def __init__(self):
        self.progress = None

    def __enter__(self):
        if not sys.stderr.isatty():
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=stderr_console(), transient=True)
        self.progress.start()
        self.task = self.progress.add_task("graph sync", total=None)
        return self.update

    def update(self, p) -> None:
        label = {"export": "exporting the catalog", "done": "done"}.get(p.stage, f"loading {p.stage}")
        self.progress.update(self.task, description=label, completed=p.done, total=p.total or None)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()

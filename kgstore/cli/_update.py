"""Keeping a store current: update (a file of changed entity documents) and delete."""
from __future__ import annotations

from dataclasses import replace

import click

from .._malloc import limit_malloc_arenas
from .._store import Store
from .._update import (UPDATE_FORMATS, delete_entities, derived_parts_behind, mark_derived_current,
                       store_load_options, update)
from ._common import STORE_ARG, emit_mapping, format_option, open_store


@click.command("update")
@click.argument("args", nargs=-1, metavar="STORE FILE")
@click.option("--input-format", "file_format", type=click.Choice(UPDATE_FORMATS), default=None,
              help="What FILE holds: Wikidata JSON entity documents, or entities' Wikidata RDF "
                   "(Special:EntityData/Q42.ttl). Default: RDF for .ttl/.nt files, else JSON.")
@click.option("--statements", type=click.Choice(["truthy", "full"]), default=None,
              help="Map documents as truthy or full statements (default: as the store's entities were loaded).")
@click.option("--drop-missing", is_flag=True,
              help="FILE is a newer FULL dump: delete the entities it no longer holds. Never use it with a "
                   "partial file or a change feed.")
@click.option("--batch-size", type=click.IntRange(1), default=5000, show_default=True,
              help="Documents per committed batch; a checkpoint follows each batch.")
@click.option("--no-graph", is_flag=True, help="Leave the property graph for a later `kgstore graph sync`.")
@click.option("--no-index", is_flag=True, help="Leave the semantic index for a later `kgstore index`.")
@click.option("--server", metavar="URL",
              help="Send FILE to a running `kgstore serve` at URL, which applies it and serves the new data "
                   "without a restart (give only FILE: the server knows its store).")
@click.option("--token", envvar="KGSTORE_TOKEN", help="With --server: the server's Bearer token.")
@format_option("table", "json")
@click.pass_context
def update_cmd(ctx, args, file_format, statements, drop_missing, batch_size, no_graph, no_index, server,
               token, fmt):
    """Apply FILE, changed entity documents, to STORE: each document REPLACES what the
    store holds from its entity, in every part (triples and statement nodes, labels,
    catalog rows and facts, popularity, the property graph, the index).

    \b
    FILE holds one JSON entity per line (what a script writes from Wikidata's recent
    changes, or a dump), or Wikidata's {"entities": {...}} shape, and may also say:
      {"id": "Q123", "missing": ""}          Q123 was deleted (as wbgetentities says)
      {"id": "Q123", "deleted": true}        the same
      {"id": "Q1", "redirects": {"from": "Q1", "to": "Q2"}}
                                             Q1 was merged into Q2: triples pointing at Q1
                                             move to Q2, and Q1 resolves to Q2
    Triples other entities hold about a replaced entity stay. `kgstore ingest` adds
    instead (dumps, Freebase, TSV). A malformed document is quarantined (`kgstore
    rejects`) and its entity keeps its old version. A killed update resumes when run
    again; a finished file is skipped.

    \b
    Examples:
      kgstore update ./mystore changes-2026-11-28.jsonl
      kgstore update ./mystore latest-all.json.gz --drop-missing      # refresh from a newer full dump
      kgstore update --server http://127.0.0.1:7878 --token T changes.jsonl
    """
    target, path = _store_and_file(args, server)
    file_format = file_format or _guess_format(path)
    if server:
        from ._remote_update import post_update

        post_update(server, path, token=token, file_format=file_format, fmt=fmt)
        return
    limit_malloc_arenas()
    st = open_store(ctx, target, read_only=False)
    options = replace(store_load_options(st, file_format), batch_size=batch_size,
                      **({"statements": statements} if statements else {}))
    with _progress(path) as on_progress:
        summary = update(st, file_format, path, options=options, drop_missing=drop_missing, progress=on_progress)
    if summary.status == "skipped":
        click.echo(f"{path} was already applied (run {summary.run_id}); nothing to do.")
    else:
        info = {"file": path, "run": summary.run_id, "status": summary.status, "seconds": round(summary.seconds, 2),
                **summary.counts}
        emit_mapping(info, fmt, title="Update summary")
        if summary.rejected:
            click.echo(f"{summary.rejected} malformed document(s) quarantined, their entities unchanged; "
                       f"see `kgstore rejects {target}`.", err=True)
    bring_derived_current(st, graph=not no_graph, index=not no_index)


@click.command("delete")
@STORE_ARG
@click.argument("ids", nargs=-1)
@click.option("--file", "ids_file", type=click.Path(exists=True, dir_okay=False),
              help="A file with one entity id (Q42, wd:Q42 or an IRI) per line.")
@click.option("--no-graph", is_flag=True, help="Leave the property graph for a later `kgstore graph sync`.")
@click.option("--no-index", is_flag=True, help="Leave the semantic index for a later `kgstore index`.")
@click.pass_context
def delete_cmd(ctx, store, ids, ids_file, no_graph, no_index):
    """Delete entities IDS (Q42, wd:Q42 or IRIs) from STORE, in every part: their triples,
    statement nodes, labels, catalog rows, graph nodes and index entries.

    Triples other entities hold about them stay (they belong to those entities).

    \b
    Examples:
      kgstore delete ./mystore Q4115189 Q13406268
      kgstore delete ./mystore --file deleted-ids.txt
    """
    wanted = list(ids)
    if ids_file:
        with open(ids_file, encoding="utf-8") as f:
            wanted += [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    if not wanted:
        raise click.UsageError("name the entities to delete: IDS or --file")
    st = open_store(ctx, store, read_only=False)
    counts = delete_entities(st, wanted)
    click.echo(f"Deleted {counts['deleted']} entit{'y' if counts['deleted'] == 1 else 'ies'}"
               + (f"; {counts['unknown']} not in the store" if counts["unknown"] else "") + ".")
    bring_derived_current(st, graph=not no_graph, index=not no_index)


def _store_and_file(args: tuple[str, ...], server: str | None) -> tuple[str | None, str]:
    """STORE and FILE; with --server only FILE (the server knows its store). STORE may come
    from KGSTORE_PATH."""
    import os

    if server:
        if len(args) != 1:
            raise click.UsageError("with --server give only FILE: the server applies it to the store it serves")
        target, path = None, args[0]
    elif len(args) == 2:
        target, path = args
    elif len(args) == 1 and os.environ.get("KGSTORE_PATH"):
        target, path = os.environ["KGSTORE_PATH"], args[0]
    else:
        raise click.UsageError("give STORE and FILE (or --server URL and FILE)")
    if not os.path.isfile(path):
        raise click.BadParameter(f"{path!r} is not a file", param_hint="FILE")
    return target, path


def _guess_format(path: str) -> str:
    name = path.lower().removesuffix(".gz").removesuffix(".bz2")
    return "wikidata-rdf" if name.endswith((".ttl", ".nt")) else "wikidata-json"


def bring_derived_current(st: Store, *, graph: bool, index: bool) -> None:
    """The property graph and the index follow the catalog, if they were built and an
    update changed it since they last did (also after an update killed before this)."""
    if not derived_parts_behind(st):
        return
    if graph:
        from ..graph import open_graph

        with open_graph(st) as g:
            if g.is_synced():
                report = g.sync(st)
                click.echo(f"Property graph ({report.mode} sync): {report}")
    if index:
        from indexer import Index, build_index

        with Index.open(st) as ix:
            kinds = ix.kinds
        if kinds:
            summary = build_index(st, kinds=kinds)
            click.echo(f"Index: embedded {summary.embedded} changed texts, {summary.added} entries added, "
                       f"{summary.deleted} marked deleted ({', '.join(kinds)}).")
    if graph and index:
        mark_derived_current(st)


class _progress:
    """Progress on stderr: the ingest's bar on a terminal, a line every few seconds elsewhere."""

    def __init__(self, path: str):
        from ._core import _progress_bar

        self.bar = _progress_bar(path)
        self.last = 0.0

    def __enter__(self):
        on_bar = self.bar.__enter__()
        return on_bar or self.line

    def line(self, p) -> None:
        import time

        if time.monotonic() - self.last < 5.0:
            return
        self.last = time.monotonic()
        share = f"{100 * p.raw_position / p.total_size:.0f}% of the file, " if p.total_size else ""
        click.echo(f"update: {share}{p.counts.get('documents', 0):,} documents, {p.counts.get('deleted', 0):,} "
                   f"deleted, {p.counts.get('rejected', 0):,} rejected, {p.seconds:.0f} s", err=True)

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

"""`kgstore sync`: the catalog of a store over a SPARQL endpoint, from the endpoint or from
the dump its engine was loaded from (``--from-dump``)."""
from __future__ import annotations

import sys

import click

from .._registry import LOADERS
from ._common import STORE_ARG, emit_mapping, format_option, open_store, stderr_console


@click.command("sync")
@STORE_ARG
@click.option("--from-dump", "dump", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Build the catalog from FILE, the dump the engine was loaded from, instead of reading the "
                   "endpoint (much faster; the endpoint is only spot-checked).")
@click.option("--dump-format", type=click.Choice(sorted(LOADERS)), default=None,
              help="The dump's format, as for `kgstore ingest` (default: guessed from its first lines).")
@click.option("--full", is_flag=True, help="Read the whole endpoint again even if its triple count is unchanged "
                                           "(with --from-dump: read the file again even if it was read before).")
@click.option("--page-rows", type=click.IntRange(1), default=None,
              help="Rows committed per page (default: what init probed; kept below the endpoint's result cap).")
@format_option("table", "json")
@click.pass_context
def sync_cmd(ctx, store, dump, dump_format, full, page_rows, fmt):
    """Build STORE's catalog (entities, labels, aliases, descriptions, relations,
    popularity) for a store whose triples live in a SPARQL endpoint (`kgstore init
    --endpoint`). Afterwards entity, search, link, index and ask work as on a store that
    was ingested.

    \b
    Two ways, with the same catalog at the end:
      kgstore sync STORE                       read the endpoint itself
      kgstore sync STORE --from-dump FILE      read the file the engine was loaded from

    Use --from-dump when you have that file (a Wikidata or Freebase dump, the tsv or
    N-Triples you bulk-loaded, `kgstore export --ntriples`): it is parsed as `kgstore
    ingest` parses it (same formats, same speed or better: nothing writes triples), and
    the endpoint is asked only whether it holds what the file holds (a sample of subjects,
    and its triple count). Without the file (someone else's engine) read the endpoint.

    Reading the endpoint goes in pages (one streamed SELECT where the endpoint caps no
    results, pages of whole subjects where it does), each committed with its cursor.
    Either way a sync that was stopped resumes where it stopped when run again; a sync
    after a finished one catches up (nothing to do when the endpoint's triple count, or
    the dump, is unchanged, unless --full).
    """
    if dump is not None:
        if page_rows is not None:
            raise click.UsageError("--page-rows is for reading the endpoint, not with --from-dump")
        from .._malloc import limit_malloc_arenas

        limit_malloc_arenas()  # before the store's threads exist, as `kgstore ingest` does
    st = open_store(ctx, store, read_only=False)
    if dump is not None:
        _sync_from_dump(st, dump, dump_format, full, fmt)
        return
    if dump_format is not None:
        raise click.UsageError("--dump-format goes with --from-dump FILE")
    from .._sync import sync

    with _SyncProgress() as on_progress:
        summary = sync(st, full=full, page_rows=page_rows, progress=on_progress)
    counts = summary.counts
    info = {"endpoint": summary.endpoint, "run": summary.run_id, "status": summary.status,
            "pages": counts.get("pages", 0),
            "subjects": counts.get("subjects", 0) if summary.subjects_counted else
            "not counted (the endpoint streams triples in no subject order)",
            "triples": counts.get("triples", 0), "facts": counts.get("facts", 0),
            "endpoint_triples": counts.get("endpoint_triples"), "seconds": round(summary.seconds, 2)}
    if summary.resumed_from_page:
        info["resumed_from_page"] = summary.resumed_from_page
    if summary.status == "done" and summary.seconds > 0:
        if summary.subjects_counted:
            info["subjects_per_s"] = round(summary.subjects_per_s)
        info["triples_per_s"] = round(summary.triples_per_s)
    emit_mapping(info, fmt, title="Sync summary")


def _sync_from_dump(st, dump: str, dump_format: str | None, full: bool, fmt: str) -> None:
    from .._sync_dump import sync_from_dump
    from ._core import _progress_bar

    with _progress_bar(dump) as on_progress:
        summary = sync_from_dump(st, dump, dump_format, force=full, progress=on_progress)
    load, check = summary.load, summary.check
    info = {"endpoint": st.triples.location, "dump": dump, "format": load.format, "run": load.run_id,
            "status": "up to date" if load.status == "skipped" else load.status, "seconds": round(load.seconds, 2)}
    if load.resumed_from_line:
        info["resumed_from_line"] = load.resumed_from_line
    info.update(load.counts)
    if load.status == "done" and load.seconds > 0:
        info["triples_per_s"] = round(load.counts.get("triples", 0) / load.seconds)
    info["dump_triples"] = check.dump_triples
    info["endpoint_triples"] = check.endpoint_triples if check.endpoint_triples is not None else "not counted"
    info["sampled_subjects_found"] = f"{check.sampled - len(check.missing)} of {check.sampled}"
    emit_mapping(info, fmt, title="Sync summary (from the dump)")
    if check.warning():
        click.echo(f"Warning: {check.warning()}.", err=True)
    if load.rejected:
        click.echo(f"{load.rejected} malformed line(s) skipped; see `kgstore rejects {st.path}`.", err=True)


class _SyncProgress:
    """Progress on stderr: a live line on a terminal, else a line every 10 pages."""

    def __init__(self):
        self.progress = None

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.progress import Progress, SpinnerColumn, TextColumn

            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), console=stderr_console())
            self.progress.start()
            self.task = self.progress.add_task("sync")
        return self.update

    def update(self, p) -> None:
        if p.subjects is None:
            rate = p.triples / p.seconds if p.seconds > 0 else 0
            text = f"page {p.pages}: {p.triples:,} triples, {rate:,.0f} triples/s (after {p.cursor})"
        else:
            rate = p.subjects / p.seconds if p.seconds > 0 else 0
            text = (f"page {p.pages}: {p.subjects:,} subjects, {p.triples:,} triples, {rate:,.0f} subjects/s "
                    f"(after {p.cursor})")
        if self.progress is not None:
            self.progress.update(self.task, description=text)
        elif p.pages % 10 == 0:
            click.echo(text, err=True)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()

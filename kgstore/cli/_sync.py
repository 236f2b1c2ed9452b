"""`kgstore sync`: the catalog of a store over a SPARQL endpoint, from the endpoint."""
from __future__ import annotations

import sys

import click

from ._common import STORE_ARG, emit_mapping, format_option, open_store, stderr_console


@click.command("sync")
@STORE_ARG
@click.option("--full", is_flag=True, help="Read the whole endpoint again even if its triple count is unchanged.")
@click.option("--page-rows", type=click.IntRange(1), default=None,
              help="Rows committed per page (default: what init probed; kept below the endpoint's result cap).")
@format_option("table", "json")
@click.pass_context
def sync_cmd(ctx, store, full, page_rows, fmt):
    """Build STORE's catalog (entities, labels, aliases, descriptions, relations,
    popularity) from the SPARQL endpoint its triples live in (`kgstore init --endpoint`).

    Reads the endpoint in pages (one streamed SELECT where the endpoint caps no
    results, pages of whole subjects where it does) and commits each with its cursor:
    a sync that was stopped resumes after its last committed page, and a sync after a
    finished one catches up (nothing to do when the endpoint's triple count is
    unchanged, unless --full). Afterwards entity, search, link, index and ask work as
    on a store that was ingested.
    """
    from .._sync import sync

    st = open_store(ctx, store, read_only=False)
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

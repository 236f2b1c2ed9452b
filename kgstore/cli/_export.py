"""`kgstore export STORE DIR --ntriples`: a store's triples as files for a SPARQL engine's
bulk loader."""
from __future__ import annotations

import click

from .._export_ntriples import DEFAULT_PART_TRIPLES, ExportProgress, export_ntriples
from ._common import STORE_ARG, emit_mapping, format_option, is_interactive, open_store, stderr_console


@click.command("export")
@STORE_ARG
@click.argument("directory", type=click.Path(path_type=str))
@click.option("--ntriples", is_flag=True, help="Write gzipped N-Triples (the only format so far; required).")
@click.option("--part-triples", type=click.IntRange(1), default=DEFAULT_PART_TRIPLES, show_default=True,
              help="Triples per file; more files let a bulk loader (Virtuoso's ld_dir) read in parallel.")
@click.option("--force", is_flag=True, help="Replace the export DIRECTORY already holds (nothing else is removed).")
@format_option("table", "json")
@click.pass_context
def export_cmd(ctx, store, directory, ntriples, part_triples, force, fmt):
    """Write STORE's triples to DIRECTORY as part-00000.nt.gz, part-00001.nt.gz, ... and
    manifest.json (the files and their triple counts, written last).

    \b
    DIRECTORY must be empty or new (--force replaces an earlier export). Progress goes to
    stderr; the summary to stdout. Then bulk-load the files into a SPARQL engine and point
    kgstore at it (docs: "Bulk-loading into a SPARQL server"), e.g.:
      kgstore export ./mystore /data/kg-nt --ntriples
      isql-vt 1111 dba PASSWORD exec="ld_dir('/data/kg-nt', '*.nt.gz', 'https://example.org/kg');"
      isql-vt 1111 dba PASSWORD exec="rdf_loader_run();"     (Virtuoso; then exec="checkpoint;")
      oxigraph load --location /data/oxigraph --file /data/kg-nt/part-*.nt.gz
    """
    if not ntriples:
        raise click.UsageError("choose the format of the files: --ntriples")
    st = open_store(ctx, store)
    with _ExportProgress() as on_progress:
        summary = export_ntriples(st, directory, part_triples=part_triples, force=force, progress=on_progress)
    if fmt == "json":
        emit_mapping(summary.as_dict(), fmt)
        return
    info = {"directory": summary.directory, "triples": summary.triples, "files": len(summary.parts),
            "bytes": sum(p.bytes for p in summary.parts), "seconds": summary.seconds,
            "manifest": f"{summary.directory}/manifest.json"}
    if summary.named_graph_quads:
        info["not exported"] = f"{summary.named_graph_quads} quads in named graphs (N-Triples has no graphs)"
    emit_mapping(info, fmt, title="N-Triples export")


class _ExportProgress:
    """A bar on a terminal's stderr; otherwise one line on stderr per file written."""

    def __init__(self):
        self.progress = None

    def __enter__(self):
        if is_interactive():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeRemainingColumn(), console=stderr_console(), transient=True)
            self.progress.start()
            self.task = self.progress.add_task("exporting", total=None)
        return self.update

    def update(self, p: ExportProgress) -> None:
        if self.progress is not None:
            self.progress.update(self.task, description=f"part-{p.part:05d}", completed=p.done, total=p.total or None)
        elif p.part_done:
            click.echo(f"part-{p.part:05d}.nt.gz written ({p.done:,} of {p.total:,} triples)", err=True)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()

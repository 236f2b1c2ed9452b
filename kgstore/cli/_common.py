"""Shared pieces of the CLI: the STORE argument, opening stores, printing results."""
from __future__ import annotations

import contextlib
import csv
import io
import ipaddress
import json
import sys
from typing import Any, Callable, Iterable, Iterator, Sequence

import click

from .._store import Store

STORE_ARG = click.argument("store", type=click.Path(file_okay=False, path_type=str), envvar="KGSTORE_PATH")


def other_stores(store: str, more: tuple[str, ...]) -> tuple[str, ...]:
    """The stores `serve`'s /ask and `mcp`'s ask read beside STORE: each once, and not
    STORE again (a path that is no store fails when the server opens it)."""
    from pathlib import Path

    seen = [Path(store).resolve()]
    for path in more:
        if Path(path).resolve() in seen:
            raise click.UsageError(f"the store {path} is given twice")
        seen.append(Path(path).resolve())
    return tuple(more)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address to bind) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str, token: str | None) -> None:
    """The warning of the commands that serve the store (`kgstore serve`, `kgstore mcp
    --http`) when they bind beyond loopback without a token."""
    if not is_loopback(host) and not token:
        click.echo(f"Warning: serving on {host} without --token: anyone who can reach this address "
                   "can read the store.", err=True)


def format_option(*choices: str, default: str = "table"):
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=default, show_default=True,
                        help="Output format: a table for people, json/csv for programs.")


def open_store(ctx: click.Context, path: str, *, read_only: bool = True) -> Store:
    """Open ``path`` for the rest of the command; closed when the command ends. A writer
    that waits for another process's hold on the catalog says so on stderr, at once."""
    on_wait = None if read_only else (lambda wait: click.echo(str(wait), err=True))
    return ctx.with_resource(Store.open(path, read_only=read_only, on_wait=on_wait))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def emit_rows(rows: Sequence[dict], columns: Sequence[str], fmt: str, *, title: str | None = None) -> None:
    """Print ``rows`` (dicts keyed by ``columns``) as a table, a JSON list of objects, or CSV."""
    if fmt == "json":
        click.echo(json.dumps([{c: r.get(c) for c in columns} for r in rows], ensure_ascii=False, indent=2))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow([_cell(r.get(c)) for c in columns])
        click.echo(buf.getvalue(), nl=False)
    else:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        # Text, not str: rich would read "[cambridge]" in a title or a value as markup and drop it.
        table = Table(title=Text(title) if title else None, show_lines=False)
        for c in columns:
            table.add_column(c, overflow="fold")
        for r in rows:
            table.add_row(*[Text(_cell(r.get(c))) for c in columns])
        Console(width=max(100, Console().width)).print(table)


def emit_mapping(mapping: dict, fmt: str, *, title: str | None = None) -> None:
    if fmt == "json":
        click.echo(json.dumps(mapping, ensure_ascii=False, indent=2, default=str))
    else:
        emit_rows([{"name": k, "value": v} for k, v in mapping.items()], ["name", "value"], fmt, title=title)


def stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def is_interactive() -> bool:
    return sys.stderr.isatty()


@contextlib.contextmanager
def progress_bar(label: str, total: int, stats: str, *, done: int = 0, **fields) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr for a run of ``total`` questions (of which ``done`` are
    finished before it starts): the label, the bar, done/total, ``stats`` (a rich format
    string over ``task.fields``, e.g. ``"{task.fields[sec]:.1f} s/q"``) and the time left.
    Yields ``update(done, **fields)``; when stderr is not a terminal, no bar is drawn and
    ``update`` does nothing."""
    if not is_interactive():
        yield lambda done, **fields: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    # Output written meanwhile (JSON lines) must stay on stdout when that is a pipe; only a
    # terminal's stdout is routed above the bar.
    with Progress(TextColumn(f"[bold]{label}[/]"), BarColumn(), MofNCompleteColumn(), TextColumn(stats),
                  TimeRemainingColumn(), console=stderr_console(), redirect_stdout=sys.stdout.isatty()) as progress:
        task = progress.add_task(label, total=total, completed=done, **fields)
        yield lambda done, **fields: progress.update(task, completed=done, **fields)


def iter_nonempty(lines: Iterable[str]) -> Iterable[str]:
    return (ln.strip() for ln in lines if ln.strip())

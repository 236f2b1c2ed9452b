"""What `kgstore ask` and `kgstore eval` share: the method registry's names and help, -o
options, the store's model, a method made for a store, a status line."""
from __future__ import annotations

import contextlib
import json

import click

from ._common import is_interactive, stderr_console


def method_names() -> list[str]:
    from qa.methods import method_names

    return method_names()


def methods_help(prefix: str) -> str:
    from qa.methods import methods_help

    return f"{prefix} Methods: {methods_help()}."


def parse_options(pairs: tuple[str, ...]) -> dict:
    """``-o top_k=5 -o threshold=0.6`` → {"top_k": 5, "threshold": 0.6} (JSON values, else strings)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        try:
            out[key.strip().replace("-", "_")] = json.loads(value)
        except ValueError:
            out[key.strip().replace("-", "_")] = value
    return out


def load_llm(ctx, store):
    """The store's configured LLM, assembling the packaged model (with a progress bar) on
    first use. A program embedding the CLI may pass its own as ``obj={"llm": ...}``."""
    from qa.llm import llm_from_config

    if injected_llm(ctx) is not None:
        return injected_llm(ctx)
    if not is_interactive():
        return llm_from_config(store.config.llm)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    with Progress(TextColumn("assembling the packaged model"), BarColumn(), DownloadColumn(),
                  console=stderr_console(), transient=True) as progress:
        task = progress.add_task("model", total=None)
        return llm_from_config(store.config.llm,
                               progress=lambda done, total: progress.update(task, completed=done, total=total))


def injected_llm(ctx):
    """The model a program embedding the CLI passed as ``obj={"llm": ...}``, or None."""
    return ctx.obj.get("llm") if isinstance(ctx.obj, dict) else None


def make_method(store, llm, name: str, options: dict):
    from qa.methods import QAContext, make_method

    return make_method(name, QAContext(store=store, llm=llm), **options)


def method_over_stores(paths, stores, llm, name: str, options: dict):
    """Method ``name`` over one store, or over several with every fact marked with its
    store (each named after its directory, ``qa.multistore``)."""
    from qa.methods import QAContext
    from qa.multistore import StoreSource, method_over, store_names

    sources = [StoreSource(n, QAContext(store=s, llm=llm)) for n, s in zip(store_names(paths), stores)]
    return method_over(sources, name, options)


def status(message: str):
    if is_interactive():
        return stderr_console().status(message)
    return contextlib.nullcontext()

def checked_method(method: str | None) -> str:
    from qa.methods import DEFAULT_METHOD

    method = method or DEFAULT_METHOD
    if method not in method_names():
        from kgstore.errors import UnknownMethodError

        raise UnknownMethodError(method, method_names())
    return method

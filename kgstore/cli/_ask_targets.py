"""What `kgstore ask`'s positional arguments say: the stores to answer from and the
question. ``STORE QUESTION``; several stores, ``STORE1 STORE2 ... QUESTION`` (every
argument before the question names a store); ``STORE...`` with --questions;
``QUESTION`` with --server. STORE may come from KGSTORE_PATH instead."""
from __future__ import annotations

import os
from pathlib import Path

import click

_QUOTE_IT = 'put the question in quotes, e.g. kgstore ask ./mystore "Which countries does the Andes cover?"'


def ask_targets(targets: tuple[str, ...], *, server: str | None, many: bool) -> tuple[list[str], str | None]:
    """(stores, question) from the positional arguments; a UsageError for a combination
    that does not go together."""
    args = list(targets)
    if server:
        if many and args:
            raise click.UsageError("with --server and --questions, give no STORE or QUESTION: the server answers "
                                   "every question of FILE from its own store")
        if not many and len(args) >= 2:
            raise click.UsageError("with --server, the server answers from its own store: drop STORE "
                                   '(kgstore ask --server URL "QUESTION")')
        if not many and not args:
            raise click.UsageError('give the QUESTION to send (kgstore ask --server URL "QUESTION"), '
                                   "or --questions FILE")
        return [], (args[0] if args else None)
    env_store = os.environ.get("KGSTORE_PATH")
    if many:
        if len(args) >= 2 and not Path(args[-1]).is_dir():
            raise click.UsageError("give either QUESTION or --questions FILE, not both")
        if args:
            return checked_stores(args, question_given=False), None
        if env_store:
            return [env_store], None
        raise click.UsageError("give the STORE to answer from (kgstore ask STORE --questions FILE), "
                               "or --server URL to ask a running `kgstore serve`")
    if len(args) >= 2:
        return checked_stores(args[:-1], question_given=True), args[-1]
    if len(args) == 1 and env_store:
        return [env_store], args[0]
    raise click.UsageError(f"missing {'QUESTION' if args else 'STORE and QUESTION'}: "
                           'kgstore ask STORE "QUESTION" (several stores: kgstore ask STORE1 STORE2 "QUESTION"; '
                           "many questions: --questions FILE; a running server: --server URL)")


def checked_stores(stores: list[str], *, question_given: bool) -> list[str]:
    """``stores`` when each could be a store: with several, an argument that is no
    directory and has no path in it is most likely a word of an unquoted question; the
    same store twice is refused. A path that is no store fails when it is opened."""
    if len(stores) > 1:
        for store in stores:
            if not Path(store).is_dir() and os.sep not in store and not store.startswith((".", "~")):
                hint = (f"every argument before the QUESTION names a store; {_QUOTE_IT}" if question_given
                        else "with --questions, every argument names a store")
                raise click.UsageError(f"{store!r} is not a store directory: {hint}")
        resolved = [Path(s).resolve() for s in stores]
        twice = next((s for s, r in zip(stores, resolved) if resolved.count(r) > 1), None)
        if twice is not None:
            raise click.UsageError(f"the store {twice} is given twice")
    return stores

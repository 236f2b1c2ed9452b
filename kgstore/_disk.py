"""A full disk, said once: the shapes ENOSPC takes in the libraries that write a store
(OSError from Python and pyoxigraph, DuckDB's IOException, SQLite's SQLITE_FULL, text in a
RuntimeError) become
one :class:`~kgstore.errors.DiskFullError` that names the store and its disk.

``ingest`` and ``build_index`` are wrapped with :func:`disk_full_as_error`; everything they
committed before the error stays, and rerunning them once space is freed resumes.
"""
from __future__ import annotations

import errno
import functools
import os
from pathlib import Path

from .errors import DiskFullError, KgstoreError

_NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_NO_SPACE_WORDS = ("no space left on device", "disk quota exceeded", "database or disk is full")  # the last: SQLite


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, says the disk is full."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _NO_SPACE_ERRNOS:
            return True
        if any(words in str(exc).lower() for words in _NO_SPACE_WORDS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def mount_point(path: str | os.PathLike) -> str:
    """The mount point of the file system holding ``path``."""
    current = Path(os.path.abspath(path))
    while not current.exists():
        current = current.parent
    while not os.path.ismount(current):
        current = current.parent
    return str(current)


def disk_full_as_error(doing: str):
    """Decorate a function whose first argument is a store: ENOSPC while it runs raises
    DiskFullError("no space left on device while <doing> <store>...")."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(store, *args, **kwargs):
            try:
                return func(store, *args, **kwargs)
            except KgstoreError:
                raise
            except Exception as exc:
                if not is_disk_full(exc):
                    raise
                detail = " ".join(str(exc).split())
                raise DiskFullError(store.path, doing, mount=mount_point(store.path), detail=detail) from exc

        return wrapper

    return decorate

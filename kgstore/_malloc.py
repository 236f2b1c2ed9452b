"""Fewer glibc malloc arenas for a bulk load.

glibc gives each new thread that allocates an arena of its own, up to eight per core. An
ingest's threads (Oxigraph's loader threads, a DuckDB writer per commit group, the
catalog thread) each take one, and the memory freed in each stays mapped, so the
ingest's peak memory grew with the store: 1,030-1,060 MiB at 200,000 generated
Wikidata entities against 835 at 50,000; with two arenas 875-986 against 800-836, for
the same CPU (bench/ingest.py, README "Two malloc arenas").
"""
from __future__ import annotations

import ctypes
import os

M_ARENA_MAX = -8  # glibc's mallopt parameter number
INGEST_ARENAS = 2


def limit_malloc_arenas(arenas: int = INGEST_ARENAS) -> bool:
    """Cap this process's malloc arenas at ``arenas`` (process-wide, for its life).

    Call it before a store is opened for an ingest: threads already attached to an arena
    keep it. ``kgstore ingest`` does. :func:`kgstore.ingest` does not: the cap outlives
    the call, and a library call should not retune its caller's process. A
    ``MALLOC_ARENA_MAX`` in the environment wins and this does nothing; so does a C
    library without ``mallopt`` (musl, macOS). Returns whether the cap was set.
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_ARENA_MAX, int(arenas)))

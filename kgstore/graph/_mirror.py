"""Mirror while loading: ``kgstore ingest ... --graph`` keeps the property graph following
the ingest, batch after committed batch, instead of syncing once at the end.

With the Neo4j backend each call after a catalog commit runs an incremental sync (what
changed since the last one, see ``_delta``); the calls are spaced so that the syncs take at
most about a third of the ingest's time (their export and diff read the whole catalog),
and :meth:`GraphMirror.finish` catches up with the end. A killed ingest leaves the graph at
some committed point, or in the middle of a sync that the next one redoes; resuming the
ingest with ``--graph`` resumes the mirror, and the graph ends the same as after an
uninterrupted run. Ladybug rebuilds its whole file on each sync, so with it the mirror syncs
once, at the end.
"""
from __future__ import annotations

import time

from ._base import ProgressCallback, SyncReport

# Spacing of the syncs while loading: at least this many seconds, and at least this many
# times the last sync's duration.
MIN_INTERVAL_S = 2.0
SPACING = 2.0


class GraphMirror:
    """Use as ``kgstore.ingest(..., on_commit=mirror.committed)``, then ``mirror.finish()``.

    ``min_interval_s=0`` syncs after every commit (what the tests use to make the order of
    events certain)."""

    def __init__(self, store, backend: str | None = None, *, min_interval_s: float = MIN_INTERVAL_S,
                 progress: ProgressCallback | None = None):
        from . import open_graph

        self.store = store
        self.graph = open_graph(store, backend)
        self.min_interval_s = min_interval_s
        self.progress = progress
        self.follows_commits = self.graph.name != "ladybug"
        self.syncs: list[SyncReport] = []
        self._next_at = 0.0
        if self.follows_commits:
            self.graph.counts()  # an unreachable server or wrong password: say so before loading anything

    def committed(self) -> None:
        """A batch was committed to the catalog: send what changed, unless a sync ran
        too recently."""
        if not self.follows_commits or time.monotonic() < self._next_at:
            return
        self._sync()

    def finish(self) -> SyncReport:
        """Catch up with everything committed; returns the last sync's report."""
        report = self._sync()
        self.graph.close()
        return report

    def _sync(self) -> SyncReport:
        started = time.monotonic()
        report = self.graph.sync(self.store, progress=self.progress)
        self.syncs.append(report)
        took = time.monotonic() - started
        self._next_at = time.monotonic() + max(self.min_interval_s, SPACING * took) if self.min_interval_s else 0.0
        return report

    def close(self) -> None:
        self.graph.close()

    def __enter__(self) -> "GraphMirror":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

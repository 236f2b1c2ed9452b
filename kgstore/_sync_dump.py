"""The catalog of a store over a SPARQL endpoint, built from the dump its engine was
loaded from: :func:`sync_from_dump` (``kgstore sync STORE --from-dump FILE``).

Reading the dump is far cheaper than asking the engine for every subject
(:mod:`kgstore._sync`). The file goes through the loader of its format and the ingest
pipeline (:func:`kgstore._ingest.load_file`: a parsing worker on big files, catalog
commits in groups, a checkpoint after each), with the one stage that writes triples left
out: the engine holds them. So it resumes after a kill as ``ingest`` does, and a second
run of a finished file does nothing.

The engine is asked only whether it holds what the dump holds (:mod:`kgstore._dump_check`):
a sample of the dump's subjects, and its triple count where it can count.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ._disk import disk_full_as_error
from ._dump_check import EngineCheck, check_engine
from ._endpoint import EndpointTriples
from ._ingest import IngestSummary, ProgressCallback, load_file
from ._sniff import guess_format, head_lines
from ._store import Store
from .errors import EndpointMismatchError, IngestError, StoreError
from .records import LoadOptions

SAMPLE_SUBJECTS = 20


@dataclass
class DumpSyncSummary:
    """The ingest pipeline's summary of the file, and what the engine check found."""

    load: IngestSummary
    check: EngineCheck

    @property
    def status(self) -> str:
        return self.load.status


@disk_full_as_error("syncing the catalog of")
def sync_from_dump(store: Store, path: str | os.PathLike, fmt: str | None = None, *,
                   options: LoadOptions | None = None, force: bool = False, max_errors: int | None = None,
                   sample: int = SAMPLE_SUBJECTS, progress: ProgressCallback | None = None) -> DumpSyncSummary:
    """Build the catalog of ``store`` (over an endpoint, opened for writing) from ``path``,
    the file its engine was loaded from, in format ``fmt`` (None: guessed from its first
    lines); then check the engine against it (``sample`` subjects; 0 skips the check).

    Raises :class:`kgstore.errors.EndpointMismatchError` when sampled subjects are missing
    from the engine (the catalog stays built: the run is marked failed, and the next run,
    once the engine is loaded, only checks again)."""
    store._check_writable()
    access = store.triples
    if not isinstance(access, EndpointTriples):
        raise StoreError(f"{store.path} keeps its triples here, not in a SPARQL endpoint: `kgstore sync --from-dump` "
                         "builds the catalog of a store over an endpoint; use `kgstore ingest`")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    if fmt is None:
        fmt = guess_format(head_lines(path))
        if fmt is None:
            from ._registry import LOADERS

            raise IngestError(f"cannot tell the format of {path} from its first lines; name it "
                              f"(one of: {', '.join(sorted(LOADERS))})")
    load = load_file(store, fmt, path, options=options, force=force, max_errors=max_errors, progress=progress,
                     triples=False)
    check = check_engine(store, access, load.run_id, sample=sample, dump_triples=int(load.counts.get("triples", 0)))
    if check.missing:
        with store.catalog.transaction() as con:
            con.execute("UPDATE ingest_runs SET status = 'failed', error = ? WHERE run_id = ?",
                        ["the engine lacks sampled subjects of the dump", load.run_id])
        raise EndpointMismatchError(access.client.url, path, check.sampled, check.missing, check.warning())
    return DumpSyncSummary(load, check)


__all__ = ["sync_from_dump", "DumpSyncSummary", "SAMPLE_SUBJECTS"]

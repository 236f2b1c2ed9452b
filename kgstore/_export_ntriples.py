"""Exporting a store's triples as partitioned, gzipped N-Triples, the input every SPARQL
engine's bulk loader reads (Virtuoso's ``ld_dir``, ``oxigraph load``, ``qlever index``).

``DIR/part-00000.nt.gz``, ``part-00001.nt.gz``... hold ``part_triples`` triples each (the
last one fewer), in the store's index order; ``DIR/manifest.json`` lists them with their
counts and is written last, so a directory with a manifest holds a whole export. Each part
is written as ``part-NNNNN.nt.gz.tmp`` and renamed when complete: a bulk loader's
``*.nt.gz`` never matches a half-written file.

The triples are read from the store's default graph (where every loader writes) through
one lazy Oxigraph iterator on a snapshot, and serialized by Oxigraph itself: memory stays
bounded whatever the store's size, and an ingest running meanwhile is not seen.
"""
from __future__ import annotations

import gzip
import itertools
import json
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import pyoxigraph as ox

from ._disk import disk_full_as_error
from .errors import ExportError

__all__ = ["NTriplesExport", "ExportedPart", "ExportProgress", "export_ntriples", "DEFAULT_PART_TRIPLES",
           "MANIFEST_NAME"]

DEFAULT_PART_TRIPLES = 5_000_000  # ~40-60 MB gzipped on Wikidata-like data: a few parts per GB, loaders in parallel
MANIFEST_NAME = "manifest.json"
PART_PATTERN = "part-{:05d}.nt.gz"
# gzip level 6: within ~5% of level 9's size at about twice its speed on N-Triples
COMPRESS_LEVEL = 6
PROGRESS_EVERY = 100_000  # triples between progress reports


@dataclass
class ExportedPart:
    file: str  # the file name, relative to the export directory
    triples: int
    bytes: int


@dataclass
class ExportProgress:
    part: int  # index of the part being written
    done: int  # triples written so far, all parts
    total: int  # quads in the store (all graphs): the default graph's are what is written
    part_done: bool = False  # this report closes the part


@dataclass
class NTriplesExport:
    directory: str
    store: str
    triples: int = 0
    parts: list[ExportedPart] = field(default_factory=list)
    part_triples: int = DEFAULT_PART_TRIPLES
    named_graph_quads: int = 0  # quads outside the default graph: not exported (N-Triples has no graphs)
    seconds: float = 0.0
    exported_at: str = ""

    def as_dict(self) -> dict:
        return {"format": "N-Triples", "compression": "gzip", **asdict(self)}


def _our_files(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir()
            if p.name in (MANIFEST_NAME, MANIFEST_NAME + ".tmp") or (p.name.startswith("part-") and (p.name.endswith(".nt.gz")
                                                                           or p.name.endswith(".nt.gz.tmp")))]


def prepare_directory(directory: Path, *, force: bool) -> None:
    """Make ``directory`` ready for an export: created when missing; when it holds files,
    refused unless ``force``, which removes a previous export's files (parts and manifest)
    and refuses anything else, so that ``*.nt.gz`` in it is exactly this export."""
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"{directory} exists and is not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    present = list(directory.iterdir())
    if not present:
        return
    if not force:
        raise ExportError(f"{directory} is not empty ({len(present)} entries); choose an empty directory, or pass "
                          "--force to replace the export it holds")
    ours = _our_files(directory)
    others = sorted(p.name for p in present if p not in ours)
    if others:
        raise ExportError(f"{directory} holds files that are not a kgstore export ({', '.join(others[:3])}"
                          f"{'...' if len(others) > 3 else ''}); --force only replaces an export: choose another "
                          "directory")
    for path in ours:
        path.unlink()


@disk_full_as_error("exporting")
def export_ntriples(store, directory, *, part_triples: int = DEFAULT_PART_TRIPLES, force: bool = False,
                    progress: Callable[[ExportProgress], None] | None = None) -> NTriplesExport:
    """Write the triples of ``store``'s default graph to ``directory`` as gzipped N-Triples
    parts of ``part_triples`` triples each, then ``manifest.json``; returns the manifest."""
    if part_triples < 1:
        raise ExportError(f"part size must be at least 1 triple, not {part_triples}")
    started = time.monotonic()
    directory = Path(directory).absolute()  # the manifest names it for loader scripts run elsewhere
    prepare_directory(directory, force=force)
    rdf = store.rdf  # a store over a SPARQL endpoint has none, and says so
    total = store.triple_count()  # every quad; the default graph's share is counted while writing
    summary = NTriplesExport(str(directory), str(Path(store.path).absolute()), part_triples=part_triples)
    triples = (quad.triple for quad in rdf.quads_for_pattern(None, None, None, ox.DefaultGraph()))
    done = 0

    def counted(part: int, chunk: Iterator[ox.Triple]) -> Iterator[ox.Triple]:
        nonlocal done
        for triple in chunk:
            done += 1
            if progress and done % PROGRESS_EVERY == 0:
                progress(ExportProgress(part, done, total))
            yield triple

    for part in itertools.count():
        first = next(triples, None)
        if first is None:
            break
        name = PART_PATTERN.format(part)
        tmp = directory / (name + ".tmp")
        before = done
        with open(tmp, "wb") as raw, gzip.GzipFile(filename=name[:-3], mode="wb", fileobj=raw,
                                                   compresslevel=COMPRESS_LEVEL, mtime=0) as sink:
            chunk = itertools.chain([first], itertools.islice(triples, part_triples - 1))
            ox.serialize(counted(part, chunk), sink, ox.RdfFormat.N_TRIPLES)
        os.replace(tmp, directory / name)
        summary.parts.append(ExportedPart(name, done - before, (directory / name).stat().st_size))
        if progress:
            progress(ExportProgress(part, done, total, part_done=True))
    summary.triples = done
    summary.named_graph_quads = max(0, total - done)
    summary.seconds = round(time.monotonic() - started, 3)
    summary.exported_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest = directory / MANIFEST_NAME
    tmp = manifest.with_name(MANIFEST_NAME + ".tmp")
    tmp.write_text(json.dumps(summary.as_dict(), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, manifest)
    return summary

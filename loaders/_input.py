"""Reading dump files line by line: plain, .gz or .bz2, resumable at a byte offset."""
from __future__ import annotations

import bz2
import gzip
import os
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from kgstore.errors import TruncatedInputError
from kgstore.records import Checkpoint

READ_BUFFER = 1 << 20
# A UTF-8 byte order mark: editors on Windows write one at the start of text files. It is
# no part of the first record (JSON, N-Triples and a TSV name would all read it as one).
BOM = b"\xef\xbb\xbf"


@dataclass
class LineChunk:
    """Consecutive lines of a file: ``lines`` holds (line_no, raw bytes incl. newline)."""

    lines: list[tuple[int, bytes]]
    checkpoint: Checkpoint  # restart point just past the last line
    raw_position: int  # bytes of the (possibly compressed) file consumed so far


class DumpReader:
    """Decompressing reader that tracks line numbers and decompressed offsets.

    ``raw_position`` is how far into the file on disk reading has got, for progress bars.
    """

    def __init__(self, path: str | os.PathLike, start: Checkpoint | None = None):
        self.path = os.fspath(path)
        self.size = os.path.getsize(self.path)
        # Dump lines are ~12 KB: with open()'s default 8 KiB buffer, readline spends more
        # time in small reads than the lines take to copy (0.17 against 0.07 CPU s per
        # 250 MB of Wikidata JSON).
        self._raw = open(self.path, "rb", buffering=READ_BUFFER)
        self._stream: BinaryIO = _decompressing(self.path, self._raw)
        self.line_no = 0
        self.offset = 0
        if start is not None and start.offset:
            try:
                self._stream.seek(start.offset)
            except (EOFError, zlib.error, OSError) as exc:
                raise TruncatedInputError(self.path, start.line_no, f"cannot reach checkpoint: {exc}") from exc
            self.offset = start.offset
            self.line_no = start.line_no

    @property
    def raw_position(self) -> int:
        try:
            return self._raw.tell()
        except ValueError:
            return self.size

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        stream = self._stream
        while True:
            try:
                line = stream.readline()
            except (EOFError, zlib.error, OSError) as exc:
                raise TruncatedInputError(self.path, self.line_no, str(exc)) from exc
            if not line:
                return
            at_start = self.offset == 0
            self.line_no += 1
            self.offset += len(line)  # the BOM's bytes too: offsets are the file's
            yield self.line_no, line[3:] if at_start and line.startswith(BOM) else line

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.offset, self.line_no)

    def chunks(self, lines_per_chunk: int) -> Iterator[LineChunk]:
        """Lines grouped for batching. On truncation, the lines read so far come out as a
        last chunk before :class:`TruncatedInputError` is raised."""
        lines: list[tuple[int, bytes]] = []
        try:
            for item in self:
                lines.append(item)
                if len(lines) >= lines_per_chunk:
                    yield LineChunk(lines, self.checkpoint(), self.raw_position)
                    lines = []
        except TruncatedInputError:
            if lines:
                yield LineChunk(lines, self.checkpoint(), self.raw_position)
            raise
        if lines:
            yield LineChunk(lines, self.checkpoint(), self.raw_position)

    def read_rest(self) -> bytes:
        """The rest of the file (without a BOM when that is all of it)."""
        try:
            data = self._stream.read()
        except (EOFError, zlib.error, OSError) as exc:
            raise TruncatedInputError(self.path, self.line_no, str(exc)) from exc
        at_start = self.offset == 0
        self.offset += len(data)
        return data[3:] if at_start and data.startswith(BOM) else data

    def close(self) -> None:
        self._stream.close()
        self._raw.close()

    def __enter__(self) -> "DumpReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _decompressing(path: str, raw: BinaryIO) -> BinaryIO:
    head = raw.read(4)
    raw.seek(0)
    if head[:2] == b"\x1f\x8b" or path.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if head[:3] == b"BZh" or path.endswith(".bz2"):
        return bz2.BZ2File(raw, mode="rb")
    return raw


def open_decompressed(path: str | os.PathLike) -> BinaryIO:
    """A binary file object of the decompressed content (pyoxigraph cannot read .gz itself)."""
    path = os.fspath(path)
    return _decompressing(path, open(path, "rb"))

"""The answers of one query asked in consecutive row ranges (``OFFSET``/``LIMIT``
segments), read ahead by threads: :class:`SegmentReader` (`kgstore sync` of an endpoint
without a result cap).

Why threads: an engine may work out a whole answer before it sends the first byte
(Virtuoso spent 3.5 s on 288,713 triples, then sent them in 25 ms), so while kgstore
writes one segment's pages the engine should already be working on the next. ``readers``
segments are in flight at once, each over its own connection, each read by its thread
into a bounded queue of what ``produce`` makes of it (blocks of bytes, or pages decoded
by Arrow); the caller takes the segments in order. Waiting on a socket or a queue, and
Arrow's kernels, release the GIL: the threads' work overlaps the caller's catalog writes.

Segments grow from ``first_rows`` to ``max_rows``, doubling: a small first one so that
the engine's first answer comes soon, large later ones because each ``OFFSET`` is rows the
engine skips again (Oxigraph server about 0.35 µs a row).
"""
from __future__ import annotations

import io
import queue
import threading
from collections import deque
from typing import Callable, Iterator

BLOCK_BYTES = 1 << 20
QUEUE_BLOCKS = 16  # items read ahead per segment at most: 16 MB of bytes, or 16 pages of columns
_END = object()
_PUT_WAIT_S = 0.2  # how often a thread blocked on a full queue looks whether it was stopped


Produce = Callable[[int, int], Iterator]  # (offset, rows) -> what the segment's answer gives, item by item


class SegmentReader:
    """Segments of the answer from row ``offset`` on; ``produce(offset, rows)`` sends the
    query for one and yields what its answer gives, in its thread."""

    def __init__(self, produce: Produce, *, readers: int = 2, first_rows: int = 50_000,
                 max_rows: int = 2_000_000):
        self._produce = produce
        self.readers = max(1, readers)
        self._rows = max(1, min(first_rows, max_rows))
        self._max_rows = max_rows
        self._stop = threading.Event()
        self._flying: deque[tuple[int, int, queue.Queue, threading.Thread]] = deque()

    def segments(self, offset: int) -> Iterator[tuple[int, int, Iterator]]:
        """``(offset, rows asked for, items)`` in order, until the caller stops reading (a
        segment with fewer rows than asked for is the last one: the caller knows, by
        parsing it). Stops the threads when the caller is done or fails."""
        try:
            while True:
                while len(self._flying) < self.readers:
                    self._launch(offset)
                    offset += self._flying[-1][1]
                start, rows, blocks, _ = self._flying[0]
                yield start, rows, _items(blocks)
                self._flying.popleft()
        finally:
            self.close()

    def close(self) -> None:
        self._stop.set()
        for _, _, _, thread in self._flying:
            thread.join(timeout=5.0)
        self._flying.clear()

    def _launch(self, offset: int) -> None:
        rows = self._rows
        self._rows = min(self._rows * 2, self._max_rows)
        blocks: queue.Queue = queue.Queue(QUEUE_BLOCKS)
        thread = threading.Thread(target=self._read, args=(offset, rows, blocks), daemon=True,
                                  name=f"kgstore-segment-{offset}")
        thread.start()
        self._flying.append((offset, rows, blocks, thread))

    def _read(self, offset: int, rows: int, blocks: queue.Queue) -> None:
        try:
            for item in self._produce(offset, rows):
                if not self._put(blocks, item):
                    return
            self._put(blocks, _END)
        except BaseException as exc:  # handed to the caller, which raises it where it reads
            self._put(blocks, exc)

    def _put(self, blocks: queue.Queue, item) -> bool:
        while not self._stop.is_set():
            try:
                blocks.put(item, timeout=_PUT_WAIT_S)
                return True
            except queue.Full:
                continue
        return False


def _items(blocks: queue.Queue) -> Iterator:
    """What a segment's thread put in its queue, up to its end; what it raised, raised here."""
    while (item := blocks.get()) is not _END:
        if isinstance(item, BaseException):
            raise item
        yield item


def read_blocks(body: io.BufferedIOBase) -> Iterator[bytes]:
    """A ``produce`` of blocks of the answer's bytes, for :class:`SegmentFile`."""
    while block := body.read(BLOCK_BYTES):
        yield block


class SegmentFile(io.BufferedReader):
    """A segment's body as a file over the blocks of :func:`read_blocks`; ``error`` is what
    broke the reading, kept for the parser's caller (pyoxigraph raises OSError on it)."""

    def __init__(self, blocks: Iterator[bytes]):
        super().__init__(_Blocks(blocks), BLOCK_BYTES)

    @property
    def error(self) -> BaseException | None:
        return self.raw.error


class _Blocks(io.RawIOBase):
    def __init__(self, blocks: Iterator[bytes]):
        self._blocks = blocks
        self._pending = memoryview(b"")
        self._done = False
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            if self._done:
                return 0
            try:
                self._pending = memoryview(next(self._blocks))
            except StopIteration:
                self._done = True
                return 0
            except BaseException as exc:
                self.error = exc
                self._done = True
                raise
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


__all__ = ["SegmentReader", "SegmentFile", "read_blocks", "BLOCK_BYTES"]

"""Reading ahead: a loader parses the next batch in a thread while the store commits this one.

Committing a batch is mostly Oxigraph's ``bulk_load`` and DuckDB, which release the GIL, so
the Python parsing of the next batch runs meanwhile on the other core. Batches come out in
order, each with its own checkpoint, so resuming works as without read-ahead; an error in
the reader (a truncated file) comes out after the batches read before it.
"""
from __future__ import annotations

import queue
import threading
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

_ITEM, _DONE, _ERROR = 0, 1, 2
_JOIN_SECONDS = 30.0


def prefetched(make: Callable[[], Iterator[T]], depth: int = 1) -> Iterator[T]:
    """Iterate ``make()`` in a background thread, holding at most ``depth`` items ahead.

    Memory holds ``depth + 2`` items at most: the caller's, the waiting ones, and the one
    the thread is making.

    Closing the returned iterator early (the caller stops, or raises) stops the thread at
    its next item and closes ``make()``'s iterator there, so its files are closed.
    """
    items: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(message) -> bool:
        while not stop.is_set():
            try:
                items.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            source = make()
            try:
                for item in source:
                    if not put((_ITEM, item)):
                        return
            finally:
                close = getattr(source, "close", None)
                if close is not None:
                    close()
        except BaseException as exc:  # handed to the consumer, raised there
            put((_ERROR, exc))
            return
        put((_DONE, None))

    thread = threading.Thread(target=produce, name="kgstore-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = items.get()
            if kind == _ITEM:
                yield value
            elif kind == _DONE:
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join(_JOIN_SECONDS)

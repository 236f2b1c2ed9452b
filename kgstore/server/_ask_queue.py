"""The line of /ask requests in front of the one model, so that a client can show where
its question stands (``GET /ask/queue``).

A request may carry a ticket (any short string it picks, e.g. a random id): the queue
then says whether that ticket is waiting (and how many go before it) or running.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from typing import AsyncIterator

MAX_TICKET_CHARS = 64


class AskQueue:
    """First come, first served (``asyncio.Lock`` wakes its waiters in order)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._waiting: list[object] = []  # tickets (or anonymous markers), oldest first
        self._running: object | None = None
        self._running_since = 0.0

    @contextlib.asynccontextmanager
    async def turn(self, ticket: str | None = None) -> AsyncIterator[None]:
        """Wait for the model, hold it for the block, then let the next request in."""
        entry: object = ticket if ticket else object()
        self._waiting.append(entry)
        try:
            async with self._lock:
                self._waiting.remove(entry)
                self._running, self._running_since = entry, time.monotonic()
                try:
                    yield
                finally:
                    self._running = None
        finally:
            if entry in self._waiting:  # cancelled while waiting (the client went away)
                self._waiting.remove(entry)

    def status(self, ticket: str | None = None) -> dict:
        """``running`` (0 or 1), ``waiting`` (count) and, for a ticket, its ``state``
        (waiting, running or unknown: not seen, or already answered) and ``ahead`` (requests
        that go first, the running one included)."""
        running = self._running is not None
        doc: dict = {"running": int(running), "waiting": len(self._waiting),
                     "running_s": round(time.monotonic() - self._running_since, 1) if running else None}
        if ticket:
            if self._running == ticket:
                doc.update(state="running", ahead=0)
            elif ticket in self._waiting:
                doc.update(state="waiting", ahead=self._waiting.index(ticket) + int(running))
            else:
                doc.update(state="unknown", ahead=None)
        return doc

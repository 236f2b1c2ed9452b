"""POST /update: a served store is updated through its server, with no restart.

The body is a file of changed entity documents (what `kgstore update` reads). The server
keeps it under ``STORE/updates/`` (named by its content, so that a retry after a crash
resumes the same run), runs `kgstore update` on it in a child process, and then serves
the new snapshot.

No request fails, and none is answered from a mix of versions: every request that reads
the store (SPARQL, /search, /link, /entity, /stats, /ask) passes a :class:`ReadGate`. An
update closes it: requests in flight finish on the old data, new ones wait, the child
process gets the store to itself (a DuckDB file has one writer or many readers, never
both, and pyoxigraph calls a read-only handle beside a writing process undefined
behaviour), and once the new snapshot is open the waiting requests are answered from it.
They wait for the length of the update.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import subprocess
import sys
from pathlib import Path

UPDATES_DIR = "updates"
UPDATE_BODY_LIMIT = 512 * 1024 * 1024  # a day's feed is megabytes; the route is behind the token
SPARQL_UPDATE_TYPES = ("application/sparql-update", "application/x-www-form-urlencoded")
UPDATE_FORMATS = ("wikidata-json", "wikidata-rdf")


class ReadGate:
    """Many readers, or one update: an update waits for the readers in flight and holds
    new ones until it ends (they wait; none is refused)."""

    def __init__(self):
        self._condition = asyncio.Condition()
        self._readers = 0
        self._updating = False

    @property
    def updating(self) -> bool:
        return self._updating

    @contextlib.asynccontextmanager
    async def reading(self):
        async with self._condition:
            await self._condition.wait_for(lambda: not self._updating)
            self._readers += 1
        try:
            yield
        finally:
            async with self._condition:
                self._readers -= 1
                self._condition.notify_all()

    @contextlib.asynccontextmanager
    async def updating_alone(self):
        async with self._condition:
            await self._condition.wait_for(lambda: not self._updating)
            self._updating = True
            await self._condition.wait_for(lambda: self._readers == 0)
        try:
            yield
        finally:
            async with self._condition:
                self._updating = False
                self._condition.notify_all()


class UpdateRefused(Exception):
    """An update the server will not run: ``status`` and the reason."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def check_update_request(method: str, content_type: str | None, token: str | None, workers: int,
                         file_format: str) -> None:
    """Raise :class:`UpdateRefused` unless the server may apply entity documents."""
    if method != "POST" or (content_type or "").split(";")[0].strip().lower() in SPARQL_UPDATE_TYPES:
        raise UpdateRefused(403, "SPARQL updates are refused: this server is read-only (it applies entity "
                                 "documents sent as application/x-ndjson or application/json)")
    if not token:
        raise UpdateRefused(403, "this server accepts updates only behind a token: restart it with "
                                 "`kgstore serve STORE --token TOKEN`, or run `kgstore update STORE FILE`")
    if workers > 1:
        raise UpdateRefused(409, "updates through the server need one worker process (--workers 1): "
                                 "the others could not pause for it")
    if file_format not in UPDATE_FORMATS:
        raise UpdateRefused(400, f"format must be one of {', '.join(UPDATE_FORMATS)}, not {file_format!r}")


def keep_body(store_path: Path, body: bytes, file_format: str) -> Path:
    """The body as a file under ``STORE/updates/``, named by its content."""
    directory = Path(store_path) / UPDATES_DIR
    directory.mkdir(exist_ok=True)
    suffix = ".ttl" if file_format == "wikidata-rdf" else ".jsonl"
    path = directory / (hashlib.sha256(body).hexdigest()[:32] + suffix)
    if not path.exists():
        partial = path.with_name(path.name + ".part")
        partial.write_bytes(body)
        partial.replace(path)
    return path


def run_update(store_path: Path, path: Path, file_format: str) -> dict:
    """`kgstore update` in a child process; its summary, or UpdateRefused with its error."""
    command = [sys.executable, "-c", "from kgstore.cli import main; main()", "update", str(store_path), str(path),
               "--input-format", file_format, "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["the update failed"])[-1].removeprefix("Error: ")
        raise UpdateRefused(500 if done.returncode == 1 else 400, reason)
    summary = _first_json(done.stdout) or {"status": "skipped", "file": str(path)}
    summary["log"] = [line for line in done.stdout.splitlines() if line.startswith(("Property graph", "Index"))]
    return summary


def _first_json(text: str) -> dict | None:
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


__all__ = ["ReadGate", "UpdateRefused", "check_update_request", "keep_body", "run_update"]

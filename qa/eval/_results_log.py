"""A JSONL file of finished records, appended one line at a time, so that a long run
(`kgstore eval`, `kgstore ask --questions`) that stops resumes where it left off.

Each record is written and flushed as soon as it is done. A kill can only cut the line
being written: a record counts when its line ends with a newline and parses, so a cut
last line is dropped (and cut from the file) when the log is opened again to resume.
"""
from __future__ import annotations

import json
import os
from pathlib import Path


def read_results(path: str | os.PathLike) -> list[dict]:
    """The complete records of a results file, in order (none when it does not exist).
    A line that does not parse as a JSON object is not trusted and is left out."""
    records, _ = _complete_records(Path(path))
    return records


def _complete_records(path: Path) -> tuple[list[dict], int]:
    """The records, and the byte length of the file up to the end of its last complete line."""
    if not path.is_file():
        return [], 0
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1  # what follows the last newline was cut by a kill
    records = []
    for line in data[:complete].splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records, complete


class ResultsLog:
    """Append-only results file. ``ResultsLog(path, resume=True)`` keeps the complete records
    already there (``.records``, in file order) and cuts an unfinished last line;
    ``resume=False`` starts the file empty."""

    def __init__(self, path: str | os.PathLike, *, resume: bool):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: list[dict] = []
        if resume:
            self.records, complete = _complete_records(self.path)
            if self.path.is_file() and self.path.stat().st_size > complete:
                os.truncate(self.path, complete)  # the next record starts on a line of its own
        elif self.path.exists():
            self.path.unlink()

    def append(self, record: dict) -> None:
        """Write ``record`` as one line; it is on disk (flushed) when this returns."""
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)


__all__ = ["ResultsLog", "read_results"]

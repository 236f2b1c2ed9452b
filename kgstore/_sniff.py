"""What format a dump file looks like, from its first lines: the hint given when a
loader rejects every one of them (`kgstore ingest STORE freebase wikidata.json.gz`).
``guess_format`` is pure; ``head_lines`` reads the start of a plain, .gz or .bz2 file."""
from __future__ import annotations

import bz2
import gzip
import io
import json
import re

_ENTITY_ID = re.compile(r"^[QPL]\d+$")
_NT_LINE = re.compile(r"^(<[^>]*>|_:\S+)\s+<[^>]*>\s+.+\.\s*$")


def guess_format(lines: list[str]) -> str | None:
    """The kgstore format name that ``lines`` (the start of a file) look like, or None."""
    content = [ln.strip() for ln in lines if ln.strip() and ln.strip() not in ("[", "]") and not ln.startswith("#")]
    if not content:
        return None
    first = content[0]
    if first.startswith("{"):
        try:
            doc = json.loads(first.rstrip(","))
        except ValueError:
            doc = None
        if isinstance(doc, dict) and ("entities" in doc or _ENTITY_ID.match(str(doc.get("id", "")))):
            return "wikidata-json"
        return None
    if "rdf.freebase.com" in first or first.startswith(("ns:", "fb:", "m.", "g.")):
        return "freebase"
    if first.lower().startswith(("@prefix", "prefix ", "@base")) or _NT_LINE.match(first):
        return "wikidata-rdf"
    fields = max(len(first.split("\t")), len(first.split("|")))
    if fields == 3:
        return "tsv"
    return None


def head_lines(path: str, n: int = 20, max_bytes: int = 1 << 20) -> list[str]:
    """Up to ``n`` lines from the start of ``path`` (decompressed), reading at most
    ``max_bytes``."""
    opener = gzip.open if path.endswith(".gz") else bz2.open if path.endswith(".bz2") else open
    try:
        with opener(path, "rb") as raw:
            data = raw.read(max_bytes)
    except (OSError, EOFError):
        return []
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    return [line for _, line in zip(range(n), text)]


__all__ = ["guess_format", "head_lines"]

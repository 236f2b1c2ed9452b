"""Is a Cypher query read-only? A small scanner that skips strings, comments and escaped
names, so ``MATCH (a {label: "Set theory"})`` reads and ``MATCH (n) DETACH DELETE n`` writes.

This is the first guard; the backends add a second one (Ladybug opens its database
read-only, Neo4j runs the query in a read transaction), so a miss here cannot write.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import QueryError

WRITE_KEYWORDS = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "COPY", "LOAD",
    "INSTALL", "UNINSTALL", "ATTACH", "IMPORT", "EXPORT", "CHECKPOINT", "FOREACH", "TRUNCATE",
})

# Procedures that only read the schema or settings (Ladybug's and Neo4j's); any other
# CALL may write (or load a file) and needs --write.
READ_PROCEDURES = frozenset({
    "show_tables", "table_info", "show_connection", "show_functions", "show_macros", "show_indexes",
    "show_sequences", "show_warnings", "show_attached_databases", "show_loaded_extensions",
    "show_official_extensions", "show_projected_graphs", "current_setting", "db_version",
    "db.labels", "db.relationshiptypes", "db.propertykeys", "db.schema.visualization",
    "db.schema.nodetypeproperties", "db.schema.reltypeproperties", "db.indexes", "db.constraints",
    "dbms.components", "dbms.procedures", "dbms.functions",
})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


@dataclass(frozen=True)
class Word:
    text: str
    offset: int
    before: str  # the nearest non-space character before the word ('' at the start)
    after: str  # the nearest non-space character after it


def segments(text: str):
    """Split Cypher text into ``(kind, start, end)`` runs, kind being "code", "string"
    (quoted strings and `escaped names`) or "comment"; an unclosed one runs to the end."""
    i, n, start = 0, len(text), 0
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" and ch != "`" else 1
            end, kind = min(j + 1, n), "string"
        elif text.startswith("//", i):
            j = text.find("\n", i)
            end, kind = (n if j < 0 else j), "comment"
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end, kind = (n if j < 0 else j + 2), "comment"
        else:
            i += 1
            continue
        if i > start:
            yield "code", start, i
        yield kind, i, end
        i = start = end
    if start < n:
        yield "code", start, n


def words(cypher: str) -> list[Word]:
    """The bare words of ``cypher`` outside strings, comments and `escaped names`."""
    # The text with strings marked and comments blanked, to find each word's neighbours.
    masked = "".join(cypher[a:b] if kind == "code" else ("s" if kind == "string" else " ") * (b - a)
                     for kind, a, b in segments(cypher))
    out = []
    for kind, a, b in segments(cypher):
        if kind != "code":
            continue
        for m in _WORD.finditer(cypher, a, b):
            off = m.start()
            if off > 0 and (masked[off - 1].isalnum() or masked[off - 1] == "_"):
                continue  # the tail of a number like 1e5 or of a longer name
            before = masked[:off].rstrip()[-1:]
            after = masked[m.end():].lstrip()[:1]
            out.append(Word(m.group(0), off, before, after))
    return out


def write_clause(cypher: str) -> tuple[str, int] | None:
    """The first clause of ``cypher`` that writes, as (keyword, offset), or None."""
    for w in words(cypher):
        if w.before in (".", ":", "$") or w.after == ":":
            continue  # a property, label, parameter or map key, not a clause
        upper = w.text.upper()
        if upper in WRITE_KEYWORDS:
            return ("DETACH DELETE" if upper == "DETACH" else upper), w.offset
        if upper == "CALL" and w.after != "{":
            rest = cypher[w.offset + 4:].lstrip()
            m = _NAME.match(rest)
            if m is None or m.group(0).lower() not in READ_PROCEDURES:
                return "CALL " + (m.group(0) if m else "..."), w.offset
    return None


def check_read_only(cypher: str) -> None:
    """Raise :class:`QueryError` when ``cypher`` would write."""
    found = write_clause(cypher)
    if found:
        keyword, offset = found
        line = cypher.count("\n", 0, offset) + 1
        column = offset - (cypher.rfind("\n", 0, offset) + 1) + 1
        raise QueryError(
            f"{keyword} (line {line}, column {column}) writes to the property graph; queries are "
            "read-only unless you ask for writes (`kgstore cypher --write`, or query(..., write=True))"
        )

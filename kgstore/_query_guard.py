"""What a read query may not do: reach the network or write. Pure functions over query text.

Every entry point that runs SPARQL (the CLI, :meth:`Store.query`, the server, the QA
sandboxes) asks :func:`refused_operation` first. The text is tokenised so that words
inside strings, IRIs and comments (``"service"``, ``<http://x/load>``) do not count, nor do
variables (``?service``) or prefixed names (``ex:load``).
"""
from __future__ import annotations

import re

# Update operations that can start a request.
UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD"})
# pyoxigraph's parser recurses per bracket: about 2,000 nested '{' overflow an 8 MiB stack
# and kill the process (a segmentation fault, no exception). Queries nest a few deep.
MAX_NESTING = 256

_TOKENS = re.compile(
    r'(?P<skip>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\s]*>|#[^\n]*'
    r'|[?$][\w]+|[\w\-.]*:[\w\-.]*)'
    r'|(?P<word>\b[A-Za-z]+\b)'
)


# A query none of whose letters spell a refused word anywhere (strings and IRIs included)
# cannot hold one as a keyword: most queries skip the tokenising then.
_MAYBE_REFUSED = re.compile("|".join(sorted({"SERVICE", "LOAD", *UPDATE_KEYWORDS})), re.IGNORECASE)


def keywords(sparql: str) -> list[tuple[str, int]]:
    """The bare words of ``sparql`` (upper-cased) with their offsets, outside strings,
    IRIs, comments, variables and prefixed names."""
    return [(m.group("word").upper(), m.start("word")) for m in _TOKENS.finditer(sparql) if m.group("word")]


def refused_operation(sparql: str, *, allow_service: bool = False,
                      allow_update: bool = False) -> tuple[str, int] | None:
    """``(reason, offset)`` when ``sparql`` is not a plain read query, else None.

    ``SERVICE`` (federation) is refused unless ``allow_service``; ``LOAD`` always; update
    operations unless ``allow_update`` (a writable rdflib Dataset)."""
    for word, offset in (keywords(sparql) if _MAYBE_REFUSED.search(sparql) else ()):
        if word == "SERVICE" and not allow_service:
            return ("SERVICE (federated query) is refused: a query may not reach the network; "
                    "set [sparql] allow_service = true in kgstore.toml to allow it", offset)
        if word == "LOAD":
            return "LOAD is refused: a query may not fetch data from the network", offset
        if word in UPDATE_KEYWORDS and not allow_update:
            return f"{word} is a SPARQL update; queries here only read", offset
    deep = too_deeply_nested(sparql, MAX_NESTING)
    if deep is not None:
        return f"the query nests brackets more than {MAX_NESTING} deep, which the parser cannot take", deep
    return None


def too_deeply_nested(text: str, limit: int) -> int | None:
    """The offset of the first bracket nested deeper than ``limit``, or None. Brackets in
    strings and IRIs count too: over-counting can only refuse text nobody writes."""
    if text.count("(") + text.count("{") + text.count("[") <= limit:  # cannot nest deeper than it opens
        return None
    depth = 0
    for offset, ch in enumerate(text):
        if ch in "({[":
            depth += 1
            if depth > limit:
                return offset
        elif ch in ")}]":
            depth = max(0, depth - 1)
    return None


__all__ = ["refused_operation", "keywords", "too_deeply_nested", "UPDATE_KEYWORDS", "MAX_NESTING"]

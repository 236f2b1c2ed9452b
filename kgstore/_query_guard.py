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

_TOKENS = re.compile(
    r'(?P<skip>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\s]*>|#[^\n]*'
    r'|[?$][\w]+|[\w\-.]*:[\w\-.]*)'
    r'|(?P<word>\b[A-Za-z]+\b)'
)


def keywords(sparql: str) -> list[tuple[str, int]]:
    """The bare words of ``sparql`` (upper-cased) with their offsets, outside strings,
    IRIs, comments, variables and prefixed names."""
    return [(m.group("word").upper(), m.start("word")) for m in _TOKENS.finditer(sparql) if m.group("word")]


def refused_operation(sparql: str, *, allow_service: bool = False,
                      allow_update: bool = False) -> tuple[str, int] | None:
    """``(reason, offset)`` when ``sparql`` is not a plain read query, else None.

    ``SERVICE`` (federation) is refused unless ``allow_service``; ``LOAD`` always; update
    operations unless ``allow_update`` (a writable rdflib Dataset)."""
    for word, offset in keywords(sparql):
        if word == "SERVICE" and not allow_service:
            return ("SERVICE (federated query) is refused: a query may not reach the network; "
                    "set [sparql] allow_service = true in kgstore.toml to allow it", offset)
        if word == "LOAD":
            return "LOAD is refused: a query may not fetch data from the network", offset
        if word in UPDATE_KEYWORDS and not allow_update:
            return f"{word} is a SPARQL update; queries here only read", offset
    return None


__all__ = ["refused_operation", "keywords", "UPDATE_KEYWORDS"]

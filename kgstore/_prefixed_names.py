"""Prefixed names with dots in their local part (``fb:film.film.starring``), which SPARQL
allows and some engines do not: escaped for pyoxigraph, or written as full IRIs for
engines that take neither. Pure functions, used by the store, its triple backends and the
SPARQL sandbox alike."""
from __future__ import annotations

import re

# Strings, IRIs and comments are copied as they are; only prefixed names are rewritten.
_SPARQL_TOKENS = re.compile(
    r'(?P<skip>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\s]*>|#[^\n]*)'
    r'|(?P<pname>(?<![\w?$])[A-Za-z][\w\-]*:[\w\-][\w\-.]*[\w\-])'
)

# Anything that could be a prefixed name with a dot in its local part (a cheap test first).
_DOTTED_NAME = re.compile(r"[A-Za-z][\w\-]*:[\w\-]+\.")


def escape_prefixed_dots(sparql: str) -> str:
    """Escape dots inside prefixed local names (``fb:film.film.starring``), which SPARQL
    allows but pyoxigraph 0.5 rejects when there are two or more."""
    if not _DOTTED_NAME.search(sparql):  # no prefixed name with a dot (most queries): nothing to escape
        return sparql

    def fix(m: re.Match) -> str:
        name = m.group("pname")
        if name is None or name.count(".") == 0:
            return m.group(0)
        prefix, _, local = name.partition(":")
        return f"{prefix}:{local.replace('.', chr(92) + '.')}"

    return _SPARQL_TOKENS.sub(fix, sparql)


_PREFIX_DECLARATION = re.compile(r"(?i)\bPREFIX\s+([A-Za-z][\w\-.]*)?\s*:\s*<([^<>\s]*)>")


def expand_prefixed_dots(sparql: str, prefixes: dict[str, str]) -> str:
    """Write prefixed names with dots in their local part (``fb:film.film.starring``) as
    full IRIs, with ``prefixes`` and the query's own PREFIX declarations. For engines that
    take neither such names (pyoxigraph) nor their escaped form (Virtuoso: "Bad character
    '\\'"); names whose prefix is unknown are left as they are."""
    known = dict(prefixes)
    known.update({m.group(1) or "": m.group(2) for m in _PREFIX_DECLARATION.finditer(sparql)})

    def fix(m: re.Match) -> str:
        name = m.group("pname")
        if name is None or "." not in name:
            return m.group(0)
        prefix, _, local = name.partition(":")
        ns = known.get(prefix)
        return m.group(0) if ns is None else f"<{ns}{local.replace(chr(92), '')}>"

    return _SPARQL_TOKENS.sub(fix, sparql)


__all__ = ["escape_prefixed_dots", "expand_prefixed_dots"]

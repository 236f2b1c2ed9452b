"""A sandbox for SPARQL an LLM wrote: check it, then run it read-only with limits.

* **Parse** with pyoxigraph itself, against an empty in-memory store with the store's
  prefixes, so what passes here is exactly what the store accepts. A parse error becomes
  :class:`~kgstore.errors.SparqlSyntaxError` with its line and column in the text as
  passed, so the model can be shown where it went wrong.
* **Allow** only ``SELECT`` and ``ASK``. ``SERVICE`` (the network), ``LOAD`` and updates
  are refused with :class:`~kgstore.errors.UnsafeQueryError` naming the keyword and its
  position; so are ``CONSTRUCT`` and ``DESCRIBE``, which answer no question.
* **Bound** it: a ``SELECT`` without ``LIMIT`` gets one (unless the query ends with a
  ``VALUES`` block, which must stay last: then only the row cap applies), rows past
  ``max_rows`` are cut, and the query runs under a time limit (:func:`kgstore.run_bounded`:
  pyoxigraph cannot cancel a query, so a watchdog stops waiting for it).
* **Nesting** deeper than :data:`MAX_NESTING` brackets is refused before parsing:
  pyoxigraph's parser recurses per bracket and a couple of thousand ``{`` overflow its
  stack, which kills the process (a segmentation fault, not an exception).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pyoxigraph as ox

from kgstore import escape_prefixed_dots, query_keywords, refused_operation, run_bounded
from kgstore import too_deeply_nested
from kgstore.errors import SparqlSyntaxError, UnsafeQueryError

from ._positions import line_column, line_of

MAX_CHARS = 10_000
# Far above what a question needs (a handful), far below what overflows the parser's stack
# (about 2,000 '{' on an 8 MiB main-thread stack; threads may have less).
MAX_NESTING = 64
DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_ROWS = 1_000
_POSITION = re.compile(r"\b(?:at |error at )?(\d+):(\d+)\b")
_POSITION_PREFIX = re.compile(r"^\s*error at \d+:\d+:\s*")


@dataclass(frozen=True)
class CheckedQuery:
    """A generated query that may run: ``text`` as it will run (a LIMIT added where it had
    none), its ``form`` (SELECT or ASK) and, for SELECT, its result variables."""

    text: str
    form: str
    variables: tuple[str, ...] = ()


@dataclass
class SparqlRows:
    """What a checked query returned: ``rows`` (variable name → pyoxigraph term) for
    SELECT, ``boolean`` for ASK, and whether rows were cut at the cap."""

    query: CheckedQuery
    rows: list[dict]
    boolean: bool | None = None
    truncated: bool = False
    seconds: float = 0.0


def check_sparql(text: str, prefixes: dict[str, str], *, max_rows: int = DEFAULT_MAX_ROWS) -> CheckedQuery:
    """Check generated SPARQL without running it on any data (see the module docstring)."""
    if len(text) > MAX_CHARS:
        raise UnsafeQueryError(f"the query is longer than {MAX_CHARS} characters")
    refused = refused_operation(text)
    if refused:
        reason, offset = refused
        line, column = line_column(text, offset)
        raise UnsafeQueryError(reason, offset, line=line, column=column)
    too_deep = too_deeply_nested(text, MAX_NESTING)
    if too_deep is not None:
        line, column = line_column(text, too_deep)
        raise UnsafeQueryError(f"the query nests brackets more than {MAX_NESTING} deep; the sandbox "
                               "allows no deeper nesting", too_deep, line=line, column=column)
    result = _parsed(text, prefixes)
    if isinstance(result, ox.QueryBoolean):
        return CheckedQuery(text, "ASK")
    if isinstance(result, ox.QueryTriples):
        raise UnsafeQueryError("only SELECT and ASK queries are allowed (this one builds a graph)")
    variables = tuple(v.value for v in result.variables)
    if not _has_limit(text):
        limited = f"{text.rstrip()}\nLIMIT {max_rows + 1}"
        # After a final VALUES block a LIMIT does not parse; run_bounded's cap still holds.
        if _parses(limited, prefixes):
            text = limited
    return CheckedQuery(text, "SELECT", variables)


def run_sparql(store, text: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
               max_rows: int = DEFAULT_MAX_ROWS) -> SparqlRows:
    """Check ``text`` and run it on ``store`` read-only, within ``timeout_s`` and
    ``max_rows``. Raises the errors of :func:`check_sparql`, and
    :class:`~kgstore.errors.QueryError` when the store rejects or times out the query."""
    checked = check_sparql(text, store.config.prefixes, max_rows=max_rows)
    bounded = run_bounded(store, checked.text, timeout_s=timeout_s, max_rows=max_rows)
    return SparqlRows(checked, bounded.bindings() if bounded.kind == "solutions" else [], bounded.boolean,
                      bounded.truncated, bounded.seconds)


def _parsed(text: str, prefixes: dict[str, str]):
    try:
        return ox.Store().query(escape_prefixed_dots(text), prefixes=prefixes)
    except SyntaxError as exc:
        raise _syntax_error(exc, text) from None


def _parses(text: str, prefixes: dict[str, str]) -> bool:
    try:
        ox.Store().query(escape_prefixed_dots(text), prefixes=prefixes)
    except SyntaxError:
        return False
    return True


def _has_limit(text: str) -> bool:
    return any(word == "LIMIT" for word, _ in query_keywords(text))


def _syntax_error(exc: SyntaxError, text: str) -> SparqlSyntaxError:
    message = str(exc).split("\n", 1)[0]
    m = _POSITION.search(message)
    if m:
        line, column = int(m.group(1)), int(m.group(2))
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        offset = starts[min(line, len(starts)) - 1] + column - 1
    else:
        offset = len(text)
        line, column = line_column(text, offset)
    reason = _POSITION_PREFIX.sub("", message) or "syntax error"
    return SparqlSyntaxError(reason, line=line, column=column, offset=offset, line_text=line_of(text, offset))


__all__ = ["CheckedQuery", "SparqlRows", "check_sparql", "run_sparql"]

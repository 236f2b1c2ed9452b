"""Line-level N-Triples/N-Quads term parsing, tolerant of tab or space separators.

Pure functions: :func:`parse_line` splits one line into raw terms and raises
:class:`TermError` with a reason a person can act on; callers map terms to IRIs.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import pyoxigraph as ox

_TERM = r'(<[^<>"{}|^`\\\x00-\x20]*>|<[^>]*>|_:[^\s]+|"(?:[^"\\]|\\.)*"(?:@[^\s]*|\^\^<[^>]*>)?)'
_LINE = re.compile(r"\s*" + _TERM + r"\s+" + _TERM + r"\s+" + _TERM + r"(?:\s+" + _TERM + r")?\s*\.\s*")
_LANG = re.compile(r"[a-zA-Z]{1,8}(?:-[a-zA-Z0-9]{1,8})*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_IRI_BAD_CHAR = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


class TermError(ValueError):
    """A line that is not ``term term term [graph] .``; the message says why."""


class Literal(NamedTuple):
    value: str
    lang: str | None
    datatype: str | None


def split_terms(line: str) -> tuple[str, str, str]:
    """Subject, predicate and object text of one statement line (a graph term is dropped)."""
    m = _LINE.fullmatch(line)
    if m is None:
        raise TermError(_why_not(line))
    return m.group(1), m.group(2), m.group(3)


def _why_not(line: str) -> str:
    stripped = line.rstrip()
    if not stripped.endswith("."):
        return "statement does not end with ' .'"
    if stripped.count('"') % 2:
        return "unterminated string literal"
    n = len(re.findall(_TERM, stripped))
    if n < 3:
        return f"expected subject, predicate and object, found {n} term{'s' if n != 1 else ''}"
    return "not a valid N-Triples statement"


def unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def one(m: re.Match) -> str:
        if m.group(1) or m.group(2):
            code = int(m.group(1) or m.group(2), 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise TermError(f"invalid \\u escape {m.group(0)!r}")
            return chr(code)
        ch = m.group(3)
        if ch not in _SIMPLE_ESCAPES:
            raise TermError(f"invalid escape \\{ch}")
        return _SIMPLE_ESCAPES[ch]

    return _ESCAPE.sub(one, text)


_IRI_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def unescape_iri(text: str) -> str:
    """The inside of ``<...>`` with its ``\\uXXXX``/``\\UXXXXXXXX`` escapes decoded (N-Triples
    allows them in IRIs; any other backslash stays, for :func:`check_iri` to refuse)."""
    if "\\" not in text:
        return text

    def one(m: re.Match) -> str:
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise TermError(f"invalid \\u escape {m.group(0)!r} in IRI <{text}>")
        return chr(code)

    return _IRI_ESCAPE.sub(one, text)


def parse_literal(term: str) -> Literal:
    """``"text"``, ``"text"@lang`` or ``"text"^^<iri>`` (``term`` as split_terms returns it)."""
    close = term.rindex('"')
    value = unescape(term[1:close])
    rest = term[close + 1:]
    if not rest:
        return Literal(value, None, None)
    if rest[0] == "@":
        lang = rest[1:]
        if not _LANG.fullmatch(lang):
            raise TermError(f"invalid language tag {lang!r}")
        return Literal(value, lang.lower(), None)
    datatype = unescape_iri(rest[3:-1])
    check_iri(datatype)
    return Literal(value, None, datatype)


def check_iri(iri: str) -> str:
    """``iri`` if Oxigraph accepts it as an absolute IRI, else :class:`TermError`.

    The common faults get a message of their own; the rest of RFC 3987 (code points such
    as DEL or U+FFFE, ports, hosts) is Oxigraph's own check: an IRI it refuses would fail
    the whole batch's load instead of one line."""
    if iri in _accepted:
        return iri
    if not _SCHEME.match(iri):
        raise TermError(f"not an absolute IRI: <{iri}>")
    bad = _IRI_BAD_CHAR.search(iri)
    if bad:
        raise TermError(f"character {bad.group(0)!r} is not allowed in IRI <{iri}>")
    if _BAD_PERCENT.search(iri):
        raise TermError(f"invalid percent-encoding in IRI <{iri}>")
    try:
        ox.NamedNode(iri)
    except ValueError as exc:
        raise TermError(f"invalid IRI <{iri}>: {exc}") from None
    if len(_accepted) >= _MAX_ACCEPTED:
        _accepted.clear()
    _accepted.add(iri)
    return iri


# IRIs Oxigraph accepted: they repeat (predicates, a subject's lines), and a lookup costs
# a fraction of a parse (0.6 us).
_accepted: set[str] = set()
_MAX_ACCEPTED = 100_000

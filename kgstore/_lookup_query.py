"""Which queries are lookups whose work is bounded by what they write.

A query of one triple pattern, with nothing that drops rows (no FILTER, no OFFSET, no
DISTINCT over fewer variables than the pattern binds, no variable repeated), is an index
range in Oxigraph: every triple it reads becomes a row. The server can run such a query
where it receives it, writing into a bounded buffer, instead of handing it to the query
pool: its cost stops at the buffer's size. Anything else (joins, ORDER BY, aggregates,
paths, a filter that may scan the store to keep one row) goes to the pool, where the time
limit holds. A pure function of the text; it errs towards "not a lookup".
"""
from __future__ import annotations

import re

# One token at a time, the whole text covered: strings (with a language or a datatype),
# IRIs, variables, prefixed names, numbers, words and the punctuation a lookup uses. A
# character no token takes (a bracket of another kind, an operator) ends the reading.
_TOKEN = re.compile(
    r'\s+|#[^\n]*'
    r'|(?P<literal>"(?:[^"\\\n]|\\.)*"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^(?:<[^<>"{}|^`\\\s]*>|[\w\-.]*:[\w\-.]*))?)'
    r'|(?P<iri><[^<>"{}|^`\\\s]*>)'
    r'|(?P<var>[?$]\w+)'
    r'|(?P<pname>[A-Za-z][\w\-.]*:[\w\-.]*|:[\w\-.]*)'
    r'|(?P<number>\d+)'
    r'|(?P<word>[A-Za-z]+)'
    r'|(?P<punct>[{}.*:])'
)
_TERM_KINDS = ("literal", "iri", "var", "pname")


def _tokens(sparql: str) -> list[tuple[str, str]] | None:
    out, at = [], 0
    while at < len(sparql):
        m = _TOKEN.match(sparql, at)
        if not m:
            return None
        at = m.end()
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup)))
    return out


def is_bounded_lookup(sparql: str) -> bool:
    """Whether ``sparql`` is ``[PREFIX …]* SELECT [DISTINCT] vars|* [WHERE] { s p o [.] }
    [LIMIT n]`` or ``ASK { s p o }``, each variable of the pattern at most once, a DISTINCT
    only when every variable of the pattern is selected (so it drops no row)."""
    tokens = _tokens(sparql)
    if not tokens:
        return False
    i = 0
    while i < len(tokens) and tokens[i][0] == "word" and tokens[i][1].upper() in ("PREFIX", "BASE"):
        step = 3 if tokens[i][1].upper() == "PREFIX" else 2
        if tokens[i][1].upper() == "PREFIX" and (i + 2 >= len(tokens) or tokens[i + 2][0] != "iri"
                                                 or tokens[i + 1][0] not in ("pname", "punct")):
            return False
        i += step
    rest = tokens[i:]
    if not rest or rest[0][0] != "word":
        return False
    form = rest[0][1].upper()
    k = 1
    distinct, selected, star = False, [], False
    if form == "SELECT":
        if k < len(rest) and rest[k][0] == "word" and rest[k][1].upper() in ("DISTINCT", "REDUCED"):
            distinct, k = True, k + 1
        while k < len(rest) and rest[k][0] == "var":
            selected.append(rest[k][1][1:])
            k += 1
        if not selected and k < len(rest) and rest[k] == ("punct", "*"):
            star, k = True, k + 1
        if not selected and not star:
            return False
    elif form != "ASK":
        return False
    if k < len(rest) and rest[k][0] == "word" and rest[k][1].upper() == "WHERE":
        k += 1
    if k + 4 > len(rest) or rest[k] != ("punct", "{"):
        return False
    s, p, o = rest[k + 1:k + 4]
    k += 4
    if k < len(rest) and rest[k] == ("punct", "."):
        k += 1
    if k >= len(rest) or rest[k] != ("punct", "}"):
        return False
    k += 1
    if p == ("word", "a"):
        p = ("iri", "rdf:type")
    if any(kind not in _TERM_KINDS for kind, _ in (s, p, o)) or p[0] == "literal" or s[0] == "literal":
        return False
    variables = [text[1:] for kind, text in (s, p, o) if kind == "var"]
    if len(set(variables)) != len(variables):
        return False  # "?x ?p ?x" reads every triple to keep a few
    if distinct and not star and set(selected) != set(variables):
        return False  # a DISTINCT over fewer variables may read many triples per row kept
    if any(v not in variables for v in selected):
        return False
    tail = rest[k:]
    if form == "SELECT" and len(tail) == 2 and tail[0][0] == "word" and tail[0][1].upper() == "LIMIT" \
            and tail[1][0] == "number":
        tail = []
    return not tail


__all__ = ["is_bounded_lookup"]

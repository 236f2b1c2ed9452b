"""SPARQL with placeholders (pgmr): parse what the model wrote, render it with resolutions.
Pure functions.

The model writes ``SELECT DISTINCT ?x WHERE { [ENT: Joel Zwick] [REL: directed] ?x }``. The
placeholders are resolved later (an entity IRI for each ``[ENT]``, a relation IRI and a
reading direction for each ``[REL]``); a relation read backwards swaps its pattern's two
ends, which is how one relation answers "directed by" and "directed".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from ...steps._sparql_build import BuiltQuery, TriplePattern, exclude_filter

_PLACEHOLDER = re.compile(r"\[(ENT|REL):\s*([^\[\]]+?)\s*\]")
_QUERY = re.compile(r"^\s*SELECT\s+(?P<proj>.+?)\s+WHERE\s*\{\s*(?P<body>.*?)\s*(?P<filter>FILTER\s*\(.*\))?\s*\}"
                    r"\s*(?P<tail>ORDER\s+BY.*)?$", re.DOTALL | re.IGNORECASE)
_VAR = re.compile(r"\?[A-Za-z_]\w*")
_COUNT_CALL = re.compile(r"(?<![?$\w])COUNT\s*\(", re.I)


class PlaceholderSyntaxError(ValueError):
    """The text is not a placeholder query of the expected shape."""


@dataclass(frozen=True)
class Node:
    """A pattern end: a variable (``?x``) or an entity placeholder's name."""

    text: str
    entity: bool

    def render(self, iris: dict[str, str]) -> str:
        return f"<{iris[self.text]}>" if self.entity else self.text


@dataclass(frozen=True)
class Pattern:
    subject: Node
    relation: str  # the [REL] placeholder's words
    object: Node


@dataclass
class PlaceholderQuery:
    """A parsed placeholder query: the projection (``DISTINCT ?x`` or a COUNT), the
    patterns, an optional FILTER and ORDER BY/LIMIT, as the model wrote them."""

    projection: str
    patterns: list[Pattern]
    filter: str | None = None
    tail: str | None = None
    filter_entities: list[str] = field(default_factory=list)
    source: str = ""  # the text as the model wrote it

    @property
    def answer_var(self) -> str:
        return _VAR.findall(self.projection)[0]

    @property
    def counts(self) -> bool:
        # COUNT as a function, not inside a variable's name (``?country``, ``?counties``)
        return bool(_COUNT_CALL.search(self.projection))

    def entities(self) -> list[str]:
        """The distinct entity placeholder names, in order of appearance."""
        names = [n.text for p in self.patterns for n in (p.subject, p.object) if n.entity] + self.filter_entities
        return list(dict.fromkeys(names))

    def relations(self) -> list[str]:
        """One relation placeholder per pattern, in order (the same words twice are two slots)."""
        return [p.relation for p in self.patterns]

    @property
    def written_patterns(self) -> int:
        """How many patterns the model wrote, a repeated one counted again: a small model
        writes "X directed by ?d" twice for "the films that share X's director", a path
        there and back."""
        return max(self.source.count("[REL:"), len(self.patterns))

    @property
    def patterns_off_entities(self) -> int:
        """How many distinct patterns touch no named entity: the hops the draft walks on
        from what hangs off its entities."""
        return sum(1 for p in self.patterns if not p.subject.entity and not p.object.entity)

    @property
    def roles_of_one_name(self) -> int:
        """The most distinct patterns that join one named entity to one variable: two where
        the draft asks for two roles at once ("the films [X] directed and starred in": ``?f
        directed by X . ?f starred actors X``), one in a chain (and in a draft that hangs two
        hops off the name, ``X country ?x . X capital ?c``)."""
        pairs = [(p.subject.text, p.object.text) if p.subject.entity else (p.object.text, p.subject.text)
                 for p in dict.fromkeys(self.patterns) if p.subject.entity != p.object.entity]
        return max((pairs.count(pair) for pair in pairs), default=0)

    def keeping_names(self, names: Sequence[str]) -> "PlaceholderQuery":
        """The query with only ``names`` as entities (the names the question marks in
        brackets): an entity placeholder inside one of them becomes it ("[ENT: The
        Viking]" in "[Erik the Viking]"), one that holds one of them stays (it may write a
        relation into the name, "[ENT: X's heir]"), and any other becomes a variable (the
        film *Together* in "who starred together with [X]")."""
        if not names:
            return self
        keys = {_key(n): n for n in names}

        def keep(node: Node, k: int) -> Node:
            if not node.entity:
                return node
            key = _key(node.text)
            if key.strip() and any(k_ in key for k_ in keys):
                return node
            inside = [n for k_, n in keys.items() if key.strip() and key in k_]
            return Node(inside[0], True) if len(inside) == 1 else Node(f"?named{k}", False)

        unknown = [n for n in self.entities() if _key(n) not in keys]
        renumber = {n: i + 1 for i, n in enumerate(unknown)}
        patterns = [Pattern(keep(p.subject, renumber.get(p.subject.text, 0)), p.relation,
                            keep(p.object, renumber.get(p.object.text, 0))) for p in self.patterns]
        if patterns == self.patterns:
            return self
        return PlaceholderQuery(self.projection, list(dict.fromkeys(patterns)), self.filter, self.tail,
                                self.filter_entities, self.source)

    def merged_into(self, names: Sequence[str]) -> "PlaceholderQuery":
        """The query with each entity placeholder that is one name of ``names``, or part of
        exactly one longer name, written as that name ("[ENT: The Law]" in a question about
        the film "I Am the Law"); every other placeholder is kept as it is."""
        keys = {_key(n): n for n in names if _key(n).strip()}

        def merge(node: Node) -> Node:
            key = _key(node.text)
            if not node.entity or not key.strip():
                return node
            if key in keys:
                # the name itself, as the question writes it ("Leonore \"Casey\" Case" for the
                # model's "Leonore Casey Case")
                return Node(keys[key], True)
            holding = [n for k, n in keys.items() if key in k]
            return Node(holding[0], True) if len(holding) == 1 else node

        patterns = [Pattern(merge(p.subject), p.relation, merge(p.object)) for p in self.patterns]
        if patterns == self.patterns:
            return self
        return replace(self, patterns=list(dict.fromkeys(patterns)))

    def reattached(self) -> list["PlaceholderQuery"]:
        """The query with one named entity's pattern moved off the answer variable onto
        another variable of the query, one query per move. A small model hangs a
        constraint on the answer where it belongs on the node before it ("[F] starring ?m .
        ?m character ?answer . ?answer actor [X]": the performance ?m has the actor, not
        the character); the store, by executing, tells which reading holds."""
        answer = self.answer_var
        variables = [v for v in dict.fromkeys(n.text for p in self.patterns for n in (p.subject, p.object)
                                              if not n.entity) if v != answer]
        out = []
        for i, pattern in enumerate(self.patterns):
            ends = (pattern.subject, pattern.object)
            if not any(n.entity for n in ends) or answer not in (n.text for n in ends):
                continue
            for var in variables:
                moved = Pattern(*(Node(var, False) if n.text == answer else n for n in ends[:1]), pattern.relation,
                                *(Node(var, False) if n.text == answer else n for n in ends[1:]))
                patterns = self.patterns[:i] + [moved] + self.patterns[i + 1:]
                if any(answer in (p.subject.text, p.object.text) for p in patterns):  # still asked for
                    out.append(replace(self, patterns=patterns))
        return out

    def end_relations(self) -> tuple[str | None, str | None]:
        """The relation words on the first pattern that names an entity and on the last
        pattern that holds the answer variable (None where there is none)."""
        first = next((p.relation for p in self.patterns if p.subject.entity or p.object.entity), None)
        last = next((p.relation for p in reversed(self.patterns)
                     if self.answer_var in (p.subject.text, p.object.text)), None)
        return first, last

    def build(self, entity_iris: dict[str, str], relations: list[tuple[str, bool]], *,
              exclude: Sequence[str] = ()) -> BuiltQuery:
        """The query with the placeholders replaced: ``entity_iris`` maps entity names to
        IRIs; ``relations[i]`` is (relation IRI, backward) for pattern ``i``, a backward
        reading swapping the pattern's ends. ``exclude`` keeps those IRIs (the question's
        own entities) out of the answer variable."""
        patterns = []
        for pattern, (iri, backward) in zip(self.patterns, relations):
            s, o = pattern.subject.render(entity_iris), pattern.object.render(entity_iris)
            if backward:
                s, o = o, s
            patterns.append(TriplePattern(s, f"<{iri}>", o))
        filters = [_PLACEHOLDER.sub(lambda m: f"<{entity_iris[m.group(2)]}>", self.filter)] if self.filter else []
        if not self.counts:
            filters += exclude_filter(self.answer_var, exclude)
        return BuiltQuery(self.answer_var, [[patterns]], filters, self.tail, count=self.counts)


def _key(name: str) -> str:
    """A name's words, lower-cased, between spaces: "X's heir" holds " x ", "It" is not in "Italy"."""
    return " " + " ".join(re.sub(r"[^\w]+", " ", name.lower()).split()) + " "


def parse_placeholder_query(text: str) -> PlaceholderQuery:
    """Read the model's query; raises :class:`PlaceholderSyntaxError` naming what is off."""
    m = _QUERY.match(text.strip().strip("`").strip())
    if not m:
        raise PlaceholderSyntaxError("expected SELECT ... WHERE { patterns } [ORDER BY ... LIMIT n]")
    projection = " ".join(m.group("proj").split())
    if not _VAR.search(projection):
        raise PlaceholderSyntaxError("the SELECT names no variable")
    patterns = []
    for part in re.split(r"\s+\.\s+|\s*\.\s*$", m.group("body")):
        if part.strip():
            patterns.append(_pattern(part.strip()))
    if not patterns:
        raise PlaceholderSyntaxError("the query has no triple pattern")
    patterns = _repair(patterns)
    filt = m.group("filter")
    filter_entities = [n for kind, n in _PLACEHOLDER.findall(filt or "") if kind.upper() == "ENT"]
    if filt and any(kind.upper() == "REL" for kind, _ in _PLACEHOLDER.findall(filt)):
        raise PlaceholderSyntaxError("a FILTER cannot hold a relation placeholder")
    projection = _project_chain_end(projection, patterns)
    return PlaceholderQuery(projection, patterns, filt, (m.group("tail") or "").strip() or None, filter_entities,
                            " ".join(text.split()))


def _project_chain_end(projection: str, patterns: list[Pattern]) -> str:
    """The variable a question asks for is where the chain of patterns ends. A small model
    often projects the wrong one: a variable no pattern binds ("SELECT ?x ... { A [REL] ?y }"),
    or the chain's middle ("SELECT ?x ... { ?x [REL] A . ?x [REL] ?y }", where ?y, bound
    once and never used again, is what the second pattern was written to find). Then the
    last variable that only one pattern binds is projected instead."""
    uses: dict[str, int] = {}
    for p in patterns:
        for n in (p.subject, p.object):
            if not n.entity:
                uses[n.text] = uses.get(n.text, 0) + 1
    answer = _VAR.findall(projection)[0]
    if not uses or uses.get(answer) == 1:
        return projection
    ends = [v for v in uses if uses[v] == 1 and v != answer]
    if answer in uses and (len(patterns) < 2 or not ends):
        return projection
    if not ends:
        ends = list(uses)
    return projection.replace(answer, ends[-1])


_VARIABLE_LIKE = re.compile(r"^\??[a-z][0-9]?$")


def _repair(patterns: list[Pattern]) -> list[Pattern]:
    """Slips a small model makes that have one reading: ``[ENT: y]`` is the variable ``?y``,
    so is ``[ENT: director]`` in a query that binds ``?director``, and a pattern written
    twice is one pattern."""
    variables = {n.text[1:].lower() for p in patterns for n in (p.subject, p.object) if not n.entity}

    def fix(node: Node) -> Node:
        if node.entity and (_VARIABLE_LIKE.match(node.text) or node.text.strip().lower() in variables):
            return Node("?" + node.text.strip().lstrip("?").lower(), False)
        return node

    return list(dict.fromkeys(Pattern(fix(p.subject), p.relation, fix(p.object)) for p in patterns))


def _pattern(text: str) -> Pattern:
    pieces = []
    rest = text
    while rest:
        rest = rest.lstrip()
        m = _PLACEHOLDER.match(rest)
        if m:
            pieces.append((m.group(1).upper(), m.group(2)))
            rest = rest[m.end():]
            continue
        v = _VAR.match(rest)
        if v:
            pieces.append(("VAR", v.group(0)))
            rest = rest[v.end():]
            continue
        raise PlaceholderSyntaxError(f"cannot read {rest[:40]!r} in a triple pattern")
    kinds = [k for k, _ in pieces]
    if len(pieces) != 3 or kinds[1] != "REL" or "REL" in (kinds[0], kinds[2]):
        raise PlaceholderSyntaxError(f"a triple pattern is subject [REL: ...] object, not {text!r}")
    (k1, v1), (_, rel), (k3, v3) = pieces
    return Pattern(Node(v1, k1 == "ENT"), rel, Node(v3, k3 == "ENT"))


__all__ = ["Node", "Pattern", "PlaceholderQuery", "PlaceholderSyntaxError", "parse_placeholder_query"]

"""A question's shape (count, boolean, comparison, superlative, constraint, round trip,
literal, chain), from its ``type`` field or read off its gold SPARQL query. Pure functions.

The rules, applied to the gold query in this order (the first that holds wins):

1. **boolean**: the query is an ``ASK``.
2. **count**: the projection (between ``SELECT`` and the first ``{``) holds ``COUNT(``.
3. **superlative**: ``ORDER BY`` followed by ``LIMIT``, or ``MAX(``/``MIN(`` in the projection;
   but an ``ORDER BY … LIMIT`` over answers the query lists by name (``FILTER(?x IN (wd:A,
   wd:B))``, ``VALUES ?x { wd:A wd:B }``) picks one of the named things: a **comparison**.
4. **comparison**: a ``FILTER`` or ``BIND`` expression compares two values that both
   depend on a variable with ``<``, ``>``, ``<=`` or ``>=`` (``?a > ?b``,
   ``IF(?x > ?y, ...)``). A variable against a constant (``YEAR(?d) >= 1910``) restricts
   the answers rather than comparing two things, and is not a comparison.
5. **round trip**: the same relation links a constant (the topic) to a middle variable and
   that middle variable to the answer variable, in either direction
   (``wd:X wdt:P57 ?dir . ?answer wdt:P57 ?dir``: "films by the director of X").
6. **constraint**: two or more required triple patterns (outside ``OPTIONAL``, ``MINUS``
   and ``FILTER``) have the answer variable as subject or object, and hold together: two
   patterns in different branches of one ``UNION`` are alternatives, not a restriction
   (``{ wd:X wdt:P25 ?r } UNION { wd:X wdt:P22 ?r }`` is a chain asked two ways).
7. **literal**: every gold answer is a literal (number, date or string).
8. **chain**: anything else (one relation, or a path of relations, from the topic).

The answer variable is the first projected variable (for ``SELECT *``, the first variable
of the body). A question without a type and without a query is **boolean** or **literal**
when its gold answers say so, else ``unknown``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

SHAPES = ("count", "boolean", "comparison", "superlative", "constraint", "round trip", "literal", "chain")
UNKNOWN = "unknown"
_ALIASES = {"roundtrip": "round trip", "round-trip": "round trip", "round_trip": "round trip", "ask": "boolean",
            "bool": "boolean", "yes/no": "boolean", "counting": "count", "comparative": "comparison",
            "compare": "comparison", "superlatives": "superlative", "constraints": "constraint",
            "multi-hop": "chain", "multihop": "chain", "path": "chain"}

_TOKEN = re.compile(r"""
    (?P<iri><[^<>\s"{}|^`\\]*>)
  | (?P<string>("([^"\\\n]|\\.)*"|'([^'\\\n]|\\.)*')(@[A-Za-z][\w-]*|\^\^(<[^<>\s]*>|[A-Za-z][\w-]*:[\w-]*))?)
  | (?P<var>[?$][A-Za-z_]\w*)
  | (?P<pname>(?:[A-Za-z][\w-]*)?:(?:[\w%-]+(?:\.[\w%-]+)*)?)
  | (?P<number>[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<op><=|>=|!=|&&|\|\||\^\^|[{}()\[\].;,*/^|!<>=+?-])
  | (?P<comment>\#[^\n]*)
""", re.VERBOSE)


@dataclass(frozen=True)
class Tok:
    kind: str  # iri | string | var | pname | number | word | op
    text: str

    @property
    def up(self) -> str:
        return self.text.upper()


def tokens(sparql: str) -> list[Tok]:
    """The query's tokens (comments and whitespace dropped; unknown characters skipped)."""
    out, pos = [], 0
    while pos < len(sparql):
        if sparql[pos].isspace():
            pos += 1
            continue
        m = _TOKEN.match(sparql, pos)
        if not m:
            pos += 1
            continue
        pos = m.end()
        if m.lastgroup != "comment":
            out.append(Tok(m.lastgroup, m.group()))
    return out


@dataclass
class QueryForm:
    """What the classifier reads off a query: its form, projection, triple patterns
    (subject, predicate, object, required?) and FILTER/BIND expressions."""

    form: str  # SELECT | ASK | CONSTRUCT | DESCRIBE | ?
    projection: list[Tok] = field(default_factory=list)
    answer_var: str | None = None
    triples: list[tuple[str, str, str, bool]] = field(default_factory=list)
    expressions: list[list[Tok]] = field(default_factory=list)
    order_by_limit: bool = False
    # per triple, the UNION branches it sits in: ((union number, branch number), ...)
    branches: list[tuple[tuple[int, int], ...]] = field(default_factory=list)
    # variables a VALUES block lists constants for
    listed: set[str] = field(default_factory=set)


def read_query(sparql: str) -> QueryForm:
    """The parts of ``sparql`` the shape rules need. Tolerant: what it cannot read is skipped."""
    toks = tokens(sparql)
    form_at = next((i for i, t in enumerate(toks) if t.kind == "word" and t.up in
                    ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")), None)
    if form_at is None:
        return QueryForm("?")
    q = QueryForm(toks[form_at].up)
    body_at = next((i for i in range(form_at, len(toks)) if toks[i].text == "{"), len(toks))
    q.projection = toks[form_at + 1:body_at]
    words = [t.up for t in toks if t.kind == "word"]
    if "ORDER" in words and "LIMIT" in words[words.index("ORDER"):]:
        q.order_by_limit = True
    _Group(toks, q).parse(body_at)
    if q.form == "SELECT":
        q.answer_var = _first_projected(q.projection) or \
            next((t.text for t in toks[body_at:] if t.kind == "var"), None)  # SELECT *
    return q


def _first_projected(projection: Sequence[Tok]) -> str | None:
    """The first projected variable: ``?x``, or the alias of ``(expr AS ?x)``."""
    depth = 0
    for i, t in enumerate(projection):
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif t.kind == "var" and depth == 0:
            return t.text
        elif t.kind == "word" and t.up == "AS" and depth == 1 and i + 1 < len(projection) and \
                projection[i + 1].kind == "var":
            return projection[i + 1].text
    return None


class _Group:
    """A small recursive reader of a group graph pattern's triples and expressions."""

    def __init__(self, toks: list[Tok], q: QueryForm):
        self.toks, self.q = toks, q
        self.branch: tuple[tuple[int, int], ...] = ()
        self.unions = 0

    def parse(self, start: int) -> None:
        i = start
        while i < len(self.toks):
            if self.toks[i].text == "{":
                i = self.group(i + 1, required=True)
            else:
                i += 1

    def group(self, i: int, *, required: bool) -> int:
        """Read from after ``{`` to its ``}``; returns the index after it."""
        toks = self.toks
        while i < len(toks):
            t = toks[i]
            if t.text == "}":
                return i + 1
            if t.text == "{":
                i = self.union_or_group(i, required=required)
            elif t.text in (".", ";", ","):
                i += 1
            elif t.kind == "word" and t.up in ("FILTER", "BIND"):
                start = i + 1
                i = self.skip_expression(start)
                self.q.expressions.append(toks[start:i])
            elif t.kind == "word" and t.up in ("OPTIONAL", "MINUS"):
                i += 1
                if i < len(toks) and toks[i].text == "{":
                    i = self.group(i + 1, required=False)
            elif t.kind == "word" and t.up in ("GRAPH", "SERVICE", "SILENT"):
                i += 2 if t.up != "SILENT" else 1
            elif t.kind == "word" and t.up == "VALUES":
                start = i + 1
                i = self.skip_until_block_end(start)
                named = [t for t in toks[start:i] if t.kind in ("iri", "pname", "string", "number")]
                if toks[start].kind == "var" and len(named) >= 2:  # one variable, two things or more
                    self.q.listed.add(toks[start].text)
            elif t.kind == "word" and t.up in ("SELECT", "DISTINCT", "REDUCED", "WHERE", "UNION", "GROUP",
                                                "ORDER", "BY", "HAVING", "LIMIT", "OFFSET", "ASC", "DESC"):
                i = self.skip_subselect_head(i) if t.up == "SELECT" else i + 1
            elif t.text == "(":
                i = self.skip_balanced(i, "(", ")")
            else:
                i = self.triples(i, required=required)
        return i

    def union_or_group(self, i: int, *, required: bool) -> int:
        """A ``{ … }`` at ``i``, or ``{ … } UNION { … } …``: each branch read with its own
        mark, so that patterns of two branches are not taken as holding together."""
        ends = [self.skip_balanced(i, "{", "}")]
        while ends[-1] + 1 < len(self.toks) and self.toks[ends[-1]].kind == "word" and \
                self.toks[ends[-1]].up == "UNION" and self.toks[ends[-1] + 1].text == "{":
            ends.append(self.skip_balanced(ends[-1] + 1, "{", "}"))
        if len(ends) == 1:
            return self.group(i + 1, required=required)
        self.unions += 1
        union, outer = self.unions, self.branch
        for n, _ in enumerate(ends):
            self.branch = outer + ((union, n),)
            i = self.group(i + 1, required=required)
            if n + 1 < len(ends):
                i += 1  # the UNION keyword
        self.branch = outer
        return i

    def triples(self, i: int, *, required: bool) -> int:
        """A subject and its predicate-object list, up to ``.``, ``}`` or a keyword."""
        toks = self.toks
        subject, i = self.term(i)
        if subject is None:
            return i + 1
        while i < len(toks):
            predicate, i = self.path(i)
            if predicate is None:
                return i
            while True:
                obj, i = self.term(i)
                if obj is None:
                    return i
                self.q.triples.append((subject, predicate, obj, required))
                self.q.branches.append(self.branch)
                if i < len(toks) and toks[i].text == ",":
                    i += 1
                    continue
                break
            if i < len(toks) and toks[i].text == ";":
                i += 1
                while i < len(toks) and toks[i].text == ";":
                    i += 1
                continue
            return i
        return i

    def term(self, i: int) -> tuple[str | None, int]:
        toks = self.toks
        if i >= len(toks):
            return None, i
        t = toks[i]
        if t.kind in ("iri", "pname", "var", "string", "number"):
            return t.text, i + 1
        if t.kind == "word" and t.up in ("TRUE", "FALSE"):
            return t.text.lower(), i + 1
        if t.text == "[":
            return "[]", self.skip_balanced(i, "[", "]")
        if t.text == "(":
            return "()", self.skip_balanced(i, "(", ")")
        return None, i

    def path(self, i: int) -> tuple[str | None, int]:
        """A predicate: a variable, or a property path (``wdt:P50/wdt:P19``, ``wdt:P279*``, ``a``)."""
        toks = self.toks
        if i < len(toks) and toks[i].kind == "var":
            return toks[i].text, i + 1
        parts = []
        while i < len(toks):
            while i < len(toks) and toks[i].text in ("^", "!"):
                parts.append(toks[i].text)
                i += 1
            if i >= len(toks):
                break
            t = toks[i]
            if t.kind in ("iri", "pname") or (t.kind == "word" and t.text == "a"):
                parts.append(t.text)
                i += 1
            elif t.text == "(":
                end = self.skip_balanced(i, "(", ")")
                parts.append("".join(x.text for x in toks[i:end]))
                i = end
            else:
                break
            if i < len(toks) and toks[i].text in ("*", "+", "?"):
                parts.append(toks[i].text)
                i += 1
            if i < len(toks) and toks[i].text in ("/", "|"):
                parts.append(toks[i].text)
                i += 1
                continue
            break
        return ("".join(parts) or None), i

    def skip_balanced(self, i: int, open_: str, close: str) -> int:
        depth = 0
        while i < len(self.toks):
            if self.toks[i].text == open_:
                depth += 1
            elif self.toks[i].text == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    def skip_expression(self, i: int) -> int:
        """A FILTER/BIND constraint: ``( ... )``, ``NOT EXISTS { ... }`` or ``fn( ... )``."""
        toks = self.toks
        while i < len(toks) and toks[i].kind == "word" and toks[i].up in ("NOT", "EXISTS"):
            i += 1
        if i < len(toks) and toks[i].text == "{":
            return self.skip_balanced(i, "{", "}")
        if i < len(toks) and toks[i].kind in ("word", "pname", "iri") and i + 1 < len(toks) and \
                toks[i + 1].text == "(":
            i += 1
        return self.skip_balanced(i, "(", ")") if i < len(toks) and toks[i].text == "(" else i

    def skip_until_block_end(self, i: int) -> int:
        while i < len(self.toks) and self.toks[i].text != "{":
            i += 1
        return self.skip_balanced(i, "{", "}")

    def skip_subselect_head(self, i: int) -> int:
        while i < len(self.toks) and self.toks[i].text != "{":
            i += 1
        return i


def _compares_two_values(expr: Sequence[Tok]) -> bool:
    """Whether ``expr`` holds ``<``/``>``/``<=``/``>=`` with a variable on both sides."""
    stops = ("&&", "||", ",")
    for i, t in enumerate(expr):
        if t.kind != "op" or t.text not in ("<", ">", "<=", ">="):
            continue
        left, depth, j = False, 0, i - 1
        while j >= 0:
            x = expr[j].text
            if x == ")":
                depth += 1
            elif x == "(":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and x in stops:
                break
            left = left or expr[j].kind == "var"
            j -= 1
        right, depth, j = False, 0, i + 1
        while j < len(expr):
            x = expr[j].text
            if x == "(":
                depth += 1
            elif x == ")":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and x in stops:
                break
            right = right or expr[j].kind == "var"
            j += 1
        if left and right:
            return True
    return False


def _is_constant(term: str) -> bool:
    return not term.startswith(("?", "$", "[", "("))


def _round_trip(q: QueryForm) -> bool:
    ans = q.answer_var
    if not ans:
        return False
    required = [(s, p, o) for s, p, o, req in q.triples if req and not p.startswith(("?", "$"))]
    for s, p, o in required:
        if ans not in (s, o):
            continue
        middle = o if s == ans else s
        if not middle.startswith(("?", "$")) or middle == ans:
            continue
        for s2, p2, o2 in required:
            if p2 == p and (s2, o2) != (s, o) and middle in (s2, o2):
                other = o2 if s2 == middle else s2
                if _is_constant(other):
                    return True
    return False


def _together(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    """Two patterns' UNION marks let them hold in one solution: no UNION puts them in
    different branches."""
    branch_of = dict(a)
    return all(branch_of.get(union, n) == n for union, n in b)


def _restricted(q: QueryForm) -> bool:
    """Two required patterns that hold together have the answer variable in them."""
    ans = q.answer_var
    marks = [q.branches[k] if k < len(q.branches) else () for k, (s, _, o, req) in enumerate(q.triples)
             if req and ans in (s, o)]
    return any(_together(a, b) for k, a in enumerate(marks) for b in marks[k + 1:])


def _picks_among_named(q: QueryForm) -> bool:
    """The answers are a list of constants the query names: ``VALUES ?x { … }`` or
    ``FILTER(?x IN (…))`` with only constants inside."""
    ans = q.answer_var
    if not ans:
        return False
    if ans in q.listed:
        return True
    for e in q.expressions:
        texts = [t.text for t in e]
        for k in range(len(e) - 2):
            if e[k].text == ans and e[k + 1].kind == "word" and e[k + 1].up == "IN" and texts[k + 2] == "(":
                end = texts.index(")", k + 2) if ")" in texts[k + 2:] else len(texts)
                inside = [t for t in e[k + 3:end] if t.text != ","]
                if len(inside) >= 2 and all(t.kind in ("iri", "pname", "string", "number") for t in inside):
                    return True
    return False


def query_shape(sparql: str, gold_kinds: Iterable[str] = ()) -> str:
    """The shape of a gold query (the rules of the module docstring); ``gold_kinds`` are the
    kinds of its gold values (for the literal rule)."""
    q = read_query(sparql)
    projection = " ".join(t.up for t in q.projection)
    if q.form == "ASK":
        return "boolean"
    if re.search(r"\bCOUNT \(", projection):
        return "count"
    if q.order_by_limit or re.search(r"\b(MAX|MIN) \(", projection):
        return "comparison" if q.order_by_limit and _picks_among_named(q) else "superlative"
    if any(_compares_two_values(e) for e in q.expressions):
        return "comparison"
    if _round_trip(q):
        return "round trip"
    if q.answer_var and _restricted(q):
        return "constraint"
    return _by_gold(gold_kinds) or "chain"


def _by_gold(gold_kinds: Iterable[str]) -> str | None:
    kinds = set(gold_kinds)
    if kinds == {"boolean"}:
        return "boolean"
    if kinds and kinds <= {"number", "date", "string"}:
        return "literal"
    return None


def normalise_shape(name: str) -> str:
    """A ``type`` field's shape: one of :data:`SHAPES` (some spellings accepted, e.g.
    ``round-trip``), else the name itself, lower-cased."""
    low = " ".join(name.strip().lower().replace("_", " ").split())
    return low if low in SHAPES else _ALIASES.get(name.strip().lower(), _ALIASES.get(low, low))


def item_shape(type_field: str | None, sparql: str | None, gold_kinds: Iterable[str] = ()) -> str:
    """A question's shape: its ``type`` field when it has one, else its gold query's, else
    what its gold answers say (boolean, literal), else ``unknown``."""
    if type_field and str(type_field).strip():
        return normalise_shape(str(type_field))
    gold_kinds = list(gold_kinds)
    if sparql and sparql.strip():
        return query_shape(sparql, gold_kinds)
    return _by_gold(gold_kinds) or UNKNOWN

"""A sandbox for Cypher an LLM wrote: run it in an isolated in-memory graph and decode triples.

The pseudo-graph QA method asks a model to write the knowledge a question needs as Cypher
``CREATE`` statements. This module runs that text with ``cypherast`` (a pure-Python
openCypher parser and executor) in a fresh in-memory graph that shares nothing with any
store, and decodes what it built:

* a relationship gives ``(subject name, relation type, object name)``;
* a node property other than the name gives ``(node name, property, value)``.

A node's name is its ``name`` property, else its first string property, else its variable,
else its first label.

Only creation is allowed: ``CREATE`` and ``MERGE`` (without ``ON CREATE``/``ON MATCH``
actions), and a final ``RETURN``, which is ignored. Anything else (``MATCH``, ``DELETE``,
``SET``, ``CALL``, ``LOAD CSV``, ``UNWIND``, ``WITH``, ...) is refused with
:class:`~kgstore.errors.UnsafeQueryError`; property values must be literals. Text that does
not parse raises :class:`~kgstore.errors.CypherSyntaxError` with its line and column.

What small models write is tolerated: code fences (with prose around them), ``//`` and
``/* */`` comments, several statements separated by ``;`` or new lines, and variables
declared in one statement and used in later ones (all statements run as one query, so
their variables stay bound). Positions in errors refer to the text as passed in, because
the clean-up only blanks characters out, never moves them.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kgstore.errors import CypherSyntaxError, UnsafeQueryError
from kgstore.graph import cypher_segments as segments, cypher_words as words

from ._positions import line_column as _line_column, line_of as _line_of

MAX_CHARS = 20_000
ALLOWED = "only CREATE (or MERGE) statements that add nodes and relationships are allowed"
# Temporal constructors whose single string argument is kept as the value.
_TEMPORAL = frozenset({"date", "datetime", "localdatetime", "time", "localtime", "duration"})

_FENCE = re.compile(r"```[^\n]*\n?(.*?)(?:```|\Z)", re.DOTALL)
# Schema and administration commands (Neo4j's), refused by name.
_SCHEMA = r"(?:CREATE|DROP)\s+(?:OR\s+REPLACE\s+)?(?:INDEX|CONSTRAINT|DATABASE|COMPOSITE|ALIAS|USER|ROLE)\b"
_ADMIN = (r"(?:SHOW|GRANT|REVOKE|DENY|TERMINATE|ALTER|START|STOP)\s+(?:[A-Z]+\s+)?(?:DATABASES?|INDEX(?:ES)?|"
          r"CONSTRAINTS?|USERS?|ROLES?|PROCEDURES|FUNCTIONS|TRANSACTIONS?|SETTINGS|PRIVILEGES|ALIAS(?:ES)?|"
          r"SERVERS?)\b")
# Upper-case keywords start code; other casings only where prose would not read so
# ("With this graph..." and "Show users..." are prose, "load csv from" is not).
_CODE_START = re.compile(r"\s*(?:(?i:CREATE|MERGE|MATCH|OPTIONAL\s+MATCH)\s*\(|"
                         r"(?:RETURN|WITH|UNWIND|DETACH|DELETE|SET|REMOVE|CALL|LOAD|FOREACH|DROP|WHERE|"
                         r"ORDER|LIMIT|SKIP|UNION|USING)\b|" + _ADMIN + "|"
                         r"(?i:LOAD\s+CSV|USING\s+PERIODIC\s+COMMIT|DETACH\s+DELETE|CALL\s*\{|"
                         r"CALL\s+[A-Za-z_]\w*\.[\w.]*\s*\(|" + _SCHEMA + r")|[()\[\]{}<,*/-])")
_ADMIN_COMMAND = re.compile(r"(?i:" + _SCHEMA + "|" + _ADMIN + r")")
_CONTINUES = tuple(",-([{>:=|")
FORBIDDEN_CLAUSES = ("LOAD CSV", "MATCH", "DETACH DELETE", "DELETE", "SET", "REMOVE", "CALL", "UNWIND", "FOREACH",
                     "DROP", "WITH")


class PseudoTriple(NamedTuple):
    subject: str
    relation: str
    object: str


@dataclass(frozen=True)
class PseudoNode:
    name: str
    labels: tuple[str, ...]
    variable: str | None
    properties: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class PseudoEdge:
    subject: str
    relation: str
    object: str
    properties: tuple[tuple[str, Any], ...] = ()


@dataclass
class PseudoGraph:
    """What the generated Cypher built. ``triples`` (relationships first, then node
    properties, in creation order, without repeats) is what the QA method uses."""

    nodes: list[PseudoNode] = field(default_factory=list)
    edges: list[PseudoEdge] = field(default_factory=list)
    triples: list[PseudoTriple] = field(default_factory=list)
    code: str = ""  # the Cypher that ran, blanked where the input held prose, fences or ';'
    statements: int = 0  # CREATE/MERGE clauses run
    seconds: float = 0.0

    @property
    def subjects(self) -> list[str]:
        return list(dict.fromkeys(t.subject for t in self.triples))


def run_pseudo_graph(cypher_text: str, *, max_statements: int = 100, max_nodes: int = 300,
                     max_relationships: int = 600, timeout_s: float = 2.0) -> PseudoGraph:
    """Run LLM-written Cypher ``CREATE`` text in an isolated in-memory graph; decode triples.

    Raises :class:`UnsafeQueryError` for anything but creation or when a cap is exceeded,
    and :class:`CypherSyntaxError` (with ``line``, ``column``, ``offset``) when it does not parse.
    """
    started = time.perf_counter()
    if len(cypher_text) > MAX_CHARS:
        raise UnsafeQueryError(f"the Cypher text is {len(cypher_text)} characters long; the sandbox "
                               f"takes at most {MAX_CHARS}")
    code = clean_cypher(cypher_text)
    if not code.strip():
        raise CypherSyntaxError("no Cypher statements found in the text", line=1, column=1, offset=0,
                                line_text=_line_of(cypher_text, 0))
    import cypherast
    from cypherast import ast as a

    try:
        tree = cypherast.parse_one(code)
    except cypherast.CypherastError as exc:
        _refuse_unparsable(code)
        raise _syntax_error(exc, cypher_text) from exc
    clauses = _checked_clauses(tree, code, a)
    creating = [c for c in clauses if isinstance(c, (a.Create, a.Merge))]
    if not creating:
        raise UnsafeQueryError("the Cypher text creates nothing; " + ALLOWED)
    if len(creating) > max_statements:
        raise UnsafeQueryError(f"{len(creating)} CREATE/MERGE statements exceed the sandbox's cap of "
                               f"{max_statements}")
    n_nodes, n_rels = _pattern_sizes(creating, a)
    if n_nodes > max_nodes or n_rels > max_relationships:
        raise UnsafeQueryError(f"the Cypher text writes {n_nodes} node and {n_rels} relationship patterns; "
                               f"the sandbox's caps are {max_nodes} and {max_relationships}")
    tree.this.clauses = creating  # a final RETURN is dropped: only what was built matters
    graph, variables = _execute(tree, deadline=started + timeout_s, timeout_s=timeout_s,
                                max_nodes=max_nodes, max_relationships=max_relationships)
    pg = decode(graph, variables)
    pg.code = code
    pg.statements = len(creating)
    pg.seconds = time.perf_counter() - started
    return pg


# -- cleaning the text (pure; keeps every character's position) -----------------------------
def clean_cypher(text: str) -> str:
    """``text`` with everything but Cypher code blanked: what lies outside code fences (or,
    without fences, lines of prose) and statement-separating semicolons. Newlines stay, so
    line and column numbers still point into ``text``."""
    if "```" in text:
        keep = [False] * len(text)
        for m in _FENCE.finditer(text):
            for i in range(m.start(1), m.end(1)):
                keep[i] = True
        text = "".join(ch if k or ch == "\n" else " " for ch, k in zip(text, keep))
    else:
        text = _blank_prose(text)
    out = list(text)
    for kind, start, end in segments(text):
        if kind == "code":
            for i in range(start, end):
                if out[i] == ";":
                    out[i] = " "
    return "".join(out)


def _blank_prose(text: str) -> str:
    """Blank lines that read as prose: not starting like Cypher and not continuing an
    unfinished line (open brackets, a trailing comma or arrow)."""
    lines = text.split("\n")
    depth = 0
    continues = False
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if depth > 0 or continues or _CODE_START.match(line):
            depth = max(0, depth + _bracket_balance(line))
            stripped = _strip_comment(line).rstrip()
            continues = stripped.endswith(_CONTINUES)
        else:
            lines[i] = " " * len(line)
    return "\n".join(lines)


def _bracket_balance(line: str) -> int:
    balance = 0
    for kind, a, b in segments(line):
        if kind == "code":
            chunk = line[a:b]
            balance += sum(chunk.count(c) for c in "([{") - sum(chunk.count(c) for c in ")]}")
    return balance


def _strip_comment(line: str) -> str:
    return "".join(line[a:b] for kind, a, b in segments(line) if kind != "comment")


# -- checking the tree ------------------------------------------------------------------------
def _checked_clauses(tree, code: str, a) -> list:
    query = getattr(tree, "this", None)
    if not isinstance(tree, a.Cypher) or not isinstance(query, a.Query):
        kind = type(query if isinstance(tree, a.Cypher) else tree).__name__.upper()
        raise UnsafeQueryError(f"{kind} is not allowed in a pseudo-graph; {ALLOWED}")
    clauses = list(query.clauses)
    refused: list[str] = []
    for i, clause in enumerate(clauses):
        if isinstance(clause, a.Return) and i == len(clauses) - 1:
            continue
        if isinstance(clause, a.Create) or (isinstance(clause, a.Merge) and not clause.actions):
            continue
        keyword = _keyword(clause, a)
        if keyword not in refused:
            refused.append(keyword)
    if refused:
        names = " and ".join([", ".join(refused[:-1]), refused[-1]] if len(refused) > 1 else refused)
        verb = "are" if len(refused) > 1 else "is"
        refuse(f"{names} {verb} not allowed in a pseudo-graph; {ALLOWED}", code, refused[0])
    for clause in clauses:
        if isinstance(clause, (a.Create, a.Merge)):
            _check_pattern(clause.pattern, code, a)
    return clauses


def _keyword(clause, a) -> str:
    if isinstance(clause, a.Match):
        return "OPTIONAL MATCH" if clause.optional else "MATCH"
    if isinstance(clause, a.Delete):
        return "DETACH DELETE" if clause.detach else "DELETE"
    if isinstance(clause, a.Merge):
        return "MERGE ... ON CREATE/ON MATCH SET"
    names = {a.Set: "SET", a.Remove: "REMOVE", a.Unwind: "UNWIND", a.With: "WITH", a.Return: "RETURN before the end",
             a.Foreach: "FOREACH", a.CallProcedure: "CALL", a.CallSubquery: "CALL", a.LoadCsv: "LOAD CSV"}
    for cls, name in names.items():
        if isinstance(clause, cls):
            return name
    return type(clause).__name__.upper()


def refuse(reason: str, code: str, keyword: str | None = None):
    """Raise UnsafeQueryError, pointing at the first clause ``keyword`` in ``code`` when found."""
    offset = _clause_offset(code, keyword) if keyword else None
    line = column = None
    if offset is not None:
        line, column = _line_column(code, offset)
    raise UnsafeQueryError(reason, position=offset, line=line, column=column)


def _clause_offset(code: str, keyword: str) -> int | None:
    first = keyword.split()[0].upper()
    for w in words(code):
        # skip variables, labels, properties and map keys that happen to spell a keyword
        if w.text.upper() == first and w.before not in (".", ":", "$", "(") and w.after != ":":
            return w.offset
    return None


def _refuse_unparsable(code: str) -> None:
    """Text that does not parse but holds a forbidden clause is refused for the clause
    (LOAD CSV, for one, is not in the parser's grammar, nor are schema commands)."""
    for kind, start, end in segments(code):
        m = _ADMIN_COMMAND.search(code, start, end) if kind == "code" else None
        if m is not None:
            command = " ".join(m.group(0).split()).upper()
            line, column = _line_column(code, m.start())
            raise UnsafeQueryError(f"{command} is not allowed in a pseudo-graph; {ALLOWED}",
                                   position=m.start(), line=line, column=column)
    for keyword in FORBIDDEN_CLAUSES:
        if _clause_offset(code, keyword) is not None:
            refuse(f"{keyword} is not allowed in a pseudo-graph; {ALLOWED}", code, keyword)


def _check_pattern(pattern, code: str, a) -> None:
    for path in pattern.paths:
        for el in path.elements:
            if isinstance(el, a.NodePattern):
                _check_properties(el.properties, code, a)
            elif isinstance(el, a.RelationshipPattern):
                if el.variable_length or el.min_hops is not None or el.max_hops is not None:
                    refuse("variable-length relationships cannot be created; write each relationship", code)
                if not el.types:
                    refuse("a created relationship needs a type, like -[:COVERS]->", code)
                _check_properties(el.properties, code, a)
            else:
                refuse(f"{type(el).__name__} patterns are not allowed in a pseudo-graph; {ALLOWED}", code)


def _check_properties(props, code: str, a) -> None:
    if props is None:
        return
    if not isinstance(props, a.Map):
        refuse("properties must be written as a map of literal values, like {name: \"Andes\"}", code)
    for i, (key, value) in enumerate(props.entries):
        props.entries[i] = (key, _literal(key, value, code, a))


def _literal(key: str, node, code: str, a):
    """``node`` if it is a literal value; a temporal constructor becomes its string."""
    if isinstance(node, a.Literal):
        return node
    if isinstance(node, a.Neg) and isinstance(node.this, (a.Integer, a.Float)):
        return node
    if isinstance(node, a.List):
        node.expressions = [_literal(key, x, code, a) for x in (node.expressions or [])]
        return node
    if (isinstance(node, a.FunctionCall) and node.name.lower() in _TEMPORAL and len(node.expressions) == 1
            and isinstance(node.expressions[0], a.String)):
        return node.expressions[0]
    what = "a parameter" if isinstance(node, a.Parameter) else f"an expression ({type(node).__name__})"
    refuse(f"the value of property {key!r} is {what}; write values as literals "
           "(strings, numbers, booleans or lists of them)", code)


def _pattern_sizes(clauses, a) -> tuple[int, int]:
    nodes = rels = 0
    for clause in clauses:
        for path in clause.pattern.paths:
            for el in path.elements:
                nodes += isinstance(el, a.NodePattern)
                rels += isinstance(el, a.RelationshipPattern)
    return nodes, rels


# -- running ----------------------------------------------------------------------------------
def _execute(tree, *, deadline: float, timeout_s: float, max_nodes: int, max_relationships: int):
    """Run ``tree`` on a fresh in-memory graph; return it and each created node's variable."""
    from cypherast import CypherastError
    from cypherast.executor.engine import Engine
    from cypherast.executor.graph import Graph

    variables: dict[int, str] = {}

    class GuardedEngine(Engine):
        # Every node and relationship goes through these two: the place to enforce caps.
        def _create_node(self, pat, row):
            bound = pat.variable is not None and pat.variable.this in row
            node = super()._create_node(pat, row)
            if not bound:
                self._check()
                if pat.variable is not None:
                    variables.setdefault(node.id, pat.variable.this)
            return node

        def _create_rel(self, pat, start, end, row):
            self._check()
            return super()._create_rel(pat, start, end, row)

        def _check(self):
            if time.perf_counter() > deadline:
                raise UnsafeQueryError(f"the Cypher text took longer than {timeout_s:g} s to run")
            if len(self.graph.nodes) >= max_nodes or len(self.graph.relationships) >= max_relationships:
                raise UnsafeQueryError(f"the Cypher text built more than {max_nodes} nodes or "
                                       f"{max_relationships} relationships")

    from cypherast import ast as a
    from cypherast.dialects.lower import lower_to_core

    graph = Graph()
    core = lower_to_core(tree)
    query = core.this if isinstance(core, a.Cypher) else core
    try:
        GuardedEngine(graph, {}).run_query(query)
    except CypherastError as exc:
        raise UnsafeQueryError(f"the Cypher text failed to run: {exc}") from exc
    except (TypeError, ValueError, KeyError, AssertionError) as exc:
        raise UnsafeQueryError(f"the Cypher text failed to run: {exc}") from exc
    return graph, variables


# -- decoding (pure over the in-memory graph) -------------------------------------------------
def decode(graph, variables: dict[int, str] | None = None) -> PseudoGraph:
    """Nodes, edges and triples of a cypherast in-memory ``graph``."""
    variables = variables or {}
    pg = PseudoGraph()
    names: dict[int, str] = {}
    name_keys: dict[int, str | None] = {}
    for node in sorted(graph.nodes.values(), key=lambda n: n.id):
        key = _name_key(node.props)
        name_keys[node.id] = key
        labels = tuple(sorted(node.labels))
        if key is not None:
            name = format_value(node.props[key])
        else:
            name = variables.get(node.id) or (labels[0] if labels else f"node{node.id}")
        names[node.id] = name
        pg.nodes.append(PseudoNode(name, labels, variables.get(node.id), tuple(node.props.items())))
    triples: dict[PseudoTriple, None] = {}
    for rel in sorted(graph.relationships.values(), key=lambda r: r.id):
        edge = PseudoEdge(names[rel.start], rel.type, names[rel.end], tuple(rel.props.items()))
        pg.edges.append(edge)
        triples[PseudoTriple(edge.subject, edge.relation, edge.object)] = None
    for node in sorted(graph.nodes.values(), key=lambda n: n.id):
        for key, value in node.props.items():
            if key != name_keys[node.id] and value is not None:
                triples[PseudoTriple(names[node.id], key, format_value(value))] = None
    pg.triples = list(triples)
    return pg


def _name_key(props: dict) -> str | None:
    for key in props:
        if key.lower() == "name" and props[key] is not None:
            return key
    for key, value in props.items():
        if isinstance(value, str) and value.strip():
            return key
    return None


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    return str(value)


# -- errors -------------------------------------------------------------------------------------
_CODE_PREFIX = re.compile(r"^\[CG\d+\]\s*(?:line \d+:\d+\s*)?")


def _syntax_error(exc, text: str) -> CypherSyntaxError:
    reason = _CODE_PREFIX.sub("", str(exc).split("\n", 1)[0]) or "syntax error"
    pos = exc.position
    if pos is None:
        offset = len(text)
        line, column = _line_column(text, offset)
    else:
        offset, line, column = pos.offset, pos.line, pos.col
    return CypherSyntaxError(reason, line=line, column=column, offset=offset, line_text=_line_of(text, offset))

"""What each index kind should hold, read from the catalog: entries (key, text, target).

Each ``*_entries(con)`` streams lists of :class:`Entry` from a DuckDB cursor, so building
the wanted set of a large store never holds it in memory at once. The texts come from the
pure verbalizers in :mod:`indexer._verbalize`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from . import _verbalize as v

FETCH_ROWS = 20_000
SEP = "\x1f"  # joins the parts of an item key; never appears in IRIs or labels


@dataclass(slots=True)
class Entry:
    item_key: str  # what the vector stands for; stable across builds
    text: str  # what gets embedded
    iri: str  # what a hit points to
    label: str
    extra: dict | None = None


def _rows(con, sql: str, params=()) -> Iterator[list[tuple]]:
    cur = con.execute(sql, list(params))
    while True:
        rows = cur.fetchmany(FETCH_ROWS)
        if not rows:
            return
        yield rows


# -- entities ------------------------------------------------------------------------------
NAMED_ENTITY = "label IS NOT NULL AND trim(label) <> '' AND NOT coalesce(is_mediator, FALSE)"
ENTITY_SQL = f"""
    SELECT iri, label, description, aliases FROM entities
    WHERE {NAMED_ENTITY}{{top}}
    ORDER BY iri
"""


def most_popular(top: int) -> str:
    """The SQL condition (appended to a ``WHERE`` over ``entities``) that keeps the ``top``
    most popular named entities; none when ``top`` is 0 (every entity)."""
    if top <= 0:
        return ""
    return (f" AND iri IN (SELECT iri FROM entities WHERE {NAMED_ENTITY} "
            f"ORDER BY coalesce(popularity, 0) DESC, iri LIMIT {int(top)})")


def entity_entries(con, top: int = 0) -> Iterator[list[Entry]]:
    """``label (description)`` per entity, and the same for each alias (mediators and
    unlabelled entities are skipped: nobody searches for them by name). ``top``: only
    the ``top`` most popular entities (0: all); the label tier links the rest by name."""
    for rows in _rows(con, ENTITY_SQL.format(top=most_popular(top))):
        out: list[Entry] = []
        for iri, label, description, aliases in rows:
            label = v.clean(label)
            out.append(Entry(iri, v.entity_text(label, description), iri, label))
            for alias in dict.fromkeys(v.clean(a) for a in (aliases or ())):
                if alias and alias != label:
                    out.append(Entry(f"{iri}{SEP}alias{SEP}{alias}", v.entity_text(alias, description), iri, label,
                                     {"alias": alias}))
        yield out


# -- relations -----------------------------------------------------------------------------
RELATION_SQL = """
    SELECT iri, label, description, inverse_label FROM relations
    WHERE label IS NOT NULL OR usage > 0
    ORDER BY iri
"""


def relation_label(iri: str, label: str | None) -> str:
    return v.clean(label) or v.fallback_label(iri)


def relation_entries(con) -> Iterator[list[Entry]]:
    for rows in _rows(con, RELATION_SQL):
        out: list[Entry] = []
        for iri, label, description, inverse_label in rows:
            label = relation_label(iri, label)
            out.append(Entry(iri, v.relation_text(label, description), iri, label))
            inverse = v.clean(inverse_label)
            if inverse and inverse != label:
                out.append(Entry(f"{iri}{SEP}inverse", v.inverse_relation_text(inverse, label, description), iri,
                                 label, {"inverse": inverse}))
        yield out


# -- triples -------------------------------------------------------------------------------
# Direct facts whose ends are not mediators; labels joined in. Unlabelled subjects are
# skipped (nothing could find them by text); unlabelled objects read as their local name.
# ``{scope}`` narrows each query to the facts of some entities (see :func:`triples_about`);
# the whole-store queries leave it empty. Columns are named so a scoped query can rank them.
PLAIN_TRIPLES_SELECT = """
    SELECT DISTINCT st.s AS x, st.p AS p1, st.o AS y, st.o_literal AS lit, st.datatype AS dt, st.lang AS lang,
           es.label AS x_label, r.label AS l1, eo.label AS y_label{anchor}
    FROM {statements} st{join}
    JOIN entities es ON es.iri = st.s
    LEFT JOIN relations r ON r.iri = st.p
    LEFT JOIN entities eo ON eo.iri = st.o AND NOT st.o_literal
    WHERE es.label IS NOT NULL AND NOT coalesce(es.is_mediator, FALSE)
      AND NOT coalesce(eo.is_mediator, FALSE){scope}
"""
PLAIN_TRIPLES_SQL = PLAIN_TRIPLES_SELECT.format(anchor="", scope="", statements="statements", join="") + \
    "    ORDER BY x, p1, y\n"

# Scoped, the direct facts are read in one pass over the statements, both ends at once,
# and only those few rows are joined with the labels (joining first costs a scan of the
# entities per end: 0.4 s at a million statements).
_NEAR = ("near AS MATERIALIZED (SELECT * FROM statements WHERE s IN (SELECT iri FROM about) "
         "OR (o IN (SELECT iri FROM about) AND NOT o_literal))")
_PLAIN_ABOUT = PLAIN_TRIPLES_SELECT.format(
    anchor=", a.iri AS anchor", scope="", statements="near",
    join=" JOIN about a ON a.iri = st.s OR (a.iri = st.o AND NOT st.o_literal)")

# Two hops through a mediator that has incoming edges: x -p1-> m -p2-> y (y != x).
MEDIATED_IN_SELECT = """
    SELECT DISTINCT a.s AS x, a.p AS p1, a.o AS m, b.p AS p2, b.o AS y, b.o_literal AS lit, b.datatype AS dt,
           b.lang AS lang, ex.label AS x_label, r1.label AS l1, r2.label AS l2, ey.label AS y_label{anchor}
    FROM statements a
    JOIN entities em ON em.iri = a.o AND em.is_mediator
    JOIN entities ex ON ex.iri = a.s AND ex.label IS NOT NULL AND NOT coalesce(ex.is_mediator, FALSE)
    JOIN statements b ON b.s = a.o AND NOT (b.o = a.s AND NOT b.o_literal)
    LEFT JOIN entities ey ON ey.iri = b.o AND NOT b.o_literal
    LEFT JOIN relations r1 ON r1.iri = a.p
    LEFT JOIN relations r2 ON r2.iri = b.p
    WHERE NOT a.o_literal AND NOT coalesce(ey.is_mediator, FALSE){scope}
"""
MEDIATED_IN_SQL = MEDIATED_IN_SELECT.format(anchor="", scope="") + "    ORDER BY x, p1, m, p2, y\n"

# Mediators that only point outwards (no statement has them as object): each pair of
# their edges reads as x -pa^-1-> m -pb-> y, once per pair (the entity end first).
MEDIATED_OUT_SELECT = """
    SELECT DISTINCT b.o AS x, b.p AS p1, b.s AS m, c.p AS p2, c.o AS y, c.o_literal AS lit, c.datatype AS dt,
           c.lang AS lang, ex.label AS x_label, r1.label AS l1, r2.label AS l2, ey.label AS y_label{anchor}
    FROM statements b
    JOIN entities em ON em.iri = b.s AND em.is_mediator
    JOIN entities ex ON ex.iri = b.o AND ex.label IS NOT NULL AND NOT coalesce(ex.is_mediator, FALSE)
    JOIN statements c ON c.s = b.s AND c.p <> b.p AND (c.o_literal OR b.p < c.p)
    LEFT JOIN entities ey ON ey.iri = c.o AND NOT c.o_literal
    LEFT JOIN relations r1 ON r1.iri = b.p
    LEFT JOIN relations r2 ON r2.iri = c.p
    WHERE NOT b.o_literal AND NOT coalesce(ey.is_mediator, FALSE)
      AND NOT EXISTS (SELECT 1 FROM statements a WHERE a.o = b.s AND NOT a.o_literal){scope}
"""
MEDIATED_OUT_SQL = MEDIATED_OUT_SELECT.format(anchor="", scope="") + "    ORDER BY x, p1, m, p2, y\n"

# Per query: the subject end and the object end, as (column, the condition that names it).
_ENDS = {
    "in": (("a.s", "a.s IN (SELECT iri FROM about)"),
           ("b.o", "b.o IN (SELECT iri FROM about) AND NOT b.o_literal")),
    "out": (("b.o", "b.o IN (SELECT iri FROM about)"),
            ("c.o", "c.o IN (SELECT iri FROM about) AND NOT c.o_literal")),
}
_MEDIATED_SELECTS = {"in": MEDIATED_IN_SELECT, "out": MEDIATED_OUT_SELECT}


def _object_label(o: str, literal: bool, label: str | None) -> str:
    if literal:
        return v.literal_text(o)
    return v.clean(label) or v.fallback_label(o)


def _object_key(o: str, literal: bool) -> str:
    return f'"{o}' if literal else o


def _literal_extra(literal: bool, datatype: str | None, lang: str | None) -> dict:
    extra = {}
    if literal and datatype:
        extra["datatype"] = datatype
    if literal and lang:
        extra["lang"] = lang
    return extra


def _plain_entry(row) -> Entry:
    s, p, o, literal, datatype, lang, s_label, p_label, o_label = row[:9]
    s_label = v.clean(s_label)
    p_label = relation_label(p, p_label)
    o_label = _object_label(o, literal, o_label)
    return Entry(
        SEP.join((s, p, _object_key(o, literal))), v.triple_text(s_label, p_label, o_label), s, s_label,
        {"s": s, "p": p, "o": o, "o_literal": bool(literal), "s_label": s_label, "p_label": p_label,
         "o_label": o_label, **_literal_extra(literal, datatype, lang)})


def _mediated_entry(row, direction: str) -> Entry:
    x, p1, m, p2, y, literal, datatype, lang, x_label, l1, l2, y_label = row[:12]
    x_label = v.clean(x_label)
    l1, l2 = relation_label(p1, l1), relation_label(p2, l2)
    y_label = _object_label(y, literal, y_label)
    return Entry(
        SEP.join((x, p1, m, p2, _object_key(y, literal))),
        v.mediated_triple_text(x_label, l1, l2, y_label), x, x_label,
        {"s": x, "p": [p1, p2], "o": y, "via": m, "o_literal": bool(literal), "s_label": x_label,
         "p_label": f"{l1} / {l2}", "o_label": y_label, "direction": direction,
         **_literal_extra(literal, datatype, lang)})


def triple_entries(con) -> Iterator[list[Entry]]:
    """``subject | relation | object`` per direct fact; through mediators, the two hops."""
    for rows in _rows(con, PLAIN_TRIPLES_SQL):
        yield [_plain_entry(row) for row in rows]
    for sql, direction in ((MEDIATED_IN_SQL, "in"), (MEDIATED_OUT_SQL, "out")):
        for rows in _rows(con, sql):
            yield [_mediated_entry(row, direction) for row in rows]


def has_mediators(con) -> bool:
    """Whether the catalog has mediator (CVT) nodes, whose facts read as two hops."""
    return bool(con.execute("SELECT EXISTS (SELECT 1 FROM entities WHERE is_mediator)").fetchone()[0])


def triples_about(con, iris: list[str], limit: int, *, mediated: bool = True) -> dict[str, list[Entry]]:
    """The entries :func:`triple_entries` makes whose subject or object is one of ``iris``,
    per IRI, at most ``limit`` each: what a triple search about those entities scores
    when the store has no triple index. A hub's facts are taken relation by relation (the
    first of each relation, then the second of each...), so its many facts of one relation
    do not hide its other relations. ``mediated=False`` skips the two-hop queries (a
    store without mediators: see :func:`has_mediators`)."""
    out: dict[str, dict[str, tuple[int, Entry]]] = {}
    if not iris or limit <= 0:
        return {}
    queries = [("plain", "x, p1, y", "p1", _NEAR + ", ", _PLAIN_ABOUT)]
    if mediated:
        queries += [(shape, "x, p1, m, p2, y", "p1 || ' ' || p2", "", select.format(
            anchor=f", {column} AS anchor", scope=f" AND {condition}")) for shape, select in _MEDIATED_SELECTS.items()
            for column, condition in _ENDS[shape]]
    for shape, keys, relation, near, found in queries:
        rows = con.execute(f"""
            WITH about AS (SELECT unnest(?::VARCHAR[]) AS iri), {near}
            found AS ({found}),
            ranked AS (SELECT *, row_number() OVER (PARTITION BY anchor, {relation} ORDER BY {keys}) AS rn
                       FROM found)
            SELECT * FROM ranked
            QUALIFY row_number() OVER (PARTITION BY anchor ORDER BY rn, {relation}, {keys}) <= ?
            ORDER BY anchor, rn, {relation}, {keys}""", [iris, limit]).fetchall()
        for row in rows:  # ..., anchor, rn
            entry = _plain_entry(row) if shape == "plain" else _mediated_entry(row, shape)
            out.setdefault(row[-2], {}).setdefault(entry.item_key, (row[-1], entry))
    # both ends and all shapes together, relation by relation again (a stable sort keeps
    # each query's order within a rank), capped again
    return {iri: [e for _, e in sorted(entries.values(), key=lambda r: r[0])][:limit] for iri, entries in out.items()}

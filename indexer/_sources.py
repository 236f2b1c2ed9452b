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
ENTITY_SQL = """
    SELECT iri, label, description, aliases FROM entities
    WHERE label IS NOT NULL AND trim(label) <> '' AND NOT coalesce(is_mediator, FALSE)
    ORDER BY iri
"""


def entity_entries(con) -> Iterator[list[Entry]]:
    """``label (description)`` per entity, and the same for each alias (mediators and
    unlabelled entities are skipped: nobody searches for them by name)."""
    for rows in _rows(con, ENTITY_SQL):
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
PLAIN_TRIPLES_SQL = """
    SELECT DISTINCT st.s, st.p, st.o, st.o_literal, st.datatype, st.lang, es.label, r.label, eo.label
    FROM statements st
    JOIN entities es ON es.iri = st.s
    LEFT JOIN relations r ON r.iri = st.p
    LEFT JOIN entities eo ON eo.iri = st.o AND NOT st.o_literal
    WHERE es.label IS NOT NULL AND NOT coalesce(es.is_mediator, FALSE)
      AND NOT coalesce(eo.is_mediator, FALSE)
    ORDER BY st.s, st.p, st.o
"""

# Two hops through a mediator that has incoming edges: x -p1-> m -p2-> y (y != x).
MEDIATED_IN_SQL = """
    SELECT DISTINCT a.s, a.p, a.o, b.p, b.o, b.o_literal, b.datatype, b.lang, ex.label, r1.label, r2.label, ey.label
    FROM statements a
    JOIN entities em ON em.iri = a.o AND em.is_mediator
    JOIN entities ex ON ex.iri = a.s AND ex.label IS NOT NULL AND NOT coalesce(ex.is_mediator, FALSE)
    JOIN statements b ON b.s = a.o AND NOT (b.o = a.s AND NOT b.o_literal)
    LEFT JOIN entities ey ON ey.iri = b.o AND NOT b.o_literal
    LEFT JOIN relations r1 ON r1.iri = a.p
    LEFT JOIN relations r2 ON r2.iri = b.p
    WHERE NOT a.o_literal AND NOT coalesce(ey.is_mediator, FALSE)
    ORDER BY a.s, a.p, a.o, b.p, b.o
"""

# Mediators that only point outwards (no statement has them as object): each pair of
# their edges reads as x -pa^-1-> m -pb-> y, once per pair (the entity end first).
MEDIATED_OUT_SQL = """
    SELECT DISTINCT b.o, b.p, b.s, c.p, c.o, c.o_literal, c.datatype, c.lang, ex.label, r1.label, r2.label, ey.label
    FROM statements b
    JOIN entities em ON em.iri = b.s AND em.is_mediator
    JOIN entities ex ON ex.iri = b.o AND ex.label IS NOT NULL AND NOT coalesce(ex.is_mediator, FALSE)
    JOIN statements c ON c.s = b.s AND c.p <> b.p AND (c.o_literal OR b.p < c.p)
    LEFT JOIN entities ey ON ey.iri = c.o AND NOT c.o_literal
    LEFT JOIN relations r1 ON r1.iri = b.p
    LEFT JOIN relations r2 ON r2.iri = c.p
    WHERE NOT b.o_literal AND NOT coalesce(ey.is_mediator, FALSE)
      AND NOT EXISTS (SELECT 1 FROM statements a WHERE a.o = b.s AND NOT a.o_literal)
    ORDER BY b.o, b.p, b.s, c.p, c.o
"""


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


def triple_entries(con) -> Iterator[list[Entry]]:
    """``subject | relation | object`` per direct fact; through mediators, the two hops."""
    for rows in _rows(con, PLAIN_TRIPLES_SQL):
        out: list[Entry] = []
        for s, p, o, literal, datatype, lang, s_label, p_label, o_label in rows:
            s_label = v.clean(s_label)
            p_label = relation_label(p, p_label)
            o_label = _object_label(o, literal, o_label)
            out.append(Entry(
                SEP.join((s, p, _object_key(o, literal))), v.triple_text(s_label, p_label, o_label), s, s_label,
                {"s": s, "p": p, "o": o, "o_literal": bool(literal), "s_label": s_label, "p_label": p_label,
                 "o_label": o_label, **_literal_extra(literal, datatype, lang)}))
        yield out
    for sql in (MEDIATED_IN_SQL, MEDIATED_OUT_SQL):
        for rows in _rows(con, sql):
            out = []
            for x, p1, m, p2, y, literal, datatype, lang, x_label, l1, l2, y_label in rows:
                x_label = v.clean(x_label)
                l1, l2 = relation_label(p1, l1), relation_label(p2, l2)
                y_label = _object_label(y, literal, y_label)
                out.append(Entry(
                    SEP.join((x, p1, m, p2, _object_key(y, literal))),
                    v.mediated_triple_text(x_label, l1, l2, y_label), x, x_label,
                    {"s": x, "p": [p1, p2], "o": y, "via": m, "o_literal": bool(literal), "s_label": x_label,
                     "p_label": f"{l1} / {l2}", "o_label": y_label,
                     "direction": "in" if sql is MEDIATED_IN_SQL else "out",
                     **_literal_extra(literal, datatype, lang)}))
            yield out

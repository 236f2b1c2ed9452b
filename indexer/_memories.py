"""Statement memories and the URI memory.

*Statement memories* describe the SPARQL statement patterns the store can answer, so a
plan step ("?x is the spouse of Justin Bieber") can be turned back into a pattern
(``?e1 wdt:P26 ?e2``):

* every relation used in a direct fact gets two one-hop memories (asking for the object,
  asking for the subject), both with the pattern ``?e1 <p> ?e2``;
* relations through mediator nodes get the patterns the data actually shows:
  ``?e1 <in> ?m . ?m <out> ?e2`` (two variables) and ``?e1 <in> ?m . ?m <a> ?e2 . ?m <b> ?e3``
  (three), or ``?m <a> ?e1 . ?m <b> ?e2`` for mediators with no incoming edge.

Texts come from templates (:func:`indexer._verbalize.relation_phrases`); a ``describe``
callable (an LLM) may rewrite them, and its rewrites are cached per describer.

The *URI memory* maps ``label, description`` to the IRI of every entity (aliases too) and
relation: what placeholder resolution (``[ENT: Justin Bieber; Canadian singer]``) searches.
"""
from __future__ import annotations

from typing import Callable, Iterator

from kgstore.terms import shorten

from . import _verbalize as v
from ._sources import NAMED_ENTITY, SEP, Entry, _rows, has_mediators, most_popular, relation_label

Describe = Callable[[list[str]], list[str]]
MAX_MEDIATED_PATTERNS = 5_000  # per shape, most frequent first

# Relations and how many of their facts touch no mediator at either end.
# Only the mediators are joined (anti-joins against a small set): joining every entity at
# both ends built two hash tables of the whole entities table, 9.5 GB at 10M entities.
ONE_HOP_SQL = """
    WITH med AS (SELECT iri FROM entities WHERE is_mediator)
    SELECT st.p, r.label, r.inverse_label, count(*) AS n
    FROM statements st
    LEFT JOIN relations r ON r.iri = st.p
    WHERE st.s NOT IN (SELECT iri FROM med)
      AND (st.o_literal OR st.o NOT IN (SELECT iri FROM med))
    GROUP BY st.p, r.label, r.inverse_label
    ORDER BY st.p
"""

TWO_VAR_SQL = f"""
    SELECT a.p, b.p, count(*) AS n
    FROM statements a
    JOIN entities m ON m.iri = a.o AND m.is_mediator
    JOIN statements b ON b.s = a.o AND NOT (b.o = a.s AND NOT b.o_literal)
    WHERE NOT a.o_literal
    GROUP BY a.p, b.p
    ORDER BY n DESC, a.p, b.p
    LIMIT {MAX_MEDIATED_PATTERNS}
"""

THREE_VAR_SQL = f"""
    SELECT a.p, b.p, c.p, count(*) AS n
    FROM statements a
    JOIN entities m ON m.iri = a.o AND m.is_mediator
    JOIN statements b ON b.s = a.o AND NOT (b.o = a.s AND NOT b.o_literal)
    JOIN statements c ON c.s = a.o AND c.p > b.p AND NOT (c.o = a.s AND NOT c.o_literal)
    WHERE NOT a.o_literal
    GROUP BY a.p, b.p, c.p
    ORDER BY n DESC, a.p, b.p, c.p
    LIMIT {MAX_MEDIATED_PATTERNS}
"""

OUT_PAIRS_SQL = f"""
    SELECT b.p, c.p, count(*) AS n
    FROM statements b
    JOIN entities m ON m.iri = b.s AND m.is_mediator
    JOIN statements c ON c.s = b.s AND c.p <> b.p
    WHERE NOT EXISTS (SELECT 1 FROM statements a WHERE a.o = b.s AND NOT a.o_literal)
    GROUP BY b.p, c.p
    ORDER BY n DESC, b.p, c.p
    LIMIT {MAX_MEDIATED_PATTERNS}
"""


def _labels(con) -> dict[str, str]:
    rows = con.execute("SELECT iri, label FROM relations").fetchall()
    return {iri: relation_label(iri, label) for iri, label in rows}


def statement_entries(con, prefixes: dict[str, str]) -> Iterator[list[Entry]]:
    """Template statement memories (texts are templates; see :func:`apply_describer`)."""
    labels = _labels(con)
    name = lambda p: labels.get(p) or v.fallback_label(p)  # noqa: E731
    out: list[Entry] = []
    for rows in _rows(con, ONE_HOP_SQL):
        for p, label, inverse_label, n in rows:
            pred = shorten(p, prefixes)
            forward, backward = v.relation_phrases(relation_label(p, label), inverse_label)
            pattern = f"?e1 {pred} ?e2"
            for direction, text, answer, given in (("forward", forward, "?e2", "?e1"),
                                                   ("backward", backward, "?e1", "?e2")):
                out.append(Entry(f"1{SEP}{direction}{SEP}{p}", text, p, name(p),
                                 {"pattern": pattern, "answer": answer, "given": [given], "relations": [p],
                                  "hops": 1, "facts": n}))
    if not has_mediators(con):  # the two-hop shapes go through mediators: skip their scans
        yield out
        return
    for p_in, p_out, n in con.execute(TWO_VAR_SQL).fetchall():
        pattern = f"?e1 {shorten(p_in, prefixes)} ?m . ?m {shorten(p_out, prefixes)} ?e2"
        out.append(Entry(f"2{SEP}{p_in}{SEP}{p_out}", v.mediated_phrases(name(p_in), name(p_out)), p_in, name(p_in),
                         {"pattern": pattern, "answer": "?e2", "given": ["?e1"], "relations": [p_in, p_out],
                          "hops": 2, "facts": n}))
    for p_in, p_a, p_b, n in con.execute(THREE_VAR_SQL).fetchall():
        pattern = (f"?e1 {shorten(p_in, prefixes)} ?m . ?m {shorten(p_a, prefixes)} ?e2 . "
                   f"?m {shorten(p_b, prefixes)} ?e3")
        out.append(Entry(f"3{SEP}{p_in}{SEP}{p_a}{SEP}{p_b}", v.mediated_phrases(name(p_in), name(p_a), name(p_b)),
                         p_in, name(p_in),
                         {"pattern": pattern, "answer": "?e3", "given": ["?e1", "?e2"],
                          "relations": [p_in, p_a, p_b], "hops": 2, "facts": n}))
    for p_a, p_b, n in con.execute(OUT_PAIRS_SQL).fetchall():
        pattern = f"?m {shorten(p_a, prefixes)} ?e1 . ?m {shorten(p_b, prefixes)} ?e2"
        out.append(Entry(f"2out{SEP}{p_a}{SEP}{p_b}", v.mediated_phrases(None, name(p_a), name(p_b)), p_a, name(p_a),
                         {"pattern": pattern, "answer": "?e2", "given": ["?e1"], "relations": [p_a, p_b],
                          "hops": 2, "facts": n}))
    yield out


def apply_describer(con, entries: list[Entry], describe: Describe, describer: str) -> list[Entry]:
    """Rewrite memory texts with ``describe`` (e.g. an LLM), caching each rewrite in
    ``index_descriptions`` so a rebuild asks only about new templates."""
    templates = [e.text for e in entries]
    cached = dict(con.execute(
        "SELECT template, text FROM index_descriptions WHERE describer = ? AND template IN (SELECT unnest(?))",
        [describer, templates]).fetchall())
    missing = [t for t in dict.fromkeys(templates) if t not in cached]
    if missing:
        rewritten = describe(missing)
        if len(rewritten) != len(missing):
            raise ValueError(f"describe() returned {len(rewritten)} texts for {len(missing)} templates")
        con.executemany("INSERT INTO index_descriptions VALUES (?, ?, ?)",
                        [(describer, t, v.clean(r) or t) for t, r in zip(missing, rewritten)])
        cached.update({t: v.clean(r) or t for t, r in zip(missing, rewritten)})
    out = []
    for e in entries:
        extra = dict(e.extra or {}, template=e.text)
        out.append(Entry(e.item_key, cached[e.text], e.iri, e.label, extra))
    return out


# -- URI memory ------------------------------------------------------------------------------
URI_ENTITY_SQL = f"""
    SELECT iri, label, description, aliases FROM entities
    WHERE {NAMED_ENTITY}{{top}}
    ORDER BY iri
"""
URI_RELATION_SQL = """
    SELECT iri, label, description FROM relations WHERE label IS NOT NULL OR usage > 0 ORDER BY iri
"""


def uri_entries(con, top: int = 0) -> Iterator[list[Entry]]:
    """``label, description`` per relation, and per entity (each alias too): only the
    ``top`` most popular entities when ``top`` is not 0, as in the entity index."""
    for rows in _rows(con, URI_RELATION_SQL):
        yield [Entry(iri, v.uri_text(relation_label(iri, label), description), iri, relation_label(iri, label),
                     {"type": "relation"}) for iri, label, description in rows]
    for rows in _rows(con, URI_ENTITY_SQL.format(top=most_popular(top))):
        out: list[Entry] = []
        for iri, label, description, aliases in rows:
            label = v.clean(label)
            out.append(Entry(iri, v.uri_text(label, description), iri, label, {"type": "entity"}))
            for alias in dict.fromkeys(v.clean(a) for a in (aliases or ())):
                if alias and alias != label:
                    out.append(Entry(f"{iri}{SEP}alias{SEP}{alias}", v.uri_text(alias, description), iri, label,
                                     {"type": "entity", "alias": alias}))
        yield out

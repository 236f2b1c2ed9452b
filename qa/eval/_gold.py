"""Gold answers from the store: ``--gold-from-sparql`` runs each question's gold query on
the store (read-only, with the store's [sparql] time limit and row cap), and gold entity
IRIs get the store's labels so a method answering by name can match them.

A gold query that fails (a syntax the store does not read, a refused operation), runs past
the time limit or returns more rows than the cap marks its question unscorable with the
reason; it never stops the run.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import pyoxigraph as ox

from kgstore import run_bounded
from kgstore.errors import KgstoreError

from ._datasets import QAItem
from ._shapes import item_shape
from ._typed import TypedValue, XSD, literal_value, typed_f1


def term_value(term) -> TypedValue | None:
    """A pyoxigraph term as a typed value (None for a blank node or an unbound cell)."""
    if isinstance(term, ox.NamedNode):
        return TypedValue("entity", term.value)
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value if term.datatype is not None else None
        if term.language:
            return literal_value(term.value, lang=term.language)
        return literal_value(term.value, datatype=None if datatype == XSD + "string" else datatype)
    return None


def run_gold_query(store, sparql: str) -> tuple[list[TypedValue] | None, str | None]:
    """The gold values of ``sparql`` run on ``store``: an ASK's boolean, else every bound
    value of the projected variables, row by row. Returns ``(values, None)``, or
    ``(None, reason)`` when the query cannot give a trustworthy gold."""
    limits = store.config.sparql
    try:
        result = run_bounded(store, sparql, timeout_s=limits.timeout_s, max_rows=limits.max_rows)
    except KgstoreError as exc:
        return None, f"gold query failed: {exc}"
    if result.kind == "boolean":
        return [TypedValue("boolean", bool(result.boolean), datatype=XSD + "boolean")], None
    if result.kind != "solutions":
        return None, "gold query is a CONSTRUCT/DESCRIBE; it must be a SELECT or an ASK"
    if result.truncated:
        return None, f"gold query returned more than the store's row cap ({limits.max_rows} rows)"
    values = [v for row in result.rows for v in map(term_value, row) if v is not None]
    return values, None


def gold_from_sparql(items: Sequence[QAItem], store, *, progress=None) -> list[QAItem]:
    """``items`` with their gold values replaced by what their gold queries return on
    ``store``; a question without a query, or whose query fails, is unscorable. A query
    that returns no rows gives an empty gold: also unscorable ("no gold answers in the store")."""
    out = []
    for n, item in enumerate(items, start=1):
        if not item.sparql:
            out.append(replace(item, gold=(), gold_values=(), unscorable="no gold query (--gold-from-sparql)"))
        else:
            values, reason = run_gold_query(store, item.sparql)
            if reason is None and not values:
                reason = "gold query returned no answers from this store"
            values = tuple(values or ())
            out.append(replace(item, gold=tuple(v.text() for v in values), gold_values=values, unscorable=reason,
                               shape=item_shape(item.qtype, item.sparql, [v.kind for v in values])))
        if progress:
            progress(n, len(items))
    return out


def gold_notes(before: Sequence[QAItem], after: Sequence[QAItem]) -> list[str]:
    """What the report says about golds taken from the store: how many questions were left
    unscorable, how many golds only say that nothing was found (an ASK that is false, a
    count of 0: on a store that lacks a question's facts they say just that), and how many
    store golds agree with the file's own gold where it has one."""
    notes = []
    unscorable = sum(1 for item in after if item.unscorable)
    if unscorable:
        notes.append(f"{unscorable} of {len(after)} gold queries gave no usable gold on this store (unscorable)")
    nothing = sum(1 for item in after if not item.unscorable and _says_nothing_found(item.gold_values or ()))
    if nothing:
        notes.append(f"{nothing} gold answers are an ASK that is false or a count of 0: where the store lacks "
                     "the question's facts, they only say so")
    pairs = [(b, a) for b, a in zip(before, after) if b.gold_values and not a.unscorable]
    if pairs:
        same = sum(1 for b, a in pairs if typed_f1(a.gold_values, b.gold_values) == 1.0)
        notes.append(f"the store's gold equals the file's gold on {same} of the {len(pairs)} scorable questions "
                     "that have both")
    return notes


def _says_nothing_found(values: Sequence[TypedValue]) -> bool:
    return len(values) == 1 and ((values[0].kind == "boolean" and values[0].value is False)
                                 or (values[0].kind == "number" and values[0].value == 0))


def label_gold(items: Sequence[QAItem], store) -> list[QAItem]:
    """``items`` with each gold entity IRI labelled from the store's catalog (a method that
    answers by name then matches it; the report shows names)."""
    iris = {v.value for item in items for v in item.gold_values or () if v.kind == "entity" and v.iri}
    labels = store.labels(iris) if iris else {}
    if not labels:
        return list(items)
    out = []
    for item in items:
        if not item.gold_values:
            out.append(item)
            continue
        values = tuple(replace(v, label=labels[v.iri]) if v.iri in labels and not v.label else v
                       for v in item.gold_values)
        out.append(replace(item, gold_values=values, gold=tuple(v.text() for v in values)))
    return out

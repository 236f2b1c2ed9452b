"""What the entity page shows beyond `kgstore entity`: the facts pointing at the entity
(``GET /entity/ID?incoming=N``) and, on stores ingested with ``--statements full``, the
qualifiers of each fact (``?qualifiers=true``). Without these parameters /entity answers
exactly the JSON of `kgstore entity --format json`."""
from __future__ import annotations

from typing import Any

from ..terms import P, PQ, PS, WDT, shorten

# The statement nodes of one entity with their qualifiers (Wikidata's full statement model:
# <entity> p:Pn ?st . ?st ps:Pn ?value ; pq:Pm ?qualifier_value). pqv:/psv: (value nodes)
# start with the same namespaces, so the filters ask for the property id right after them.
_QUALIFIERS = """
SELECT ?claim ?value ?qualifier ?qualifier_value WHERE {{
  <{iri}> ?claim ?st .
  FILTER(STRSTARTS(STR(?claim), "{p}P"))
  ?st ?ps ?value .
  FILTER(STRSTARTS(STR(?ps), "{ps}P") && STRAFTER(STR(?ps), "{ps}") = STRAFTER(STR(?claim), "{p}"))
  ?st ?qualifier ?qualifier_value .
  FILTER(STRSTARTS(STR(?qualifier), "{pq}P"))
}}"""


def entity_detail(store, ref: str, *, max_facts: int, incoming: int, qualifiers: bool,
                  prefixes: dict[str, str]) -> dict[str, Any] | None:
    """The /entity document of ``ref`` with ``incoming_facts`` (up to ``incoming``; the key
    only when asked) and a ``qualifiers`` list on each fact (only when asked)."""
    view = store.entity(ref, max_facts=max_facts)
    if view is None:
        return None
    doc = view.to_dict(prefixes)
    if incoming:
        doc["incoming_facts"] = [{
            "subject": e.s_label or shorten(e.s, prefixes), "subject_iri": e.s,
            "relation": e.p_label or shorten(e.p, prefixes), "relation_iri": e.p,
        } for e in store.edges(view.iri, direction="in", limit=incoming)]
    if qualifiers:
        found = _qualifiers_by_fact(store, view.iri, prefixes)
        for fact, fact_doc in zip(view.facts, doc["facts"]):
            pid = fact.relation_iri[len(WDT):] if fact.relation_iri.startswith(WDT) else None
            fact_doc["qualifiers"] = found.get((pid, fact.value), [])
    return doc


def _qualifiers_by_fact(store, iri: str, prefixes: dict[str, str]) -> dict[tuple[str, str], list[dict]]:
    """(property id, value) of each statement of ``iri`` -> its qualifiers."""
    if "<" in iri or ">" in iri or '"' in iri or " " in iri:
        return {}
    rows = list(store.query(_QUALIFIERS.format(iri=iri, p=P, ps=PS, pq=PQ)))
    iris = set()
    for row in rows:
        iris.add(WDT + row["qualifier"].value[len(PQ):])
        if _is_iri(row["qualifier_value"]):
            iris.add(row["qualifier_value"].value)
    labels = store.labels(iris)
    out: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        qid = row["qualifier"].value[len(PQ):]
        value = row["qualifier_value"]
        is_iri = _is_iri(value)
        out.setdefault((row["claim"].value[len(P):], row["value"].value), []).append({
            "relation": labels.get(WDT + qid) or shorten(row["qualifier"].value, prefixes),
            "relation_id": qid,
            "value": (labels.get(value.value) or shorten(value.value, prefixes)) if is_iri else value.value,
            "value_iri": value.value if is_iri else None,
            "datatype": value.datatype.value if type(value).__name__ == "Literal" else None,
        })
    return out


def _is_iri(term) -> bool:
    return type(term).__name__ == "NamedNode"

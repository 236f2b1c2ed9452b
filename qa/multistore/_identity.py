"""Which entities of two stores are one. Stores name things their own way (Wikidata
``wd:Q42``, Freebase ``fb:m.0282x``), so an entity is the same in two stores only where
a store says so:

* the same IRI (an IRI names one thing wherever it is written);
* ``owl:sameAs``, either way, between the entity and an IRI the other store uses;
* Wikidata's Freebase ID (P646, a literal such as ``"/m/0282x"``) and the Freebase IRI
  of that id (``fb:m.0282x``, as ``loaders/freebase`` names Freebase's entities).

An entity's *keys* are the IRIs it goes by across stores by these rules; two entities are
one when their keys meet. A name alone never joins two entities: two "Douglas Adams" the
stores do not say are one stay apart. Read through each store's SPARQL (``run_bounded``),
so any store kind answers, with its own time limit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from kgstore import run_bounded
from kgstore.terms import FB, WDT

FREEBASE_ID = WDT + "P646"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
_FREEBASE_ID_TEXT = re.compile(r"^/([mg])/([0-9a-z_]+)$")
_SAFE_IRI = re.compile(r'^[^<>"{}|^`\\\s]+$')
MAX_ROWS = 50  # keys of one entity, or entities one key names: more would be a store error


@dataclass(frozen=True)
class Held:
    """An entity as one store holds it: the store's name, the IRI and the label there."""

    store: str
    iri: str
    label: str

    def to_dict(self) -> dict[str, str]:
        return {"store": self.store, "iri": self.iri, "label": self.label}


def freebase_iri(freebase_id: str) -> str | None:
    """The Freebase IRI of a Freebase ID as Wikidata writes it: ``/m/0282x`` → ``fb:m.0282x``."""
    m = _FREEBASE_ID_TEXT.match(freebase_id.strip())
    return f"{FB}{m.group(1)}.{m.group(2)}" if m else None


def freebase_id(iri: str) -> str | None:
    """The Freebase ID a Freebase IRI stands for: ``fb:m.0282x`` → ``/m/0282x``; None for others."""
    if not iri.startswith(FB):
        return None
    text = "/" + iri[len(FB):].replace(".", "/", 1)
    return text if _FREEBASE_ID_TEXT.match(text) else None


def identity_keys(store, iri: str) -> frozenset[str]:
    """The IRIs ``iri`` goes by across stores, as ``store`` says: itself, what it is
    ``owl:sameAs`` (either way), and the Freebase IRI of its Freebase ID (P646)."""
    keys = {iri}
    if not _SAFE_IRI.match(iri):
        return frozenset(keys)
    query = (f"SELECT DISTINCT ?k WHERE {{ {{ <{iri}> <{SAME_AS}> ?k }} UNION {{ ?k <{SAME_AS}> <{iri}> }} "
             f"UNION {{ <{iri}> <{FREEBASE_ID}> ?k }} }}")
    for (term,) in _rows(store, query):
        kind = type(term).__name__
        if kind == "NamedNode":
            keys.add(term.value)
        elif kind == "Literal":
            fb = freebase_iri(term.value)
            if fb:
                keys.add(fb)
    return frozenset(keys)


def held_as(store, keys: Iterable[str]) -> list[str]:
    """The entities of ``store`` that go by one of ``keys``: a key the store holds itself,
    an entity ``owl:sameAs`` a key (either way), or an entity whose Freebase ID (P646) is
    a Freebase key's. Most facts first; none when the store says nothing of them."""
    iris = sorted(k for k in set(keys) if _SAFE_IRI.match(k))
    if not iris:
        return []
    values = " ".join(f"<{k}>" for k in iris)
    ids = " ".join(f'"{i}"' for i in (freebase_id(k) for k in iris) if i)
    branches = [f"{{ VALUES ?k {{ {values} }} ?k ?p ?o BIND(?k AS ?e) }}",
                f"{{ VALUES ?k {{ {values} }} ?e <{SAME_AS}> ?k }}",
                f"{{ VALUES ?k {{ {values} }} ?k <{SAME_AS}> ?e }}"]
    if ids:
        branches.append(f"{{ VALUES ?id {{ {ids} }} ?e <{FREEBASE_ID}> ?id }}")
    found = [row[0].value for row in _rows(store, f"SELECT DISTINCT ?e WHERE {{ {' UNION '.join(branches)} }}")
             if row[0] is not None and type(row[0]).__name__ == "NamedNode"]
    held = [iri for iri in found if store.label(iri)]  # an entity of the catalog, not a bare IRI
    usage = store.popularity(held)
    return sorted(held, key=lambda iri: -usage.get(iri, 0))


def _rows(store, query: str):
    sparql = store.config.sparql
    return run_bounded(store, query, timeout_s=sparql.timeout_s, max_rows=MAX_ROWS).rows

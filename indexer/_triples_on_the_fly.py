"""Triple search on a store with no triple index: the facts of the entities a search is
about, read from the catalog, verbalized as the triple index would (``_sources``), embedded
on the fly and ranked by cosine.

Above ``[index] triples_above`` statements, ``kgstore index`` builds no global triple
index: at MiniLM's few hundred texts a second on two cores, a billion facts would take
months. A search that already knows its entities only needs their facts, which are few
(a question's entity has tens to a few hundred), so they are embedded when first asked
for. Two bounded LRU caches keep repeats cheap: the facts of an entity (as index entries)
and the vector of a text.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np

from ._encoder import Encoder
from ._records import SearchHit
from ._sources import Entry, has_mediators, triples_about

MAX_FACTS_PER_ENTITY = 256  # a hub's first 256 facts, relation by relation: embedding them is the cost
CACHED_ENTITIES = 2_000
CACHED_VECTORS = 20_000  # 384 float32 each: about 30 MB


class _LRU:
    """A bounded mapping that forgets the least recently used key first; thread-safe."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class OnTheFlyTriples:
    """``search_about`` for the triple kind without its index: same entries, same texts,
    same encoder, so the same hits as the index would give (up to float rounding and the
    cap of ``max_facts`` per entity)."""

    def __init__(self, store, encoder: Encoder, *, max_facts: int = MAX_FACTS_PER_ENTITY,
                 cached_entities: int = CACHED_ENTITIES, cached_vectors: int = CACHED_VECTORS):
        self.store = store
        self.encoder = encoder
        self.max_facts = max_facts
        self._facts = _LRU(cached_entities)
        self._vectors = _LRU(cached_vectors)
        self.embedded = 0  # texts embedded so far (the rest came from the cache)
        self._mediated: bool | None = None  # whether two-hop facts exist: read once

    def facts(self, iris: Sequence[str]) -> dict[str, list[Entry]]:
        """Each IRI's triple entries (as subject or object), at most ``max_facts``."""
        out, missing = {}, []
        for iri in dict.fromkeys(iris):
            cached = self._facts.get(iri)
            if cached is None:
                missing.append(iri)
            else:
                out[iri] = cached
        if missing:
            with self.store.catalog.connect() as con:
                if self._mediated is None:
                    self._mediated = has_mediators(con)
                found = triples_about(con, missing, self.max_facts, mediated=self._mediated)
            for iri in missing:
                out[iri] = found.get(iri, [])
                self._facts.put(iri, out[iri])
        return out

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The encoder's vector of each text, from the cache where it was embedded before."""
        known = {t: self._vectors.get(t) for t in dict.fromkeys(texts)}
        new = [t for t, vec in known.items() if vec is None]
        if new:
            for text, vec in zip(new, self.encoder.embed(new)):
                known[text] = vec
                self._vectors.put(text, vec)
            self.embedded += len(new)
        if not texts:
            return np.zeros((0, self.encoder.dim), np.float32)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)

    def search_texts(self, texts: Sequence[str], about: Sequence[Sequence[str]], k: int) -> list[list[SearchHit]]:
        """For each text, the ``k`` facts of its ``about`` entities nearest to it. The texts
        and the facts not embedded before go to the encoder in one batch: on a busy machine
        a call costs far more than a text."""
        groups = self._candidates(about)
        facts = list(dict.fromkeys(e.text for candidates in groups for e in candidates))
        vectors = self.vectors(list(texts) + facts)
        known = dict(zip(facts, vectors[len(texts):]))
        return self._rank(vectors[:len(texts)], groups, known, k)

    def search(self, queries: np.ndarray, about: Sequence[Sequence[str]], k: int) -> list[list[SearchHit]]:
        """For each query vector, the ``k`` facts of its ``about`` entities nearest to it."""
        groups = self._candidates(about)
        texts = list(dict.fromkeys(e.text for candidates in groups for e in candidates))
        known = dict(zip(texts, self.vectors(texts))) if texts else {}
        return self._rank(queries, groups, known, k)

    def _candidates(self, about: Sequence[Sequence[str]]) -> list[list[Entry]]:
        facts = self.facts([iri for group in about for iri in group])
        return [list({e.item_key: e for iri in group for e in facts.get(iri, ())}.values()) for group in about]

    @staticmethod
    def _rank(queries: np.ndarray, groups: list[list[Entry]], known: dict, k: int) -> list[list[SearchHit]]:
        results = []
        for query, candidates in zip(queries, groups):
            if not candidates:
                results.append([])
                continue
            scores = np.stack([known[e.text] for e in candidates]) @ query
            order = np.argsort(-scores, kind="stable")[:k]
            results.append([SearchHit("triples", candidates[i].iri, candidates[i].label or "",
                                      round(float(scores[i]), 6), candidates[i].text, dict(candidates[i].extra or {}))
                            for i in (int(j) for j in order)])
        return results

"""Reading the indexes: semantic search per kind and entity linking."""
from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Sequence

import numpy as np

from kgstore.errors import EncoderMismatchError, VectorIndexError

from ._backends import VectorBackend, backend_of, open_backend, search_breadth
from ._build import check_kinds, kind_path, mismatch_message
from ._encoder import Encoder
from ._labels import LabelLookup
from ._linking import (NameRow, check_tiers, combine, content_words, demonym_keys, match_kind, prior, question_spans,
                       rank_question, schema_stems)
from ._records import KINDS, Candidate, SearchHit
from ._snapshot import RowSnapshot, rows_path
from ._tables import has_tables, read_manifests
from ._triples_on_the_fly import OnTheFlyTriples
from ._verbalize import clean, fold, name_key, stem

MAX_LEXICAL = 300
LINKED_FOR_TRIPLE_SEARCH = 3  # entities named in a text whose facts a search without a triple index reads
_BRACKETS = re.compile(r"\[([^\[\]]+)\]")  # "who directed [Kismet]": the mentions to link


class Index:
    """The semantic indexes of a store. ``Index.open(store)``; the store may be read-only.

    Opening checks that every built kind was built by this store's encoder (or the one
    passed in) and raises :class:`~kgstore.errors.EncoderMismatchError` otherwise. Vector
    files are loaded on first use; the model is loaded on the first text to embed.

    A store too large for a triple index (``[index] triples_above``) is still searched by
    triple: :meth:`search_about` embeds the facts of the entities asked about on the fly,
    and :meth:`search` first links the entities the text names (see :meth:`can_search`).
    """

    def __init__(self, store, *, encoder: Encoder | None = None):
        self.store = store
        self.encoder = encoder or Encoder.from_config(store.config.index, base=Path(store.path))
        with store.catalog.connect() as con:
            self._manifests = read_manifests(con)
            self._has_tables = has_tables(con)
        self._labels = LabelLookup.open(store)  # the label-and-alias lookup tier (labels.sqlite)
        self._max_tokens = self._labels.max_tokens if self._labels else 0
        for kind, manifest in self._manifests.items():
            if manifest["fingerprint"] != self.encoder.fingerprint:
                raise EncoderMismatchError(mismatch_message(store, kind, manifest, self.encoder))
        self._files: dict[str, VectorBackend] = {}
        self._rows: dict[str, RowSnapshot | None] = {}
        self._stems: frozenset[str] | None = None
        self._on_the_fly: OnTheFlyTriples | None = None

    @classmethod
    def open(cls, store, *, encoder: Encoder | None = None) -> "Index":
        return cls(store, encoder=encoder)

    def close(self) -> None:
        # dropped, not closed: a search in another thread may still hold a file, which is
        # released (unmapped) with the last reference
        self._files.clear()
        self._rows.clear()
        self._on_the_fly = None  # its caches of facts and vectors

    def session(self):
        """Reuse one catalog connection for the calls inside the block (each call otherwise
        opens its own, ~40 ms on a busy machine): ``with index.session(): ...``."""
        return self.store.reading()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Index {self.store.path} kinds={self.kinds} encoder={self.encoder.name!r}>"

    # -- what is there ---------------------------------------------------------------------
    @property
    def kinds(self) -> list[str]:
        """Kinds that have been built, in build order."""
        return [k for k in KINDS if k in self._manifests]

    def can_search(self, kind: str) -> bool:
        """Whether :meth:`search` answers for ``kind``: a built kind, or ``triples`` without
        its index when entity names are indexed (the facts of the entities a text names are
        embedded on the fly)."""
        return kind in self._manifests or (kind == "triples" and self._labels is not None)

    @property
    def triples_on_the_fly(self) -> bool:
        """True when triple searches embed the facts they score on the fly (no triple index)."""
        return "triples" not in self._manifests

    def _triples_unindexed(self) -> OnTheFlyTriples:
        if self._on_the_fly is None:
            self._on_the_fly = OnTheFlyTriples(self.store, self.encoder)
        return self._on_the_fly

    def info(self) -> dict[str, dict]:
        """Per built kind: items, deleted, encoder, fingerprint, parameters, build time."""
        return {k: dict(self._manifests[k]) for k in self.kinds}

    def _file(self, kind: str) -> VectorBackend:
        check_kinds([kind])
        vf = self._files.get(kind)
        if vf is None:
            manifest = self._manifests.get(kind)
            if manifest is None:
                raise VectorIndexError(f"the {kind} index of {self.store.path} has not been built; "
                                       f"run `kgstore index {self.store.path}`")
            # the backend the kind was built with, whatever the config says now
            path = kind_path(self.store, kind, manifest)
            cfg = self.store.config.index
            vf = self._files[kind] = open_backend(backend_of(manifest), path, self.encoder.dim,
                                                  ef=search_breadth(cfg, manifest.get("items")), cfg=cfg)
            self._rows[kind] = RowSnapshot.load(rows_path(path))
        return vf

    # -- search --------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.embed(list(texts))

    def search(self, kind: str, text: str, k: int = 10) -> list[SearchHit]:
        """The ``k`` entries of ``kind`` nearest to ``text``, best first (score = cosine)."""
        return self.search_many(kind, [text], k)[0]

    def search_many(self, kind: str, texts: Sequence[str], k: int = 10) -> list[list[SearchHit]]:
        """:meth:`search` for several texts, embedded in one batch.

        Triples without a triple index: the facts of the entities each text names (the
        best ``LINKED_FOR_TRIPLE_SEARCH`` of :meth:`link_question`), scored on the fly."""
        if kind == "triples" and self.triples_on_the_fly and self.can_search(kind):
            about = [self._named_entities(text) for text in texts]
            return self.search_about(kind, texts, about, k)
        vf = self._file(kind)
        if not texts:
            return []
        return self.search_vectors(kind, self.embed(texts), k, _vf=vf)

    def _named_entities(self, text: str) -> list[str]:
        """The IRIs of the entities ``text`` names, most likely first, at most
        ``LINKED_FOR_TRIPLE_SEARCH``: what a triple search without a triple index reads."""
        iris: list[str] = []
        for candidate in self.link_question(text, k=LINKED_FOR_TRIPLE_SEARCH * 2):
            if candidate.iri not in iris:
                iris.append(candidate.iri)
        return iris[:LINKED_FOR_TRIPLE_SEARCH]

    def search_vectors(self, kind: str, vectors: np.ndarray, k: int = 10, *, _vf=None) -> list[list[SearchHit]]:
        vf = _vf or self._file(kind)
        # a few spare results, in case rows were deleted after the file was last saved
        labels, scores = vf.search(vectors, k + 8)
        wanted = sorted({int(x) for x in labels.ravel()})
        snapshot = self._rows.get(kind)
        rows = snapshot.get(wanted) if snapshot is not None else {}
        missing = [x for x in wanted if x not in rows]
        if missing:  # written after the last snapshot (a build in progress), or no snapshot
            with self.store.catalog.connect() as con:
                for label_id, text, iri, label, extra in con.execute(
                        "SELECT label_id, text, iri, label, extra FROM index_items "
                        "WHERE kind = ? AND NOT deleted AND label_id IN (SELECT unnest(?::BIGINT[]))",
                        [kind, missing]).fetchall():
                    rows[label_id] = (text, iri, label, json.loads(extra) if extra else {})
        results = []
        for row_labels, row_scores in zip(labels, scores):
            hits = []
            for label_id, score in zip(row_labels, row_scores):
                row = rows.get(int(label_id))
                if row is None:
                    continue
                text, iri, label, extra = row
                hits.append(SearchHit(kind, iri, label or "", round(float(score), 6), text, extra))
                if len(hits) >= k:
                    break
            results.append(hits)
        return results

    def search_about(self, kind: str, texts: Sequence[str], about: Sequence[Sequence[str]], k: int = 10,
                     *, max_candidates: int = 5000) -> list[list[SearchHit]]:
        """:meth:`search_many` restricted to the entries about given entities: for each
        text, the ``k`` nearest among the triples whose subject or object is one of the
        IRIs in ``about`` (same position), scored with the index's own vectors.

        Searching the whole index, a famous namesake's facts can outrank every fact of
        the entity meant (Edward Zwick's films for "Joel Zwick | directed by"); once the
        entity is known, its neighbourhood is small enough to score exactly. At most
        ``max_candidates`` entries per entity are scored (hubs such as a genre have more).

        Without a triple index, the same entries are read from the catalog and embedded on
        the fly (at most ``OnTheFlyTriples.max_facts`` per entity, relation by relation)."""
        if kind != "triples":
            raise ValueError("search_about works on the triple index only")
        if self.triples_on_the_fly:
            if not texts:
                return []
            return self._triples_unindexed().search_texts(list(texts), about, k)
        vf = self._file(kind)
        wanted = sorted({iri for group in about for iri in group})
        if not texts:
            return []
        rows: dict[str, list[tuple]] = {}
        if wanted:
            with self.store.catalog.connect() as con:
                found = con.execute(
                    "WITH about AS (SELECT unnest(?::VARCHAR[]) AS iri), items AS ("
                    "  SELECT label_id, text, iri AS s, label, extra, json_extract_string(extra, '$.o') AS o "
                    "  FROM index_items WHERE kind = 'triples' AND NOT deleted) "
                    "SELECT a.iri, i.label_id, i.text, i.s, i.label, i.extra FROM about a "
                    "JOIN items i ON i.s = a.iri OR i.o = a.iri "
                    "QUALIFY row_number() OVER (PARTITION BY a.iri ORDER BY i.label_id) <= ?",
                    [wanted, max_candidates]).fetchall()
            for iri, label_id, text, s, label, extra in found:
                rows.setdefault(iri, []).append((label_id, text, s, label, extra))
        queries = self.embed(list(texts))
        results = []
        for query, group in zip(queries, about):
            candidates = {r[0]: r for iri in group for r in rows.get(iri, [])}
            if not candidates:
                results.append([])
                continue
            ids = list(candidates)
            try:
                scores = vf.vectors(ids) @ query
            except RuntimeError:  # labels missing from the file (a build in progress)
                results.append([])
                continue
            order = np.argsort(-scores, kind="stable")[:k]
            hits = []
            for i in order:
                label_id, text, s, label, extra = candidates[ids[int(i)]]
                hits.append(SearchHit(kind, s, label or "", round(float(scores[int(i)]), 6), text,
                                      json.loads(extra) if extra else {}))
            results.append(hits)
        return results

    # -- entity linking ----------------------------------------------------------------------------
    def _names(self, con, keys: list[str]) -> list[NameRow]:
        if not keys or self._labels is None:
            return []
        return self._labels.lookup(keys)

    def _popularity_ceiling(self) -> int:
        """The store's highest popularity (read with the label file), the scale of the prior."""
        return self._labels.max_popularity if self._labels is not None else 0

    def relation_word(self, word: str) -> bool:
        """Whether ``word`` is a word of the store's relation labels ("directed", "currency"):
        in a question it names what is asked about, not the entity asked about."""
        if self._stems is None:
            with self.store.catalog.connect() as con:
                self._schema_stems(con)
        return stem(fold(word)) in self._stems

    def _schema_stems(self, con) -> frozenset[str]:
        if self._stems is None:
            labels = [r[0] for r in con.execute(
                "SELECT label FROM relations WHERE label IS NOT NULL UNION ALL "
                "SELECT inverse_label FROM relations WHERE inverse_label IS NOT NULL").fetchall()]
            self._stems = schema_stems(labels)
        return self._stems

    def link(self, mention: str, k: int = 10, *, vectors: bool = True, tiers=None) -> list[Candidate]:
        """Entities ``mention`` may refer to, best first.

        Exact and normalised matches of labels and aliases come first (the lookup tier,
        no vector needed), then nearest neighbours in the entity index (when built and
        ``vectors``); similarity to the mention and popularity order candidates within each
        tier. ``tiers`` (default all): any of ``exact``, ``normalized``, ``vectors``.
        """
        mention = clean(mention)
        if not mention:
            return []
        tiers = check_tiers(tiers)
        use_vectors = vectors and "vectors" in tiers and "entities" in self._manifests
        # names come from labels.sqlite: the catalog is opened only for vector candidates
        with (self.store.catalog.connect() if use_vectors else contextlib.nullcontext()) as con:
            rows = self._names(con, [name_key(mention)]) if tiers & {"exact", "normalized"} else []
            if "normalized" not in tiers:
                rows = [r for r in rows if r.name == mention]
            ceiling = self._popularity_ceiling()
            best: dict[str, tuple[str, NameRow]] = {}
            order = {"exact": 0, "label": 1, "alias": 2}
            # namesakes beyond the most popular few hundred cannot make the top k anyway
            rows = sorted(rows, key=lambda r: -r.popularity)[:MAX_LEXICAL]
            for row in rows:
                m = match_kind(mention, row)
                if row.iri not in best or order[m] < order[best[row.iri][0]]:
                    best[row.iri] = (m, row)
            similarity: dict[str, float] = {}
            vector_only: dict[str, SearchHit] = {}
            if use_vectors:
                query = self.embed([mention])
                for hit in self.search_vectors("entities", query, max(k, 10) * 2)[0]:
                    similarity[hit.iri] = max(similarity.get(hit.iri, 0.0), hit.score)
                    if hit.iri not in best and hit.iri not in vector_only:
                        vector_only[hit.iri] = hit
                missing = [iri for iri in best if iri not in similarity]
                if missing:
                    similarity.update(self._similarities(con, query[0], missing))
            info = {}
            if vector_only:
                info = {r[0]: (r[1], r[2]) for r in con.execute(
                    "SELECT iri, description, coalesce(popularity, 0) FROM entities "
                    "WHERE iri IN (SELECT unnest(?::VARCHAR[]))", [list(vector_only)]).fetchall()}
        out = []
        for iri, (m, row) in best.items():
            sim = similarity.get(iri)
            out.append(Candidate(iri, row.label, combine(m, sim, prior(row.popularity, ceiling)), mention, m,
                                 row.popularity, row.description, sim))
        for iri, hit in vector_only.items():
            description, popularity = info.get(iri, (None, 0))
            out.append(Candidate(iri, hit.label, combine("vector", hit.score, prior(popularity, ceiling)), mention,
                                 "vector", popularity, description, hit.score))
        out.sort(key=lambda c: (-c.score, c.iri))
        return out[:k]

    def _similarities(self, con, query: np.ndarray, iris: list[str]) -> dict[str, float]:
        """Cosine similarity of ``query`` to the entity-index vectors of ``iris`` (best over
        label and aliases)."""
        rows = con.execute(
            "SELECT iri, label_id FROM index_items WHERE kind = 'entities' AND NOT deleted "
            "AND iri IN (SELECT unnest(?::VARCHAR[]))", [iris]).fetchall()
        if not rows:
            return {}
        vf = self._file("entities")
        try:
            vectors = vf.vectors([r[1] for r in rows])
        except RuntimeError:
            return {}
        sims = vectors @ query
        out: dict[str, float] = {}
        for (iri, _), s in zip(rows, sims):
            out[iri] = max(out.get(iri, -1.0), round(float(s), 6))
        return out

    def link_text(self, text: str, k: int = 10, *, vectors: bool = True) -> list[Candidate]:
        """Candidates for ``text`` as `kgstore link` and the server's ``/link`` read it: each
        [bracketed] mention linked on its own (``vectors=False``: names only, no model load),
        otherwise the mentions found in the whole question."""
        mentions = _BRACKETS.findall(text)
        if mentions:
            return [c for m in mentions for c in self.link(m, k, vectors=vectors)]
        return self.link_question(text, k)

    def _demonym_names(self, question: str, spans_by_key: dict[str, list], found: set[str]) -> list[NameRow]:
        """Names read back from demonyms ("Asian" → Asia) for capitalised spans that name
        nothing as written; their spans join ``spans_by_key`` under the name's key."""
        alternatives: dict[str, list] = {}
        for key, spans in list(spans_by_key.items()):
            if key in found:
                continue
            for span in spans:
                for alternative in demonym_keys(span, question[span.start:span.end]):
                    if alternative.key not in spans_by_key:
                        alternatives.setdefault(alternative.key, []).append(alternative)
        if not alternatives:
            return []
        rows = self._names(None, list(alternatives))
        for row in rows:
            spans_by_key.setdefault(row.key, alternatives[row.key])
        return rows

    def link_question(self, question: str, k: int = 10, *, tiers=None) -> list[Candidate]:
        """Entity mentions found in a whole question, best first, each with its ``span``.

        Every word n-gram is looked up among normalised labels and aliases; spans that are
        only stopwords or relation words ("directed", "actors") rank last, capitalised and
        longer spans and popular entities first. When no name matches at all, the question's
        content words are linked through the entity vector index. ``tiers`` (default all):
        any of ``exact``, ``normalized``, ``vectors``.
        """
        question = question.strip()
        if not question:
            return []
        tiers = check_tiers(tiers)
        if self._stems is None:
            with self.store.catalog.connect() as con:
                self._schema_stems(con)
        # names come from labels.sqlite: no catalog connection per question
        if self._labels is None or not self._max_tokens:
            raise VectorIndexError(f"no entity names indexed in {self.store.path}; "
                                   f"run `kgstore index {self.store.path}`")
        spans_by_key: dict[str, list] = {}
        for span in question_spans(question, self._max_tokens):
            spans_by_key.setdefault(span.key, []).append(span)
        rows = self._names(None, list(spans_by_key)) if tiers & {"exact", "normalized"} else []
        if tiers & {"exact", "normalized"}:
            rows += self._demonym_names(question, spans_by_key, {r.key for r in rows})
        ceiling = self._popularity_ceiling()
        stems = self._stems
        if rows:
            found = rank_question(question, spans_by_key, rows, stems, ceiling, k,
                                  exact_only="normalized" not in tiers)
            if found:
                return found
        if "entities" not in self._manifests or "vectors" not in tiers:
            return []
        return self.link(content_words(question, stems), k, tiers={"vectors"} | (tiers & {"exact", "normalized"}))

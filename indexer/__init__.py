"""The semantic index of a kgstore store: embeddings (sentence-transformers) in vector files,
hnswlib in RAM for small kinds, usearch on disk (quantized, memory-mapped) for large ones,
or a Postgres server with pgvector when asked for (``[index] backend``; see ``_backends.py``).

Public API::

    from kgstore import Store
    from indexer import Index, build_index

    with Store.open("./mystore") as store:
        summary = build_index(store)              # incremental; rebuild=True starts over
    with Store.open("./mystore", read_only=True) as store:
        index = Index.open(store)
        index.search("triples", "brother of Justin Bieber", k=10)   # -> [SearchHit, ...]
        index.link("Kismet")                                          # -> [Candidate, ...]
        index.link("kismet", tiers={"exact", "normalized"})           # names only: no vector
        index.link_question("who directed Kismet")                    # mentions in a question

Kinds: ``entities``, ``relations``, ``triples``, ``statements`` (statement memories:
pattern texts like ``?e2 is the spouse of ?e1`` → ``?e1 wdt:P26 ?e2``) and ``uris`` (URI
memory: ``label, description`` → IRI). Entity names (labels and aliases, exact and
normalised) live in a lookup tier of their own, ``STORE/index/labels.sqlite``, which
linking reads before any vector.

What is indexed at scale: a store with more statements than ``[index] triples_above`` gets
no ``triples`` kind; ``Index.search_about`` then embeds the facts of the entities asked
about on the fly (:class:`OnTheFlyTriples`, cached), and ``Index.search("triples", ...)``
first links the entities the text names. Entity vectors go to the ``[index]
entity_vectors_max`` most popular entities; the lookup tier links the rest.

An encoder is the packaged sentence-transformers model or ``model2vec:<folder>``, a static
model distilled from it (``distill_model``). Importing this package does not import torch;
the model loads on the first text embedded.
"""
from ._backends import BACKENDS, VectorBackend, choose_backend
from ._build import build_index, index_dir, index_path, kind_path, text_hash, update_index
from ._encoder import DEFAULT_ENCODER, Encoder, distill_model, model_fingerprint, resolve_model_path
from ._index import Index
from ._labels import LabelLookup, LabelsSummary, labels_path, refresh_labels
from ._linking import TIERS
from ._memories import apply_describer
from ._records import KINDS, BuildProgress, BuildSummary, Candidate, KindSummary, SearchHit
from ._triples_on_the_fly import OnTheFlyTriples
from ._verbalize import (entity_text, fold, inverse_relation_text, mediated_phrases, mediated_triple_text,
                         name_key, relation_phrases, relation_text, triple_text, uri_text)

__all__ = [
    "Index", "build_index", "update_index", "index_dir", "index_path", "kind_path", "text_hash",
    "VectorBackend", "BACKENDS", "choose_backend",
    "Encoder", "DEFAULT_ENCODER", "model_fingerprint", "resolve_model_path", "distill_model",
    "LabelLookup", "LabelsSummary", "labels_path", "refresh_labels", "TIERS", "OnTheFlyTriples",
    "KINDS", "SearchHit", "Candidate", "BuildSummary", "KindSummary", "BuildProgress", "apply_describer",
    "entity_text", "relation_text", "inverse_relation_text", "triple_text", "mediated_triple_text", "uri_text",
    "relation_phrases", "mediated_phrases", "name_key", "fold",
]

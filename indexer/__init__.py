"""The semantic index of a kgstore store: embeddings (sentence-transformers) in hnswlib files.

Public API::

    from kgstore import Store
    from indexer import Index, build_index

    with Store.open("./mystore") as store:
        summary = build_index(store)              # incremental; rebuild=True starts over
    with Store.open("./mystore", read_only=True) as store:
        index = Index.open(store)
        index.search("triples", "brother of Justin Bieber", k=10)   # -> [SearchHit, ...]
        index.link("Kismet")                                          # -> [Candidate, ...]
        index.link_question("who directed Kismet")                    # mentions in a question

Kinds: ``entities``, ``relations``, ``triples``, ``statements`` (statement memories:
pattern texts like ``?e2 is the spouse of ?e1`` → ``?e1 wdt:P26 ?e2``) and ``uris`` (URI
memory: ``label, description`` → IRI). Importing this package does not import torch; the
model loads on the first text embedded.
"""
from ._build import build_index, index_dir, index_path, text_hash, update_index
from ._encoder import DEFAULT_ENCODER, Encoder, model_fingerprint, resolve_model_path
from ._index import Index
from ._memories import apply_describer
from ._records import KINDS, BuildProgress, BuildSummary, Candidate, KindSummary, SearchHit
from ._verbalize import (entity_text, fold, inverse_relation_text, mediated_phrases, mediated_triple_text,
                         name_key, relation_phrases, relation_text, triple_text, uri_text)

__all__ = [
    "Index", "build_index", "update_index", "index_dir", "index_path", "text_hash",
    "Encoder", "DEFAULT_ENCODER", "model_fingerprint", "resolve_model_path",
    "KINDS", "SearchHit", "Candidate", "BuildSummary", "KindSummary", "BuildProgress", "apply_describer",
    "entity_text", "relation_text", "inverse_relation_text", "triple_text", "mediated_triple_text", "uri_text",
    "relation_phrases", "mediated_phrases", "name_key", "fold",
]

"""Several stores answering one question, the multisource half of the pseudo-graph paper,
one module a job:

* ``_sources``: the stores of one answer and the short names their facts are marked with;
* ``_identity``: which entities of two stores are one (same IRI, ``owl:sameAs``,
  Wikidata's Freebase ID against a Freebase IRI);
* ``_open``: an open answer written from the union of the stores' verified facts;
* ``_precise``: a precise answer: each store's own, merged, marked with their stores;
* ``_method``: :class:`SeveralStores`, which answers like a QA method.

    from qa import QAContext, llm_from_config
    from qa.multistore import SeveralStores, StoreSource, store_names

    sources = [StoreSource(name, QAContext(store, llm)) for name, store in zip(store_names(paths), stores)]
    answer = SeveralStores(sources, "cascade").answer("Tell me about Douglas Adams")
    answer.facts[0]["store"], answer.evidence[0].store, answer.answer_stores, answer.by_store
"""
from ._identity import FREEBASE_ID, SAME_AS, Held, freebase_id, freebase_iri, held_as, identity_keys
from ._method import SeveralStores, method_over
from ._open import open_answer_over, subject_in_stores
from ._precise import MergedAnswer, merge_answers
from ._sources import StoreSource, store_names

__all__ = [
    "StoreSource", "store_names",
    "FREEBASE_ID", "SAME_AS", "Held", "freebase_id", "freebase_iri", "held_as", "identity_keys",
    "open_answer_over", "subject_in_stores", "MergedAnswer", "merge_answers", "SeveralStores", "method_over",
]

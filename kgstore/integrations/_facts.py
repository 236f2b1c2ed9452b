"""Facts and search hits as framework-neutral records: the text a RAG pipeline reads and
the metadata that says where it comes from. Both retrievers (LangChain's Documents,
LlamaIndex's nodes) are built from these, so they carry the same fields."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..terms import shorten


@dataclass(frozen=True)
class FactRecord:
    """One retrieved fact or hit. ``text`` is what a model reads (a fact as ``subject |
    relation | object``), ``key`` a stable id of it, ``metadata`` the ids and labels of
    its parts with the score and, for an answer's evidence, the answer it supports."""

    text: str
    key: str
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def evidence_records(answer, prefixes: dict[str, str]) -> list[FactRecord]:
    """The evidence facts of ``answer`` (a ``qa.Answer``), best first. Each carries the
    answer: ``answers``, ``refused`` (and ``refusal``, the reason), ``query`` (the executed
    query) and ``method``."""
    about = {"question": answer.question, "method": answer.method, "answers": list(answer.answers),
             "refused": answer.refused, "refusal": answer.refusal.message if answer.refusal else None,
             "query": answer.query}
    if answer.answer_stores:
        about["answer_stores"] = [list(s) for s in answer.answer_stores]
    return [FactRecord(text=e.text(), key=_key(e.s, e.p, e.o, store=e.store), score=e.score,
                       metadata={**_triple_metadata(e.s, e.p, e.o, e.s_label, e.p_label, e.o_label, e.literal,
                                                    prefixes, via=e.via),
                                 "score": e.score, "source": "kgstore:ask", **_store(e.store), **about})
            for e in answer.evidence]


def open_answer_record(answer) -> FactRecord:
    """An open answer (``answer.text`` set: "Tell me about X") as one record: the paragraph
    is the text, with its citations ([1]); ``facts`` (each numbered fact, its values, its
    store triples and, from several stores, its ``stores``) and ``sentences`` (each
    sentence's text and the numbers of the facts it cites) are in the metadata."""
    return FactRecord(text=answer.text, key=_key("open", answer.question, answer.text), score=None, metadata={
        "kind": "open_answer", "source": "kgstore:ask", "question": answer.question, "method": answer.method,
        "answers": list(answer.answers), "refused": False, "refusal": None,
        "sentences": list(answer.sentences), "facts": list(answer.facts),
        **({"answer_stores": [list(s) for s in answer.answer_stores]} if answer.answer_stores else {})})


def search_records(hits, prefixes: dict[str, str], *, store: str | None = None) -> list[FactRecord]:
    """Search hits (``indexer.SearchHit``) as records: a triple hit with the ids and labels of
    its parts, any other hit with the id and label of what it points to; with ``store``
    (one of several searched), each marked with it."""
    out = []
    for hit in hits:
        meta: dict[str, Any] = {"kind": hit.kind, "score": hit.score, "source": "kgstore:search", **_store(store)}
        if hit.kind == "triples":
            x = hit.extra
            p = x.get("p")
            meta.update(_triple_metadata(x.get("s"), " / ".join(p) if isinstance(p, list) else p, x.get("o"),
                                         x.get("s_label"), x.get("p_label"), x.get("o_label"),
                                         bool(x.get("o_literal")), prefixes, via=x.get("via")))
            key = _key(x.get("s"), str(p), x.get("o"), store=store)
        else:
            meta.update({"iri": hit.iri, "id": shorten(hit.iri, prefixes), "label": hit.label})
            key = _key(hit.kind, hit.iri, hit.text, store=store)
        out.append(FactRecord(text=hit.text, key=key, score=hit.score, metadata=meta))
    return out


def _triple_metadata(s, p, o, s_label, p_label, o_label, literal: bool, prefixes, *, via=None) -> dict[str, Any]:
    """``subject``/``relation``/``object``: IRIs (the object's lexical form when a literal);
    ``*_id``: prefixed names (``wd:Q5456``, ``wdt:P17``); ``*_label``: labels."""
    return {
        "subject": s, "subject_id": shorten(s, prefixes) if s else None, "subject_label": s_label,
        "relation": p, "relation_id": " / ".join(shorten(x, prefixes) for x in p.split(" / ")) if p else None,
        "relation_label": p_label,
        "object": o, "object_id": None if literal or not o else shorten(o, prefixes), "object_label": o_label,
        "object_literal": literal, "via": via,
    }


def _store(name: str | None) -> dict[str, str]:
    """``{"store": name}`` from several stores; nothing from one, whose records stay as they were."""
    return {"store": name} if name is not None else {}


def _key(*parts: str | None, store: str | None = None) -> str:
    """A stable id of a record; the store's name joins it from several stores (two stores
    may hold the same triple), so that one store's ids stay what they were."""
    if store is not None:
        parts = (store, *parts)
    return "kgstore:" + hashlib.sha1("\x1f".join(p or "" for p in parts).encode()).hexdigest()[:24]

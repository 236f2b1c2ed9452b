"""An open answer ("Tell me about X") as the ``ask`` tool returns it: the paragraph an
agent can quote, each sentence with its citations, then the facts cited, as text; and as
structured content, the answer with ``citations``: for each fact cited its number, the
fact, the sentences that cite it and the store triples it stands on (with their store,
from several stores)."""
from __future__ import annotations

from typing import Any


def citations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The facts an open answer cites, each with the sentences (0-based) that cite it."""
    cited_by: dict[int, list[int]] = {}
    for i, sentence in enumerate(doc.get("sentences") or []):
        for n in sentence["facts"]:
            cited_by.setdefault(n, []).append(i)
    return [{"n": f["n"], "fact": f"{f['subject']} | {f['relation']} | {'; '.join(f['values'])}",
             "subject": f["subject"], "relation": f["relation"], "values": f["values"],
             "sentences": cited_by.get(f["n"], []), "evidence": f["evidence"],
             **({"stores": f["stores"]} if f.get("stores") else {})}
            for f in doc.get("facts") or []]


def open_answer_text(doc: dict[str, Any], cited: list[dict[str, Any]]) -> str:
    """The paragraph, then one line a fact cited: ``[2] Nepal | capital | Kathmandu (wikidata)``."""
    lines = [doc["text"], "", "Facts cited:"]
    for c in cited:
        lines.append(f"[{c['n']}] {c['fact']}" + (f" ({', '.join(c['stores'])})" if c.get("stores") else ""))
    return "\n".join(lines)

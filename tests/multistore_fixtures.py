"""Two stores that share Douglas Adams: the demo Wikidata sample, with Freebase IDs (P646)
added to Douglas Adams (Q42, Wikidata's own value "/m/0282x") and Cambridge (Q350), and a
small Freebase store (tests/data/freebase-douglas-adams.nt, native dump lines) whose
entity ``fb:m.0282x`` is that Douglas Adams. The sample itself holds no P646; the copy
here adds it, so the demo store the other tests use stays as it is."""
from __future__ import annotations

import json
from pathlib import Path

import kgstore
from kgstore import Store

FREEBASE_FILE = Path(__file__).parent / "data" / "freebase-douglas-adams.nt"
FREEBASE_IDS = {"Q42": "/m/0282x", "Q350": "/m/09b8m"}


def with_freebase_ids(sample: Path, out: Path, ids: dict[str, str]) -> Path:
    """The sample with a P646 claim added to each entity of ``ids``."""
    entities = json.loads(sample.read_text())
    for entity in entities:
        if entity["id"] in ids:
            entity.setdefault("claims", {})["P646"] = [{
                "mainsnak": {"snaktype": "value", "property": "P646", "datatype": "external-id",
                             "datavalue": {"value": ids[entity["id"]], "type": "string"}},
                "type": "statement", "rank": "normal"}]
    out.write_text(json.dumps(entities))
    return out


def build_store(path: Path, file_format: str, source: Path) -> Path:
    from indexer import build_index

    with Store.init(path) as store:
        kgstore.ingest(store, file_format, source)
        build_index(store)
    return path

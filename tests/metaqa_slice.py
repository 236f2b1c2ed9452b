"""A MetaQA slice for the endpoint tests and bench/remote.py: the first lines of the partial
KB in a local store (kg: IRIs minted by the tsv loader, labels in the catalog only), its
triples plus labels as N-Triples for an engine to bulk-load, and the 1-hop dev questions
the slice can answer."""
from __future__ import annotations

from pathlib import Path

import pytest

METAQA_GRAPH = "http://kgstore.test/metaqa"
METAQA_LINES = 3000


def slice_store(kb: Path, base: Path, lines: int = METAQA_LINES) -> Path:
    """``base/slice.txt`` (the first ``lines`` of ``kb``) ingested into ``base/store``."""
    import kgstore
    from kgstore import Store

    with open(kb, encoding="utf-8") as f:
        (base / "slice.txt").write_text("".join(f.readline() for _ in range(lines)), encoding="utf-8")
    with Store.init(base / "store") as store:
        kgstore.ingest(store, "tsv", base / "slice.txt")
    return base / "store"


@pytest.fixture(scope="module")
def metaqa_local(shared_data, tmp_path_factory) -> Path:
    """The slice in a local store, once per test module (import it into the module)."""
    kb = shared_data / "qa" / "metaqa" / "kb_partial.txt"
    if not kb.is_file():
        pytest.skip(f"MetaQA KB not found at {kb}")
    return slice_store(kb, tmp_path_factory.mktemp("metaqa_local"))


def slice_ntriples(local: Path, out: Path) -> Path:
    """The store's triples plus its catalog's labels as untagged rdfs:label triples: the tsv
    loader keeps names in the catalog only, and an endpoint has just the triples."""
    import pyoxigraph as ox

    from kgstore import Store

    with Store.open(local, read_only=True) as store:
        store.rdf.dump(output=str(out), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
        with store.catalog.connect() as con:
            named = con.execute("SELECT iri, label FROM entities WHERE label IS NOT NULL UNION ALL "
                                "SELECT iri, label FROM relations WHERE label IS NOT NULL").fetchall()
    label = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    with open(out, "ab") as f:
        f.write(ox.serialize([ox.Triple(ox.NamedNode(iri), label, ox.Literal(text)) for iri, text in named],
                             format=ox.RdfFormat.N_TRIPLES))
    return out


def slice_questions(dev: Path, slice_file: Path, n: int, *, per_relation: int = 2) -> list[str]:
    """``n`` questions of MetaQA ``dev`` (``vanilla_qa_dev.txt``) whose topic entity is in the
    slice with a gold answer among its neighbours there, so that each has an answer to find;
    in file order, at most ``per_relation`` for each relation that links topic and answer
    (so that not all ask for an actor's films) while the file has others. Without the
    brackets around the topic."""
    from qa.eval._datasets import metaqa_question

    links: dict[tuple[str, str], str] = {}  # (topic, answer) -> relation, both ways
    for line in slice_file.read_text(encoding="utf-8").splitlines():
        parts = line.split("|")
        if len(parts) == 3:
            links.setdefault((parts[0], parts[2]), parts[1])
            links.setdefault((parts[2], parts[0]), parts[1])
    answerable = []
    for line in dev.read_text(encoding="utf-8").splitlines():
        question, gold, topic = metaqa_question(line)
        relation = next((links[(topic, g)] for g in gold if (topic, g) in links), None)
        if relation is not None:
            answerable.append((question, relation))
    picked: list[str] = []
    per: dict[str, int] = {}
    for question, relation in answerable:
        if len(picked) < n and per.get(relation, 0) < per_relation:
            picked.append(question)
            per[relation] = per.get(relation, 0) + 1
    for question, _ in answerable:  # too few relations: fill up in file order
        if len(picked) < n and question not in picked:
            picked.append(question)
    return picked

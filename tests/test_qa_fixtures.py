"""Shared fixtures for the QA tests: the demo sample (data/sample-wikidata.json) ingested
and indexed once per session; test modules import ``demo_store`` from here. Also
:func:`full_statements_store`, a sample ingested with its statement nodes (qualifiers)."""
from __future__ import annotations

from pathlib import Path

import pytest

import kgstore
from kgstore import Store

_built: dict[str, Path] = {}


@pytest.fixture(scope="session")
def demo_store(sample_dir, tmp_path_factory) -> Path:
    """A store holding the demo sample, with every index kind built."""
    if "demo" not in _built:
        from indexer import build_index

        sample = sample_dir / "sample-wikidata.json"
        if not sample.is_file():
            pytest.skip(f"demo sample not found at {sample}")
        path = tmp_path_factory.mktemp("qa_demo") / "store"
        with Store.init(path) as store:
            kgstore.ingest(store, "wikidata-json", sample)
            build_index(store)
        _built["demo"] = path
    return _built["demo"]


def full_statements_store(path: Path, dump: Path, *, index_kinds: tuple[str, ...] = ()) -> Path:
    """``dump`` (a Wikidata JSON sample) ingested at ``path`` with ``--statements full``
    (statement nodes, qualifiers, units), and the ``index_kinds`` built."""
    from kgstore import LoadOptions

    with Store.init(path) as store:
        kgstore.ingest(store, "wikidata-json", dump, options=LoadOptions(statements="full"))
        if index_kinds:
            from indexer import build_index

            build_index(store, kinds=index_kinds)
    return path

"""Shared data for the index tests: deterministic slices of real KBs from ../shared/data.

The MetaQA slice (every triple of the KB's first 25 movies, plus Kismet and The Devil and
Daniel Webster: 288 triples, about 560 texts to embed) is built and indexed once per test
session; test modules import the fixtures from here.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import kgstore
from kgstore import Store

METAQA_MOVIES = 25
EXTRA_MOVIES = ("Kismet", "The Devil and Daniel Webster")


def metaqa_lines(shared_data: Path) -> list[str]:
    return (shared_data / "qa" / "metaqa" / "kb_partial.txt").read_text(encoding="utf-8").splitlines()


def movie_slice(lines: list[str], movies: list[str] | set[str]) -> list[str]:
    """All (distinct) triples whose subject is one of ``movies``, in file order."""
    movies = set(movies)
    return list(dict.fromkeys(line for line in lines if line.split("|")[0] in movies))


def first_movies(lines: list[str], n: int) -> list[str]:
    return list(dict.fromkeys(line.split("|")[0] for line in lines))[:n]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_built: dict[str, Path] = {}


@pytest.fixture(scope="session")
def metaqa_store(shared_data, tmp_path_factory) -> Path:
    """A store with the MetaQA slice ingested (tsv loader) and all kinds indexed."""
    if "metaqa" not in _built:
        from indexer import build_index

        lines = metaqa_lines(shared_data)
        movies = first_movies(lines, METAQA_MOVIES) + list(EXTRA_MOVIES)
        root = tmp_path_factory.mktemp("metaqa_index")
        kb = write_lines(root / "kb_slice.txt", movie_slice(lines, movies))
        with Store.init(root / "store") as store:
            kgstore.ingest(store, "tsv", kb)
            build_index(store)
        _built["metaqa"] = root / "store"
    return _built["metaqa"]


def wikidata_fixture_dump(shared_data: Path) -> Path:
    """Five real Wikidata entities (Q1, Q42, Q1040, Q131261, P31) in dump format, with
    English labels, descriptions and aliases (Wikidata Toolkit's API fixtures)."""
    return shared_data / "formats" / "wikidata_json" / "derived" / "dump_format_from_wdtk_api_fixtures.json"


# -- Freebase film performances: mediator (CVT) nodes ---------------------------------------
def freebase_film_slice(shared_data: Path, film: str, path: Path) -> Path:
    """The lines of Cayley's 30k-movie Freebase extract about ``film`` (e.g.
    ``/en/christmas_with_the_kranks``): its facts, its film-performance CVT nodes (blank
    nodes) and the names of everything they point to, written to ``path``."""
    with gzip.open(shared_data / "kg" / "freebase_movies_30k" / "30kmoviedata.nq.gz", "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    subject = f"<{film}>"
    keep = [line for line in lines if line.startswith(subject + " ")]
    cvts = {line.split(" ")[2] for line in keep if line.split(" ")[2].startswith("_:")}
    keep += [line for line in lines if line.split(" ")[0] in cvts]
    named = {line.split(" ")[2] for line in keep if line.split(" ")[2].startswith("</")}
    keep += [line for line in lines if line.split(" ")[0] in named and line.split(" ")[1] == "<name>"]
    return write_lines(path, list(dict.fromkeys(keep)))

"""Lazy registry of loaders, by format name: nothing is imported until a format is used."""
from __future__ import annotations

import importlib

from .errors import UnknownFormatError
from .records import Loader

LOADERS: dict[str, str] = {
    "wikidata-json": "loaders.wikidata_json:WikidataJsonLoader",
    "wikidata-rdf": "loaders.wikidata_rdf:WikidataRdfLoader",
    "freebase": "loaders.freebase:FreebaseLoader",
    "tsv": "loaders.triples:PlainTriplesLoader",
}


def loader_for(name: str) -> Loader:
    target = LOADERS.get(name)
    if target is None:
        raise UnknownFormatError(name, known=sorted(LOADERS))
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)()

"""The shape of what truthy mode reads from a Wikidata JSON entity, for msgspec.

orjson turns every label, sitelink, qualifier and reference of an entity into Python
objects, though truthy mode reads a few hundred of an entity's 12,000 bytes: labels,
descriptions and aliases in the chosen languages, each statement's rank and main value,
the number of sitelinks. msgspec, given :func:`entity_decoder`'s types, builds only
those and skips the rest in C; decoding costs about 40 % of orjson's.

A line that does not fit these types (malformed JSON, a field of another type, ...) makes
the decoder raise; loaders/wikidata_json.py then maps it the ordinary way, through orjson,
which rejects it with its reason or, if it is valid after all, maps it. Skipped fields are
read only as far as JSON's syntax: a line whose only fault lies in one (invalid UTF-8 in
a sitelink title, say) loads where orjson would have rejected it.

Field types are ``Any`` where the mapping takes whatever it finds (a snak's datavalue goes
to ``value_term`` as the dict orjson would give); otherwise a type the mapping requires.
"""
from __future__ import annotations

import functools
from typing import Any

import msgspec


class Term(msgspec.Struct):
    value: str


class Snak(msgspec.Struct):
    snaktype: Any = "value"
    datatype: Any = None
    datavalue: Any = None


class Statement(msgspec.Struct):
    mainsnak: Snak
    rank: Any = "normal"
    id: Any = None


@functools.lru_cache(maxsize=16)
def entity_decoder(codes: tuple[str, ...]) -> tuple[msgspec.json.Decoder, tuple[str, ...], str]:
    """A decoder of entities reading the languages ``codes`` (and "mul"); the attribute
    name of each of ``codes`` on a decoded ``labels``, ``descriptions`` or ``aliases``
    (a field absent from the JSON reads as unset, which is false); and that of "mul"."""
    wanted = tuple(dict.fromkeys(codes))
    codes = wanted + (() if "mul" in wanted else ("mul",))
    names = tuple(f"l{i}" for i in range(len(codes)))
    rename = dict(zip(names, codes))
    # A missing "mul" label and a null one differ (the ordinary mapping rejects a null one).
    labels = msgspec.defstruct("Labels", [(n, Term | None | msgspec.UnsetType, msgspec.UNSET) for n in names],
                               rename=rename)
    aliases = msgspec.defstruct("Aliases", [(n, list[Term] | None, None) for n in names], rename=rename)
    entity = msgspec.defstruct("Entity", [
        ("id", str),
        ("type", Any, None),
        ("datatype", Any, None),
        ("missing", Any, msgspec.UNSET),
        ("labels", labels | None, None),
        ("descriptions", labels | None, None),
        ("aliases", aliases | None, None),
        ("claims", dict[str, list[Statement]] | None, None),
        ("sitelinks", dict[str, msgspec.Raw] | None, None),
    ])
    return msgspec.json.Decoder(entity), names[:len(wanted)], names[codes.index("mul")]

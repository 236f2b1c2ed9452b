"""Plain triple files: ``subject<TAB>relation<TAB>object`` or ``subject|relation|object``.

These are the KBs of MetaQA (``kb.txt``, '|'), PathQuestion (``2H-kb.txt``, tabs) and
WorldCup2014 (``WC2014.txt``, tabs). Names become IRIs under a namespace the user gives:

* entities: ``options.namespace`` (default ``kg:``) + an IRI-safe local name;
* relations: ``options.relation_namespace``; when unset, ``kgr:`` if the entity namespace is
  the default one, else ``namespace + "relation/"``.

Each file is *sniffed* from its beginning (also when resuming, so a resumed run decides the
same way): the separator (tab or '|', unless ``options.separator`` is given) and whether the
file writes spaces as underscores (PathQuestion's ``ludwig_ii_of_bavaria``, WorldCup's
``Esseid_BELKALEM``: no field of the first lines has a space, some have an underscore).

Local names (see :func:`local_name_for`) keep letters, digits, Unicode and IRI punctuation
readable and percent-encode the rest, so every string maps to one valid IRI:

* in a file with real spaces (MetaQA) a space becomes '_' and a real '_' becomes ``%5F``;
* in an underscore file '_' stays '_' (and a stray real space becomes ``%20``).

Within a file two different strings never share an IRI. Across files, ``Watford_FC`` of an
underscore file and ``Watford FC`` of a spaced file share one, which is intended: both name
"Watford FC".

Objects are entities, except canonical integers and decimals (``23``, ``1999``, ``7.5``),
which become ``xsd:integer``/``xsd:decimal`` literals: they are values (ages, shirt numbers,
release years), never subjects in these KBs, and a literal's label is its value, so
answers still match by label; SPARQL can compare them numerically. Non-canonical numerals
(``007``, ``+5``, ``1.50``) stay entities, because Oxigraph would rewrite their lexical form.

Labels: the original string (with '_' read as ' ' in an underscore file, keeping the raw
string as an alias). Relation labels read '_' as ' ' (``plays_in_club_inverse`` →
"plays in club inverse"); the relation's id is the raw name.
"""
from __future__ import annotations

import re
from typing import Iterator

from kgstore.records import (Batch, Checkpoint, EntityRecord, LoadOptions, RejectedLine, RelationRecord,
                             Triple)
from kgstore.terms import KG, KGR, XSD_DECIMAL, XSD_INTEGER, iri_is_valid
from kgstore.errors import IngestError

from ._input import DumpReader

SNIFF_LINES = 200

# Only lexical forms Oxigraph keeps as written (it canonicalises numeric literals), and
# small enough for its 64-bit integers.
_INTEGER = re.compile(r"(?:0|-?[1-9][0-9]{0,17})")
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\.[0-9]{0,17}[1-9]")

# ASCII characters an IRI path segment may hold as they are (RFC 3987 iunreserved and
# sub-delims, ':' and '@'); '%' is not among them so that encoding stays reversible.
_ASCII_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@")


def _is_ucschar(code: int) -> bool:
    """RFC 3987 ucschar: non-ASCII characters an IRI may hold unencoded."""
    if code < 0xA0 or 0xD800 <= code <= 0xF8FF or 0xFDD0 <= code <= 0xFDEF or code >= 0xE0000:
        return False
    return (code & 0xFFFF) < 0xFFF0


def _encode_char(ch: str) -> str:
    if ch in _ASCII_SAFE or _is_ucschar(ord(ch)):
        return ch
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8"))


def local_name_for(name: str, *, underscores_are_spaces: bool) -> str:
    """An IRI-safe, readable local name for ``name``; injective for a given mode."""
    out = []
    for ch in name:
        if ch == " ":
            out.append("%20" if underscores_are_spaces else "_")
        elif ch == "_":
            out.append("_" if underscores_are_spaces else "%5F")
        else:
            out.append(_encode_char(ch))
    return "".join(out)


def relation_local_name(name: str) -> str:
    """Relation names are identifiers (``directed_by``): '_' stays, a space is ``%20``."""
    return local_name_for(name, underscores_are_spaces=True)


def numeric_datatype(value: str) -> str | None:
    """``xsd:integer``/``xsd:decimal`` for a canonical numeral, else None."""
    if _INTEGER.fullmatch(value):
        return XSD_INTEGER
    if _DECIMAL.fullmatch(value):
        return XSD_DECIMAL
    return None


def relation_label(name: str) -> str:
    return " ".join(name.replace("_", " ").split())


def relation_namespace(options: LoadOptions) -> str:
    if options.relation_namespace:
        return options.relation_namespace
    return KGR if options.namespace == KG else options.namespace + "relation/"


# -- sniffing ----------------------------------------------------------------------------
def guess_separator(lines: list[str]) -> str:
    """Tab or '|': whichever splits more of ``lines`` into exactly three fields (tab on a tie)."""
    tabs = sum(1 for line in lines if line.count("\t") == 2)
    pipes = sum(1 for line in lines if line.count("|") == 2)
    return "|" if pipes > tabs else "\t"


def guess_underscores_are_spaces(lines: list[str], separator: str) -> bool:
    """True when names write spaces as underscores: no field has a space, some have '_'."""
    saw_underscore = False
    for line in lines:
        for name in line.split(separator):
            name = name.strip()
            if " " in name:
                return False
            saw_underscore = saw_underscore or "_" in name
    return saw_underscore


def _sniff(path: str) -> list[str]:
    sample: list[str] = []
    with DumpReader(path) as reader:
        try:
            for _, raw in reader:
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if text.strip():
                    sample.append(text)
                    if len(sample) >= SNIFF_LINES:
                        break
        except IngestError:
            pass  # a truncated file: decide on what could be read; the main read reports it
    return sample


# -- the loader --------------------------------------------------------------------------
class _Minter:
    """IRIs and records for one file's names, cached (names repeat a lot)."""

    def __init__(self, options: LoadOptions, underscores_are_spaces: bool):
        self.entity_ns = options.namespace
        self.relation_ns = relation_namespace(options)
        self.underscores = underscores_are_spaces
        self._entity_iris: dict[str, str] = {}
        self._relation_iris: dict[str, str] = {}
        # IRIs whose records an earlier batch of this run already carried: records of a
        # name never change, so sending them again would only slow the catalog down.
        self.sent: set[str] = set()

    def entity_iri(self, name: str) -> str:
        iri = self._entity_iris.get(name)
        if iri is None:
            iri = self.entity_ns + local_name_for(name, underscores_are_spaces=self.underscores)
            if len(self._entity_iris) < 2_000_000:
                self._entity_iris[name] = iri
        return iri

    def relation_iri(self, name: str) -> str:
        iri = self._relation_iris.get(name)
        if iri is None:
            iri = self._relation_iris[name] = self.relation_ns + relation_local_name(name)
        return iri

    def entity_record(self, iri: str, name: str) -> EntityRecord:
        if self.underscores and "_" in name:
            label = " ".join(name.replace("_", " ").split())
            return EntityRecord(iri=iri, id=name, label=label, aliases=(name,))
        return EntityRecord(iri=iri, id=name, label=name)

    def relation_record(self, iri: str, name: str) -> RelationRecord:
        return RelationRecord(iri=iri, id=name, label=relation_label(name))


class PlainTriplesLoader:
    """Loader for ``subject<SEP>relation<SEP>object`` lines (format name ``tsv``)."""

    name = "tsv"

    def batches(self, path: str, options: LoadOptions, start: Checkpoint | None = None) -> Iterator[Batch]:
        for ns in (options.namespace, relation_namespace(options)):
            if not iri_is_valid(ns):
                raise IngestError(f"namespace {ns!r} is not a valid IRI")
        sample = _sniff(path)
        separator = options.separator or guess_separator(sample)
        minter = _Minter(options, guess_underscores_are_spaces(sample, separator))
        with DumpReader(path, start) as reader:
            for chunk in reader.chunks(max(1, options.batch_size)):
                batch = Batch(checkpoint=chunk.checkpoint, raw_position=chunk.raw_position)
                _parse_lines(chunk.lines, separator, minter, options, batch)
                yield batch


def _parse_lines(lines: list[tuple[int, bytes]], separator: str, minter: _Minter,
                 options: LoadOptions, batch: Batch) -> None:
    entities: dict[str, EntityRecord] = {}
    relations: dict[str, RelationRecord] = {}
    sep_name = "tab" if separator == "\t" else repr(separator)
    keep_relations = options.properties
    keep_subjects = options.entities
    sent = minter.sent
    for line_no, raw in lines:
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            batch.rejected.append(RejectedLine(line_no, f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                                               raw.decode("utf-8", "replace").rstrip("\r\n")))
            continue
        if not text.strip():
            continue
        fields = [f.strip() for f in text.split(separator)]
        if len(fields) != 3:
            batch.rejected.append(RejectedLine(
                line_no, f"expected 3 {sep_name}-separated fields (subject, relation, object), found {len(fields)}",
                text))
            continue
        subject, relation, obj = fields
        empty = [n for n, v in zip(("subject", "relation", "object"), fields) if not v]
        if empty:
            batch.rejected.append(RejectedLine(line_no, f"empty {' and '.join(empty)}", text))
            continue
        if keep_relations is not None and relation not in keep_relations:
            batch.counts["skipped"] += 1
            continue
        if keep_subjects is not None and subject not in keep_subjects:
            batch.counts["skipped"] += 1
            continue
        s = minter.entity_iri(subject)
        p = minter.relation_iri(relation)
        if s not in entities and s not in sent:
            entities[s] = minter.entity_record(s, subject)
        if p not in relations and p not in sent:
            relations[p] = minter.relation_record(p, relation)
        datatype = numeric_datatype(obj)
        if datatype is not None:
            batch.triples.append(Triple(s, p, obj, True, datatype))
        else:
            o = minter.entity_iri(obj)
            if o not in entities and o not in sent:
                entities[o] = minter.entity_record(o, obj)
            batch.triples.append(Triple(s, p, o))
    batch.entities = list(entities.values())
    batch.relations = list(relations.values())
    if len(sent) < 5_000_000:
        sent.update(entities)
        sent.update(relations)
    batch.counts["lines"] += len(lines)
    batch.counts["entities"] += len(entities)

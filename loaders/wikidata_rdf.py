"""Wikidata RDF: truthy N-Triples (``latest-truthy.nt``) and full Turtle (``latest-all.ttl``),
parsed by pyoxigraph, with the catalog filled from the same stream.

* The format comes from the suffix (``.nt``, ``.nq``, ``.ttl``, each possibly ``.gz``/``.bz2``),
  else from the first 64 KiB (``@prefix``/``PREFIX`` or lines that are not N-Triples → Turtle).
* Blank nodes become skolem IRIs scoped by the file's decompressed content (its first MiB),
  so the same file loads to the same IRIs whether it is compressed or not, and a resumed
  run names them as the first run did.
* Catalog: ``rdfs:label``, ``schema:description`` and ``skos:altLabel`` in
  ``options.languages`` give entity labels, descriptions and aliases (the label in the
  earliest listed language wins within a batch); a label of ``wd:Pn`` also labels the
  relation ``wdt:Pn``, the IRI facts use; every ``wdt:`` predicate seen becomes a relation;
  ``wikibase:propertyType`` gives its datatype and ``wikibase:sitelinks`` an item's
  sitelink count.

N-Triples (and N-Quads, graph names dropped) is line based: batches are ``batch_size``
lines, checkpoints are byte offsets, and a malformed line is rejected with its line number
while the rest of its batch loads (the parser resumes at the next line).

Turtle is not line based: a statement can span lines and depends on earlier ``@prefix``
lines, so a byte offset is no place to restart parsing. Its checkpoint is the number of
triples already committed (``Checkpoint(offset=triples_done, line_no=0)``); a resumed run
parses from the beginning and skips that many triples, which is exact because parsing is
deterministic, and costs only parsing time. A Turtle syntax error is reported with the
line the parser gives; the parser then tries to go on, and what it can read is loaded.
"""
from __future__ import annotations

import hashlib
import io
import re
import zlib
from collections import Counter
from typing import Iterable, Iterator

import pyoxigraph as ox

from kgstore.errors import TruncatedInputError
from kgstore.records import Batch, Checkpoint, EntityRecord, LoadOptions, RejectedLine, RelationRecord, Triple
from kgstore.terms import (RDFS_LABEL, SCHEMA, SCHEMA_DESCRIPTION, SKOS, SKOS_ALTLABEL, WD, WDS, WDT, WIKIBASE,
                           WIKIDATA_ENTITY_DATA, XSD, local_name, skolem_iri)

from ._input import BOM, DumpReader, _decompressing, open_decompressed
from ._prefetch import prefetched
from ._wikidata_values import PROPERTY_TYPES, language_tag

XSD_STRING = XSD + "string"
WIKIBASE_PROPERTY_TYPE = WIKIBASE + "propertyType"
WIKIBASE_SITELINKS = WIKIBASE + "sitelinks"
SNIFF_BYTES = 1 << 16
SCOPE_BYTES = 1 << 20
_PROPERTY_IRI = re.compile(re.escape(WD) + r"P[1-9][0-9]*")
_JSON_TYPE_NAMES = {v: k for k, v in PROPERTY_TYPES.items()}
_NamedNode, _BlankNode, _Literal = ox.NamedNode, ox.BlankNode, ox.Literal
_new = tuple.__new__  # Triple(...) without the Python-level __new__, on the hot path


def detect_format(path: str) -> ox.RdfFormat:
    """N-Triples, N-Quads or Turtle, from the suffix or else the content."""
    name = path.lower()
    for suffix in (".gz", ".bz2"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith((".nt", ".ntriples")):
        return ox.RdfFormat.N_TRIPLES
    if name.endswith(".nq"):
        return ox.RdfFormat.N_QUADS
    if name.endswith((".ttl", ".turtle")):
        return ox.RdfFormat.TURTLE
    head = _head(path, SNIFF_BYTES).removeprefix(BOM)
    lines = head.split(b"\n")
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last one may be cut
    for line in lines:
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue
        if re.match(rb"(?i)@?(prefix|base)\b", line) or not (line.startswith((b"<", b"_:")) and line.endswith(b".")):
            return ox.RdfFormat.TURTLE
    return ox.RdfFormat.N_TRIPLES


def _head(path: str, size: int) -> bytes:
    """Up to ``size`` decompressed bytes from the start (fewer if the file is damaged there:
    the damage is reported when the file is read)."""
    parts: list[bytes] = []
    got = 0
    with open_decompressed(path) as f:
        while got < size:
            try:
                part = f.read(min(1 << 16, size - got))
            except (EOFError, zlib.error, OSError):
                break
            if not part:
                break
            parts.append(part)
            got += len(part)
    return b"".join(parts)


def blank_node_prefix(path: str) -> str:
    """The skolem IRI prefix for this file's blank nodes (see the module docstring)."""
    head = _head(path, SCOPE_BYTES)
    scope = "wikidata-rdf:" + hashlib.sha256(head).hexdigest()
    return skolem_iri(scope, "")


def quads_to_triples(quads: Iterable, bnode_prefix: str, counts: Counter) -> list[Triple]:
    """kgstore Triples for pyoxigraph quads (graph names dropped, blank nodes skolemised)."""
    out: list[Triple] = []
    append = out.append
    for q in quads:
        s = q.subject
        if type(s) is _NamedNode:
            sv = s.value
        elif type(s) is _BlankNode:
            sv = bnode_prefix + s.value
        else:
            counts["skipped_triple_term"] += 1
            continue
        p = q.predicate.value
        o = q.object
        to = type(o)
        if to is _NamedNode:
            append(_new(Triple, (sv, p, o.value, False, None, None)))
        elif to is _Literal:
            lang = o.language
            if lang:
                append(_new(Triple, (sv, p, o.value, True, None, lang)))
            else:
                dt = o.datatype.value
                append(_new(Triple, (sv, p, o.value, True, None if dt == XSD_STRING else dt, None)))
        elif to is _BlankNode:
            append(_new(Triple, (sv, p, bnode_prefix + o.value, False, None, None)))
        else:
            counts["skipped_triple_term"] += 1
    return out


def catalog_records(triples: Iterable[Triple],
                    languages: tuple[str, ...]) -> tuple[list[EntityRecord], list[RelationRecord]]:
    """Entity and relation records from the labels, descriptions, aliases, ``wdt:``
    predicates, property types and sitelink counts among ``triples``. Pure."""
    rank = {}
    for i, code in enumerate(languages):
        tag = language_tag(code)
        if tag is not None:
            rank.setdefault(tag.lower(), i)
    labels: dict[str, tuple[int, str]] = {}
    descriptions: dict[str, tuple[int, str]] = {}
    aliases: dict[str, list[str]] = {}
    sitelinks: dict[str, int] = {}
    datatypes: dict[str, str] = {}
    predicates: set[str] = set()
    for t in triples:
        p = t.p
        if p.startswith(WDT):
            predicates.add(p)
        elif p == RDFS_LABEL or p == SCHEMA_DESCRIPTION or p == SKOS_ALTLABEL:
            if not t.literal or t.lang is None:
                continue
            r = rank.get(t.lang.lower())
            if r is None:
                continue
            if p == SKOS_ALTLABEL:
                aliases.setdefault(t.s, []).append(t.o)
            else:
                table = labels if p == RDFS_LABEL else descriptions
                old = table.get(t.s)
                if old is None or r < old[0]:
                    table[t.s] = (r, t.o)
        elif p == WIKIBASE_PROPERTY_TYPE and _PROPERTY_IRI.fullmatch(t.s):
            # An IRI (wikibase:WikibaseItem) in today's dumps, a literal in early ones.
            name = t.o if t.literal else t.o[len(WIKIBASE):] if t.o.startswith(WIKIBASE) else local_name(t.o)
            datatypes[t.s] = _JSON_TYPE_NAMES.get(name, name)
        elif p == WIKIBASE_SITELINKS and t.literal and t.s.startswith(WIKIDATA_ENTITY_DATA):
            try:
                sitelinks[WD + t.s[len(WIKIDATA_ENTITY_DATA):]] = int(t.o)
            except ValueError:
                pass
    entities: list[EntityRecord] = []
    relations: dict[str, RelationRecord] = {}
    for iri in dict.fromkeys([*labels, *descriptions, *aliases, *sitelinks]):
        label = labels.get(iri, (0, None))[1]
        description = descriptions.get(iri, (0, None))[1]
        eid = local_name(iri)
        is_property = _PROPERTY_IRI.fullmatch(iri) is not None
        kind = "property" if is_property else "lexeme" if iri.startswith(WD + "L") else "item"
        entities.append(EntityRecord(iri, eid, label, description, tuple(dict.fromkeys(aliases.get(iri, ()))),
                                     sitelinks.get(iri), False, kind))
        if is_property and (label is not None or description is not None):
            relations[WDT + eid] = RelationRecord(WDT + eid, eid, label, description, None, datatypes.get(iri))
    for iri, datatype in datatypes.items():
        pid = iri[len(WD):]
        if WDT + pid in relations:
            relations[WDT + pid].datatype = datatype
        else:
            relations[WDT + pid] = RelationRecord(WDT + pid, pid, datatype=datatype)
    for p in predicates:
        if p not in relations:
            relations[p] = RelationRecord(p, p[len(WDT):])
    return entities, list(relations.values())


def subset(triples: list[Triple], options: LoadOptions, counts: Counter) -> list[Triple]:
    """``triples`` less what the options leave out: labels, descriptions and aliases in other
    languages, statements of properties outside ``options.properties`` (every ``prop/``
    namespace: wdt:, p:, ps:, pq:, pr:, …), and triples about items outside
    ``options.entities`` (their statement nodes too, found by the id that starts a
    statement node's name). Properties are always kept."""
    tags = {tag.lower() for code in options.languages if (tag := language_tag(code)) is not None}
    allowed_props = options.properties
    allowed_items = options.entities
    out = []
    for t in triples:
        p = t.p
        if p in _TERM_PREDICATES:
            if t.lang is not None and t.lang.lower() not in tags:
                counts["skipped_language"] += 1
                continue
        elif allowed_props is not None and p.startswith(PROP_NS):
            pid = p[p.rfind("/") + 1:]
            if pid not in allowed_props and _PROPERTY_ID.fullmatch(pid):
                counts["skipped_property"] += 1
                continue
        if allowed_items is not None:
            eid = _subject_item(t.s)
            if eid is not None and eid not in allowed_items and WD + eid not in allowed_items:
                counts["skipped_entity"] += 1
                continue
        out.append(t)
    return out


PROP_NS = "http://www.wikidata.org/prop/"
# Wikidata writes each label three times (rdfs:label, skos:prefLabel, schema:name).
_TERM_PREDICATES = frozenset({RDFS_LABEL, SCHEMA_DESCRIPTION, SKOS_ALTLABEL, SKOS + "prefLabel", SCHEMA + "name"})
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_ITEM_ID = re.compile(r"[QL][1-9][0-9]*")


def _subject_item(s: str) -> str | None:
    """The item (or lexeme) id a subject belongs to: ``wd:Q42`` or ``wds:Q42-…``; None for others."""
    if s.startswith(WDS):
        head = s[len(WDS):].split("-", 1)[0].upper()
        return head if _ITEM_ID.fullmatch(head) else None
    if s.startswith(WD):
        rest = s[len(WD):]
        return rest if _ITEM_ID.fullmatch(rest) else None
    return None


def _syntax_reason(exc: SyntaxError, fmt_name: str) -> str:
    text = str(exc)
    text = re.sub(r"\s*\(line \d+\)$", "", text)
    text = re.sub(r"^Parser error (?:at )?line \d+ ", "", text)
    text = re.sub(r"^Parser error between line 1 column (\d+) and line 2 column 1\b",
                  r"from column \1 to the end of the line", text)
    text = re.sub(r"^Parser error ", "", text)
    return f"invalid {fmt_name}: {text}"


class _GuardedStream(io.RawIOBase):
    """A decompressing stream that ends, instead of raising, where the compressed data is
    damaged, and remembers why; the Turtle parser then finishes what it has."""

    def __init__(self, stream):
        self._stream = stream
        self.error: BaseException | None = None
        self.lines = 0  # newlines read so far: where a truncation happened
        self._pending = b""  # the file's first bytes, read to drop a BOM the parser would refuse
        try:
            head = stream.read(len(BOM))
        except (EOFError, zlib.error, OSError) as exc:
            self.error = exc
        else:
            self._pending = b"" if head == BOM else head

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._pending:
            data, self._pending = self._pending[:len(buffer)], self._pending[len(buffer):]
            buffer[: len(data)] = data
            self.lines += data.count(b"\n")
            return len(data)
        if self.error is not None:
            return 0
        try:
            data = self._stream.read(len(buffer))
        except (EOFError, zlib.error, OSError) as exc:
            self.error = exc
            return 0
        buffer[: len(data)] = data
        self.lines += data.count(b"\n")
        return len(data)

    def close(self) -> None:
        self._stream.close()
        super().close()


class WikidataRdfLoader:
    """Loader for the ``wikidata-rdf`` format (see the module docstring)."""

    name = "wikidata-rdf"
    # Parse the next batch in a thread while the caller commits this one (loaders/_prefetch.py).
    # A caller that already parses in another process can turn it off.
    read_ahead = True

    def batches(self, path: str, options: LoadOptions, start: Checkpoint | None = None) -> Iterator[Batch]:
        fmt = detect_format(path)
        prefix = blank_node_prefix(path)
        if fmt in (ox.RdfFormat.N_TRIPLES, ox.RdfFormat.N_QUADS):
            make = lambda: self._lines(path, fmt, prefix, options, start)  # noqa: E731
        else:
            make = lambda: self._turtle(path, prefix, options, start)  # noqa: E731
        return prefetched(make) if self.read_ahead else make()

    def _lines(self, path, fmt, prefix, options, start) -> Iterator[Batch]:
        fmt_name = "N-Triples" if fmt == ox.RdfFormat.N_TRIPLES else "N-Quads"
        with DumpReader(path, start) as reader:
            for chunk in reader.chunks(max(1, options.batch_size)):
                batch = Batch(checkpoint=chunk.checkpoint, raw_position=chunk.raw_position)
                data = b"".join(raw for _, raw in chunk.lines)
                try:
                    quads = list(ox.parse(input=data, format=fmt))
                except SyntaxError:
                    # One bad line (an unterminated string, say) can derail the parser for
                    # the lines after it, so the chunk is parsed again line by line.
                    quads = self._line_by_line(chunk.lines, fmt, fmt_name, batch.rejected)
                batch.triples = quads_to_triples(quads, prefix, batch.counts)
                self._fill_catalog(batch, options)
                yield batch

    @staticmethod
    def _line_by_line(lines, fmt, fmt_name: str, rejected: list[RejectedLine]) -> list:
        quads = []
        for line_no, raw in lines:
            try:
                quads.extend(ox.parse(input=raw, format=fmt))
            except SyntaxError as exc:
                rejected.append(RejectedLine(line_no, _syntax_reason(exc, fmt_name),
                                             raw.decode("utf-8", "replace").rstrip("\r\n")))
        return quads

    def _turtle(self, path, prefix, options, start) -> Iterator[Batch]:
        skip = start.offset if start is not None else 0
        size = max(1, options.batch_size)
        raw = open(path, "rb")
        stream = _GuardedStream(_decompressing(path, raw))
        try:
            parser = ox.parse(input=stream, format=ox.RdfFormat.TURTLE)
            done = 0
            quads: list = []
            rejected: list[RejectedLine] = []
            while True:
                try:
                    quad = next(parser)
                except StopIteration:
                    break
                except SyntaxError as exc:
                    # After a truncation the cut statement fails to parse: not a bad line.
                    if done >= skip and stream.error is None:
                        rejected.append(RejectedLine(exc.lineno or 0, _syntax_reason(exc, "Turtle"), ""))
                    continue
                done += 1
                if done <= skip:
                    continue
                quads.append(quad)
                if len(quads) >= size:
                    yield self._turtle_batch(quads, rejected, done, raw, prefix, options)
                    quads, rejected = [], []
            if quads or rejected:
                yield self._turtle_batch(quads, rejected, done, raw, prefix, options)
            if stream.error is not None:
                raise TruncatedInputError(path, stream.lines, f"{done} triples read: {stream.error}")
        finally:
            stream.close()
            raw.close()

    def _turtle_batch(self, quads, rejected, done, raw, prefix, options) -> Batch:
        try:
            position = raw.tell()
        except (ValueError, OSError):
            position = 0
        batch = Batch(checkpoint=Checkpoint(done, 0), rejected=rejected, raw_position=position)
        batch.triples = quads_to_triples(quads, prefix, batch.counts)
        self._fill_catalog(batch, options)
        return batch

    @staticmethod
    def _fill_catalog(batch: Batch, options: LoadOptions) -> None:
        batch.triples = subset(batch.triples, options, batch.counts)
        batch.entities, batch.relations = catalog_records(batch.triples, tuple(options.languages))

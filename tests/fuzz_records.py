"""Generated input files for the loader fuzz tests (tests/test_fuzz_loaders.py, bench/fuzz_loaders.py).

A generated file is a list of :class:`Record`s, one physical line each, and every record
knows what the loader must do with it:

* ``must == "load"``: a valid record; each of its ``facts`` must be in the store;
* ``must == "reject"``: a broken record; its line must be in ``kgstore rejects`` with its
  line number;
* ``must == "either"``: input whose fate the formats leave open (a lone surrogate escape,
  a value replaced by one of another type): loading or rejecting are both right, crashing
  is not. Its ``subject`` says which triples it may have added.

A fact is ``(subject, predicate, object, literal, lang)`` with full IRIs, except for the
``tsv`` format, where subject, predicate and IRI objects are the *names* of the file (the
test looks their IRIs up in the catalog, so it does not rely on the loader's naming).

The mutations are the ones issue 32 lists: truncated lines, wrong types, bad escapes,
invalid UTF-8, huge values, deep nesting, NUL bytes, mixed line endings and a BOM.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from hypothesis import strategies as st

from kgstore.terms import FB, RDFS_LABEL, WD, WDT

FORMATS = ("tsv", "wikidata-json", "wikidata-rdf", "freebase")
# The file name each format is written to: ``.nt`` so that the RDF loader does not sniff a
# mutated first line as Turtle.
FILE_NAMES = {"tsv": "kb.tsv", "wikidata-json": "dump.json", "wikidata-rdf": "truthy.nt", "freebase": "fb.txt"}
BOM = b"\xef\xbb\xbf"
HUGE = 200_000  # characters of a huge value: past every buffer a reader uses (64 KiB sniffing, 8 KiB io)
DEEP = 5_000  # nesting past every JSON parser's limit (orjson: 1024)
INVALID_UTF8 = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80")


@dataclass
class Record:
    raw: bytes  # without its line ending
    kind: str  # "valid" or the mutation that made it
    must: str  # "load", "reject" or "either"
    facts: list[tuple] = field(default_factory=list)
    subject: str | None = None  # for "either": the subject of whatever it may add
    ending: bytes = b"\n"


@dataclass
class GeneratedFile:
    fmt: str
    records: list[Record]
    header: list[bytes] = field(default_factory=list)  # framing lines before the records ("[")
    footer: list[bytes] = field(default_factory=list)
    bom: bool = False

    def content(self) -> bytes:
        lines = [line + b"\n" for line in self.header]
        lines += [r.raw + r.ending for r in self.records]
        lines += [line + b"\n" for line in self.footer]
        return (BOM if self.bom else b"") + b"".join(lines)

    def line_numbers(self) -> dict[int, Record]:
        """Line number (1-based, as ``kgstore rejects`` gives it) → record."""
        first = len(self.header) + 1
        numbers, line = {}, first
        for record in self.records:
            numbers[line] = record
            # a lone CR does not end a line for the reader (only LF does)
            line += record.ending.count(b"\n")
        return numbers

    def expected_facts(self) -> set[tuple]:
        return {f for r in self.records if r.must == "load" for f in r.facts}


# -- text --------------------------------------------------------------------------------
def _text(*, exclude: str = "", min_size: int = 0, max_size: int = 12):
    # Any Unicode but lone surrogates (no UTF-8 for them): NUL, controls, U+2028, RTL marks...
    chars = st.characters(blacklist_categories=("Cs",), blacklist_characters=exclude)
    return st.text(chars, min_size=min_size, max_size=max_size)


_WHITESPACE = st.text(st.sampled_from(" \t"), max_size=3)


# -- tsv -----------------------------------------------------------------------------------
def _tsv_name():
    # A name as the loader reads it: stripped, no tab (the separator) and no line break.
    return _text(exclude="\t\n\r", min_size=1).map(str.strip).filter(bool)


@st.composite
def tsv_valid(draw, index: int) -> Record:
    s, p, o = draw(_tsv_name()), draw(_tsv_name()), draw(_tsv_name())
    if draw(st.booleans()):
        o = str(draw(st.integers(-10**6, 10**6)))  # a number: the loader makes it a literal
    pad = draw(st.text(st.sampled_from(" "), max_size=3))  # a tab would be a separator
    raw = f"{pad}{s}\t{p}{pad}\t{o}".encode()
    return Record(raw, "valid", "load", [(s, p, o)])


@st.composite
def tsv_mutated(draw, index: int) -> Record:
    valid = draw(tsv_valid(index))
    s, p, o = valid.facts[0]
    kind = draw(st.sampled_from(["fields", "empty", "invalid-utf8", "truncated", "nul", "huge", "crlf"]))
    if kind == "fields":
        extra = draw(st.sampled_from([f"{s}\t{p}", f"{s}\t{p}\t{o}\tx", f"{s}"]))
        return Record(extra.encode(), kind, "reject")
    if kind == "empty":
        fields = [s, p, o]
        fields[draw(st.integers(0, 2))] = draw(_WHITESPACE)
        return Record("\t".join(fields).encode(), kind, "reject")
    if kind == "invalid-utf8":
        raw = valid.raw
        at = draw(st.integers(0, len(raw)))
        return Record(raw[:at] + draw(st.sampled_from(INVALID_UTF8)) + raw[at:], kind, "reject")
    if kind == "truncated":
        raw = valid.raw.lstrip()
        cut = raw.index(b"\t", raw.index(b"\t") + 1)  # before the second separator
        return Record(raw[:draw(st.integers(1, cut))], kind, "reject")
    if kind == "nul":  # NUL is a character like any other in a name
        s = s + "\x00" + s
        return Record(f"{s}\t{p}\t{o}".encode(), kind, "load", [(s, p, o)])
    if kind == "huge":
        o = "h" * HUGE + o
        return Record(f"{s}\t{p}\t{o}".encode(), kind, "load", [(s, p, o)])
    valid.kind, valid.ending = kind, b"\r\n"
    return valid


# -- wikidata-json ---------------------------------------------------------------------------
def wikidata_entity(eid: str, label: str, target: int) -> dict:
    return {
        "type": "item", "id": eid,
        "labels": {"en": {"language": "en", "value": label}},
        "claims": {"P31": [{
            "type": "statement", "rank": "normal", "id": f"{eid}$1",
            "mainsnak": {"snaktype": "value", "property": "P31", "datatype": "wikibase-item",
                         "datavalue": {"type": "wikibase-entityid",
                                       "value": {"entity-type": "item", "numeric-id": target, "id": f"Q{target}"}}},
        }]},
    }


def _json_facts(eid: str, label: str, target: int) -> list[tuple]:
    return [(WD + eid, RDFS_LABEL, label, True, "en"), (WD + eid, WDT + "P31", WD + f"Q{target}", False, None)]


_PLACEHOLDER = "\u2603PLACEHOLDER\u2603"


@st.composite
def json_valid(draw, index: int, label: str | None = None) -> Record:
    eid = f"Q{index + 1}"
    label = draw(_text()) if label is None else label
    target = draw(st.integers(1, 10**9))
    raw = json.dumps(wikidata_entity(eid, label, target), ensure_ascii=draw(st.booleans())).encode()
    return Record(raw, "valid", "load", _json_facts(eid, label, target), subject=WD + eid)


def _json_with(draw, index: int, insert: bytes) -> bytes:
    """A valid entity line whose label holds ``insert`` as raw bytes of the JSON text."""
    record = draw(json_valid(index, label=_PLACEHOLDER))
    return record.raw.replace(json.dumps(_PLACEHOLDER, ensure_ascii=False)[1:-1].encode(), insert).replace(
        json.dumps(_PLACEHOLDER)[1:-1].encode(), insert)


# Any JSON value, with numbers past every machine type (JSON sets no limit).
_HUGE_NUMBERS = st.sampled_from([10**400, -10**400, 2**64, -2**63 - 1, 1e308, -5e-324])
_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), _HUGE_NUMBERS,
                          st.floats(allow_nan=False, allow_infinity=False), _text())
json_values = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(_text(max_size=5), inner, max_size=3), max_leaves=6)
_GREGORIAN, _JULIAN = WD + "Q1985727", WD + "Q1985786"


def _or_any(strategy):
    return st.one_of(strategy, strategy, json_values)


# Wikibase datavalues by value type, each field well-formed or anything at all.
DATAVALUES = {
    "time": st.fixed_dictionaries({
        "time": _or_any(st.from_regex(r"[+-][0-9]{1,16}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z",
                                      fullmatch=True)),
        "precision": _or_any(st.integers(-3, 16)), "timezone": _or_any(st.integers(-1000, 1000)),
        "calendarmodel": _or_any(st.sampled_from([_GREGORIAN, _JULIAN, "http://x/", "Q1"]))}),
    "quantity": st.fixed_dictionaries({
        "amount": _or_any(st.from_regex(r"[+-]?[0-9]{1,60}(\.[0-9]{0,20})?", fullmatch=True)),
        "unit": _or_any(st.sampled_from(["1", WD + "Q11573", "not an iri", ""])),
        "upperBound": _or_any(st.from_regex(r"[+-][0-9]{1,5}", fullmatch=True))}),
    "globecoordinate": st.fixed_dictionaries({
        "latitude": _or_any(st.floats(-90, 90)), "longitude": _or_any(st.floats(-180, 180)),
        "precision": _or_any(st.floats(0, 1)), "globe": _or_any(st.sampled_from([WD + "Q2", WD + "Q111", "x y"]))}),
    "monolingualtext": st.fixed_dictionaries({
        "text": _or_any(_text()),
        "language": _or_any(st.from_regex(r"[a-z]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True))}),
    "wikibase-entityid": st.fixed_dictionaries({
        "entity-type": _or_any(st.sampled_from(["item", "property", "lexeme", "form"])),
        "numeric-id": _or_any(st.integers(0, 10**12) | _HUGE_NUMBERS), "id": _or_any(_text(max_size=8))}),
    "string": _or_any(_text()),
}
DATATYPES = ["wikibase-item", "string", "url", "commonsMedia", "external-id", "geo-shape", "tabular-data", "math",
             "time", "quantity", "globe-coordinate", "monolingualtext", "wikibase-property", "musical-notation"]


@st.composite
def json_any_value(draw, index: int) -> Record:
    """A claim of any datatype with any value: read, or skipped as unsupported, or its line
    rejected; never a crash."""
    eid = f"Q{index + 1}"
    kind = draw(st.sampled_from(sorted(DATAVALUES)))
    snak = {"snaktype": draw(_or_any(st.sampled_from(["value", "somevalue", "novalue"]))), "property": "P5",
            "datatype": draw(_or_any(st.sampled_from(DATATYPES))),
            "datavalue": {"type": kind, "value": draw(DATAVALUES[kind])}}
    qualifier = dict(snak, property="P6")
    entity = {"type": "item", "id": eid, "claims": {"P5": [{
        "type": "statement", "rank": draw(_or_any(st.sampled_from(["normal", "preferred", "deprecated"]))),
        "id": f"{eid}$2", "mainsnak": snak, "qualifiers": {"P6": [qualifier]},
        "references": [{"hash": "x", "snaks": {"P7": [dict(snak, property="P7")]}}]}]}}
    return Record(json.dumps(entity, ensure_ascii=draw(st.booleans())).encode(), f"any-value:{kind}", "either",
                  subject=WD + eid)


@st.composite
def json_mutated(draw, index: int) -> Record:
    eid = f"Q{index + 1}"
    kind = draw(st.sampled_from(["truncated", "wrong-type", "bad-escape", "invalid-utf8", "nul-raw", "nul-escaped",
                                 "huge", "deep", "nested", "lone-surrogate", "any-type", "crlf", "not-an-object",
                                 "any-value", "any-value"]))
    if kind == "any-value":
        return draw(json_any_value(index))
    valid = draw(json_valid(index))
    if kind == "truncated":
        return Record(valid.raw[:draw(st.integers(3, len(valid.raw) - 1))], kind, "reject")
    if kind == "wrong-type":
        entity = json.loads(valid.raw)
        path = draw(st.sampled_from(["id-int", "id-pattern", "labels", "claims", "claim", "statement"]))
        if path == "id-int":
            entity["id"] = index + 1
        elif path == "id-pattern":
            entity["id"] = "X" + eid
        elif path == "labels":
            entity["labels"] = [entity["labels"]]
        elif path == "claims":
            entity["claims"] = "P31"
        elif path == "claim":
            entity["claims"]["P31"] = entity["claims"]["P31"][0]["mainsnak"]["property"]
        else:
            entity["claims"]["P31"] = [7]
        return Record(json.dumps(entity).encode(), f"{kind}:{path}", "reject")
    if kind == "bad-escape":
        escape = draw(st.sampled_from([b"\\q", b"\\x41", b"\\u12", b"\\u", b"\\"]))
        return Record(_json_with(draw, index, escape), kind, "reject")
    if kind == "invalid-utf8":
        return Record(_json_with(draw, index, draw(st.sampled_from(INVALID_UTF8))), kind, "reject")
    if kind == "nul-raw":  # JSON strings may not hold control characters unescaped
        return Record(_json_with(draw, index, b"a\x00b"), kind, "reject")
    if kind == "nul-escaped":
        label = "a\x00b"
        record = draw(json_valid(index, label=label))
        record.kind = kind
        return record
    if kind == "huge":
        record = draw(json_valid(index, label="h" * HUGE))
        record.kind = kind
        return record
    if kind in ("deep", "nested"):
        depth = DEEP if kind == "deep" else draw(st.integers(2, 200))
        entity = json.loads(valid.raw)
        entity["x"] = "@@"
        raw = json.dumps(entity).encode().replace(b'"@@"', b"[" * depth + b"]" * depth)
        if kind == "deep":
            return Record(raw, kind, "reject")  # "invalid JSON: nested too deeply"
        return Record(raw, kind, "load", valid.facts)  # an unknown key, however nested, is ignored
    if kind == "lone-surrogate":
        return Record(_json_with(draw, index, b"\\ud800"), kind, "either", subject=WD + eid)
    if kind == "any-type":
        entity = json.loads(valid.raw)
        key = draw(st.sampled_from(["type", "labels", "claims", "sitelinks", "descriptions", "aliases"]))
        entity[key] = draw(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                                     _text(), st.lists(st.integers(), max_size=3),
                                     st.dictionaries(_text(max_size=4), st.integers(), max_size=3)))
        return Record(json.dumps(entity).encode(), f"{kind}:{key}", "either", subject=WD + eid)
    if kind == "not-an-object":
        value = draw(st.sampled_from([b"42", b'"Q1"', b"null", b"true", b"[1, 2]"]))
        return Record(value, kind, "reject")
    valid.kind, valid.ending = kind, b"\r\n"
    return valid


# -- N-Triples (wikidata-rdf and freebase) ---------------------------------------------------------
def nt_literal(value: str, draw) -> str:
    """``value`` as an N-Triples string, its characters escaped the ways the grammar allows."""
    out = []
    for ch in value:
        if ch in '"\\\n\r':
            out.append({'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r"}[ch])
        elif draw(st.integers(0, 9)) == 0:
            out.append(f"\\u{ord(ch):04X}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@st.composite
def nt_triple(draw, index: int, *, namespace: str, predicates: tuple[str, str]) -> tuple[str, tuple]:
    """One valid statement line (without the final ' .') and its fact."""
    s = f"{namespace}Q{index + 1}" if namespace == WD else f"{namespace}m.0{index + 1:x}"
    label_p, link_p = predicates
    sep = draw(st.sampled_from([" ", "\t", "  "]))
    if draw(st.booleans()):
        value = draw(_text())  # NUL and controls too: N-Triples holds any text but lone surrogates
        lang = draw(st.sampled_from([None, "en"]))
        term = nt_literal(value, draw) + (f"@{lang}" if lang else "")
        fact = (s, label_p, value, True, lang)
    else:
        n = draw(st.integers(1, 10**9))
        o = f"{namespace}Q{n}" if namespace == WD else f"{namespace}m.0{n:x}"
        term = f"<{o}>"
        fact = (s, link_p, o, False, None)
    p = fact[1]
    return f"<{s}>{sep}<{p}>{sep}{term}{sep}.", fact


RDF_PREDICATES = (RDFS_LABEL, WDT + "P31")
FREEBASE_PREDICATES = (FB + "type.object.name", FB + "people.person.place_of_birth")


@st.composite
def nt_valid(draw, index: int, fmt: str) -> Record:
    ns, preds = (WD, RDF_PREDICATES) if fmt == "wikidata-rdf" else (FB, FREEBASE_PREDICATES)
    line, fact = draw(nt_triple(index, namespace=ns, predicates=preds))
    if fmt == "freebase" and draw(st.booleans()):
        line = line.replace(FB, "/")  # the prefix-stripped slices: </m.0abc>
    pad = draw(_WHITESPACE)
    return Record(f"{pad}{line}".encode(), "valid", "load", [fact], subject=fact[0])


@st.composite
def nt_mutated(draw, index: int, fmt: str) -> Record:
    valid = draw(nt_valid(index, fmt))
    raw = valid.raw
    kind = draw(st.sampled_from(["truncated", "bad-escape", "bad-unicode-escape", "invalid-utf8", "nul-iri",
                                 "nul-literal", "bad-lang", "huge", "iri-escape", "crlf", "no-dot", "literal-subject"]))
    s, p, o, literal, lang = valid.facts[0]
    if kind == "truncated":
        body = raw.strip().rstrip(b" \t.")
        return Record(body[:draw(st.integers(1, len(body)))], kind, "reject")
    if kind == "no-dot":
        return Record(raw.rstrip(b" \t."), kind, "reject")
    if kind == "literal-subject":
        return Record(b'"s" ' + raw.lstrip().split(b">", 1)[1] if raw.lstrip().startswith(b"<") else raw,
                      kind, "reject")
    if kind in ("bad-escape", "bad-unicode-escape", "invalid-utf8", "nul-literal"):
        insert = {"bad-escape": draw(st.sampled_from([b"\\q", b"\\x41", b"\\u12G4"])),
                  "bad-unicode-escape": draw(st.sampled_from([b"\\uD800", b"\\U00110000", b"\\uDFFF"])),
                  "invalid-utf8": draw(st.sampled_from(INVALID_UTF8)),
                  "nul-literal": b"a\x00b"}[kind]
        line = f'<{s}> <{p}> "@@"@en .'.encode().replace(b"@@", insert)
        if kind == "nul-literal":  # N-Triples forbids only ", \ and line breaks raw in a string
            return Record(line, kind, "load", [(s, p, "a\x00b", True, "en")])
        return Record(line, kind, "reject")
    if kind == "nul-iri":
        return Record(f"<{s}\x00> <{p}> <{s}> .".encode(), kind, "reject")
    if kind == "bad-lang":
        tag = draw(st.sampled_from(["e\x00n", "en-", "", "e n", "123456789"]))
        return Record(f'<{s}> <{p}> "v"@{tag} .'.encode(), kind, "reject")
    if kind == "huge":
        value = "h" * HUGE
        return Record(f'<{s}> <{p}> "{value}" .'.encode(), kind, "load", [(s, p, value, True, None)])
    if kind == "iri-escape":  # N-Triples allows \u escapes in IRIs: <http://x/\u0041> is <http://x/A>
        escaped = s[:-1] + f"\\u{ord(s[-1]):04X}"
        return Record(f"<{escaped}> <{p}> <{s}> .".encode(), kind, "load", [(s, p, s, False, None)])
    valid.kind, valid.ending = kind, b"\r\n"
    return valid


# -- whole files ---------------------------------------------------------------------------------
_VALID = {"tsv": tsv_valid, "wikidata-json": json_valid}
_MUTATED = {"tsv": tsv_mutated, "wikidata-json": json_mutated}


def _record(draw, fmt: str, index: int, mutate: bool) -> Record:
    if fmt in ("wikidata-rdf", "freebase"):
        return draw(nt_mutated(index, fmt) if mutate else nt_valid(index, fmt))
    return draw(_MUTATED[fmt](index) if mutate else _VALID[fmt](index))


@st.composite
def generated_file(draw, fmt: str, *, max_records: int = 25) -> GeneratedFile:
    """A file of valid and mutated records, the first one valid (so that the ingest does not
    stop at its first batch as "a file in another format"), maybe with a BOM, CRLF line
    endings and, for N-Triples, two valid statements on one line split by a lone CR."""
    n = draw(st.integers(1, max_records))
    records = [_record(draw, fmt, 0, False)]
    for i in range(1, n):
        records.append(_record(draw, fmt, i, draw(st.booleans())))
    for record in records:
        if draw(st.integers(0, 5)) == 0:
            record.ending = b"\r\n"
    # Two records on one line split by a lone CR: a line end only for N-Triples.
    if n >= 3 and draw(st.booleans()):
        i = draw(st.integers(1, n - 2))  # the first record stays valid on its own
        a, b = records[i], records[i + 1]
        if a.must == "load" and b.must == "load":
            joined = Record(a.raw + b"\r" + b.raw, "cr-joined", "reject", ending=b.ending)
            if fmt in ("wikidata-rdf", "freebase"):
                joined.must, joined.facts = "load", a.facts + b.facts
            records[i: i + 2] = [joined]
    framed = fmt == "wikidata-json" and draw(st.booleans())
    if framed:  # the dump's own framing: "[", one entity per line with a comma, "]"
        for record in records[:-1]:
            record.raw += b","
    return GeneratedFile(fmt, records, header=[b"["] if framed else [], footer=[b"]"] if framed else [],
                         bom=draw(st.booleans()))

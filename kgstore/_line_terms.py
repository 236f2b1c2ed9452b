"""Triples of a line-based answer (SPARQL TSV results, N-Triples) decoded by Arrow's
kernels, column by column, into :func:`kgstore._columns.triple_columns`' struct:
:func:`triple_columns_of_lines`.

Why: pyoxigraph parses an answer in Rust, but each triple then became Python objects and a
:class:`kgstore.Triple`: 1.8 s of the 2.8 s of CPU kgstore spent syncing 288,713 triples
from Oxigraph server, when the engine spent 1.6 s sending them. Here a block of lines
becomes three string columns (the first two tabs or spaces cut a line: IRIs and blank
node labels hold neither), and the object column is told apart by its first character.

Only the lines that need more than that go through pyoxigraph, one call for all of them,
and keep their place: a backslash anywhere (an escape), an object that is not an IRI, a
blank node or a quoted literal (TSV's bare numbers and booleans). So what comes out is
what pyoxigraph gives: language tags in lower case, no ``xsd:string`` datatype, rows with
a blank-node subject dropped, blank-node objects as skolem IRIs.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from ._columns import TRIPLE_TYPE, triple_columns
from ._sync_records import XSD_STRING, triples_of_quads, triples_of_solutions

TSV_HEADER = b"?s\t?p\t?o\n"
DECODE_BYTES = 1 << 20  # lines decoded at a time (about 8,000): a first page soon; a kernel call costs µs
_NO_STRING = pa.scalar(None, pa.string())


def column_pages(body, page_rows: int, bnode_prefix: str, *, ntriples: bool) -> Iterator[pa.StructArray]:
    """The triples of answer ``body`` (a file) in pages of ``page_rows`` (the last one
    shorter), decoded ``DECODE_BYTES`` of whole lines at a time; a TSV answer's header
    line is dropped."""
    header = not ntriples
    carry, held, rows = b"", [], 0
    while True:
        block = body.read(DECODE_BYTES)
        text = carry + block
        if header and b"\n" in text:
            text, header = text.split(b"\n", 1)[1], False
        cut = text.rfind(b"\n") + 1 if block else len(text)
        carry = text[cut:]
        if cut and not header:
            columns = triple_columns_of_lines(text[:cut], bnode_prefix, ntriples=ntriples)
            held.append(columns)
            rows += len(columns)
        while rows >= page_rows or (not block and rows):
            whole = pa.concat_arrays(held) if len(held) > 1 else held[0]
            yield whole.slice(0, page_rows)
            rest = whole.slice(page_rows)
            held, rows = ([rest], len(rest)) if len(rest) else ([], 0)
        if not block:
            return


def triple_columns_of_lines(text: bytes, bnode_prefix: str, *, ntriples: bool) -> pa.StructArray:
    """The triples of ``text``, whole lines of N-Triples (``ntriples``) or of SPARQL TSV
    results without their header line, in order."""
    lines = pc.split_pattern(pa.array([text], pa.large_binary()).cast(pa.large_string()), "\n")[0].values
    keep = pc.and_(pc.not_equal(lines, ""), pc.invert(pc.starts_with(lines, "#")))  # blank lines, comments
    lines = pc.filter(lines, pc.and_(keep, pc.invert(pc.starts_with(lines, "_:"))))  # blank-node subjects
    if not len(lines):
        return triple_columns([])
    # One separator for a whole answer (Oxigraph writes N-Triples with spaces, Virtuoso with
    # tabs): a plain split is a fraction of a split by a pattern. A line cut otherwise is slow.
    separator = "\t" if not ntriples or "\t" in lines[0].as_py() else " "
    whole = pc.invert(pc.match_substring(lines, "\\"))  # no escapes
    if ntriples:
        whole = pc.and_(whole, pc.ends_with(lines, " ."))
        lines = pc.utf8_slice_codeunits(lines, 0, -2)
    parts = pc.split_pattern(lines, separator, max_splits=2)
    whole = pc.and_(whole, pc.equal(pc.list_value_length(parts), 3))
    parts = pc.if_else(whole, parts, pa.scalar(["<>", "<>", "<>"], parts.type))
    s, p, o = (pc.cast(pc.list_element(parts, i), pa.string()) for i in range(3))
    if ntriples and separator == "\t":
        o = pc.utf8_rtrim(o, " \t")
    first = pc.utf8_slice_codeunits(o, 0, 1)
    iri, quoted, blank = pc.equal(first, "<"), pc.equal(first, '"'), pc.starts_with(o, "_:")
    # no escapes: a literal's text holds no quote, so quotes cut it in three: "", text, suffix
    pieces = pc.split_pattern(pc.if_else(quoted, o, '""'), '"')
    suffix = pc.list_element(pc.if_else(pc.equal(pc.list_value_length(pieces), 3), pieces,
                                        pa.scalar(["", "", "?"], pieces.type)), 2)
    tagged, typed = pc.starts_with(suffix, "@"), pc.starts_with(suffix, "^^<")
    literal_ok = pc.or_(pc.equal(suffix, ""), pc.or_(tagged, pc.and_(typed, pc.ends_with(suffix, ">"))))
    fast = pc.and_(whole, pc.and_(pc.starts_with(s, "<"), pc.starts_with(p, "<")))
    fast = pc.and_(fast, pc.or_(pc.or_(iri, blank), pc.and_(quoted, literal_ok)))
    rows = [pc.filter(x, fast) for x in (s, p, o, iri, quoted, pieces, suffix, tagged, typed)]
    columns = _decoded(*rows, bnode_prefix)
    slow_rows = np.flatnonzero(pc.invert(fast).to_numpy(zero_copy_only=False))
    if not len(slow_rows):
        return columns
    # the lines pyoxigraph reads, put back in their places
    text = "\n".join(pc.take(lines, slow_rows).to_pylist()).encode() + b"\n"
    if ntriples:
        exact = triples_of_quads(ox.parse((text.replace(b"\n", b" .\n")), format=ox.RdfFormat.N_TRIPLES),
                                 bnode_prefix)
    else:
        exact = triples_of_solutions(ox.parse_query_results(TSV_HEADER + text, format=ox.QueryResultsFormat.TSV),
                                     bnode_prefix)
    both = pa.concat_arrays([columns, triple_columns(list(exact))])
    fast_rows = np.flatnonzero(fast.to_numpy(zero_copy_only=False))
    order = np.argsort(np.concatenate([fast_rows, slow_rows]), kind="stable")
    return pc.take(both, pa.array(order))


def _decoded(s, p, o, iri, quoted, pieces, suffix, tagged, typed, bnode_prefix: str) -> pa.StructArray:
    value = pc.list_element(pieces, 1)
    lang = pc.if_else(tagged, pc.utf8_lower(pc.utf8_slice_codeunits(suffix, 1)), _NO_STRING)
    datatype = pc.if_else(typed, pc.utf8_slice_codeunits(suffix, 3, -1), _NO_STRING)
    datatype = pc.if_else(pc.equal(datatype, XSD_STRING), _NO_STRING, datatype)
    blank = pc.binary_join_element_wise(bnode_prefix, pc.utf8_slice_codeunits(o, 2), "")
    obj = pc.if_else(iri, _unbracketed(o), pc.if_else(quoted, value, blank))
    return pa.StructArray.from_arrays(
        [_unbracketed(s), _unbracketed(p), obj, quoted, pc.if_else(quoted, datatype, _NO_STRING),
         pc.if_else(quoted, lang, _NO_STRING)], fields=list(TRIPLE_TYPE))


def _unbracketed(iris: pa.Array) -> pa.Array:
    """``<iri>`` -> ``iri``"""
    return pc.utf8_slice_codeunits(iris, 1, -1)


__all__ = ["column_pages", "triple_columns_of_lines", "TSV_HEADER", "DECODE_BYTES"]

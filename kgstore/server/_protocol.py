"""The SPARQL 1.1 Protocol, read-only: where the query is in a request, and which format
the client accepts. Pure functions over the request's parts; the app does the I/O.

https://www.w3.org/TR/sparql11-protocol/#query-operation
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence
from urllib.parse import parse_qs

import pyoxigraph as ox

FORM = "application/x-www-form-urlencoded"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"

# What the server writes, first = default for */* or no Accept header.
RESULTS_FORMATS = (ox.QueryResultsFormat.JSON, ox.QueryResultsFormat.XML, ox.QueryResultsFormat.CSV,
                   ox.QueryResultsFormat.TSV)
RDF_FORMATS = (ox.RdfFormat.TURTLE, ox.RdfFormat.N_TRIPLES, ox.RdfFormat.RDF_XML, ox.RdfFormat.N3)


class ProtocolError(Exception):
    """A request the protocol answers with ``status`` and a plain-text ``message``."""

    def __init__(self, status: int, message: str):
        self.status = status
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class SparqlRequest:
    query: str
    default_graphs: tuple[str, ...] | None  # None: the store's default graph
    named_graphs: tuple[str, ...] | None  # None: every named graph


def parse_request(method: str, content_type: str | None, url_params: Mapping[str, Sequence[str]],
                  body: bytes) -> SparqlRequest:
    """The query and dataset of a protocol request (GET, POST form, POST sparql-query).

    ``url_params`` maps each URL parameter to all its values. Updates are refused with 403,
    as ``oxigraph serve`` does on a read-only store."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if method == "GET":
        params = dict(url_params)
    elif method == "POST" and media == FORM:
        params = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    elif method == "POST" and media == SPARQL_QUERY:
        params = {**url_params, "query": [body.decode("utf-8", errors="replace")]}
    elif method == "POST" and media == SPARQL_UPDATE:
        raise ProtocolError(403, "SPARQL updates are refused: this server is read-only")
    elif method == "POST":
        raise ProtocolError(415, f"unsupported Content-Type {media or '(none)'!r}; send {SPARQL_QUERY} "
                                 f"or {FORM} with a query= field")
    else:
        raise ProtocolError(405, f"{method} is not allowed on /sparql; use GET or POST")
    if "update" in params:
        raise ProtocolError(403, "SPARQL updates are refused: this server is read-only")
    queries = params.get("query") or []
    if len(queries) != 1 or not queries[0].strip():
        raise ProtocolError(400, "exactly one non-empty query parameter is required")
    return SparqlRequest(queries[0], _graphs(params, "default-graph-uri"), _graphs(params, "named-graph-uri"))


def _graphs(params: Mapping[str, Sequence[str]], name: str) -> tuple[str, ...] | None:
    values = params.get(name)
    return tuple(values) if values else None


def accepted(accept: str | None) -> list[str]:
    """Media types (or ranges) of an Accept header, most preferred first; q=0 dropped."""
    if not accept or not accept.strip():
        return ["*/*"]
    ranked = []
    for position, part in enumerate(accept.split(",")):
        media, *params = [p.strip() for p in part.split(";")]
        if not media:
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            ranked.append((-q, position, media.lower()))
    return [media for _, _, media in sorted(ranked)]


def choose_format(accept: str | None, kind: str) -> ox.QueryResultsFormat | ox.RdfFormat | None:
    """The format to write a result of ``kind`` (solutions/boolean/graph) in, or None (406).

    Media types are read by pyoxigraph (``from_media_type``), so its aliases count
    (``application/json``, ``text/plain``...)."""
    offered = RDF_FORMATS if kind == "graph" else RESULTS_FORMATS
    lookup = ox.RdfFormat.from_media_type if kind == "graph" else ox.QueryResultsFormat.from_media_type
    for media in accepted(accept):
        if media == "*/*":
            return offered[0]
        if media.endswith("/*"):
            for fmt in offered:
                if fmt.media_type.startswith(media[:-1]):
                    return fmt
            continue
        fmt = lookup(media)
        if fmt in offered:
            return fmt
    return None


def offered_media_types(kind: str) -> list[str]:
    return [f.media_type for f in (RDF_FORMATS if kind == "graph" else RESULTS_FORMATS)]


__all__ = ["ProtocolError", "SparqlRequest", "parse_request", "accepted", "choose_format", "offered_media_types",
           "RESULTS_FORMATS", "RDF_FORMATS"]

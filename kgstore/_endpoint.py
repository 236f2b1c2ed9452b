"""A store's triples in a SPARQL endpoint: :class:`EndpointTriples`, the read-only
implementation of :class:`kgstore._triples.TripleAccess` over HTTP.

The query's form (SELECT/ASK or CONSTRUCT/DESCRIBE) is read from its words, and says
which format to ask for; the endpoint parses it (a malformed query comes back as its own
error). The text sent declares the store's prefixes the query does not declare itself
(with dotted local names written as full IRIs), asks for at most ``max_rows`` + 1 rows when
the query has no LIMIT (the endpoint does less work, and one row more tells a cut result;
never more than the endpoint's own result cap, which Virtuoso enforces with an error), and
reads the store's graph (``[endpoint] graph``) unless the caller names graphs.

Answers are parsed by pyoxigraph (``parse_query_results``, ``parse``) into the same
objects a local query returns. Rows past ``max_rows`` are dropped, with a warning.
"""
from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Sequence

import pyoxigraph as ox

from ._endpoint_client import RESULTS_JSON, EndpointAuth, EndpointClient
from ._query_guard import keywords
from ._triple_access import QueryResult
from .config import StoreConfig
from .errors import EndpointQueryError, QueryError, ReadOnlyError

CREDENTIALS_NAME = "endpoint-credentials.json"
RDF_ACCEPT = "application/n-triples, text/turtle;q=0.9"
_DECLARED = re.compile(r"(?i)\bPREFIX\s+([A-Za-z][\w\-.]*)?\s*:")
log = logging.getLogger(__name__)


class EndpointTriples:
    """Read-only triples behind a SPARQL endpoint (see the module docstring)."""

    writable = False

    def __init__(self, client: EndpointClient, *, graph: str = "", max_rows: int = 1_000_000, result_cap: int = 0):
        self.client = client
        self.location = client.url
        self.graph = graph
        self.max_rows = max_rows
        # The endpoint's own cap (probed): Virtuoso refuses an ORDER BY with a LIMIT above
        # it ("Sorted TOP clause specifies more then N rows"), so the LIMIT sent stays at it.
        self.result_cap = result_cap

    @classmethod
    def from_config(cls, store_dir: Path, config: StoreConfig) -> "EndpointTriples":
        ep, caps = config.endpoint, config.endpoint_capabilities
        client = EndpointClient(ep.url, auth=read_credentials(store_dir, config), timeout_s=ep.timeout_s,
                                connect_timeout_s=ep.connect_timeout_s, retries=ep.retries, backoff_s=ep.backoff_s,
                                max_result_bytes=ep.max_result_bytes, connections=ep.connections,
                                timeout_param=caps.timeout_param)
        return cls(client, graph=ep.graph, max_rows=ep.max_rows, result_cap=caps.result_cap)

    # -- queries -------------------------------------------------------------------------
    def query(self, sparql: str, *, prefixes: dict[str, str], default_graph: Sequence[str] | None = None,
              named_graphs: Sequence[str] | None = None, timeout_s: float | None = None) -> QueryResult:
        form = _form(sparql)
        text = endpoint_text(sparql, prefixes)
        # After a final VALUES block a LIMIT does not parse: there only max_rows cuts.
        capped = not any(word == "LIMIT" for word, _ in keywords(sparql)) and not _ends_with_values(sparql)
        if capped and form != "ASK":
            limit = min(self.max_rows + 1, self.result_cap) if self.result_cap else self.max_rows + 1
            text = f"{text.rstrip()}\nLIMIT {limit}"
        if default_graph is None:
            default_graph = [self.graph] if self.graph else []
        answer = self.client.query(text, accept=RDF_ACCEPT if form == "GRAPH" else RESULTS_JSON,
                                   default_graphs=default_graph, named_graphs=named_graphs or (),
                                   timeout_s=timeout_s)
        if form == "GRAPH":
            return self._graph(answer)
        return self._results(answer.body)

    def _results(self, body: bytes) -> ox.QuerySolutions | ox.QueryBoolean:
        try:
            result = ox.parse_query_results(body, format=ox.QueryResultsFormat.JSON)
            if isinstance(result, ox.QueryBoolean):
                return result
            # A row takes 20 bytes or more of JSON: a smaller answer cannot hold too many.
            if len(body) < self.max_rows * 20:
                return result
            # Counting rows needs a pass over the document; json (in C) is cheaper than
            # pyoxigraph's terms, and the rows are cut only when there are too many.
            doc = json.loads(body)
            rows = doc.get("results", {}).get("bindings", [])
            if len(rows) > self.max_rows:
                log.warning("the endpoint returned more than %d rows; the rest were dropped ([endpoint] max_rows)",
                            self.max_rows)
                doc["results"]["bindings"] = rows[: self.max_rows]
                result = ox.parse_query_results(json.dumps(doc).encode(), format=ox.QueryResultsFormat.JSON)
            return result
        except (SyntaxError, ValueError) as exc:
            raise EndpointQueryError(self.client.url, 200, f"its answer is not SPARQL JSON results: {exc}") from None

    def _graph(self, answer) -> ox.QueryTriples:
        fmt = ox.RdfFormat.from_media_type(answer.media_type) or ox.RdfFormat.N_TRIPLES
        held = ox.Store()
        try:
            held.bulk_load(answer.body, fmt)
        except (SyntaxError, ValueError) as exc:
            raise EndpointQueryError(self.client.url, 200, f"its answer is not {fmt.name}: {exc}") from None
        # An in-memory store hands the triples back as the QueryTriples a local CONSTRUCT gives.
        limit = f" LIMIT {self.max_rows}" if len(held) > self.max_rows else ""
        return held.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }" + limit)

    def count(self) -> int:
        result = self.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", prefixes={})
        return int(next(iter(result))["n"].value)

    # -- never written -------------------------------------------------------------------
    def load_ntriples(self, data: bytes) -> None:
        raise self._read_only("add triples to")

    def update(self, sparql: str, *, prefixes: dict[str, str]) -> None:
        raise self._read_only("update")

    def _read_only(self, doing: str) -> ReadOnlyError:
        return ReadOnlyError(f"cannot {doing} a store whose triples live in the SPARQL endpoint at "
                             f"{self.client.url}: kgstore never writes to an endpoint (load the data with the "
                             "endpoint's own bulk loader, then run `kgstore sync`)")

    def close(self) -> None:
        self.client.close()


def endpoint_text(sparql: str, prefixes: dict[str, str]) -> str:
    """``sparql`` as sent: the store's prefixes that the query does not declare are
    declared, and prefixed names with dots written as full IRIs (Virtuoso refuses the
    escaped dots a local query gets)."""
    from ._prefixed_names import expand_prefixed_dots

    declared = {m.group(1) or "" for m in _DECLARED.finditer(sparql)}
    head = "".join(f"PREFIX {k}: <{v}>\n" for k, v in prefixes.items() if k not in declared)
    return head + expand_prefixed_dots(sparql, prefixes)


def read_credentials(store_dir: Path, config: StoreConfig) -> EndpointAuth:
    """The endpoint's credentials: the variables named in ``[endpoint]`` first, then the
    store's credentials file."""
    ep = config.endpoint
    saved: dict = {}
    path = Path(store_dir) / CREDENTIALS_NAME
    if path.is_file():
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            saved = {}
    token = os.environ.get(ep.token_env, "") or saved.get("token", "")
    password = os.environ.get(ep.password_env, "") or saved.get("password", "")
    return EndpointAuth(token=token, user=ep.user, password=password)


def save_credentials(store_dir: Path, *, token: str = "", password: str = "") -> None:
    """Keep the credentials given at init beside the config, readable by the owner only."""
    if not token and not password:
        return
    path = Path(store_dir) / CREDENTIALS_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({k: v for k, v in (("token", token), ("password", password)) if v}, f)


_QUERY_FORMS = {"SELECT": "SELECT", "ASK": "ASK", "CONSTRUCT": "GRAPH", "DESCRIBE": "GRAPH"}
_SKIPPED = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
                      r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\s]*>|#[^\n]*')


def _form(sparql: str) -> str:
    """SELECT, ASK or GRAPH (CONSTRUCT/DESCRIBE): the first query-form keyword. Read from
    the words, not by a parse: pyoxigraph has no parse without evaluation, and evaluating
    on an empty store is not free (a count over VALUES rows needs no data: 200**4 of them
    kept a core busy for 400 s). A malformed query is the endpoint's to refuse."""
    for word, _ in keywords(sparql):
        if word in _QUERY_FORMS:
            return _QUERY_FORMS[word]
    raise QueryError("SPARQL syntax error: no query form (SELECT, ASK, CONSTRUCT or DESCRIBE) in the query; "
                     "updates are never sent to an endpoint")


def _ends_with_values(sparql: str) -> bool:
    """Whether a VALUES block stands outside every brace (the query's trailing one, after
    which a LIMIT may not come)."""
    blanked = _SKIPPED.sub(lambda m: " " * len(m.group(0)), sparql)
    for word, offset in keywords(sparql):
        if word == "VALUES" and blanked.count("{", 0, offset) == blanked.count("}", 0, offset):
            return True
    return False


__all__ = ["EndpointTriples", "endpoint_text", "read_credentials", "save_credentials", "CREDENTIALS_NAME"]

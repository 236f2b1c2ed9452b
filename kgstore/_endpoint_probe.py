"""What a SPARQL endpoint supports and caps, found by asking it (``kgstore init
--endpoint``): :func:`probe_endpoint`. Dialects are told apart by capability, never by the
engine's name: each probe is a small query whose right answer is known without any data
(rows made with VALUES), so it runs the same on an empty endpoint and on Wikidata.

* ``count_distinct``: ``COUNT(DISTINCT ?x)`` over 1 2 2 3 gives 3.
* ``lang_filter``: ``LANGMATCHES(LANG(?l), "en")`` keeps "a"@en only.
* ``result_cap``: ask for 100,000 rows of a VALUES cross product; fewer back means the
  endpoint cuts results there (Virtuoso's ``ResultSetMaxRows``; it also says so in an
  ``X-SPARQL-MaxRows`` header).
* ``keyset_paging``: a subquery with ``FILTER(STR(?s) > "...")`` and ``ORDER BY STR(?s)``
  returns the next IRI in string order (`kgstore sync` pages this way; OFFSET otherwise).
* ``results_format``: the first of TSV and XML whose answer pyoxigraph reads back as the
  terms asked for (Virtuoso's TSV writes bare values, losing types and language tags),
  else JSON; `kgstore sync` reads pages in it (Virtuoso writes XML three times as fast as
  JSON, Oxigraph TSV half again as fast as JSON).
* ``construct_ntriples``: a CONSTRUCT of the same terms asked for as N-Triples reads back
  as those terms. A streamed sync from an endpoint whose TSV is not faithful reads its
  triples this way (Virtuoso spent 3.3 s of CPU writing 288,713 triples as N-Triples and
  6.7 s writing them as SPARQL XML results).
* ``timeout_param``: a count of 13 million VALUES rows sent with ``timeout=500`` (ms);
  an answer other than 12,960,000 (an error, or Virtuoso's incomplete rows flagged
  ``X-SQL-State: S1TAT``) means the endpoint honours the parameter. A whole count is asked
  again once (see ``_timeout_support``): the two cost an endpoint that ignores the
  parameter about two seconds of one core (Oxigraph server: 0.9 s each).
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pyoxigraph as ox

from ._endpoint_client import RESULTS_JSON, EndpointClient
from .config import EndpointCapabilities
from .errors import EndpointQueryError, EndpointTimeoutError

CAP_PROBE_ROWS = 100_000
TIMEOUT_PARAM = "timeout"  # Virtuoso's, in milliseconds; QLever takes "timeout" too (with a unit)
_TIMEOUT_PROBE_SIDE = 60  # 60**4 = 12,960,000 rows counted
_DEFAULT_PAGE_ROWS = EndpointCapabilities().page_rows


def probe_endpoint(client: EndpointClient, *, probe_timeout: bool = True) -> EndpointCapabilities:
    """Probe the endpoint behind ``client``; raises the client's errors when it cannot be
    reached or refuses the credentials (the first query is a plain ``ASK {}``)."""
    caps = EndpointCapabilities()
    first = client.query("ASK {}", accept=RESULTS_JSON)
    caps.server = first.headers.get("server", "")
    caps.count_distinct = _try(lambda: _values(client, "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE "
                                                       "{ VALUES ?x { 1 2 2 3 } }") == [("3",)])
    caps.lang_filter = _try(lambda: _values(client, 'SELECT ?l WHERE { VALUES ?l { "a"@en "b"@de "c" } '
                                                    'FILTER(LANGMATCHES(LANG(?l), "en")) }') == [("a",)])
    caps.keyset_paging = _try(lambda: _values(
        client, 'SELECT ?s WHERE { { SELECT DISTINCT ?s WHERE { VALUES ?s { <urn:kgstore:a> <urn:kgstore:c> '
                '<urn:kgstore:b> } FILTER(STR(?s) > "urn:kgstore:a") } ORDER BY STR(?s) LIMIT 1 } }')
        == [("urn:kgstore:b",)])
    caps.result_cap = _result_cap(client)
    caps.results_format = _results_format(client)
    caps.construct_ntriples = _construct_ntriples(client)
    if probe_timeout:
        caps = replace(caps, **_timeout_support(client))
    if caps.result_cap:
        caps.page_rows = max(1, min(_DEFAULT_PAGE_ROWS, caps.result_cap // 2))
    caps.probed_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return caps


def _values(client: EndpointClient, sparql: str, **kwargs) -> list[tuple[str | None, ...]]:
    answer = client.query(sparql, accept=RESULTS_JSON, **kwargs)
    result = ox.parse_query_results(answer.body, format=ox.QueryResultsFormat.JSON)
    return [tuple(None if t is None else t.value for t in row) for row in result]


def _try(check) -> bool:
    """A capability holds when its query answers right; an error means it does not."""
    try:
        return bool(check())
    except (EndpointQueryError, SyntaxError, ValueError):
        return False


def _result_cap(client: EndpointClient) -> int:
    side = " ".join(str(i) for i in range(100))
    answer = client.query(f"SELECT ?a ?b ?c WHERE {{ VALUES ?a {{ {side} }} VALUES ?b {{ {side} }} "
                          f"VALUES ?c {{ 0 1 2 3 4 5 6 7 8 9 }} }} LIMIT {CAP_PROBE_ROWS}", accept=RESULTS_JSON)
    header = answer.headers.get("x-sparql-maxrows", "").strip()
    rows = sum(1 for _ in ox.parse_query_results(answer.body, format=ox.QueryResultsFormat.JSON))
    if rows < CAP_PROBE_ROWS:
        return rows
    return int(header) if header.isdigit() else 0


N_TRIPLES = ox.RdfFormat.N_TRIPLES
RESULTS_FORMATS = {"tsv": ox.QueryResultsFormat.TSV, "xml": ox.QueryResultsFormat.XML,
                   "json": ox.QueryResultsFormat.JSON}


def _results_format(client: EndpointClient) -> str:
    sparql = ('SELECT ?x WHERE { VALUES ?x { "a b"@en <urn:kgstore:b> "1"^^<http://www.w3.org/2001/XMLSchema#integer> '
              '"c\\td" } }')
    expected = {ox.Literal("a b", language="en"), ox.NamedNode("urn:kgstore:b"),
                ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")), ox.Literal("c\td")}
    for name in ("tsv", "xml"):
        fmt = RESULTS_FORMATS[name]
        try:
            answer = client.query(sparql, accept=fmt.media_type)
            got = {row[0] for row in ox.parse_query_results(answer.body, format=fmt)}
        except (EndpointQueryError, SyntaxError, ValueError, OSError):
            continue
        if got == expected:
            return name
    return "json"


def _construct_ntriples(client: EndpointClient) -> bool:
    sparql = ('CONSTRUCT { <urn:kgstore:a> <urn:kgstore:p> ?x } WHERE { VALUES ?x { "a b"@en <urn:kgstore:b> '
              '"1"^^<http://www.w3.org/2001/XMLSchema#integer> "c\\td" "\u00e9 \\"q\\"" } }')
    expected = {ox.Literal("a b", language="en"), ox.NamedNode("urn:kgstore:b"),
                ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")), ox.Literal("c\td"),
                ox.Literal('\u00e9 "q"')}
    try:
        answer = client.query(sparql, accept=N_TRIPLES.media_type)
        return {q.object for q in ox.parse(answer.body, format=N_TRIPLES)} == expected
    except (EndpointQueryError, SyntaxError, ValueError, OSError):
        return False


def _timeout_support(client: EndpointClient) -> dict:
    """Asked twice where the first answer does not show the parameter honoured: an early stop
    is proof, but a whole count or an error may come from a busy machine (Virtuoso stops the
    count at its next check, about 2 s in, and once in CI answered otherwise). No answer
    within the limit is not asked again: a slow endpoint would cost the limit twice."""
    found, worth_asking_again = _timeout_probe(client)
    if not found["timeout_param"] and worth_asking_again:
        found, _ = _timeout_probe(client)
    return found


def _timeout_probe(client: EndpointClient) -> tuple[dict, bool]:
    side = " ".join(str(i) for i in range(_TIMEOUT_PROBE_SIDE))
    values = " ".join(f"VALUES ?{v} {{ {side} }}" for v in "abcd")
    sparql = f"SELECT (COUNT(*) AS ?n) WHERE {{ {values} }}"
    try:
        rows = _values(client, sparql, timeout_s=20.0, params={TIMEOUT_PARAM: "500"})
    except EndpointTimeoutError as exc:
        # Incomplete rows flagged by the endpoint: honoured. No answer in 20 s: not honoured,
        # and the client's own limit is all there is.
        return {"timeout_param": TIMEOUT_PARAM if exc.incomplete else "", "partial_on_timeout": exc.incomplete}, False
    except EndpointQueryError as exc:  # stopped with an error: honoured, unless it refused the parameter
        said = exc.endpoint_message.lower()
        return {"timeout_param": TIMEOUT_PARAM if "time" in said else ""}, True
    return {"timeout_param": TIMEOUT_PARAM if rows != [(str(_TIMEOUT_PROBE_SIDE ** 4),)] else ""}, True

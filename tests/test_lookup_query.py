"""Which queries the server may run where it receives them: one triple pattern whose every
triple read becomes a row, so its work stops at the write budget (kgstore._lookup_query)."""
from __future__ import annotations

import pytest

from kgstore._lookup_query import is_bounded_lookup


@pytest.mark.parametrize("query", [
    "SELECT ?p ?o WHERE { <http://example.org/s> ?p ?o }",
    "PREFIX ex: <http://example.org/> SELECT * { ex:s ?p ?o . } LIMIT 10",
    "SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o }",  # every variable selected: DISTINCT drops nothing
    'ASK { <http://example.org/s> <http://example.org/name> "zero"@en }',
    "SELECT ?s WHERE { ?s a ex:Film }",
    "select ?o where { wd:Q42 wdt:P31 ?o } # a comment",
    'SELECT ?s WHERE { ?s ex:age "41"^^xsd:integer }',
])
def test_one_pattern_lookups(query):
    assert is_bounded_lookup(query)


@pytest.mark.parametrize("query", [
    "SELECT DISTINCT ?p WHERE { ?s ?p ?o }",  # may read every triple to keep a few rows
    "SELECT ?x WHERE { ?x ?p ?x }",  # a repeated variable filters what it reads
    "SELECT ?s WHERE { ?s ?p ?o FILTER(?o > 1) }",
    "SELECT ?s WHERE { ?s ?p ?o . ?o ?q ?r }",
    "SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s",
    "SELECT ?s WHERE { ?s ?p ?o } OFFSET 5",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "SELECT ?s WHERE { ?s <http://example.org/p>/<http://example.org/q> ?o }",
    "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT ?z WHERE { ?s ?p ?o }",
    'SELECT ?s WHERE { "x" ?p ?s }',
    "INSERT DATA { <http://a> <http://b> <http://c> }",
    "SELECT ?s WHERE { SERVICE <http://x> { ?s ?p ?o } }",
    "SELECT ?s WHERE { ?s ?p ?o } VALUES ?s { <http://a> }",
    "",
])
def test_everything_else_goes_to_the_pool(query):
    assert not is_bounded_lookup(query)

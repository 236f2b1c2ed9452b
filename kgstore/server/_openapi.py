"""The OpenAPI 3.0 description of `kgstore serve`, answered on ``GET /openapi.json``.

Written out by hand rather than generated from docstrings: it has to state what the
handlers in ``_app`` check (each parameter's type and bounds, the /ask body) and every
status they answer, and ``tests/test_api_fuzz.py`` holds the server to it with
schemathesis. Bounds come from the constants the handlers use, so the two cannot drift.
"""
from __future__ import annotations

from typing import Any

from ._ask_queue import MAX_TICKET_CHARS
from ._ask_request import option_schema

# Bounds of the integer parameters (the handlers' ``_int_param`` calls use these).
K_MAX = 1000
ENTITY_LIMIT_DEFAULT, ENTITY_LIMIT_MAX = 200, 10_000
INCOMING_MAX = 10_000
# ``true``/``false``/``1``/``0``, any case: what ``_bool_param`` accepts.
BOOL_PATTERN = "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0)$"
# At least one character that is not white space: a blank ``q`` or question is a 400.
NOT_BLANK = r"\S"

RESULTS_MEDIA = ("application/sparql-results+json", "application/sparql-results+xml", "text/csv",
                 "text/tab-separated-values")
GRAPH_MEDIA = ("text/turtle", "application/n-triples", "application/rdf+xml", "text/n3")

_EXAMPLE_QUERY = "SELECT ?c ?name WHERE { wd:Q5456 wdt:P17 ?c . ?c rdfs:label ?name } ORDER BY ?name"


def openapi_document(*, kinds: tuple[str, ...], methods: dict[str, dict[str, Any]],
                     default_method: str) -> dict[str, Any]:
    """The document. ``kinds`` are the index kinds /search takes, ``methods`` the QA
    methods /ask takes with their options and defaults (``default_method`` when the body
    names none)."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "kgstore serve",
            "version": "1",
            "description": "A kgstore store over HTTP, read-only: the SPARQL 1.1 Protocol on /sparql and "
                           "JSON endpoints for search, entity linking, entity pages and question answering. "
                           "With `--token`, every operation but /health needs `Authorization: Bearer TOKEN`. "
                           "Past 64 open connections any request may be answered 503.",
        },
        "components": _components(kinds),
        "security": [{"bearer": []}],
        "paths": {
            "/sparql": _sparql_path("sparql", "SPARQL 1.1 Protocol query operation, read-only."),
            "/query": _sparql_path("query", "The same as /sparql (the path `oxigraph serve` uses)."),
            "/update": {
                "get": {
                    "summary": "Always refused: SPARQL updates are not run.",
                    "operationId": "update_get",
                    "responses": {"403": _json("SPARQL updates are refused", _ref("Error")), **_refusals()},
                },
                "post": {
                    "summary": "Apply changed entity documents (JSON lines, or an entity's Wikidata RDF): each "
                               "replaces its entity; the new data is served when done. Needs a server started "
                               "with --token and one worker. A SPARQL update is refused.",
                    "operationId": "update_post",
                    "parameters": [_query_param("format", {"type": "string", "enum": ["wikidata-json", "wikidata-rdf"],
                                                           "default": "wikidata-json"}, "what the body holds")],
                    "responses": {"200": _json("the update's summary", {"type": "object"}),
                                  "400": _error_ref(), "403": _json("refused", _ref("Error")),
                                  "409": _json("more than one worker process", _ref("Error")), "500": _error_ref(),
                                  **_store_statuses(), **_refusals(body=True)},
                },
            },
            "/search": {"get": {
                "summary": "The nearest index entries to a text.",
                "operationId": "search",
                "parameters": [
                    _query_param("q", {"type": "string", "pattern": NOT_BLANK}, "the text to search for",
                                 required=True, example="mountains in Nepal"),
                    _query_param("kind", {"type": "string", "enum": list(kinds), "default": "triples"},
                                 "which index to search"),
                    _query_param("k", {"type": "integer", "minimum": 1, "maximum": K_MAX, "default": 10},
                                 "how many results"),
                ],
                "responses": {"200": _json("the hits, nearest first",
                                           {"type": "array", "items": _ref("SearchHit")}),
                              "400": _error_ref(), **_index_statuses(), **_refusals()},
            }},
            "/link": {"get": {
                "summary": "Entity-linking candidates for a mention or a question.",
                "operationId": "link",
                "parameters": [
                    _query_param("q", {"type": "string", "pattern": NOT_BLANK},
                                 "a question, or text with [bracketed] mentions", required=True,
                                 example="which countries does the Andes cover"),
                    _query_param("k", {"type": "integer", "minimum": 1, "maximum": K_MAX, "default": 10},
                                 "how many candidates"),
                ],
                "responses": {"200": _json("the candidates, best first",
                                           {"type": "array", "items": _ref("Candidate")}),
                              "400": _error_ref(), **_index_statuses(), **_refusals()},
            }},
            "/entity/{ref}": {"get": {
                "summary": "An entity's label, description, aliases and facts.",
                "operationId": "entity",
                "parameters": [
                    {"name": "ref", "in": "path", "required": True, "example": "Q5456",
                     "description": "a short id (Q42), a prefixed name (wd:Q42) or an IRI",
                     "schema": {"type": "string", "minLength": 1}},
                    _query_param("limit", {"type": "integer", "minimum": 1, "maximum": ENTITY_LIMIT_MAX,
                                           "default": ENTITY_LIMIT_DEFAULT}, "facts at most"),
                    _query_param("incoming", {"type": "integer", "minimum": 0, "maximum": INCOMING_MAX,
                                              "default": 0},
                                 "add up to this many facts pointing at the entity (incoming_facts)"),
                    _query_param("qualifiers", {"type": "string", "pattern": BOOL_PATTERN, "default": "false"},
                                 "add each fact's qualifiers (true or false)"),
                ],
                "responses": {"200": _json("the entity", _ref("Entity")), "400": _error_ref(),
                              "404": _json("no such entity in this store", _ref("Error")),
                              "500": _error_ref(), **_refusals()},
            }},
            "/ask": {"post": {
                "summary": "An answer with its evidence, or a refusal. Questions queue for the one model.",
                "operationId": "ask",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": _ask_body(methods, default_method)}}},
                "responses": {"200": _json("the JSON of `kgstore ask --format json`, with the trace",
                                           _ref("Answer")),
                              "400": _json("a body that is not a JSON object of this shape, an unknown "
                                           "method or option", _ref("Error")),
                              "409": _json("the index is missing or was built with another encoder",
                                           _ref("Error")),
                              "500": _error_ref(),
                              "503": _json("the model is unavailable, or the store is closed or locked",
                                           _ref("Error")),
                              **_refusals(body=True, server_busy=False)},
            }},
            "/ask/methods": {"get": {
                "summary": "The QA methods /ask takes, and the default.",
                "operationId": "ask_methods",
                "responses": {"200": _json("the methods", _ref("AskMethods")), **_refusals()},
            }},
            "/ask/queue": {"get": {
                "summary": "Questions running and waiting; with ticket=, where that question stands.",
                "operationId": "ask_queue",
                "parameters": [_query_param("ticket", {"type": "string", "maxLength": MAX_TICKET_CHARS},
                                            "the ticket sent with a question")],
                "responses": {"200": _json("the queue", _ref("AskQueue")),
                              "400": _json("a ticket longer than any /ask takes", _ref("Error")), **_refusals()},
            }},
            "/prefixes": {"get": {
                "summary": "The prefixes every query of this store has predeclared.",
                "operationId": "prefixes",
                "responses": {"200": _json("prefix -> namespace IRI",
                                           {"type": "object", "additionalProperties": {"type": "string"}}),
                              **_refusals()},
            }},
            "/stats": {"get": {
                "summary": "The store's counts.",
                "operationId": "stats",
                "responses": {"200": _json("the counts", _ref("Stats")), "500": _error_ref(),
                              **_store_statuses(), **_refusals(server_busy=False)},
            }},
            "/health": {"get": {
                "summary": "Liveness; needs no token and reads no store data.",
                "operationId": "health",
                "security": [],
                "responses": {"200": _json("the server is up", _ref("Health")), "503": _busy()},
            }},
            "/reload": {"post": {
                "summary": "Reopen the store to serve the data written since the start.",
                "operationId": "reload",
                "responses": {"200": _json("the new snapshot", _ref("Reload")), "500": _error_ref(),
                              **_store_statuses(), **_refusals(body=True, server_busy=False)},
            }},
            "/": _page("The web page (SPARQL editor, search, entity pages, Ask)."),
            "/ui": _page("The same page."),
            "/ui/{rest}": {**_page("The same page; its script reads the path (/ui/entity/Q42, /ui/ask...)."),
                           "parameters": [{"name": "rest", "in": "path", "required": True,
                                           "schema": {"type": "string"}}]},
            "/static/{file}": {"get": {
                "summary": "The page's scripts, styles and vendored libraries; need no token.",
                "operationId": "static",
                "security": [],
                "parameters": [{"name": "file", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the file", "content": {"*/*": {"schema": {}}}},
                              "404": _text("no such file"), "503": _busy()},
            }},
            "/openapi.json": {"get": {
                "summary": "This document.",
                "operationId": "openapi",
                "responses": {"200": _json("the OpenAPI 3.0 description of this server", {"type": "object"}),
                              **_refusals()},
            }},
        },
    }


# -- pieces -----------------------------------------------------------------------------------------
def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(description: str, schema: dict) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _text(description: str) -> dict:
    return {"description": description, "content": {"text/plain": {"schema": {"type": "string"}}}}


def _error_ref() -> dict:
    return {"$ref": "#/components/responses/Error"}


def _busy() -> dict:
    return {"$ref": "#/components/responses/Busy"}


def _refusals(*, body: bool = False, server_busy: bool = True) -> dict:
    """What any protected operation may answer: 401 without the token, 413 for a body over
    --max-body, 503 past uvicorn's connection limit (where the operation's own 503 is
    JSON, its entry replaces this one)."""
    out = {"401": {"$ref": "#/components/responses/Unauthorized"}}
    if body:
        out["413"] = {"$ref": "#/components/responses/TooLarge"}
    if server_busy:
        out["503"] = _busy()
    return out


def _index_statuses() -> dict:
    return {"409": _json("the index is missing or was built with another encoder (run `kgstore index`)",
                         _ref("Error")),
            "500": _error_ref(),
            "503": _json("the store is closed or locked", _ref("Error"))}


def _store_statuses() -> dict:
    return {"503": _json("the store is closed or locked", _ref("Error"))}


def _query_param(name: str, schema: dict, description: str, *, required: bool = False,
                 example: Any = None) -> dict:
    param = {"name": name, "in": "query", "required": required, "description": description, "schema": schema}
    if example is not None:
        param["example"] = example
    return param


def _page(summary: str) -> dict:
    html = {"description": "the page (the same HTML on every page path)",
            "content": {"text/html": {"schema": {"type": "string"}}}}
    return {"get": {"summary": summary + " Needs no token, holds no data.", "security": [],
                    "responses": {"200": html, "503": _busy()}}}


def _sparql_path(name: str, summary: str) -> dict:
    graphs = [
        {"name": name, "in": "query", "required": False, "style": "form", "explode": True,
         "description": description, "schema": {"type": "array", "items": {"type": "string"}}}
        for name, description in (("default-graph-uri", "the default graph of the dataset (repeatable)"),
                                  ("named-graph-uri", "a named graph of the dataset (repeatable)"))
    ]
    ok = {"description": "the result, in the format the Accept header asks for (SELECT/ASK: SPARQL results, "
                         "JSON by default; CONSTRUCT/DESCRIBE: RDF, Turtle by default)",
          "headers": {"X-Kgstore-Truncated": {"description": "`true` when rows past --max-rows were cut",
                                              "schema": {"type": "string", "enum": ["true"]}},
                      "X-Kgstore-Max-Rows": {"description": "the row cap, sent with X-Kgstore-Truncated",
                                             "schema": {"type": "integer", "minimum": 1}},
                      "Vary": {"schema": {"type": "string"}}},
          "content": {"application/sparql-results+json": {"schema": {"type": "object"}},
                      **{media: {"schema": {"type": "string"}} for media in RESULTS_MEDIA[1:] + GRAPH_MEDIA}}}
    errors = {"400": _text("a malformed query, or not exactly one non-empty query"),
              "403": _text("an update, SERVICE or LOAD: the server is read-only and reaches no network"),
              "406": _text("none of the accepted media types can be written for this query"),
              "503": _text("the query ran past the time limit (or the server is at its connection limit)"),
              "401": {"$ref": "#/components/responses/Unauthorized"}}
    query = _query_param("query", {"type": "string", "pattern": NOT_BLANK}, "the SPARQL query", required=True,
                         example=_EXAMPLE_QUERY)
    return {
        "get": {"summary": summary, "operationId": f"{name}_get", "parameters": [query, *graphs],
                "responses": {"200": ok, **errors}},
        "post": {"summary": summary + " The query is a form field or the whole body.", "operationId": f"{name}_post",
                 "parameters": graphs,
                 "requestBody": {"required": True, "content": {
                     "application/x-www-form-urlencoded": {"schema": {
                         "type": "object", "required": ["query"],
                         "properties": {"query": {"type": "string", "pattern": NOT_BLANK},
                                        "default-graph-uri": {"type": "array", "items": {"type": "string"}},
                                        "named-graph-uri": {"type": "array", "items": {"type": "string"}}}}},
                     "application/sparql-query": {"schema": {"type": "string", "pattern": NOT_BLANK},
                                                  "example": _EXAMPLE_QUERY}}},
                 "responses": {"200": ok, **errors,
                               "413": {"$ref": "#/components/responses/TooLarge"},
                               "415": _text("a Content-Type other than the two above")}},
    }


def _ask_body(methods: dict[str, dict[str, Any]], default_method: str) -> dict:
    options: dict[str, dict] = {}
    for defaults in methods.values():
        for name, default in defaults.items():
            schema = options.setdefault(name, option_schema(name, default))
            # One schema per name across methods: the widest ceiling (each method checks its own).
            ceiling = option_schema(name, default).get("maximum")
            if ceiling is not None and "maximum" in schema:
                schema["maximum"] = max(schema["maximum"], ceiling)
    return {
        "type": "object", "required": ["question"],
        "properties": {
            "question": {"type": "string", "pattern": NOT_BLANK, "example": "Which countries does the Andes cover?"},
            "method": {"type": "string", "enum": list(methods), "default": default_method},
            "allow_parametric": {"type": "boolean", "default": False,
                                 "description": "let the method fall back to the model's own knowledge"},
            "options": {"type": "object", "default": {}, "nullable": True, "properties": options,
                        "additionalProperties": False,
                        "description": "method options, as -o KEY=VALUE on `kgstore ask` (each method takes "
                                       "some of these; an option the chosen method does not take, or a value "
                                       "of another type than its default's, is a 400)"},
            "ticket": {"type": "string", "maxLength": MAX_TICKET_CHARS, "nullable": True,
                       "description": "any string; GET /ask/queue?ticket= says where the question stands"},
        },
    }


def _components(kinds: tuple[str, ...]) -> dict:
    string, integer, number, boolean = ({"type": t} for t in ("string", "integer", "number", "boolean"))
    nullable_string = {"type": "string", "nullable": True}
    count = {"type": "integer", "minimum": 0}
    fact = {"type": "object", "required": ["relation", "relation_id", "value", "value_iri"],
            "properties": {"relation": string, "relation_id": string, "value": string, "value_iri": nullable_string,
                           "datatype": {"type": "string", "nullable": True,
                                        "description": "a literal value's datatype IRI (its value is the "
                                                       "lexical form: 1952-03-11T00:00:00Z); null for an "
                                                       "entity"}}}
    return {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                       "description": "only when the server was started with --token"}},
        "responses": {
            "Error": _json("a kgstore error, as a sentence and the error class", _ref("Error")),
            "Unauthorized": {**_text("a token is set and the request lacks `Authorization: Bearer TOKEN`"),
                             "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}}},
            "TooLarge": _text("the request body is over --max-body"),
            "Busy": _text("the server is at its limit of open connections"),
        },
        "schemas": {
            "Error": {"type": "object", "required": ["error", "type"],
                      "properties": {"error": string, "type": string}},
            "SearchHit": {"type": "object", "required": ["kind", "iri", "label", "score", "text", "extra"],
                          "properties": {"kind": {"type": "string", "enum": list(kinds)}, "iri": string,
                                         "label": nullable_string, "score": number, "text": string,
                                         "extra": {"type": "object"}}},
            "Candidate": {"type": "object",
                          "required": ["iri", "label", "score", "mention", "match", "popularity", "description",
                                       "similarity", "span"],
                          "properties": {"iri": string, "label": nullable_string, "score": number, "mention": string,
                                         "match": {"type": "string", "enum": ["exact", "label", "alias", "vector"]},
                                         "popularity": integer, "description": nullable_string,
                                         "similarity": {"type": "number", "nullable": True},
                                         "span": {"type": "array", "items": integer, "minItems": 2, "maxItems": 2,
                                                  "nullable": True}}},
            "Entity": {"type": "object",
                       "required": ["iri", "id", "label", "description", "aliases", "popularity", "is_mediator",
                                    "incoming", "facts"],
                       "properties": {
                           "iri": string, "id": nullable_string, "label": nullable_string,
                           "description": nullable_string, "aliases": {"type": "array", "items": string},
                           "popularity": integer, "is_mediator": boolean, "incoming": count,
                           "facts": {"type": "array", "items": {**fact, "properties": {
                               **fact["properties"],
                               "qualifiers": {"type": "array", "items": {
                                   "type": "object", "required": ["relation", "relation_id", "value", "value_iri"],
                                   "properties": fact["properties"]}}}}},
                           "incoming_facts": {"type": "array", "items": {
                               "type": "object", "required": ["subject", "subject_iri", "relation", "relation_iri"],
                               "properties": {"subject": string, "subject_iri": string, "relation": string,
                                              "relation_iri": string}}},
                       }},
            "Answer": {"type": "object",
                       "required": ["question", "method", "answers", "answer_iris", "refused", "refusal",
                                    "parametric", "query", "evidence", "seconds", "tokens"],
                       "properties": {
                           "question": string, "method": string, "answers": {"type": "array", "items": string},
                           "answer_iris": {"type": "array", "items": nullable_string}, "refused": boolean,
                           "refusal": {"type": "object", "nullable": True, "required": ["reason", "message"],
                                       "properties": {"reason": string, "message": string}},
                           "parametric": boolean, "query": nullable_string,
                           "evidence": {"type": "array", "items": {"type": "object"}},
                           "values": {"type": "array", "description": "aligned with answers: a literal answer's "
                                      "typed value (value as printed, lexical form, datatype, kind, unit), null "
                                      "for an entity", "items": {"type": "object", "nullable": True}},
                           "shape": {"type": "string", "nullable": True,
                                     "enum": ["count", "boolean", "comparison", "superlative", "qualifier", None]},
                           "meant": {"type": "array", "description": "the entities the question was read as "
                                     "naming: mention, iri, label, description (and namesakes passed over)",
                                     "items": {"type": "object"}},
                           "constraints": {"type": "array", "description": "each constraint the question "
                                           "writes (\"before 1980\", \"comedies\"): applied along a relation, "
                                           "or not applied and why", "items": {"type": "object"}},
                           "text": {"type": "string", "description": "an open answer (\"Tell me about X\"): "
                                    "the paragraph, each sentence followed by the numbers of the facts it cites"},
                           "sentences": {"type": "array", "description": "an open answer's sentences: text, "
                                         "facts (the numbers cited), status", "items": {"type": "object"}},
                           "facts": {"type": "array", "description": "the facts an open answer cites: n, subject, "
                                     "relation, values, source, evidence (and store, stores from several)",
                                     "items": {"type": "object"}},
                           "answer_stores": {"type": "array", "description": "from several stores (serve "
                                             "STORE1 STORE2): aligned with answers, the stores that gave each",
                                             "items": {"type": "array", "items": string}},
                           "by_store": {"type": "array", "description": "from several stores: what each store "
                                        "gave", "items": {"type": "object"}},
                           "seconds": {"type": "number", "minimum": 0},
                           "tokens": {"type": "object", "required": ["prompt", "completion", "total", "calls"],
                                      "properties": {k: count for k in ("prompt", "completion", "total", "calls")}},
                           "trace": {"type": "object"},
                       }},
            "AskMethods": {"type": "object", "required": ["default", "methods"],
                           "properties": {"default": string, "methods": {"type": "array", "items": {
                               "type": "object", "required": ["name", "description"],
                               "properties": {"name": string, "description": string}}}}},
            "AskQueue": {"type": "object", "required": ["running", "waiting", "running_s"],
                         "properties": {"running": {"type": "integer", "minimum": 0, "maximum": 1}, "waiting": count,
                                        "running_s": {"type": "number", "nullable": True, "minimum": 0},
                                        "state": {"type": "string", "enum": ["waiting", "running", "unknown"]},
                                        "ahead": {"type": "integer", "minimum": 0, "nullable": True}}},
            "Stats": {"type": "object",
                      "required": ["triples", "statements", "entities", "entities_labelled", "mediators", "relations",
                                   "ingest_runs", "rejected_lines", "snapshot"],
                      "properties": {k: count for k in ("triples", "statements", "entities", "entities_labelled",
                                                        "mediators", "relations", "ingest_runs", "rejected_lines",
                                                        "snapshot")}},
            "Health": {"type": "object", "required": ["status", "store", "snapshot", "timeout_s", "max_rows"],
                       "properties": {"status": {"type": "string", "enum": ["ok"]}, "store": string,
                                      "snapshot": count, "timeout_s": {"type": "number", "minimum": 0},
                                      "max_rows": {"type": "integer", "minimum": 1}}},
            "Reload": {"type": "object", "required": ["status", "snapshot", "triples"],
                       "properties": {"status": {"type": "string", "enum": ["reloaded"]}, "snapshot": count,
                                      "triples": count}},
        },
    }

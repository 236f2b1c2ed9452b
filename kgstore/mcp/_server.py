"""The MCP server of one store (the SDK's ``MCPServer``): six tools, two resources.

Each tool has a typed JSON schema, so the SDK rejects a bad argument (wrong type,
missing, out of range) before anything runs, as a tool error. A store error comes back
as a tool error (``isError``) whose text is the sentence the CLI prints; the server
keeps serving either way. Blocking work runs in worker threads: SPARQL on the query
pool with the store's time limit and row cap, catalog and index lookups one at a time,
``ask`` one question at a time on the one model (see ``kgstore.server._state``, whose
state this server shares with `kgstore serve`).
"""
# No `from __future__ import annotations`: the SDK reads the tools' annotations at runtime.
import json
import os
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .._bounded_query import run_bounded_async
from ..errors import KgstoreError
from ..server._openapi import ENTITY_LIMIT_MAX, INCOMING_MAX, K_MAX
from ..server._state import ServeOptions, ServerState
from ._ask import ask_question
from ._citations import citations, open_answer_text
from ._lookups import entity_page, link_candidates, search_hits, sparql_document, store_stats
from ._model import WarmModel
from ._schema import relation_list

DEFAULT_SPARQL_ROWS = 100  # rows a sparql call returns unless it asks for more (up to the row cap)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Kind = Literal["entities", "relations", "triples", "statements", "uris"]
Text = Annotated[str, Field(min_length=1, max_length=2000)]


@dataclass
class McpOptions:
    """Settings of one MCP server. ``timeout_s``/``max_rows`` of None take ``[sparql]``
    from the store's kgstore.toml, as `kgstore serve` does."""

    timeout_s: float | None = None
    max_rows: int | None = None
    query_workers: int = 4
    log_level: str = "WARNING"
    ask_stores: tuple[str, ...] = ()  # more stores ``ask`` answers from (each fact marked with its store)


class StoreServer:
    """The MCP server of the store at ``store_path`` (``.server``, the SDK's ``MCPServer``)
    and the state it serves from: the store opened read-only, the query pool, the index
    and the one model. ``llm`` replaces the store's configured model for ``ask`` (tests
    pass a ``qa.ScriptedLLM``); either loads on the first question. ``close()`` when done."""

    def __init__(self, store_path: str | os.PathLike, options: McpOptions | None = None, *, llm=None):
        from qa.llm import llm_from_config

        options = options or McpOptions()
        self.model = WarmModel(lambda: llm if llm is not None else llm_from_config(self.config.llm))
        self.state = ServerState(store_path, ServeOptions(timeout_s=options.timeout_s, max_rows=options.max_rows,
                                                          query_workers=options.query_workers,
                                                          ask_stores=tuple(options.ask_stores)), llm=self.model)
        self.config = self.state.snapshot.lookup.config
        self.server = _build(self.state, self.model, options.log_level)

    def close(self) -> None:
        self.state.close()


def _build(state: ServerState, model: WarmModel, log_level: str) -> MCPServer:
    from qa.methods import DEFAULT_METHOD, method_names

    prefixes = state.snapshot.lookup.config.prefixes
    server = MCPServer("kgstore", instructions=_instructions(state, prefixes), log_level=log_level)

    async def lookup(work):
        """``work(state, snapshot)`` in a thread, one catalog user at a time."""
        snapshot = state.snapshot

        def locked():
            with state.lookup_lock:
                return work(state, snapshot)

        return await anyio.to_thread.run_sync(locked)

    @server.tool(annotations=READ_ONLY, description=(
            "Run a read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) on the store, with its prefixes "
            f"predeclared ({', '.join(f'{p}:' for p in prefixes)}); updates and SERVICE are refused, and rows are "
            "capped (truncated: true says more existed)."))
    async def sparql(
            query: Annotated[str, Field(min_length=1, max_length=100_000, description=(
                "The SPARQL query, e.g. SELECT ?c ?name WHERE { wd:Q5456 wdt:P17 ?c . ?c rdfs:label ?name }"))],
            limit: Annotated[int | None, Field(ge=1, description=(
                f"Most rows to return (default {DEFAULT_SPARQL_ROWS}; never more than the server's row cap, "
                f"{state.max_rows})."))] = None,
    ) -> CallToolResult:
        rows = min(limit or DEFAULT_SPARQL_ROWS, state.max_rows)
        try:
            result = await run_bounded_async(state.snapshot.lookup, query, timeout_s=state.timeout_s,
                                             max_rows=rows, pool=state.pool)
        except KgstoreError as exc:
            return _error(exc)
        return _result(sparql_document(result, prefixes))

    @server.tool(annotations=READ_ONLY, description=(
            "Search the store by meaning: kind=entities (things, by name and description), relations (properties), "
            "triples (facts as 'subject | relation | object'), statements or uris; the k nearest, best first, "
            "with their cosine score."))
    async def search(
            text: Annotated[Text, Field(description="What to look for, in words, e.g. 'mountains in Nepal'.")],
            kind: Annotated[Kind, Field(description="Which index to search.")] = "entities",
            k: Annotated[int, Field(ge=1, le=K_MAX, description="How many hits to return.")] = 10,
    ) -> CallToolResult:
        if not text.strip():
            return _error("text (the words to search for) is required")
        try:
            hits = await lookup(lambda st, snap: search_hits(st.index(snap), kind, text, k))
        except KgstoreError as exc:
            return _error(exc)
        return _result({"kind": kind, "hits": hits})

    @server.tool(annotations=READ_ONLY, description=(
            "Entity linking: the entities a name or a whole question refers to, best first, with label, "
            "description, id (use it in sparql or entity, e.g. wd:Q5456) and score in [0, 1]."))
    async def link(
            mention_or_question: Annotated[Text, Field(description=(
                "A name ('Andes'), a question ('Which countries does the Andes cover?'), or a question with "
                "the mention in brackets ('which countries does [Andes] cover').")) ],
            k: Annotated[int, Field(ge=1, le=K_MAX, description="How many candidates to return.")] = 5,
    ) -> CallToolResult:
        if not mention_or_question.strip():
            return _error("mention_or_question (a name or a question) is required")
        try:
            found = await lookup(lambda st, snap: link_candidates(st.index(snap), mention_or_question, k, prefixes))
        except KgstoreError as exc:
            return _error(exc)
        return _result({"candidates": found})

    @server.tool(annotations=READ_ONLY, description=(
            "One entity by id (Q5456, wd:Q5456 or its full IRI): label, description, aliases, its facts "
            "(relation and value) and the facts that point at it, capped by limit and incoming."))
    async def entity(
            id: Annotated[Text, Field(description=(
                "The entity: a short id (Q5456), a prefixed name (wd:Q5456) or an IRI."))],
            limit: Annotated[int, Field(ge=1, le=ENTITY_LIMIT_MAX, description=(
                "Most facts of the entity to show."))] = 50,
            incoming: Annotated[int, Field(ge=0, le=INCOMING_MAX, description=(
                "Most facts pointing at the entity to show (0 for none)."))] = 20,
    ) -> CallToolResult:
        try:
            page = await lookup(lambda st, snap: entity_page(snap.lookup, id, limit=limit, incoming=incoming))
        except KgstoreError as exc:
            return _error(exc)
        if page is None:
            return _error(f"no entity {id!r} in {state.path}")
        return _result(page)

    @server.tool(annotations=READ_ONLY, description=(
            "The store's schema: the relations that have facts, most used first, each with label, id, prefixed "
            "name (use it in sparql, e.g. wdt:P17) and fact count; words keeps those whose label, id or "
            "description holds every word."))
    async def relations(
            words: Annotated[str | None, Field(max_length=200, description=(
                "Words the relation's label, id or description must hold, e.g. 'country' (omit for all)."))] = None,
            limit: Annotated[int, Field(ge=1, le=10_000, description="Most relations to return.")] = 50,
    ) -> CallToolResult:
        try:
            found = await lookup(lambda st, snap: relation_list(snap.lookup, words, limit=limit))
        except KgstoreError as exc:
            return _error(exc)
        return _result(found)

    methods = method_names()

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
                 description=(
            "Answer a question in plain language from the store with the local model (seconds to a minute; "
            "progress is reported): the answers, or a refusal with its reason when the store does not hold "
            "them, plus the executed query, the evidence facts and the entities meant. An open question "
            "('Tell me about X') gets a paragraph written from store facts, each sentence citing its facts: "
            "the text, then structured citations (the facts, the sentences citing each, their store triples)."))
    async def ask(
            question: Annotated[Text, Field(description="The question, e.g. 'Which countries does the Andes cover?'")],
            ctx: Context,
            method: Annotated[Literal[tuple(methods)] | None, Field(description=(  # type: ignore[valid-type]
                f"The QA method (default {DEFAULT_METHOD}, which suits most questions)."))] = None,
    ) -> CallToolResult:
        name = method or DEFAULT_METHOD
        if not question.strip():
            return _error("question (a question in words) is required")
        step = 0

        async def report(message: str) -> None:
            nonlocal step
            step += 1
            await ctx.report_progress(step, None, message)

        try:
            doc = await ask_question(state, model, question, name, report)
        except KgstoreError as exc:
            return _error(exc)
        if doc.get("text") is not None:  # an open answer: the paragraph to quote, and its citations
            return _open_result(doc)
        return _result(doc)

    @server.resource("kgstore://entity/{id}", name="entity", mime_type="application/json",
                     description="An entity page: label, description, aliases, facts out and in (as the entity tool).")
    async def entity_resource(id: str) -> str:
        page = await lookup(lambda st, snap: entity_page(snap.lookup, id, limit=200, incoming=50))
        if page is None:
            raise ResourceNotFoundError(f"no entity {id!r} in {state.path}")
        return _json(page)

    @server.resource("kgstore://stats", name="stats", mime_type="application/json",
                     description="The store's counts: triples, facts, entities, relations, ingest runs.")
    async def stats_resource() -> str:
        return _json(await lookup(lambda st, snap: store_stats(snap.lookup, state.path)))

    return server


def _instructions(state: ServerState, prefixes: dict[str, str]) -> str:
    return (f"A kgstore knowledge graph ({state.path}). To answer from it: link names to ids, look up the "
            "relations, then query with sparql (prefixes predeclared: "
            f"{', '.join(f'{p}:' for p in prefixes)}); or let ask answer with the local model. Answers rest "
            "on the store's facts; when the store lacks them, ask refuses rather than guess."
            + (f" ask also reads {', '.join(state.store_names[1:])} and marks each fact with its store; the other "
               "tools read the first store." if state.ask_paths else ""))


def _json(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, default=str)


def _result(doc: dict[str, Any]) -> CallToolResult:
    """The document as JSON text (what every client shows) and as structured content."""
    text = _json(doc)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=json.loads(text))


def _open_result(doc: dict[str, Any]) -> CallToolResult:
    """An open answer: first the paragraph with the facts it cites, as text an agent quotes;
    then the whole answer as JSON; as structured content, the answer with ``citations``."""
    cited = citations(doc)
    structured = json.loads(_json({**doc, "citations": cited}))
    return CallToolResult(content=[TextContent(type="text", text=open_answer_text(doc, cited)),
                                   TextContent(type="text", text=_json(structured))],
                          structured_content=structured)


def _error(error: Exception | str) -> CallToolResult:
    """A tool error whose text is the sentence the CLI prints for it."""
    return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)

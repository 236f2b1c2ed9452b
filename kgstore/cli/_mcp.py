"""`kgstore mcp`: the store as an MCP server for agents (stdio, or streamable HTTP)."""
from __future__ import annotations

import click
from click.core import ParameterSource

from ._common import STORE_ARG, other_stores, warn_if_exposed


@click.command("mcp")
@STORE_ARG
@click.argument("ask_stores", nargs=-1, type=click.Path(file_okay=False, path_type=str), metavar="[STORE...]")
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --http: the address to bind. Anything but loopback exposes the store to the network: "
                   "add --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=7879, show_default=True, help="With --http: the port.")
@click.option("--token", envvar="KGSTORE_TOKEN", default=None,
              help="With --http: require 'Authorization: Bearer TOKEN' on every request (401 otherwise). "
                   "Or set KGSTORE_TOKEN.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.001), default=None,
              help="Seconds a SPARQL query may run (default: [sparql] timeout_s in kgstore.toml, 30).")
@click.option("--max-rows", type=click.IntRange(1), default=None,
              help="Rows a SPARQL result keeps at most (default: [sparql] max_rows, 10000).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              default="warning", show_default=True, help="What the server logs on stderr.")
@click.pass_context
def mcp_cmd(ctx, store, ask_stores, http, host, port, token, timeout_s, max_rows, log_level):
    """Serve STORE to AI agents over the Model Context Protocol, read-only; ask also
    answers from the other STOREs given, marking each fact with its store.

    An MCP client (Claude Desktop, Cursor, an agent built on an MCP SDK) starts this
    command and talks to it over stdin/stdout; --http serves streamable HTTP instead,
    for clients that connect to a URL.

    \b
    Tools:
      sparql(query, limit?)        a read-only SPARQL query, the store's prefixes predeclared
      search(text, kind, k)        the semantic index: entities, relations, triples, statements, uris
      link(mention_or_question, k) the entities a name or a question refers to, with ids and scores
      entity(id)                   label, description, aliases, facts out and in
      relations(words?, limit)     the schema: relations with id and fact count
      ask(question, method?)       an answer from the local model with its query and evidence,
                                   or a refusal; the model loads on the first question; an
                                   open question gets a paragraph and its citations
    Resources: kgstore://entity/{id} (an entity page) and kgstore://stats.

    \b
    Claude Desktop (claude_desktop_config.json) or Cursor (.cursor/mcp.json):
      {"mcpServers": {"kgstore": {"command": "kgstore",
                                  "args": ["mcp", "/path/to/store"]}}}
    (give "command" the full path of kgstore when it is in a virtual environment)

    \b
    Examples:
      kgstore mcp ./mystore                             # stdio, as a client spawns it
      kgstore mcp ./mystore --http                      # http://127.0.0.1:7879/mcp
      kgstore mcp ./mystore --http --port 8123 --token s3cret
      KGSTORE_TOKEN=s3cret kgstore mcp ./mystore --http --host 0.0.0.0
      kgstore mcp ./wikidata ./freebase                 # ask reads both stores

    Updates, LOAD and SERVICE are refused. Needs `kgstore index STORE` for search, link
    and ask, and the mcp extra: pip install 'kgstore[mcp]'.
    """
    for name in ("host", "port", "token"):
        if not http and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            raise click.UsageError(f"--{name} applies to --http only; over stdio the client that starts the "
                                   "server is the only one that can talk to it")
    try:
        from ..mcp import McpOptions, serve_http, serve_stdio
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        raise click.ClickException(f"`kgstore mcp` needs the mcp extra ({exc.name} is missing): "
                                   "pip install 'kgstore[mcp]'") from exc
    from ._qa import injected_llm

    options = McpOptions(timeout_s=timeout_s, max_rows=max_rows, log_level=log_level.upper(),
                         ask_stores=other_stores(store, ask_stores))
    if http:
        warn_if_exposed(host, token)
        serve_http(store, options, host=host, port=port, token=token, llm=injected_llm(ctx),
                   announce=lambda line: click.echo(line, err=True))
    else:
        serve_stdio(store, options, llm=injected_llm(ctx))

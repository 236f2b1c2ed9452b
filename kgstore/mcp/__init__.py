"""`kgstore mcp`: the store as a Model Context Protocol server, so that an agent (Claude
Desktop, Cursor, any MCP client) can link names, read the schema, run SPARQL and ask
questions of the store as tools.

    from kgstore.mcp import McpOptions, serve_http, serve_stdio
    serve_stdio("./mystore")                                   # blocks; what a client spawns
    serve_http("./mystore", port=7879, token="s3cret")         # streamable HTTP on 127.0.0.1

Where each part lives: ``_server`` (the tools and resources, on the SDK's ``MCPServer``),
``_lookups`` (what the read-only tools answer), ``_schema`` (the relations tool),
``_ask`` (a question with its progress), ``_model`` (the one model, loaded on the first
question), ``_auth`` (the HTTP token), ``_run`` (the transports).

Needs the ``mcp`` extra (``pip install 'kgstore[mcp]'``): the official MCP Python SDK.
"""
from ._run import HTTP_PATH, serve_http, serve_stdio
from ._server import McpOptions, StoreServer

__all__ = ["McpOptions", "StoreServer", "serve_stdio", "serve_http", "HTTP_PATH"]

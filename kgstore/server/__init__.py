"""`kgstore serve`: the store over HTTP for tools that do not import kgstore, and a web
page on / (SPARQL editor, search, entity pages, Ask) for people.

    from kgstore.server import ServeOptions, create_app, serve
    serve("./mystore", ServeOptions(port=7878))          # blocks; uvicorn on 127.0.0.1
    app = create_app("./mystore", ServeOptions())        # an ASGI app to mount elsewhere

Needs the ``serve`` extra (``pip install 'kgstore[serve]'``): Starlette and uvicorn.
"""
from ._app import MAX_ROWS_HEADER, TRUNCATED_HEADER, create_app
from ._protocol import ProtocolError, SparqlRequest, accepted, choose_format, parse_request
from ._run import MAX_CONNECTIONS, serve
from ._state import ServeOptions

__all__ = ["create_app", "serve", "ServeOptions", "TRUNCATED_HEADER", "MAX_ROWS_HEADER", "MAX_CONNECTIONS",
           "ProtocolError", "SparqlRequest", "parse_request", "accepted", "choose_format"]

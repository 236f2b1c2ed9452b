"""The web page of `kgstore serve`: ``/`` and ``/ui/...`` answer the one HTML page (its
script reads the path: ``/ui/entity/Q42``, ``/ui/ask``...), ``/static/...`` its scripts,
styles and the vendored libraries. These hold no data, so they load without the token;
the page sends the token with each data request it makes."""
from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ._convertors import ANY_TEXT

STATIC_DIR = Path(__file__).parent / "static"
_PUBLIC_PREFIXES = ("/static/", "/ui/")


def page_routes() -> list:
    """The routes of the page, to add to the app's."""
    return [
        Route("/", _page, methods=["GET", "HEAD"]),
        Route("/ui", _page, methods=["GET", "HEAD"]),
        Route(f"/ui/{{rest:{ANY_TEXT}}}", _page, methods=["GET", "HEAD"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]


def is_page_path(path: str) -> bool:
    """Whether ``path`` is part of the page (served without the token)."""
    if "/.." in path:  # never let a dotted path past the token, whatever would route it
        return False
    return path in ("/", "/ui") or path.startswith(_PUBLIC_PREFIXES)


async def _page(request: Request) -> Response:
    # no-cache: a browser revalidates (cheap, ETag) and so never runs an old page against a new server
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers={"Cache-Control": "no-cache"})

"""The ``any_text`` path parameter: Starlette's ``path`` stops at a newline, so a path
holding one (``/entity/Q1%0Ax``) matched no route and got Starlette's plain-text 404
instead of the endpoint's own answer. Routes import ``ANY_TEXT`` to name it."""
from __future__ import annotations

from starlette.convertors import PathConvertor, register_url_convertor

ANY_TEXT = "any_text"


class _AnyText(PathConvertor):
    regex = "(?s:.*)"  # any characters, newlines included


register_url_convertor(ANY_TEXT, _AnyText())

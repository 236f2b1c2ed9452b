"""The body of ``POST /ask``, read and checked before a question queues for the model.

Every field is checked for its type here, so that a wrong one is a 400 with a sentence
rather than something the QA method trips on later (a 500 after a wait in the queue).
Method options must have the type of their default (an int where the default is a float
is fine) and numbers must be 0 or more: ``"answer_tokens": "80"`` is refused, not passed
on. A value of the right type that the method still cannot use (``"answer_tokens": 0``)
is a 400 from the handler, when the method raises ValueError or TypeError on it.

Options that size the work a question costs (token budgets, timeouts, row and step caps,
top-k) may not go above ``OPTION_HEADROOM`` times their default over HTTP: a client must
not be able to hold the one model, or a query thread, far longer than the server allows.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ._ask_queue import MAX_TICKET_CHARS

OPTION_HEADROOM = 4
from ._state import BadRequest


@dataclass(frozen=True)
class AskRequest:
    question: str
    method: str
    allow_parametric: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    ticket: str | None = None


def parse_ask(body: bytes) -> AskRequest:
    """The request in ``body``; BadRequest (400) for a body that is not a JSON object of the
    documented shape, UnknownMethodError / UnknownOptionError (400) for a method or option
    that does not exist."""
    from qa.methods import DEFAULT_METHOD, method_names, method_options

    from ..errors import UnknownMethodError, UnknownOptionError

    try:
        doc = json.loads(body or b"{}")
    except ValueError as exc:  # json.JSONDecodeError and UnicodeDecodeError
        raise BadRequest(f"the body is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise BadRequest("the body must be a JSON object")
    question = doc.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadRequest('"question" (a string) is required')
    method = doc.get("method", DEFAULT_METHOD)
    if not isinstance(method, str) or method not in method_names():
        raise UnknownMethodError(str(method), method_names())
    allow_parametric = doc.get("allow_parametric", False)
    if not isinstance(allow_parametric, bool):
        raise BadRequest('"allow_parametric" must be true or false')
    options = doc.get("options")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise BadRequest('"options" must be an object of method options')
    known = method_options(method)
    unknown = [name for name in options if name not in known]
    if unknown:
        raise UnknownOptionError(method, unknown, known)
    for name, value in options.items():
        if not _same_type(value, known[name]):
            raise BadRequest(f'option "{name}" of method {method} must be {_type_name(known[name])} '
                             f"(default {known[name]!r}), not {json.dumps(value)[:80]}")
        if _is_number(value) and value < 0:  # counts, limits, thresholds and weights, all >= 0
            raise BadRequest(f'option "{name}" of method {method} must be 0 or more, not {value}')
        ceiling = option_ceiling(name, known[name])
        if ceiling is not None and value > ceiling:
            raise BadRequest(f'option "{name}" of method {method} may be at most {ceiling} over HTTP '
                             f"({OPTION_HEADROOM} times its default), not {value}")
    ticket = doc.get("ticket")
    if ticket is not None and (not isinstance(ticket, str) or len(ticket) > MAX_TICKET_CHARS):
        raise BadRequest(f'"ticket" must be a string of at most {MAX_TICKET_CHARS} characters')
    return AskRequest(question, method, allow_parametric, options, ticket)


def option_schema(name: str, default: Any) -> dict[str, Any]:
    """The JSON Schema of option ``name`` with this default (for the OpenAPI description)."""
    schema: dict[str, Any] = {"type": _type_name(default)}
    if _is_number(default):
        schema["minimum"] = 0
    ceiling = option_ceiling(name, default)
    if ceiling is not None:
        schema["maximum"] = ceiling
    return schema


def option_ceiling(name: str, default: Any) -> int | float | None:
    """The largest value a client may send for an option that sizes a question's work, or
    None for the others (thresholds, weights, switches)."""
    sizes_work = (name in ("timeout_s", "max_rows") or name.endswith("_tokens") or name.startswith("max_")
                  or name == "k" or name.endswith("_k"))
    if not sizes_work or not _is_number(default) or default <= 0:
        return None
    return OPTION_HEADROOM * default


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    return type(value) is type(default)


def _type_name(default: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(default), "object")

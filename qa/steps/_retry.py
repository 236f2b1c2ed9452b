"""Generate, check, retry with the error: the loop every method that has the model write
code (Cypher, SPARQL) runs.

The model writes text; ``check`` turns it into something usable or raises
:class:`RetryWith`, naming the prompt that shows the model its mistake (a parse error with
its line and column, a query that states nothing). Text that tries to do something not
allowed (:class:`~kgstore.errors.UnsafeQueryError`) is not a slip to correct, and ends
the loop at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar

from kgstore.errors import QuerySyntaxError, UnsafeQueryError

T = TypeVar("T")


class RetryWith(Exception):
    """The text is not usable: ask again with prompt ``prompt`` and ``values`` (added to
    the first call's values). ``note`` goes to the trace."""

    def __init__(self, note: str, prompt: str, values: dict[str, Any] | None = None):
        super().__init__(note)
        self.note = note
        self.prompt = prompt
        self.values = dict(values or {})


@dataclass
class Generated(Generic[T]):
    """What the loop ended with: the checked ``value`` (None when every attempt failed),
    the last text the model wrote, and how many attempts it took."""

    value: T | None
    text: str
    attempts: int


def syntax_retry(exc: QuerySyntaxError, prompt: str, previous: dict[str, Any]) -> RetryWith:
    """A :class:`RetryWith` that shows the model where its text stopped parsing: the
    error, its line and column, the line itself and a caret under the column."""
    return RetryWith(str(exc), prompt, {**previous, "error": exc.reason, "line": exc.line, "column": exc.column,
                                        "line_text": exc.line_text, "caret": " " * max(exc.column - 1, 0) + "^"})


def parse_or_retry(parse: Callable[[str], T], error: type[Exception], prompt: str, key: str) -> Callable[[str], T]:
    """A ``check`` that parses the text, and on ``error`` asks again with ``prompt``,
    which is shown the text (as ``key``) and the reason (as ``error``)."""
    def check(text: str) -> T:
        try:
            return parse(text)
        except error as exc:
            raise RetryWith(str(exc), prompt, {key: text.strip(), "error": str(exc)}) from None

    return check


def generate_checked(run, step: str, prompt: str, values: dict[str, Any], check: Callable[[str], T], *,
                     attempts: int = 2, **options: Any) -> Generated[T]:
    """Ask ``prompt``, pass the text to ``check``, and on :class:`RetryWith` ask again with
    the prompt it names, at most ``attempts`` calls in all. Each failed attempt is traced
    under ``step`` as ``error_N``."""
    text = run.ask(step, prompt, values, **options).text
    for attempt in range(1, attempts + 1):
        try:
            return Generated(check(text), text, attempt)
        except UnsafeQueryError as exc:
            run.record(step, **{f"error_{attempt}": str(exc)})
            return Generated(None, text, attempt)
        except RetryWith as retry:
            run.record(step, **{f"error_{attempt}": retry.note})
            if attempt == attempts:
                return Generated(None, text, attempt)
            text = run.ask(step, retry.prompt, {**values, **retry.values}, **options).text
    raise AssertionError("unreachable")  # pragma: no cover


__all__ = ["RetryWith", "Generated", "generate_checked", "parse_or_retry", "syntax_retry"]

"""Positions in generated text, for error messages a model can act on. Pure functions."""
from __future__ import annotations


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def line_of(text: str, offset: int) -> str:
    """The whole line of ``text`` that holds ``offset``."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start:] if end < 0 else text[start:end]

"""The text a grammar forces at the start of every output, so it can be read in as prompt.

A step grammar often opens with a literal the caller wrote (the query agent's thought opens
with the chain built so far and the plan: 30-40 tokens). Generated under the grammar, each
of those tokens costs one decoding step of the model; read in as part of the prompt they
cost one batched evaluation, about a tenth of the time. The output is the same text: every
output of the grammar starts with that literal.

The literal's last token stays with the grammar (token healing): the model's own
tokens often join the literal's end to what follows (".\n", " word"), and a prompt that
stops at the literal's end asks it for a split it rarely saw in training. Read in whole,
"... Next: spouse." made the model go on writing the action on the thought's line
instead of ending it with its usual ".\n" token. The caller says, with ``keep``, how much
of the opening is read in; by default the opening up to its trailing whitespace.

Only a root rule that is one sequence opening with string literals is split; anything
else (alternatives at the top, a rule reference first, comments) is left whole. Pure
functions.
"""
from __future__ import annotations

import re
from typing import Callable

from ..steps._gbnf import gbnf_literal

_RULE_START = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*::=", re.MULTILINE)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]"}


def split_forced_opening(gbnf: str, keep: Callable[[str], str] = str.rstrip) -> tuple[str, str] | None:
    """``(opening, rest)``: text every output of ``gbnf`` starts with, ``keep`` of the
    whole forced text (a prefix of it), and a grammar for what follows. None when the
    grammar forces no opening text or ``keep`` keeps none of it."""
    starts = list(_RULE_START.finditer(gbnf))
    root = next((i for i, m in enumerate(starts) if m.group(1) == "root"), None)
    if root is None:
        return None
    body_start = starts[root].end()
    body_end = starts[root + 1].start() if root + 1 < len(starts) else len(gbnf)
    body = gbnf[body_start:body_end]
    if not _one_sequence(body):
        return None
    opening, pos = "", 0
    while True:
        while pos < len(body) and body[pos].isspace():
            pos += 1
        if pos >= len(body) or body[pos] != '"':
            break
        literal, pos = _read_literal(body, pos)
        if literal is None or (pos < len(body) and body[pos] in "*+?{"):
            return None  # a repeated literal is not forced text
        opening += literal
    kept = keep(opening)
    if not kept or not opening.startswith(kept):
        return None
    rest_items = body[pos:].strip()
    tail = opening[len(kept):]
    rest_body = " ".join(p for p in (gbnf_literal(tail) if tail else "", rest_items) if p) or '""'
    rest = gbnf[:body_start] + " " + rest_body + "\n" + gbnf[body_end:]
    return kept, rest


def _one_sequence(body: str) -> bool:
    """Whether the rule body has no top-level alternative and no comment."""
    depth, pos = 0, 0
    while pos < len(body):
        ch = body[pos]
        if ch == '"':
            _, pos = _read_literal(body, pos)
            if pos < 0:
                return False
            continue
        if ch == "[":
            end = _class_end(body, pos)
            if end < 0:
                return False
            pos = end
            continue
        if ch == "#":
            return False
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return False
        pos += 1
    return depth == 0


def _read_literal(body: str, pos: int) -> tuple[str | None, int]:
    """The string literal starting at ``body[pos]`` (a quote) and the position after it;
    (None, -1) when it does not end or holds an escape this reader does not know."""
    out, pos = [], pos + 1
    while pos < len(body):
        ch = body[pos]
        if ch == '"':
            return "".join(out), pos + 1
        if ch == "\\":
            if pos + 1 >= len(body):
                return None, -1
            code = body[pos + 1]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                pos += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(code)
            digits = body[pos + 2:pos + 2 + width] if width else ""
            if not width or not re.fullmatch(r"[0-9a-fA-F]+", digits) or len(digits) != width:
                return None, -1
            out.append(chr(int(digits, 16)))
            pos += 2 + width
            continue
        out.append(ch)
        pos += 1
    return None, -1


def _class_end(body: str, pos: int) -> int:
    """The position after the character class starting at ``body[pos]``, or -1."""
    pos += 1
    while pos < len(body):
        if body[pos] == "\\":
            pos += 2
            continue
        if body[pos] == "]":
            return pos + 1
        pos += 1
    return -1


__all__ = ["split_forced_opening"]

"""Prompt files, loaded by name.

A prompt file is Markdown split into chat turns by heading lines ``### system``,
``### user`` and ``### assistant`` (few-shot examples are user/assistant pairs). Text
before the first heading is a comment for people and is not sent. ``{name}`` is replaced
by the value passed for ``name``; every other brace (Cypher maps, answer marks) stays as
written, and passing a value the file never uses is an error, so typos fail loudly.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_TURN = re.compile(r"^### (system|user|assistant)[ \t]*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@lru_cache(maxsize=None)
def prompt_text(name: str) -> str:
    try:
        return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyError(f"no prompt file {name}.md in qa/prompts") from None


@lru_cache(maxsize=None)
def grammar_text(name: str) -> str:
    """The GBNF grammar ``name.gbnf`` beside the prompts, without its ``#`` comment lines."""
    try:
        text = resources.files(__name__).joinpath(f"{name}.gbnf").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyError(f"no grammar file {name}.gbnf in qa/prompts") from None
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")) + "\n"


def render_prompt(name: str, **values: object) -> list[dict[str, str]]:
    """The chat messages of prompt ``name`` with ``values`` filled in."""
    text = prompt_text(name)
    used: set[str] = set()

    def fill(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            return match.group(0)
        used.add(key)
        return str(values[key])

    parts = _TURN.split(text)
    messages = []
    for role, body in zip(parts[1::2], parts[2::2]):
        messages.append({"role": role, "content": _PLACEHOLDER.sub(fill, body).strip("\n")})
    if not messages:
        raise ValueError(f"prompt {name}.md has no '### system' / '### user' turns")
    unused = set(values) - used
    if unused:
        raise ValueError(f"prompt {name}.md has no placeholder for {', '.join(sorted(unused))}")
    return messages


__all__ = ["grammar_text", "prompt_text", "render_prompt"]

"""Questions files for `kgstore ask --questions FILE`: one question a line, as plain text
or as JSONL (``{"question": "...", "id": "q1"}``), told apart by the file's first question
line. Empty lines and ``#`` comments are skipped in both."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class QuestionLine:
    """One question line. ``error`` says why the line cannot be asked (then ``question``
    may be None); ``id`` is the JSONL line's own id, None in a plain-text file."""

    line: int
    question: str | None
    id: str | int | None = None
    error: str | None = None

    @property
    def key(self) -> tuple:
        """What identifies this line's answer when a run resumes: its id, else its line number."""
        return ("id", self.id) if self.id is not None else ("line", self.line)


def read_questions(lines: Iterable[str]) -> tuple[list[QuestionLine], str]:
    """The question lines of a file, and its format ("jsonl" when its first question line
    is a JSON object, else "text")."""
    numbered = [(n, text.strip()) for n, text in enumerate(lines, start=1)]
    numbered = [(n, text) for n, text in numbered if text and not text.startswith("#")]
    fmt = "jsonl" if numbered and numbered[0][1].startswith("{") else "text"
    if fmt == "text":
        return [QuestionLine(n, text) for n, text in numbered], fmt
    out, seen = [], {}
    for n, text in numbered:
        item = _jsonl_question(n, text)
        if item.error is None and item.id is not None:
            if item.id in seen:
                item = QuestionLine(n, item.question, item.id,
                                    error=f"id {item.id!r} was already used on line {seen[item.id]}")
            else:
                seen[item.id] = n
        out.append(item)
    return out, fmt


def _jsonl_question(n: int, text: str) -> QuestionLine:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        return QuestionLine(n, None, error=f"not valid JSON ({exc})")
    if not isinstance(doc, dict):
        return QuestionLine(n, None, error='not a JSON object like {"question": "...", "id": "q1"}')
    qid = doc.get("id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, (str, int))):
        return QuestionLine(n, None, error=f'"id" must be a string or an integer, not {qid!r}')
    question = doc.get("question")
    if not isinstance(question, str) or not question.strip():
        return QuestionLine(n, None, qid, error='"question" (a non-empty string) is missing')
    return QuestionLine(n, question.strip(), qid)

"""Readers for anyone's question files (`kgstore eval --questions FILE`). Pure parsing:
each returns the questions with typed gold values, the gold query and the shape.

Formats, told apart by the content (or forced with ``fmt``):

* **qald**: a QALD-9/QALD-10 JSON document ``{"questions": [{"id", "question": [{"language",
  "string"}], "query": {"sparql"}, "answers": [SPARQL results JSON]}]}``; the question is
  taken in ``language`` (questions without it are skipped and counted).
* **jsonl**: one object a line, ``{"question", "answers": [...], "sparql"?, "type"?, "id"?}``;
  ``answers`` may also be a SPARQL results JSON object.
* **tsv**: ``question<TAB>answer|answer``, the topic entity in brackets as MetaQA writes it
  (``what did [Temuera Morrison] act in<TAB>Once Were Warriors|River Queen``).

Empty lines and lines starting with ``#`` are skipped in TSV and JSONL.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from kgstore.errors import DatasetError

from ._datasets import Dataset, QAItem, metaqa_question
from ._shapes import item_shape
from ._typed import TypedValue, XSD, gold_values, sparql_json_values

FORMATS = ("tsv", "jsonl", "qald")


def detect_format(text: str) -> str:
    """``qald`` for a JSON document with a ``questions`` list, ``jsonl`` when the first
    content line is a JSON object, else ``tsv``."""
    body = text.lstrip("\ufeff").strip()
    if body.startswith("{"):
        try:
            doc = json.loads(body)
        except ValueError:
            return "jsonl"
        if isinstance(doc, dict) and isinstance(doc.get("questions"), list):
            return "qald"
        return "jsonl"
    first = next((ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return "jsonl" if first.startswith("{") else "tsv"


def read_questions_file(path: str | Path, *, fmt: str | None = None, language: str = "en") -> Dataset:
    """The questions of ``path`` as a :class:`Dataset` (``hops`` 0, ``split`` the format)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"questions file {path} not found")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if fmt is not None and fmt not in FORMATS:
        raise DatasetError(f"unknown questions format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    fmt = fmt or detect_format(text)
    stem = path.stem
    notes: list[str] = []
    if fmt == "qald":
        items = qald_items(text, source=str(path), language=language, notes=notes)
    elif fmt == "jsonl":
        items = jsonl_items(text, source=str(path), prefix=stem)
    else:
        items = tsv_items(text, prefix=stem)
    items = [with_shape(item) for item in items]
    if not items:
        raise DatasetError(f"no questions in {path} (read as {fmt})")
    return Dataset(stem, 0, fmt, path, items, notes=notes, title=f"{path.name} ({fmt})", format=fmt)


def with_shape(item: QAItem) -> QAItem:
    """``item`` with its shape (from its type field, kept in ``qtype``, its gold query, or
    its gold values), and
    marked unscorable when it has no gold answers and no gold query to find them."""
    kinds = [v.kind for v in item.gold_values or ()]
    shape = item_shape(item.qtype, item.sparql, kinds)
    unscorable = item.unscorable
    if unscorable is None and not item.gold_values and not item.sparql:
        unscorable = "no gold answers"
    return replace(item, shape=shape, unscorable=unscorable)


def tsv_items(text: str, *, prefix: str) -> list[QAItem]:
    """``question<TAB>a|b`` lines (topic in brackets); a line without a tab has no gold."""
    items = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        question, gold, topic = metaqa_question(line.rstrip("\r\n"))
        if not question:
            raise DatasetError(f"line {n} of the TSV questions file has no question before its tab")
        values = tuple(gold_values(gold))
        items.append(QAItem(id=f"{prefix}:{n}", question=question, gold=tuple(v.text() for v in values),
                            topic=topic, gold_values=values))
    return items


def jsonl_items(text: str, *, source: str, prefix: str) -> list[QAItem]:
    """``{"question", "answers", "sparql"?, "type"?, "id"?}`` lines."""
    items, seen = [], {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            doc = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{source} line {n} is not valid JSON ({exc})") from exc
        if not isinstance(doc, dict):
            raise DatasetError(f'{source} line {n} is not a JSON object like {{"question": "...", "answers": [...]}}')
        question = doc.get("question")
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(f'{source} line {n}: "question" (a non-empty string) is missing')
        qid = doc.get("id")
        qid = f"{prefix}:{n}" if qid is None else str(qid)
        if qid in seen:
            raise DatasetError(f"{source} line {n}: id {qid!r} was already used on line {seen[qid]}")
        seen[qid] = n
        values = tuple(_answers(doc.get("answers", doc.get("answer")), f"{source} line {n}"))
        sparql = doc.get("sparql")
        if sparql is not None and not isinstance(sparql, str):
            raise DatasetError(f'{source} line {n}: "sparql" must be a string')
        qtype = doc.get("type")
        items.append(QAItem(id=qid, question=question.strip(), gold=tuple(v.text() for v in values),
                            gold_values=values, sparql=sparql or None,
                            qtype=str(qtype) if qtype not in (None, "") else None))
    return items


def _answers(raw, where: str) -> list[TypedValue]:
    """A JSONL line's answers: a list of strings, numbers and booleans, one such value,
    or a SPARQL results JSON object."""
    if raw is None:
        return []
    if isinstance(raw, dict):
        if "boolean" in raw or "results" in raw:
            return sparql_json_values(raw)
        raise DatasetError(f'{where}: "answers" is an object but not SPARQL results JSON '
                           '(with "boolean" or "results")')
    if not isinstance(raw, list):
        raw = [raw]
    out = []
    for value in raw:
        if isinstance(value, bool):
            out.append(TypedValue("boolean", value, datatype=XSD + "boolean"))
        elif isinstance(value, (int, float)):
            out.append(TypedValue("number", float(value)))
        elif isinstance(value, str):
            out.extend(gold_values([value]))
        elif isinstance(value, dict) and "type" in value and "value" in value:
            out.extend(sparql_json_values({"results": {"bindings": [{"v": value}]}}))
        else:
            raise DatasetError(f'{where}: answer {value!r} is not a string, number, boolean or SPARQL term')
    return out


def qald_items(text: str, *, source: str, language: str, notes: list[str]) -> list[QAItem]:
    """A QALD-9/10 document's questions in ``language``."""
    try:
        doc = json.loads(text.lstrip("\ufeff"))
    except ValueError as exc:
        raise DatasetError(f"{source} is not valid JSON ({exc})") from exc
    questions = doc.get("questions") if isinstance(doc, dict) else None
    if not isinstance(questions, list):
        raise DatasetError(f'{source} is not a QALD file: no "questions" list')
    items, missing, seen = [], 0, set()
    for n, q in enumerate(questions, start=1):
        if not isinstance(q, dict):
            raise DatasetError(f"{source}: question {n} is not a JSON object")
        qid = str(q.get("id", n))
        if qid in seen:
            raise DatasetError(f"{source}: question id {qid!r} appears twice")
        seen.add(qid)
        text_ = _in_language(q.get("question"), language)
        if text_ is None:
            missing += 1
            continue
        values: list[TypedValue] = []
        for answer in q.get("answers") or []:
            if isinstance(answer, dict):
                values.extend(sparql_json_values(answer))
        query = q.get("query")
        sparql = query.get("sparql") if isinstance(query, dict) else None
        items.append(QAItem(id=qid, question=text_, gold=tuple(v.text() for v in values), gold_values=tuple(values),
                            sparql=sparql or None))
    if missing:
        notes.append(f"{missing} question(s) have no {language!r} text and are left out (--language)")
    if questions and not items:
        raise DatasetError(f"no question of {source} is written in {language!r}; choose another --language")
    return items


def _in_language(question, language: str) -> str | None:
    if isinstance(question, str):  # some QALD exports write one string
        return question.strip() or None
    for entry in question or []:
        if isinstance(entry, dict) and entry.get("language") == language:
            text = (entry.get("string") or "").strip()
            return text or None
    return None

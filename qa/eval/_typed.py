"""Typed answer values, and scores that compare them by kind. Pure functions.

A gold answer and a method's answer both become :class:`TypedValue` records, so that
``7``, ``"7"``, ``7.0`` and ``"7"^^xsd:integer`` are the same number, ``yes`` is ``true``,
and ``1952-03-11`` is ``1952-03-11T00:00:00Z``.

Matching rules (gold against predicted):

* **entity**: a gold IRI matches the same predicted IRI. When either side has no IRI, the
  labels are compared after :func:`qa.normalise_label` (case, accents, punctuation), so a
  gold label matches a predicted label, and a gold IRI whose label is known (from the
  store) matches a predicted label. A predicted plain string matches an entity by label.
* **number**: equal as numbers (``7 = 7.0 = "7"^^xsd:integer``; relative tolerance 1e-9).
  A unit, where known on both sides, must agree too.
* **boolean**: ``true``/``yes`` and ``false``/``no`` (any case); a boolean gold matches only
  a boolean prediction.
* **date**: ISO dates (``1952-03-11``, ``1952-03``, ``1952``, a ``dateTime``) and English
  ones (``11 March 1952``, ``March 11, 1952``, ``March 1952``) are read; compared at the
  **gold's precision**: a gold ``1952`` (a year: ``xsd:gYear``, or
  the text ``1952`` read as a date) matches any predicted date in 1952; a gold ``1952-03``
  any date in that month; a gold day (``1952-03-11``, or any ``xsd:dateTime``: the time of
  day is not compared) only that day. A prediction less precise than the gold never
  matches (a predicted ``1952`` is not the gold ``1952-03-11``).
  An untyped gold of exactly four digits (``1952`` in a TSV file) is read as a number
  that also matches a date in that year, since plain-text files cannot say which it is.
* A gold name (entity or string) also matches a prediction whose text is that name, even
  when the text reads as a literal (a film called ``1984``, the events of ``May 1968``),
  and a gold number or date matches an entity named as it is written.
* **string**: equal after :func:`qa.normalise_label`; a language tag is kept on the value
  but not compared.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from ..steps._grounding import normalise_label

XSD = "http://www.w3.org/2001/XMLSchema#"
KINDS = ("entity", "number", "boolean", "date", "string")
_NUMBER_TYPES = {XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "short", "byte",
                                   "nonNegativeInteger", "positiveInteger", "negativeInteger",
                                   "nonPositiveInteger", "unsignedInt", "unsignedLong", "unsignedShort",
                                   "unsignedByte")}
_DATE_TYPES = {XSD + t: p for t, p in (("dateTime", "day"), ("dateTimeStamp", "day"), ("date", "day"),
                                        ("gYearMonth", "month"), ("gYear", "year"))}
_TRUE, _FALSE = {"true", "yes"}, {"false", "no"}
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
# -2000, 1952, 1952-03, 1952-03-11, 1952-03-11T00:00:00Z (a time or zone after the day is allowed)
_DATE = re.compile(r"^(?P<y>[+-]?\d{4,})(?:-(?P<m>\d\d)(?:-(?P<d>\d\d)(?:[T ][0-9:.]+)?(?:Z|[+-]\d\d:?\d\d)?)?)?$")
_PRECISIONS = ("year", "month", "day")
_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), start=1)}
_MONTH = r"(?P<mon>[A-Za-z]+)\.?"
_WORDY_DATES = (re.compile(rf"^(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+(?P<y>\d{{3,4}})$"),  # 11 March 1952
                re.compile(rf"^{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{3,4}})$"),  # March 11, 1952
                re.compile(rf"^{_MONTH}\s+(?P<y>\d{{3,4}})$"))  # March 1952


@dataclass(frozen=True)
class TypedValue:
    """One answer value. ``value`` is the IRI or label (entity), a float (number), a bool
    (boolean), ``(year, month, day)`` with None past ``precision`` (date), or the text
    (string). ``label`` is an entity's name where known; ``datatype`` the literal's XSD
    type; ``lang`` a string's language tag; ``year_like`` marks an untyped four-digit
    number that also reads as a year."""

    kind: str
    value: object
    datatype: str | None = None
    unit: str | None = None
    label: str | None = None
    lang: str | None = None
    precision: str | None = None  # dates: year | month | day
    year_like: bool = False

    @property
    def iri(self) -> str | None:
        return self.value if self.kind == "entity" and _is_iri(self.value) else None

    def text(self) -> str:
        """The value as people read it (the report's gold column)."""
        if self.kind == "entity":
            return self.label or str(self.value)
        if self.kind == "number":
            v = float(self.value)
            text = str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
            return text + (f" {self.unit}" if self.unit else "")
        if self.kind == "boolean":
            return "true" if self.value else "false"
        if self.kind == "date":
            y, m, d = self.value
            return "-".join([f"{y:04d}"] + [f"{x:02d}" for x in (m, d) if x is not None])
        return str(self.value)

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "value": list(self.value) if self.kind == "date" else self.value}
        for key in ("datatype", "unit", "label", "lang", "precision"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.year_like:
            out["year_like"] = True
        return out


def _is_iri(text) -> bool:
    return isinstance(text, str) and re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s<>\"]+$", text) is not None \
        and ("://" in text or text.startswith("urn:"))


def parse_date(text: str, precision: str | None = None) -> TypedValue | None:
    """``1952`` / ``1952-03`` / ``1952-03-11`` / ``1952-03-11T00:00:00Z`` as a date at the
    precision written (or ``precision``, from a datatype); None when it is not a date."""
    m = _DATE.match(text.strip())
    if m:
        year, month, day = int(m["y"]), int(m["m"]) if m["m"] else None, int(m["d"]) if m["d"] else None
    else:
        wordy = _wordy_date(text.strip())
        if wordy is None:
            return None
        year, month, day = wordy
    if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
        return None
    written = "day" if day is not None else "month" if month is not None else "year"
    if precision is None or _PRECISIONS.index(precision) > _PRECISIONS.index(written):
        precision = written
    parts = (year, month if precision != "year" else None, day if precision == "day" else None)
    return TypedValue("date", parts, precision=precision)


def _wordy_date(text: str) -> tuple[int, int, int | None] | None:
    """``11 March 1952``, ``March 11, 1952``, ``Mar 1952`` (English month names)."""
    for pattern in _WORDY_DATES:
        m = pattern.match(text)
        if m:
            name = m["mon"].lower()
            month = _MONTHS.get(name) or next((n for full, n in _MONTHS.items()
                                               if len(name) >= 3 and full.startswith(name)), None)
            if month is None:
                return None
            return int(m["y"]), month, int(m["d"]) if "d" in m.groupdict() and m["d"] else None
    return None


def literal_value(text: str, *, datatype: str | None = None, lang: str | None = None) -> TypedValue:
    """A literal's typed value: by its datatype when it has one, else read from its text
    (a number, a boolean, a date, or else a string)."""
    text = str(text)
    if lang:
        return TypedValue("string", text, lang=lang)
    if datatype in _NUMBER_TYPES:
        number = _number(text)
        if number is not None:
            return TypedValue("number", number, datatype=datatype)
    if datatype == XSD + "boolean":
        flag = _boolean(text)
        if flag is not None:
            return TypedValue("boolean", flag, datatype=datatype)
    if datatype in _DATE_TYPES:
        date = parse_date(text, _DATE_TYPES[datatype])
        if date is not None:
            return TypedValue("date", date.value, datatype=datatype, precision=date.precision)
    if datatype and datatype != XSD + "string":
        return TypedValue("string", text, datatype=datatype)
    return guess_value(text, datatype=datatype)


def guess_value(text: str, *, datatype: str | None = None) -> TypedValue:
    """An untyped text's value: a number (``7``, ``7.0``, ``1e3``), a boolean (``true``,
    ``yes``, ``false``, ``no``), a date (``1952-03-11``), else a string. A bare four-digit
    text is a number that also reads as a year."""
    stripped = text.strip()
    number = _number(stripped)
    if number is not None:
        return TypedValue("number", number, datatype=datatype,
                          year_like=re.fullmatch(r"\d{4}", stripped) is not None)
    flag = _boolean(stripped)
    if flag is not None:
        return TypedValue("boolean", flag, datatype=datatype)
    date = parse_date(stripped)
    if date is not None and date.precision != "year":
        return TypedValue("date", date.value, datatype=datatype, precision=date.precision)
    return TypedValue("string", stripped, datatype=datatype)


def _number(text: str) -> float | None:
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _boolean(text: str) -> bool | None:
    low = text.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


def sparql_json_value(binding: dict) -> TypedValue | None:
    """One term of a SPARQL 1.1 results JSON binding (``{"type": "uri", "value": ...}``,
    ``{"type": "literal", "value": "7", "datatype": ...}``, ``xml:lang``) as a typed value;
    None for a blank node."""
    kind, value = binding.get("type"), binding.get("value")
    if value is None:
        return None
    if kind == "uri":
        return TypedValue("entity", value)
    if kind in ("literal", "typed-literal"):
        return literal_value(value, datatype=binding.get("datatype"), lang=binding.get("xml:lang"))
    return None


def sparql_json_values(doc: dict) -> list[TypedValue]:
    """Every value of a SPARQL results JSON document: the ASK boolean, or the bindings of
    each row (all projected variables, in order)."""
    if "boolean" in doc:
        return [TypedValue("boolean", bool(doc["boolean"]), datatype=XSD + "boolean")]
    variables = doc.get("head", {}).get("vars") or []
    out = []
    for row in doc.get("results", {}).get("bindings", []):
        names = variables or list(row)
        for name in names:
            if name in row:
                value = sparql_json_value(row[name])
                if value is not None:
                    out.append(value)
    return out


def gold_values(texts: Iterable[str]) -> list[TypedValue]:
    """Plain-text gold answers (a TSV or JSONL file's): an IRI is an entity, else the
    text is read as a literal (number, boolean, date) or kept as a label."""
    out = []
    for text in texts:
        text = str(text).strip()
        if not text:
            continue
        if text.startswith("<") and text.endswith(">") and _is_iri(text[1:-1]):
            out.append(TypedValue("entity", text[1:-1]))
        elif _is_iri(text):
            out.append(TypedValue("entity", text))
        else:
            value = guess_value(text)
            out.append(TypedValue("entity", text) if value.kind == "string" else value)
    return out


def predicted_values(answers: Sequence[str], answer_iris: Sequence[str | None] = (),
                     datatypes: dict[str, str] | None = None,
                     values: Sequence[dict | None] = ()) -> list[TypedValue]:
    """A method's answer (the labels and the aligned IRIs of ``kgstore ask --format json``)
    as typed values: an answer with an IRI is that entity (with its label); one with a
    typed value (``values``, the answer's ``LiteralValue.to_dict``: lexical form, datatype,
    unit, a date's precision) is that value, as the store holds it, whatever its printed
    text ("8126 metre", "1265"); any other is a literal read from its text, or by its
    datatype when ``datatypes`` (label → XSD type, from the answer's literal evidence)
    gives one."""
    datatypes = datatypes or {}
    out = []
    for i, label in enumerate(answers):
        iri = answer_iris[i] if i < len(answer_iris) else None
        typed = values[i] if i < len(values) else None
        if iri:
            out.append(TypedValue("entity", iri, label=label))
        elif typed and typed.get("lexical") is not None:
            out.append(stored_value(typed, str(label)))
        elif label is not None and str(label).strip():
            value = literal_value(str(label), datatype=datatypes.get(str(label)))
            out.append(TypedValue("entity", value.value) if value.kind == "string" and value.datatype is None
                       and not value.lang else replace(value, label=str(label)))
    return out


def stored_value(typed: dict, label: str) -> TypedValue:
    """An answer's typed value as the store holds it (a ``LiteralValue.to_dict``)."""
    value = literal_value(str(typed["lexical"]), datatype=typed.get("datatype"))
    if value.kind == "date" and typed.get("precision"):
        date = parse_date(str(typed["lexical"]), typed["precision"])
        value = replace(value, value=date.value, precision=date.precision) if date else value
    return replace(value, label=label, unit=typed.get("unit") or value.unit)


def matches(gold: TypedValue, predicted: TypedValue) -> bool:
    """Whether ``predicted`` is the answer ``gold`` (the rules of the module docstring)."""
    if gold.kind in ("entity", "string") and predicted.kind in ("entity", "string"):
        if gold.iri and predicted.iri:
            return gold.iri == predicted.iri
        names = _names(gold)
        return bool(names) and bool(names & _names(predicted))
    if gold.kind in ("entity", "string"):  # a name that reads as a literal ("May 1968", "1984")
        return bool(predicted.label) and normalise_label(predicted.label) in _names(gold)
    if gold.kind in ("number", "date") and predicted.kind in ("entity", "string"):
        return normalise_label(gold.text()) in _names(predicted)  # an entity named "1984"
    if gold.kind == "number":
        if predicted.kind == "number":
            if gold.unit and predicted.unit and normalise_label(gold.unit) != normalise_label(predicted.unit):
                return False
            return math.isclose(float(gold.value), float(predicted.value), rel_tol=1e-9, abs_tol=1e-9)
        if predicted.kind == "date" and gold.year_like:
            return predicted.value[0] == int(gold.value)
        return False
    if gold.kind == "boolean":
        return predicted.kind == "boolean" and predicted.value == gold.value
    if gold.kind == "date":
        if predicted.kind == "number" and predicted.year_like and gold.precision == "year":
            return int(predicted.value) == gold.value[0]
        if predicted.kind != "date":
            return False
        depth = _PRECISIONS.index(gold.precision or "day") + 1
        if _PRECISIONS.index(predicted.precision or "day") + 1 < depth:
            return False
        return tuple(predicted.value[:depth]) == tuple(gold.value[:depth])
    return False


def _names(value: TypedValue) -> set[str]:
    """The normalised names an entity or string goes by: its label, and its value unless
    that is an IRI."""
    names = set()
    if value.label:
        names.add(normalise_label(value.label))
    if value.kind == "string" or not value.iri:
        names.add(normalise_label(str(value.value)))
    return names - {""}


def typed_hits_at_1(predicted: Sequence[TypedValue], gold: Sequence[TypedValue]) -> float:
    """1.0 when the first predicted value matches a gold value."""
    return 1.0 if predicted and any(matches(g, predicted[0]) for g in gold) else 0.0


def typed_f1(predicted: Sequence[TypedValue], gold: Sequence[TypedValue]) -> float:
    """F1 with matching by kind: precision is the share of (distinct) predicted values
    that match a gold value, recall the share of gold values some prediction matches."""
    predicted, gold = _distinct(predicted), _distinct(gold)
    if not predicted or not gold:
        return 0.0
    right = sum(1 for p in predicted if any(matches(g, p) for g in gold))
    found = sum(1 for g in gold if any(matches(g, p) for p in predicted))
    if not right or not found:
        return 0.0
    precision, recall = right / len(predicted), found / len(gold)
    return 2 * precision * recall / (precision + recall)


def _distinct(values: Sequence[TypedValue]) -> list[TypedValue]:
    seen, out = set(), []
    for v in values:
        key = (v.kind, v.iri or (normalise_label(str(v.value)) if v.kind in ("entity", "string") else v.value),
               v.unit)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def value_from_dict(doc: dict) -> TypedValue:
    """The inverse of :meth:`TypedValue.to_dict` (a results file read back to resume)."""
    value = doc["value"]
    if doc["kind"] == "date":
        value = tuple(value)
    # files written before year_like was kept: an untyped four-digit number's label says it
    year_like = doc.get("year_like", doc["kind"] == "number" and doc.get("datatype") is None
                        and re.fullmatch(r"\d{4}", str(doc.get("label", ""))) is not None)
    return TypedValue(doc["kind"], value, datatype=doc.get("datatype"), unit=doc.get("unit"),
                      label=doc.get("label"), lang=doc.get("lang"), precision=doc.get("precision"),
                      year_like=year_like)

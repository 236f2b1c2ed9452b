"""Literal values as people read them, and as typed records for JSON. Pure functions.

A store holds a date as ``"1952-03-11T00:00:00Z"^^xsd:dateTime``; an answer prints it as
``1952-03-11``, cut to the precision the store gives (a year-precision Wikidata date is
stored as January 1st, and its statement node says so). A quantity prints with its unit
where the store has one. :class:`LiteralValue` is what JSON output carries: the lexical
form, its datatype, the readable text and the unit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from kgstore import date_text  # the one home of a date's text (kgstore writes its tables with it)

XSD = "http://www.w3.org/2001/XMLSchema#"
_DATE_TYPES = {XSD + "dateTime", XSD + "date", XSD + "dateTimeStamp"}
_YEAR_TYPES = {XSD + "gYear": "year", XSD + "gYearMonth": "month"}
_NUMBER_TYPES = {XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "short",
                                   "nonNegativeInteger", "positiveInteger", "negativeInteger",
                                   "nonPositiveInteger", "unsignedInt", "unsignedLong")}
_ISO_DATE = re.compile(r"^([+-]?\d{1,}-\d\d-\d\d)(?:T(\d\d:\d\d:\d\d)(?:\.\d+)?)?(Z|[+-]\d\d:\d\d)?$")
# Wikidata's timePrecision: 9 year, 10 month, 11 day
PRECISION_BY_WIKIBASE = {9: "year", 10: "month", 11: "day"}


@dataclass(frozen=True)
class LiteralValue:
    """A literal answer: ``text`` as printed, the store's ``lexical`` form and
    ``datatype``, the ``unit`` label where known, and a date's ``precision``."""

    text: str
    lexical: str
    datatype: str | None = None
    unit: str | None = None
    precision: str | None = None

    @property
    def kind(self) -> str:
        if self.datatype in _DATE_TYPES or self.datatype in _YEAR_TYPES:
            return "date"
        if self.datatype in _NUMBER_TYPES:
            return "number"
        if self.datatype == XSD + "boolean":
            return "boolean"
        return "string"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.text, "lexical": self.lexical, "datatype": self.datatype,
                               "kind": self.kind}
        if self.unit:
            out["unit"] = self.unit
        if self.precision:
            out["precision"] = self.precision
        return out


def number_text(lexical: str) -> str | None:
    """``+8848.86`` → ``8848.86``, ``1.0E3`` → ``1000``; None when not a number."""
    try:
        value = float(lexical)
    except ValueError:
        return None
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return lexical.lstrip("+")


def literal_value(lexical: str, datatype: str | None = None, *, unit: str | None = None,
                  precision: str | None = None) -> LiteralValue:
    """The literal as printed: dates as dates, numbers without a leading sign, with the
    unit after a quantity where one is given."""
    text = lexical
    if datatype in _DATE_TYPES:
        text = date_text(lexical, precision) or lexical
    elif datatype in _YEAR_TYPES:
        precision = precision or _YEAR_TYPES[datatype]
        text = lexical
    elif datatype in _NUMBER_TYPES:
        text = number_text(lexical) or lexical
        if unit:
            text = f"{text} {unit}"
    return LiteralValue(text, lexical, datatype, unit, precision)


def comparable(lexical: str, datatype: str | None = None) -> float | None:
    """A literal (or a label such as ``1999``) as a number to order by: numbers as they
    are, dates as fractional years, so earlier is smaller; None when neither."""
    text = lexical.strip()
    m = _ISO_DATE.match(text)
    if m:
        parts = m.group(1).lstrip("+-").split("-")
        year = int(parts[0]) * (-1 if m.group(1).startswith("-") else 1)
        return year + (int(parts[1]) - 1) / 12 + (int(parts[2]) - 1) / 372
    if datatype in _YEAR_TYPES:
        m2 = re.match(r"^(-?\d+)(?:-(\d\d))?", text)
        if m2:
            return int(m2.group(1)) + ((int(m2.group(2)) - 1) / 12 if m2.group(2) else 0)
    try:
        return float(text.replace(",", "")) if datatype is None or datatype in _NUMBER_TYPES else None
    except ValueError:
        return None


def is_date(lexical: str, datatype: str | None = None) -> bool:
    return datatype in _DATE_TYPES or datatype in _YEAR_TYPES or bool(_ISO_DATE.match(lexical.strip()))


# a name that is a time: a year in it ("1983 World Series", "Miss USA 1993") or a day
# ("April 23"): stores such as Freebase hold days and dated events as entities
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_TIME_NAME = re.compile(rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})\b|\b(?:{_MONTHS})\s+\d{{1,2}}\b|\b\d{{1,2}}\s+(?:{_MONTHS})\b",
                        re.I)


def reads_as_value(answer: str, value: dict | None = None) -> bool:
    """Whether an answer is a value a "when" or "what year" question may take: a literal
    (its ``value`` is recorded), or an entity whose name is a time."""
    return value is not None or bool(_TIME_NAME.search(answer))


def answers_a_value(answers: Sequence[str], values: Sequence[dict | None]) -> bool:
    """Whether any of an answer's members (``answers``, with their ``values`` where
    recorded) is a value: a literal or a thing named by a time."""
    return any(reads_as_value(a, v) for a, v in zip(answers, list(values) + [None] * (len(answers) - len(values))))


__all__ = ["LiteralValue", "literal_value", "date_text", "number_text", "comparable", "is_date",
           "reads_as_value", "answers_a_value", "PRECISION_BY_WIKIBASE"]

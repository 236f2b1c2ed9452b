"""Literals as people read them: a date at its precision (``1952-03-11``, not
``1952-03-11T00:00:00Z``). Pure functions, the one home of this text: kgstore's tables
(`kgstore sparql`, `kgstore entity`) and qa's answers (``qa.steps._values``) write dates
with it. JSON output keeps the lexical form and its datatype as they are.
"""
from __future__ import annotations

import re

XSD = "http://www.w3.org/2001/XMLSchema#"
DATE_TYPES = frozenset({XSD + "dateTime", XSD + "date", XSD + "dateTimeStamp"})
_ISO_DATE = re.compile(r"^([+-]?\d{1,}-\d\d-\d\d)(?:T(\d\d:\d\d:\d\d)(?:\.\d+)?)?(Z|[+-]\d\d:\d\d)?$")


def date_text(lexical: str, precision: str | None = None) -> str | None:
    """``1952-03-11T00:00:00Z`` → ``1952-03-11`` (``1952-03`` or ``1952`` at month or year
    precision); None when ``lexical`` is not an ISO date. A time of day other than
    midnight is kept: the store says more than the day."""
    m = _ISO_DATE.match(lexical.strip())
    if not m:
        return None
    day, time = m.group(1), m.group(2)
    sign = "-" if day.startswith("-") else ""
    parts = day.lstrip("+-").split("-")
    if precision == "year":
        return sign + parts[0]
    if precision == "month":
        return sign + "-".join(parts[:2])
    text = sign + "-".join(parts)
    if time and time != "00:00:00":
        text += " " + time + (" UTC" if m.group(3) == "Z" else "")
    return text


def literal_text(lexical: str, datatype: str | None = None) -> str:
    """A literal's text in a table: a date (``xsd:dateTime``, ``xsd:date``) as
    :func:`date_text` writes it, anything else as it is."""
    if datatype in DATE_TYPES:
        return date_text(lexical) or lexical
    return lexical


__all__ = ["date_text", "literal_text", "DATE_TYPES"]

"""A question read as a query graph: the core chain from the topic entity, the constraints
on its answers, an aggregation, and the form the answer must take. Pure functions.

This is the staged reading of questions with constraints (STAGG, Yih et al. 2015; Lan and
Jiang 2020): a method's draft gives the core chain, which path enumeration grounds in the
store; the constraints are read from the question here and grounded on the chain's answers
by :mod:`qa.steps._constraints`, each one applied or reported as not grounded.

* **Value constraints** compare a value of the answer (or, in a yes/no question, of the
  entity asked about) with a constant the question writes: "in 1985", "since 2005",
  "before 1980", "between 1990 and 2000", "in the 1990s", "over 8,000 m", "more than 10
  million". Years, plain numbers and numbers with a unit or a scale word.
* **Entity constraints** tie the answer to an entity the question names beside the topic:
  "comedies" (a genre node), "Asian" (Asia), "films starring Y".
* **Answer form**: ``yes_no``, ``number`` (a count or a quantity), ``entities`` or
  ``value``; a "which/who/what" question never gets a bare count, and a "how many" question
  never gets a list.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Sequence

# a number as written: "1985", "8,000", "8 000", "2.5"; a scale word may follow
_NUMBER = r"(\d{1,3}(?:[,\u202f ]\d{3})+|\d+(?:\.\d+)?)"
_SCALE = r"(?:\s*(thousand|million|billion|k\b|m\b(?=\s+(?:people|inhabitants|residents|citizens))|bn\b))?"
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}
# units a constant may carry (a hint for which relation: the store's values carry their own)
_UNIT = (r"(?:\s*(metres|meters|metre|meter|m|km|kilometres|kilometers|kilometre|kilometer|feet|foot|ft|miles|mile|"
         r"kg|kilograms|tonnes|tons|years|year|minutes|min|hours|people|inhabitants|residents|"
         r"dollars|euros|km2|square kilometres|square kilometers|sq km|%|percent)\b)?")
# comparison words before a constant: operator for numbers
_LOWER_BOUNDS = {"after": ">", "since": ">=", "later than": ">", "more than": ">", "greater than": ">",
                 "higher than": ">", "larger than": ">", "bigger than": ">", "taller than": ">", "longer than": ">",
                 "heavier than": ">", "older than": ">", "over": ">", "above": ">", "at least": ">=",
                 "no less than": ">=", "not less than": ">=", "exceeding": ">", "in excess of": ">",
                 "upwards of": ">", "from": ">=", "more recent than": ">", "newer than": ">",
                 "postdate": ">", "postdates": ">", "postdated": ">"}
_UPPER_BOUNDS = {"before": "<", "earlier than": "<", "prior to": "<", "until": "<=", "till": "<=", "up to": "<=",
                 "less than": "<", "fewer than": "<", "lower than": "<", "smaller than": "<", "shorter than": "<",
                 "younger than": "<", "lighter than": "<", "under": "<", "below": "<", "at most": "<=",
                 "no more than": "<=", "not more than": "<=", "within": "<=", "less recent than": "<",
                 "predate": "<", "predates": "<", "predated": "<", "antedate": "<", "antedates": "<",
                 "antedated": "<"}
_BOUND_WORDS = "|".join(sorted((re.escape(w) for w in {**_LOWER_BOUNDS, **_UPPER_BOUNDS}), key=len, reverse=True))
_BETWEEN = re.compile(rf"\bbetween\s+(?:the\s+years\s+)?{_NUMBER}{_SCALE}\s+and\s+{_NUMBER}{_SCALE}{_UNIT}", re.I)
_FROM_TO = re.compile(rf"\bfrom\s+(?:the\s+year\s+)?{_NUMBER}{_SCALE}\s+(?:to|through|thru|till|until|up to)\s+"
                      rf"{_NUMBER}{_SCALE}{_UNIT}", re.I)
# "from 2005 on": a lower bound; a bare "from 1950" dates the thing ("a comedy from 1950").
# "on" and "forward" open a year's end only after "from" ("released in 1991 on DVD");
# "or later" and "onwards" do after any year (:func:`open_ended`)
_ONWARDS = re.compile(r"\s+(?:on|forward)\b", re.I)
# "1991 or later", "2000 and earlier", "1985 onwards": the words after a year open its end,
# whatever came before it ("released in 1991 or later" is no year equal)
_OPEN_END = re.compile(r"\s+(?:(?:or|and)\s+(later|after|newer|earlier|before|older)|(onwards?))\b", re.I)
_OPEN_END_OPS = {**dict.fromkeys(("later", "after", "newer", "onward", "onwards"), ">="),
                 **dict.fromkeys(("earlier", "before", "older"), "<=")}
_DECADE = re.compile(r"\b(?:in|during|from)\s+the\s+(\d{3})0'?s\b", re.I)
_BOUND = re.compile(rf"\b({_BOUND_WORDS})\s+(?:the\s+year\s+|about\s+|around\s+|roughly\s+)?{_NUMBER}{_SCALE}{_UNIT}",
                    re.I)
# "in 1985", "during 1999", "of 2004", "released 1999": a year alone
_IN_YEAR = re.compile(r"\b(in|during|of|year|released|born|published|founded|made)\s+(1[0-9]{3}|20[0-9]{2})\b", re.I)
# "a 2009 release", "a 1999 film": a year that classes the thing (indefinite: "the 2014 World
# Cup" names one)
_YEAR_BEFORE_NOUN = re.compile(r"\ban?\s+(1[0-9]{3}|20[0-9]{2})\s+(?=[a-z])")
# "is X over 8,000 m tall", "more than 10 million people": a quantity, not a year
_YEARLIKE = re.compile(r"^(1[0-9]{3}|20[0-9]{2})$")
# words after a bound that say it is not about the answer's value ("more than 3 films"):
# a count of things, read by the count shape
_COUNTED_NOUN = re.compile(r"\s+(?!people\b|inhabitants\b|residents\b|citizens\b)([a-z]+s)\b")


@dataclass(frozen=True)
class ValueConstraint:
    """The answer's value (or the subject's, in a yes/no question) compared with a constant:
    ``op`` one of = > >= < <= between; ``low`` (and ``high`` for between) the constant(s);
    ``year`` when the constant is a year (compared with a date's year); ``unit`` as written;
    ``words`` as the question writes them, at ``span``."""

    op: str
    low: float
    high: float | None = None
    year: bool = False
    unit: str | None = None
    words: str = ""
    span: tuple[int, int] = (0, 0)

    def holds(self, value: float) -> bool:
        """Whether ``value`` (a number, or a year when ``year``) meets the constraint."""
        if self.op == "between":
            return self.low <= value <= (self.high if self.high is not None else self.low)
        return {"=": value == self.low, ">": value > self.low, ">=": value >= self.low,
                "<": value < self.low, "<=": value <= self.low}[self.op]

    def sparql(self, var: str) -> str:
        """A FILTER over ``var``, the compared value (a year when ``year``)."""
        if self.op == "between":
            return f"FILTER({var} >= {_num(self.low)} && {var} <= {_num(self.high)})"
        op = "=" if self.op == "=" else self.op
        return f"FILTER({var} {op} {_num(self.low)})"

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in (None, "", False)}


@dataclass(frozen=True)
class EntityConstraint:
    """The answer related to an entity the question names besides the topic: ``iri`` and
    ``label`` of the entity, the ``words`` that name it ("comedies", "Asian") at ``span``."""

    iri: str
    label: str
    words: str
    span: tuple[int, int] = (0, 0)
    written_as_name: bool = False
    # a name the store holds as a literal value, not an entity (a character on a film
    # performance): its SPARQL term, ``"Indiana Jones"@en``
    literal: str | None = None
    # other entities the same words name (a tag "comedy" beside the genre "Comedy"): the
    # one that joins the most answers is the one meant
    namesakes: tuple[tuple[str, str], ...] = ()

    @property
    def term(self) -> str:
        """The constraint's SPARQL term: the entity's IRI, or the literal."""
        return self.literal or f"<{self.iri}>"

    def to_dict(self) -> dict:
        return {"iri": self.iri, "label": self.label, "words": self.words,
                **({"literal": self.literal} if self.literal else {})}


@dataclass(frozen=True)
class Grounded:
    """What became of one constraint: ``applied`` with the ``relation`` it was read along
    (``backward`` when the answer is the relation's object), or not, with ``why``."""

    constraint: ValueConstraint | EntityConstraint
    applied: bool
    relation: str | None = None
    relation_label: str | None = None
    backward: bool = False
    kept: int | None = None
    of: int | None = None
    why: str = ""

    def to_dict(self) -> dict:
        out = {"constraint": self.constraint.words, "applied": self.applied}
        if isinstance(self.constraint, EntityConstraint):
            out["entity"] = self.constraint.label
        else:
            out["value"] = self.constraint.to_dict()
        if self.relation:
            out["relation"] = self.relation_label or self.relation
            if self.backward:
                out["backward"] = True
        if self.kept is not None:
            out["kept"], out["of"] = self.kept, self.of
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class QueryGraph:
    """A question's whole query beside its chain (the method's answer and its query):
    every constraint read from the question, its ``aggregation`` (count, argmax, argmin,
    or None) and its ``answer_form``; ``grounded`` says what became of each constraint."""

    question: str
    answer_form: str
    aggregation: str | None = None
    constraints: list = field(default_factory=list)
    grounded: list[Grounded] = field(default_factory=list)

    @property
    def dropped(self) -> list[Grounded]:
        """Constraints the question writes that could not be applied: values, and entities
        written as names (a common word that names an entity, "countries", may be no
        constraint at all)."""
        return [g for g in self.grounded if not g.applied and _said(g.constraint)]

    @property
    def shown(self) -> list[Grounded]:
        """What the answer reports: every constraint that cut the answers or could not be
        applied; a common word every answer meets ("countries": each is a country) only in
        the trace."""
        return [g for g in self.grounded if (g.applied and (_said(g.constraint) or (g.kept or 0) < (g.of or 0)))
                or g in self.dropped]

    def to_dict(self) -> dict:
        return {"answer_form": self.answer_form, "aggregation": self.aggregation,
                "constraints": [c.to_dict() for c in self.constraints],
                "grounded": [g.to_dict() for g in self.grounded]}


def _said(c) -> bool:
    return isinstance(c, ValueConstraint) or c.written_as_name


def _num(value: float | None) -> str:
    return str(int(value)) if value is not None and float(value).is_integer() else str(value)


def _number(text: str, scale: str | None) -> float:
    value = float(re.sub(r"[,\u202f ]", "", text))
    return value * SCALES.get((scale or "").lower(), 1.0)


def read_value_constraints(question: str) -> list[ValueConstraint]:
    """The value constraints ``question`` writes, in question order (names blanked first:
    a title's digits are not a constant). "in 1985" is a year equal; "before 1980" a year
    below; "over 8,000 m" a quantity above; "more than 3 films" is a count, not a value,
    and is left to the count shape."""
    # a bracketed name is a name ("[The Class of 1984]"), whatever its words: blanked, same length
    question = re.sub(r"\[[^\[\]]*\]", lambda m: " " * len(m.group()), question)
    found: list[ValueConstraint] = []
    taken: list[tuple[int, int]] = []

    def add(c: ValueConstraint) -> None:
        if any(c.span[0] < e and s < c.span[1] for s, e in taken):
            return
        taken.append(c.span)
        found.append(c)

    for m in [*_BETWEEN.finditer(question), *_FROM_TO.finditer(question)]:
        low, high = _number(m.group(1), m.group(2)), _number(m.group(3), m.group(4))
        year = bool(_YEARLIKE.match(m.group(1)) and _YEARLIKE.match(m.group(3))) and not m.group(2)
        add(ValueConstraint("between", min(low, high), max(low, high), year, m.group(5), m.group(0), m.span()))
    for m in _DECADE.finditer(question):
        start = float(m.group(1) + "0")
        add(ValueConstraint("between", start, start + 9, True, None, m.group(0), m.span()))
    for m in _BOUND.finditer(question):
        word, digits, scale, unit = m.group(1).lower(), m.group(2), m.group(3), m.group(4)
        year = bool(_YEARLIKE.match(digits)) and not scale and not unit
        if word == "from" and not year:
            continue  # "from 3 countries": not a bound
        if word == "from":
            # "from 2005 on" is a lower bound; "is X from 1950", "a comedy from 1934" the year itself
            onwards = _ONWARDS.match(question, m.end())
            end = onwards.end() if onwards else m.end()
            add(ValueConstraint(_LOWER_BOUNDS["from"] if onwards else "=", _number(digits, None), None, True, None,
                                question[m.start():end], (m.start(), end)))
            continue
        if word in ("within", "up to") and year:
            continue
        if not year and not unit and not scale and _COUNTED_NOUN.match(question, m.end()):
            continue  # "more than 3 films": a count
        op = _LOWER_BOUNDS.get(word) or _UPPER_BOUNDS[word]
        add(ValueConstraint(op, _number(digits, scale), None, year, unit, m.group(0), m.span()))
    for m in _YEAR_BEFORE_NOUN.finditer(question):
        add(ValueConstraint("=", float(m.group(1)), None, True, None, m.group(1), m.span(1)))
    for m in _IN_YEAR.finditer(question):
        start = m.start(2) if m.group(1).lower() in ("released", "born", "published", "founded", "made") else m.start()
        add(ValueConstraint("=", float(m.group(2)), None, True, None, question[start:m.end()], (start, m.end())))
    return sorted((open_ended(c, question) for c in found), key=lambda c: c.span)


def open_ended(c: ValueConstraint, question: str) -> ValueConstraint:
    """``c``, a year equal (the only constants read as equal), as a bound when the
    question's next words open its end ("in 1991 or later": 1991 or above)."""
    end = _OPEN_END.match(question, c.span[1]) if c.op == "=" else None
    if end is None:
        return c
    word = (end.group(1) or end.group(2)).lower()
    return replace(c, op=_OPEN_END_OPS[word], words=question[c.span[0]:end.end()], span=(c.span[0], end.end()))


_HOW_MANY = re.compile(r"\bhow (?:many|much)\b|\bthe (?:total )?number of\b|\bcount\b", re.I)
_WH_ENTITY = re.compile(r"^\s*(?:which|who|whom|whose|what|name|list|give|tell)\b", re.I)
_WH_VALUE = re.compile(r"^\s*(?:when|what year|in what year|in which year|how (?:high|tall|long|old|big|large|"
                       r"deep|far|heavy|wide|much does|fast))\b|\bwhat (?:is|was) the (?:date|year|height|length|"
                       r"population|area|elevation|number)\b", re.I)


def answer_form(question: str, shape_kind: str, yes_no: bool = False) -> str:
    """The form the answer must take, from the question: ``yes_no``, ``number``, ``value``
    or ``entities``."""
    if shape_kind == "boolean" or yes_no:
        return "yes_no"
    if shape_kind == "count" or _HOW_MANY.search(question):
        return "number"
    if _WH_VALUE.search(question):
        return "value"
    return "entities"


def form_fits(form: str, answers: Sequence[str], values: Sequence[dict | None], counted: bool) -> str | None:
    """Why an answer does not have ``form``, or None when it does: a "how many" question is
    never answered with a list, a "which/who/what" question never with a bare count."""
    kinds = [(v or {}).get("kind") for v in values]
    if form == "number" and len(answers) > 1:
        return f"a 'how many' question answered with a list of {len(answers)}"
    if form == "entities" and counted:
        return "a 'which/who/what' question answered with a count"
    if form == "yes_no" and answers and not all(k == "boolean" for k in kinds):
        return "a yes/no question answered with something other than yes or no"
    return None


__all__ = ["ValueConstraint", "EntityConstraint", "Grounded", "QueryGraph", "read_value_constraints",
           "answer_form", "form_fits"]

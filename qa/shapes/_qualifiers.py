"""Questions a fact's qualifiers answer, on a store ingested with ``--statements full``.

Wikidata keeps, beside each direct fact, a statement node: ``wd:Q837 p:P1082 ?st . ?st
ps:P1082 26494504 ; pq:P585 2011``. Two kinds of question read those nodes:

* **at a time**: "What was the population of Nepal in 2011?", "Who was X's spouse in
  1995?": the statement of the asked relation whose time qualifiers hold that year (a
  point in time in it, or a start before and an end after it) gives the answer;
* **the qualifier itself**: "When did X start playing for Y?": the statement joining X to
  Y gives the date qualifier the question's words name ("start" → start time).

The statements are enumerated from the store; the encoder picks the relation and the
qualifier against the question's words; the statement's facts are the evidence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyoxigraph as ox

from kgstore.errors import QueryError, UnsafeQueryError
from kgstore.terms import P, PQ, PS, WD, WDT

from ..sandbox import run_sparql
from ..steps._result import Answer, Evidence
from ..steps._retrieval import store_labels
from ..steps._values import comparable, is_date, literal_value
from ._mentions import Mention
from ._reading import ShapeReading

MAX_STATEMENTS = 500


@dataclass
class Statement:
    """One statement node of the subject: its relation, value and qualifiers."""

    node: str
    pid: str
    value: object  # ox.NamedNode | ox.Literal
    qualifiers: dict[str, list[ox.Literal | ox.NamedNode]] = field(default_factory=dict)

    def dated(self) -> dict[str, list[float]]:
        """The qualifiers whose values are dates, as fractional years."""
        out = {}
        for q, values in self.qualifiers.items():
            years = [comparable(v.value, v.datatype.value if v.datatype else None) for v in values
                     if isinstance(v, ox.Literal) and is_date(v.value, v.datatype.value if v.datatype else None)]
            if years and None not in years:
                out[q] = years
        return out

    def holds_in(self, year: int, roles: dict[str, str]) -> bool:
        """A time qualifier puts the statement in ``year``: a point in time in it, or a
        start no later and an end no earlier (a start without an end is still open).
        ``roles`` tells a qualifier's role (:func:`time_role`)."""
        dated = self.dated()
        starts = [y for q, ys in dated.items() if roles.get(q) == "start" for y in ys]
        ends = [y for q, ys in dated.items() if roles.get(q) == "end" for y in ys]
        points = [y for q, ys in dated.items() if roles.get(q, "point") == "point" for y in ys]
        if any(int(y) == year for y in points):
            return True
        if not starts:
            return False
        return min(starts) < year + 1 and (not ends or max(ends) >= year)


# a time qualifier's role, from its label's words ("start time", "end time", "point in time")
_START_LABEL = re.compile(r"\b(start|begin\w*|from|since)\b", re.I)
_END_LABEL = re.compile(r"\b(end|until|till)\b", re.I)
def time_role(label: str) -> str:
    """"start", "end" or "point": what a time qualifier's label says it marks."""
    return "start" if _START_LABEL.search(label) else "end" if _END_LABEL.search(label) else "point"


def statements(store, iri: str, *, timeout_s: float = 5.0) -> list[Statement]:
    query = ("SELECT ?st ?pp ?v ?q ?qv WHERE {\n"
             f"  <{iri}> ?pp ?st . FILTER(STRSTARTS(STR(?pp), \"{P}\") && isIRI(?st))\n"
             "  ?st ?ps ?v . FILTER(STRSTARTS(STR(?ps), \"" + PS + "\"))\n"
             "  OPTIONAL { ?st ?q ?qv . FILTER(STRSTARTS(STR(?q), \"" + PQ + "\")) }\n"
             f"}} LIMIT {MAX_STATEMENTS}")
    try:
        rows = run_sparql(store, query, timeout_s=timeout_s, max_rows=MAX_STATEMENTS).rows
    except (QueryError, UnsafeQueryError):
        return []
    found: dict[str, Statement] = {}
    for row in rows:
        st, pp, v = row.get("st"), row.get("pp"), row.get("v")
        if not isinstance(st, ox.NamedNode) or not isinstance(pp, ox.NamedNode) or v is None:
            continue
        pid = pp.value[len(P):]
        if "/" in pid:  # p:statement/… and the like: not a property's own statement link
            continue
        stmt = found.setdefault(st.value, Statement(st.value, pid, v))
        q, qv = row.get("q"), row.get("qv")
        qid = q.value[len(PQ):] if isinstance(q, ox.NamedNode) else ""
        # pqv:/… value nodes repeat the qualifier in full: the plain pq: value is enough
        if qid and "/" not in qid and qv is not None and qv not in stmt.qualifiers.get(qid, []):
            stmt.qualifiers.setdefault(qid, []).append(qv)
    return list(found.values())


def _facts(store, subject: Mention, stmt: Statement, labels: dict[str, str], qualifier: str | None = None) -> list[Evidence]:
    value = stmt.value
    literal = isinstance(value, ox.Literal)
    out = [Evidence(s=subject.iri, p=f"{P}{stmt.pid} / {PS}{stmt.pid}", o=value.value, s_label=subject.label,
                    p_label=labels.get(stmt.pid), o_label=None if literal else labels.get(value.value),
                    literal=literal, datatype=value.datatype.value if literal and value.datatype else None,
                    via=stmt.node)]
    for q, values in stmt.qualifiers.items():
        if qualifier and q != qualifier:
            continue
        for qv in values:
            lit = isinstance(qv, ox.Literal)
            out.append(Evidence(s=stmt.node, p=f"{PQ}{q}", o=qv.value, p_label=labels.get(q),
                                o_label=None if lit else labels.get(qv.value), literal=lit,
                                datatype=qv.datatype.value if lit and qv.datatype else None))
    return out


def _labels(store, stmts: list[Statement]) -> dict[str, str]:
    """Labels of the statements' relations and qualifiers (by property id) and entity values."""
    pids = {s.pid for s in stmts} | {q for s in stmts for q in s.qualifiers}
    iris = {WDT + p for p in pids} | {WD + p for p in pids} | {s.value.value for s in stmts
                                                              if isinstance(s.value, ox.NamedNode)}
    found = store_labels(store, iris)
    out = {p: found.get(WDT + p) or found.get(WD + p) or p for p in pids}
    out.update({k: v for k, v in found.items() if k not in out})
    return out


def answer_with_qualifiers(store, index, reading: ShapeReading, method: str, run, *,
                           timeout_s: float = 5.0) -> Answer | None:
    """The answer the statement nodes give, or None when the question is not of a kind
    they answer, the store has none, or none fits."""
    # the entities named as names come first: "how many people lived in Italy" is about Italy
    mentions = [m for m in reading.mentions if m.written_as_name] + [m for m in reading.mentions
                                                                     if not m.written_as_name]
    if not mentions:
        return None
    if reading.year is None and not (reading.asks_when and len(mentions) >= 2):
        return None
    subject = mentions[0]
    stmts = statements(store, subject.iri, timeout_s=timeout_s)
    if not stmts:
        return None
    labels = _labels(store, stmts)
    if reading.year is not None:
        return _at_time(store, index, reading, subject, stmts, labels, method, run)
    return _qualifier_value(store, index, reading, subject, mentions[1], stmts, labels, method, run)


def _best(index, text: str, names: list[str]) -> tuple[int, float]:
    vectors = index.embed([text] + names)
    sims = (vectors[1:] @ vectors[0]).tolist()
    i = max(range(len(names)), key=lambda k: sims[k])
    return i, sims[i]


def _at_time(store, index, reading: ShapeReading, subject, stmts, labels, method, run) -> Answer | None:
    year, asked = reading.year, reading.asked_at_time
    timed = [s for s in stmts if s.dated()]
    pids = list(dict.fromkeys(s.pid for s in timed))
    if not pids:
        return None
    i, score = _best(index, asked, [labels.get(p, p) for p in pids])
    pid = pids[i]
    roles = {q: time_role(labels.get(q, q)) for s in timed for q in s.dated()}
    held = [s for s in timed if s.pid == pid and s.holds_in(year, roles)]
    run.record("qualifiers", kind="at_time", year=year, relation=labels.get(pid, pid), score=round(score, 4),
               statements=len([s for s in timed if s.pid == pid]), held=len(held))
    if not held:
        return None
    answers, iris, values, evidence = [], [], [], []
    for s in held:
        v = s.value
        if isinstance(v, ox.Literal):
            lv = literal_value(v.value, v.datatype.value if v.datatype else None)
            answers.append(lv.text), iris.append(None), values.append(lv.to_dict())
        else:
            answers.append(labels.get(v.value, v.value)), iris.append(v.value), values.append(None)
        evidence += _facts(store, subject, s, labels)
    return Answer(question=reading.question, method=method, answers=answers, answer_iris=iris, values=values,
                  evidence=evidence, shape="qualifier", meant=[subject.to_dict()])


def _qualifier_value(store, index, reading: ShapeReading, subject, other, stmts, labels, method, run) -> Answer | None:
    asked = reading.asked_at_time
    joining = [s for s in stmts if isinstance(s.value, ox.NamedNode) and s.value.value == other.iri and s.dated()]
    qualifiers = list(dict.fromkeys(q for s in joining for q in s.dated()))
    if not qualifiers:
        return None
    role = reading.time_role
    fitting = [q for q in qualifiers if time_role(labels.get(q, q)) == role] or qualifiers
    i, score = _best(index, asked, [labels.get(q, q) for q in fitting])
    q = fitting[i]
    run.record("qualifiers", kind="qualifier", asked=role, qualifier=labels.get(q, q), score=round(score, 4),
               statements=len(joining))
    answers, values, evidence = [], [], []
    for s in joining:
        for qv in s.qualifiers.get(q, []):
            if isinstance(qv, ox.Literal):
                lv = literal_value(qv.value, qv.datatype.value if qv.datatype else None)
                if lv.text not in answers:
                    answers.append(lv.text), values.append(lv.to_dict())
        evidence += _facts(store, subject, s, labels, qualifier=q)
    if not answers:
        return None
    return Answer(question=reading.question, method=method, answers=answers, answer_iris=[None] * len(answers),
                  values=values, evidence=evidence, shape="qualifier", meant=[subject.to_dict(), other.to_dict()])


__all__ = ["answer_with_qualifiers", "statements", "Statement"]

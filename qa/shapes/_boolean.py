"""Yes/no questions: a check of facts between the entities the question names.

"Is Mount Everest in Nepal?" names a subject (the first entity) and one or more values.
For each value:

* **yes** when the store holds a fact joining the subject to it (either direction), and
  no other relation the subject holds for that kind of value fits the question's words
  clearly better ("was X born in Chicago" is not answered by X's residence in Chicago when
  X's place of birth is elsewhere);
* **no** when it does not, but the subject holds a relation whose values are of the
  value's kind (Chile is the "country" of something, and Everest has countries: Nepal and
  China), the relation that best fits the question's words; those values are the evidence;
* otherwise **no answer**: the store is open-world, and a missing fact is not a false one.

Several values ("does X border both Y and Z") are all checked: yes only when each is.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..steps._result import Answer, Evidence, Refusal
from ..steps._values import comparable
from ._attributes import Attribute, entity_attributes, rank_attributes, value_roles
from ._mentions import Mention, other_forms
from ._reading import ShapeReading

# words that join two roles of one subject to one value
_CONJOINED = frozenset({"both", "also", "and"})
# How much better another relation must fit the question than the joining one to say no
OTHER_RELATION_MARGIN = 0.15
EVIDENCE_PER_VALUE = 10
# how many of the subject's other values are read for the roles things of their kind hold
SIBLINGS = 5
BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"


@dataclass
class Check:
    """The verdict on one value: ``True``, ``False`` or None (the store cannot say)."""

    value: Mention
    verdict: bool | None
    facts: list[Evidence] = field(default_factory=list)
    relation: str | None = None
    why: str = ""

    def to_dict(self) -> dict:
        return {"value": self.value.label, "verdict": self.verdict, "relation": self.relation, "why": self.why,
                "facts": [f.text() for f in self.facts[:5]]}


def check_value(store, embed, subject: Mention, value: Mention, asked: str,
                attributes: dict, *, timeout_s: float, roles_asked: int = 1) -> Check:
    """The verdict on ``value``; ``roles_asked=2`` for a question that asks for two roles at
    once ("did X both write and direct Y"): yes only when two relations join them."""
    joining = [a for a in attributes.values() if value.iri in a.other_ends()]
    roles = value_roles(store, value.iri, timeout_s=timeout_s)
    kin = [a for a in attributes.values() if a.key in roles and a not in joining and not a.literal]
    number = comparable(value.label, None)
    if number is not None:
        # "is X a 1981 film": a number is also compared with the subject's own numbers and
        # dates (its release year stored as a literal, not as the entity "1981")
        numeric = [a for a in attributes.values() if a.literal and a.ordered and a not in joining]
        joining += [a for a in numeric if _holds(a, number)]
        kin += [a for a in numeric if not _holds(a, number) and a.dates == _looks_like_year(number)]
    ranked = rank_attributes(embed, asked, joining + kin)
    scores = {(joining + kin)[i].key: s for s, i in ranked}
    if joining and roles_asked > 1:
        others = _other_roles(store, value, joining, attributes, timeout_s=timeout_s)
        scores |= {others[i].key: s for s, i in rank_attributes(embed, asked, others)}
        return _both(subject, value, joining, kin + others, scores)
    if joining:
        best_join = max(joining, key=lambda a: scores[a.key])
        rival = max(kin, key=lambda a: scores[a.key], default=None)
        if rival is None or scores[rival.key] - scores[best_join.key] <= OTHER_RELATION_MARGIN:
            facts = [f for f in best_join.facts if value.iri in (f.s, f.o)]
            return Check(value, True, facts, best_join.label,
                         f"the store holds {_fact(subject, best_join, value)}")
        return _no(value, rival, f"{rival.label} fits the question better than {best_join.label}")
    if kin:
        best = max(kin, key=lambda a: scores[a.key])
        return _no(value, best, f"{subject.label} has other values of {best.label}")
    return Check(value, None, why=f"the store holds nothing of {subject.label} of the kind {value.label} is")


def _both(subject: Mention, value: Mention, joining: list[Attribute], kin: list[Attribute], scores: dict) -> Check:
    """Two roles asked at once: yes when the two relations that fit the question best both
    join subject and value; no when one of them holds only other values (the store says
    which: the subject's other films, or the film's other actors); otherwise, when the
    other role asked is one the store holds nothing of here, it cannot say."""
    joined = sorted(joining, key=lambda a: -scores[a.key])
    # the two roles asked are the two relations that fit the question best, joining or not
    asked = sorted(joining + kin, key=lambda a: -scores[a.key])[:2]
    if len(joined) >= 2 and all(a in joining for a in asked):
        facts = [f for a in asked for f in a.facts if value.iri in (f.s, f.o)]
        return Check(value, True, facts, " and ".join(a.label for a in asked),
                     f"the store holds {_fact(subject, asked[0], value)} and {_fact(subject, asked[1], value)}")
    rival = next((a for a in asked if a not in joining), None) or max(kin, key=lambda a: scores[a.key], default=None)
    if rival is not None and not rival.facts:
        return Check(value, None, why=f"the store holds no {rival.label} of {value.label}")
    if rival is None:
        return Check(value, None, why=f"the store holds one relation of {subject.label} to {value.label}, "
                                      "and nothing of the other role asked")
    facts = [f for f in joined[0].facts if value.iri in (f.s, f.o)] + rival.facts[:EVIDENCE_PER_VALUE]
    return Check(value, False, facts, rival.label,
                 f"the store holds {_fact(subject, joined[0], value)}, "
                 f"and {rival.label} with other values only")


def _other_roles(store, value: Mention, joining: list[Attribute], attributes: dict, *,
                 timeout_s: float) -> list[Attribute]:
    """The roles a two-roles question may mean besides those that join subject and value
    (``joining``) and the subject's other values of them (kin):

    * **played by others**: relations the value holds that the subject holds to nothing. A
      director who acted in no film has no "starred actors" of his own, so "did X both direct
      and act in Y" reads that role from Y, whose facts say who plays it;
    * **the subject's, of other things of the value's kind**: X directed other films (films
      X also wrote or acted in), and Y has no director in the store. X's facts say which
      films X directed, as the one-role check reads a subject's other values of a kind;
    * **held by neither**: relations the subject's other values in the joining relations
      hold, which neither X nor Y does. These have no facts: when one is asked, the store
      cannot say.
    """
    held = entity_attributes(store, value.iri, timeout_s=timeout_s)
    value_keys = {(relation, not backward) for relation, backward in held}
    out = {(relation, not backward): Attribute(relation, not backward, attribute.label, attribute.facts)
           for (relation, backward), attribute in held.items()
           if not attribute.literal and (relation, not backward) not in attributes}
    kind = _ends(joining) - {value.iri}
    for attribute in attributes.values():
        if not attribute.literal and attribute.key not in value_keys and set(attribute.other_ends()) & kind:
            out[attribute.key] = attribute
    for iri in sorted(kind)[:SIBLINGS]:
        for (relation, backward), attribute in entity_attributes(store, iri, timeout_s=timeout_s).items():
            key = (relation, not backward)
            if not attribute.literal and key not in value_keys:
                out.setdefault(key, Attribute(relation, not backward, attribute.label))
    return list(out.values())


def _fact(subject: Mention, attribute: Attribute, value: Mention) -> str:
    """One fact joining subject and value as the store holds it ("Yesterday | in language |
    Zulu"), for the reason a verdict gives."""
    ends = (value.label, subject.label) if attribute.backward else (subject.label, value.label)
    return f"{ends[0]} | {attribute.label} | {ends[1]}"


def _ends(attributes: list[Attribute]) -> set[str]:
    return {iri for a in attributes for iri in a.other_ends()}


def _looks_like_year(number: float) -> bool:
    return number.is_integer() and 1000 <= number <= 2100


def _holds(attribute: Attribute, number: float) -> bool:
    """Whether one of ``attribute``'s values is ``number``; a year is held by a date of it."""
    year = attribute.dates and _looks_like_year(number)
    return any(v == number or (year and int(v // 1) == number) for v in attribute.numbers())


def _names_the_kind(check: Check, checks: list[Check], adjacent: frozenset) -> bool:
    """Whether ``check``'s value is a common word that closes the noun phrase of a value the
    store joins to the subject: "film" of "is X a Comedy film?" names the kind of thing X
    is, not a second value (a store may hold a tag "film" that X lacks). Only a "no" on
    such a word is set aside; "is X a comedy and a drama" keeps both values."""
    if check.verdict is not False or check.value.written_as_name:
        return False
    return any(other.verdict and (other.value.span, check.value.span) in adjacent for other in checks if other is not check)


def _no(value: Mention, attribute: Attribute, why: str) -> Check:
    return Check(value, False, attribute.facts[:EVIDENCE_PER_VALUE], attribute.label, why)


def answer_boolean(store, index, reading: ShapeReading, method: str, run, *, timeout_s: float = 5.0) -> Answer | None:
    """The yes/no answer with its facts, a refusal when the store cannot say, or None when
    the question does not name a subject and a value to check."""
    mentions = reading.mentions
    if len(mentions) < 2:
        return None
    subject, values = mentions[0], mentions[1:]
    asked = reading.asked_of_names
    attributes = entity_attributes(store, subject.iri, timeout_s=timeout_s)
    # one value and two roles joined ("did X both write and direct Y", "was Y written and
    # directed by X"): both must hold; several values ("both Y and Z") are each checked
    roles = 2 if len(values) == 1 and _CONJOINED & set(asked.lower().replace(",", " ").split()) else 1
    checks = [check_value(store, index.embed, subject, v, asked, attributes, timeout_s=timeout_s, roles_asked=roles)
              for v in values]
    for i, check in enumerate(checks):
        if check.verdict is False:
            # "is X a sports movie": the tag "sports" is not X's, the genre "Sport" may be;
            # "is X a comedy": the genre Comedy may be X's where the tag comedy is not. A
            # "no" stands only when no namesake and no other form of the name joins the subject
            namesakes = [replace(check.value, iri=iri, namesakes=()) for iri in check.value.namesakes]
            for other in namesakes + other_forms(index, check.value):
                again = check_value(store, index.embed, subject, other, asked, attributes, timeout_s=timeout_s,
                                    roles_asked=roles)
                if again.verdict:
                    checks[i] = again
                    break
    # a common word that also names an entity ("the cast of", "a film") is not a value to
    # check when a name the question writes as one is judged
    if any(c.verdict is not None for c in checks):
        checks = [c for c in checks if c.verdict is not None or c.value.written_as_name]
    checks = [c for c in checks if not _names_the_kind(c, checks, reading.adjacent)]
    run.record("boolean", subject=subject.to_dict(), asked=asked, checks=[c.to_dict() for c in checks])
    meant = [m.to_dict() for m in mentions]
    if any(c.verdict is False for c in checks):
        verdict, used = False, [c for c in checks if c.verdict is False]
    elif all(c.verdict for c in checks):
        verdict, used = True, checks
    else:
        unknown = next(c for c in checks if c.verdict is None)
        return Answer(question=reading.question, method=method, shape="boolean", meant=meant,
                      refusal=Refusal("no_answer", f"the store cannot say: {unknown.why}"))
    return yes_no_answer(reading.question, method, verdict, [f for c in used for f in c.facts], shape="boolean", meant=meant)


def yes_no_answer(question: str, method: str, verdict: bool, evidence: list[Evidence], *, shape: str,
                  meant: list[dict]) -> Answer:
    """*yes* or *no*, typed as an xsd:boolean, with the facts it rests on."""
    text = "yes" if verdict else "no"
    return Answer(question=question, method=method, answers=[text], answer_iris=[None], evidence=evidence,
                  values=[{"value": text, "lexical": "true" if verdict else "false", "datatype": BOOLEAN,
                           "kind": "boolean"}],
                  shape=shape, meant=meant)


__all__ = ["answer_boolean", "check_value", "Check", "yes_no_answer"]

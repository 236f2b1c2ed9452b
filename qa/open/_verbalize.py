"""Facts as plain sentences, one template a fact ("Nepal's capital is Kathmandu."). Pure
functions. They stand in for a written sentence the checker rejects, and they are the
template baseline of ``bench/open_answers.py``."""
from __future__ import annotations

from typing import Sequence

from ._facts import Fact


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def values_text(values: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    values = list(values)
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " and " + values[-1]


def fact_clause(subject: str, relation: str, values: Sequence[str]) -> str:
    """``Nepal's capital is Kathmandu``; a relation with several values lists them."""
    verb = "are" if len(values) > 1 else "is"
    if relation.split()[0] in ("is", "was", "are", "were", "has", "had"):  # "is part of", "was a crew member of"
        return f"{subject} {relation} {values_text(values)}"
    if relation == "description":
        return f"{subject} is {_article(values[0]) if len(values) == 1 else values_text(values)}"
    return f"{possessive(subject)} {relation} {verb} {values_text(values)}"


def fact_sentence(fact: Fact) -> str:
    return _sentence(fact_clause(fact.subject, fact.relation, fact.values))


def facts_sentence(facts: Sequence[Fact]) -> str:
    """Several facts in one sentence: "Nepal's capital is Kathmandu and its continent is Asia."."""
    clauses = []
    for i, f in enumerate(facts):
        if i and f.subject == facts[0].subject and f.relation != "description":
            verb = "are" if len(f.values) > 1 else "is"
            clauses.append(f"its {f.relation} {verb} {values_text(f.values)}")
        else:
            clauses.append(fact_clause(f.subject, f.relation, f.values))
    return _sentence(values_text(clauses)) if clauses else ""


def verbalize(facts: Sequence[Fact]) -> list[str]:
    """One sentence a fact: the template verbalizer."""
    return [fact_sentence(f) for f in facts]


def _article(description: str) -> str:
    """A description as a predicate: "English writer" → "an English writer"."""
    first = description.split()[0].lower() if description.split() else ""
    if first in ("a", "an", "the") or not description[:1].isalpha():
        return description
    return ("an " if description[0].lower() in "aeiou" else "a ") + description


def _sentence(clause: str) -> str:
    clause = clause.strip()
    return (clause[0].upper() + clause[1:] + ("" if clause.endswith(".") else ".")) if clause else ""

"""Not-in-store questions: a benchmark's questions with the topic entity renamed to a
plausible name the store does not hold. Deterministic, so every run scores the same set.

A right method refuses these; a method that answers anyway has invented its answer or
grounded it on a namesake. The name is spliced from two topics of the same benchmark (the
first words of one, the last word of another, written the way the question writes names:
"Joel Zwick" and "Sharon Tate" give "Joel Tate"; "thomas_lamb_eliot" and "anne_of_denmark"
give "thomas_lamb_denmark"), so it looks like the names the store does hold.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Sequence

from ._datasets import QAItem

_SPLIT = re.compile(r"[ _]+")


def unanswerable_items(items: Sequence[QAItem], pool: Sequence[QAItem],
                       in_store: Callable[[str], bool]) -> list[QAItem]:
    """For each item whose question writes its topic, the question with the topic renamed
    to a name absent from the store (``in_store(name)`` false); gold answers emptied.
    Names are spliced with topics of ``pool``, taken in a fixed order."""
    donors = [t for t in dict.fromkeys(i.topic for i in pool if i.topic) if len(_SPLIT.split(t.strip())) >= 1]
    out = []
    for n, item in enumerate(items):
        topic = item.topic
        if not topic or not donors:
            continue
        at = item.question.lower().find(topic.lower())
        if at < 0:
            continue
        for k in range(1, len(donors)):
            name = spliced_name(topic, donors[(n * 7 + k) % len(donors)])
            if name and name.lower() != topic.lower() and not in_store(name):
                question = item.question[:at] + name + item.question[at + len(topic):]
                out.append(replace(item, id=item.id + ":absent", question=question, gold=(), topic=name,
                                       gold_values=None, sparql=None, unscorable=None))
                break
    return out


def spliced_name(topic: str, donor: str) -> str | None:
    """The words of ``topic`` but its last, then the last word of ``donor``, joined the
    way ``topic`` joins its words; a one-word topic gets the donor's last word appended."""
    words, other = _SPLIT.split(topic.strip()), _SPLIT.split(donor.strip())
    if not words or not other or not other[-1]:
        return None
    joiner = "_" if "_" in topic else " "
    head = words[:-1] if len(words) > 1 else words
    if other[-1].lower() == words[-1].lower():
        return None
    return joiner.join(head + [other[-1]])


__all__ = ["unanswerable_items", "spliced_name"]

"""Names the store lacks, written another way: the model asked whether the question means
an entity that writes all of the name's words but one (:meth:`QuestionReading.near_absent`).

The linker and the word checks cannot tell "vince scully" (*Vin Scully*) or "riviera
casino" (*Riviera*) from a name spliced from two that the store lacks ("Temuera Venable"
beside *Temuera Morrison*): each writes all its words but one. A yes or a no, asked of one
entity at a time, is a choice the model makes well; the entity stands only on a clear yes.
"""
from __future__ import annotations

from typing import Sequence

from ._choose import ask_yes
from ._reading import Mention, QuestionReading

# at most this many entities are asked about, the linker's best first
NAME_CHECKS = 3


def confirmed_names(run, reading: QuestionReading, near: Sequence[tuple[str, Mention]], *,
                    threshold: float, step: str = "compose") -> tuple[Mention, ...]:
    """The mentions of ``near`` (a name as the draft wrote it, and a mention with the
    entities that write all its words but one) kept with the entities the model says the
    question means, P(yes) ≥ ``threshold``; each check is in the trace (``name_checks``)."""
    asked = sorted(((name, m, e) for name, m in near for e in m.entities), key=lambda t: -t[2].score)[:NAME_CHECKS]
    kept: dict[tuple[int, int], list] = {}
    mentions = {m.span: m for _, m, _ in asked}
    checks = []
    for name, mention, entity in asked:
        p = ask_yes(run, step, "compose_name", {"question": reading.text, "typed": name.replace("_", " "),
                                                "label": entity.label})
        checks.append({"name": name, "entity": entity.label, "p": round(p, 4)})
        if p >= threshold:
            kept.setdefault(mention.span, []).append(entity)
    run.record(step, name_checks=checks)
    return tuple(Mention(mentions[span].text, span, tuple(entities), mentions[span].bracketed)
                 for span, entities in kept.items())


__all__ = ["confirmed_names", "NAME_CHECKS"]

"""Names the store lacks, written another way: the model asked whether the question means
an entity that writes all of the name's words but one (:meth:`QuestionReading.near_absent`).

The linker and the word checks cannot tell "vince scully" (*Vin Scully*) or "riviera
casino" (*Riviera*) from a name spliced from two that the store lacks ("Temuera Venable"
beside *Temuera Morrison*): each writes all its words but one. A yes or a no, asked of one
entity at a time, is a choice the model makes well; the entity stands only on a clear yes.
A mention that writes an entity's whole name in a derived form ("jamaican", "uk") is not
asked about: it stands (:func:`derived_names`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ._choose import ask_yes
from ._reading import Mention, QuestionReading, writes_whole

# at most this many entities are asked about, the linker's best first
NAME_CHECKS = 3


def derived_names(near: Sequence[tuple[str, Mention]]) -> tuple[Mention, ...]:
    """The mentions of ``near`` whose typed words write the whole name of one of their
    entities in a form derived from it: an adjective or a people ("jamaican" of *Jamaica*,
    "egyptian" of *Egypt*), or its initials ("uk" of *United Kingdom*); each with those
    entities only. The draft's name around such words ("[ENT: Jamaican money]") is the
    draft's joining of the adjective to what it qualifies, not another name: asked whether
    "Jamaican money" means *Jamaica*, the model rightly says no, and the question is lost.
    A name spliced from two writes one of them as it is ("Kismet Venable"): the model is
    still asked (:func:`confirmed_names`)."""
    out: dict[tuple[int, int], Mention] = {}
    for _, mention in near:
        entities = tuple(e for e in mention.entities if writes_whole(mention.text, e.label))
        if entities and mention.span not in out:
            out[mention.span] = replace(mention, entities=entities)
    return tuple(out.values())


def confirmed_names(run, reading: QuestionReading, near: Sequence[tuple[str, Mention]], *,
                    threshold: float, step: str = "compose") -> tuple[Mention, ...]:
    """The mentions of ``near`` (a name as the draft wrote it, and a mention with the
    entities that write all its words but one) kept with the entities the model says the
    question means, P(yes) ≥ ``threshold``; each check is in the trace (``name_checks``).
    Mentions that write an entity's whole name in a derived form stand unasked
    (:func:`derived_names`)."""
    derived = derived_names(near)
    standing = {d.span for d in derived}
    near = [(name, m) for name, m in near if m.span not in standing]
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
    run.record(step, name_checks=checks, **({"derived_names": [e.label for d in derived for e in d.entities]}
                                            if derived else {}))
    return derived + tuple(Mention(mentions[span].text, span, tuple(entities), mentions[span].bracketed)
                           for span, entities in kept.items())


__all__ = ["confirmed_names", "derived_names", "NAME_CHECKS"]

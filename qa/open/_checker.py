"""The checker: every name, number and date a written sentence states must come from the
facts it cites or from the question. Pure functions.

A *claim* is a number (``1952``, ``29,164,578``), a month, or a word written with a capital
that is not the sentence's opening function word ("The", "He", "In"). A claim is backed
when the cited facts' words (subject, relation, values, and the values' stored forms, so
``1952-03-11`` backs "11 March 1952" and "1952") or the question's words hold it. A
sentence with a claim that is not backed says something from the model's own memory.

A cited fact about another subject than the answer's topic must be *named* by the sentence
(a word of its subject's name): "He" stands for the topic, so "He was influenced by Robert
Burns" citing "John Steinbeck | influenced by | Robert Burns" turns the fact around, though
every name in it is backed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

from ._facts import Fact

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# words that open an English sentence with a capital without naming anything
_OPENERS = frozenset("""
a an the he she it they we his her its their this that these those there here in on at of for from with
by as after before during since until when while where also however additionally furthermore moreover
today overall notably besides both each many most some one its born located known famous situated founded
""".split())
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d\d)-(\d\d)")
_MONTHS = ("January February March April May June July August September October November December").split()


@dataclass(frozen=True)
class Check:
    """The checker's verdict on one sentence: ``unsupported`` lists the claims no cited
    fact or question word backs; ``bad_cites`` the cited numbers that name no fact."""

    unsupported: tuple[str, ...] = ()
    bad_cites: tuple[int, ...] = ()
    no_cites: bool = False
    # cited facts about another subject than the topic whose subject the sentence never names
    unnamed: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.unsupported or self.bad_cites or self.no_cites or self.unnamed)

    def why(self) -> str:
        if self.no_cites:
            return "cites no fact"
        if self.bad_cites:
            return f"cites no such fact: {', '.join(f'[{n}]' for n in self.bad_cites)}"
        if self.unnamed and not self.unsupported:
            return f"does not name the subject of {', '.join(f'[{n}]' for n in self.unnamed)}"
        return f"not in its cited facts or the question: {', '.join(self.unsupported)}"


def check_sentence(text: str, cites: Sequence[int], facts: dict[int, Fact], question: str, *,
                   vocabulary: Collection[str] = (), topic: str | None = None) -> Check:
    """Whether every claim of ``text`` is backed by the facts numbered ``cites`` or ``question``.
    Words of ``vocabulary`` (lower case) count as claims too, whatever their case: with
    the words of every fact's values, "It is a mountain" must cite the fact that says so.
    With ``topic`` (the subject the answer is about), each cited fact about another subject
    must have that subject named in ``text``."""
    bad = tuple(n for n in cites if n not in facts)
    if not cites:
        return Check(no_cites=True)
    backing = [question] + [t for n in cites if n in facts for t in fact_words(facts[n])]
    unnamed = () if topic is None else tuple(
        n for n in cites if n in facts and not about_topic(facts[n].subject, topic) and not names(text, facts[n].subject))
    return Check(unsupported=tuple(unsupported_claims(text, backing, vocabulary=vocabulary)), bad_cites=bad,
                 unnamed=unnamed)


def name_words(name: str) -> frozenset[str]:
    """The words of a name that name it alone: "John Steinbeck" → john, steinbeck (not "of", "the")."""
    return frozenset(w.lower() for w in _WORD.findall(name) if len(w) >= 3 and w.lower() not in _OPENERS)


def about_topic(subject: str, topic: str) -> bool:
    """Whether a fact's ``subject`` is the topic, perhaps as another store names it ("Douglas
    Noël Adams"): the same name, or one sharing a word of it."""
    return subject.strip().lower() == topic.strip().lower() or bool(name_words(subject) & name_words(topic))


def names(text: str, name: str) -> bool:
    """Whether ``text`` writes a word of ``name`` ("Steinbeck" names John Steinbeck)."""
    words = {_POSSESSIVE.sub("", w).lower() for w in _WORD.findall(text)}
    return bool(name_words(name) & words) or (not name_words(name) and name.lower() in text.lower())


def main_subject(facts: Sequence[Fact]) -> str | None:
    """The subject most of ``facts`` are about (the first of equals): the topic a sentence's
    "he" or "it" stands for."""
    counts: dict[str, int] = {}
    for f in facts:
        counts[f.subject] = counts.get(f.subject, 0) + 1
    return max(counts, key=lambda s: counts[s]) if counts else None


def value_vocabulary(facts: Iterable[Fact]) -> frozenset[str]:
    """The lower-case words (four letters or more) of the facts' values: what a sentence
    about them can only say by citing them."""
    return frozenset(w.lower() for f in facts for v in f.values for w in _WORD.findall(v)
                     if len(w) >= 4 and w.islower())


def fact_words(fact: Fact) -> list[str]:
    """The texts of a fact a claim may come from: its line, and its values' stored forms."""
    out = [fact.subject, fact.relation, *fact.values]
    for e in fact.evidence:
        out += [e.o, e.s_label or "", e.o_label or ""]
    # an ISO date backs its month's name: 1952-03-11 → March
    out += [_MONTHS[int(m.group(2)) - 1] for t in list(out) for m in _ISO_DATE.finditer(t)
            if 1 <= int(m.group(2)) <= 12]
    return out


def claims(text: str, *, vocabulary: Collection[str] = ()) -> list[str]:
    """The names, numbers and months ``text`` states, in order, then its words that are
    in ``vocabulary``."""
    out = [m.group() for m in _NUMBER.finditer(text)]
    first = True
    for m in _WORD.finditer(text):
        word = _POSSESSIVE.sub("", m.group())
        opening = first or text[:m.start()].rstrip().endswith((".", ":", ";", "!", "?"))
        first = False
        if not word[:1].isupper():
            continue
        if opening and word.lower() in _OPENERS:
            continue
        out.append(word)
    return out + [w for w in (m.group().lower() for m in _WORD.finditer(text)) if w in vocabulary]


def unsupported_claims(text: str, backing: Iterable[str], *, vocabulary: Collection[str] = ()) -> list[str]:
    """The claims of ``text`` that no text of ``backing`` holds (numbers by value, words
    case aside)."""
    numbers: set[str] = set()
    words: set[str] = set()
    for t in backing:
        numbers.update(number_key(n) for n in _NUMBER.findall(t))
        numbers.update(number_key(n) for n in re.findall(r"\d+", t))  # 1952-03-11 → 1952, 3, 11
        words.update(_POSSESSIVE.sub("", w).lower() for w in _WORD.findall(t))
    out = []
    for claim in claims(text, vocabulary=vocabulary):
        if claim[:1].isdigit():
            if number_key(claim) not in numbers:
                out.append(claim)
        elif claim.lower() not in words:
            out.append(claim)
    return list(dict.fromkeys(out))


def number_key(text: str) -> str:
    """A number as compared: ``29,164,578`` → ``29164578``, ``2702.0`` → ``2702``, ``03`` → ``3``.
    Commas that do not group thousands (``291,645,78``) leave the number as written, so it
    matches no stored value."""
    if "," in text and not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):
        return text
    t = text.replace(",", "")
    if t.count(".") > 1:
        t = t.replace(".", "")
    try:
        value = float(t)
    except ValueError:
        return t
    return str(int(value)) if value.is_integer() else repr(value)


def backing_facts(text: str, facts: Sequence[Fact], question: str, *, prefer: Sequence[int] = (),
                  vocabulary: Collection[str] = ()) -> tuple[int, ...] | None:
    """The fewest facts (the ``prefer``red first) that together back every claim of
    ``text``; None when some claim is backed by no fact nor the question."""
    wanted = [c for c in claims(text, vocabulary=vocabulary) if unsupported_claims(c, [question], vocabulary=vocabulary)]
    if not wanted:
        return None
    order = sorted(facts, key=lambda f: f.n not in prefer)
    chosen: list[int] = []
    left = wanted
    while left:
        best, best_left = None, left
        for f in order:
            rest = [c for c in left if unsupported_claims(c, fact_words(f), vocabulary=vocabulary)]
            if len(rest) < len(best_left):
                best, best_left = f, rest
        if best is None:
            return None
        chosen.append(best.n)
        left = best_left
    return tuple(sorted(chosen))


def settle(drafts: Sequence, facts: Sequence[Fact], question: str, *, max_sentences: int = 6,
           cover: bool = True, topic: str | None = None) -> list:
    """The answer's sentences: each draft that passes the check as written; one that fails
    replaced by a plain verbalization of its cited facts (or dropped when it cites none, or
    only facts an earlier sentence states already). With ``cover``, the facts no sentence
    cites follow in plain sentences, two a sentence, up to ``max_sentences`` in all.
    ``topic``: the subject the answer is about (by default the one most facts are about)."""
    from ._facts import Sentence
    from ._verbalize import facts_sentence

    by_number = {f.n: f for f in facts}
    vocabulary = value_vocabulary(facts)
    topic = topic if topic is not None else main_subject(facts)
    out: list[Sentence] = []
    said: set[int] = set()
    for draft in drafts:
        verdict = check_sentence(draft.text, draft.cites, by_number, question, vocabulary=vocabulary, topic=topic)
        cites = tuple(n for n in draft.cites if n in by_number)
        if not verdict.ok and not verdict.no_cites:
            # a small model often cites the fact next to the one it used: when other facts
            # back every claim, the sentence stands with the facts that back it
            found = backing_facts(draft.text, facts, question, prefer=cites, vocabulary=vocabulary)
            if found:
                cites = found
                verdict = check_sentence(draft.text, cites, by_number, question, vocabulary=vocabulary, topic=topic)
        if verdict.ok:
            if cites and set(cites) <= said:
                continue  # says again what earlier sentences said
            out.append(Sentence(draft.text, cites))
            said.update(cites)
            continue
        fresh = [by_number[n] for n in cites if n not in said]
        if fresh:
            out.append(Sentence(facts_sentence(fresh), tuple(f.n for f in fresh), "verbalized", draft.text,
                                verdict.unsupported or (verdict.why(),)))
            said.update(f.n for f in fresh)
    if cover:
        rest = [f for f in facts if f.n not in said]
        while rest and len(out) < max_sentences:
            take, rest = rest[:2], rest[2:]
            out.append(Sentence(facts_sentence(take), tuple(f.n for f in take), "added"))
    return out[:max_sentences] if len(out) > max_sentences else out

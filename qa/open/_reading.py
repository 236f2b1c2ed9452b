"""Telling an open question ("Tell me about X", "Why is X famous?") from a precise one
("Who directed X?"). A pure function over the question's words; no store, no model.

A question is read as open when it asks about one entity as a whole, in one of three forms:

* **a request about X**: the words before X only ask ("tell me", "what do you know",
  "describe", "give me an overview of", "summarize") and X is written as a name;
* **X's renown**: "what is X known for", "why is X famous", "what made X notable";
* **who X is**: "Who was X?" where X is a name and nothing else ("Who was the mayor of
  Berlin?" asks for one person, so it is precise).

The words that may ask are general English (verbs of telling and knowing, nouns of
summary), not words of any benchmark. "What words describe X?" asks for words (MetaQA's
tags), so "words" is not among them. X must be written as a name (capitals, brackets, or
a short lower-case phrase without relation words), so "Tell me about the author of Y" or
"Tell me about spouse of Z and end cause" stay precise.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# words that only ask: politeness, telling, knowing, and the nouns of a summary
_ASKING = frozenset("""
please kindly now so ok okay hey hi could can would will you your me us i i'd i'm id like love want wish need to
let do does did what how much is are was were there anything something everything all more some few a an the
bit little lot things facts fact information info details detail interesting important main key basic general
tell say talk speak write explain share know learn hear read find out give provide offer show briefly quickly
short brief quick concise general broad overview summary summarize summarise summarization description describe
introduction introduce profile portrait biography bio sketch background rundown outline account paragraph
few two three four five in on of about regarding concerning
""".split())
# of these, the words that make a request about something (one must be there)
_TOPIC = frozenset("""
about regarding concerning overview summary summarize summarise description describe introduction introduce
profile portrait biography bio sketch background rundown outline account explain
""".split())
# where the request ends and the subject begins
_BOUNDARY = frozenset("about regarding concerning of on describe summarize summarise introduce profile explain".split())
_RENOWN = re.compile(
    r"^(?:(?:what|why) (?:is|was|are|were) (?P<a>.+?)|(?:what|who) (?:made|makes) (?P<b>.+?))"
    r"(?: (?:so|most|best|mainly|mostly|chiefly|widely|primarily|especially|really|very|well))*"
    r" (?:known|famous|notable|noted|remembered|renowned|celebrated|important|significant|special|well-known)"
    r"(?: for| today| nowadays)?$")
_WHO = re.compile(r"^who (?:is|was|are|were) (?P<s>.+)$")
# what may trail a request without changing it: "..., please", "in a few sentences"
_TRAILING = re.compile(r"(?:,? (?:please|briefly|quickly|in (?:short|brief|a nutshell|a few sentences)"
                       r"|for me|for us))+$")
# an aspect after the subject's name: "X's career", "the life of X" is read as X
_ASPECT = re.compile(r"^(?P<s>.+?)(?:'s|’s|') (?P<aspect>career|life|work|works|history|legacy|story|"
                     r"achievements|background|biography|significance|importance)$")
_CONNECTORS = frozenset("of de da del der den di do dos du van von la le el al bin ibn y and the & upon on in at for"
                         .split())
# words that tie a relation to a name ("the author of X", "spouse of Y and end cause")
_RELATIONAL = frozenset("of for with and whose which that who whom where when by from in at to as than has have "
                        "had is are was were".split())


@dataclass(frozen=True)
class OpenReading:
    """An open question as read: the entity it asks about, the aspect it dwells on (a
    career, a life) if any, and which form it took (request, renown, who)."""

    subject: str
    form: str
    aspect: str | None = None

    def to_dict(self) -> dict:
        return {"subject": self.subject, "form": self.form, "aspect": self.aspect}


def is_open(question: str) -> bool:
    """Whether ``question`` asks about an entity as a whole (an open question)."""
    return read_open(question) is not None


def read_open(question: str) -> OpenReading | None:
    """The open reading of ``question``, or None when it is a precise question."""
    text = re.sub(r"\s+", " ", question).strip().rstrip("?.!").strip()
    text = _TRAILING.sub("", text).strip().rstrip(",")
    if not re.search(r"[a-z]", re.sub(r"\[[^\[\]]*\]", "", text)):
        return None  # all in capitals: names cannot be told from other words
    lowered = _lower_outside_brackets(text)
    m = _RENOWN.match(lowered)
    if m:
        span = m.span("a") if m.group("a") is not None else m.span("b")
        return _reading(text[span[0]:span[1]], "renown")
    m = _WHO.match(lowered)
    if m:
        subject = text[m.start("s"):]
        reading = _reading(subject, "who")
        # "Who is X?" names X and nothing else: a capitalised or bracketed name
        return reading if reading and (_bracketed(subject) or _capitalised_name(subject)) else None
    return _request(text, lowered)


def _request(text: str, lowered: str) -> OpenReading | None:
    """A request about X: every word before X asks, one of them names a request, and the
    last of them is where X begins ("about", "of", "describe")."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", lowered)]
    for i in range(len(words) - 1, 0, -1):
        start, end = words[i - 1]
        if lowered[start:end].strip(",:") not in _BOUNDARY:
            continue
        before = [lowered[s:e].strip(",:") for s, e in words[:i]]
        if all(w in _ASKING for w in before) and any(w in _TOPIC for w in before):
            return _reading(text[words[i][0]:], "request")
    return None


def _reading(subject: str, form: str) -> OpenReading | None:
    subject = subject.strip().strip(",:;").strip()
    aspect = None
    m = _ASPECT.match(subject)
    if m:
        subject, aspect = m.group("s").strip(), m.group("aspect")
    if _bracketed(subject):
        subject = subject[1:-1].strip()
        return OpenReading(subject, form, aspect) if subject else None
    if "[" in subject or "]" in subject or not _name_like(subject):
        return None
    return OpenReading(subject, form, aspect)


def _bracketed(text: str) -> bool:
    return bool(re.fullmatch(r"\[[^\[\]]+\](?:(?:'s|’s|') \w+)?", text.strip()))


def _name_like(subject: str) -> bool:
    """Written as a name: capitalised words joined by connectors ("Leonardo da Vinci", "the
    Andes"), or a short lower-case phrase with no word that ties a relation to a name."""
    words = subject.split()
    if not words or len(words) > 8:
        return False
    if _capitalised_name(subject):
        return True
    if any(w[:1].isupper() for w in words if w.lower() not in ("the", "a", "an")):
        return False  # capitals and lower-case content words mixed: "spouse of Julio Iglesias"
    return len(words) <= 4 and not any(w.lower().strip(",") in _RELATIONAL for w in words)


def _capitalised_name(subject: str) -> bool:
    words = subject.split()
    if words and words[0].lower() == "the":
        words = words[1:]
    if not words or not _starts_name(words[0]) or not _starts_name(words[-1]):
        return False
    return all(_starts_name(w) or w.lower() in _CONNECTORS for w in words)


def _starts_name(word: str) -> bool:
    return bool(word) and (word[0].isupper() or word[0].isdigit())


def _lower_outside_brackets(text: str) -> str:
    """The text in lower case, except inside brackets (same length, so spans carry over)."""
    parts = re.split(r"(\[[^\[\]]*\])", text)
    return "".join(part if part.startswith("[") else part.lower() for part in parts)

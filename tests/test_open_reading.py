"""Telling open questions from precise ones (qa.open.read_open): a pure function."""
from __future__ import annotations

import pytest

from qa.open import OpenReading, is_open, read_open


@pytest.mark.parametrize("question, subject, form", [
    ("Tell me about Douglas Adams.", "Douglas Adams", "request"),
    ("What do you know about the Andes?", "the Andes", "request"),
    ("Describe Nepal.", "Nepal", "request"),
    ("Why is Mount Everest famous?", "Mount Everest", "renown"),
    ("What is [Nepal] known for?", "Nepal", "renown"),
    ("Who was Douglas Adams?", "Douglas Adams", "who"),
    ("Summarize [Leonardo da Vinci].", "Leonardo da Vinci", "request"),
    ("tell me about douglas adams", "douglas adams", "request"),
])
def test_open_questions_are_read_with_their_subject(question, subject, form):
    reading = read_open(question)
    assert reading == OpenReading(subject, form)


def test_an_aspect_after_the_name_is_kept_apart_from_the_subject():
    assert read_open("Give me an overview of Douglas Adams's career.") == OpenReading("Douglas Adams", "request",
                                                                                       "career")


@pytest.mark.parametrize("question", [
    "Who directed Alien?",
    "Who is the spouse of Barack Obama?",
    "Which countries does the Andes cover?",
    "Tell me about the author of foreword of Jesus Christ.",     # a relation, not a name
    "Tell me about spouse of Julio Iglesias and end cause?",
    "Tell me the population of Nepal.",
    "What is the Berlin Wall also known as?",
    "Who is known for being the script writer of Yor-yor?",
    "WHO IS THE PARENT OF SON FRANCESCO I SFORZA ?",              # capitals everywhere: no names to tell
    "What is GONIAT ID of Hertfordshire?",
    "what words describe [Autumn in New York]",                  # tags, not a paragraph
    "Can you give a few words to describe [Sex, Lies, and Videotape]",
])
def test_precise_questions_are_not_read_as_open(question):
    assert not is_open(question)

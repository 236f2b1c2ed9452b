"""The six-way shape read from a question's words alone (qa.shapes.question_shape): no
store, no model. The questions are written for this test."""
from __future__ import annotations

import pytest

from qa.shapes import question_shape
from qa.shapes._question_shape import QUESTION_SHAPES


@pytest.mark.parametrize("question, shape", [
    # count
    ("How many bridges cross the river Tamsel?", "count"),
    ("What number of novels did Ida Brenner publish?", "count"),
    ("How often did the Orvik rowing club win the regatta?", "count"),
    # boolean, also with a relative clause inside
    ("Did Ida Brenner grow up in Lusk?", "boolean"),
    ("Is there a lighthouse on Kerrin Island that is still in use?", "boolean"),
    # comparison: two named options, and the yes/no form
    ("Which lake is deeper, Lake Morn or Lake Vell?", "comparison"),
    ("Is the Tamsel longer than the Orva?", "comparison"),
    # superlative: a "…est", an extreme without one, an ordinal that picks one
    ("What is the tallest tower in Brannock?", "superlative"),
    ("Which port has the maximum number of berths?", "superlative"),
    ("What was the first record released by the Greyfield Quartet?", "superlative"),
    # constraint: a value, a restricted name, a named class, a relative clause
    ("Which bridges over the Tamsel are longer than 300 metres?", "constraint"),
    ("Name a composer whose surname starts with the letter q.", "constraint"),
    ("Which painter trained in Lusk and later taught in Orvik?", "constraint"),
    ("Who is the author of The Salt Road, who was also a sailor?", "constraint"),
    ("Among the founders of the Orvik guild, who was born abroad?", "constraint"),
    # chain: one relation or a path, also when dated
    ("Who is the mayor of Brannock?", "chain"),
    ("Where was the architect of the Kerrin lighthouse born?", "chain"),
    ("What is the first name of the mayor of Brannock?", "chain"),
    ("In which country is Lake Morn located?", "chain"),
    ("Which prize did Ida Brenner receive in 1987?", "chain"),
    ("How many people lived in Brannock in 1990?", "chain"),
])
def test_the_shape_is_read_from_the_words(question, shape):
    assert question_shape(question) == shape


def test_every_answer_is_one_of_the_six_shapes():
    for question in ("", "?", "Brannock", "what", "Tell me about the Tamsel."):
        assert question_shape(question) in QUESTION_SHAPES


# -- rules added for wordings the first rules missed; each with a near miss that must not change
@pytest.mark.parametrize("question, shape", [
    # "Count" with a capital is a title; the verb "count the …" still asks a count
    ("Who was the daughter of Count of Vellmar?", "chain"),
    ("Count of Vellmar's wife?", "chain"),
    ("Count the bridges that cross the Tamsel.", "count"),
    ("What is the count of lighthouses on Kerrin Island?", "count"),
    # "first" before a colon ends the clause of a question that names its options
    ("Which opened first: the Kerrin lighthouse or the Brannock pier?", "comparison"),
    ("Which was the first ship built in Orvik?", "superlative"),
    # options listed after the comparative ("out of X and Y", "between X and Y")
    ("Who is taller out of Ida Brenner and Ola Vesk?", "comparison"),
    ("Which is the older one between the Orvik guild and the Lusk guild?", "comparison"),
    ("Which ship is the fastest out of all the ships built in Orvik and Lusk?", "superlative"),
    # a superlative no list names, told by "-est" after a determiner or a copula
    ("Which is the strongest rope made in Orvik?", "superlative"),
    ("Which island is closest to Brannock?", "superlative"),
    ("What is the forest next to Brannock?", "chain"),
    ("What is the interest rate in Orvik?", "chain"),
    # an irregular past tense after "what" is a verb, not a class the question names
    ("What came out of the Brannock foundry?", "chain"),
    ("What sank near Kerrin Island?", "chain"),
    ("What river flows through Brannock?", "constraint"),
    # "… and what's …" asks a second question: each a chain
    ("Who is the mayor of Brannock and what's her party?", "chain"),
    # a date inside a relative clause restricts the answer; a date on the fact asked does not
    ("Who taught Ida Brenner, the painter who was born on 3 March 1901?", "constraint"),
    ("Who taught Ola Vesk who was born on June 2nd, 1890?", "constraint"),
    ("Which prize did Ida Brenner receive on 3 March 1931?", "chain"),
])
def test_added_rules_and_their_near_misses(question, shape):
    assert question_shape(question) == shape


def test_the_live_reader_gets_the_same_rules():
    # detect_shape is what the QA methods use at run time
    from qa.shapes import detect_shape
    assert detect_shape("Who was the daughter of Count of Vellmar?").kind == "chain"
    assert detect_shape("count all the bridges over the Tamsel").kind == "count"
    shape = detect_shape("Who is taller out of [Ida Brenner] and [Ola Vesk]?")
    assert shape.kind == "comparison" and shape.cue == "taller"


@pytest.mark.parametrize("question, cue", [
    ("Which river flows through Vienna?", "a class after which/what"),
    ("Name a film with Tom Hanks in it.", "a request for things of a class"),
    ("What is the publisher of X, which has its seat in Paris?", "a restricting clause"),
    ("Which cities have more than 2 million inhabitants?", "a value or a name's letters"),
    ("Who is the brother of George II?", "none"),
])
def test_the_constraint_cue_a_question_carries_is_named(question, cue):
    from qa.shapes._question_shape import constraint_cue

    assert constraint_cue(question) == cue

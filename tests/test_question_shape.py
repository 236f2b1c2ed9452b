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

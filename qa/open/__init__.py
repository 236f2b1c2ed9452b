"""Open answers: a paragraph written from verified store facts, for questions that ask
about an entity as a whole ("Tell me about X"), one module a job:

* ``_reading``: telling an open question from a precise one (:func:`read_open`).
"""
from ._reading import OpenReading, is_open, read_open

__all__ = ["OpenReading", "is_open", "read_open"]

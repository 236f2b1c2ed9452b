"""Triples as prompt text and back. Pure functions.

One line per subject and relation, values joined by ``; ``, optionally counted:
``Andes | country | Peru; Chile; Bolivia (3 values)``. Grouping keeps prompts short (every
token costs time on a CPU); counts hand a small model the number it would otherwise get
wrong when it answers, but are left out where it writes lists (it copies them badly).
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..prompts import grammar_text
from ._grounding import normalise_label

_COUNT = re.compile(r"\s*\(\d+ values?\)")
_UNMARKABLE = re.compile(r"[{}\r\n]")
SEPARATOR = "; "
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def relation_words(relation: str) -> str:
    """A relation as a model types it, in words: ``DIRECTED_BY`` → "directed by",
    ``releaseYear`` → "release year"."""
    return _CAMEL.sub(" ", relation).replace("_", " ").strip().lower()


def triple_lines(triples: Iterable[tuple[str, str, str]], *, counts: bool = False) -> str:
    """``(s, r, o)`` triples as grouped lines, in first-seen order of (s, r); with
    ``counts``, lines with several values end with ``(n values)``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for s, r, o in triples:
        values = groups.setdefault((s, r), [])
        if o not in values:
            values.append(o)
    lines = []
    for (s, r), values in groups.items():
        count = f" ({len(values)} values)" if counts and len(values) > 1 else ""
        lines.append(f"{s} | {r} | {SEPARATOR.join(values)}{count}")
    return "\n".join(lines)


def parse_triple_lines(text: str, *, pairs: bool = False) -> list[tuple[str, str, str]]:
    """The triples in ``text``'s ``s | r | o1; o2`` lines (other lines ignored), without repeats.
    With ``pairs``, a ``s | r`` line (a fact named without its values) counts too, as
    ``(s, r, "")``."""
    out: dict[tuple[str, str, str], None] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.strip().strip("-*").split("|")]
        if pairs and len(parts) == 2 and all(parts):
            out[(parts[0], parts[1], "")] = None
            continue
        if len(parts) != 3 or not all(parts):
            continue
        s, r, objects = parts
        for o in _COUNT.sub("", objects).split(";"):  # counts copied anywhere are dropped
            if o.strip():
                out[(s, r, o.strip())] = None
    return list(out)


def labelled(triples: Sequence, short_names: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """Evidence records as ``(subject label, relation label, object label)``; a node
    without a label is written by its name in ``short_names`` (IRI → name), where it has
    one, else by its IRI."""
    short_names = short_names or {}

    def name(iri: str, label: str | None) -> str:
        return label or short_names.get(iri, iri)

    return [(name(e.s, e.s_label), e.p_label or e.p, e.o if e.literal else name(e.o, e.o_label)) for e in triples]


def align_to_ground(fixed: Sequence[tuple[str, str, str]], ground: Sequence[tuple[str, str, str]]
                    ) -> tuple[list[tuple[str, str, str]], dict[str, list[str]]]:
    """Snap the model's fixed graph onto the ground graph it was verified against.

    A small model rewriting lists drops or invents values; the ground graph is the
    authority. Each (subject, relation) the fixed graph names that the ground graph also
    has takes the ground graph's values, all of them; another line stays only when both its
    subject and its value are ground-graph names (a relation said in other words, or read
    backwards), and is otherwise dropped as unsupported. A line with no value (``o == ""``)
    names a ground fact by subject and relation. A fact named that has a single value brings
    the ground facts that give the same relation and value for other subjects (one line,
    ``Tracker | starred actors``, stands for all of an actor's films, which the ground graph
    writes a line each).
    Returns the aligned triples and what changed, for the trace.
    """
    by_pair: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    by_value: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    names: set[str] = set()
    for s, r, o in ground:
        by_pair.setdefault((normalise_label(s), normalise_label(r)), []).append((s, r, o))
        by_value.setdefault((normalise_label(r), normalise_label(o)), []).append((s, r, o))
        names.update((normalise_label(s), normalise_label(o)))
    aligned: dict[tuple[str, str, str], None] = {}
    notes: dict[str, list[str]] = {"completed": [], "dropped": []}
    done: set[tuple[str, str]] = set()
    for s, r, o in fixed:
        pair = (normalise_label(s), normalise_label(r))
        if pair in by_pair:
            if pair not in done:
                done.add(pair)
                before = len(aligned)
                aligned.update(dict.fromkeys(by_pair[pair]))
                if len(by_pair[pair]) == 1:  # one value: its siblings too (every film of the actor named)
                    _, r1, o1 = by_pair[pair][0]
                    aligned.update(dict.fromkeys(by_value[(normalise_label(r1), normalise_label(o1))]))
                if o and ((s, r, o) not in by_pair[pair] or len(aligned) - before > 1):
                    notes["completed"].append(f"{s} | {r}")
        elif o and pair[0] in names and normalise_label(o) in names:
            aligned[(s, r, o)] = None  # both ends are ground entities: a relation said in other words
        else:
            notes["dropped"].append(f"{s} | {r} | {o}")
    return list(aligned), notes


def fact_pairs(triples: Sequence[tuple[str, str, str]]) -> list[str]:
    """The distinct ``subject | relation`` heads of ``triples``, in first-seen order."""
    return list(dict.fromkeys(f"{s} | {r}" for s, r, _ in triples))


def pair_lines_grammar(heads: Sequence[str], *, max_lines: int = 4) -> str:
    """A GBNF grammar whose output is 1 to ``max_lines`` lines, each one of ``heads``.

    The verification step names the ground facts that support, correct or complete the
    draft; the values come from the ground graph itself, so the model spends no tokens
    (and makes no copying slips) writing them."""
    alternatives = " | ".join(gbnf_literal(h) for h in heads)
    return f'root ::= line{{1,{max_lines}}}\nline ::= ({alternatives}) "\\n"\n'


def answer_terms_grammar(terms: Sequence[str], *, shape: str = "answer_marks") -> str:
    """A GBNF grammar for the answer step whose ``{}`` marks each hold one of ``terms``
    (as written) or ``unknown``; the text around the marks is free, on one line (or what
    the grammar file ``shape`` allows around them).

    The marks must name what the facts name: a 1.5B model paraphrases the fact it follows
    ("woman" for "female", "Jewish" for "jew", "George I" for "george i of great
    britain"), and a paraphrase matches no store term, so a right answer became a refusal.
    Terms that cannot sit in a mark (braces, line breaks) are left out."""
    usable = dict.fromkeys(t.strip() for t in terms if t.strip() and not _UNMARKABLE.search(t))
    usable.pop("unknown", None)
    alternatives = "".join(f" | {gbnf_literal(t)}" for t in usable)
    # the answer shape is answer_marks.gbnf's; only what a mark may hold changes
    rules = [line for line in grammar_text(shape).splitlines() if not line.startswith("term ::=")]
    return "\n".join(rules + [f'term ::= "unknown"{alternatives}']) + "\n"


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

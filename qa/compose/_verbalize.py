"""Query-graph candidates in plain words, for the encoder and the model to read. Pure."""
from __future__ import annotations

from ..steps._examples import Hop, hop_phrase
from ._candidates import EntityTie, QueryCandidate, SpanTie, ValueTie
from ._comparisons import Comparison, comparison_text

_OPS = {"=": "in", ">": "after", ">=": "from", "<": "before", "<=": "up to"}


def node_name(candidate: QueryCandidate, node: str) -> str:
    """How a node of the chain is named in the words: the answer is "it", a middle node
    by its position."""
    if node == "?answer":
        return "the answer"
    return "the " + ("link" if candidate.path.hops == 2 else f"step {node[2:]}")


def chain_text(candidate: QueryCandidate) -> str:
    """The core chain: the topic, then each hop's reading ("what is the office of X; …")."""
    given, parts = candidate.topic.label, []
    for label, (_, back) in zip(candidate.path.labels, candidate.path.steps):
        parts.append(hop_phrase(Hop(label, back), given, "what"))
        given = "it"
    return "; ".join(parts)


def tie_text(candidate: QueryCandidate, tie) -> str:
    node = node_name(candidate, tie.node)
    if isinstance(tie, EntityTie):
        said = (f"{tie.entity.label} {tie.relation_label} {node}" if tie.backward
                else f"{node} {tie.relation_label} {tie.entity.label}")
        if tie.negated:
            return f"not: {said}"
        if tie.entity.iri == candidate.topic.iri:
            # the answer tied back to the topic by a second relation: two roles at once,
            # said from the topic's side as the chain is ("X directed what; and X also wrote it")
            return "and also " + hop_phrase(Hop(tie.relation_label, not tie.backward), tie.entity.label, "it")
        return said
    if isinstance(tie, ValueTie):
        v = tie.value
        if v.op == "between":
            return f"{node} {tie.relation_label} between {v.low:g} and {v.high:g}"
        return f"{node} {tie.relation_label} {_OPS.get(v.op, v.op)} {v.low:g}"
    if isinstance(tie, SpanTie):
        return f"{node} held in {tie.value.low:g} (from its {tie.start_label} to its {tie.end_label})"
    return ""


def verbalize(candidate) -> str:
    """``candidate`` as one line of words: its chain, its constraints, its aggregation; a
    comparison of two named things as the question it answers."""
    if isinstance(candidate, Comparison):
        return comparison_text(candidate)
    text = chain_text(candidate)
    for tie in candidate.ties:
        said = tie_text(candidate, tie)
        text += f"; {said} (both)" if said.startswith("and also ") else f"; where {said}"
    if candidate.ordering:
        o = candidate.ordering
        which = 'first (earliest, lowest)' if o.ascending else 'last (latest, highest)'
        if o.relation:
            text += f"; only the {which} by {node_name(candidate, o.node)}'s {o.relation_label}"
        else:  # the values themselves: said first, as "the last year" reads
            text = f"the {which} of: {text}"
    if candidate.count:
        text = "how many: " + text
    return text


__all__ = ["verbalize", "chain_text", "tie_text"]

"""How unsure the model was of a choice, from the raw logits of its first token. Pure functions.

The top-k logits are read as the concentration parameters of a Dirichlet over the k
options (evidential reading of logits): α = the top-k logits, α₀ = Σα. The aleatoric
uncertainty is the expected entropy of the categorical drawn from it,

    AU = −Σₖ (αₖ/α₀) [ψ(αₖ + 1) − ψ(α₀ + 1)]

with ψ the digamma function. It is not shift-invariant, so log-probabilities (logits minus
their log-sum-exp) will not do: the backend has to expose the raw logits. With large,
close logits AU approaches ln k (the options look alike); one dominant option drives it
down. A logit at or under zero carries no evidence and counts as zero.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

_EULER = 0.5772156649015329


def digamma(x: float) -> float:
    """ψ(x) for x > 0: the recurrence ψ(x) = ψ(x+1) − 1/x up to x ≥ 10, then the
    asymptotic series (error near 1e-14 there)."""
    if x <= 0:
        raise ValueError(f"digamma is defined here for x > 0, got {x}")
    if x == 1.0:
        return -_EULER
    shift = 0.0
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return shift + math.log(x) - 0.5 / x - series


def aleatoric_uncertainty(logits: Sequence[float]) -> float:
    """AU of the options whose raw logits are ``logits`` (negative ones count as 0).
    One option, or no evidence at all, is 0.0: nothing to be unsure between."""
    alpha = [max(float(a), 0.0) for a in logits]
    total = sum(alpha)
    if len(alpha) < 2 or total <= 0.0:
        return 0.0
    psi_total = digamma(total + 1.0)
    return -sum((a / total) * (digamma(a + 1.0) - psi_total) for a in alpha if a > 0.0)


def option_logits(top_logits: Mapping[str, float], options: Iterable[str], k: int) -> list[float]:
    """The raw logits of the ``k`` most likely of ``options`` among a step's recorded top
    tokens (a token counts for the option it spells, spaces aside), highest first."""
    wanted = {o.strip() for o in options}
    best: dict[str, float] = {}
    for token, logit in top_logits.items():
        name = token.strip()
        if name in wanted and logit > best.get(name, -math.inf):
            best[name] = logit
    return sorted(best.values(), reverse=True)[:k]


__all__ = ["aleatoric_uncertainty", "digamma", "option_logits"]

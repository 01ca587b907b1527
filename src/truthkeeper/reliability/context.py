"""Retrieved context against the model's own (parametric) answer: "a prior, not a rule"."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidFact
from ..values import Decision, Utility
from .book import ReliabilityBook
from .decision import decide

__all__ = ["MODEL_SOURCE", "context_probability", "decide_context", "effective_confidence"]

MODEL_SOURCE = "model:parametric"
"""The source name under which outcomes of the model's own answers are recorded."""
PSEUDO_COUNT = 10.0
"""Weight of the stated confidence against the model's track record (in outcomes)."""


def effective_confidence(stated: float, n_outcomes: int, track_record: float) -> float:
    """The model's confidence pulled toward its track record as outcomes accumulate."""
    q = (PSEUDO_COUNT * stated + n_outcomes * track_record) / (PSEUDO_COUNT + n_outcomes)
    return min(max(q, 1e-6), 1 - 1e-6)


def context_probability(r_context: float, q_model: float, *, agree: bool) -> float:
    """P(the context's value is right) under one-coin evidence from both.

    When they agree: 1 - (1 - r_c)(1 - q). When they disagree:
    r_c (1 - q) / (r_c (1 - q) + q (1 - r_c)).

    Examples
    --------
    >>> round(context_probability(0.5, 0.5, agree=False), 3)
    0.5
    >>> context_probability(0.9, 0.2, agree=False) > 0.9
    True
    """
    if agree:
        return 1.0 - (1.0 - r_context) * (1.0 - q_model)
    return r_context * (1 - q_model) / (r_context * (1 - q_model) + q_model * (1 - r_context))


def decide_context(book: ReliabilityBook, *, context_value: Any, source: str, tier: str,
                   parametric_value: Any, confidence: float, agree: bool,
                   u: Utility) -> Decision:
    """Decide between a retrieved context (its source's running reliability is the prior)
    and the model's answer (its stated confidence pulled toward its track record)."""
    if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) \
            or not 0.0 <= confidence <= 1.0:
        msg = f"parametric_confidence must be a number in [0, 1], got {confidence!r}"
        raise InvalidFact(msg)
    st = book.sources.get(MODEL_SOURCE)
    q = effective_confidence(confidence, st.n if st else 0, book.mean(MODEL_SOURCE, "agent"))
    r_c = book.mean(source, tier)
    if agree:
        return decide(u, [(context_value, context_probability(r_c, q, agree=True), None)],
                      "agree")
    pc = context_probability(r_c, q, agree=False)
    return decide(u, [(context_value, pc, None), (parametric_value, 1 - pc, None)],
                  "context and parametric answers disagree")

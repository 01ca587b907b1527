"""Retrieved context against the model's own (parametric) answer: "a prior, not a rule"."""

from __future__ import annotations

from typing import Any

from ..results import Decision, Utility
from ..validation import check_alternatives, check_probability
from .book import ReliabilityBook
from .decision import decide

__all__ = ["MODEL_SOURCE", "calibrated_confidence", "calibration_map", "context_probability",
           "decide_context", "effective_confidence"]

MODEL_SOURCE = "model:parametric"
"""The source name under which outcomes of the model's own answers are recorded."""
PSEUDO_COUNT = 10.0
"""Weight of the stated confidence against the model's track record (in outcomes)."""


def effective_confidence(stated: float, n_outcomes: int, track_record: float) -> float:
    """The model's confidence pulled toward its track record as outcomes accumulate (when
    its outcomes carry no stated confidence to calibrate on)."""
    q = (PSEUDO_COUNT * stated + n_outcomes * track_record) / (PSEUDO_COUNT + n_outcomes)
    return min(max(q, 1e-6), 1 - 1e-6)


CALIBRATION_PRIOR_SD = 0.5
"""Prior sd of the calibration map's slope (around 1) and intercept (around 0): with few
outcomes the stated confidence is taken nearly as it is."""


def calibration_map(pairs: list[tuple[float, bool]]) -> tuple[float, float]:
    """(slope, intercept) of P(right) = sigmoid(slope logit(stated) + intercept): Bayesian
    logistic calibration (MAP under the prior ``CALIBRATION_PRIOR_SD``), by Newton steps.

    >>> calibration_map([])
    (1.0, 0.0)
    """
    import numpy as np

    if not pairs:
        return 1.0, 0.0
    c = np.clip(np.array([p for p, _ in pairs]), 1e-4, 1 - 1e-4)
    y = np.array([float(r) for _, r in pairs])
    x = np.stack([np.log(c / (1 - c)), np.ones(len(c))], axis=1)
    mu, prec = np.array([1.0, 0.0]), np.eye(2) / CALIBRATION_PRIOR_SD ** 2
    w = mu.copy()
    for _ in range(25):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (y - p) - prec @ (w - mu)
        hess = -(x.T * (p * (1 - p))) @ x - prec
        step = np.linalg.solve(hess, grad)
        w = w - step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1])


def calibrated_confidence(stated: float, slope: float, intercept: float) -> float:
    """The stated confidence through the calibration map."""
    import math

    c = min(max(stated, 1e-6), 1 - 1e-6)
    z = slope * math.log(c / (1 - c)) + intercept
    return min(max(1 / (1 + math.exp(-z)), 1e-6), 1 - 1e-6)


def context_probability(r_context: float, q_model: float, *, agree: bool,
                        coincide: float = 1.0) -> float:
    """P(the context's value is right), each answer right with its probability (r_c for the
    context, q for the model) and, when both are wrong, the same wrong answer with
    probability ``coincide`` (1 / (k - 1) for a question with k answers; 0: open answers).

    When they agree: r_c q / (r_c q + (1 - r_c)(1 - q) coincide). When they disagree,
    either may be right or neither: r_c (1 - q) / (r_c (1 - q) + q (1 - r_c) + (1 - r_c)(1
    - q)(1 - coincide)); the model's is the same with r_c and q swapped.

    Examples
    --------
    >>> round(context_probability(0.5, 0.5, agree=False), 3)   # yes or no
    0.5
    >>> round(context_probability(0.5, 0.5, agree=False, coincide=0.0), 3)  # or neither
    0.333
    >>> round(context_probability(0.7, 0.6, agree=True), 3)
    0.778
    >>> context_probability(0.9, 0.2, agree=False) > 0.9
    True
    """
    r, q, k = r_context, q_model, min(max(coincide, 0.0), 1.0)
    if agree:
        return r * q / max(r * q + (1 - r) * (1 - q) * k, 1e-300)
    return r * (1 - q) / max(r * (1 - q) + q * (1 - r) + (1 - r) * (1 - q) * (1 - k), 1e-300)


def _calibration(book: ReliabilityBook, pairs: list[tuple[float, bool]]) -> tuple[float, float]:
    """The model's calibration map, refitted only when its outcomes changed."""
    st = book.sources.get(MODEL_SOURCE)
    seen = st.n if st is not None else len(pairs)  # grows with every outcome recorded
    hit = book.stated_fit.get(MODEL_SOURCE)
    if hit is None or hit[0] != seen:
        hit = book.stated_fit[MODEL_SOURCE] = (seen, calibration_map(pairs))
    return hit[1]


def decide_context(book: ReliabilityBook, *, context_value: Any, source: str, tier: str,
                   parametric_value: Any, confidence: float, agree: bool,
                   u: Utility, alternatives: int | None = None) -> Decision:
    """Decide between a retrieved context (its source's running reliability is the prior)
    and the model's answer (its stated confidence pulled toward its track record). Two
    wrong answers are the same one with probability 1 / (k - 1) for ``alternatives`` k; by
    default k - 1 is the number of false values the memory learned from agreement
    (``book.false_values``; 1 until learned: a disagreement then has one right answer)."""
    confidence = check_probability(confidence, "parametric_confidence")
    k = check_alternatives(alternatives)
    coincide = 1.0 / (k - 1 if k is not None else max(book.false_values, 1.0))
    pairs = book.stated.get(MODEL_SOURCE)
    if pairs:  # the model's stated confidences, calibrated on its outcomes
        q = calibrated_confidence(confidence, *_calibration(book, pairs))
    else:
        st = book.sources.get(MODEL_SOURCE)
        q = effective_confidence(confidence, st.n if st else 0,
                                 book.mean(MODEL_SOURCE, "agent"))
    r_c = book.mean(source, tier)
    if agree:
        return decide(u, [(context_value, context_probability(r_c, q, agree=True,
                                                               coincide=coincide), None)],
                      "agree")
    pc = context_probability(r_c, q, agree=False, coincide=coincide)
    pm = context_probability(q, r_c, agree=False, coincide=coincide)
    return decide(u, [(context_value, pc, None), (parametric_value, pm, None)],
                  "context and parametric answers disagree")

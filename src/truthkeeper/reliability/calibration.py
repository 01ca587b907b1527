"""Calibration tools: Brier score, log loss, ECE, reliability-diagram bins, interval coverage.

All take plain sequences or numpy arrays; no JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["brier", "ece", "ece_if_calibrated", "interval_coverage", "log_loss",
           "reliability_diagram"]


def _arrays(p: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    pa = np.asarray(p, dtype=float)
    ya = np.asarray(y)
    if pa.shape[0] != ya.shape[0]:
        msg = f"p and y must have the same length, got {pa.shape[0]} and {ya.shape[0]}"
        raise ValueError(msg)
    return pa, ya


def brier(p: Any, y: Any) -> float:
    """Mean squared error of probabilities.

    ``p`` is either a vector of P(y = 1) with ``y`` in {0, 1}, or an (n, K) matrix of class
    probabilities with ``y`` the true class indices (multi-class Brier, summed over classes).
    """
    pa, ya = _arrays(p, y)
    if pa.ndim == 1:
        return float(np.mean((pa - ya.astype(float)) ** 2))
    onehot = np.zeros_like(pa)
    onehot[np.arange(len(ya)), ya.astype(int)] = 1.0
    return float(np.mean(np.sum((pa - onehot) ** 2, axis=1)))


def log_loss(p: Any, y: Any, *, eps: float = 1e-12) -> float:
    """Mean negative log probability of the truth (binary vector or (n, K) matrix)."""
    pa, ya = _arrays(p, y)
    if pa.ndim == 1:
        yf = ya.astype(float)
        q = np.clip(pa, eps, 1 - eps)
        return float(-np.mean(yf * np.log(q) + (1 - yf) * np.log(1 - q)))
    q = np.clip(pa[np.arange(len(ya)), ya.astype(int)], eps, 1.0)
    return float(-np.mean(np.log(q)))


def reliability_diagram(confidence: Any, correct: Any, *, bins: int = 10) -> list[dict[str, float]]:
    """Equal-width bins over [0, 1] of the stated confidence: per non-empty bin its range,
    count, mean confidence and observed accuracy."""
    c, ok = _arrays(confidence, correct)
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(c, edges[1:-1], right=True), 0, bins - 1)
    out = []
    for b in range(bins):
        m = idx == b
        if m.any():
            out.append({"low": float(edges[b]), "high": float(edges[b + 1]), "count": int(m.sum()),
                        "confidence": float(c[m].mean()), "accuracy": float(ok[m].mean())})
    return out


def ece(confidence: Any, correct: Any, *, bins: int = 10, equal_mass: bool = False) -> float:
    """Expected calibration error: the count-weighted mean |accuracy - confidence| over
    ``bins`` equal-width confidence bins on [0, 1] (default 10), or with ``equal_mass`` over
    ``bins`` bins holding equally many answers (sorted by confidence; ties may share a bin
    boundary). ``confidence`` is the probability given to the chosen answer, ``correct``
    whether it was right."""
    c, ok = _arrays(confidence, correct)
    n = len(c)
    if n == 0:
        return 0.0
    if equal_mass:
        order = np.argsort(c, kind="stable")
        parts = np.array_split(order, min(bins, n))
        return float(sum(len(b) / n * abs(float(ok[b].astype(float).mean()) - float(c[b].mean()))
                         for b in parts if len(b)))
    return float(sum(b["count"] / n * abs(b["accuracy"] - b["confidence"])
                     for b in reliability_diagram(confidence, correct, bins=bins)))


def ece_if_calibrated(confidence: Any, correct: Any = None, *, bins: int = 10,
                      equal_mass: bool = False, draws: int = 1000,
                      seed: int = 0) -> dict[str, float]:
    """The ECE that a perfectly calibrated predictor stating these confidences would show
    on this many answers: each answer drawn right with the probability it was given,
    ``draws`` times (seeded, so the figures repeat). On few answers ECE is far from 0 even
    for calibrated probabilities (100 answers at .85: about .06), so a measured ECE is read
    against this: ``median`` and ``q95`` of the drawn ECEs, ``p_at_most_05`` the share of
    draws at or below .05, and, when ``correct`` is given, ``p_value``: the share of draws
    with an ECE at least the measured one (small: the miscalibration is real)."""
    c = np.asarray(confidence, dtype=float)
    if c.ndim != 1 or draws < 1:
        msg = "confidence must be a vector and draws at least 1"
        raise ValueError(msg)
    rng = np.random.default_rng(seed)
    drawn = np.array([ece(c, rng.random(len(c)) < c, bins=bins, equal_mass=equal_mass)
                      for _ in range(draws)])
    out = {"median": float(np.median(drawn)), "q95": float(np.quantile(drawn, 0.95)),
           "p_at_most_05": float(np.mean(drawn <= 0.05))}
    if correct is not None:
        measured = ece(c, correct, bins=bins, equal_mass=equal_mass)
        out["p_value"] = float(np.mean(drawn >= measured - 1e-12))
    return out


def interval_coverage(low: Sequence[float], high: Sequence[float],
                      truth: Sequence[float]) -> float:
    """Fraction of true values inside [low, high]."""
    lo, hi, t = (np.asarray(x, dtype=float) for x in (low, high, truth))
    return float(np.mean((t >= lo) & (t <= hi)))

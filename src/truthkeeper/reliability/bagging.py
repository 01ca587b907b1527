"""BayesBag for crowd fits: probabilities averaged over fits to bootstrap resamples.

The Dawid-Skene posterior counts every answer as independent evidence given the item's
class. Where the workers split, the model is misspecified (they err together, items differ
in difficulty) and its posterior is far surer than its accuracy there. Averaging the
posterior over fits to full-size bootstrap resamples of the answers (BayesBag: Huggins and
Miller, arXiv 1912.07104) widens it where the answers disagree with the model and leaves it
where they agree: no label is used and no constant is tuned (``RESAMPLES`` only sets how
closely the average is approximated).

The answer stays the full data's (accuracy is the full fit's): each item's bagged
probabilities are permuted so that the full fit's answer carries the bagged top probability
(how sure the bootstrap is of its best answer), and the rest keep their order.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .crowd import CrowdData
from .ds import DSFit, vb_dawid_skene

__all__ = ["RESAMPLES", "anchored", "bagged"]

RESAMPLES = 10
"""Bootstrap resamples averaged (the measured ECE moves by under .01 past ten)."""


def bagged(data: CrowdData, fit: DSFit, *, reference: bool = False,
           resamples: int = RESAMPLES, seed: int = 0, **kwargs: Any) -> np.ndarray:
    """``fit``'s probabilities (its ``posterior``, or with ``reference`` its ``reference``),
    bagged over ``resamples`` fits of ``vb_dawid_skene(resample, **kwargs)``, anchored to
    ``fit``'s answers (:func:`anchored`)."""
    rng = np.random.default_rng(seed)
    n = len(data.label)
    full = fit.reference if reference else fit.posterior
    total = np.zeros_like(full)
    for _ in range(resamples):
        idx = rng.integers(0, n, n)
        sub = replace(data, item_idx=data.item_idx[idx], worker_idx=data.worker_idx[idx],
                      label=data.label[idx])
        one = vb_dawid_skene(sub, **kwargs)
        total += one.reference if reference else one.posterior
    return anchored(total / resamples, full.argmax(axis=1))


def anchored(q: np.ndarray, answer: np.ndarray) -> np.ndarray:
    """``q`` with, per row, the entries of ``answer`` and of q's top class swapped: the
    given answer carries the row's largest probability.

    >>> anchored(np.array([[0.3, 0.7], [0.6, 0.4]]), np.array([0, 0])).tolist()
    [[0.7, 0.3], [0.6, 0.4]]
    """
    out = q.copy()
    rows = np.arange(len(q))
    top = q.argmax(axis=1)
    out[rows, answer], out[rows, top] = q[rows, top], q[rows, answer]
    return out

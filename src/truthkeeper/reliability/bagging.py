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

A memory's categorical attributes keep the bootstrap in a form a decision can use
(:func:`resampled_rows`): each source's confusion rows in every resampled fit, beside the
full fit's. A decision takes its answer from the full fit's rows and its probabilities
from the item's claims read through each fit's rows in turn, anchored to the answer
(:func:`anchored_draws`). The claims of the one item are not resampled: that widens a
slot by how few claims it has, not by how far they depart from the model (one claim of a
source learned always right read p .78). Where each source made few claims (measured on
synthetic 4-category data, 120 sources of 15 claims, three claims a slot) the full fit's
rows said p .96 at accuracy .72-.77; read through the fits' rows, ECE .03-.05.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .crowd import CrowdData
from .ds import DSFit, vb_dawid_skene

__all__ = ["RESAMPLES", "anchored", "anchored_draws", "bagged", "bagged_both", "bagged_weight",
           "resampled_rows", "revealed_reference"]

RESAMPLES = 10
"""Bootstrap resamples averaged (the measured ECE moves by under .01 past ten)."""


def _resamples(data: CrowdData, resamples: int, seed: int) -> Iterator[CrowdData]:
    """``resamples`` full-size bootstrap resamples of the answers (items and workers kept)."""
    rng = np.random.default_rng(seed)
    n = len(data.label)
    for _ in range(resamples):
        idx = rng.integers(0, n, n)
        yield replace(data, item_idx=data.item_idx[idx], worker_idx=data.worker_idx[idx],
                      label=data.label[idx])


def bagged(data: CrowdData, fit: DSFit, *, reference: bool = False,
           resamples: int = RESAMPLES, seed: int = 0, **kwargs: Any) -> np.ndarray:
    """``fit``'s probabilities (its ``posterior``, or with ``reference`` its ``reference``),
    bagged over ``resamples`` fits of ``vb_dawid_skene(resample, **kwargs)``, anchored to
    ``fit``'s answers (:func:`anchored`)."""
    post, ref = bagged_both(data, fit, resamples=resamples, seed=seed, **kwargs)
    return ref if reference else post


def bagged_both(data: CrowdData, fit: DSFit, *, resamples: int = RESAMPLES, seed: int = 0,
                **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bagged` of the ``posterior`` and of the ``reference`` from one set of fits."""
    post, ref = np.zeros_like(fit.posterior), np.zeros_like(fit.reference)
    for sub in _resamples(data, resamples, seed):
        one = vb_dawid_skene(sub, **kwargs)
        post += one.posterior
        ref += one.reference
    return (anchored(post / resamples, fit.posterior.argmax(axis=1)),
            anchored(ref / resamples, fit.reference.argmax(axis=1)))


def revealed_reference(data: CrowdData, gold: dict[int, int]) -> tuple[np.ndarray, float]:
    """P(the reference label | answers) of every item with the labels ``gold`` revealed:
    the single fit's and BayesBag's (:func:`bagged`, the labels kept in every fit)
    averaged with the weight the revealed labels give BayesBag (:func:`bagged_weight`);
    and that weight."""
    fit = vb_dawid_skene(data, gold=gold)
    _, bag = bagged_both(data, fit, gold=gold)
    w = bagged_weight(fit.reference, bag, gold)
    return (1.0 - w) * fit.reference + w * bag, w


def resampled_rows(data: CrowdData, *, gold: dict[int, int] | None = None,
                   resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """Each worker's Dirichlet confusion rows in the fit to each of ``resamples``
    bootstrap resamples of the answers: (resamples, W, K, K). The gold (revealed labels)
    is kept in every fit; only the answers are resampled. A decision reads an item's
    claims through every fit's rows in turn."""
    fits = []
    for sub in _resamples(data, resamples, seed):
        one = vb_dawid_skene(sub, gold=gold, correlation=False, draws=0)
        assert one.alpha is not None
        fits.append(one.alpha)
    return np.stack(fits)


def bagged_weight(single: np.ndarray, bagged: np.ndarray, gold: Mapping[int, int]) -> float:
    """The posterior probability, given the revealed labels ``gold`` ({item: label}), that
    the bagged probabilities of the reference label are the right model rather than the
    single fit's (both (n_items, K); each revealed item's from its answers:
    ``DSFit.reference`` leaves the item's own label out), at even prior odds: Bayesian
    model averaging over the two, with no constant. 1 with no label revealed.

    BayesBag widens the posterior where the answers depart from the model, which is what
    calibrates it without labels; where revealed labels teach the reference's perception,
    the single fit may already be as sure as it is right, and bagging then makes it less
    sure (measured, 10% of the gold revealed: ECE10 ``s_adult`` .097 single, .062 bagged;
    ``s_rel`` .021 single, .075 bagged). Many labels tell which; a few leave the two mixed
    (a hard choice by the same likelihood was worse on data like the public sets:
    benchmarks/README.md).

    >>> single = np.array([[0.9, 0.1], [0.8, 0.2]]); bagged = np.array([[0.7, 0.3], [0.6, 0.4]])
    >>> round(bagged_weight(single, bagged, {0: 0, 1: 0}), 3), round(bagged_weight(
    ...     single, bagged, {0: 0, 1: 1}), 3)
    (0.368, 0.609)
    """
    if not gold:
        return 1.0
    items = np.fromiter(gold, dtype=int, count=len(gold))
    labels = np.fromiter(gold.values(), dtype=int, count=len(gold))

    def loglik(p: np.ndarray) -> float:
        return float(np.log(np.maximum(p[items, labels], 1e-300)).sum())

    return float(1.0 / (1.0 + np.exp(np.clip(loglik(single) - loglik(bagged), -700.0, 700.0))))


def anchored_draws(draws: np.ndarray, answer: int) -> np.ndarray:
    """(draws, K) probabilities with the column of ``answer`` and that of the largest mean
    swapped: the given answer carries the largest mean probability (:func:`anchored` for
    the draws of one item).

    >>> anchored_draws(np.array([[0.3, 0.7], [0.5, 0.5]]), 0).tolist()
    [[0.7, 0.3], [0.5, 0.5]]
    """
    top = int(draws.mean(axis=0).argmax())
    out = draws.copy()
    out[:, [answer, top]] = draws[:, [top, answer]]
    return out


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

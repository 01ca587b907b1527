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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .crowd import CrowdData
from .ds import DSFit, vb_dawid_skene

__all__ = ["RESAMPLES", "anchored", "anchored_draws", "bagged", "bagged_both", "model_weights",
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


def revealed_reference(data: CrowdData, gold: Mapping[int, int], *,
                       label_free: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """P(the reference label | answers) of every item with the labels ``gold`` revealed:
    three models averaged with the weights the revealed labels give them
    (:func:`model_weights`): the single fit and BayesBag (:func:`bagged`), both taught the
    labels, and the label-free BayesBag (``label_free``: its probabilities of the reference
    label, fitted here when not given). Each model is weighed by the revealed labels it was
    not taught: its probability of a label is that of its fit without the label's fold
    (:data:`FOLDS`). Returns the probabilities and the three weights.

    A fit taught a label predicts that label better than it predicts labels it has not
    seen (the workers' confusion rows were learned with the label pinning its item):
    weighed by the labels they were taught, the taught fits looked surer than right and
    more labels made the probabilities worse (``rte``, 10% of the gold revealed: ECE10 .018
    label-free, .032 with the labels; 55%: .045). Weighed by labels they were not taught,
    the labels teach where they predict better than the answers alone, and give way where
    they do not."""
    if label_free is None:
        _, label_free = bagged_both(data, vb_dawid_skene(data))
    if not gold:  # nothing taught: the label-free BayesBag
        return label_free, np.array([0.0, 0.0, 1.0])
    fit = vb_dawid_skene(data, gold=dict(gold))
    _, bag = bagged_both(data, fit, gold=dict(gold))
    items = np.fromiter(gold, dtype=int, count=len(gold))
    single_held, bag_held = np.zeros_like(bag), np.zeros_like(bag)
    rng = np.random.default_rng(0)
    for part in np.array_split(rng.permutation(items), min(FOLDS, len(items))):
        left_out = set(part.tolist())
        taught = {i: g for i, g in gold.items() if i not in left_out}
        one = vb_dawid_skene(data, gold=taught)
        single_held[part] = one.reference[part]
        bag_held[part] = bagged_both(data, one, gold=taught)[1][part]
    w = model_weights([single_held, bag_held, label_free], gold)
    return w[0] * fit.reference + w[1] * bag + w[2] * label_free, w


FOLDS = 5
"""Folds of the revealed labels for :func:`revealed_reference`'s weights: each label's
probability under a taught model comes from its fit taught the other folds (four fifths of
the labels)."""


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


def model_weights(models: Sequence[np.ndarray], gold: Mapping[int, int]) -> np.ndarray:
    """The posterior probability of each model given the revealed labels ``gold``
    ({item: label}), at even prior odds: Bayesian model averaging with no constant. Each
    model is (n_items, K) probabilities of the reference label, the revealed items' from
    fits that were not taught their labels (:func:`revealed_reference`). Even weights with
    no label revealed.

    BayesBag widens the posterior where the answers depart from the model, which is what
    calibrates it without labels; where revealed labels teach the reference's perception,
    the single fit may already be as sure as it is right, and bagging then makes it less
    sure (measured, 10% of the gold revealed: ECE10 ``s_adult`` .097 single, .062 bagged;
    ``s_rel`` .021 single, .075 bagged); where the labels teach nothing the answers do not
    (the reference reads items as the crowd does) the label-free fit is the better
    calibrated. Many labels tell which; a few leave them mixed (a hard choice by the same
    likelihood was worse on data like the public sets: benchmarks/README.md).

    >>> single = np.array([[0.9, 0.1], [0.8, 0.2]]); bagged = np.array([[0.7, 0.3], [0.6, 0.4]])
    >>> model_weights([single, bagged], {0: 0, 1: 0}).round(3).tolist()
    [0.632, 0.368]
    >>> model_weights([single, bagged], {0: 0, 1: 1}).round(3).tolist()
    [0.391, 0.609]
    """
    if not gold:
        return np.full(len(models), 1.0 / len(models))
    items = np.fromiter(gold, dtype=int, count=len(gold))
    labels = np.fromiter(gold.values(), dtype=int, count=len(gold))
    ll = np.array([np.log(np.maximum(p[items, labels], 1e-300)).sum() for p in models])
    w = np.exp(ll - ll.max())
    out: np.ndarray = w / w.sum()
    return out


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

"""Reliability from agreement over open values: one-coin Dawid-Skene where each item's truth
is one of the values claimed for it (or a value nobody claimed), fitted by variational
Bayes, with the size of the domain of false values and the correlation of an item's claims
chosen per attribute without labels (:func:`fit_open_claims`). The categorical model, whose
classes are declared, is :mod:`.ds`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import digamma

from .book import false_domain
from .ds import CORRELATION_GRID, _rows_by_item, _softmax, design_weights
from .priors import ONE_COIN_PRIOR

__all__ = ["FALSE_VALUES_GRID", "claim_predictions", "fit_open_claims", "vb_one_coin_open"]


def vb_one_coin_open(
    item_idx: np.ndarray,
    worker_idx: np.ndarray,
    choice_idx: np.ndarray,
    n_choices: np.ndarray,
    n_workers: int,
    *,
    gold: dict[int, int] | None = None,
    prior_correct: float = ONE_COIN_PRIOR[0],
    prior_wrong: float = ONE_COIN_PRIOR[1],
    max_iter: int = 100,
    tol: float = 1e-6,
    kernels: dict[int, np.ndarray] | None = None,
    weights: np.ndarray | None = None,
    false_values: float | np.ndarray = 1.0,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """One-coin Dawid-Skene for open-ended values: item i's truth is one of its own
    ``n_choices[i]`` claimed values; worker w answers the truth with probability acc_w ~
    Beta(prior_correct, prior_wrong), else one of the other claimed values uniformly.

    Returns the posterior mean accuracy per worker and, per item, the posterior over its
    choices. ``gold`` maps an item to its true choice (observed, semi-supervised).
    ``kernels`` maps an item to its similarity matrix over its choices: there a claim is
    fractional evidence, right with weight k(claim, truth) (:mod:`.similarity`).
    ``weights`` scales each claim's evidence about its item's truth
    (:func:`independence_weights`: copies count less); the accuracies count every claim.
    ``false_values`` N: a wrong claim is one of max(m - 1, N) false values
    (:func:`.book.false_domain`), and the truth may be one of the values nobody claimed (1: the
    false values are the other claimed ones, as ACCU-like models with n = m - 1).
    """
    ev = np.ones(len(item_idx)) if weights is None else np.asarray(weights, dtype=float)
    kernels = {i: k for i, k in (kernels or {}).items() if i not in (gold or {})}
    by_item = _rows_by_item(np.asarray(item_idx), kernels)
    n_items = len(n_choices)
    offsets = np.concatenate([[0], np.cumsum(n_choices)[:-1]]).astype(int)
    flat = offsets[item_idx] + choice_idx
    size = int(n_choices.sum())
    owner = np.repeat(np.arange(n_items), n_choices)
    dom = false_domain(n_choices, false_values)
    log_others = np.log(dom)
    # values no source claims that may be the truth; with N = 1 (the false values are the
    # other claimed ones) none: a slot everyone agrees on would otherwise be its own mirror
    # image (all right, or all wrong on the one false value), and the fit can slide to it
    n_unclaimed = np.where(np.asarray(false_values) > 1, dom + 1.0 - n_choices, 0.0)
    # start from vote shares
    T = np.bincount(flat, weights=ev, minlength=size).astype(float)
    T /= np.maximum(np.bincount(owner, weights=T, minlength=n_items)[owner], 1.0)
    gold = gold or {}
    g_flat = np.array([offsets[i] + c for i, c in gold.items()], dtype=int)
    g_items = np.array(list(gold), dtype=int)
    a: np.ndarray = np.zeros(n_workers)
    b: np.ndarray = np.zeros(n_workers)
    hit_k: dict[int, np.ndarray] = {}
    for _ in range(max_iter):
        if len(g_items):
            T[np.isin(owner, g_items)] = 0.0
            T[g_flat] = 1.0
        hit = T[flat]
        for i, h in hit_k.items():
            hit[by_item[i]] = h
        a = prior_correct + np.bincount(worker_idx, weights=hit, minlength=n_workers)
        b = prior_wrong + np.bincount(worker_idx, weights=1.0 - hit, minlength=n_workers)
        e_log_a = digamma(a) - digamma(a + b)
        e_log_w = digamma(b) - digamma(a + b)
        wrong = (e_log_w[worker_idx] - log_others[item_idx]) * ev
        base = np.bincount(item_idx, weights=wrong, minlength=n_items)
        z = base[owner] + np.bincount(flat, weights=e_log_a[worker_idx] * ev - wrong,
                                      minlength=size)
        top = np.maximum(np.maximum.reduceat(z, offsets), base)  # base: an unclaimed value
        ez = np.exp(z - top[owner])
        new = ez / (np.add.reduceat(ez, offsets) + n_unclaimed * np.exp(base - top))[owner]
        for i, k in kernels.items():
            rows = by_item[i]
            said, m = choice_idx[rows], k.shape[0]
            w = k[said, :]                                       # (answers, m)
            zi = (ev[rows][:, None] * (w * e_log_a[worker_idx[rows]][:, None] + (1 - w) * (
                e_log_w[worker_idx[rows]][:, None] - np.log(max(m - 1, 1))))).sum(axis=0)
            ti = np.exp(zi - zi.max())
            ti /= ti.sum()
            new[offsets[i]:offsets[i] + n_choices[i]] = ti
            hit_k[i] = w @ ti                                    # expected rightness
        if len(g_items):
            new[np.isin(owner, g_items)] = 0.0
            new[g_flat] = 1.0
        delta = float(np.abs(new - T).max())
        T = new
        if delta < tol:
            break
    acc = a / (a + b)
    return acc, [T[offsets[i]:offsets[i] + n_choices[i]] for i in range(n_items)]


FALSE_VALUES_GRID = np.array([1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 64.0, 256.0, 1024.0])
"""The sizes N of the domain of false values that are tried (1: the other claimed values):
each small N, where a few common wrong values live, then coarser steps."""


def fit_open_claims(item_idx: np.ndarray, worker_idx: np.ndarray, choice_idx: np.ndarray,
                    n_choices: np.ndarray, n_workers: int, *,
                    gold: dict[int, int] | None = None,
                    kernels: dict[int, np.ndarray] | None = None,
                    correlation: bool = True,
                    weights: np.ndarray | None = None,
                    groups: np.ndarray | None = None,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sources' accuracies (:func:`vb_one_coin_open`), and the intra-item correlation
    rho (:func:`design_weights`; 0 without ``correlation``) and the size N of the domain of
    false values (:func:`.book.false_domain`) of each group of items, then of all of them
    (the last entry), without labels. ``groups`` gives each item's group (an attribute), 0
    to G - 1, or -1 for an item that has none of its own; None: every item -1.

    For each N of :data:`FALSE_VALUES_GRID` the accuracies are fitted, and each group, and
    all the claims together, keep the N and rho under which their claims are best
    predicted from the other claims of their items. A claim is predicted as which of the
    other claims' values it repeats, or that it names none of them: so N comes out small
    where wrong claims coincide (copied or common errors) and large where they scatter.
    With groups the accuracies are fitted again with each item's N (its group's, or that
    of all the claims). On an item with a similarity kernel (:mod:`.similarity`) a claim u
    under the truth v has the fractional-evidence likelihood, normalised over the item's
    values (N = 1). rho is searched on every fourth value of :data:`CORRELATION_GRID`,
    then on the values next to the best. ``weights`` (:func:`independence_weights`) scale
    each claim's evidence in the fit and its term in the criterion: copied errors do not
    read as errors that coincide."""
    ii, ww, cc = (np.asarray(x, dtype=int) for x in (item_idx, worker_idx, choice_idx))
    m = np.asarray(n_choices, dtype=int)
    g_item = np.full(len(m), -1) if groups is None else np.asarray(groups, dtype=int)
    n_own = int(g_item.max()) + 1 if len(g_item) else 0
    kernels = kernels or {}
    plain = ~np.isin(ii, list(kernels))
    kernel_rows = _rows_by_item(ii, kernels)
    w = np.ones(len(ii)) if weights is None else np.asarray(weights, dtype=float)
    g_plain = g_item[ii[plain]]
    mine = g_plain >= 0
    best_value = np.full(n_own + 1, -np.inf)
    best_rho, best_n = np.zeros(n_own + 1), np.ones(n_own + 1)
    best_acc = np.zeros(n_workers)
    for n_false in FALSE_VALUES_GRID:
        acc, _ = vb_one_coin_open(ii, ww, cc, m, n_workers, gold=gold, kernels=kernels,
                                  false_values=float(n_false), weights=weights)
        a = np.clip(acc[ww], 1e-9, 1 - 1e-9)

        def score(grid: np.ndarray, a: np.ndarray = a, n_false: float = float(n_false),
                  ) -> np.ndarray:
            """(rho of grid, group and then all): the summed log-probabilities of claims."""
            out = np.zeros((len(grid), n_own + 1))
            if plain.any():
                lik = claim_predictions(ii[plain], cc[plain], m, a[plain], n_false, grid,
                                        w[plain])
                terms = w[plain][None, :] * np.log(np.maximum(lik, 1e-300))
                out[:, n_own] = terms.sum(axis=1)
                for r in range(len(grid) if n_own else 0):
                    out[r, :n_own] = np.bincount(g_plain[mine], weights=terms[r][mine],
                                                 minlength=n_own)
            for i, rows in kernel_rows.items():
                k = _kernel_claim_scores(kernels[i], cc[rows], a[rows], grid)
                out[:, n_own] += k
                if g_item[i] >= 0:
                    out[:, g_item[i]] += k
            return out

        if correlation:
            value, rho = _best_correlation(score, n_own + 1)
        else:
            value, rho = score(CORRELATION_GRID[:1])[0], np.zeros(n_own + 1)
        better = value > best_value  # ties: the smaller N
        best_value = np.where(better, value, best_value)
        best_rho, best_n = np.where(better, rho, best_rho), np.where(better, n_false, best_n)
        if better[n_own]:
            best_acc = acc
    if n_own:  # the accuracies with each item's own domain
        per_item = np.where(g_item >= 0, best_n[np.maximum(g_item, 0)], best_n[n_own])
        best_acc, _ = vb_one_coin_open(ii, ww, cc, m, n_workers, gold=gold, kernels=kernels,
                                       false_values=per_item, weights=weights)
    return best_acc, best_rho, best_n


def _best_correlation(score: Any, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the best score and its rho over :data:`CORRELATION_GRID`, ``score(grid)``
    giving (rho, group) scores: every fourth value, then the three on each side of each
    group's best (ties: the smaller rho)."""
    coarse = np.arange(0, len(CORRELATION_GRID), 4)
    top = coarse[np.argmax(score(CORRELATION_GRID[coarse]), axis=0)]  # per group
    fine = np.unique(np.concatenate([np.arange(max(j - 3, 0), min(j + 4, len(
        CORRELATION_GRID))) for j in top]))
    scores = score(CORRELATION_GRID[fine])  # (fine, group)
    near = np.abs(fine[:, None] - top[None, :]) <= 3  # each group's own window
    scores = np.where(near, scores, -np.inf)
    r = np.argmax(scores, axis=0)
    return scores[r, np.arange(n_groups)], CORRELATION_GRID[fine[r]]


def claim_predictions(ii: np.ndarray, cc: np.ndarray, m: np.ndarray, acc: np.ndarray,
                      false_values: float, grid: np.ndarray = CORRELATION_GRID,
                      weights: np.ndarray | None = None) -> np.ndarray:
    """(rho of ``grid``, claims): P(claim | its item's other claims), each claim's ``acc``
    the accuracy of its source.

    The outcome of a claim is which of the other claims' m_o values it repeats, or that it
    names none of them. The truth is one of those values or, with the domain of false
    values :func:`.book.false_domain` D, one of the D + 1 - m_o they do not name, weighted
    as a conflict would weigh them on the other claims alone. A wrong claim is one of D
    false values. D depends on how many values the slot has, so an outcome that repeats a
    value is scored with the D of m_o values and one that adds a value with the D of m_o + 1;
    the outcomes' probabilities are then normalised (else a small N, whose D grows with
    every new value, would be credited for new values it never pays for). ``weights`` scale
    each claim's evidence (:func:`fit_open_claims`)."""
    out = np.zeros((len(grid), len(ii)))
    n = len(m)
    offsets = np.concatenate([[0], np.cumsum(m)[:-1]]).astype(int)
    owner = np.repeat(np.arange(n), m)
    flat = offsets[ii] + cc
    w = np.ones(len(ii)) if weights is None else weights
    d0 = (np.log(acc) - np.log1p(-acc)) * w  # a claim's evidence, before the domain
    base = np.bincount(flat, weights=d0, minlength=int(m.sum()))
    count = np.bincount(flat, minlength=int(m.sum()))
    others = np.bincount(ii, minlength=n) - 1  # per item, the claims besides any one
    repeated = count[flat] > 1  # the claim's value is also claimed by another source
    m_o = m[ii] - (~repeated)  # how many values the other claims name
    dom_a = false_domain(m_o, false_values)       # outcomes that repeat a value
    dom_b = false_domain(m_o + 1, false_values)   # the outcome that adds one
    # each value's evidence from its claims under the D of a slot of m + k values
    weight = np.bincount(flat, weights=w, minlength=int(m.sum()))  # count, weighted
    variants = []
    for k in (-1, 0, 1):
        log_d = np.log(false_domain(np.maximum(m + k, 0), false_values))
        g = base + weight * log_d[owner]
        cav = base[flat] - d0 + (weight[flat] - w) * log_d[ii]  # the claim's value without it
        variants.append((g, np.maximum.reduceat(g, offsets), cav))
    wrong_a = (1 - acc) / dom_a
    for r, rho in enumerate(grid):
        t = design_weights(others, rho)
        named, cavity, top = [], [], []
        for g, g_max, cav in variants:
            tp = np.maximum(t * g_max, 0.0)  # 0: a value nobody claimed
            e = np.exp(t[owner] * g - tp[owner])
            c = np.exp(t[ii] * cav - tp[ii])
            # the others' values: every value but the claim's, and its own without the claim
            named.append(np.add.reduceat(e, offsets)[ii] - e[flat] + np.where(repeated, c, 0.0))
            cavity.append(c)
            top.append(tp[ii])
        # the slot of the others' m_o values is variant 0 for a claim that repeats a value
        # and -1 for one whose value is its own; the slot with one value more, 1 and 0
        n_a, c_a, t_a = (np.where(repeated, x[1], x[0]) for x in (named, cavity, top))
        n_b, t_b = (np.where(repeated, x[2], x[1]) for x in (named, top))
        den_a = n_a + (dom_a + 1.0 - m_o) * np.exp(-t_a)
        p_in_a, p_v = n_a / den_a, c_a / den_a
        p_in_b = n_b / (n_b + (dom_b + 1.0 - m_o) * np.exp(-t_b))
        repeat_v = p_v * acc + (1 - p_v) * wrong_a
        repeat_any = p_in_a * acc + (m_o - p_in_a) * wrong_a
        new = (p_in_b * (1 - acc) * (dom_b - m_o + 1) / dom_b
               + (1 - p_in_b) * (acc + (1 - acc) * (dom_b - m_o) / dom_b))
        out[r] = np.where(repeated, repeat_v, new) / (repeat_any + new)
    return out


def _kernel_claim_scores(k: np.ndarray, said: np.ndarray, acc: np.ndarray,
                         grid: np.ndarray = CORRELATION_GRID) -> np.ndarray:
    """Per rho of ``grid``, the summed log-probabilities of one item's claims given the
    others (as :func:`claim_predictions`), with the similarity kernel ``k`` (m, m)."""
    m = k.shape[0]
    lt, lf = np.log(acc)[:, None, None], np.log((1 - acc) / max(m - 1, 1))[:, None, None]
    table = k[None] * lt + (1 - k[None]) * lf        # (S, u, v): log-likelihood of u under v
    lik = np.exp(table)
    lik /= lik.sum(axis=1, keepdims=True)             # P(u | v), normalised over u
    own = table[np.arange(len(said)), said, :]        # (S, v)
    cavity = own.sum(axis=0)[None, :] - own
    t = design_weights(np.full(len(grid), len(said) - 1), grid)
    p = _softmax(t[:, None, None] * cavity[None])     # (R, S, v)
    q = (p * lik[np.arange(len(said)), said, :][None]).sum(axis=2)
    out: np.ndarray = np.log(np.maximum(q, 1e-300)).sum(axis=1)
    return out

"""Reliability from agreement: the Bayesian Dawid-Skene family, fitted by variational Bayes.

Model (the same as :func:`truthkeeper.reliability.models.dawid_skene`): each item i has a
latent true class z_i ~ Categorical(pi), pi ~ Dirichlet(a_pi). Full confusion: each worker w
has a row CM[w, k] ~ Dirichlet(b_k) for every true class k, with more prior mass on the
diagonal (workers are better than chance); the answer of w on i is ~ Categorical(CM[w, z_i]).
One-coin: worker accuracy acc_w ~ Beta(prior_diag, prior_off (K - 1)), wrong answers uniform
over the other classes.

Inference here is mean-field variational Bayes (closed-form updates; the discrete truths are
summed out in each update), which gives posterior class probabilities averaged over the
uncertainty in the confusion matrices rather than plugged in at a point estimate.

Revealed gold labels (semi-supervised) are not clamped as the truth: a reference label is one
more noisy reading of the item. Gold g_i ~ Categorical(A[z_i]) with a perception matrix A
whose rows have the confusion rows' prior. A is learned jointly from the revealed items, so
where the reference disagrees with what the crowd perceives (ambiguous ordinal classes,
reference labels drawn from a different mix of classes than the crowd's items), the
probabilities of the *reference* label, ``posterior @ perception``, say so. This is where the
unsupervised model's overconfidence against a reference comes from on real data, and the
only part of it the answers alone cannot reveal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import digamma

from .book import false_domain
from .crowd import CrowdData

__all__ = ["COPY_RATE", "DEPENDENCE_PRIOR", "DSFit", "claim_predictions", "design_weights",
           "fit_open_claims", "independence_weights", "majority_vote", "source_dependence",
           "vb_dawid_skene", "vb_one_coin_open"]

from .priors import DS_PRIOR_DIAG as PRIOR_DIAG
from .priors import DS_PRIOR_OFF as PRIOR_OFF
from .priors import ONE_COIN_PRIOR

PREDICTIVE_DRAWS = 400
"""Draws of the confusion rows over which a reported posterior is averaged."""


@dataclass(frozen=True)
class DSFit:
    """Posterior class probabilities per item and the workers' expected confusion matrices.

    ``posterior`` is over the latent class from the answers (and, on revealed items, their
    gold label); ``perception`` (K, K) is the posterior mean of P(gold label | latent class),
    the identity when no gold was revealed; ``reference`` is P(gold label | answers) for
    every item, the probability to compare with a reference."""

    posterior: np.ndarray          # (n_items, K)
    confusion: np.ndarray          # (n_workers, K, K) posterior mean, rows sum to 1
    class_prior: np.ndarray        # (K,)
    iterations: int
    answer_loglik: np.ndarray      # (n_items, K): sum over answers of E[log CM[w, k, l]]
    log_prior: np.ndarray          # (K,): E[log pi]
    perception: np.ndarray         # (K, K): E[A], rows sum to 1
    item_correlation: float = 0.0  # rho: see :func:`design_weights`
    alpha: np.ndarray | None = None  # (n_workers, K, K) Dirichlet rows (full confusion)
    unlabelled: np.ndarray | None = None  # (n_items, K): the posterior without gold labels

    @property
    def reference(self) -> np.ndarray:
        """P(the reference label of each item | its answers): the class posterior without
        the item's own gold label, mapped through the perception matrix."""
        p = self.unlabelled if self.unlabelled is not None else _softmax(
            self.answer_loglik + self.log_prior[None, :])
        return np.asarray(p @ self.perception)

    @property
    def labels(self) -> np.ndarray:
        out: np.ndarray = self.posterior.argmax(axis=1)
        return out

    @property
    def worker_accuracy(self) -> np.ndarray:
        """Expected probability that each worker answers correctly (class-prior weighted)."""
        diag = np.einsum("wkk->wk", self.confusion)
        return np.asarray(diag @ self.class_prior)


def majority_vote(data: CrowdData, *, gold: dict[int, int] | None = None) -> np.ndarray:
    """Vote shares per item (n_items, K). Ties are broken by argmax, i.e. the lowest class
    index wins; revealed gold rows are one-hot."""
    counts = np.zeros((data.n_items, data.n_classes))
    np.add.at(counts, (data.item_idx, data.label), 1.0)
    shares: np.ndarray = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    for i, k in (gold or {}).items():
        shares[i] = 0.0
        shares[i, k] = 1.0
    return shares


def vb_dawid_skene(
    data: CrowdData,
    *,
    one_coin: bool = False,
    gold: dict[int, int] | None = None,
    prior_diag: float = PRIOR_DIAG,
    prior_off: float = PRIOR_OFF,
    max_iter: int = 100,
    tol: float = 1e-5,
    correlation: bool = True,
    draws: int = PREDICTIVE_DRAWS,
) -> DSFit:
    """Fit the Bayesian Dawid-Skene model by variational Bayes (see the module docstring).

    With ``correlation`` the reported posteriors count each item's answers as correlated
    readings (the intra-item correlation estimated from the answers, see the module
    docstring); the confusion matrices are those of the plain fit. With ``draws`` (full
    confusion), the reported posterior of an item is averaged over that many draws of the
    confusion rows from their posterior, as a conflict's probabilities are
    (:mod:`.categorical`), instead of taken at mean field's geometric-mean rows, which
    read a worker with few answers as surer than its counts allow; 0: mean field's."""
    K, W, n = data.n_classes, data.n_workers, data.n_items
    ii, ww, ll = data.item_idx, data.worker_idx, data.label
    prior = np.full((K, K), prior_off)
    np.fill_diagonal(prior, prior_diag)
    gold = gold or {}
    g_items = np.array(list(gold), dtype=int)
    g_cls = np.array([gold[i] for i in g_items], dtype=int)
    T = majority_vote(data)
    a_post = prior.copy()
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported after the loop
        # M-like step: Dirichlet posteriors of confusion rows and class prior
        counts = _counts(T, ii, ww, ll, W, K)
        if one_coin:
            correct = np.einsum("wkk->w", counts)
            total = counts.sum(axis=(1, 2))
            a = correct + prior_diag
            b = total - correct + prior_off * max(K - 1, 1)
            e_log_acc = digamma(a) - digamma(a + b)
            e_log_err = digamma(b) - digamma(a + b) - np.log(max(K - 1, 1))
            e_log_cm = np.repeat(e_log_err[:, None, None], K, axis=1).repeat(K, axis=2)
            idx = np.arange(K)
            e_log_cm[:, idx, idx] = e_log_acc[:, None]
            post = None
        else:
            post = counts + prior[None, :, :]
            e_log_cm = digamma(post) - digamma(post.sum(axis=2, keepdims=True))
        pi_post = T.sum(axis=0) + 1.0
        e_log_pi = digamma(pi_post) - digamma(pi_post.sum())
        # E step: item posteriors, truths summed out
        ans = np.zeros((n, K))
        contrib = e_log_cm[ww, :, ll]  # (n_answers, K)
        for k in range(K):
            ans[:, k] = np.bincount(ii, weights=contrib[:, k], minlength=n)
        logT = ans + e_log_pi[None, :]
        if len(g_items):  # the gold label as one more reading, through A
            a_post = prior + _gold_counts(T, g_items, g_cls, K)
            e_log_a = digamma(a_post) - digamma(a_post.sum(axis=1, keepdims=True))
            logT[g_items] += e_log_a[:, g_cls].T
        newT = _softmax(logT)
        delta = float(np.abs(newT - T).max())
        T = newT
        if delta < tol:
            break
    counts = _counts(T, ii, ww, ll, W, K)
    if one_coin:
        correct = np.einsum("wkk->w", counts)
        total = counts.sum(axis=(1, 2))
        denom = prior_diag + prior_off * max(K - 1, 1)
        acc = (correct + prior_diag) / (total + denom)
        cm = np.repeat(((1 - acc) / max(K - 1, 1))[:, None, None], K, axis=1).repeat(K, axis=2)
        cm[:, np.arange(K), np.arange(K)] = acc[:, None]
        # the worker's accuracy without this answer, then P(this answer | class k)
        acc_out = ((correct[ww] - T[ii, ll] + prior_diag) / (total[ww] - 1.0 + denom))[:, None]
        own = np.where(np.eye(K, dtype=bool)[ll], acc_out, (1 - acc_out) / max(K - 1, 1))
    else:
        post = counts + prior[None, :, :]
        cm = post / post.sum(axis=2, keepdims=True)
        # P(this answer | class k) from the worker's counts without this answer
        own = (post[ww, :, ll] - T[ii]) / (post[ww].sum(axis=2) - T[ii])
    pi = (T.sum(axis=0) + 1.0) / (n + K)
    perception = (a_post / a_post.sum(axis=1, keepdims=True) if len(g_items)
                  else np.eye(K))
    rho = 0.0
    if correlation:
        fixed = np.tile(e_log_pi, (n, 1))
        if len(g_items):
            fixed[g_items] += e_log_a[:, g_cls].T
        rho = _answer_correlation(ans, contrib, fixed, own, ii, n)
        ans = ans * design_weights(np.bincount(ii, minlength=n), rho)[:, None]
        T = _softmax(ans + fixed)
    unlabelled = None
    if draws and post is not None:
        gold_term = np.zeros((n, K))
        if len(g_items):
            gold_term[g_items] = e_log_a[:, g_cls].T
        weights = design_weights(np.bincount(ii, minlength=n), rho)
        T, unlabelled = _draw_average(post, ii, ww, ll, weights, e_log_pi, gold_term, draws)
    return DSFit(posterior=T, confusion=cm, class_prior=pi, iterations=it, answer_loglik=ans,
                 log_prior=e_log_pi, perception=perception, item_correlation=rho,
                 alpha=post, unlabelled=unlabelled)



def _draw_average(alpha: np.ndarray, ii: np.ndarray, ww: np.ndarray, ll: np.ndarray,
                  weights: np.ndarray, log_prior: np.ndarray, gold_term: np.ndarray,
                  draws: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The class posterior of each item averaged over ``draws`` draws of every worker's
    confusion rows from Dirichlet(``alpha``), with and without ``gold_term`` (the revealed
    labels' evidence); each item's answers weighted by ``weights``."""
    rng = np.random.default_rng(seed)
    n, K = len(weights), alpha.shape[1]
    with_gold, without = np.zeros((n, K)), np.zeros((n, K))
    for _ in range(draws):
        g = rng.standard_gamma(alpha)
        log_cm = np.log(np.maximum(g / g.sum(axis=2, keepdims=True), 1e-300))
        contrib = log_cm[ww, :, ll]
        ans = np.stack([np.bincount(ii, weights=contrib[:, k], minlength=n)
                        for k in range(K)], axis=1) * weights[:, None] + log_prior[None, :]
        without += _softmax(ans)
        with_gold += _softmax(ans + gold_term)
    return with_gold / draws, without / draws


def _softmax(z: np.ndarray) -> np.ndarray:
    """Normalised exp over the last axis (rows of log-probabilities up to a constant)."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def _rows_by_item(item_idx: np.ndarray, items: Any) -> dict[int, np.ndarray]:
    """The row numbers of each of ``items`` in ``item_idx`` (one sort, not a scan each)."""
    order = np.argsort(item_idx, kind="stable")
    sorted_items = item_idx[order]
    out = {}
    for i in items:
        lo, hi = np.searchsorted(sorted_items, [i, i + 1])
        out[int(i)] = order[lo:hi]
    return out


CORRELATION_GRID = np.concatenate([[0.0], np.geomspace(1e-3, 1.0, 40)])
"""The values of the intra-item correlation rho that are tried (0: independent readings)."""


def design_weights(n_readings: Any, rho: Any) -> np.ndarray:
    """The weight of each of n correlated readings of one item: 1 / (1 + (n - 1) rho), so n
    readings with intra-item correlation rho carry the evidence of n / (1 + (n - 1) rho)
    independent ones (at most 1 / rho)."""
    n = np.asarray(n_readings, dtype=float)
    out: np.ndarray = 1.0 / (1.0 + np.maximum(n - 1.0, 0.0) * rho)
    return out


def _answer_correlation(ans: np.ndarray, contrib: np.ndarray, fixed: np.ndarray,
                        own: np.ndarray, ii: np.ndarray, n: int) -> float:
    """The rho of :data:`CORRELATION_GRID` under which each answer is best predicted from its
    item's other answers: P(answer a) = sum_k P(k | the others, rho) P(answer | k), with
    ``own`` (n_answers, K) the second factor from the worker's counts without answer a."""
    n_other = np.bincount(ii, minlength=n)[ii] - 1
    cavity = ans[ii] - contrib  # the item's evidence without the answer
    scores = np.zeros(len(CORRELATION_GRID))
    for r, rho in enumerate(CORRELATION_GRID):
        p = _softmax(design_weights(n_other, rho)[:, None] * cavity + fixed[ii])
        scores[r] = np.log(np.maximum((p * own).sum(axis=1), 1e-300)).sum()
    return float(CORRELATION_GRID[int(np.argmax(scores))])  # ties: the smaller rho


def _gold_counts(T: np.ndarray, items: np.ndarray, cls: np.ndarray, K: int) -> np.ndarray:
    """counts[k, j] = sum of T[i, k] over the revealed items i whose gold label is j."""
    out = np.zeros((K, K))
    for j in range(K):
        out[:, j] = T[items[cls == j]].sum(axis=0)
    return out


def _counts(T: np.ndarray, ii: np.ndarray, ww: np.ndarray, ll: np.ndarray, W: int,
            K: int) -> np.ndarray:
    """counts[w, k, l] = sum of T[i, k] over the answers l of worker w on items i."""
    key = ww * K + ll
    out = np.empty((W, K, K))
    for k in range(K):
        out[:, k, :] = np.bincount(key, weights=T[ii, k], minlength=W * K).reshape(W, K)
    return out


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


# Copying between sources (ACCU's dependence test) lives in .dependence; re-exported here,
# where the reliability layer has always found it.
from .dependence import (  # noqa: E402
    COPY_RATE,
    DEPENDENCE_PRIOR,
    independence_weights,
    source_dependence,
)

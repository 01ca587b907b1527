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
unsupervised model's overconfidence against a reference comes from on real data.

Before any label is revealed, A is not the identity (a reference that reads the truth
infallibly) but the reader's matrix (:func:`reader_perception`): the mean confusion of the
workers who gave the most reliable tenth of the answers. A reference is made by someone, and
nobody is assumed to read an item better than the crowd's best do. Where the best workers
are near perfect this changes little; where even they disagree with the crowd's class
(ambiguous, ordinal grades) the probabilities of the reference label say so, without a
label. Where the reference agrees with the crowd, a matrix learned from a few labels only
makes confident answers less sure than they are right, so the matrix reported is a mix
of the learned one, the identity and the reader's, ``w A + v I + (1 - w - v) R``, with w
and v on a fixed grid chosen by how well it predicts each revealed label from its item's
answers alone (leave one out): only the revealed labels decide, one configuration for
every set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import digamma

from .crowd import CrowdData

__all__ = ["CORRELATION_GRID", "DSFit", "design_weights", "majority_vote", "reader_perception",
           "vb_dawid_skene"]

from .priors import DS_PRIOR_DIAG as PRIOR_DIAG
from .priors import DS_PRIOR_OFF as PRIOR_OFF

PREDICTIVE_DRAWS = 400
"""Draws of the confusion rows over which a reported posterior is averaged."""


@dataclass(frozen=True)
class DSFit:
    """Posterior class probabilities per item and the workers' expected confusion matrices.

    ``posterior`` is over the latent class from the answers (and, on revealed items, their
    gold label); ``perception`` (K, K) is P(gold label | latent class): the posterior mean
    mixed with the identity and the reader's (:func:`reader_perception`) as the revealed
    labels bear out, the reader's when no gold was revealed; ``reference`` is P(gold label |
    answers) for
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
        contrib = _answer_rows(e_log_cm, ww, ll)  # (n_answers, K)
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
    reader = reader_perception(cm, pi, np.bincount(ww, minlength=W))
    perception = (a_post / a_post.sum(axis=1, keepdims=True) if len(g_items) else reader)
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
    if len(g_items):  # how much of the learned perception the revealed labels bear out
        answers_only = unlabelled if unlabelled is not None else _softmax(ans + e_log_pi)
        perception = _shrunk_perception(a_post, T, answers_only, g_items, g_cls, reader)
    return DSFit(posterior=T, confusion=cm, class_prior=pi, iterations=it, answer_loglik=ans,
                 log_prior=e_log_pi, perception=perception, item_correlation=rho,
                 alpha=post, unlabelled=unlabelled)


SHRINK_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


READER_SHARE = 0.1
"""The share of the answers, those of the most reliable workers, that a reference label
is assumed to read the truth as well as, until revealed labels say otherwise."""


def reader_perception(cm: np.ndarray, class_prior: np.ndarray,
                      answers: np.ndarray) -> np.ndarray:
    """P(a reference label | the latent class) before any is revealed: the mean confusion
    matrix, weighted by answers, of the workers who gave the most reliable tenth
    (``READER_SHARE``) of the answers, ranked by expected accuracy under the class prior.

    No reader of an item is assumed infallible: a reference (a gold label, a user's
    confirmation) is one more reading, by someone as good as the crowd's best. Where the
    best workers are near perfect this is near the identity; where even they often
    disagree with the crowd's class (ambiguous, ordinal classes) the probabilities of the
    reference label are as unsure as that disagreement.

    >>> cm = np.array([[[.9, .1], [.2, .8]], [[.6, .4], [.4, .6]]])
    >>> reader_perception(cm, np.array([.5, .5]), np.array([10, 90])).round(2).tolist()
    [[0.9, 0.1], [0.2, 0.8]]
    """
    acc = np.einsum("wkk,k->w", cm, class_prior)
    n = np.asarray(answers, dtype=float)
    order = np.argsort(-acc, kind="stable")
    order = order[n[order] > 0]
    if not len(order):
        return np.eye(cm.shape[1])
    cum = np.cumsum(n[order]) / n[order].sum()
    top = order[: int(np.searchsorted(cum, READER_SHARE)) + 1]
    out: np.ndarray = np.einsum("wkl,w->kl", cm[top], n[top]) / n[top].sum()
    return out


def _shrunk_perception(a_post: np.ndarray, T: np.ndarray, answers_only: np.ndarray,
                       g_items: np.ndarray, g_cls: np.ndarray,
                       reader: np.ndarray) -> np.ndarray:
    """w A + v I + (1 - w - v) R: the learned matrix A, the identity (a reference that
    reads the crowd's class infallibly) and the label-free ``reader`` R, with w and v on
    ``SHRINK_GRID`` (w + v <= 1) chosen by the leave-one-out log likelihood of the revealed
    labels, each predicted from its item's answers alone."""
    p = answers_only[g_items]
    # each item's column of A learned without that item: its own counts taken out
    cols = a_post[:, g_cls].T - T[g_items]                   # (m, K)
    kept = np.maximum(cols, 1e-12)
    loo = kept / (a_post.sum(axis=1)[None, :] - T[g_items] + (kept - cols))
    rows = np.arange(len(g_items))
    truth = p[rows, g_cls]
    via_r = (p @ reader)[rows, g_cls]
    via_a = (p * loo).sum(axis=1)
    grid = [(w, v) for w in SHRINK_GRID for v in SHRINK_GRID if w + v <= 1.0]
    w, v = max(grid, key=lambda wv: float(np.log(np.maximum(
        wv[0] * via_a + wv[1] * truth + (1 - wv[0] - wv[1]) * via_r, 1e-300)).sum()))
    out: np.ndarray = w * (a_post / a_post.sum(axis=1, keepdims=True)) + \
        v * np.eye(a_post.shape[0]) + (1 - w - v) * reader
    return out


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
        contrib = _answer_rows(log_cm, ww, ll)
        ans = np.stack([np.bincount(ii, weights=contrib[:, k], minlength=n)
                        for k in range(K)], axis=1) * weights[:, None] + log_prior[None, :]
        without += _softmax(ans)
        with_gold += _softmax(ans + gold_term)
    return with_gold / draws, without / draws


def _answer_rows(table: np.ndarray, ww: np.ndarray, ll: np.ndarray) -> np.ndarray:
    """``table[ww, :, ll]`` for a (W, K, K) table: per answer, the column of its label in its
    worker's rows, (n_answers, K). One ``take`` of rows (the table's columns laid out as rows
    first): the fancy index with a slice between takes twenty times as long.

    >>> t = np.arange(4.0).reshape(1, 2, 2)
    >>> _answer_rows(t, np.array([0, 0]), np.array([1, 0])).tolist()
    [[1.0, 3.0], [0.0, 2.0]]
    """
    W, K, L = table.shape
    out: np.ndarray = np.take(table.transpose(0, 2, 1).reshape(W * L, K), ww * L + ll, axis=0)
    return out


def _softmax(z: np.ndarray) -> np.ndarray:
    """Normalised exp over the last axis (rows of log-probabilities up to a constant).

    Rows of fewer than eight classes (most crowd sets) are reduced column by column: a
    reduction over a short last axis costs numpy about as much per row as the exp, and
    below eight terms numpy adds them in this same order, so the result is the same."""
    if z.ndim != 2 or z.shape[1] >= 8:
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
        return out
    top = z[:, 0].copy()
    for k in range(1, z.shape[1]):
        np.maximum(top, z[:, k], out=top)
    p: np.ndarray = np.exp(z - top[:, None])
    total = p[:, 0].copy()
    for k in range(1, z.shape[1]):
        total += p[:, k]
    p /= total[:, None]
    return p


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

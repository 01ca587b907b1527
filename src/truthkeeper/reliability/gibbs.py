"""The Dawid-Skene posterior without mean field: collapsed Gibbs sampling.

:func:`.ds.vb_dawid_skene` fits the model by mean-field variational Bayes, which is known to
be overconfident in general. This sampler draws the items' true classes from the posterior of
the same model (full confusion rows with the same Dirichlet prior, a Dirichlet(1) class
prior, answers independent given the class), with the rows and the class prior integrated
out: ``P(z_i = k | everything else)`` is the class count and each of the item's answers'
Dirichlet-multinomial predictive given every other item's class. The reported marginals are
Rao-Blackwellised (the mean of those conditionals over the sweeps after burn-in).

``eval crowd`` uses it to tell how much of the model's overconfidence against the gold comes
from the approximation (``exact_posterior``), not to answer: it is slower, and it has no
correlation of answers.
"""

from __future__ import annotations

import numpy as np

from .crowd import CrowdData
from .ds import majority_vote
from .priors import DS_PRIOR_DIAG as PRIOR_DIAG
from .priors import DS_PRIOR_OFF as PRIOR_OFF

__all__ = ["gibbs_dawid_skene"]


def gibbs_dawid_skene(data: CrowdData, *, sweeps: int = 300, burn: int = 100,
                      blocks: int = 20, seed: int = 0, prior_diag: float = PRIOR_DIAG,
                      prior_off: float = PRIOR_OFF) -> np.ndarray:
    """(items, K) posterior class probabilities of the full-confusion Dawid-Skene model by
    collapsed Gibbs sampling, started from majority vote.

    Each sweep updates the items in ``blocks`` random blocks, one after another; an item is
    drawn given the classes of every item outside its block (with ``blocks`` >= the number of
    items this is the exact one-at-a-time sampler; with fewer, items of one block that share
    a worker do not see each other's new class until the next block, an approximation that
    vanishes as a worker's answers spread over many blocks)."""
    if sweeps <= burn or burn < 0 or blocks < 1:
        msg = "need 0 <= burn < sweeps and blocks >= 1"
        raise ValueError(msg)
    K, W, n = data.n_classes, data.n_workers, data.n_items
    ii, ww, ll = data.item_idx, data.worker_idx, data.label
    beta = np.full((K, K), prior_off)
    np.fill_diagonal(beta, prior_diag)
    rng = np.random.default_rng(seed)
    z = majority_vote(data).argmax(axis=1)
    counts = np.zeros((W, K, K))
    np.add.at(counts, (ww, z[ii], ll), 1.0)
    row = counts.sum(axis=2)
    m = np.bincount(z, minlength=K).astype(float)
    total = np.zeros((n, K))
    inside = np.zeros(n, dtype=bool)
    pos = np.zeros(n, dtype=int)  # an item's row in its block
    for sweep in range(sweeps):
        for block in np.array_split(rng.permutation(n), min(blocks, n)):
            if not len(block):
                continue
            inside[block] = True
            ans = np.flatnonzero(inside[ii])  # the block's items' answers
            inside[block] = False
            w, lab, old = ww[ans], ll[ans], z[ii[ans]]
            np.subtract.at(counts, (w, old, lab), 1.0)
            np.subtract.at(row, (w, old), 1.0)
            m -= np.bincount(z[block], minlength=K)
            # log P(answer | class k) given the other items, per answer and class
            like = (np.log(counts[w, :, lab] + beta[:, lab].T)
                    - np.log(row[w, :] + beta.sum(axis=1)[None, :]))
            pos[block] = np.arange(len(block))
            logp = np.zeros((len(block), K))
            for k in range(K):
                logp[:, k] = np.bincount(pos[ii[ans]], weights=like[:, k],
                                         minlength=len(block))
            logp += np.log(m + 1.0)[None, :]
            logp -= logp.max(axis=1, keepdims=True)
            p = np.exp(logp)
            p /= p.sum(axis=1, keepdims=True)
            new = np.minimum((p.cumsum(axis=1) < rng.random(len(block))[:, None]).sum(axis=1),
                             K - 1)
            z[block] = new
            np.add.at(counts, (w, z[ii[ans]], lab), 1.0)
            np.add.at(row, (w, z[ii[ans]]), 1.0)
            m += np.bincount(new, minlength=K)
            if sweep >= burn:
                total[block] += p
    out: np.ndarray = total / (sweeps - burn)
    return out

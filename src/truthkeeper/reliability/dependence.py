"""Dependence between sources: which sources copy each other (ACCU's test, each shared
claim judged by the *other* sources), and the weights that make a chorus of copies count
about as one source."""

from __future__ import annotations

import math

import numpy as np

from .book import false_domain

__all__ = ["COPY_RATE", "DEPENDENCE_PRIOR", "independence_weights", "source_dependence"]


COPY_RATE = 0.8
"""Dependence: the probability that a dependent source copies a claim (ACCU's c)."""
DEPENDENCE_PRIOR = 0.2
"""Dependence: the prior probability that two sources are dependent (ACCU's alpha)."""


def source_dependence(
    item_idx: np.ndarray,
    worker_idx: np.ndarray,
    choice_idx: np.ndarray,
    n_choices: np.ndarray,
    accuracy: np.ndarray,
    *,
    min_shared: int = 3,
    false_values: float | np.ndarray = 1.0,
) -> dict[tuple[int, int], float]:
    """P(two sources are dependent | their claims), after ACCU's test (Dong, Berti-Equille,
    Srivastava 2009): independent sources both say a value v with probability a_s a_t if it
    is true and (1 - a_s)(1 - a_t) / n^2 if it is false (one of n = :func:`.book.false_domain`
    false values, ``false_values``: one N, or one per item), while one of a dependent pair
    copies the other's claim
    with probability ``COPY_RATE``, and so shares false values far more often.

    Whether a shared value is true is judged by the *other* sources of the item, never by
    the pair itself, so a chorus cannot vouch for its own claims: P(v true) is the one-coin
    posterior of v given the other sources' claims, each weighted by its accuracy, and the
    pair's agreement is scored under both hypotheses with v true or false in that
    proportion. (A raw vote share let a chorus of bad copies outvote the accurate sources,
    whose shared true values then read as shared errors; and a value the others do not
    back is not therefore false: with many false values, two independent sources agreeing
    on it is itself the evidence.) ``accuracy``: the sources' accuracies (equal ones, as in
    ACCU's first round, make the judge a vote and the test blind to a fit a chorus has
    taken). Pairs with fewer than ``min_shared`` common items are left out."""
    by_item: dict[int, list[tuple[int, int]]] = {}
    for i, w, c in zip(item_idx.tolist(), worker_idx.tolist(), choice_idx.tolist(),
                       strict=True):
        by_item.setdefault(i, []).append((w, c))
    ll_ind: dict[tuple[int, int], float] = {}
    ll_dep: dict[tuple[int, int], float] = {}
    shared: dict[tuple[int, int], int] = {}
    acc = np.clip(np.asarray(accuracy, dtype=float), 1e-9, 1 - 1e-9)
    n_false = np.broadcast_to(np.asarray(false_values, dtype=float), (len(n_choices),))
    c = COPY_RATE
    for i, claims in by_item.items():
        if len(claims) < 3:
            continue
        m = int(n_choices[i])
        n = float(false_domain(m, n_false[i]))
        said = np.array([v for _, v in claims])
        a_i = acc[[w for w, _ in claims]]
        gain = np.log(a_i) - np.log((1 - a_i) / n)  # a claim's evidence for its value
        # the item's values, then one standing for the n + 1 - m nobody claims
        z = np.append(np.bincount(said, weights=gain, minlength=m), 0.0)
        w_log = np.append(np.zeros(m), math.log(n + 1.0 - m) if n + 1 > m else -np.inf)
        # per value v: log sum over the other values u of exp(z[u] - z[v])
        rest = [float(np.logaddexp.reduce(np.delete(z + w_log, v) - z[v])) for v in range(m)]
        for x in range(len(claims)):
            for y in range(x + 1, len(claims)):
                (s, cs), (u, cu) = claims[x], claims[y]
                key = (s, u) if s < u else (u, s)
                ax, ay = float(a_i[x]), float(a_i[y])
                pt = ax * ay  # both say the true value
                if cs == cu:
                    # P(cs is true | the item's claims but the pair's), then P(both say cs)
                    p = 1.0 / (1.0 + math.exp(min(rest[cs] + gain[x] + gain[y], 700.0)))
                    pf = (1 - ax) * (1 - ay) / n**2  # both say this false value
                    a = (ax + ay) / 2  # the original's accuracy, when one copies
                    ind = p * pt + (1 - p) * pf
                    dep = c * (p * a + (1 - p) * (1 - a) / n) + (1 - c) * ind
                    ll_ind[key] = ll_ind.get(key, 0.0) + math.log(max(ind, 1e-300))
                    ll_dep[key] = ll_dep.get(key, 0.0) + math.log(max(dep, 1e-300))
                else:  # they differ: likelier when neither copies
                    pd = max(1 - pt - (1 - ax) * (1 - ay) / n, 1e-12)
                    ll_ind[key] = ll_ind.get(key, 0.0) + math.log(pd)
                    ll_dep[key] = ll_dep.get(key, 0.0) + math.log(pd * (1 - c))
                shared[key] = shared.get(key, 0) + 1
    prior = math.log(DEPENDENCE_PRIOR / (1 - DEPENDENCE_PRIOR))
    out = {}
    for key, k in shared.items():
        if k < min_shared:
            continue
        log_odds = ll_dep[key] - ll_ind[key] + prior
        out[key] = float(1 / (1 + np.exp(-np.clip(log_odds, -700, 700))))
    return out


def independence_weights(worker_idx: np.ndarray, item_idx: np.ndarray,
                         choice_idx: np.ndarray,
                         dependence: dict[tuple[int, int], float]) -> np.ndarray:
    """Per claim, the weight of its evidence about the truth: 1 / (1 + c sum of
    P(dependent) over the other sources naming the same value on the same item), so k
    mutual copies count about as one source (a composite likelihood for correlated
    claims)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for a, (i, c) in enumerate(zip(item_idx.tolist(), choice_idx.tolist(), strict=True)):
        groups.setdefault((i, c), []).append(a)
    w = np.ones(len(worker_idx))
    for rows in groups.values():
        if len(rows) < 2:
            continue
        for a in rows:
            s = int(worker_idx[a])
            load = sum(dependence.get((min(s, t), max(s, t)), 0.0)
                       for t in (int(worker_idx[b]) for b in rows) if t != s)
            w[a] = 1.0 / (1.0 + COPY_RATE * load)
    return w

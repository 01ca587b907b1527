"""Categorical attributes: each source's confusion over a fixed set of categories.

An attribute declared with its categories (``Memory(categories={"rating": ["G", "PG", "R",
"X"]})``) takes only those values, and its conflicts are decided by the full Dawid-Skene
model instead of the one-coin model of open values: source s says category c when the
truth is t with probability CM_s[t, c]. A source that is lenient (often says G for a PG
film) or strict, or that confuses two neighbouring grades, is read as such, and a wrong
answer is spread over the categories it actually confuses, not over the values that happen
to be claimed. ``learn_from_agreement`` fits the confusion rows and the class prior of each
categorical attribute without labels (:func:`.ds.vb_dawid_skene`, confirmed slots entering as
revealed truths), with the intra-item correlation of its claims, and journals them. Until
then, and for a source the fit has not seen, the row is the one-coin row of the source's
reliability: theta on the diagonal, (1 - theta) / (K - 1) elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where it is used: opening a memory does not need it
    import numpy as np

__all__ = ["Confusion",
           "fit_confusions"]

"""The most categories an attribute may declare."""


@dataclass(frozen=True)
class Confusion:
    """What ``learn_from_agreement`` learned about one categorical attribute."""

    categories: tuple[Any, ...]
    class_prior: np.ndarray             # (K,), sums to 1
    correlation: float                  # rho of the claims about one slot
    alpha: Mapping[str, np.ndarray]     # per source, (K, K) Dirichlet rows: P(says c | t)
    perception: np.ndarray              # (K, K): P(the value confirmed | t), rows sum to 1
    bagged: Mapping[str, np.ndarray]    # per source, (B, K, K): its rows in the fit to each
    # bootstrap resample of the claims (:func:`.bagging.resampled_rows`); {} when not learned

    @staticmethod
    def from_body(body: Mapping[str, Any]) -> Confusion:
        import numpy as np

        prior = np.asarray(body["class_prior"], dtype=float)
        seen = np.asarray(body["perception"], dtype=float)
        return Confusion(tuple(body["categories"]), prior / prior.sum(),
                         min(max(float(body["correlation"]), 0.0), 1.0),
                         {s: np.asarray(a, dtype=float) for s, a in body["sources"].items()},
                         seen / seen.sum(axis=1, keepdims=True),
                         {s: np.asarray(a, dtype=float).reshape(-1, len(prior), len(prior))
                          for s, a in body.get("bagged", {}).items()})


def fit_confusions(items: Sequence[tuple[list[str], list[int], int, int, list[Any], str]],
                   categories: Mapping[str, tuple[Any, ...]]) -> dict[str, Any]:
    """The confusion rows, class prior, claim correlation and perception of each
    categorical attribute that has claims, as a prior event's ``confusion``; ``items`` as
    ``Store.claims`` gives them (a slot holding a value outside the categories, from a
    journal written before they were declared, is left out).

    Confirmed slots enter as revealed labels (:func:`.ds.vb_dawid_skene`): a confirmation is
    a reading of the truth through the perception matrix, P(the value confirmed | the class
    the sources perceive), learned from them; a conflict's probabilities are those of the
    value that would be confirmed. (Confirmations reach the rows and the perception here,
    at the next learning, not one by one as they reach a source's one-coin reliability.)"""
    import numpy as np

    from .bagging import resampled_rows
    from .crowd import CrowdData
    from .ds import vb_dawid_skene

    out: dict[str, Any] = {}
    for attr, cats in categories.items():
        index = {k: i for i, k in enumerate(cats)}
        workers: dict[str, int] = {}
        ii: list[int] = []
        ww: list[int] = []
        ll: list[int] = []
        gold: dict[int, int] = {}
        n = 0
        for srcs, idx, _, g, values, a in items:
            if a != attr or any(v not in index for v in values):
                continue
            for s, c in zip(srcs, idx, strict=True):
                ii.append(n)
                ww.append(workers.setdefault(s, len(workers)))
                ll.append(index[values[c]])
            if g >= 0:
                gold[n] = index[values[g]]
            n += 1
        if not n:
            continue
        data = CrowdData(attr, [str(i) for i in range(n)], list(workers), list(map(str, cats)),
                         np.array(ii), np.array(ww), np.array(ll), {})
        fit = vb_dawid_skene(data, gold=gold, draws=0)
        assert fit.alpha is not None
        # the bootstrap's rows whether or not slots were confirmed: letting the
        # confirmations choose the full fit's rows instead (by their likelihood, as
        # bagging.model_weights weighs eval crowd's models) was measured through decide
        # and not adopted (benchmarks/README.md)
        rows = resampled_rows(data, gold=gold)
        out[attr] = {"categories": list(cats),
                     "class_prior": [float(x) for x in fit.class_prior],
                     "correlation": float(fit.item_correlation),
                     "perception": np.maximum(fit.perception, 1e-6).tolist(),
                     "sources": {s: fit.alpha[j].tolist() for s, j in workers.items()},
                     "bagged": {s: rows[:, j].tolist() for s, j in workers.items()}}
    return out


def category_probabilities(conf: Confusion | None, k: int, claimed: Sequence[int],
                           theta: np.ndarray, learned: Sequence[bool], srcs: Sequence[str],
                           pairs: np.ndarray, omega: np.ndarray,
                           rng: np.random.Generator, *, bagged: bool = False) -> np.ndarray:
    """(draws, k) P(category is the value that would be confirmed). ``claimed[v]`` is the
    category of claimed value v and ``pairs`` the claims, (value, source); ``theta`` (draws,
    sources) the one-coin draws, the row of a source without a learned one (``learned``);
    ``omega`` each source's weight. ``bagged``: draw d reads the claims through the rows of
    bootstrap fit d mod B (``Confusion.bagged``), so a source's rows are as uncertain as
    the resampled fits show them; the claims themselves are read as they are."""
    import numpy as np

    draws = theta.shape[0]
    said = np.asarray(claimed, dtype=int)[pairs[:, 0]]
    src = pairs[:, 1]
    # P(says said | truth t) per draw and claim: (draws, claims, k)
    like = np.repeat(((1.0 - theta[:, src]) / (k - 1))[:, :, None], k, axis=2)
    like[:, np.arange(len(src)), said] = theta[:, src]
    log_prior = np.zeros(k) if conf is None else np.log(conf.class_prior)
    for c, j in enumerate(src):
        if learned[j] and conf is not None:
            fits = conf.bagged.get(srcs[j]) if bagged else None
            # row t ~ Dirichlet(a[t]): P(said | t) ~ Beta; draw d: the rows of fit d mod B
            a = conf.alpha[srcs[j]] if fits is None else fits[np.arange(draws) % len(fits)]
            hit = a[..., said[c]]
            like[:, c, :] = rng.beta(hit, a.sum(axis=-1) - hit, size=(draws, k))
    score = np.einsum("dck,c->dk", np.log(np.clip(like, 1e-300, None)), omega[src])
    score += log_prior[None, :]
    score -= score.max(axis=1, keepdims=True)
    p = np.exp(score)
    p /= p.sum(axis=1, keepdims=True)
    out: np.ndarray = p if conf is None else p @ conf.perception
    return out

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidFact
from ..values import normalise_key, value_key

__all__ = ["MAX_CATEGORIES", "Confusion", "check_categories", "check_confusion_body",
           "fit_confusions"]

MAX_CATEGORIES = 64
"""The most categories an attribute may declare."""


def check_categories(categories: object) -> dict[str, tuple[Any, ...]]:
    """``{attribute: categories}`` validated: the attribute's key -> its categories
    (strings or integers, at least two, distinct as values), or ``()`` for None or an empty
    list: the attribute's declaration is removed (it takes open values again)."""
    if categories is None:
        return {}
    if not isinstance(categories, Mapping):
        msg = f"categories must map an attribute to its categories, got {categories!r}"
        raise InvalidFact(msg)
    out: dict[str, tuple[Any, ...]] = {}
    for attr, cats in categories.items():
        key = normalise_key(attr, "attribute")
        if key in out:
            msg = f"attribute {attr!r} is given categories twice"
            raise InvalidFact(msg)
        if cats is None or (isinstance(cats, Sequence) and not isinstance(cats, (str, bytes))
                            and len(cats) == 0):
            out[key] = ()
            continue
        if isinstance(cats, (str, bytes)) or not isinstance(cats, Sequence):
            msg = f"the categories of {attr!r} must be a list of values, got {cats!r}"
            raise InvalidFact(msg)
        if not 2 <= len(cats) <= MAX_CATEGORIES:
            msg = f"{attr!r} needs 2 to {MAX_CATEGORIES} categories, got {len(cats)}"
            raise InvalidFact(msg)
        keys = []
        for c in cats:
            if isinstance(c, bool) or not isinstance(c, (str, int)):
                msg = f"a category must be a string or an integer, got {c!r} for {attr!r}"
                raise InvalidFact(msg)
            k = value_key(c)
            if k in keys or k == "":
                msg = f"category {c!r} of {attr!r} is empty or given twice (as a value)"
                raise InvalidFact(msg)
            keys.append(k)
        out[key] = tuple(cats)
    return out


@dataclass(frozen=True)
class Confusion:
    """What ``learn_from_agreement`` learned about one categorical attribute."""

    categories: tuple[Any, ...]
    class_prior: np.ndarray             # (K,), sums to 1
    correlation: float                  # rho of the claims about one slot
    alpha: Mapping[str, np.ndarray]     # per source, (K, K) Dirichlet rows: P(says c | t)
    perception: np.ndarray              # (K, K): P(the value confirmed | t), rows sum to 1

    @staticmethod
    def from_body(body: Mapping[str, Any]) -> Confusion:
        prior = np.asarray(body["class_prior"], dtype=float)
        seen = np.asarray(body["perception"], dtype=float)
        return Confusion(tuple(body["categories"]), prior / prior.sum(),
                         min(max(float(body["correlation"]), 0.0), 1.0),
                         {s: np.asarray(a, dtype=float) for s, a in body["sources"].items()},
                         seen / seen.sum(axis=1, keepdims=True))


def check_confusion_body(body: object) -> dict[str, Any]:
    """A prior event's ``confusion`` (from an import): ``{attribute: {"categories": [...],
    "class_prior": [K], "correlation": rho, "perception": K x K, "sources": {source:
    K x K}}}``, every number finite and positive (rho in [0, 1])."""
    def bad(what: str) -> InvalidFact:
        return InvalidFact(f"confusion: {what}")

    if not isinstance(body, dict):
        raise bad("must map an attribute to what was learned about it")
    for attr, c in body.items():
        if not isinstance(attr, str) or not isinstance(c, dict):
            raise bad(f"{attr!r} must map to an object")
        cats = c.get("categories")
        if not (isinstance(cats, list) and 2 <= len(cats) <= MAX_CATEGORIES and all(
                isinstance(x, (str, int)) and not isinstance(x, bool) for x in cats)
                and len({repr(x) for x in cats}) == len(cats)):
            raise bad(f"the categories of {attr!r} must be 2 to {MAX_CATEGORIES} distinct "
                      "strings or integers")
        k = len(cats)
        rho = c.get("correlation")
        if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0 <= rho <= 1:
            raise bad(f"the correlation of {attr!r} must be a number in [0, 1]")
        if not _positive(c.get("class_prior"), (k,)):
            raise bad(f"the class prior of {attr!r} must be {k} positive numbers")
        if not _positive(c.get("perception"), (k, k)):
            raise bad(f"the perception of {attr!r} must be {k} x {k} positive numbers")
        srcs = c.get("sources")
        if not isinstance(srcs, dict) or not all(
                isinstance(s, str) and _positive(a, (k, k)) for s, a in srcs.items()):
            raise bad(f"the sources of {attr!r} must map a source to {k} x {k} positive "
                      "numbers")
    return body


def _positive(x: object, shape: tuple[int, ...]) -> bool:
    if not isinstance(x, list) or len(x) != shape[0]:
        return False
    if len(shape) > 1:
        return all(_positive(r, shape[1:]) for r in x)
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               and v > 0 for v in x)


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
        out[attr] = {"categories": list(cats),
                     "class_prior": [float(x) for x in fit.class_prior],
                     "correlation": float(fit.item_correlation),
                     "perception": np.maximum(fit.perception, 1e-6).tolist(),
                     "sources": {s: fit.alpha[j].tolist() for s, j in workers.items()}}
    return out


def category_probabilities(conf: Confusion | None, k: int, claimed: Sequence[int],
                           theta: np.ndarray, learned: Sequence[bool], srcs: Sequence[str],
                           support: np.ndarray, omega: np.ndarray,
                           rng: np.random.Generator) -> np.ndarray:
    """(draws, k) P(category is the value that would be confirmed). ``claimed[v]`` is the
    category of claimed value v and ``support`` (values, sources) who claims it; ``theta`` (draws,
    sources) the one-coin draws, the row of a source without a learned one (``learned``);
    ``omega`` each source's weight."""
    draws = theta.shape[0]
    pairs = np.argwhere(support > 0)                     # (value, source) per claim
    said = np.asarray(claimed, dtype=int)[pairs[:, 0]]
    src = pairs[:, 1]
    # P(says said | truth t) per draw and claim: (draws, claims, k)
    like = np.repeat(((1.0 - theta[:, src]) / (k - 1))[:, :, None], k, axis=2)
    like[:, np.arange(len(src)), said] = theta[:, src]
    log_prior = np.zeros(k) if conf is None else np.log(conf.class_prior)
    for c, j in enumerate(src):
        if learned[j] and conf is not None:
            a = conf.alpha[srcs[j]]  # row t ~ Dirichlet(a[t]): P(said | t) ~ Beta
            hit = a[:, said[c]]
            like[:, c, :] = rng.beta(hit, a.sum(axis=1) - hit, size=(draws, k))
    score = np.einsum("dck,c->dk", np.log(np.clip(like, 1e-300, None)), omega[src])
    score += log_prior[None, :]
    score -= score.max(axis=1, keepdims=True)
    p = np.exp(score)
    p /= p.sum(axis=1, keepdims=True)
    out: np.ndarray = p if conf is None else p @ conf.perception
    return out

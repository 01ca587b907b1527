"""Prior calibration of the reliability layer on crowd data (the calibration notebook).

Everything goes through the public API: each crowd answer is a fact (subject = item,
attribute ``label``, source = worker, tier ``agent``, one valid time, so a disagreement is a
residual conflict), ``decide`` gives the answer and its probability, ``learn_from_agreement``
learns without labels, ``confirm`` reveals a share of the gold labels as outcomes, and
``reliability()`` reports each worker's posterior with its 90% interval.
"""

from __future__ import annotations

import functools
import math
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TruthkeeperError
from ..memory import Memory
from ..reliability.book import ReliabilityBook
from ..reliability.calibration import brier, ece, ece_if_calibrated, reliability_diagram
from ..reliability.crowd import CrowdData
from ..results import Utility

__all__ = ["crowd_stages", "evaluate_decide", "interval_coverage", "outcomes_to_separate",
           "prior_predictive", "prior_sensitivity"]

_ANSWER = Utility(correct=1.0, wrong=0.0, abstain=-1.0)  # always answer: score every item
DAY = "2026-01-01"


def _memory(data: CrowdData, categorical: bool = True) -> Memory:
    mem = Memory(protected_tiers=(), categories={"label": data.classes} if categorical else None)
    mem.add_many({"subject": data.items[i], "attribute": "label", "value": data.classes[c],
                  "source": data.workers[w], "tier": "agent", "valid_from": DAY}
                 for i, w, c in zip(data.item_idx.tolist(), data.worker_idx.tolist(),
                                    data.label.tolist(), strict=True))
    return mem


def _score(mem: Memory, data: CrowdData, items: list[int]) -> dict[str, Any]:
    conf, ok = [], []
    for i in items:
        d = mem.decide(data.items[i], "label", utility=_ANSWER)
        conf.append(d.p)
        ok.append(d.value == data.classes[data.gold[i]])
    return {"accuracy": float(np.mean(ok)), "ece_10_equal_width": ece(conf, ok),
            "ece_15_equal_mass": ece(conf, ok, bins=15, equal_mass=True), "brier": brier(conf, ok),
            "ece_10_if_calibrated": ece_if_calibrated(conf, ok),
            "diagram": reliability_diagram(conf, ok), "items": len(items)}


def crowd_stages(data: CrowdData, *, reveal: float = 0.1, seed: int = 0,
                 correlation: bool = True, categorical: bool = True) -> dict[str, Any]:
    """Accuracy, ECE (10 equal-width and 15 equal-mass bins), Brier and reliability diagram
    of ``decide``'s probabilities at three stages: the tier prior alone, after
    ``learn_from_agreement(correlation=correlation)``, and after revealing ``reveal`` of the
    gold labels with ``confirm`` and learning again (scored on the items not revealed).
    ``categorical``: the labels are the attribute's declared categories (each worker's
    confusion between them decides); else open values (one-coin). Also returns the memory's
    reliability summaries and the held-back gold items, for interval coverage."""
    rng = random.Random(seed)
    gold = sorted(data.gold)
    shown = sorted(rng.sample(gold, max(1, round(reveal * len(gold)))))
    rest = sorted(set(gold) - set(shown))
    mem = _memory(data, categorical)
    try:
        out: dict[str, Any] = {"set": data.name, "answers": int(len(data.label)),
                               "workers": data.n_workers, "classes": data.n_classes,
                               "revealed": len(shown)}
        out["prior"] = _score(mem, data, rest)
        mem.learn_from_agreement(correlation=correlation)
        out["agreement"] = _score(mem, data, rest)
        for i in shown:
            mem.confirm(data.items[i], "label", data.classes[data.gold[i]])
        mem.learn_from_agreement(correlation=correlation)  # the confirmed slots as truths
        out["outcomes"] = _score(mem, data, rest)
        out["reliability"] = [r.to_dict() for r in mem.reliability()]
        out["held_back"] = rest
    finally:
        mem.close()
    return out


def evaluate_decide(root: Path, *, seeds: int = 5) -> dict[str, Any]:
    """``truthkeeper eval decide``: :func:`crowd_stages` on every crowd set under ``root``,
    with the labels declared categorical and as open values (one-coin); for the categorical
    model, the ECE and accuracy after confirming 10% are also given for ``seeds`` draws of
    the revealed items (seed 0 first)."""
    from ..reliability.crowd import load_sets

    keys = ("accuracy", "ece_10_equal_width", "ece_15_equal_mass", "brier", "items",
            "ece_10_if_calibrated")
    out: dict[str, Any] = {}
    for data in load_sets(root):
        row: dict[str, Any] = {}
        try:
            for categorical in (True, False):
                st = crowd_stages(data, categorical=categorical)
                row["categorical" if categorical else "open"] = {
                    s: {k: st[s][k] for k in keys} for s in ("prior", "agreement", "outcomes")}
            runs = [row["categorical"]["outcomes"]] + [
                crowd_stages(data, seed=s)["outcomes"] for s in range(1, seeds)]
        except TruthkeeperError as exc:  # an answer the memory refuses (a key too long)
            print(f"skipping {data.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        row["outcomes_by_seed"] = {k: [r[k] for r in runs]
                                   for k in ("accuracy", "ece_10_equal_width")}
        out[data.name] = row
    return out


@functools.lru_cache(maxsize=4096)
def _beta_of(mean: float, low: float, high: float) -> tuple[float, float]:
    """The Beta(a, b) with this mean whose central 90% interval is (low, high): a reported
    summary turned back into its distribution (the concentration found by bisection on the
    interval's width, which falls as the concentration grows)."""
    from scipy.stats import beta

    lo_k, hi_k = 1e-3, 1e7
    for _ in range(48):
        k = math.sqrt(lo_k * hi_k)
        q = beta.ppf((0.05, 0.95), mean * k, (1 - mean) * k)
        lo_k, hi_k = (k, hi_k) if q[1] - q[0] > high - low else (lo_k, k)
    k = math.sqrt(lo_k * hi_k)
    return mean * k, (1 - mean) * k


def interval_coverage(data: CrowdData, stages: dict[str, Any], *,
                      min_answers: int = 5) -> dict[str, Any]:
    """How often a worker's accuracy on the held-back gold items lies inside the 90%
    posterior interval the memory reported (workers with at least ``min_answers`` held-back
    answers): ``coverage``. That interval is for the worker's reliability, and an accuracy
    on a few items scatters around it, so ``predictive_coverage`` is the share inside the
    90% interval of what n items would show under that posterior (Beta-binomial): the one
    to hold against 0.9 (at least 0.9, the counts being whole numbers)."""
    from scipy.stats import betabinom

    held = set(stages["held_back"])
    right: dict[str, int] = {}
    total: dict[str, int] = {}
    for i, w, c in zip(data.item_idx.tolist(), data.worker_idx.tolist(), data.label.tolist(),
                       strict=True):
        if i in held:
            name = data.workers[w]
            total[name] = total.get(name, 0) + 1
            right[name] = right.get(name, 0) + (c == data.gold[i])
    inside, predicted = [], []
    for r in stages["reliability"]:
        n = total.get(r["source"], 0)
        if n >= min_answers:
            k = right[r["source"]]
            inside.append(r["low"] <= k / n <= r["high"])
            a, b = _beta_of(r["mean"], r["low"], r["high"])
            dist = betabinom(n, a, b)
            predicted.append(dist.ppf(0.05) <= k <= dist.ppf(0.95))
    return {"workers": len(inside), "coverage": float(np.mean(inside)) if inside else None,
            "predictive_coverage": float(np.mean(predicted)) if predicted else None,
            "nominal": 0.9}


def outcomes_to_separate(true_reliability: float, *, tier: str = "agent", runs: int = 50,
                         max_outcomes: int = 200, seed: int = 0) -> dict[str, Any]:
    """How many outcomes a new source needs before its 90% interval excludes its tier's
    prior mean (median and quartiles over ``runs`` simulated sources)."""
    rng = random.Random(seed)
    needed = []
    for _ in range(runs):
        book = ReliabilityBook(("human", "verified", "agent", "unverified"))
        prior_mean = book.tier_prior[tier][0]
        n = max_outcomes
        for k in range(1, max_outcomes + 1):
            book.record("new", tier, rng.random() < true_reliability)
            lo, hi = book.interval("new", tier)
            if not lo <= prior_mean <= hi:
                n = k
                break
        needed.append(n)
    q = np.percentile(needed, [25, 50, 75])
    return {"true": true_reliability, "tier_prior_mean": prior_mean, "median": float(q[1]),
            "quartiles": [float(q[0]), float(q[2])], "runs": runs, "cap": max_outcomes}


def prior_sensitivity(true_reliability: float, outcomes: int, concentrations: tuple[float, ...],
                      *, tier: str = "agent", seed: int = 0) -> dict[str, float]:
    """The posterior mean of a source after ``outcomes`` outcomes, for tier priors of
    different concentrations (the same draws for each)."""
    rng = random.Random(seed)
    draws = [rng.random() < true_reliability for _ in range(outcomes)]
    out = {}
    for k in concentrations:
        book = ReliabilityBook(("human", "verified", "agent", "unverified"))
        mu = book.tier_prior[tier][0]
        book.set_tier_prior({**book.tier_prior, tier: (mu, k)})
        for d in draws:
            book.record("s", tier, d)
        out[str(k)] = book.mean("s", tier)
    return out


def prior_predictive(samples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Draws of each tier's mean reliability and of a source's reliability from the
    hierarchical model's prior (NumPyro ``Predictive``, no data), with quantiles."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer import Predictive

    from ..reliability.models import hierarchical_reliability

    tiers = ("human", "verified", "agent", "unverified")
    pred = Predictive(hierarchical_reliability, num_samples=samples)
    draws = pred(jax.random.key(seed), tier=jnp.arange(len(tiers)),
                 trials=jnp.full(len(tiers), 10), n_tiers=len(tiers))
    mean = np.asarray(draws["tier_mean"])
    theta = np.asarray(draws["theta"])
    return {"tiers": list(tiers), "tier_mean": mean, "theta": theta,
            "ordered_share": float(np.mean(np.all(np.diff(mean, axis=1) <= 0, axis=1))),
            "quantiles": {t: [float(x) for x in np.percentile(theta[:, i], [5, 50, 95])]
                          for i, t in enumerate(tiers)}}

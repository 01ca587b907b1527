"""``truthkeeper eval crowd``: truthkeeper's Bayesian Dawid-Skene against crowd-kit on real data."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from .calibration import brier, ece
from .crowd import CrowdData, find_sets, load_set
from .ds import majority_vote, vb_dawid_skene

__all__ = ["evaluate_crowd", "evaluate_set"]

REVEAL = (0.05, 0.10, 0.20)


def _score(post: np.ndarray, data: CrowdData, items: np.ndarray) -> dict[str, float]:
    """Accuracy of the most probable class; ECE over 10 equal-width and over 15 equal-mass
    bins of the probability given to it; multi-class Brier score."""
    y = np.array([data.gold[i] for i in items])
    p = post[items]
    pred = p.argmax(axis=1)
    ok = pred == y
    return {"accuracy": float(ok.mean()), "ece": ece(p.max(axis=1), ok),
            "ece_mass15": ece(p.max(axis=1), ok, bins=15, equal_mass=True),
            "brier": brier(p, y)}


def _mix(y: np.ndarray, k: int) -> list[float]:
    return [round(float(x), 4) for x in np.bincount(y, minlength=k) / max(len(y), 1)]


def evaluate_set(data: CrowdData, *, seed: int = 0, crowdkit: bool = True) -> dict[str, Any]:
    gold_items = np.array(sorted(data.gold))
    t = time.perf_counter()
    fit = vb_dawid_skene(data)
    seconds = time.perf_counter() - t
    out: dict[str, Any] = {
        "items": data.n_items, "workers": data.n_workers, "classes": data.n_classes,
        "answers": int(len(data.label)), "gold": int(len(gold_items)),
        **_score(fit.posterior, data, gold_items), "seconds": seconds,
        "iterations": fit.iterations,
        "majority_vote_accuracy": _score(majority_vote(data), data, gold_items)["accuracy"],
        "majority_vote_ties": "lowest class index",
        # the classes of the gold items against the fit's class prior over all items: where
        # they differ, the gold items are not a random sample of the crowd's items
        "gold_class_mix": _mix(np.array([data.gold[i] for i in gold_items]), data.n_classes),
        "fit_class_prior": [round(float(x), 4) for x in fit.class_prior],
        "semi_supervised": {},
    }
    rng = np.random.default_rng(seed)
    for frac in REVEAL:
        k = max(1, round(frac * len(gold_items)))
        shown = rng.choice(gold_items, size=k, replace=False)
        rest = np.setdiff1d(gold_items, shown)
        t = time.perf_counter()
        revealed = {int(i): data.gold[int(i)] for i in shown}
        semi = vb_dawid_skene(data, gold=revealed)
        out["semi_supervised"][f"{round(frac * 100)}%"] = {
            "revealed": k, **_score(semi.reference, data, rest),
            "seconds": time.perf_counter() - t}
    if crowdkit:
        out["crowdkit"] = _crowdkit(data, gold_items)
    return out


def _crowdkit(data: CrowdData, gold_items: np.ndarray) -> dict[str, Any] | None:
    try:
        import pandas as pd
        from crowdkit.aggregation import DawidSkene, MajorityVote
    except ImportError:
        return None
    df = pd.DataFrame({"task": data.item_idx, "worker": data.worker_idx, "label": data.label})
    res: dict[str, Any] = {}
    y = np.array([data.gold[i] for i in gold_items])
    for name, agg in (("MajorityVote", MajorityVote()), ("DawidSkene", DawidSkene(n_iter=100))):
        t = time.perf_counter()
        labels = agg.fit_predict(df)
        sec = time.perf_counter() - t
        pred = labels.reindex(gold_items).to_numpy()
        res[name] = {"accuracy": float((pred == y).mean()), "seconds": sec}
    return res


def evaluate_crowd(root: Path, *, crowdkit: bool = True) -> dict[str, Any]:
    """Evaluate every set under root; keys are set names."""
    return {load_set(p).name: evaluate_set(load_set(p), crowdkit=crowdkit)
            for p in find_sets(root)}

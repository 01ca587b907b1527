"""``truthkeeper eval crowd``: truthkeeper's Bayesian Dawid-Skene against crowd-kit on real data."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .bagging import anchored, bagged_both, revealed_reference
from .calibration import brier, ece, ece_if_calibrated, log_loss
from .crowd import CrowdData, halves, load_sets
from .ds import majority_vote, vb_dawid_skene
from .gibbs import gibbs_dawid_skene

__all__ = ["evaluate_crowd", "evaluate_half", "evaluate_set"]

REVEAL = (0.05, 0.10, 0.20)
REVEAL_DRAWS = 5
"""Draws of the revealed gold items per fraction: the semi-supervised figures are their mean,
with the spread beside it, scored each time on the gold items not revealed."""
ECE_TARGET = 0.05
"""Issue 31's bar: ECE at most max(.05, the best peer's ECE in the same run)."""


def _score(post: np.ndarray, data: CrowdData, items: np.ndarray,
           floor: bool = False) -> dict[str, Any]:
    """Accuracy of the most probable class; ECE over 10 equal-width and over 15 equal-mass
    bins of the probability given to it; multi-class Brier score and log loss. With
    ``floor``, also what each ECE would be if these probabilities were calibrated
    (``ece_if_calibrated``)."""
    y = np.array([data.gold[i] for i in items])
    p = post[items]
    pred = p.argmax(axis=1)
    ok = pred == y
    out: dict[str, Any] = {"accuracy": float(ok.mean()), "ece": ece(p.max(axis=1), ok),
                           "ece_mass15": ece(p.max(axis=1), ok, bins=15, equal_mass=True),
                           "brier": brier(p, y), "log_loss": log_loss(p, y)}
    if floor:
        out["ece_if_calibrated"] = ece_if_calibrated(p.max(axis=1), ok)
        out["ece_mass15_if_calibrated"] = ece_if_calibrated(p.max(axis=1), ok, bins=15,
                                                            equal_mass=True)
    return out


SMOOTHING = (0.05, 0.1, 0.2, 0.3, 0.4)
"""The label-free squashes ``(1 - eps) p + eps / K`` whose ECE ``eval crowd`` reports as a
diagnostic: what one fixed correction for every set could reach (none is applied)."""
SHARE_BINS = ((1.0, 1.01), (0.8, 1.0), (0.6, 0.8), (0.0, 0.6))


def _by_vote_share(post: np.ndarray, data: CrowdData,
                   items: np.ndarray) -> list[dict[str, float]]:
    """The gold items grouped by the share of the crowd's most given answer (1.0: every
    worker agreed): how often the gold label is that answer, and the fit's accuracy and
    mean probability there. Where a unanimous crowd and the gold disagree, no model of the
    answers alone can know it."""
    counts = np.zeros((data.n_items, data.n_classes))
    np.add.at(counts, (data.item_idx, data.label), 1.0)
    c = counts[items]
    share = c.max(axis=1) / np.maximum(c.sum(axis=1), 1.0)
    y = np.array([data.gold[i] for i in items])
    p = post[items]
    out = []
    for lo, hi in SHARE_BINS:
        sel = (share >= lo) & (share < hi)
        if sel.any():
            out.append({"share_from": lo, "share_to": min(hi, 1.0), "items": int(sel.sum()),
                        "gold_is_majority": float((c[sel].argmax(axis=1) == y[sel]).mean()),
                        "accuracy": float((p[sel].argmax(axis=1) == y[sel]).mean()),
                        "mean_p": float(p[sel].max(axis=1).mean())})
    return out


def _mix(y: np.ndarray, k: int) -> list[float]:
    return [round(float(x), 4) for x in np.bincount(y, minlength=k) / max(len(y), 1)]


def evaluate_set(data: CrowdData, *, seed: int = 0, crowdkit: bool = True,
                 slow_peers: bool = False) -> dict[str, Any]:
    gold_items = np.array(sorted(data.gold))
    t = time.perf_counter()
    fit = vb_dawid_skene(data)
    seconds = time.perf_counter() - t
    # the reported probabilities: of the reference label (the latent class read through the
    # label-free reader, ds.reader_perception), BayesBag, the full fit's answers
    latent, post = bagged_both(data, fit)
    out: dict[str, Any] = {
        "items": data.n_items, "workers": data.n_workers, "classes": data.n_classes,
        "answers": int(len(data.label)), "gold": int(len(gold_items)),
        **_score(post, data, gold_items, floor=True),
        "seconds": time.perf_counter() - t, "seconds_unbagged": seconds,
        "iterations": fit.iterations,
        # the full fit's own probabilities (one fit, no bagging), for comparison
        "unbagged": _score(fit.reference, data, gold_items),
        # the latent class itself (a reference that reads it infallibly), bagged as above
        "latent_class": _score(latent, data, gold_items),
        # answers to one item as correlated readings (rho learned from the answers alone),
        # and the plain fit that counts them as independent, for comparison (this and the
        # exact posterior below are of the latent class, as "latent_class" is)
        "item_correlation": fit.item_correlation,
        "independent_answers": _score(vb_dawid_skene(data, correlation=False).posterior,
                                      data, gold_items),
        # the same model as "independent_answers" without mean field: its exact posterior,
        # by collapsed Gibbs sampling (how much of the ECE the approximation makes)
        "exact_posterior": _score(gibbs_dawid_skene(data), data, gold_items),
        "majority_vote_accuracy": _score(majority_vote(data), data, gold_items)["accuracy"],
        "majority_vote_ties": "lowest class index",
        # the classes of the gold items against the fit's class prior over all items: where
        # they differ, the gold items are not a random sample of the crowd's items
        "gold_class_mix": _mix(np.array([data.gold[i] for i in gold_items]), data.n_classes),
        "fit_class_prior": [round(float(x), 4) for x in fit.class_prior],
        "by_vote_share": _by_vote_share(post, data, gold_items),
        "uniform_smoothing_ece": {
            str(eps): round(_score((1 - eps) * fit.posterior + eps / data.n_classes, data,
                                   gold_items)["ece"], 4) for eps in SMOOTHING},
        "semi_supervised": {},
    }
    out["semi_supervised"] = {f"{round(frac * 100)}%": _semi(data, gold_items, frac, seed,
                                                             post) for frac in REVEAL}
    out["vote_share_blend_ece"] = _blends(post, majority_vote(data), data, gold_items)
    out.update(_peers(out["ece"], data, gold_items, crowdkit, slow_peers))
    return out


def _peers(ece_: float, data: CrowdData, gold_items: np.ndarray, crowdkit: bool,
           slow: bool) -> dict[str, Any]:
    """The peers scored on the same gold items (majority vote's vote share; crowd-kit's
    models), and issue 31's bar for an ECE of ``ece_``."""
    shares = majority_vote(data)
    out: dict[str, Any] = {"peers": {"majority_vote_share": {
        **_score(shares, data, gold_items, floor=True), "ties": "lowest class index"}}}
    if crowdkit:
        out["crowdkit"] = _crowdkit(data, gold_items, slow=slow)
        out["peers"].update({f"crowdkit_{k}": v for k, v in (out["crowdkit"] or {}).items()})
    best = min(v["ece"] for v in out["peers"].values() if "ece" in v)
    out["ece_target"] = {"best_peer_ece": best, "bar": max(ECE_TARGET, best),
                         "met": bool(ece_ <= max(ECE_TARGET, best))}
    return out


HALF_MIN_GOLD = 10
"""A half with fewer gold items than this is reported, not scored."""


def evaluate_half(data: CrowdData, *, seed: int = 0, crowdkit: bool = True) -> dict[str, Any]:
    """What ``evaluate_set`` reports that issue 31's targets read, on a part of a set
    (:func:`~.crowd.halves`): the label-free probabilities, 10% of the gold revealed
    (:data:`REVEAL_DRAWS` draws), and the fast peers (majority vote, Dawid-Skene)."""
    gold_items = np.array(sorted(data.gold))
    out: dict[str, Any] = {"items": data.n_items, "workers": data.n_workers,
                           "answers": int(len(data.label)), "gold": int(len(gold_items))}
    if len(gold_items) < HALF_MIN_GOLD:
        return {**out, "skipped": f"fewer than {HALF_MIN_GOLD} gold items"}
    fit = vb_dawid_skene(data)
    _, post = bagged_both(data, fit)
    out.update(_score(post, data, gold_items, floor=True))
    out["semi_supervised"] = {"10%": _semi(data, gold_items, 0.10, seed, post)}
    out.update(_peers(out["ece"], data, gold_items, crowdkit, False))
    return out


SCORED = ("accuracy", "ece", "ece_mass15", "brier", "log_loss")


def _semi(data: CrowdData, gold_items: np.ndarray, frac: float, seed: int,
          label_free: np.ndarray) -> dict[str, Any]:
    """Reveal ``frac`` of the gold items, fit, and score P(gold label | answers) on the
    rest, for :data:`REVEAL_DRAWS` draws of the revealed items: each figure's mean, its
    standard deviation and range (``spread``), and every draw (``draws``, with the weights
    of the three models averaged; ``label_free``: the label-free BayesBag's
    probabilities)."""
    rng = np.random.default_rng(seed)
    k = max(1, round(frac * len(gold_items)))
    draws = []
    for _ in range(REVEAL_DRAWS):
        shown = rng.choice(gold_items, size=k, replace=False)
        t = time.perf_counter()
        # the single fit and BayesBag taught the labels, and the label-free BayesBag,
        # averaged as the labels each was not taught weigh them
        p, w = revealed_reference(data, {int(i): data.gold[int(i)] for i in shown},
                                  label_free=label_free)
        draws.append({**_score(p, data, np.setdiff1d(gold_items, shown), floor=True),
                      "weights": dict(zip(("single", "bagged", "label_free"),
                                          (round(float(x), 4) for x in w), strict=True)),
                      "seconds": time.perf_counter() - t})
    table = {m: np.array([d[m] for d in draws]) for m in SCORED}
    return {"revealed": k, **{m: float(v.mean()) for m, v in table.items()},
            "spread": {m: {"sd": float(v.std(ddof=1)), "min": float(v.min()),
                           "max": float(v.max())} for m, v in table.items()},
            "draws": draws}


BLENDS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _blends(post: np.ndarray, shares: np.ndarray, data: CrowdData,
            gold_items: np.ndarray) -> dict[str, float]:
    """A diagnostic, applied nowhere: the ECE of the fit's answers if their probability
    were ``(1 - w) p + w share`` (``share``: the share of the item's answers that give the
    fit's answer). Which w calibrates a set is a property of its reference labels (where
    the reference reads items as one more worker would, the share is calibrated; where it
    reads them as the crowd's consensus, the model's p is): one w for every set shows what
    one label-free mixture could reach."""
    answer = post[gold_items].argmax(axis=1)
    rows = np.arange(len(gold_items))
    ok = answer == np.array([data.gold[i] for i in gold_items])
    p, share = post[gold_items, answer], shares[gold_items][rows, answer]
    return {str(w): round(ece((1 - w) * p + w * share, ok), 4) for w in BLENDS}


def _crowdkit(data: CrowdData, gold_items: np.ndarray, *,
              slow: bool = False) -> dict[str, Any] | None:
    """crowd-kit's aggregators on the same answers: accuracy on the gold items, and the ECE
    (10 equal-width and 15 equal-mass bins), Brier, log loss and the ECE floor of the
    probabilities each gives its answers (``probas_``, where it has them). MajorityVote and
    DawidSkene always; with ``slow`` also GLAD (per-item difficulty), MACE and
    OneCoinDawidSkene, which take up to minutes a set."""
    try:
        import pandas as pd
        from crowdkit.aggregation import (
            GLAD,
            MACE,
            DawidSkene,
            MajorityVote,
            OneCoinDawidSkene,
        )
    except ImportError:
        return None
    df = pd.DataFrame({"task": data.item_idx, "worker": data.worker_idx, "label": data.label})
    res: dict[str, Any] = {}
    y = np.array([data.gold[i] for i in gold_items])
    peers: list[tuple[str, Any]] = [("MajorityVote", MajorityVote()),
                                    ("DawidSkene", DawidSkene(n_iter=100))]
    if slow:
        peers += [("GLAD", GLAD()), ("MACE", MACE()),
                  ("OneCoinDawidSkene", OneCoinDawidSkene(n_iter=100))]
    for name, agg in peers:
        t = time.perf_counter()
        with warnings.catch_warnings():  # crowd-kit 1.4.2 uses pandas APIs pandas deprecates
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            labels = agg.fit_predict(df)
        sec = time.perf_counter() - t
        pred = labels.reindex(gold_items).to_numpy()
        res[name] = {"accuracy": float((pred == y).mean()), "seconds": sec}
        probas = getattr(agg, "probas_", None)
        if probas is not None:
            p = probas.reindex(index=range(data.n_items),
                               columns=range(data.n_classes)).fillna(0.0).to_numpy()
            # scored as the model's own: its probabilities, its answer (ties as it broke them)
            p = anchored(p, labels.reindex(range(data.n_items)).fillna(0).to_numpy(int))
            res[name].update(_score(p, data, gold_items, floor=True))
    return res


def evaluate_crowd(root: Path, *, crowdkit: bool = True, slow_peers: bool = False,
                   halves_too: bool = False) -> dict[str, Any]:
    """Evaluate every set under root; keys are set names. With ``halves_too``, each set's
    ``halves``: :func:`evaluate_half` of its two random halves by items and by workers
    (data of the same kind as the set, on which nothing was chosen)."""
    out = {}
    for data in load_sets(root):
        out[data.name] = evaluate_set(data, crowdkit=crowdkit, slow_peers=slow_peers)
        if halves_too:
            out[data.name]["halves"] = {
                part.name.rsplit("/", 1)[1]: evaluate_half(part, crowdkit=crowdkit)
                for by in ("items", "workers") for part in halves(data, by)}
    return out

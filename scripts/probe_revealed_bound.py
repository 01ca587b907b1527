"""What a few revealed labels can correct: a measurement behind issue 31's 10% row.

With a fraction of a crowd set's gold revealed, the probabilities can only be corrected
as far as those labels tell how wrong they are. This probe measures that bound on a set
(or on a half of it: ``s_adult/items_0``, as ``eval crowd --halves`` names them):

1. the label-free BayesBag probabilities of the gold items (what ``eval crowd`` reports
   without labels) and the temperature T* that fits all the gold best (maximum
   likelihood: knowledge no run has);
2. a world in which that correction is exactly right: labels drawn from the tempered
   probabilities, ``--sims`` times;
3. in each, ``--frac`` of the gold revealed, the temperature averaged over a grid by the
   revealed labels' likelihood (Bayesian model averaging at even prior odds: the best the
   labels can say about T), and the ECE10 on the rest of (a) the true probabilities (the
   floor), (b) the labels' correction, (c) no correction; then the mean of five draws, as
   ``eval crowd`` reports it.

If (b) stays above the target where (a) meets it, the revealed labels are what bounds the
row: too few to tell the correction from noise, even when the correction is of the right
form. Usage (the public sets are not in the repository)::

    python scripts/probe_revealed_bound.py --data ../shared/data/crowd --set s_adult
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from truthkeeper.reliability.bagging import bagged_both
from truthkeeper.reliability.calibration import ece
from truthkeeper.reliability.crowd import CrowdData, halves, load_sets
from truthkeeper.reliability.ds import vb_dawid_skene

GRID = np.exp(np.linspace(np.log(0.25), np.log(4.0), 61))


def temper(p: np.ndarray, t: float) -> np.ndarray:
    """Probabilities ``p`` (rows) at temperature ``t`` (above 1: less sure)."""
    q = np.clip(p, 1e-12, 1.0) ** (1.0 / t)
    return q / q.sum(axis=1, keepdims=True)


def loglik(p: np.ndarray, y: np.ndarray, t: float) -> float:
    """Log likelihood of labels ``y`` under ``temper(p, t)``."""
    return float(np.log(temper(p, t)[np.arange(len(y)), y]).sum())


def pick(name: str, root: Path) -> CrowdData:
    """The set (or the half) ``name`` under ``root``."""
    base, _, part = name.partition("/")
    for data in load_sets(root):
        if data.name == base:
            if not part:
                return data
            by, _, i = part.rpartition("_")
            return halves(data, by)[int(i)]
    sys.exit(f"no crowd set {base!r} under {root}")


def probe(data: CrowdData, frac: float, sims: int, seed: int) -> dict[str, object]:
    """The figures of the module's docstring for one set."""
    items = np.array(sorted(data.gold))
    gold = np.array([data.gold[int(i)] for i in items])
    _, label_free = bagged_both(data, vb_dawid_skene(data))
    p = label_free[items]
    t_star = float(GRID[int(np.argmax([loglik(p, gold, t) for t in GRID]))])
    true = temper(p, t_star)
    k = max(1, round(frac * len(items)))
    rng = np.random.default_rng(seed)
    scores: dict[str, list[float]] = {"floor": [], "labels_correct": [], "uncorrected": []}
    for _ in range(sims):
        y = np.array([rng.choice(p.shape[1], p=row) for row in true])
        shown = rng.choice(len(items), k, replace=False)
        rest = np.setdiff1d(np.arange(len(items)), shown)
        ll = np.array([loglik(p[shown], y[shown], t) for t in GRID])
        w = np.exp(ll - ll.max())
        corrected = sum(wi * temper(p[rest], t) for wi, t in zip(w / w.sum(), GRID, strict=True))
        for key, q in (("floor", true[rest]), ("labels_correct", corrected),
                       ("uncorrected", p[rest])):
            scores[key].append(ece(q.max(axis=1), q.argmax(axis=1) == y[rest]))
    out: dict[str, object] = {
        "set": data.name, "gold": len(items), "revealed": k, "t_star": round(t_star, 2),
        "ece_label_free": round(ece(p.max(axis=1), p.argmax(axis=1) == gold), 4),
        "ece_at_t_star": round(ece(true.max(axis=1), true.argmax(axis=1) == gold), 4)}
    for key, a in scores.items():
        means = np.array(a[: len(a) // 5 * 5]).reshape(-1, 5).mean(axis=1)
        out[key] = {"mean_of_5_median": round(float(np.median(means)), 4),
                    "mean_of_5_q95": round(float(np.quantile(means, 0.95)), 4),
                    "share_mean_of_5_at_most_05": round(float((means <= 0.05).mean()), 2)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/crowd"))
    ap.add_argument("--set", action="append", required=True, dest="sets")
    ap.add_argument("--frac", type=float, default=0.1)
    ap.add_argument("--sims", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    for name in args.sets:
        print(json.dumps(probe(pick(name, args.data), args.frac, args.sims, args.seed)),
              flush=True)


if __name__ == "__main__":
    main()

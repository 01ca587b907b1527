"""``truthkeeper bench fit``: ``fit_reliability`` on many sources (issue 15's target:
1,000 sources in <= 3 s with SVI). Outcomes: ``outcomes`` per source, sources spread over
three tiers with true reliabilities 0.9 / 0.7 / 0.5. The first SVI call in a process
compiles the fitting loop; later calls (a refit after new outcomes, at a size in the same
power-of-two bucket) reuse it, and are reported apart."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from ..memory import Memory

__all__ = ["run"]

_TRUE = {"verified": 0.9, "agent": 0.7, "unverified": 0.5}


def run(*, sources: int = 1000, outcomes: int = 8, repeat: int = 5,
        nuts: bool = False) -> dict[str, Any]:
    rng = random.Random(0)
    tiers = list(_TRUE)
    out: dict[str, Any] = {"benchmark": "fit", "sources": sources,
                           "outcomes_per_source": outcomes, "target_svi_s": 3.0}
    with Memory(protected_tiers=()) as mem:
        for s in range(sources):
            tier = tiers[s % 3]
            for _ in range(outcomes):
                mem.record_source_outcome(f"s{s}", correct=rng.random() < _TRUE[tier],
                                          tier=tier)
        t = time.perf_counter()
        prior = mem.fit_reliability(method="svi")
        out["svi_first_call_s"] = time.perf_counter() - t
        times = []
        for _ in range(repeat):
            mem.record_source_outcome("s0", correct=True, tier="verified")  # new evidence
            t = time.perf_counter()
            prior = mem.fit_reliability(method="svi")
            times.append(time.perf_counter() - t)
        out["svi_refit_s"] = {"median": statistics.median(times), "runs": times}
        out["svi_tier_means"] = {k: v[0] for k, v in prior.items()}
        out["true_tier_means"] = _TRUE
        if nuts:
            t = time.perf_counter()
            prior = mem.fit_reliability(method="nuts")
            out["nuts_s"] = time.perf_counter() - t
            out["nuts_tier_means"] = {k: v[0] for k, v in prior.items()}
    return out

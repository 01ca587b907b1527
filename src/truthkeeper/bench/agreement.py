"""``truthkeeper bench agreement``: what ``learn_from_agreement()`` costs on open values.

Two synthetic workloads, in memory:

- ``multi``: every slot has a claim from each of 5 sources, right 70% of the time, a wrong
  claim one of 3 wrong values shared by all (the fit learns N = 3);
- ``agent``: as an agent's memory grows, most slots (80%) hold one claim; the others 2-4
  claims from 40 sources, right 80% of the time, a wrong claim one of 50 values.

Per workload: the facts, the median and every run of ``learn_from_agreement()`` (the first
run included: nothing is compiled), and the N and rho it learned; with ``dependence``,
also ``learn_from_agreement(dependence=True)``.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from ..memory import Memory

__all__ = ["run", "workload"]


def workload(kind: str, slots: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """The facts of a workload (``multi`` or ``agent``) over ``slots`` slots."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(slots):
        if kind == "multi":
            said = [(f"s{s}", "t" if rng.random() < 0.7 else f"w{rng.randrange(3)}")
                    for s in range(5)]
        else:
            k = 1 if rng.random() < 0.8 else rng.randrange(2, 5)
            said = [(f"s{s}", "t" if rng.random() < 0.8 else f"w{rng.randrange(50)}")
                    for s in rng.sample(range(40), k)]
        out += [{"subject": f"q{i}", "attribute": "v", "value": v, "source": s,
                 "valid_from": "2026-01-01"} for s, v in said]
    return out


def run(*, slots: int = 20_000, repeat: int = 3, dependence: bool = False) -> dict[str, Any]:
    """``slots`` slots for ``multi``, three times as many for ``agent``."""
    out: dict[str, Any] = {"benchmark": "agreement", "repeat": repeat}
    for kind, n in (("multi", slots), ("agent", 3 * slots)):
        facts = workload(kind, n)
        res: dict[str, Any] = {"slots": n, "facts": len(facts)}
        with Memory() as mem:
            mem.add_many(facts)
            for dep in (False, True) if dependence else (False,):
                times = []
                for _ in range(repeat):
                    t = time.perf_counter()
                    mem.learn_from_agreement(dependence=dep)
                    times.append(time.perf_counter() - t)
                book = mem._rel.book
                res["dependence" if dep else "plain"] = {
                    "median_s": statistics.median(times), "runs_s": times,
                    "false_values": book.false_values, "correlation": book.correlation}
        out[kind] = res
    return out

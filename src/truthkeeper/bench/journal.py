"""``truthkeeper bench journal``: durable add_many rate (group commit) and reopen time."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from typing import Any

from ..memory import Memory


def run(*, n: int = 100_000, repeat: int = 3, synchronous: str = "FULL") -> dict[str, Any]:
    """Write n facts durably in batches of 10,000, then reopen; medians over repeats."""
    rates, reopen = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench.db")
            facts = [{"subject": f"s{i % (n // 4 or 1)}", "attribute": "a", "value": i,
                      "source": f"src{i % 7}", "valid_from": "2026-01-01T00:00:00Z"}
                     for i in range(n)]
            with Memory(path, synchronous=synchronous) as mem:
                t = time.perf_counter()
                for k in range(0, n, 10_000):
                    mem.add_many(facts[k:k + 10_000])
                rates.append(n / (time.perf_counter() - t))
            t = time.perf_counter()
            with Memory(path) as again:
                assert len(again) == n
            reopen.append(time.perf_counter() - t)
    return {
        "benchmark": "journal",
        "synchronous": synchronous,
        "n": n,
        "durable_add_many_facts_per_s": {"median": statistics.median(rates), "runs": rates,
                                         "target": 50_000},
        "reopen_seconds": {"median": statistics.median(reopen), "runs": reopen,
                           "facts_per_s": n / statistics.median(reopen),
                           "target_for_1M": 10.0},
    }

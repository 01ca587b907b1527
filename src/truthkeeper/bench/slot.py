"""``truthkeeper bench slot``: the cost of writes and reads as one slot grows."""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from ..memory import Memory
from . import median_time

_BASE = datetime(2026, 1, 1, tzinfo=UTC)


def _ms(fn: Any, repeat: int) -> float:
    return median_time(fn, repeat)


def _measure(n: int, repeat: int) -> dict[str, Any]:
    with Memory(protected_tiers=()) as mem:
        facts = [{"subject": "acme", "attribute": "price", "value": i % 97,
                  "source": "catalog" if i % 5 else "auditor",
                  "tier": "agent" if i % 5 else "verified",
                  "valid_from": _BASE + timedelta(seconds=i)} for i in range(n)]
        for k in range(0, n, 10_000):
            mem.add_many(facts[k:k + 10_000])
        ids = [f.id for f in mem.history("acme", "price")]
        writes = []
        for i in range(repeat * 20):
            t = time.perf_counter()
            mem.add("acme", "price", i, source="catalog",
                    valid_from=_BASE + timedelta(seconds=n + i))
            writes.append((time.perf_counter() - t) * 1e6)
        mid = iter(ids[n // 3: n // 3 + repeat])
        later = iter(range(10**6))
        return {
            "facts": n,
            "add_us": statistics.median(writes),
            "retract_ms": _ms(lambda: mem.retract(next(mid), reason="bench"), repeat),
            "as_of_ms": _ms(lambda: mem.as_of(
                "acme", "price", valid_at=_BASE + timedelta(seconds=n // 2)), repeat),
            "add_then_current_ms": _ms(lambda: (mem.add(
                "acme", "price", 1, source="catalog",
                valid_from=_BASE + timedelta(days=400, seconds=next(later))),
                mem.current("acme", "price")), repeat),
            "why_head_ms": _ms(lambda: mem.why(mem.current("acme", "price").heads[0]), repeat),
            "history_ms": _ms(lambda: mem.history("acme", "price"), 1),
        }


def _chain(n: int) -> dict[str, Any]:
    """One slot written fact by fact, each explicitly superseding the one before (an
    agent correcting itself): the median cost of the last hundred writes, and of reopening."""
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), "chain.db")
    with Memory(path) as mem:
        prev: str | None = None
        last: list[float] = []
        for i in range(n):
            t = time.perf_counter()
            prev = mem.add("agent", "plan", i, source="planner", supersedes=prev).id
            last = [*last[-99:], (time.perf_counter() - t) * 1e6]
    t = time.perf_counter()
    with Memory(path) as mem:
        assert mem.current("agent", "plan").value == n - 1
    return {"chain": n, "add_us_last_100": statistics.median(last),
            "reopen_s": time.perf_counter() - t}


def run(*, sizes: tuple[int, ...] = (1_000, 10_000, 100_000), repeat: int = 5) -> dict[str, Any]:
    """Grow one slot (a chain from two sources in two tiers) to each size with add_many,
    then time single writes and reads at that size (medians); and a chain of explicit
    ``supersedes`` written one fact at a time."""
    out: dict[str, Any] = {"benchmark": "slot",
                           "sizes": [_measure(n, repeat) for n in sizes],
                           "supersedes_chain": [_chain(n) for n in (200, 2_000)]}
    first, last = out["sizes"][0], out["sizes"][-1]
    out["add_cost_ratio_largest_to_smallest"] = last["add_us"] / first["add_us"]
    return out

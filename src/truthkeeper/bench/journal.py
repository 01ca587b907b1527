"""``truthkeeper bench journal``: durable add_many throughput and reopen time, on SQLite or
PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from typing import Any

from ..errors import JournalError
from ..journal.postgres import _redact
from ..memory import Memory


@contextlib.contextmanager
def _location(db: str | None) -> Iterator[str]:
    """A fresh journal: a temporary SQLite file, or a new database on the PostgreSQL server
    that ``db`` (an admin URL) names, dropped afterwards."""
    if db is None:
        with tempfile.TemporaryDirectory() as d:
            yield os.path.join(d, "bench.db")
        return
    import psycopg

    name = f"tk_bench_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(db, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"CREATE DATABASE {name}")
    except psycopg.Error as exc:
        msg = f"cannot create a benchmark database on {_redact(db)}: {exc}"
        raise JournalError(msg) from None
    try:
        yield db.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def run(*, n: int = 100_000, repeat: int = 3, synchronous: str = "FULL",
        db: str | None = None) -> dict[str, Any]:
    """Write n facts durably in batches of 10,000, then reopen; medians over repeats. Then
    erase five subjects of four facts each, one subject of 2,000 facts in 500 slots
    (a user who told the agent much: each fact's event is found and blanked), and one
    slot of 4,000 facts, 40 of them retracted (a log kept in one slot: each erased fact's
    retractions move with it); last, reopened again, list the scopes and erase one
    user's scope of 200 facts (through the slot index: no other slot is read in)."""
    rates, reopen, erase, erase_big, erase_slot = [], [], [], [], []
    listing: list[float] = []
    erase_scope: list[float] = []
    for _ in range(repeat):
        with _location(db) as path:
            facts = [{"subject": f"s{i % (n // 4 or 1)}", "attribute": "a", "value": i,
                      "source": f"src{i % 7}", "valid_from": "2026-01-01T00:00:00Z"}
                     for i in range(n)]
            with Memory(path, synchronous=synchronous) as mem:
                t = time.perf_counter()
                for k in range(0, n, 10_000):
                    mem.add_many(facts[k:k + 10_000])
                rates.append(n / (time.perf_counter() - t))
                mem.add_many([{"subject": "big", "attribute": f"a{i % 500}", "value": i,
                               "source": "src", "valid_from": "2026-01-01T00:00:00Z"}
                              for i in range(2_000)])
                log = mem.add_many([{"subject": "log", "attribute": "note", "value": i,
                                     "source": "src", "valid_from": f"2026-01-01T00:00:00."
                                     f"{i:06d}Z"} for i in range(4_000)])
                for f in log[:40]:
                    mem.retract(f.id, reason="bench")
                mem.scope("user:u").add_many([{"subject": f"me{i % 50}", "attribute": "a",
                                               "value": i, "source": "chat"}
                                              for i in range(200)])
            t = time.perf_counter()
            with Memory(path) as again:
                assert len(again) == n + 6_000  # the shared layer's
                reopen.append(time.perf_counter() - t)
                for i in range(5):  # one subject's facts (4 of them), as a user asks
                    t = time.perf_counter()
                    again.erase(subject=f"s{i}")
                    erase.append((time.perf_counter() - t) * 1e3)
                t = time.perf_counter()
                again.erase(subject="big")
                erase_big.append(time.perf_counter() - t)
                t = time.perf_counter()
                again.erase(subject="log")
                erase_slot.append(time.perf_counter() - t)
            with Memory(path) as lazily:  # reopened, nothing read in (len read every slot)
                t = time.perf_counter()
                assert lazily.scopes() == ["user:u"]
                listing.append(time.perf_counter() - t)
                lazily.erase(subject="s5")  # its first write waits for the index's check
                t = time.perf_counter()
                assert len(lazily.erase(scope="user:u")) == 200
                erase_scope.append(time.perf_counter() - t)
                assert lazily._store.lazy is None or not lazily._store.lazy.done
    return {
        "benchmark": "journal",
        "backend": "sqlite" if db is None else "postgresql",
        "synchronous": synchronous if db is None else "server default",
        "n": n,
        "durable_add_many_facts_per_s": {"median": statistics.median(rates), "runs": rates,
                                         "target": 50_000},
        "reopen_seconds": {"median": statistics.median(reopen), "runs": reopen,
                           "facts_per_s": n / statistics.median(reopen),
                           "target_for_1M": 10.0},
        "erase_one_subject_ms": {"median": statistics.median(erase), "runs": erase},
        "erase_subject_of_2000_facts_s": {"median": statistics.median(erase_big),
                                          "runs": erase_big},
        "erase_slot_of_4000_facts_s": {"median": statistics.median(erase_slot),
                                       "runs": erase_slot},
        "scopes_s": {"median": statistics.median(listing), "runs": listing},
        "erase_scope_of_200_facts_s": {"median": statistics.median(erase_scope),
                                       "runs": erase_scope},
    }

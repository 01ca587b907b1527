"""``truthkeeper bench scale``: durable ingest, reopen to the first answer, and memory (RSS),
at growing sizes (issue 15's measurements; a million facts takes minutes).

The workload: n facts over n/15 subjects x 3 attributes, so each slot holds a chain of about
five values (valid times increase along it). Ingest writes batches of 10,000 into a SQLite
journal (FULL sync), or a new PostgreSQL database with ``--db``. Reopening runs in a fresh
process, once replaying the journal in full and once lazily (the default); the journal holds
a rule and an erasure, as an agent's memory does. Each reports the
seconds from ``Memory(path)`` to its first answer (one ``current``; the process's start,
imports (psycopg's too) and SWI-Prolog's start are reported apart), its peak RSS after
10,000 random reads, the p50 and p99 of the first read of each slot among them
(``first_read_us``: a lazily opened memory loads the slot then), and (lazy) when the
background index check finished and after every slot was read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from ..memory import Memory
from . import PEAK_RSS_CODE
from .journal import _location

__all__ = ["run"]

_PROBE = PEAK_RSS_CODE + r"""
import json, random, sys, time
t = time.perf_counter()
import truthkeeper
truthkeeper.policies()  # SWI-Prolog started
if sys.argv[1].startswith("postgresql://"):
    import psycopg  # noqa: F401 - an import, paid once per process like the rest
startup = time.perf_counter() - t
lazy = sys.argv[3] == "lazy"
t = time.perf_counter()
mem = truthkeeper.Memory(sys.argv[1], lazy=lazy)
opened = time.perf_counter() - t
n_subjects = int(sys.argv[2])
mem.current("e0", "a0")
first = time.perf_counter() - t
rss_open = peak_rss_mb()
rng = random.Random(0)
seen, firsts = set(), []  # each slot's first read, timed alone
t = time.perf_counter()
for _ in range(10_000):
    slot = (f"e{rng.randrange(n_subjects)}", f"a{rng.randrange(3)}")
    t1 = time.perf_counter()
    mem.current(*slot)
    if slot not in seen:
        firsts.append((time.perf_counter() - t1) * 1e6)
        seen.add(slot)
reads = time.perf_counter() - t
firsts.sort()
out = {"startup_s": startup, "open_s": opened, "first_answer_s": first,
       "rss_after_open_mb": rss_open, "rss_after_reads_mb": peak_rss_mb(),
       "reads_10k_s": reads,
       "first_read_us": {"p50": firsts[len(firsts) // 2],
                         "p99": firsts[int(len(firsts) * 0.99)], "slots": len(firsts)}}
if lazy:
    check = mem._store.lazy
    while check.check.running():
        time.sleep(0.01)
    out.update(index_checked_s=time.perf_counter() - t, index_verified=check.verified)
    t = time.perf_counter()
    len(mem)
    out.update(load_all_s=time.perf_counter() - t, rss_all_loaded_mb=peak_rss_mb())
print(json.dumps(out))
"""


def _facts(n: int) -> tuple[list[dict[str, Any]], int]:
    subjects = max(n // 15, 1)
    out = []
    for i in range(n):
        link = i // (subjects * 3)  # position along the slot's chain
        out.append({"subject": f"e{i % subjects}", "attribute": f"a{(i // subjects) % 3}",
                    "value": i, "source": f"src{i % 7}",
                    "valid_from": f"{2000 + link}-01-01T00:00:00Z"})
    return out, subjects


def _bar(done: int, total: int, started: float) -> None:
    if not sys.stderr.isatty() and total < 200_000:
        return
    width = 30
    k = width * done // total
    rate = done / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(f"\r  [{'#' * k}{'.' * (width - k)}] {done:,}/{total:,} facts, "
                     f"{rate:,.0f}/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _size_mb(path: str) -> float:
    if not path.startswith("postgresql://"):
        return os.path.getsize(path) / 2**20
    import psycopg

    with psycopg.connect(path) as conn:
        [(size,)] = conn.execute("SELECT pg_database_size(current_database())").fetchall()
    return float(size) / 2**20


def run(*, sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000),
        modes: tuple[str, ...] = ("lazy", "full"), db: str | None = None) -> dict[str, Any]:
    """One run per size (see the module docstring); ``db``: a PostgreSQL server's admin URL
    (a database is created per size and dropped after), else SQLite files."""
    out: dict[str, Any] = {"benchmark": "scale",
                           "journal": "postgresql" if db else "sqlite, synchronous FULL",
                           "targets": {"first_answer_s": 0.1, "rss_after_reads_mb_100k": 80,
                                       "rss_after_reads_mb_1M": 150},
                           "sizes": {}}
    for n in sizes:
        facts, subjects = _facts(n)
        with _location(db) as path:
            with Memory(path) as mem:
                t = time.perf_counter()
                for k in range(0, n, 10_000):
                    mem.add_many(facts[k:k + 10_000])
                    _bar(min(k + 10_000, n), n, t)
                ingest = time.perf_counter() - t
                mem.add_rule("moved(S) :- holds(S, a0, V), V > 5")  # a rule and an erasure
                mem.erase(subject="e1")  # in the journal, as every agent's memory has
            row: dict[str, Any] = {"ingest_facts_per_s": n / ingest,
                                   "journal_mb": _size_mb(path)}
            for mode in modes:
                probe = subprocess.run([sys.executable, "-c", _PROBE, path, str(subjects),
                                        mode], capture_output=True, text=True, check=False)
                if probe.returncode != 0:
                    msg = f"the reopen probe failed: {probe.stderr[-2000:]}"
                    raise RuntimeError(msg)
                row[mode] = json.loads(probe.stdout.strip().splitlines()[-1])
            out["sizes"][str(n)] = row
    return out

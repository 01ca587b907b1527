"""``truthkeeper bench writers``: many processes writing single facts to one journal.

Each of P processes opens the journal and, after a common start, writes one fact per call
(``add``) for the given number of seconds, counting the writes the journal acknowledged.
Then one memory reads the journal back: every acknowledged write must be there (``lost``
counts those that are not), the chain must verify, and the totals give writes per second
for all processes together. On PostgreSQL (``--db``, an admin URL: a database is created
and dropped after) this is issue 30's "many writers" row; on SQLite (the default, a
temporary file) writers share the file's lock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from ..memory import Memory
from .journal import _location

__all__ = ["run"]

_WRITER = r"""
import json, sys, time
from truthkeeper import Memory
path, name, start, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
acked, lat = [], []
with Memory(path) as mem:
    mem.current("warm", "up")
    while time.time() < start:
        time.sleep(0.001)
    end = start + seconds
    i = 0
    while time.time() < end:
        t = time.perf_counter()
        f = mem.add(f"{name}-s{i % 50}", "a", i, source=name)
        lat.append(time.perf_counter() - t)
        acked.append(f.id)
        i += 1
lat.sort()
print(json.dumps({"acked": acked, "p50_ms": 1e3 * lat[len(lat) // 2] if lat else None,
                  "p99_ms": 1e3 * lat[int(len(lat) * 0.99)] if lat else None}))
"""


def run(*, processes: int = 8, seconds: float = 10.0, db: str | None = None) -> dict[str, Any]:
    """Writes per second of ``processes`` writers together over ``seconds``, and how many
    acknowledged writes the journal lost (must be 0)."""
    with _location(db) as path:
        Memory(path).close()  # the journal and its configuration exist before the race
        start = time.time() + 3.0 + 0.5 * processes  # every process opened by then
        procs = [subprocess.Popen([sys.executable, "-c", _WRITER, path, f"w{k}", str(start),
                                   str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for k in range(processes)]
        results = []
        for p in procs:
            out, err = p.communicate(timeout=600 + seconds)
            if p.returncode != 0:
                msg = f"a writer failed: {err[-2000:]}"
                raise RuntimeError(msg)
            results.append(json.loads(out.strip().splitlines()[-1]))
        acked = [i for r in results for i in r["acked"]]
        with Memory(path, lazy=False) as mem:
            held = {f.id for s in {f"w{k}-s{j}" for k in range(processes) for j in range(50)}
                    for f in mem.history(s, "a")}
            verified = mem.verify().ok
    return {"benchmark": "writers",
            "journal": "postgresql" if db else "sqlite",
            "processes": processes, "seconds": seconds,
            "writes": len(acked), "writes_per_s": len(acked) / seconds,
            "per_process": [len(r["acked"]) for r in results],
            "latency_ms_p50": [r["p50_ms"] for r in results],
            "latency_ms_p99": [r["p99_ms"] for r in results],
            "lost": len(set(acked) - held), "chain_verifies": verified,
            "target_writes_per_s": 1500 if db else None}

"""A journal writer for the crash and concurrency tests (run as a subprocess).

usage: python -m tests._writer PATH START COUNT MODE
MODE "batches": add_many in random batches, print the ids after each commit.
MODE "single": add one fact at a time, print each id after its commit.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from pathlib import Path

from truthkeeper import Memory

ROOT = Path(__file__).resolve().parent.parent


def spawn(path: object, start: int, count: int, mode: str) -> subprocess.Popen[str]:
    """Start a writer process (this module) on a journal."""
    return subprocess.Popen([sys.executable, "-m", "tests._writer", str(path), str(start),
                             str(count), mode], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def close(p: subprocess.Popen[str]) -> None:
    for stream in (p.stdout, p.stderr):
        if stream is not None:
            stream.close()


def run_writers(path: object, processes: int, each: int) -> list[str]:
    """``processes`` writers adding ``each`` facts one at a time, concurrently; the ids they
    acknowledged (every writer must exit cleanly)."""
    procs = [spawn(path, k * each, each, "single") for k in range(processes)]
    outs: list[list[str]] = [[] for _ in procs]

    def drain(k: int) -> None:
        assert procs[k].stdout is not None
        outs[k] = procs[k].stdout.read().split()

    threads = [threading.Thread(target=drain, args=(k,)) for k in range(processes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        code = p.wait()
        err = p.stderr.read() if p.stderr else ""
        close(p)
        assert code == 0, err
    return [i for out in outs for i in out]


def main() -> None:
    path, start, count, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sync = "NORMAL" if mode == "single" else "FULL"
    mem = Memory(path, synchronous=sync)
    i = start
    rnd = random.Random(start)
    while i < start + count:
        if mode == "single":
            f = mem.add(f"s{i % 97}", "n", i, source=f"w{start}")
            print(f.id, flush=True)
            i += 1
        else:
            k = min(rnd.randint(1, 40), start + count - i)
            facts = mem.add_many([{"subject": f"s{j % 97}", "attribute": "n", "value": j,
                                   "source": "writer"} for j in range(i, i + k)])
            print(" ".join(f.id for f in facts), flush=True)
            i += k
    mem.close()


if __name__ == "__main__":
    main()

"""A journal writer for the crash and concurrency tests (run as a subprocess).

usage: python -m tests._writer PATH START COUNT MODE
MODE "batches": add_many in random batches, print the ids after each commit.
MODE "single": add one fact at a time, print each id after its commit.
"""

from __future__ import annotations

import random
import sys

from truthkeeper import Memory


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

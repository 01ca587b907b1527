"""The background comparison of a journal's slot index with its chain, as its own process.

A lazily opened memory starts ``python -m truthkeeper.journal.indexcheck`` right after the
open and hands it the journal's reader settings on stdin (never in argv: a PostgreSQL URL
may hold a password). The child opens its own read-only connection, compares the whole
index with the chain in one snapshot and prints one JSON line: ``{"result": "match"}``,
``"differ"``, ``"none"`` (no index) or ``"corrupt"`` with the message. The memory keeps
the child's stdin open while it waits: at its end (the memory closed, or its process gone
without closing it) nobody waits for the answer, and the child stops at once (a check of
a million facts takes half a minute, which an orphan spent before). Run in the memory's
own process, as a thread, the comparison took the interpreter from the reads it overlapped
(a read's p99 3-10 ms at 100,000 facts); as a process it shares nothing with them.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from ..errors import JournalCorrupt
from . import open_reader


def _stop_with_the_memory() -> None:
    """Exit as soon as stdin ends: whatever the comparison is blocked on."""
    sys.stdin.read()
    os._exit(0)


def main() -> None:
    spec = json.loads(sys.stdin.readline())
    threading.Thread(target=_stop_with_the_memory, daemon=True).start()
    reader = open_reader(spec)
    try:
        ok = reader.index_matches()
    except JournalCorrupt as exc:
        out = {"result": "corrupt", "message": str(exc)}
    else:
        out = {"result": {True: "match", False: "differ", None: "none"}[ok]}
    finally:
        reader.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

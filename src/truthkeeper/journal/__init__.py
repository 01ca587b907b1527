"""The journal: append-only events with a hash chain, from which everything is rebuilt.

- :mod:`.codec`: the one encoder/decoder of facts, events, payloads and JSON Lines;
- :mod:`.base`: the interface, the chain, checked reads and verification;
- :mod:`.sqlite`, :mod:`.memory`: the backends;
- :mod:`.ledger`: the write path (catch up, apply, append, undo on a failed commit).
"""

import os
from typing import Any

from ..errors import JournalError
from .base import Journal
from .memory import MemoryJournal
from .sqlite import SqliteJournal

__all__ = ["Journal", "MemoryJournal", "SqliteJournal", "open_journal", "open_reader"]


def open_journal(path: str | None, *, synchronous: str = "FULL",
                 readonly: bool = False) -> Journal:
    """The journal of a memory: in memory when ``path`` is None, PostgreSQL for a
    ``postgresql://`` URL, else a SQLite file."""
    if path is None:
        return MemoryJournal()
    if path.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresJournal

        return PostgresJournal(path, readonly=readonly)
    if readonly and not os.path.exists(path):
        msg = f"journal {path!r} does not exist (readonly=True opens existing journals)"
        raise JournalError(msg)
    return SqliteJournal(path, synchronous=synchronous, readonly=readonly)


def open_reader(spec: dict[str, Any]) -> Journal:
    """A read-only connection from a journal's :meth:`~.base.Journal.reader_spec` (in
    another process: the background index check)."""
    if "dsn" in spec:
        from .postgres import PostgresJournal

        return PostgresJournal(spec["dsn"], readonly=True,
                               connect_timeout=float(spec["timeout"]))
    return SqliteJournal(spec["path"], readonly=True, busy_timeout_ms=int(spec["busy_ms"]))

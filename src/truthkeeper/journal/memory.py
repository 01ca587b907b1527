"""The journal of an in-memory Memory: the same events and chain, kept in a list."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .base import Journal, Row, Txn
from .codec import GENESIS

__all__ = ["MemoryJournal"]


class MemoryJournal(Journal):
    """Events in a Python list; a transaction that raises leaves the list as it was."""

    durable = False

    def __init__(self) -> None:
        self._rows: list[Row] = []

    def _select(self, after_seq: int) -> list[Row]:
        return self._rows[after_seq:]

    def _insert(self, rows: list[Row]) -> None:
        self._rows.extend(rows)

    def _update_body(self, seq: int, body: str) -> None:
        row = self._rows[seq - 1]
        self._rows[seq - 1] = (row[0], row[1], row[2], body, row[4], row[5])

    def tail(self) -> tuple[int, str, int]:
        if not self._rows:
            return 0, GENESIS, 0
        last = self._rows[-1]
        return last[0], last[5], max(r[2] for r in self._rows[-8:])

    @contextmanager
    def transaction(self) -> Iterator[Txn]:
        n, before = len(self._rows), list(self._rows)
        try:
            yield Txn(self)
        except BaseException:
            self._rows[:] = before[:n]
            raise

"""The journal of an in-memory Memory: the same events and chain, kept in a list."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .base import Journal, Row, Txn, fact_id
from .codec import GENESIS

__all__ = ["MemoryJournal"]


class MemoryJournal(Journal):
    """Events in a Python list; a transaction that raises leaves the list as it was."""

    durable = False

    def __init__(self) -> None:
        self._rows: list[Row] = []
        self._undo: dict[int, Row] | None = None  # rows a transaction rewrote, as they were
        # built by the first erasure, then kept: where each fact's event is, and which
        # events are not facts (so that later erasures do not read the whole journal)
        self._ids: dict[str, int] | None = None
        self._others: list[int] | None = None

    def _select(self, after_seq: int) -> list[Row]:
        return self._rows[after_seq:]

    def _insert(self, rows: list[Row]) -> None:
        self._rows.extend(rows)
        if self._ids is not None:
            self._note(rows)

    def _note(self, rows: list[Row]) -> None:
        assert self._ids is not None and self._others is not None
        for seq, kind, _ra, body, _p, _h in rows:
            if kind != "fact":
                self._others.append(seq)
            elif (fid := fact_id(body, seq)) is not None:
                self._ids[fid] = seq

    def _scan_fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        if self._ids is None:
            self._ids, self._others = {}, []
            self._note(self._rows)
        out: dict[str, tuple[int, str]] = {}
        for fid in ids:
            seq = self._ids.get(fid)
            if seq is not None and fact_id(body := self._rows[seq - 1][3], seq) == fid:
                out[fid] = (seq, body)
        return out

    def kind_rows(self, kind: str) -> list[tuple[int, str]]:
        if kind == "fact" or self._others is None:
            return super().kind_rows(kind)
        return [(seq, self._rows[seq - 1][3]) for seq in self._others
                if self._rows[seq - 1][1] == kind]

    def _update_body(self, seq: int, body: str) -> None:
        row = self._rows[seq - 1]
        if self._undo is not None and seq - 1 not in self._undo:
            self._undo[seq - 1] = row
        self._rows[seq - 1] = (row[0], row[1], row[2], body, row[4], row[5])

    def tail(self) -> tuple[int, str, int]:
        if not self._rows:
            return 0, GENESIS, 0
        last = self._rows[-1]
        return last[0], last[5], max(r[2] for r in self._rows[-8:])

    @contextmanager
    def transaction(self, after: int | None = None) -> Iterator[Txn]:
        # what a rollback needs: the length before (appends are cut off) and the rows the
        # transaction rewrote (an erasure); not a copy of the list, which made every write
        # cost in proportion to the journal
        n, outer = len(self._rows), self._undo
        undo: dict[int, Row] = {}
        self._undo = undo
        try:
            yield Txn(self)
        except BaseException:
            del self._rows[n:]
            self._ids = self._others = None  # built again by the next erasure
            for i, row in undo.items():
                if i < n:
                    self._rows[i] = row
            raise
        else:
            if outer is not None:  # a nested transaction: the outer one may still roll back
                for i, row in undo.items():
                    outer.setdefault(i, row)
        finally:
            self._undo = outer

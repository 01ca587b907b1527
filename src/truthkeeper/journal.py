"""The durable journal: append-only SQLite events with a hash chain.

One row per event (``fact``, ``retract``, ``rule``, ``outcome``, ``config``). Each row carries
the hash of the previous one, so an edit anywhere breaks the chain from that row on. WAL mode,
``synchronous=FULL`` by default (``NORMAL`` may lose the last transactions on power loss, never
on a process crash), ``BEGIN IMMEDIATE`` for writes (one writer at a time, readers never
blocked), triggers that abort UPDATE and DELETE.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from .errors import JournalCorrupt, JournalError

__all__ = ["GENESIS", "Event", "Journal", "event_hash"]

GENESIS = "0" * 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'truthkeeper journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'truthkeeper journal is append-only'); END;
"""


@dataclass(frozen=True, slots=True)
class Event:
    """One journal row."""

    seq: int
    kind: str
    recorded_at: int
    body: dict[str, Any]
    prev_hash: str
    hash: str


def canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev: str, seq: int, kind: str, recorded_at: int, body_text: str) -> str:
    h = hashlib.sha256()
    h.update(f"{prev}|{seq}|{kind}|{recorded_at}|".encode())
    h.update(body_text.encode())
    return h.hexdigest()


class Journal:
    """An append-only event log in one SQLite file."""

    def __init__(self, path: str, *, synchronous: str = "FULL", readonly: bool = False,
                 busy_timeout_ms: int = 30_000) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            msg = f"synchronous must be 'FULL' or 'NORMAL', got {synchronous!r}"
            raise JournalError(msg)
        self.path = path
        self.readonly = readonly
        try:
            if readonly:
                uri = f"file:{os.path.abspath(path)}?mode=ro"
                self._conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                             check_same_thread=False)
            else:
                self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            if not readonly:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(f"PRAGMA synchronous={synchronous}")
                self._conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            msg = f"cannot open journal {path!r}: {exc}"
            raise JournalError(msg) from exc

    def close(self) -> None:
        self._conn.close()

    # ------------------------------------------------------------------ reading

    def read(self, after_seq: int = 0) -> Iterator[Event]:
        """Events with seq > after_seq, in order (body parsed; the hash is not checked)."""
        try:
            cur = self._conn.execute(
                "SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events "
                "WHERE seq > ? ORDER BY seq", (after_seq,))
            for seq, kind, ra, body, prev, h in cur:
                yield Event(seq, kind, ra, _parse(body, seq), prev, h)
        except sqlite3.Error as exc:
            msg = f"cannot read journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc

    def read_checked(self, after_seq: int, prev_hash: str) -> Iterator[Event]:
        """Like read(), verifying the chain from ``prev_hash`` on; raises JournalCorrupt."""
        expected_seq = after_seq + 1
        prev = prev_hash
        try:
            cur = self._conn.execute(
                "SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events "
                "WHERE seq > ? ORDER BY seq", (after_seq,))
            rows = cur.fetchall()
        except sqlite3.Error as exc:
            msg = f"cannot read journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc
        for seq, kind, ra, body, p, h in rows:
            problem = check_row(seq, kind, ra, body, p, h, expected_seq, prev)
            if problem:
                msg = f"journal {self.path!r} is corrupt at event {seq}: {problem}"
                raise JournalCorrupt(msg)
            yield Event(seq, kind, ra, _parse(body, seq), p, h)
            prev, expected_seq = h, seq + 1

    def tail(self) -> tuple[int, str, int]:
        """(last seq, its hash, the largest recorded_at) or (0, GENESIS, 0)."""
        row = self._conn.execute(
            "SELECT seq, hash, recorded_at FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        if row is None:
            return 0, GENESIS, 0
        return int(row[0]), str(row[1]), int(row[2])

    def integrity_check(self) -> str:
        return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    # ------------------------------------------------------------------ writing

    @contextmanager
    def transaction(self) -> Iterator[_Txn]:
        """BEGIN IMMEDIATE ... COMMIT. Commit errors reach the caller as JournalError."""
        if self.readonly:
            msg = f"journal {self.path!r} is open read-only"
            raise JournalError(msg)
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            msg = f"cannot start a write on journal {self.path!r}: {exc}"
            raise JournalError(msg) from exc
        txn = _Txn(self)
        try:
            yield txn
            self._commit()
        except BaseException:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise

    def _commit(self) -> None:
        try:
            self._conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            msg = f"commit to journal {self.path!r} failed: {exc}"
            raise JournalError(msg) from exc


class _Txn:
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.seq, self.hash, self.last_ra = journal.tail()

    def append(self, kind: str, recorded_at: int, body: dict[str, Any]) -> None:
        self.append_many([(kind, recorded_at, body)])

    def append_many(self, events: list[tuple[str, int, dict[str, Any]]]) -> None:
        """Chain and insert events in order (one executemany)."""
        rows = []
        seq, prev = self.seq, self.hash
        for kind, recorded_at, body in events:
            text = canonical(body)
            seq += 1
            h = event_hash(prev, seq, kind, recorded_at, text)
            rows.append((seq, kind, recorded_at, text, prev, h))
            prev = h
        try:
            self.journal._conn.executemany(
                "INSERT INTO events(seq, kind, recorded_at, body, prev_hash, hash) "
                "VALUES (?, ?, ?, ?, ?, ?)", rows)
        except (sqlite3.Error, OSError) as exc:
            msg = f"write to journal {self.journal.path!r} failed: {exc}"
            raise JournalError(msg) from exc
        if rows:
            self.seq, self.hash = seq, prev
            self.last_ra = max(self.last_ra, max(r[2] for r in rows))


def check_row(seq: int, kind: str, ra: int, body: str, prev: str, h: str,
              expected_seq: int, expected_prev: str) -> str | None:
    """Why a stored row breaks the chain, or None."""
    if seq != expected_seq:
        return f"expected event {expected_seq}, found {seq} (an event is missing)"
    if prev != expected_prev:
        return "its prev_hash does not match the previous event's hash"
    if event_hash(prev, seq, kind, ra, body) != h:
        return "its content does not match its hash (edited)"
    return None  # the body's JSON is checked where it is parsed


def _parse(body: str, seq: int) -> dict[str, Any]:
    try:
        out = json.loads(body)
    except ValueError:
        msg = f"journal event {seq} is not valid JSON"
        raise JournalCorrupt(msg) from None
    if not isinstance(out, dict):
        msg = f"journal event {seq} is not a JSON object"
        raise JournalCorrupt(msg)
    return out

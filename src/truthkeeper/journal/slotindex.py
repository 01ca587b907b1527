"""The slot index of a SQLite journal: which events belong to which slot, and which slot
holds each fact id and signature nonce, so that a memory opened with ``lazy=True`` reads
only the events of the slots it is asked about.

The index is derived data, kept in the journal file beside the events and written in the
same transaction as they are. It records the position (seq and hash) of the last event it
covers; an index whose position is not an event of the chain is rebuilt from the events,
one behind the chain is brought up to date, and every event read through it is checked
against its own hash, its neighbours in the chain and the slot it was listed under.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..errors import JournalCorrupt
from ..values import SCOPE_SEP, scoped
from .codec import GENESIS, Event, check_row, parse_body

__all__ = ["AUDIT", "GLOBAL", "SlotIndex", "body_entries", "entries", "slot_key"]

GLOBAL = ""
"""The slot of the events that belong to no slot (configuration, rules, outcomes, ...):
a lazy open applies all of them."""
AUDIT = "$audit"
"""The slot of the audit entries, read when the audit log is (slots of facts always hold
the separator, so no slot of facts is named so)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS tk_index_slot (
    slot TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (slot, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tk_index_key (
    key TEXT PRIMARY KEY, slot TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tk_index_state (
    one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);
"""
TABLES = frozenset({"tk_index_slot", "tk_index_key", "tk_index_state"})
_CHUNK = 500  # parameters per IN (...) query


def slot_key(subject_key: str, attribute: str) -> str:
    """One slot as the index names it (keys never hold the separator: it is whitespace)."""
    return f"{subject_key}{SCOPE_SEP}{attribute}"


def entries(kind: str, body_text: str, lookup: Callable[[str], str | None],
            ) -> tuple[str, list[tuple[str, str]]]:
    """An event's slot and the keys it defines: ``i:<fact id>`` and ``n:<nonce>`` name a
    slot, ``s:<source>`` the tier of a source's first fact. A body that cannot be read
    belongs to no slot: a lazy open applies it at once and reports it as replay would."""
    try:
        body = json.loads(body_text)
    except ValueError:
        return GLOBAL, []
    return body_entries(kind, body, lookup)


def body_entries(kind: str, body: Any, lookup: Callable[[str], str | None],
                 ) -> tuple[str, list[tuple[str, str]]]:
    """:func:`entries` of a parsed body."""
    try:
        if kind == "fact":
            slot = slot_key(scoped(body.get("scope"), body["subject"]), body["attribute"])
            keys = [("i:" + body["id"], slot), ("s:" + body["source"], body["tier"])]
        elif kind == "retract":
            found = lookup("i:" + body["id"])
            if found is None:
                return GLOBAL, []
            slot, keys = found, []
        else:
            return (AUDIT if kind == "audit" else GLOBAL), []
        sig = body.get("signature")
        if isinstance(sig, dict) and isinstance(sig.get("nonce"), str):
            keys.append(("n:" + sig["nonce"], slot))
        if not all(isinstance(x, str) for kv in keys for x in kv):
            return GLOBAL, []
        return slot, keys
    except (ValueError, KeyError, TypeError, AttributeError):
        return GLOBAL, []


class SlotIndex:
    """The index tables of one SQLite connection (the journal's)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create(self) -> None:
        for statement in SCHEMA.split(";"):  # not executescript: it would commit
            if statement.strip():
                self.conn.execute(statement)

    def exists(self) -> bool:
        n = self.conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                              "name = 'tk_index_state'").fetchone()[0]
        return bool(n)

    def state(self) -> tuple[int, str] | None:
        """(seq, hash) of the last event the index covers, or None."""
        if not self.exists():
            return None
        row = self.conn.execute("SELECT seq, hash FROM tk_index_state").fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def matches_chain(self) -> bool:
        """Whether the index's position is an event of the chain (else it is rebuilt)."""
        st = self.state()
        if st is None:
            return False
        if st[0] == 0:
            return st[1] == GENESIS
        row = self.conn.execute("SELECT hash FROM events WHERE seq = ?", (st[0],)).fetchone()
        return row is not None and row[0] == st[1]

    def lookup(self, key: str) -> str | None:
        row = self.conn.execute("SELECT slot FROM tk_index_key WHERE key = ?",
                                (key,)).fetchone()
        return None if row is None else str(row[0])

    def lookup_many(self, keys: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), _CHUNK):
            part = keys[i:i + _CHUNK]
            out.update(self.conn.execute(
                f"SELECT key, slot FROM tk_index_key WHERE key IN ({','.join('?' * len(part))})",
                part).fetchall())
        return out

    def slots_with_prefix(self, prefix: str) -> list[str]:
        """The distinct slots whose name starts with ``prefix``, which ends with the
        separator: a range scan of the primary key, up to the separator's successor."""
        if not prefix.endswith(SCOPE_SEP):
            msg = "a slot prefix ends with the separator"
            raise ValueError(msg)
        high = prefix[:-1] + chr(ord(SCOPE_SEP) + 1)
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT slot FROM tk_index_slot WHERE slot >= ? AND slot < ?",
            (prefix, high))]

    def add(self, rows: Sequence[tuple[int, str, int, str, str, str]]) -> None:
        """Index rows just appended, in their transaction, when the index covers every
        event before them (else it stays behind and is caught up when next needed)."""
        st = self.state() if rows else None
        if st is None or st[0] != rows[0][0] - 1:
            return
        self._index(rows)

    def _index(self, rows: Iterable[tuple[int, str, int, str, str, str]]) -> None:
        pending: dict[str, str] = {}

        def lookup(key: str) -> str | None:
            return pending.get(key) or self.lookup(key)

        slots, last = [], None
        for seq, kind, _ra, body, _p, h in rows:
            slot, keys = entries(kind, body, lookup)
            slots.append((slot, seq))
            for k, v in keys:
                pending.setdefault(k, v)
            last = (seq, h)
        self.conn.executemany("INSERT OR IGNORE INTO tk_index_slot(slot, seq) VALUES (?, ?)",
                              slots)
        self.conn.executemany("INSERT OR IGNORE INTO tk_index_key(key, slot) VALUES (?, ?)",
                              pending.items())
        if last is not None:
            self.conn.execute("INSERT OR REPLACE INTO tk_index_state(one, seq, hash) "
                              "VALUES (1, ?, ?)", last)

    def rebuild(self, rows: Iterator[tuple[int, str, int, str, str, str]]) -> None:
        """Index every event anew (rows read from the chain, checked by the caller)."""
        for table in sorted(TABLES):
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")
        self.create()
        self.conn.execute("INSERT INTO tk_index_state(one, seq, hash) VALUES (1, 0, ?)",
                          (GENESIS,))
        self.extend(rows)

    def extend(self, rows: Iterator[tuple[int, str, int, str, str, str]]) -> None:
        """Index the events after the index's position, in runs."""
        run: list[tuple[int, str, int, str, str, str]] = []
        for row in rows:
            run.append(row)
            if len(run) >= 5_000:
                self._index(run)
                run = []
        self._index(run)

    def contents(self) -> tuple[set[tuple[str, int]], set[tuple[str, str]]]:
        """What the index holds (for a full check against the chain)."""
        return (set(self.conn.execute("SELECT slot, seq FROM tk_index_slot")),
                set(self.conn.execute("SELECT key, slot FROM tk_index_key")))

    def expected(self, rows: Iterator[tuple[int, str, int, str, str, str]],
                 ) -> tuple[set[tuple[str, int]], set[tuple[str, str]]]:
        """What the index should hold for these rows (all of the chain)."""
        keys: dict[str, str] = {}
        slots = set()
        for seq, kind, _ra, body, _p, _h in rows:
            slot, ks = entries(kind, body, keys.get)
            slots.add((slot, seq))
            for k, v in ks:
                keys.setdefault(k, v)
        return slots, set(keys.items())

    def events(self, slots: Sequence[str], upto: int) -> list[tuple[str, Event]]:
        """The events of these slots up to ``upto``, in journal order, each checked: its
        hash, its links to the events before and after it, and its slot."""
        found: list[tuple[Any, ...]] = []
        for i in range(0, len(slots), _CHUNK):
            part = list(slots[i:i + _CHUNK])
            found.extend(self.conn.execute(
                "SELECT e.seq, e.kind, e.recorded_at, e.body, e.prev_hash, e.hash, s.slot, "
                "p.hash, n.prev_hash FROM tk_index_slot s JOIN events e ON e.seq = s.seq "
                "LEFT JOIN events p ON p.seq = e.seq - 1 "
                "LEFT JOIN events n ON n.seq = e.seq + 1 "
                f"WHERE s.slot IN ({','.join('?' * len(part))}) AND s.seq <= ?",
                [*part, upto]).fetchall())
        found.sort(key=lambda r: r[0])
        out = []
        keys: dict[str, str] = {}
        for seq, kind, ra, body, prev, h, slot, before, after in found:
            problem = check_row(seq, kind, ra, body, prev, h, seq, prev)
            if problem is None and prev != (GENESIS if seq == 1 else before):
                problem = "its prev_hash does not match the previous event's hash"
            if problem is None and after is not None and after != h:
                problem = "the next event's prev_hash does not match its hash"
            if problem is not None:
                msg = f"journal is corrupt at event {seq}: {problem}"
                raise JournalCorrupt(msg)
            parsed = parse_body(body, seq)
            listed, ks = body_entries(kind, parsed, lambda k: keys.get(k) or self.lookup(k))
            keys.update(ks)
            if listed != slot:
                raise StaleIndex(seq)
            out.append((slot, Event(seq, kind, ra, parsed, prev, h)))
        return out


class StaleIndex(Exception):  # noqa: N818 - internal signal, never reaches a caller
    """An event was listed under a slot it does not belong to: the index is rebuilt."""

"""The slot index of a journal (SQLite or PostgreSQL): which events belong to which slot,
and which slot holds each fact id and signature nonce, so that a memory opened with
``lazy=True`` reads only the events of the slots it is asked about.

The index is derived data, kept in the journal file beside the events and written in the
same transaction as they are. It records the position (seq and hash) of the last event it
covers; an index whose position is not an event of the chain is rebuilt from the events,
one behind the chain is brought up to date, and every event read through it is checked
against its own hash, its neighbours in the chain and the slot it was listed under.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from typing import Any, TypeVar

from ..errors import JournalCorrupt
from ..values import SCOPE_SEP, Fact, scoped
from .base import Journal, Row, fact_id
from .codec import GENESIS, Event, check_row, index_fields, parse_body
from .indexdb import PostgresDb, SqliteDb

__all__ = ["AUDIT", "GLOBAL", "KNOWN_TABLES", "IndexedJournal", "PostgresDb", "SlotIndex",
           "SqliteDb", "body_entries", "entries", "slot_key"]

T = TypeVar("T")

GLOBAL = ""
"""The slot of the events that belong to no slot (configuration, rules, outcomes, ...):
a lazy open applies all of them."""
AUDIT = "$audit"
"""The slot of the audit entries, read when the audit log is (slots of facts always hold
the separator, so no slot of facts is named so)."""

TABLES = frozenset({"tk_index_slot", "tk_index_key", "tk_index_state2"})
"""The index's tables. The state table's name is the index's version: an index of an
earlier version (``tk_index_state``: sources bound across scopes) is not found, and is
rebuilt."""
_OLD_TABLES = frozenset({"tk_index_state"})
KNOWN_TABLES = TABLES | _OLD_TABLES
"""Every table an index (of this version or an earlier one) may have left in a journal."""
_CHUNK = 500  # parameters per IN (...) query
_MASK = (1 << 64) - 1


def slot_key(subject_key: str, attribute: str) -> str:
    """One slot as the index names it (keys never hold the separator: it is whitespace)."""
    return f"{subject_key}{SCOPE_SEP}{attribute}"


def entries(kind: str, body_text: str, lookup: Callable[[str], str | None],
            ) -> tuple[str, list[tuple[str, str]]]:
    """An event's slot and the keys it defines: ``i:<fact id>`` and ``n:<nonce>`` name a
    slot, ``s:<source>`` the tier of a source's first shared fact (``s:<scope><sep><source>``:
    of its first fact in that scope). A body that cannot be read
    belongs to no slot: a lazy open applies it at once and reports it as replay would."""
    try:
        body = json.loads(body_text)
    except ValueError:
        return GLOBAL, []
    return body_entries(kind, body, lookup)


def _by_named_id(rows: Iterable[tuple[Any, Any]]) -> dict[str, list[tuple[int, str]]]:
    """Retractions' and ends' ``(seq, body)`` rows by the fact id each names."""
    out: dict[str, list[tuple[int, str]]] = {}
    for seq, body in rows:
        with suppress(ValueError, AttributeError):
            if isinstance(fid := json.loads(body).get("id"), str):
                out.setdefault(fid, []).append((int(seq), str(body)))
    return out


def body_entries(kind: str, body: Any, lookup: Callable[[str], str | None],
                 ) -> tuple[str, list[tuple[str, str]]]:
    """:func:`entries` of a parsed body."""
    try:
        if kind == "fact":
            slot = slot_key(scoped(body.get("scope"), body["subject"]), body["attribute"])
            keys = [("i:" + body["id"], slot),
                    ("s:" + scoped(body.get("scope"), body["source"]), body["tier"])]
        elif kind in ("retract", "end"):
            found = lookup("i:" + body["id"])
            if found is None:
                return GLOBAL, []
            slot, keys = found, []
        else:
            return (AUDIT if kind == "audit" else GLOBAL), []
        sig = body.get("signature")
        if isinstance(sig, dict) and isinstance(sig.get("nonce"), str):
            keys.append(("n:" + sig["nonce"], slot))
        if "\x00" in "".join([x for kv in keys for x in kv]):  # TypeError: not all text
            return GLOBAL, []  # (a key with NUL cannot be stored in PostgreSQL: applied at open)
        return slot, keys
    except (ValueError, KeyError, TypeError, AttributeError):
        return GLOBAL, []


def _keyed_hash() -> Callable[[str], int]:
    """A 64-bit hash of text under a random key no one outside this process knows (for
    :meth:`SlotIndex.matches`): the interpreter's own string hash when its key is random
    (SipHash, keyed from ``os.urandom`` at the process's start; the background check runs
    in a process of its own), else (``PYTHONHASHSEED`` set) BLAKE2b under a key drawn now,
    about five times as slow (0.45 s more for a check of 100,000 events)."""
    if sys.flags.hash_randomization:
        return hash
    keyed = hashlib.blake2b(key=os.urandom(16), digest_size=8)  # copied: keyed once

    def h(text: str) -> int:
        d = keyed.copy()
        d.update(text.encode("utf-8", "surrogatepass"))
        return int.from_bytes(d.digest(), "little")
    return h


class SlotIndex:
    """The index tables of one journal connection (``SqliteDb`` or ``PostgresDb``)."""

    def __init__(self, db: SqliteDb | PostgresDb, *, known: bool = False) -> None:
        self.db = db
        self.known = known
        """The tables are known to exist (a rebuild drops and creates them in one
        transaction, so once they exist they always do): no query to ask."""

    def create(self) -> None:
        for statement in self.db.schema.split(";"):  # not executescript: it would commit
            if statement.strip():
                self.db.rows(statement)

    def exists(self) -> bool:
        return self.known or self.db.has_table("tk_index_state2")

    def state(self) -> tuple[int, str] | None:
        """(seq, hash) of the last event the index covers, or None."""
        if not self.exists():
            return None
        rows = self.db.rows("SELECT seq, hash FROM tk_index_state2")
        return None if not rows else (int(rows[0][0]), str(rows[0][1]))

    def position(self) -> tuple[tuple[int, str] | None, int, bool]:
        """In one query: the index's (seq, hash) (None: no index), the chain's last seq, and
        whether the index's position is an event of the chain (:meth:`matches_chain`)."""
        if not self.exists():
            return None, int(self.db.rows("SELECT coalesce(max(seq), 0) FROM events")[0][0]), \
                False
        rows = self.db.rows("SELECT s.seq, s.hash, (SELECT coalesce(max(seq), 0) FROM events), "
                            "(SELECT e.hash FROM events e WHERE e.seq = s.seq) "
                            "FROM tk_index_state2 s")
        if not rows:
            tail = self.db.rows("SELECT coalesce(max(seq), 0) FROM events")[0][0]
            return None, int(tail), False
        seq, h, tail, at = int(rows[0][0]), str(rows[0][1]), int(rows[0][2]), rows[0][3]
        return (seq, h), tail, (h == GENESIS if seq == 0 else at == h)

    def matches_chain(self) -> bool:
        """Whether the index's position is an event of the chain (else it is rebuilt)."""
        return self.position()[2]

    def lookup(self, key: str) -> str | None:
        if "\x00" in key:
            return None  # never indexed (see body_entries)
        rows = self.db.rows("SELECT slot FROM tk_index_key WHERE key = ?", (key,))
        return None if not rows else str(rows[0][0])

    def lookup_many(self, keys: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        keys = [k for k in dict.fromkeys(keys) if "\x00" not in k]
        for i in range(0, len(keys), _CHUNK):
            part = keys[i:i + _CHUNK]
            out.update(self.db.rows(
                f"SELECT key, slot FROM tk_index_key WHERE key IN ({','.join('?' * len(part))})",
                part))
        return out

    def fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        """``{fact id: (seq, body text)}`` of the fact events with these ids, read through
        the index: each id's slot, then that slot's fact events (an id the index does not
        list is not in the answer)."""
        slots = sorted(set(self.lookup_many("i:" + i for i in ids).values()))
        out: dict[str, tuple[int, str]] = {}
        for seq, body in self._slot_rows(slots, "fact"):
            fid = fact_id(body, seq)
            if fid in ids:
                out[fid] = (seq, body)
        return out

    def _slot_rows(self, slots: Sequence[str], kind: str) -> list[tuple[int, str]]:
        """``[(seq, body text)]`` of the events of one kind listed under these slots, in
        journal order."""
        found: list[tuple[int, str]] = []
        for i in range(0, len(slots), _CHUNK):
            part = list(slots[i:i + _CHUNK])
            found.extend((int(seq), str(body)) for seq, body in self.db.rows(
                "SELECT e.seq, e.body FROM tk_index_slot s JOIN events e ON e.seq = s.seq "
                f"WHERE s.slot IN ({','.join('?' * len(part))}) AND e.kind = ?",
                [*part, kind]))
        return sorted(found)

    def kind_rows(self, kind: str) -> list[tuple[int, str]]:
        """``[(seq, body text)]`` of every event of a kind that belongs to no slot (the
        audit entries, rules, outcomes), through the index."""
        return self._slot_rows([AUDIT if kind == "audit" else GLOBAL], kind)

    def slots_with_prefix(self, prefix: str) -> list[str]:
        """The distinct slots whose name starts with ``prefix`` (``""``: every slot): a
        range scan of the primary key, up to the prefix's successor (slots compare by code
        point, as UTF-8 bytes do)."""
        if not prefix:
            return [str(r[0]) for r in self.db.rows("SELECT DISTINCT slot FROM tk_index_slot",
                                                    ())]
        if "\x00" in prefix:
            return []
        if ord(prefix[-1]) == 0x10FFFF:  # no successor: the range is cut one character
            return [s for s in self.slots_with_prefix(prefix[:-1]) if s.startswith(prefix)]
        high = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return [str(r[0]) for r in self.db.rows(
            "SELECT DISTINCT slot FROM tk_index_slot WHERE slot >= ? AND slot < ?",
            (prefix, high))]

    def fact_count(self, upto: int, scope: str | None) -> int | None:
        """How many facts up to event ``upto`` a view of ``scope`` sees (the shared layer's
        and the scope's), counted on the index's id keys without reading a slot; None when
        the index does not reach ``upto``. Run in one read snapshot: the facts another
        writer appended after ``upto`` are taken off again, and those listed under no slot
        (a key the index cannot hold) are read one by one."""
        st = self.state()
        if st is None or st[0] < upto:
            return None
        find, sep = self.db.find, SCOPE_SEP
        layer = f"({find}(slot, ?) > 0 AND {find}(substr(slot, {find}(slot, ?) + 1), ?) = 0)"
        args: list[Any] = [sep, sep, sep]
        if scope is not None:  # the scope, the separator, then a slot of the shared form
            prefix = scope + sep
            layer = f"({layer} OR (substr(slot, 1, ?) = ? AND {find}(substr(slot, ?), ?) > 0))"
            args += [len(prefix), prefix, len(prefix) + 1, sep]
        n = int(self.db.rows("SELECT count(*) FROM tk_index_key WHERE key >= 'i:' AND "
                             f"key < 'i;' AND {layer}", args)[0][0])

        def seen(body: str, seq: int) -> bool:
            b = parse_body(body, seq)
            return isinstance(b, dict) and b.get("scope") in (None, scope)

        n += sum(seen(body, seq) for seq, body in self._slot_rows([GLOBAL], "fact")
                 if seq <= upto)
        for seq, body in self.db.rows("SELECT seq, body FROM events WHERE seq > ? AND "
                                      "seq <= ? AND kind = 'fact'", (upto, st[0])):
            if entries("fact", str(body), self.lookup)[0] != GLOBAL and seen(str(body), seq):
                n -= 1  # another writer's, since: counted above
        return n

    def erased(self, seq: int, new_body: str,
               naming: dict[str, dict[str, list[tuple[int, str]]]] | None = None) -> None:
        """A fact event's body became its erased placeholder: the event moves to the
        placeholder's slot, its id's key follows, and the keys only the erased content
        defined (its signature's nonce) go, so the index stays what the chain says.
        ``naming``: per slot, its retractions and ends by the id they name, kept across
        the erasures of one transaction (a slot is read once, not once per fact erased)."""
        rows = self.db.rows("SELECT body FROM events WHERE seq = ?", (seq,))
        if not rows or not self.exists():
            return
        was, old = entries("fact", str(rows[0][0]), self.lookup)
        now, new = entries("fact", new_body, self.lookup)
        if now != was:  # the fact's event, and the retractions and ends naming it
            naming = {} if naming is None else naming
            if was not in naming:
                naming[was] = _by_named_id(self.db.rows(
                    "SELECT e.seq, e.body FROM tk_index_slot x JOIN events e ON e.seq = "
                    "x.seq WHERE x.slot = ? AND e.kind IN ('retract', 'end')", (was,)))
            fid = json.loads(new_body).get("id")
            naming_it = naming[was].pop(fid, []) if isinstance(fid, str) else []
            for s in [seq] + [s for s, _ in naming_it]:  # by the key: not a scan of the index
                self.db.rows("DELETE FROM tk_index_slot WHERE slot = ? AND seq = ?", (was, s))
                self.db.rows("INSERT INTO tk_index_slot(slot, seq) VALUES (?, ?) "
                             "ON CONFLICT DO NOTHING", (now, s))
            for _, b in naming_it:  # a signed one's nonce names the slot it moved to (made
                for k, _ in entries("retract", b, lambda _k: now)[1]:  # if its slot held NUL)
                    self.db.rows("INSERT INTO tk_index_key(key, slot) VALUES (?, ?) ON "
                                 "CONFLICT (key) DO UPDATE SET slot = excluded.slot", (k, now))
        for k, v in new:  # a fact whose slot held NUL had no keys (its event was applied
            if not old:   # at open; its placeholder's is not): made as a rebuild makes them
                self.db.rows("INSERT INTO tk_index_key VALUES (?,?) ON CONFLICT DO NOTHING", (k, v))
            elif k.startswith("i:"):
                self.db.rows("UPDATE tk_index_key SET slot = ? WHERE key = ?", (v, k))
        gone = sorted({k for k, _ in old} - {k for k, _ in new})
        for i in range(0, len(gone), _CHUNK):
            part = gone[i:i + _CHUNK]
            self.db.rows(f"DELETE FROM tk_index_key WHERE key IN ({','.join('?' * len(part))})",
                         part)

    def add(self, rows: Sequence[tuple[int, str, int, str, str, str]],
            facts: Mapping[int, Fact] | None = None) -> None:
        """Index rows just appended, in their transaction, when the index covers every
        event before them (else it stays behind and is caught up when next needed)."""
        st = self.state() if rows else None
        if st is None or st[0] != rows[0][0] - 1:
            return
        self._index(rows, facts)

    def entries_for(self, rows: Iterable[tuple[int, str, int, str, str, str]],
                    facts: Mapping[int, Fact] | None = None,
                    ) -> tuple[list[tuple[str, int]], list[tuple[str, str]],
                               tuple[int, str] | None]:
        """What indexing ``rows`` writes: (slot, seq) per row, the new (key, slot) entries,
        and the index's new position (None for no rows). ``facts``: by seq, the Facts
        that fact events' texts were written from, read instead of the text."""
        pending: dict[str, str] = {}

        def lookup(key: str) -> str | None:
            return pending.get(key) or self.lookup(key)

        slots, last = [], None
        given = facts or {}
        for seq, kind, _ra, body, _p, h in rows:
            known = given.get(seq)
            slot, keys = entries(kind, body, lookup) if known is None else \
                body_entries(kind, index_fields(known), lookup)
            slots.append((slot, seq))
            for k, v in keys:
                pending.setdefault(k, v)
            last = (seq, h)
        return slots, list(pending.items()), last

    def _index(self, rows: Iterable[tuple[int, str, int, str, str, str]],
               facts: Mapping[int, Fact] | None = None) -> None:
        slots, keys, last = self.entries_for(rows, facts)
        self.db.many("INSERT INTO tk_index_slot(slot, seq) VALUES (?, ?) "
                     "ON CONFLICT DO NOTHING", slots)
        self.db.many("INSERT INTO tk_index_key(key, slot) VALUES (?, ?) ON CONFLICT DO NOTHING",
                     keys)
        if last is not None:
            self.db.rows("INSERT INTO tk_index_state2(one, seq, hash) VALUES (1, ?, ?) "
                         "ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, "
                         "hash = excluded.hash", last)

    def rebuild(self, rows: Iterator[tuple[int, str, int, str, str, str]]) -> None:
        """Index every event anew (rows read from the chain, checked by the caller)."""
        for table in sorted(TABLES | _OLD_TABLES):
            self.db.rows(f"DROP TABLE IF EXISTS {table}")
        self.create()
        self.db.rows("INSERT INTO tk_index_state2(one, seq, hash) VALUES (1, 0, ?)",
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

    def matches(self, rows: Iterator[Row], stop: threading.Event | None = None) -> bool | None:
        """Whether the index holds exactly the rows these events (the whole chain, in order)
        give it. Both sides are summed as multisets under a hash whose key is drawn at
        random (:func:`_keyed_hash`: a forger cannot aim at it), a page of events at a
        time: memory stays bounded whatever the journal's size. A retraction's slot is
        read from the index's own id rows, which the key sum checks in turn. None when
        ``stop`` is set first."""
        h = _keyed_hash()
        want, sources = [0, 0, 0, 0], {}  # slot sum, slot rows, key sum, key rows
        page: list[Row] = []
        for row in itertools.chain(rows, [None]):
            if row is not None:
                page.append(row)
                if len(page) < 5_000:
                    continue
            if stop is not None and stop.is_set():
                return None
            slot_sum = key_sum = n_keys = 0
            for slot, seq, keys in self._page_entries(page):
                slot_sum += h(f"{slot}\x00{seq}")
                for k, v in keys:
                    if k[:2] == "s:":
                        if k in sources:
                            continue
                        sources[k] = v
                    key_sum += h(f"{k}\x00{v}")
                    n_keys += 1
            want = [(want[0] + slot_sum) & _MASK, want[1] + len(page),
                    (want[2] + key_sum) & _MASK, want[3] + n_keys]
            page = []
        got = [0, 0, 0, 0]
        for slot, seq in self.db.stream("SELECT slot, seq FROM tk_index_slot"):
            got[0] += h(f"{slot}\x00{int(seq)}")
            got[1] += 1
        for key, slot in self.db.stream("SELECT key, slot FROM tk_index_key"):
            got[2] += h(f"{key}\x00{slot}")
            got[3] += 1
        got[0] &= _MASK
        got[2] &= _MASK
        return got == want

    def _page_entries(self, page: list[Row]) -> Iterator[tuple[str, int, list[tuple[str, str]]]]:
        """(slot, seq, keys) of each event of a page: the facts' own keys first, then the
        ids retractions and ends name from the page or the index."""
        parsed: list[tuple[int, str, Any, tuple[str, list[tuple[str, str]]] | None]] = []
        local: dict[str, str] = {}
        for seq, kind, _ra, text, _p, _h in page:
            try:
                body = json.loads(text)
            except ValueError:
                body = None
            made = None  # a fact's entries look nothing up: made once
            if kind == "fact" and body is not None:
                made = body_entries(kind, body, local.get)
                for k, v in made[1]:
                    local.setdefault(k, v)
            parsed.append((seq, kind, body, made))
        asked = [f"i:{b['id']}" for _, kind, b, _ in parsed if kind in ("retract", "end")
                 and isinstance(b, dict) and isinstance(b.get("id"), str)]
        found = self.lookup_many(k for k in asked if k not in local)

        def lookup(k: str) -> str | None:
            return local.get(k) or found.get(k)

        for seq, kind, body, made in parsed:
            slot, keys = made or ((GLOBAL, []) if body is None else
                                  body_entries(kind, body, lookup))
            yield slot, seq, keys

    def events(self, slots: Sequence[str], upto: int) -> list[tuple[str, Event]]:
        """The events of these slots up to ``upto``, in journal order, each checked: its
        hash, its links to the events before and after it, and its slot."""
        found: list[tuple[Any, ...]] = []
        slots = [s for s in slots if "\x00" not in s]  # never indexed (see body_entries)
        for i in range(0, len(slots), _CHUNK):
            part = list(slots[i:i + _CHUNK])
            found.extend(self.db.rows(
                "SELECT e.seq, e.kind, e.recorded_at, e.body, e.prev_hash, e.hash, s.slot, "
                "p.hash, n.prev_hash FROM tk_index_slot s JOIN events e ON e.seq = s.seq "
                "LEFT JOIN events p ON p.seq = e.seq - 1 "
                "LEFT JOIN events n ON n.seq = e.seq + 1 "
                f"WHERE s.slot IN ({','.join('?' * len(part))}) AND s.seq <= ?",
                [*part, upto]))
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


class IndexedJournal(Journal):
    """A journal that keeps a slot index beside its events, in the same transactions (the
    SQLite and PostgreSQL journals): what a lazy open reads through. A backend provides
    ``_index_read(fn)`` (run ``fn`` on its :class:`SlotIndex`, its errors as
    JournalError) and ``_index_write(fn)`` (the same inside a write transaction, or the one
    already open)."""

    indexed = True
    _indexed: bool | None = None

    def _index_read(self, fn: Callable[[SlotIndex], T]) -> T:
        raise NotImplementedError

    def _index_write(self, fn: Callable[[SlotIndex], T]) -> T:
        raise NotImplementedError

    def _slot_index(self, db: SqliteDb | PostgresDb) -> SlotIndex:
        """The index tables through ``db``, known to exist once this journal has seen them."""
        return SlotIndex(db, known=self._indexed is True)

    def _index_new_rows(self, idx: SlotIndex, rows: list[Row],
                        facts: Mapping[int, Fact] | None = None) -> None:
        """Index rows just inserted, in their transaction (when the index exists)."""
        if not self._indexed:
            self._indexed = idx.exists() or None  # another process may create it later
        if self._indexed:
            idx.add(rows, facts)

    def _rebuild(self, idx: SlotIndex) -> None:
        idx.rebuild(self._rows_checked(0, GENESIS))

    def index_sync(self) -> bool:
        """Bring the slot index up to the chain's tail: rebuilt from the (checked) events
        when its position is not an event of the chain, extended when it is behind. False
        when it cannot be (a read-only journal whose index is not current)."""
        def current(idx: SlotIndex) -> bool:
            st, tail, on_chain = idx.position()
            return st is not None and st[0] == tail and on_chain

        def update(idx: SlotIndex) -> None:
            if not idx.matches_chain():
                self._rebuild(idx)
            else:
                seq, h = idx.state() or (0, GENESIS)
                idx.extend(self._rows_checked(seq, h))

        if self._index_read(current):
            self._indexed = True
            return True
        if self.readonly:
            return False
        self._index_write(update)
        self._indexed = True
        return True

    def slot_events(self, slots: list[str], upto: int) -> list[tuple[str, Event]]:
        """The checked events of these slots up to ``upto`` (JournalCorrupt when one
        breaks the chain); an index that lists an event under another slot is rebuilt."""
        try:
            try:
                return self._index_read(lambda idx: idx.events(slots, upto))
            except StaleIndex:
                if self.readonly:
                    msg = f"the slot index of read-only journal {self.path!r} is damaged"
                    raise JournalCorrupt(msg) from None
                self._index_write(self._rebuild)
                return self._index_read(lambda idx: idx.events(slots, upto))
        except StaleIndex:
            msg = f"the slot index of journal {self.path!r} cannot be rebuilt"
            raise JournalCorrupt(msg) from None

    def fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        """Through the slot index when it is current (an erasure's cost follows the
        erased slots, not the journal); an id it does not find is looked for by a scan, so
        a damaged index never leaves a fact unerased."""
        if not self.index_sync():
            return self._scan_fact_rows(ids)
        out = self._index_read(lambda idx: idx.fact_rows(ids))
        missing = ids - out.keys()
        return out | (self._scan_fact_rows(missing) if missing else {})

    def kind_rows(self, kind: str) -> list[tuple[int, str]]:
        """Through the slot index when it is current (it lists every event that belongs
        to no slot under one name, and the audit entries under another)."""
        if kind == "fact" or not self.index_sync():
            return super().kind_rows(kind)
        return self._index_read(lambda idx: idx.kind_rows(kind))

    def index_lookup(self, keys: list[str]) -> dict[str, str]:
        """The slots (or a source's tier) the index holds for these keys."""
        return self._index_read(lambda idx: idx.lookup_many(keys))

    def index_slots(self, prefix: str) -> list[str]:
        """The slots the index lists whose name starts with ``prefix``."""
        return self._index_read(lambda idx: idx.slots_with_prefix(prefix))

    def index_fact_count(self, upto: int, scope: str | None) -> int | None:
        with self.snapshot():
            return self._index_read(lambda idx: idx.fact_count(upto, scope))

    def _index_check(self, idx: SlotIndex, stop: threading.Event | None = None) -> bool | None:
        if not idx.exists():
            return None
        ok = idx.matches(self._rows_checked(0, GENESIS), stop)
        if ok is None:
            return None
        st, tail, on_chain = idx.position()
        return ok and on_chain and st is not None and st[0] == tail

    def snapshot(self) -> AbstractContextManager[object]:
        """One read transaction: everything read in it sees the same commits."""
        raise NotImplementedError

    def index_matches(self, stop: threading.Event | None = None) -> bool | None:
        with self.snapshot():
            return self._index_read(lambda idx: self._index_check(idx, stop))

    def index_problem(self) -> str | None:
        """Compare the whole slot index with the chain (in one read snapshot: other
        writers may be committing); one that differs is rebuilt."""
        ok = self.index_matches()
        if ok is None or ok:
            return None
        if not self.readonly:
            self._index_write(self._rebuild)
        return ("the slot index did not match the chain: it was rebuilt from the events; "
                "reopen memories that were opened lazily")

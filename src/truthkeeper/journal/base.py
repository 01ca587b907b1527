"""What every journal backend shares: the chain, checked reads, verification, appends.

A backend stores rows ``(seq, kind, recorded_at, body_text, prev_hash, hash)`` and provides
``_select(after_seq)``, ``_insert(rows)``, ``tail()`` and a ``transaction()`` that yields a
:class:`Txn`; the chain is computed and checked here only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import JournalCorrupt
from ..results import Verification
from .codec import (
    ERASED_PREFIX,
    GENESIS,
    Event,
    NewEvent,
    check_row,
    event_hash,
    event_text,
    parse_body,
    row_event,
)

if TYPE_CHECKING:
    from ..values import Fact

__all__ = ["FORMAT", "READABLE", "Journal", "Txn", "format_refusal"]

Row = tuple[int, str, int, str, str, str]
FORMAT = 3
"""The journal's format (SQLite's ``user_version``, PostgreSQL's table comment). Format 2
chains content hashes, so that erasure keeps the chain; format 3 chains them the same way
and adds the event kinds ``end`` (a fact stopped being true) and ``declare`` (an
attribute's cardinality and value type), which an earlier truthkeeper cannot read."""
READABLE = (2, 3)
"""The formats this version opens. A format 2 journal opened for writing is marked format 3
(its events are unchanged: format 3 only adds kinds), so an earlier truthkeeper refuses it
from then on instead of misreading its new events."""

_ID = '"id":"'
_APPEND_PART = 4096
"""Events chained and handed to the backend at a time by :meth:`Txn.append_many`."""


def fact_id(body: str, seq: int) -> str | None:
    """The id of a fact event's body text (None for an erased placeholder): read off the
    canonical text, where ``"id"`` is the first key after ``attribute`` (a plain string),
    and parsed only when the id holds an escape."""
    if body.startswith(ERASED_PREFIX):
        return None
    i = body.find(_ID)
    if i < 0:
        return None
    j = body.find('"', i + len(_ID))
    fid = body[i + len(_ID):j]
    if "\\" in fid:
        found = parse_body(body, seq).get("id")
        return found if isinstance(found, str) else None
    return fid


def format_refusal(where: str | None, version: int) -> str:
    """Why a journal of another format is refused, and what to do."""
    if version < min(READABLE):
        return (f"journal {where!r} has format {version}, written by an earlier truthkeeper; "
                f"this one reads format {FORMAT}: export it to JSON Lines with the earlier "
                "version and import it into a new journal")
    return (f"journal {where!r} has format {version}, written by a later truthkeeper; this "
            f"one reads format {FORMAT}: open it with that version")


class Journal:
    """The journal interface; :class:`~.sqlite.SqliteJournal` and
    :class:`~.memory.MemoryJournal` implement it and a Memory does not know which it has."""

    path: str | None = None
    readonly = False
    durable = True
    indexed = False
    """Whether the backend keeps a slot index (SQLite, PostgreSQL), so a memory can open lazily."""
    fast = False
    """Whether the journal has :meth:`append_facts` (PostgreSQL, writable): a write of plain
    facts chained in the database, decided without reading the tail under the lock."""

    def version(self) -> object:
        """A token that changes when another connection commits (SQLite's data_version,
        PostgreSQL's last seq; None for a journal only this process writes): compared
        before every answer, so each reflects every commit acknowledged before it."""
        return None

    def version_after_write(self, seq: int) -> object:
        """The version token right after this connection committed up to ``seq`` under the
        write lock, when the backend can tell without a query or a race (PostgreSQL: the
        seq itself); None: unknown (the next read compares as usual)."""
        return None

    def _select(self, after_seq: int) -> list[Row]:
        raise NotImplementedError

    def _select_iter(self, after_seq: int) -> Iterator[Row]:
        """The rows of :meth:`_select`, which a backend may stream (replay reads them once,
        in order, without holding the whole journal)."""
        yield from self._select(after_seq)

    def _insert(self, rows: list[Row], facts: Mapping[int, Fact] | None = None) -> None:
        """Append chained rows (in a transaction); the list is the journal's to empty.
        ``facts``: by seq, the Facts that fact events' texts were written from (the slot
        index reads them instead of parsing the text again)."""
        raise NotImplementedError

    def _update_body(self, seq: int, body: str, naming: dict[str, Any] | None = None) -> None:
        """Replace a fact event's body by its erased placeholder (same hash); ``naming``:
        the transaction's cache for the slot index (:meth:`.SlotIndex.erased`)."""
        raise NotImplementedError

    def _purge(self) -> None:
        """After an erasure committed: drop what the backend keeps of old row versions."""

    def fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        """``{fact id: (seq, body text)}`` of the fact events with these ids (an erased
        placeholder is not listed: its fact is erased already)."""
        return self._scan_fact_rows(ids)

    def _scan_fact_rows(self, ids: set[str]) -> dict[str, tuple[int, str]]:
        """:meth:`fact_rows` by reading every event (:func:`fact_id` of each fact)."""
        out: dict[str, tuple[int, str]] = {}
        for seq, kind, _ra, body, _p, _h in self._select_iter(0):
            fid = fact_id(body, seq) if kind == "fact" else None
            if fid in ids:
                out[fid] = (seq, body)
        return out

    def kind_rows(self, kind: str) -> list[tuple[int, str]]:
        """``[(seq, body text)]`` of every event of one kind (an erasure reads the audit
        entries this way: rare, so a scan)."""
        return [(seq, body) for seq, k, _ra, body, _p, _h in self._select_iter(0) if k == kind]

    def tail(self) -> tuple[int, str, int]:
        """(last seq, its hash, the largest recorded_at) or (0, GENESIS, 0)."""
        raise NotImplementedError

    def index_sync(self) -> bool:
        """Bring the slot index up to the tail; False when there is none (see ``indexed``)."""
        return False

    def slot_events(self, slots: list[str], upto: int) -> list[tuple[str, Event]]:
        """``(slot, event)`` of the events of these slots up to ``upto``, checked."""
        raise NotImplementedError

    def index_lookup(self, keys: list[str]) -> dict[str, str]:
        """What the slot index holds for these keys."""
        raise NotImplementedError

    def index_slots(self, prefix: str) -> list[str]:
        """The slots the index lists whose name starts with ``prefix``."""
        raise NotImplementedError

    def index_fact_count(self, upto: int, scope: str | None) -> int | None:
        """How many facts up to event ``upto`` a view of ``scope`` sees, counted on the slot
        index; None without one (or one that does not reach ``upto``)."""
        return None

    def index_problem(self) -> str | None:
        """Why the slot index does not match the chain (it is then rebuilt), or None."""
        return None

    def index_matches(self, stop: threading.Event | None = None) -> bool | None:
        """Whether the whole slot index matches the chain, read in one snapshot (None: no
        index, or ``stop`` was set before the end); changes nothing (a background check
        runs it on its own connection)."""
        return None

    def reader(self) -> Journal:
        """Another read-only connection to the same journal (for a check in the background)."""
        raise NotImplementedError

    def reader_spec(self) -> dict[str, Any] | None:
        """What another process needs to open :meth:`reader` (``journal.open_reader``);
        None for a journal no other process can open."""
        return None

    def close(self) -> None:
        """Release the backend."""

    def append_facts(self, clean: int, events: Sequence[NewEvent],
                     ) -> tuple[int, list[int], str] | None:
        """Where :attr:`fast`: append fact and audit events chained by the backend; the
        first seq, the recorded times and the last hash, or None (nothing appended) when an event of
        another kind came after ``clean``."""
        raise NotImplementedError

    def transaction(self, after: int | None = None) -> AbstractContextManager[Txn]:
        """One write transaction: everything appended in it is committed, or nothing.
        ``after``: the last event the writer has read; a backend may read the events
        after it as the transaction starts (PostgreSQL: with the lock, in one round
        trip)."""
        raise NotImplementedError

    def first(self) -> Event | None:
        """The first event (the configuration), unchecked; None for an empty journal."""
        row = self._first_row()
        return None if row is None else row_event(row)

    def _first_row(self) -> Row | None:
        """The row of event 1 (a backend reads it alone)."""
        return next(iter(self._select_iter(0)), None)

    def read(self, after_seq: int = 0) -> Iterator[Event]:
        """Events with seq > after_seq, in order (the chain is not checked)."""
        for row in self._select_iter(after_seq):
            yield row_event(row)

    def read_checked(self, after_seq: int, prev_hash: str) -> Iterator[Event]:
        """Like :meth:`read`, verifying the chain from ``prev_hash`` on."""
        for row in self._rows_checked(after_seq, prev_hash):
            yield row_event(row)

    def _rows_checked(self, after_seq: int, prev_hash: str) -> Iterator[Row]:
        expected, prev = after_seq + 1, prev_hash
        for row in self._select_iter(after_seq):
            seq, kind, ra, body, p, h = row
            problem = check_row(seq, kind, ra, body, p, h, expected, prev)
            if problem:
                msg = f"journal {self.path!r} is corrupt at event {seq}: {problem}"
                raise JournalCorrupt(msg)
            yield row
            prev, expected = h, seq + 1

    def verify(self, check: Callable[[Event], str | None]) -> Verification:
        """Walk the whole chain from the genesis; ``check`` judges each event's content
        (signatures). Reports the first bad event and the hash of the last good one."""
        prev, expected, n = GENESIS, 1, 0
        try:
            rows = self._select(0)
        except Exception as exc:  # noqa: BLE001 - report any read failure
            return Verification(False, 0, expected, f"cannot read: {exc}", prev)
        for seq, kind, ra, body, p, h in rows:
            problem = check_row(seq, kind, ra, body, p, h, expected, prev)
            if problem is None:
                try:
                    problem = check(Event(seq, kind, ra, parse_body(body, seq), p, h))
                except JournalCorrupt as exc:
                    problem = str(exc)
            if problem is not None:
                return Verification(False, n, seq, problem, prev)
            prev, expected, n = h, seq + 1, n + 1
        return Verification(True, n, None, None, prev)


class Txn:
    """One write transaction: chains events after the tail it started from."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._at: tuple[int, str, int] | None = None  # read from the journal when first asked
        self._naming: dict[str, Any] = {}  # the slot index's, while nothing is appended

    def _position(self) -> tuple[int, str, int]:
        if self._at is None:
            self._at = self.journal.tail()
        return self._at

    def at(self, seq: int, hash_: str, last_ra: int) -> None:
        """The tail is known (a ledger that caught up under the write's lock): no query."""
        self._at = (seq, hash_, last_ra)

    @property
    def seq(self) -> int:
        return self._position()[0]

    @property
    def hash(self) -> str:
        return self._position()[1]

    @property
    def last_ra(self) -> int:
        return self._position()[2]

    def erase(self, seq: int, body: str) -> None:
        """Replace a fact event's body by its placeholder; the chain still verifies."""
        self.journal._update_body(seq, body, self._naming)

    def append_many(self, events: Sequence[NewEvent]) -> None:
        """Chain and insert events in order (a body is a dict, or its canonical text; a
        fact event's fourth item, the Fact its text was written from, spares the slot index
        parsing the text)."""
        seq, prev, last_ra = self.seq, self.hash, self.last_ra
        for start in range(0, len(events), _APPEND_PART):  # a large batch is not held
            rows: list[Row] = []                         # twice, as events and as rows
            facts: dict[int, Fact] = {}
            for event in events[start:start + _APPEND_PART]:
                kind, recorded_at, text = event[0], event[1], event_text(event)
                seq += 1
                h = event_hash(prev, seq, kind, recorded_at, text)
                rows.append((seq, kind, recorded_at, text, prev, h))
                if len(event) > 3 and self.journal.indexed:  # (a memory's journal: no index)
                    facts[seq] = event[3]
                prev = h
                last_ra = max(last_ra, recorded_at)
            self._naming.clear()  # what the index holds changes
            self.journal._insert(rows, facts)  # may take the rows out of the list as it goes
        if events:
            self._at = (seq, prev, last_ra)

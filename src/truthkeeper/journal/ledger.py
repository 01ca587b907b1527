"""The write path: every write catches up with the journal, applies its change, appends
its events in one transaction, and takes the change back if the commit fails."""

from __future__ import annotations

import collections
import contextlib
import functools
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from ..errors import JournalCorrupt, PolicyError, TruthkeeperError
from .base import Journal, Txn
from .codec import GENESIS, Event, NewEvent, event_text

RUN = 5_000
"""Replay applies at most this many consecutive fact events at a time (one Prolog call
each), so a reopen never holds the whole journal as events, facts and one Prolog term."""

__all__ = ["AHEAD", "FastRefused", "Ledger", "Write", "now_us"]

AHEAD = 10_000
"""A memory that has written this many events past other writers' unread ones catches up
before its next such write (a process that only writes keeps no growing list)."""


class FastRefused(Exception):  # noqa: N818 - a signal to the caller, never an error to a user
    """A write of plain facts decided without the tail was refused by the journal (an event
    other than a fact or an audit entry came first; nothing was appended and the write's
    changes were taken back): write it again with ``fast=False``."""


def now_us() -> int:
    """The wall clock in microseconds since the epoch."""
    return time.time_ns() // 1000


class Write:
    """What one write needs: strictly increasing transaction times, the events to record
    and how to undo the change if the commit fails."""

    def __init__(self, ledger: Ledger, txn: Txn) -> None:
        self.ledger, self.txn = ledger, txn
        self.events: list[NewEvent] = []
        """The events to append: kind, transaction time and body (a dict, or its canonical
        text: a bulk write's fact bodies wait as text, a third of their size as dicts)."""
        self.undos: list[Callable[[], object]] = []
        self.retimers: list[Callable[[dict[int, int]], None]] = []

    def on_retime(self, fn: Callable[[dict[int, int]], None]) -> None:
        """Register how to move the change's transaction times where the journal put them
        (a write decided without the tail: a time at or before the tail's moves past it);
        ``fn`` gets {time given: time recorded}."""
        self.retimers.append(fn)

    def on_undo(self, fn: Callable[[], object]) -> None:
        """Register how to take back a change the body applied (run in reverse order)."""
        self.undos.append(fn)

    def times(self, n: int) -> list[int]:
        """``n`` transaction times after every time the journal holds."""
        base = max(self.ledger.last_ra, self.txn.last_ra)
        start = max(now_us(), base + 1)
        if n:
            self.ledger.last_ra = start + n - 1
        return [start + i for i in range(n)]

    @property
    def next_seq(self) -> int:
        """The position of the next event in the journal (rule ids use it)."""
        return int(self.txn.seq) + len(self.events) + 1


class Ledger:
    """A journal and how far this process has applied it.

    Parameters
    ----------
    journal
        The backend (in memory, SQLite).
    apply
        Applies a run of events to the live state; fact events come in runs.
    """

    def __init__(self, journal: Journal, apply: Callable[[list[Event]], None]) -> None:
        self.journal = journal
        self._apply = apply
        self.seq, self.hash, self.last_ra = 0, GENESIS, 0
        self.corruption: str | None = None
        self.lazy: Any = None
        """The memory's :class:`~truthkeeper.lazy.LazyLoad`, when it was opened lazily."""
        self.seen: object = None
        """The journal's version token when this memory last caught up."""
        self.ahead: set[int] = set()
        """The seqs of this memory's own fast writes past ``seq`` (applied when written;
        catching up passes over them)."""
        self.clean = 0
        """Every event up to here that this memory has not applied is another writer's fact
        or audit entry (a fast write's condition)."""
        self.passed = 0
        """How many of its own events catching up has passed over (``refresh`` counts the
        others')."""
        self.pending: collections.deque[tuple[str, Callable[[], list[dict[str, Any]]]]] = \
            collections.deque(maxlen=10_000)
        """Events journalled with the next write (audit entries), bounded; each is built
        only when it is written."""

    def defer(self, kind: str, bodies: Callable[[], list[dict[str, Any]]]) -> None:
        """Journal events with the next write (or ``flush``) of a durable journal; past
        10,000 waiting, the oldest are dropped."""
        if self.journal.durable and not self.journal.readonly:
            self.pending.append((kind, bodies))

    def erase_deferred(self, match: Callable[[Mapping[str, Any]], bool],
                       until: datetime | None = None) -> None:
        """The deferred audit entries whose details an erasure ``match``es (of those
        recorded up to ``until`` when given) go before any is journalled."""
        kept: collections.deque[tuple[str, Callable[[], list[dict[str, Any]]]]] = \
            collections.deque(maxlen=self.pending.maxlen)
        for kind, make in self.pending:
            if kind == "audit":
                bodies = [b for b in make() if (
                    until is not None and datetime.fromisoformat(b["at"]) > until)
                    or not match(b.get("details") or {})]
                if bodies:
                    kept.append((kind, functools.partial(list, bodies)))
            else:
                kept.append((kind, make))
        self.pending = kept

    def _with_deferred(self, w: Write,
                       ) -> tuple[int, list[NewEvent]]:
        """The write's events followed by the deferred ones (timed now), and how many
        deferred entries they take (popped once the write commits)."""
        taken = len(self.pending)
        deferred = [(k, b) for k, make in list(self.pending) for b in make()]
        times = w.times(len(deferred))
        return taken, w.events + [(k, t, b) for (k, b), t in zip(deferred, times, strict=True)]

    @contextlib.contextmanager
    def _fast_write(self) -> Iterator[Write]:
        txn = Txn(self.journal)
        txn.at(self.seq, self.hash, self.last_ra)
        w = Write(self, txn)
        try:
            yield w
            taken, all_events = self._with_deferred(w)
            events: list[NewEvent] = [
                (e[0], e[1], event_text(e), *e[3:])
                for e in all_events]
            if not events or any(e[0] not in ("fact", "audit") for e in events):
                raise FastRefused
            got = self.journal.append_facts(max(self.clean, self.seq), events)
            if got is None:
                raise FastRefused
        except BaseException:
            for undo in reversed(w.undos):
                undo()
            raise
        first, ras, last_hash = got
        for _ in range(taken):
            self.pending.popleft()
        sent = [e[1] for e in events]
        if ras != sent:  # committed: the change follows the times the journal recorded
            moved = dict(zip(sent, ras, strict=True))
            for fn in w.retimers:
                fn(moved)
        last = first + len(events) - 1
        self.last_ra = max(self.last_ra, ras[-1])
        self.clean = last
        if first == self.seq + 1:  # no other writer's event came between: caught up
            if self.lazy is not None:
                self.lazy.wrote(self.seq, last)
            self.seq, self.hash = last, last_hash
            seen = self.journal.version_after_write(last)
            if seen is not None:
                self.seen = seen
        else:  # the events between are other writers' facts: applied at the next read
            self.ahead.update(range(first, last + 1))
            self.seen = None

    def flush(self) -> None:
        """Journal the deferred events now."""
        if self.pending and not self.journal.readonly:
            with self.write():
                pass

    def every_event(self) -> list[Event]:
        """The journal's events, the deferred ones journalled first (an export holds them
        whenever it is made)."""
        self.flush()
        return list(self.journal.read())

    def start(self, config: dict[str, Any], lazy: Any = None) -> None:
        """Write the configuration event of a new journal, then replay the journal (or,
        with a :class:`~truthkeeper.lazy.LazyLoad`, only the events of no slot)."""
        if self.journal.tail()[0] == 0 and not self.journal.readonly:
            with self.journal.transaction() as txn:
                if txn.seq == 0:  # another process may have created it meanwhile
                    txn.append_many([("config", max(now_us(), txn.last_ra + 1), config)])
        self.seen = self.journal.version()
        self.lazy = lazy
        if lazy is not None:
            tail = lazy.open(self)
            if tail is not None:  # the events of no slot applied: the rest is read on demand
                self.seq, self.hash = tail[0], tail[1]
                self.last_ra = max(self.last_ra, tail[2])
                return
            lazy.done = True
        self.catch_up()

    def fresh(self) -> bool:
        """Whether no other connection committed since this memory last caught up."""
        return self.journal.version() == self.seen

    def poll(self) -> None:
        """Catch up with what other connections committed (the journal's version token
        changed); a no-op otherwise."""
        version = self.journal.version()
        if version != self.seen:
            self.catch_up()
            self.seen = version

    def catch_up(self) -> int:
        """Apply the events this process has not seen; returns how many."""
        before = self.seq
        run: list[Event] = []
        try:
            try:
                for ev in self.journal.read_checked(self.seq, self.hash):
                    if ev.seq in self.ahead:  # this memory's own, applied as it was written
                        self.apply_run(run)
                        run = []
                        self.ahead.discard(ev.seq)
                        self.passed += 1
                        self.seq, self.hash = ev.seq, ev.hash
                        self.last_ra = max(self.last_ra, ev.recorded_at)
                        continue
                    if run and (ev.kind != "fact" or run[-1].kind != "fact"
                                or len(run) >= RUN):
                        self.apply_run(run)
                        run = []
                    run.append(ev)
            finally:
                pending, run = run, []
                self.apply_run(pending)  # what was read so far verified
        except PolicyError:
            raise
        except TruthkeeperError as exc:
            if not isinstance(exc, JournalCorrupt):
                bad = run[0].seq if run else self.seq + 1
                exc = JournalCorrupt(f"journal {self.journal.path!r} is corrupt at event "
                                     f"{bad}: {exc}")
            if self.journal.readonly:
                self.corruption = str(exc)
                return self.seq - before
            raise exc from None
        return self.seq - before

    def apply_run(self, run: list[Event]) -> None:
        """Apply verified events in order and move this ledger's position past them."""
        if not run:
            return
        self._apply(run)
        self.seq, self.hash = run[-1].seq, run[-1].hash
        self.last_ra = max(self.last_ra, max(ev.recorded_at for ev in run))

    @contextlib.contextmanager
    def write(self, fast: bool = False) -> Iterator[Write]:
        """One write: catch up, let the body apply its change and list its events, append
        them in one transaction. If the body raises or the commit fails, nothing is appended,
        the changes the body registered with ``on_undo`` are taken back, and the error reaches
        the caller.

        ``fast`` (the caller's promise that the body adds plain facts whose adding commutes
        with any fact another writer appends: no link, no signature, ids drawn at random,
        sources bound already, a shipped policy): on a journal that chains appends itself
        (:attr:`Journal.fast`) the write is decided without catching up, and appended in one
        round trip that holds the writers' lock for no work here; FastRefused when an
        event of another kind came first (nothing appended, the change taken back)."""
        if self.lazy is not None:  # a lazily opened memory: its index checked once first
            self.lazy.before_write()
        if fast and self.journal.fast and self.corruption is None and not self.journal.readonly:
            if len(self.ahead) >= AHEAD:
                self.catch_up()
            with self._fast_write() as fw:
                yield fw
            return
        w: Write | None = None
        try:
            with self.journal.transaction(after=self.seq) as txn:
                self.catch_up()  # under the write's lock: up to the tail, checked
                if self.corruption is None:
                    txn.at(self.seq, self.hash, self.last_ra)
                caught_up = self.seq
                w = Write(self, txn)
                yield w
                taken, events = self._with_deferred(w)
                txn.append_many(events)
        except BaseException:
            for undo in reversed(w.undos if w is not None else []):
                undo()
            raise
        self.seq, self.hash = txn.seq, txn.hash
        if self.lazy is not None:
            self.lazy.wrote(caught_up, txn.seq)
        seen = self.journal.version_after_write(txn.seq)
        if seen is not None:
            self.seen = seen
        for _ in range(taken):
            self.pending.popleft()

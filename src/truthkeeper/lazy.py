"""Opening a memory lazily (``Memory(path, lazy=True)``): the events that belong to no slot
are applied at open, each slot's events when the slot is first touched, the audit entries
when the audit log is first read.

Supersession, conflicts, ``current``, ``history`` and ``as_of`` are decided within a slot,
so a slot's answer needs only its own events. What ranges over every slot (rules and
beliefs, ``conflicts``, ``reliability``, learning from agreement, the graph, imports)
loads every slot first (``slots`` lists, and ``len`` counts, on the index): every query
answers as after a full replay. The slot index
(:mod:`.journal.slotindex`) says which events a slot has; whatever it lists is checked
against the chain before it is applied.

What a lazily opened memory trusts: until the index was compared with the whole chain, that
it lists every event of a slot it reads (a row deleted from the index is not seen by a read;
a row moved to another slot, or an edited event, is). That comparison runs on its own
read-only connection in a background process right after the open (``index_check=
"background"``, the default), and in any case before the first write, so no write is ever
decided on an unverified row. A mismatch rebuilds the index, and the memory's next call (a
read or the write) raises JournalCorrupt, as does every later one (it may have answered
from the forged rows): reopen it. ``index_check="before-write"`` runs no check: reads trust
the index until the first write or ``verify()``.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from .errors import JournalCorrupt, TruthkeeperError
from .journal.base import Journal
from .journal.codec import ERASED_ATTRIBUTE, GENESIS, Event
from .journal.slotindex import AUDIT, GLOBAL, body_entries
from .values import SCOPE_SEP, unscoped

if TYPE_CHECKING:
    from .audit import AuditLog
    from .journal.ledger import Ledger
    from .logic.store import Store

__all__ = ["HELD_SLOTS", "INDEX_CHECKS", "IndexCheck", "LazyLoad"]

HELD_SLOTS = 2_048
"""How many slots a lazily opened memory keeps read in: past that, before its next call,
the least recently asked about are taken out of the store (read from the journal again
when next asked), so its memory does not grow with what it has read."""

INDEX_CHECKS = ("background", "before-write")
"""When a lazily opened memory compares its slot index with the whole chain."""

_ERASED_SLOT = SCOPE_SEP + ERASED_ATTRIBUTE
"""How the name of an erased fact's placeholder slot ends."""

_FORGED = ("the slot index of journal {!r} did not match its chain (it was rebuilt); this "
           "lazily opened memory may have answered from it, so it refuses to go on: reopen it")



_CHECK = """
import importlib.util, sys, types
# the journal's modules alone: the package's own imports (numpy, the reliability layer)
# would triple the child's start
spec = importlib.util.find_spec("truthkeeper")
package = types.ModuleType("truthkeeper")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["truthkeeper"] = package
from truthkeeper.journal.indexcheck import main
main()
"""
"""The background index check's process (``python -m truthkeeper.journal.indexcheck`` does
the same with the whole package imported)."""


class IndexCheck:
    """The comparison of a journal's whole slot index with its chain, in another process
    (its own read-only connection: :mod:`.journal.indexcheck`). A thread of the memory's
    process did it before: the reads it overlapped waited on the interpreter (p99 of a
    read 3-10 ms at 100,000 facts)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.thread: threading.Thread | None = None

    def start(self, spec: dict[str, Any], report: Callable[[object, object], None]) -> None:
        """Start it on the journal ``spec`` names; ``report(result, message)`` gets its
        answer (not called when it is stopped, or could not check)."""
        try:
            # the child finds this package where this process found it (sys.path may have
            # been extended at run time, which the environment does not say)
            here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                [here, *filter(None, [os.environ.get("PYTHONPATH")])])}
            proc = subprocess.Popen([sys.executable, "-c", _CHECK], env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return  # no check now: the first write compares
        self.proc = proc
        self.thread = threading.Thread(target=self._wait, args=(proc, json.dumps(spec), report),
                                       daemon=True, name="truthkeeper-index")
        self.thread.start()

    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def wait(self) -> None:
        """Wait for its answer, if it runs (reported before this returns)."""
        if self.thread is not None:
            self.thread.join()

    def stop(self) -> None:
        """Stop it, if it runs, and wait for its connection to close."""
        if self.thread is not None:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
            self.thread.join()
            self.thread = self.proc = None

    @staticmethod
    def _wait(proc: subprocess.Popen[str], spec: str,
              report: Callable[[object, object], None]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        try:  # stdin stays open while the answer is awaited: the child ends with it
            proc.stdin.write(spec + "\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            return  # killed, or could not check: the first write compares
        finally:
            for pipe in (proc.stdin, proc.stdout):
                with suppress(OSError):
                    pipe.close()
            proc.wait()
        report(answer.get("result"), answer.get("message"))


class LazyLoad:
    """Which slots a lazily opened memory holds, and how it brings in the others."""

    def __init__(self, journal: Journal, store: Store,
                 replay: Callable[..., None], audit: AuditLog) -> None:
        self.journal, self.store, self.replay, self.audit = journal, store, replay, audit
        self.ledger: Ledger | None = None
        self.loaded: set[str] = set()
        self.recent: collections.OrderedDict[str, None] = collections.OrderedDict()
        """The loaded slots that may be taken out again, least recently asked about first."""
        self.bound: set[str] = set()
        self.done = False
        """Every slot is in the store: the memory behaves as after a full replay."""
        self.busy = 0
        self.verified = False
        """The whole index was compared with the chain (before the first write)."""
        self.broken: str | None = None
        self.check = IndexCheck()
        self.erasures = False
        """The journal holds an erasure: a slot's supersedes links may reach another slot."""
        self.forged: str | None = None
        """Set by the background check: why the index did not match (the next call raises)."""
        self._upto: int | None = None
        self._pending: set[int] = set()
        """While a run of later events is applied: their positions (a slot loaded meanwhile
        takes them from the run, not twice)."""
        self._synced = -1
        self.partial: dict[str, int] | None = None
        """While opening: the position each slot loaded so far was loaded up to."""

    # ------------------------------------------------------------------ open

    def open(self, ledger: Ledger) -> tuple[int, str, int] | None:
        """Apply the events of no slot (rules, erasures, outcomes, keys: each reads the
        slots it names) and return the journal's tail ``(seq, hash, last recorded_at)``,
        where the ledger stands from now on; None (nothing applied) when the journal must be
        replayed in full because its index cannot be updated or one of those events is
        damaged (a full replay refuses it, or reads a read-only journal up to it)."""
        self.ledger = ledger
        if not self.journal.index_sync():
            return None
        seq, h, last_ra = self.journal.tail()
        try:
            events = [ev for _, ev in self.journal.slot_events([GLOBAL], seq)]
        except JournalCorrupt:  # replayed in full: refused there, or read up to the damage
            return None
        self.erasures = any(ev.kind == "erase" for ev in events)
        self._synced, self.partial = seq, {}
        try:
            for ev in events:  # a slot an event needs is loaded up to that event
                self._upto = ev.seq
                ledger.apply_run([ev])
            self._upto = seq  # then brought up to the tail
            self._load(list(self.partial))
        finally:
            self._upto, self.partial = None, None
        return seq, h, last_ra

    def check_in_background(self) -> None:
        """Compare the whole index with the chain in another process (:class:`IndexCheck`);
        a mismatch (or a damaged chain) makes the memory's next call raise."""
        spec = self.journal.reader_spec()
        if spec is not None:
            self.check.start(spec, self._checked)

    def stop_check(self) -> None:
        """Stop the background check, if it runs, and wait for its connection to close
        (closing the memory; an erasure, whose log truncation a reader would block). An
        unfinished check leaves the comparison to the first write."""
        self.check.stop()

    def _checked(self, result: object, message: object) -> None:
        if result == "corrupt":
            self.forged = f"journal {self.journal.path!r}: {message}"
        elif result == "differ":
            self.forged = _FORGED.format(self.journal.path)
        elif result == "match":
            self.verified = True

    def raise_if_broken(self) -> None:
        """Raise JournalCorrupt when this memory may have answered from a damaged index or
        chain (found by the background check: the index is then rebuilt here, once)."""
        if self.forged is not None and self.broken is None:
            if not self.journal.readonly:
                with suppress(TruthkeeperError):
                    self.journal.index_problem()  # rebuilds an index that differs
            self.broken = self.forged
        if self.broken is not None:
            raise JournalCorrupt(self.broken)

    def before_write(self) -> None:
        """Compare the whole index with the chain once, before the first write (a write
        must not be decided on a row a forger edited): JournalCorrupt when they differ. A
        background check under way is waited for, not run a second time beside it."""
        if not (self.done or self.verified or self.journal.readonly):
            self.check.wait()
        self.raise_if_broken()
        if self.done or self.verified or self.journal.readonly:
            return
        problem = self.journal.index_problem()  # rebuilds an index that differs
        self.verified = True
        if problem is not None:
            self.broken = _FORGED.format(self.journal.path)
            raise JournalCorrupt(self.broken)

    @property
    def upto(self) -> int:
        """The journal position the store stands at (slots are loaded up to it)."""
        if self._upto is not None:
            return self._upto
        return 0 if self.ledger is None else self.ledger.seq

    # ------------------------------------------------------------------ later events

    def apply(self, run: list[Event]) -> None:
        """Apply events read after the open (other writers' commits): those of slots
        loaded and those of no slot; the others are read when their slot is."""
        if self.done or self.partial is not None:
            self.replay(run)
            return
        self._upto = run[-1].seq  # a slot loaded meanwhile takes this run's events too
        try:
            keep: list[Event] = []
            self.erasures = self.erasures or any(ev.kind == "erase" for ev in run)
            for ev in run:
                slot, _ = body_entries(ev.kind, ev.body, self._synced_key)
                if self.done:  # the index could not be brought up: every event up to
                    return     # this run's last was read in (load_all)
                if slot == GLOBAL or slot in self.loaded:
                    keep.append(ev)
            self._pending = {ev.seq for ev in keep}
            self._apply_runs(keep)
        finally:
            self._upto, self._pending = None, set()

    def count(self, scope: str | None) -> int | None:
        """How many facts a view of ``scope`` sees, counted on the index at the store's
        position without loading a slot (``len``: it loaded every one, 5.6 s and the whole
        store's memory at 100,000 facts); None when the store holds every slot, or the
        index cannot count: the store counts."""
        if not self._loading():
            return None
        self._sync()
        return None if self.done else self.journal.index_fact_count(self.upto, scope)

    def _key(self, key: str) -> str | None:
        return self.journal.index_lookup([key]).get(key)

    def _synced_key(self, key: str) -> str | None:
        """:meth:`_key` once the index is brought up to the store's position (only a
        retraction or an end asks: a fact names its slot); None once that read the whole
        journal instead."""
        self._sync()
        return None if self.done else self._key(key)

    def _apply_runs(self, events: list[Event], loading: bool = False) -> None:
        """Replay events; ``loading``: they bring slots in, which changes no answer the
        memory gave before (a slot's answer depends on its own events only), so the
        memory's cache of answers is kept."""
        for run in _runs(events):
            self.replay(run, touch=not loading)

    # ------------------------------------------------------------------ loading

    def need(self, slots: Iterable[str] = (), keys: Iterable[str] = (),
             hold: bool = False) -> None:
        """Bring these slots, and those holding these fact ids or nonces, into the store;
        bind the sources named (``s:<source>``) to the tier the journal gave them.
        ``hold``: the slots are written to, and stay in (:meth:`trim` does not offer
        them): a writer that cycles over more slots than it may hold would read each
        one back at every write."""
        if not self._loading():
            return
        slots = list(dict.fromkeys(slots))
        for s in slots:
            if s in self.recent:
                self.recent.move_to_end(s)
        want = [s for s in slots if self._missing(s)]
        keys = [k for k in keys if not (k.startswith("s:") and k[2:] in self.bound)]
        if keys:
            self._sync()
            erased: dict[str, str] = {}
            for k, v in self.journal.index_lookup(keys).items():
                if k.startswith("s:"):
                    self._bind(k[2:], v)
                elif k.startswith("i:") and v.endswith(_ERASED_SLOT):
                    erased[k[2:]] = v
                elif v != GLOBAL and self._missing(v):
                    want.append(v)
            if erased:  # an erased fact may be held already, or be new to a loaded slot
                held = self.store.known_ids(list(erased))
                redo = {v for i, v in erased.items() if i not in held}
                again = sorted(v for v in redo if not self._missing(v))
                want += sorted(redo - set(again))
                if again and not self.done:
                    self._load(again, again=True)
        if want and not self.done:
            self._load(list(dict.fromkeys(want)))
        if hold:
            for s in slots:
                self.recent.pop(s, None)

    def need_subject(self, subject_key: str) -> None:
        """Bring in every slot of a subject (its store key), found through the index."""
        if not self._loading():
            return
        self._sync()
        if self.done:
            return
        want = [s for s in self.journal.index_slots(subject_key + SCOPE_SEP)
                if self._missing(s)]
        if want:
            self._load(want)

    def index_slots(self, prefix: str) -> list[str] | None:
        """The slots the index lists whose name starts with ``prefix``, the index brought
        up to the chain first; None when every slot is in the store (or being read in)."""
        if not self._loading():
            return None
        self._sync()
        return None if self.done else self.journal.index_slots(prefix)

    def _loading(self) -> bool:
        """Whether slots may still need loading now (not all in, not inside a load); a
        memory whose journal was found damaged keeps refusing."""
        if self.done or self.busy:
            return False
        self.raise_if_broken()
        return True

    def _missing(self, slot: str) -> bool:
        """Whether the slot's events up to the store's position are not all applied (while
        opening, a slot loaded for an earlier event lacks those after it)."""
        if slot not in self.loaded:
            return True
        return self.partial is not None and self.partial[slot] < self.upto

    def _bind(self, key: str, tier: str) -> None:
        """Record a source's binding as the journal made it (a scope's, or the shared
        one); the write that asked is then checked against it as it would be."""
        self.bound.add(key)
        scope, source = unscoped(key)
        self.store.bind_source(source, tier, scope, restore=True)

    def wrote(self, before: int, after: int) -> None:
        """This memory appended the events after ``before`` up to ``after``, none of
        another writer between: the index took them in the same transaction, so an index
        current at ``before`` is current at ``after`` (the next load does not ask)."""
        if self._synced == before:
            self._synced = after

    def _sync(self) -> None:
        if self._synced >= self.upto:
            return
        if not self.journal.index_sync():  # a read-only journal another writer extended
            self.load_all()
            return
        self._synced = self.upto

    def _load(self, slots: list[str], again: bool = False) -> None:
        """Apply these slots' events up to the store's position; ``again``: placeholders'
        slots loaded before, to which another writer's erasure moved facts."""
        self._sync()
        if self.done:
            return
        since = {} if again else self.partial or {}  # what loads while opening applied
        while True:
            found = [(slot, ev) for slot, ev in self.journal.slot_events(slots, self.upto)
                     if ev.seq > since.get(slot, 0) and ev.seq not in self._pending]
            events = self._unheld(found)
            linked = self._linked(slots, events) if self.erasures else []
            if not linked:
                break
            slots = slots + linked
        self.loaded.update(slots)
        self.recent.update(dict.fromkeys(s for s in slots if s != GLOBAL))
        if self.partial is not None:
            self.partial.update(dict.fromkeys(slots, self.upto))
        self.busy += 1
        try:
            self._bring_in(events)
        except TruthkeeperError as exc:
            self.broken = f"journal {self.journal.path!r}: {exc}"
            raise
        finally:
            self.busy -= 1

    def forget(self, slots: list[str], scope: str | None = None,
               subjects: Iterable[str] = ()) -> None:
        """Of the slots read in that erased facts were in, are about their subjects (or
        ``subjects``) in any layer, or are the erased ``scope``'s, those the index lists no
        event of up to the store's position are no longer listed as read in: their names
        are erased too. Not while opening or loading."""
        if self.busy or self.partial is not None or self.done:
            return
        maybe = _about(self.loaded, set(slots), scope, set(subjects))
        held = {s for s, _ in self.journal.slot_events(maybe, self.upto)} if maybe else set()
        for s in (s for s in maybe if s not in held):
            self.loaded.discard(s)
            self.recent.pop(s, None)

    def trim(self) -> bool:
        """Between calls: past :data:`HELD_SLOTS` slots read in, take the least recently
        asked about out of the store, down to three quarters of that (Prolog keeps those
        whose facts are linked). Never once every slot is in (``done``: rules and beliefs
        read every slot, and load them all first). Not while this memory's own writes
        wait past other writers' unread events (``Ledger.ahead``): a slot read again now
        would lack them. Whether any slot was taken out (a cached answer about it would
        not see another writer's event that now passes it by)."""
        held = HELD_SLOTS
        if (len(self.recent) <= held or self.done or self.busy or self.partial is not None
                or self.ledger is None or self.ledger.ahead):
            return False
        victims = list(itertools.islice(self.recent, len(self.recent) - held * 3 // 4))
        for s in victims:
            del self.recent[s]  # kept by Prolog: not offered again
        rows = [(s, subject, attribute) for s in victims
                for subject, attribute in [s.rsplit(SCOPE_SEP, 1)]]
        out = self.store.unload(rows)
        self.loaded.difference_update(out)
        return bool(out)

    def _unheld(self, found: list[tuple[str, Event]]) -> list[Event]:
        """The events, but those of facts the store holds already that are listed under a
        placeholder's slot (an erasure moved them there after they were loaded)."""
        ids = [ev.body["id"] for slot, ev in found if slot.endswith(_ERASED_SLOT)
               and ev.kind in ("fact", "retract", "end") and isinstance(ev.body.get("id"), str)]
        held = self.store.known_ids(ids) if ids else set()
        return [ev for slot, ev in found if not (
            slot.endswith(_ERASED_SLOT) and ev.kind in ("fact", "retract", "end")
            and ev.body.get("id") in held)]

    def _bring_in(self, events: list[Event]) -> None:
        """Apply the events of slots being loaded, after the bindings their scopes made."""
        self._bind_scoped(events)
        self._apply_runs(events, loading=True)

    def _bind_scoped(self, events: list[Event]) -> None:
        """Restore the bindings a scope made for the sources of its facts about to be
        loaded: a scope's own binding holds in it even when the shared layer bound the
        source later (the shared binding alone would refuse the fact)."""
        keys = {f"s:{ev.body['scope']}{SCOPE_SEP}{ev.body.get('source')}" for ev in events
                if ev.kind == "fact" and isinstance(ev.body.get("scope"), str)}
        keys = {k for k in keys if k[2:] not in self.bound}
        if keys:
            for k, tier in self.journal.index_lookup(sorted(keys)).items():
                self._bind(k[2:], tier)

    def _linked(self, slots: list[str], events: list[Event]) -> list[str]:
        """The slots, not loaded yet, of the facts these events' facts supersede: a link
        whose end was erased crosses slots (the erased fact moved to its placeholder's)."""
        ids = {ev.body["supersedes"] for ev in events
               if ev.kind == "fact" and isinstance(ev.body.get("supersedes"), str)}
        if not ids:
            return []
        found = self.journal.index_lookup(["i:" + i for i in sorted(ids)]).values()
        return [s for s in dict.fromkeys(found) if s not in slots and self._missing(s)]

    def need_audit(self) -> None:
        """Read the audit entries journalled up to the store's position (older than those
        recorded since the open)."""
        if self.done or AUDIT in self.loaded or self.partial is not None:
            return  # loaded in full (audits included), or read already
        self._sync()
        events = self.journal.slot_events([AUDIT], self.upto)
        self.audit.restore_older([ev.body for _, ev in events])
        self.loaded.add(AUDIT)

    def load_all(self) -> None:
        """Bring every slot in, from the whole chain (checked): after this the memory is
        as a full replay left it."""
        if self.done:
            return
        self.need_audit()
        upto, skip = self.upto, set(self.loaded)
        picked: list[tuple[str, Event]] = []
        self.busy += 1
        try:
            for ev in self.journal.read_checked(0, GENESIS):
                if ev.seq > upto:
                    break
                slot, _ = body_entries(ev.kind, ev.body, self._key)
                if slot != GLOBAL and slot not in skip:
                    picked.append((slot, ev))
                    if len(picked) >= 5_000 and ev.kind == "fact":
                        self._bring_in(self._unheld(picked))
                        picked = []
            self._bring_in(self._unheld(picked))
        except TruthkeeperError as exc:
            self.broken = f"journal {self.journal.path!r}: {exc}"
            raise
        finally:
            self.busy -= 1
        self.done, self.loaded, self.recent = True, set(), collections.OrderedDict()  # names


def _about(loaded: set[str], slots: set[str], scope: str | None,
           subjects: set[str]) -> list[str]:
    """The slots of ``loaded`` about a subject of ``slots`` or ``subjects`` in any layer
    (a view reads the shared layer's slot too), or about one that ``scope`` asked about."""
    def layer_subject(key: str) -> tuple[str | None, str]:
        return unscoped(key.rpartition(SCOPE_SEP)[0])

    held = {s: layer_subject(s) for s in loaded if s not in (GLOBAL, AUDIT)}
    subjects = subjects | {layer_subject(s)[1] for s in slots} | {
        sub for sc, sub in held.values() if scope is not None and sc == scope}
    return sorted(s for s, (_, sub) in held.items() if sub in subjects)


def _runs(events: list[Event]) -> list[list[Event]]:
    """Consecutive fact events together, every other event alone (as replay takes them)."""
    out: list[list[Event]] = []
    for ev in events:
        if out and ev.kind == "fact" and out[-1][-1].kind == "fact":
            out[-1].append(ev)
        else:
            out.append([ev])
    return out

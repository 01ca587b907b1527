"""Erasure: the events an erasure blanks in the journal, and what the store forgets.

A mixin of :class:`~truthkeeper.events.Applier` (the one that applies every event): an
erasure turns the erased facts' events into placeholders (``codec.erased_body``: a digest
for the slot), and with them the audit entries that name an erased fact, were made in the
erased scope or are about the erased subject, the outcomes about an erased fact (who was
right stays), and an erased scope's rules and outcomes; the erase event names every
placeholder it made, so ``verify()`` can refuse one that no erasure names.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import InvalidFact, TruthkeeperError
from .journal.base import Journal
from .journal.codec import (
    ERASED_ATTRIBUTE,
    erased_audit_body,
    erased_body,
    erased_outcome_body,
    erased_scoped_body,
    event_text,
    is_erased,
)
from .journal.ledger import Ledger, Write
from .validation import check_signature
from .values import Fact, from_us, scoped, unscoped

if TYPE_CHECKING:
    from .audit import AuditLog
    from .logic.rules import Reasoner
    from .logic.store import Store
    from .reliability.state import Reliability
    from .signing import Guard

__all__ = ["Erasing", "Selection", "refused_subject"]

Selection = tuple[list[str], "str | None", list[str]]
"""What an erasure erases: the fact ids, the erased scope (or None), the erased subjects'
store keys (``views.erase_selection``)."""


class Erasing:
    """Erasure, for the :class:`~truthkeeper.events.Applier`."""

    store: Store
    reasoner: Reasoner
    rel: Reliability
    audit: AuditLog
    guard: Guard
    erased_rules: set[str]
    touch: Callable[[], None]
    opened = False
    """Set once the memory has opened: an erasure caught up with after that is another
    handle's, whose reach (:meth:`_reached`) this one's audit and reliabilities follow."""

    def _nonce(self, w: Write | None, body: Mapping[str, Any], owner: str) -> None:
        raise NotImplementedError

    def erase(self, ledger: Ledger, select: Callable[[], Selection], reason: str,
              signature: Mapping[str, str] | None = None) -> list[str]:
        """Erase the content of facts for good, in one write; returns the erased ids.
        ``select`` chooses them (the ids, the erased scope, the erased subjects' store
        keys), caught up: chosen again under the write's lock when catching up there
        applied another handle's commits, so that a fact of the scope or subject committed
        meanwhile is erased too. Their journal events become placeholders (the chain still
        verifies), so do the audit entries that name them, were made in the erased scope
        or are about an erased subject; an ``erase`` event records it, and the store and
        the audit log forget them. An erasure of a scope or subject is written even when
        this handle finds nothing of it: another handle may hold audit entries of it,
        waiting for its next write, and follows the event (:meth:`_reached`). Erasing a
        protected fact needs ``signature``: ``sign_action("erase", {"ids": [...],
        "reason": ...})``."""
        ids, scope, subjects = select()
        if not (ids or scope is not None or subjects):
            return []
        ledger.flush()  # the audit entries still waiting reach the journal, to be blanked
        if self.store.lazy is not None:  # its reader would keep the old pages in the log
            self.store.lazy.stop_check()
        chosen_at = ledger.seq
        with ledger.write() as w:
            try:
                if ledger.seq != chosen_at and (scope is not None or subjects):
                    ids, scope, subjects = select()  # another handle committed meanwhile
                body = _erase_body(ids, reason, signature, scope, subjects)
                done = [f.id for f in self.store.facts(ids) if f.status == "erased"]
                if done:
                    raise InvalidFact(f"facts {done} are erased already")
                match = _audit_match(ids, scope, subjects)
                at = self._erase_in(w, ledger.journal, body, match, scope)
            except TruthkeeperError as exc:
                self.audit.rejected(exc, {"erase": list(ids)})
                raise
        self._erased(body, at)
        if scope is not None:
            self.rel.forget_scope(scope)
        self._forget_asked(scope, subjects)
        self.audit.erase(match)
        ledger.journal._purge()
        self.store.forget_now()  # after the audit's matching, which normalised the names
        return list(ids)

    def _reached(self, body: Mapping[str, Any], at: int) -> None:
        """Another handle's erasure, caught up with: the audit entries it reached (those
        kept here, and those waiting here for a write, which no journal held when it
        blanked its own) and the erased scope's reliabilities go here too. Its ``reaches``
        names the scope and subjects by digest (:func:`reach_digest`); the scope's rules,
        blanked by it, go too."""
        if not self.opened:  # opening: what the journal held is blanked already
            return
        reach = body.get("reaches")
        reach = reach if isinstance(reach, Mapping) else {}
        sd = reach.get("scope")
        subs = {x for x in reach.get("subjects") or () if isinstance(x, str)}
        ids = {x for x in body.get("ids") or () if isinstance(x, str)}

        def match(details: Mapping[str, Any]) -> bool:
            sc = details.get("scope")
            if isinstance(sd, str) and isinstance(sc, str) and reach_digest(sc) == sd:
                return True
            key = _about(details)
            if subs and key is not None and reach_digest(key) in subs:
                return True
            return bool(ids) and any(t in ids for t in _texts(details))

        self.audit.erase(match, from_us(at))  # those made since it was written stay
        for sc in [s for s in self.rel.scoped if reach_digest(s) == sd]:
            self.rel.forget_scope(sc)
        for sc in [s for s in self.reasoner.scopes() if reach_digest(s) == sd]:
            for rid, _, own in self.reasoner.rules(sc):  # blanked with their scope
                if own == sc:
                    self.reasoner.remove(rid)
                    self.erased_rules.add(rid)

    def _forget_asked(self, scope: str | None, subjects: Sequence[str]) -> None:
        """A lazily opened memory's list of the slots read in forgets the empty ones of
        the erased ``scope`` and ``subjects`` (store keys): a view asked about them."""
        if self.store.lazy is not None and (scope is not None or subjects):
            self.store.lazy.forget([], scope, [unscoped(k)[1] for k in subjects])

    def _slots_of(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """The slots (store keys) of the facts ``ids``, for a memory still reading its
        journal lazily: those the erasure leaves without an event go from its list of
        slots read in (``LazyLoad.forget``; a store that holds every slot keeps none)."""
        lazy = self.store.lazy
        if lazy is None or lazy.done:
            return []
        return sorted({(scoped(f.scope, f.subject), f.attribute)
                       for f in self.store.facts(ids) if f.attribute != ERASED_ATTRIBUTE})

    def _erase_in(self, w: Write, journal: Journal, body: dict[str, Any],
                  match: Callable[[Mapping[str, Any]], bool] | None = None,
                  scope: str | None = None) -> int:
        """Within a write: check the erasure, blank the facts' events, the audit entries
        ``match`` finds (default: those naming an erased id) and the erased ``scope``'s
        rules, and journal it; returns its time (the store forgets once the write
        commits)."""
        self._check_erase(body, None)
        self._nonce(w, body, f"erase:{next(_UNIQUE)}")
        [at] = w.times(1)
        self._blank(w, journal, set(body["ids"]), at)
        self._blank_outcomes(w, journal, body, at, scope)
        if scope is not None:
            self._blank_rules(w, journal, scope, body, at)
        blanked = []
        for seq, text in journal.kind_rows("audit"):
            entry = json.loads(text)
            if not is_erased(entry) and (match or _audit_match(body["ids"], None, ()))(
                    entry.get("details") or {}):
                w.txn.erase(seq, erased_audit_body(text, at))
                blanked.append(seq)
        if blanked:
            body["audit"] = blanked
        w.events.append(("erase", at, body))
        return at

    def _blank_rules(self, w: Write, journal: Journal, scope: str, body: dict[str, Any],
                     at: int) -> None:
        """Within an erasure of ``scope``: its rules' events become placeholders (the
        erasure's ``rules`` names them) and the rules go."""
        seqs = []
        for seq, text in journal.kind_rows("rule"):
            rb = json.loads(text)
            if not is_erased(rb) and rb.get("scope") == scope:
                w.txn.erase(seq, erased_scoped_body(text, at))
                seqs.append(seq)
                if any(r == rb["id"] for r, _, _ in self.reasoner.rules(scope)):
                    self.reasoner.remove(rb["id"])
                    w.on_undo(functools.partial(self.reasoner.add, rb["id"], rb["text"],
                                                scope=scope, evaluate=False))
                self.erased_rules.add(rb["id"])
                w.on_undo(functools.partial(self.erased_rules.discard, rb["id"]))
        if seqs:
            body["rules"] = seqs

    def _blank_outcomes(self, w: Write, journal: Journal, body: dict[str, Any], at: int,
                        scope: str | None) -> None:
        """Within an erasure: the outcomes recorded in an erased ``scope`` become bare
        placeholders (its book goes once the write commits), and those about an erased
        fact keep only who was right or wrong (a signed confirmation's payload held the
        slot and the value: the scope stays, so erasing the scope after blanks them); the
        erasure's ``outcomes`` names them."""
        ids, seqs = set(body["ids"]), []
        for seq, text in journal.kind_rows("outcome"):
            ob = json.loads(text)
            if scope is not None and ob.get("scope") == scope:  # an erased fact's, too
                w.txn.erase(seq, erased_scoped_body(text, at))
            elif is_erased(ob):
                continue
            elif ob.get("id") in ids or ob.get("confirmation") in ids:
                w.txn.erase(seq, erased_outcome_body(text, at))
            else:
                continue
            seqs.append(seq)
        if seqs:
            body["outcomes"] = seqs

    def _check_erase(self, body: Mapping[str, Any], at: int | None) -> None:
        ids = body["ids"]
        facts = self.store.facts(ids)  # UnknownFact for an id the memory does not hold
        if any(f.tier in self.guard.guarded for f in facts):
            self.guard.check_action("erase", {"ids": list(ids), "reason": body["reason"]},
                                    body.get("signature"), at)

    def _blank(self, w: Write, journal: Journal, ids: set[str], at: int) -> None:
        """Turn the fact events of ``ids`` into placeholders: those in the journal, and
        those this write is about to append (an import)."""
        pending = set()
        for i, event in enumerate(w.events):
            kind, ra = event[0], event[1]
            if kind != "fact":
                continue
            text = event_text(event)
            body = json.loads(text)
            if body.get("id") in ids and not is_erased(body):
                w.events[i] = (kind, ra, erased_body(text, at))  # its index fields go
                pending.add(body["id"])
        for seq, text in journal.fact_rows(ids - pending).values():
            if not text.startswith('{"$erased"'):
                w.txn.erase(seq, erased_body(text, at))

    def _erased(self, body: Mapping[str, Any], at: int) -> None:
        """The store forgets the erased facts (live, or another writer's erasure caught
        up with), and so does the process: the last categorical decision's claims now,
        the rest before the next answer (``Store.forget_now``: once for a run of
        erasures replayed)."""
        slots = self._slots_of(body["ids"])
        self.store.erase(body["ids"], at)
        self.touch()
        self.rel.book.last_categorical = None
        self.rel.forget_facts(body["ids"])
        self.store.forget_later(slots)


_UNIQUE = itertools.count()


def reach_digest(name: str) -> str:
    """How an erasure names an erased scope or subject (store key) to other handles: a
    SHA-256 digest, not the name."""
    return hashlib.sha256(f"erase\x1f{name}".encode()).hexdigest()[:40]


def _erase_body(ids: Sequence[str], reason: str, signature: Mapping[str, str] | None,
                scope: str | None, subjects: Sequence[str]) -> dict[str, Any]:
    """An ``erase`` event's body; its ``reaches`` names the scope and subjects by digest,
    so that what other handles hold of them goes too."""
    body: dict[str, Any] = {"ids": list(ids), "reason": reason}
    if scope is not None or subjects:
        body["reaches"] = {"scope": None if scope is None else reach_digest(scope),
                           "subjects": [reach_digest(s) for s in subjects]}
    if signature is not None:
        body["signature"] = check_signature(signature)
    return body


def _audit_match(ids: Sequence[str], scope: str | None, subjects: Sequence[str],
                 ) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an audit entry's details name an erased id (as one of their texts: a key or
    a value, at any depth), were made in the erased scope, or are about an erased subject.
    Each entry is read once, not once for each erased id (a subject of 4,000 facts erased
    after 4,000 audited drops: 16 million searches, 3.5 s)."""
    erased = set(ids)
    subs = set(subjects)

    def match(details: Mapping[str, Any]) -> bool:
        if scope is not None and details.get("scope") == scope:
            return True
        if subs and _about(details) in subs:
            return True
        return any(t in erased for t in _texts(details))

    return match


def _about(details: Mapping[str, Any]) -> str | None:
    """The store key of the subject an audit entry is about (a drop's, or a refused
    write's, whose message may quote its item), if any."""
    sc, sub = details.get("scope"), details.get("subject")
    return scoped(sc if isinstance(sc, str) else None, sub) if isinstance(sub, str) else None


def refused_subject(facts: Sequence[Fact], item: object = None,
                    check: Callable[[list[Fact]], object] | None = None) -> str | None:
    """The subject (normalised) a refused batch is about, for its audit entry (its message
    may quote the item it refused): that of ``item``, the one being read when it was
    refused; else the batch's only subject; else that of the first fact ``check`` refuses
    alone (a second look, on the refusal's path only)."""
    from .keys import normalise_key

    raw = item.subject if isinstance(item, Fact) else (
        item.get("subject") if isinstance(item, Mapping) else None)
    if raw is not None:
        with contextlib.suppress(TruthkeeperError):
            return normalise_key(raw, "subject")
        return None
    if len({f.subject for f in facts}) == 1:
        return facts[0].subject
    if check is None:
        return None
    for f in facts:
        try:
            check([f])
        except TruthkeeperError:
            return f.subject
    return None


def _texts(x: Any) -> Iterator[str]:
    """The texts a JSON rendering of ``x`` holds as strings (keys included; an object JSON
    cannot hold rendered as ``str``, as ``json.dumps(default=str)`` renders it)."""
    if isinstance(x, str):
        yield x
    elif isinstance(x, Mapping):
        for k, v in x.items():
            yield str(k)
            yield from _texts(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _texts(v)
    elif not isinstance(x, (int, float, bool)) and x is not None:
        yield str(x)

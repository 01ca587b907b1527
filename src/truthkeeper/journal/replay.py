"""Replaying journal events into a memory: one handler per event kind, in a table.

The handlers apply what the journal records through the memory's
:class:`~truthkeeper.events.Applier` (``ap``), with the checks a live write made (the same
``_check_*`` and nonce book-keeping), so a reopened memory answers exactly as the live one
did. Facts come in runs and are added to the store together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..erasure import _UNIQUE
from ..errors import JournalCorrupt, TruthkeeperError
from ..events import _nonce_owner
from ..signing import apply_key_event, signed_fields
from ..values import from_us
from .codec import Event, fact_fields, is_erased

__all__ = ["HANDLERS", "replay"]

Body = Mapping[str, Any]


def replay(ap: Any, run: list[Event], touch: bool = True) -> None:
    """Apply a run of journal events (facts come in runs); ``touch=False`` keeps the
    memory's cached answers (a lazy memory bringing a slot in)."""
    if run[0].kind == "fact":
        _facts(ap, run)
    else:
        for ev in run:
            HANDLERS.get(ev.kind, _logged)(ap, ev.kind, ev.body, ev.recorded_at)
    if touch:
        ap.touch()


def _facts(ap: Any, run: list[Event]) -> None:
    now = from_us(ap.clock())
    facts = []
    for ev in run:
        try:
            if is_erased(ev.body):
                facts.append(ap._placeholder(ev.body, now))
                continue
            f = ap.builder.build(fact_fields(ev.body), now)
            if f.tier in ap.guard.guarded:
                ap.guard.check_fact(signed_fields(f), ev.recorded_at)
        except (KeyError, TruthkeeperError) as exc:
            msg = f"journal event {ev.seq}: {exc}"
            raise JournalCorrupt(msg) from None
        facts.append(f)
    ap.store.add(facts, [ev.recorded_at for ev in run])
    ap._confirmation_nonces(None, facts)


def _retract(ap: Any, kind: str, b: Body, at: int) -> None:
    ap._check_retract(b, at)
    ap._nonce(None, b, f"retract:{b['id']}")
    ap.store.retract(b["id"], at, b["reason"])


def _end(ap: Any, kind: str, b: Body, at: int) -> None:
    ap.end(None, b, at)


def _declare(ap: Any, kind: str, b: Body, at: int) -> None:
    ap.declarer.apply(b)


def _erase(ap: Any, kind: str, b: Body, at: int) -> None:
    ap._check_erase(b, at)
    ap._nonce(None, b, f"erase:{next(_UNIQUE)}")
    ap._erased(b, at)
    ap._reached(b, at)


def _rule(ap: Any, kind: str, b: Body, at: int) -> None:
    if is_erased(b):  # erased with its scope: a later rule_removed names it
        ap.erased_rules.add(str(b.get("id")))
    else:
        ap.reasoner.add(b["id"], b["text"], scope=b.get("scope"), evaluate=False)


def _rule_removed(ap: Any, kind: str, b: Body, at: int) -> None:
    if b["id"] not in ap.erased_rules:
        ap.reasoner.remove(b["id"])


def _key(ap: Any, kind: str, b: Body, at: int) -> None:
    apply_key_event(ap.guard.ring, b, at, ap.guard)
    ap._nonce(None, b, "key")


def _checkpoint(ap: Any, kind: str, b: Body, at: int) -> None:
    ap._nonce(None, b, "checkpoint")


def _audit(ap: Any, kind: str, b: Body, at: int) -> None:
    if not is_erased(b):
        ap.audit.restore(b)


def _outcome(ap: Any, kind: str, b: Body, at: int) -> None:
    if is_erased(b):
        if "source" in b:  # about an erased fact: it still teaches the same
            ap.rel.apply_outcome({**b, "id": None}, None)
        return
    ap._check_outcome(b, at)
    ap._nonce(None, b, _nonce_owner(b))
    ap._apply_other(kind, b)


def _logged(ap: Any, kind: str, b: Body, at: int) -> None:
    """``config``, ``prior`` (and an unknown kind, which is refused there)."""
    ap._apply_other(kind, b)


HANDLERS: dict[str, Callable[[Any, str, Body, int], None]] = {
    "retract": _retract, "end": _end, "declare": _declare, "erase": _erase, "rule": _rule,
    "rule_removed": _rule_removed, "key": _key, "checkpoint": _checkpoint, "audit": _audit,
    "outcome": _outcome,
}
"""How each kind of event other than a fact is replayed; any other kind goes to
:meth:`~truthkeeper.events.Applier._apply_other` (config, prior; unknown kinds refused)."""

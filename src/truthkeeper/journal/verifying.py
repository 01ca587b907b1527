"""Verifying a journal: the hash chain, every signature, that every erased placeholder is
named by an erasure, the chain against the owner's signed checkpoint, and the slot index
against the chain."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import TierNotAuthorized, brief
from ..results import Verification
from ..signing import EVER, Guard
from .base import Journal
from .codec import Event, is_erased

__all__ = ["anchor_problem", "verify"]


def verify(journal: Journal, check: Callable[[str, Mapping[str, Any], int], str | None],
           checkpoint: Mapping[str, Any] | None,
           anchor_problem: Callable[[Mapping[str, Any], Journal], str | None],
           ) -> Verification:
    """The chain, every signature, and the chain against a signed checkpoint (the given
    one, else the last one journalled)."""
    last: list[Mapping[str, Any]] = []
    blanked: dict[str, int] = {}  # erased placeholders not yet named by an erasure

    def each(ev: Event) -> str | None:
        if ev.kind == "checkpoint":
            last[:] = [ev.body]
        elif ev.kind == "fact" and is_erased(ev.body):
            blanked[str(ev.body.get("id"))] = ev.seq
        elif ev.kind in ("audit", "rule", "outcome") and is_erased(ev.body):
            blanked[f"{ev.kind} entry {ev.seq}"] = ev.seq
        elif ev.kind == "erase":
            for fid in ev.body.get("ids") or ():
                blanked.pop(fid, None)
            for kind, key in (("audit", "audit"), ("rule", "rules"), ("outcome", "outcomes")):
                for seq in ev.body.get(key) or ():
                    blanked.pop(f"{kind} entry {seq}", None)
        return check(ev.kind, ev.body, ev.recorded_at)

    v = journal.verify(each)
    if v.ok and blanked:
        fid, at_seq = min(blanked.items(), key=lambda kv: kv[1])
        what = fid if fid.endswith(f"entry {at_seq}") else f"fact {fid}"
        return replace(v, ok=False, first_bad=at_seq,
                       reason=f"{what} was blanked without an erasure event")
    anchor = checkpoint if checkpoint is not None else (last[0] if last else None)
    if not v.ok:
        return v
    problem = None if anchor is None else anchor_problem(anchor, journal)
    if problem is not None and anchor is not None:
        seq = anchor.get("seq") if isinstance(anchor, Mapping) else None
        return replace(v, ok=False, first_bad=seq if isinstance(seq, int) else None,
                       reason=problem)
    problem = journal.index_problem()  # the chain is sound: does the index match it?
    return v if problem is None else replace(v, ok=False, reason=problem)


def anchor_problem(guard: Guard, cp: Mapping[str, Any], journal: Journal,
                   at: int | None = EVER) -> str | None:
    """Why the chain does not match a signed checkpoint, or None."""
    if not isinstance(cp, Mapping):
        return f"a checkpoint is a dict of seq, hash and signature, got {brief(cp)}"
    seq, h = cp.get("seq"), cp.get("hash")
    if type(seq) is not int or not isinstance(h, str):
        return "a checkpoint needs seq (int), hash and signature"
    try:
        guard.check_action("checkpoint", {"seq": seq, "hash": h},
                                cp.get("signature"), at)
    except TierNotAuthorized as exc:
        return str(exc)
    rows = [ev for ev in journal.read(seq - 1) if ev.seq == seq][:1] if seq >= 1 else []
    if not rows:
        return (f"the journal ends before event {seq} of the signed checkpoint "
                "(its tail was cut)")
    if rows[0].hash != h:
        return f"event {seq} does not match the signed checkpoint (the chain was rewritten)"
    return None

"""Every kind of event, in one place: how it is applied live (inside a journal write),
replayed from the journal, and imported from JSON Lines.

The live path and the replay path call the same ``_apply_*`` functions, so a reopened
memory answers exactly as the live one did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .audit import AuditLog
from .errors import (
    InvalidFact,
    JournalCorrupt,
    PolicyError,
    TruthkeeperError,
    UnknownFact,
    UnsafeRule,
)
from .journal.codec import Event, canonical, fact_body, fact_fields
from .journal.ledger import Ledger, Write, now_us
from .logic.rules import Reasoner, check_rule_text
from .logic.store import Store
from .reliability.state import Reliability
from .signing import Guard
from .values import Fact, FactBuilder, check_label, from_us, to_us

__all__ = ["Applier"]


class Applier:
    """Applies events to the store, the rules and the reliability state of one memory."""

    def __init__(self, store: Store, reasoner: Reasoner, rel: Reliability, guard: Guard,
                 builder: FactBuilder, audit: AuditLog, config: dict[str, Any],
                 touch: Callable[[], None]) -> None:
        self.store, self.reasoner, self.rel = store, reasoner, rel
        self.guard, self.builder, self.audit = guard, builder, audit
        self.config, self.touch = config, touch

    # ------------------------------------------------------------------ live writes

    def validate(self, facts: Iterable[Mapping[str, Any] | Fact]) -> list[Fact]:
        """Validate a batch (values, times, tiers, signatures) before anything changes;
        refusals are audited."""
        now = from_us(now_us())
        try:
            built = [self.builder.coerce(item, i, now) for i, item in enumerate(facts)]
            for f in built:
                self.guard.check(f)
        except TypeError as exc:
            err = InvalidFact(f"facts must be an iterable of dicts or Facts: {exc}")
            self.audit.rejected(err, {"batch": True})
            raise err from None
        except TruthkeeperError as exc:
            self.audit.rejected(exc, {"batch": True})
            raise
        return built

    def facts(self, w: Write, facts: Sequence[Fact]) -> list[Fact]:
        """Add validated facts; the store refuses (and nothing changes) what the policy
        forbids."""
        try:
            out = self.store.add(facts, w.times(len(facts)))
        except TruthkeeperError as exc:
            self.audit.rejected(exc, {"facts": [f.id for f in facts]})
            raise
        w.on_undo(lambda: self.store.undo_add([f.id for f in out]))
        w.events.extend(("fact", to_us(f.recorded_at), fact_body(f)) for f in out)
        self.touch()
        return out

    def retract(self, w: Write, fid: str, reason: str) -> None:
        """Retract a fact (an event, not a delete)."""
        [ra] = w.times(1)
        self.store.retract(fid, ra, reason)
        w.on_undo(lambda: self.store.unretract(fid))
        w.events.append(("retract", ra, {"id": fid, "reason": reason}))
        self.touch()

    def rule(self, w: Write, text: str) -> str:
        """Add a rule; returns its id. A text already added is refused."""
        rid = f"r{w.next_seq}"
        try:
            if text in (t for _, t in self.reasoner.rules()):
                raise UnsafeRule(f"the rule {text!r} was already added")
            self.reasoner.add(rid, text)
        except TruthkeeperError as exc:
            self.audit.rejected(exc, {"rule": text})
            raise
        w.on_undo(lambda: self.reasoner.remove(rid))
        w.events.append(("rule", w.times(1)[0], {"id": rid, "text": text}))
        return rid

    def rule_removed(self, w: Write, text: str) -> None:
        """Remove the rule with this text."""
        rid = {t: r for r, t in self.reasoner.rules()}.get(text)
        if rid is None:
            msg = f"no rule {text!r} to remove; rules() lists the rules"
            raise UnknownFact(msg)
        self.reasoner.remove(rid)
        w.on_undo(lambda: self.reasoner.add(rid, text))
        w.events.append(("rule_removed", w.times(1)[0], {"id": rid}))

    def logged(self, w: Write, kind: str, bodies: Sequence[dict[str, Any]]) -> None:
        """Outcomes and priors: journalled, applied once the write commits."""
        w.events.extend((kind, ra, b) for b, ra in zip(bodies, w.times(len(bodies)),
                                                       strict=True))

    def log(self, ledger: Ledger, kind: str, bodies: list[dict[str, Any]]) -> None:
        """Journal outcome or prior events, then apply them."""
        with ledger.write() as w:
            self.logged(w, kind, bodies)
        self.after_logged(kind, bodies)

    def confirm(self, ledger: Ledger, subject: str, attribute: str, value: Any) -> int:
        """Record every head of a slot right or wrong against ``value`` (one write)."""
        right, wrong = self.store.match_heads(subject, attribute, value)
        bodies = [{"id": f.id, "source": f.source, "tier": f.tier, "correct": f.id in right}
                  for f in self.store.facts(right + wrong)]
        self.log(ledger, "outcome", bodies)
        return len(bodies)

    def after_logged(self, kind: str, bodies: Sequence[Mapping[str, Any]]) -> None:
        """Apply committed outcome or prior events."""
        for b in bodies:
            self._apply_other(kind, b)
        self.touch()

    # ------------------------------------------------------------------ replay

    def replay(self, run: list[Event]) -> None:
        """Apply a run of journal events (facts come in runs)."""
        if run[0].kind == "fact":
            now = from_us(now_us())
            facts = []
            for ev in run:
                try:
                    f = self.builder.build(fact_fields(ev.body), now)
                    self.guard.check(f)
                except (KeyError, TruthkeeperError) as exc:
                    msg = f"journal event {ev.seq}: {exc}"
                    raise JournalCorrupt(msg) from None
                facts.append(f)
            self.store.add(facts, [ev.recorded_at for ev in run])
        else:
            for ev in run:
                if ev.kind == "retract":
                    self.store.retract(ev.body["id"], ev.recorded_at, ev.body["reason"])
                elif ev.kind == "rule":
                    self.reasoner.add(ev.body["id"], ev.body["text"])
                elif ev.kind == "rule_removed":
                    self.reasoner.remove(ev.body["id"])
                else:
                    self._apply_other(ev.kind, ev.body)
        self.touch()

    def _apply_other(self, kind: str, body: Mapping[str, Any]) -> None:
        if kind == "config":
            if dict(body) != self.config:
                msg = (f"the journal was created with {dict(body)}; open it with the same "
                       f"policy, tiers and protected_tiers (got {self.config})")
                raise PolicyError(msg)
        elif kind == "outcome":
            slot = None
            if body.get("id") is not None:
                f = self.store.get(body["id"])
                slot = (f.subject, f.attribute)
            self.rel.apply_outcome(body, slot)
        elif kind == "prior":
            self.rel.apply_prior(body)
        else:
            msg = f"unknown event kind {kind!r}"
            raise JournalCorrupt(msg)

    # ------------------------------------------------------------------ import

    def import_lines(self, ledger: Ledger, lines: list[tuple[int, str, dict[str, Any]]],
                     where: str) -> None:
        """Apply imported lines in one write, all or nothing, skipping events the journal
        already holds (re-importing an export changes nothing)."""
        with ledger.write() as w:
            later = self._import(w, lines, list(ledger.journal.read()), where)
        for kind, body in later:
            self.after_logged(kind, [body])

    def _import(self, w: Write, lines: list[tuple[int, str, dict[str, Any]]],
                existing: Sequence[Event], where: str) -> list[tuple[str, Any]]:
        seen = Counter(_identity(ev.kind, ev.body) for ev in existing if ev.kind != "config")
        rid_text: dict[str, str] = {}
        later: list[tuple[str, Any]] = []
        run: list[tuple[int, Fact]] = []
        now = from_us(now_us())

        def flush() -> None:
            if run:
                try:
                    self.facts(w, [f for _, f in run])
                except TruthkeeperError as exc:
                    msg = f"{where} lines {run[0][0]}..{run[-1][0]}: {exc}"
                    raise InvalidFact(msg) from None
                run.clear()

        for n, kind, body in lines:
            key = _identity(kind, body)
            if seen[key] > 0:
                seen[key] -= 1
                if kind == "rule":
                    rid_text[str(body.get("id"))] = str(body.get("text"))
                continue
            try:
                if kind == "fact":
                    f = self.builder.coerce(fact_fields(body), n, now)
                    self.guard.check(f)
                    run.append((n, f))
                    continue
                flush()
                if kind == "retract":
                    self.retract(w, check_label(body.get("id"), "id"),
                                 check_label(body.get("reason"), "reason"))
                elif kind == "rule":
                    text = check_rule_text(body.get("text"))
                    self.rule(w, text)
                    rid_text[str(body.get("id"))] = text
                elif kind == "rule_removed":
                    removed = rid_text.get(str(body.get("id")))
                    if removed is None:
                        raise UnknownFact(f"rule {body.get('id')!r} is not in the file")
                    self.rule_removed(w, removed)
                else:
                    body = self._checked_logged(kind, body)
                    self.logged(w, kind, [body])
                    later.append((kind, body))
            except (TruthkeeperError, KeyError, TypeError, ValueError) as exc:
                msg = f"{where} line {n}: {exc}"
                raise InvalidFact(msg) from None
        flush()
        return later

    def _checked_logged(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        if kind == "outcome":
            if not isinstance(body.get("correct"), bool):
                raise InvalidFact("an outcome needs correct: true or false")
            if body.get("id") is not None:
                self.store.get(check_label(body["id"], "id"))
            return {"id": body.get("id"), "source": check_label(body.get("source"), "source"),
                    "tier": self.builder.tier(body.get("tier")), "correct": body["correct"]}
        if not (isinstance(body.get("tier_prior", {}), dict)
                and isinstance(body.get("source_prior", {}), dict)):
            raise InvalidFact("a prior needs tier_prior and/or source_prior objects")
        return body


def _identity(kind: str, body: Mapping[str, Any]) -> tuple[str, str]:
    if kind == "rule":
        return kind, str(body.get("text"))
    if kind == "rule_removed":
        return kind, canonical(body) + "?"  # ids differ between journals: never skipped
    return kind, canonical(body)

"""Every kind of event applied to one memory: live (inside a journal write) here; replayed
from the journal by the handler table of :mod:`.journal.replay`, and imported from JSON
Lines by :mod:`.journal.importer`, both through this class's methods and checks, so a
reopened memory answers exactly as the live one did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import replace
from typing import Any

from .audit import AuditLog, caller_scope, current_scope
from .erasure import _UNIQUE, Erasing, refused_subject
from .errors import (
    InvalidFact,
    JournalCorrupt,
    PolicyError,
    ScopeError,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownRule,
    UnsafeRule,
    brief,
)
from .journal.base import Journal
from .journal.codec import (
    Event,
    fact_fields,
    fact_text,
)
from .journal.ledger import Ledger, Write, now_us
from .logic.rules import Reasoner
from .logic.store import Store
from .reliability.state import Reliability
from .results import Verification
from .schema import Declaration, Declarer, Schema
from .signing import EVER, Guard, KeyRing, apply_key_event, nonce_owner
from .validation import check_signature
from .values import Fact, FactBuilder, from_us, parse_time, scoped, to_us, unscoped

__all__ = ["MAX_RULES", "Applier"]

MAX_RULES = 1000
"""Rules one memory holds at most: adding one evaluates it with all the others (1,000
rules take about 2.6 s to add one after another; more grows quadratically)."""


class Applier(Erasing):
    """Applies events to the store, the rules and the reliability state of one memory."""

    def __init__(self, store: Store, reasoner: Reasoner, rel: Reliability, guard: Guard,
                 builder: FactBuilder, audit: AuditLog, config: dict[str, Any],
                 touch: Callable[[], None], clock: Callable[[], int] = now_us,
                 declarer: Declarer | None = None) -> None:
        self.store, self.reasoner, self.rel = store, reasoner, rel
        self.guard, self.builder, self.audit = guard, builder, audit
        self.config, self.touch, self.clock = config, touch, clock
        self.declarer = declarer or Declarer(store, Schema())
        self.erased_rules: set[str] = set()
        """Ids of rules erased with their scope (a later ``rule_removed`` names them)."""
        self.key_news: Callable[[], bool] = lambda: False  # (set by the session)

    # ------------------------------------------------------------------ live writes

    def validate(self, facts: Iterable[Mapping[str, Any] | Fact],
                 drawn: set[str] | None = None, typed: bool = True) -> list[Fact]:
        """Validate a batch (values, times, tiers, signatures) before anything changes;
        refusals are audited. The ids drawn here at random (not given) are added to
        ``drawn``. Not ``typed``: the declared value types and categories are left to the
        write, which applies them once caught up with other writers' declarations."""
        now = from_us(self.clock())
        built: list[Fact] = []
        reading: object = None  # the item being read, until it is built
        try:
            for i, item in enumerate(facts):
                reading = item
                f = self.builder.coerce(item, i, now)
                f = self.declarer.coerce(f, _guarded(self.guard, item)) if typed else f
                if drawn is not None and isinstance(item, Mapping) and item.get("id") is None:
                    drawn.add(f.id)
                built.append(f)
                reading = None
            if typed:
                self.rel.check_values(built)
            self.guard.check_facts(built, self.key_news)
        except TypeError as exc:
            err = InvalidFact(f"facts must be an iterable of dicts or Facts: {exc}")
            self.audit.rejected(err, {"batch": True})
            raise err from None
        except TruthkeeperError as exc:  # its message may quote the item: erased with it
            self.audit.rejected(exc, {"batch": True, "subject": refused_subject(
                built, reading, self.rel.check_values)})
            raise
        return built

    def hypothetical(self, items: Iterable[Mapping[str, Any] | Fact], scope: str | None,
                     now: int) -> list[Fact]:
        """The facts ``what_if`` would add in ``scope``, built and checked as ``validate``
        builds them (declared types included); unsigned, since nothing is written (a
        signature given is set aside: neither checked nor its nonce used)."""
        with caller_scope(scope):
            built = [replace(self.declarer.coerce(self.builder.coerce(item, i, from_us(now)),
                                                  False), scope=scope, signature=None)
                     for i, item in enumerate(items)]
        self.rel.check_values(built)
        return built

    def declare(self, w: Write, d: Declaration, keep: tuple[bool, bool] = (False, False)) -> None:
        """Declare an attribute's cardinality and value type (see :class:`Declarer`; ``keep``:
        :meth:`~.schema.Declarer.resolve`); what the attribute has already journals nothing."""
        old, d = self.declarer.schema.get(d.attribute), self.declarer.resolve(d, keep)
        if d == old and d.attribute in self.declarer.schema.by_attribute:
            return
        self.declarer.check(d)
        self.declarer.apply(d.to_dict())
        w.on_undo(lambda: self.declarer.undo(old))
        w.events.append(("declare", w.times(1)[0], d.to_dict()))
        self.touch()

    def start_schema(self, ledger: Ledger, schema: Mapping[str, Declaration]) -> None:
        """Journal the declarations given at open that differ from the journal's."""
        new = [d for d in schema.values() if self.declarer.schema.get(d.attribute) != d]
        if not new:
            return
        if ledger.journal.readonly:
            for d in new:
                self.declarer.apply(d.to_dict())
            return
        with ledger.write() as w:
            for d in new:
                self.declare(w, d)

    def facts(self, w: Write, facts: Sequence[Fact], salts: Sequence[str | None] = (),
              drawn: Set[str] = frozenset()) -> list[Fact]:
        """Add validated facts; the store refuses (and nothing changes) what the policy
        forbids. ``salts``: those of imported events, kept so a re-import matches;
        ``drawn``: the ids :meth:`validate` drew at random."""
        try:
            self.guard.check_keys(facts)  # caught up: another writer may have revoked one
            out = self.store.add(facts, w.times(len(facts)), self.clock(), drawn=drawn)
        except TruthkeeperError as exc:
            self.audit.rejected(exc, {"facts": [f.id for f in facts],
                                      "subject": refused_subject(facts)})
            raise
        w.on_undo(lambda: self.store.undo_add([f.id for f in out]))
        w.on_retime(lambda moved: self.store.retime(out, moved))
        self._confirmation_nonces(w, out)
        salts = list(salts) or [None] * len(out)
        w.events.extend(("fact", to_us(f.recorded_at), None if s is None else fact_text(f, s), f)
                        for f, s in zip(out, salts, strict=True))  # None: written as appended
        self.touch()
        return out

    def retract(self, w: Write, fid: str, reason: str,
                signature: Mapping[str, str] | None = None) -> None:
        """Retract a fact (an event, not a delete); a protected fact needs a signature."""
        body: dict[str, Any] = {"id": fid, "reason": reason}
        if signature is not None:
            body["signature"] = check_signature(signature)
        [ra] = w.times(1)
        self._check_retract(body, None)
        self._nonce(w, body, f"retract:{fid}")
        self.store.retract(fid, ra, reason)
        w.on_undo(lambda: self.store.unretract(fid))
        w.events.append(("retract", ra, body))
        self.touch()

    def end(self, w: Write | None, body: Mapping[str, Any], at: int | None = None) -> None:
        """End a fact: it stopped being true at ``body["valid_to"]`` (an ISO time). Ending
        a protected fact needs ``sign_action("end", {"id", "valid_to"})``. Live (``w``)
        the event is journalled; in replay (``at``) it is applied as written."""
        f = self.store.get(body["id"])
        if f.tier in self.guard.guarded:
            self.guard.check_action("end", {"id": body["id"], "valid_to": body["valid_to"]},
                                    body.get("signature"), at)
        self._nonce(w, body, f"end:{body['id']}:{body['valid_to']}")
        vt = to_us(parse_time(body["valid_to"], "valid_to"))
        ra = w.times(1)[0] if w is not None else at
        self.store.end(f.id, vt, ra)
        if w is not None and ra is not None:
            old = None if f.valid_to is None else to_us(f.valid_to)
            w.on_undo(lambda: self.store.end(f.id, old, None))
            w.events.append(("end", ra, dict(body)))
        self.touch()

    def _check_retract(self, body: Mapping[str, Any], at: int | None) -> None:
        f = self.store.get(body["id"])
        if f.tier in self.guard.guarded:
            self.guard.check_action("retract", {"id": body["id"], "reason": body["reason"]},
                                    body.get("signature"), at)

    def _nonce(self, w: Write | None, body: Mapping[str, Any], owner: str) -> None:
        sig = body.get("signature")
        if isinstance(sig, Mapping) and isinstance(sig.get("nonce"), str):
            nonce = sig["nonce"]
            self.store.use_nonce(nonce, owner)
            if w is not None:
                w.on_undo(lambda: self.store.unuse_nonce(nonce))

    def rule(self, w: Write, text: str, scope: str | None = None) -> list[str]:
        """Add a rule in ``scope`` (None: shared); returns the predicates (``"N/A"``) its
        body calls that no rule defines there. A text that already applies there is
        refused; so is a rule past the ``MAX_RULES`` that apply there."""
        rid = f"r{w.next_seq}"
        self.store.need_all()  # a lazy memory: every fact, before any rule is evaluated
        try:
            texts = [t for _, t, _ in self.reasoner.rules(scope)]
            if text in texts:
                raise UnsafeRule(f"the rule {text!r} was already added")
            if len(texts) >= MAX_RULES:  # each rule is evaluated with all the others
                raise UnsafeRule(f"a memory holds at most {MAX_RULES} rules; remove one first")
            undefined = self.reasoner.add(rid, text, scope=scope)
        except TruthkeeperError as exc:
            self.audit.rejected(exc, {"rule": text})
            raise
        w.on_undo(lambda: self.reasoner.remove(rid))
        w.events.append(("rule", w.times(1)[0], {"id": rid, "text": text,
                                                 **({"scope": scope} if scope else {})}))
        return undefined

    def rule_removed(self, w: Write, text: str, scope: str | None = None) -> None:
        """Remove the rule with this text that was added in ``scope`` (a view cannot
        remove a shared rule)."""
        self.store.need_all()
        rules = self.reasoner.rules(scope)
        rid = next((r for r, t, sc in rules if t == text and sc == scope), None)
        if rid is None:
            if any(t == text for _, t, _ in rules):
                msg = (f"the rule {text!r} is shared (added to the unscoped memory); a "
                       "scope's view removes only its own rules")
                raise ScopeError(msg)
            raise UnknownRule(f"no rule {text!r} to remove; rules() lists the rules")
        self.reasoner.remove(rid)
        w.on_undo(lambda: self.reasoner.add(rid, text, scope=scope, evaluate=False))
        w.events.append(("rule_removed", w.times(1)[0], {"id": rid}))

    def logged(self, w: Write, kind: str, bodies: Sequence[dict[str, Any]]) -> None:
        """Outcomes and priors: journalled, applied once the write commits."""
        w.events.extend((kind, ra, b) for b, ra in zip(bodies, w.times(len(bodies)),
                                                       strict=True))

    def log(self, ledger: Ledger, kind: str, bodies: list[dict[str, Any]]) -> None:
        """Journal outcome or prior events, then apply them; an outcome recorded in a
        scope's view names the scope (it teaches that scope's book only)."""
        if kind == "outcome" and current_scope() is not None:
            bodies = [{**b, "scope": current_scope()} for b in bodies]
        with ledger.write() as w:
            for b in bodies:
                if kind == "outcome":
                    self._check_outcome(b, None)
                    self._nonce(w, b, _nonce_owner(b))
            self.logged(w, kind, bodies)
        self.after_logged(kind, bodies)

    def outcome_body(self, fact: Fact | None, source: str, tier: str, correct: bool,
                     signature: Mapping[str, str] | None, signed: dict[str, Any] | None = None,
                     ) -> dict[str, Any]:
        """An outcome event body; about a protected source it carries the signature and
        what it signed (an ``outcome`` by default)."""
        body: dict[str, Any] = {"id": None if fact is None else fact.id, "source": source,
                                "tier": tier, "correct": correct}
        if tier in self.guard.guarded:
            body["signed"] = signed or {"action": "outcome", "payload": {
                "id": body["id"], "source": source, "correct": correct}}
            body["signature"] = check_signature(signature)
        return body

    def _check_outcome(self, body: Mapping[str, Any], at: int | None) -> None:
        # a source keeps one tier: Prolog's rule (store:bind_source/4), checked, not bound
        self.store.bind_source(body["source"], body["tier"], body.get("scope"), check=True)
        if body["tier"] not in self.guard.guarded:
            return
        signed = body.get("signed") or {}
        action, payload = signed.get("action"), signed.get("payload") or {}
        if action == "outcome":
            ok = payload == {"id": body["id"], "source": body["source"],
                             "correct": body["correct"]}
        elif action == "confirm" and body.get("id") is not None:
            f, scope = self.store.get(body["id"]), body.get("scope")  # a fact the view sees;
            ok = f.scope in (None, scope) and (payload.get("subject"), payload.get(  # its slot
                "attribute")) == (scoped(scope, f.subject), f.attribute)  # as the view names it
        else:
            ok = False
        if not ok:
            msg = f"an outcome about protected source {body['source']!r} is not what was signed"
            raise TierNotAuthorized(msg)
        self.guard.check_action(str(action), payload, body.get("signature"), at)

    def _confirmation_nonces(self, w: Write | None, facts: Sequence[Fact]) -> None:
        for f in facts:
            if f.signature and f.meta.get("confirmation") is True:
                self._nonce(w, {"signature": f.signature},
                            _nonce_owner({**f.to_dict(), "tier": f.tier}, "fact"))

    def confirm(self, ledger: Ledger, scope: str | None, subject: str, attribute: str,
                value: Any, signature: Mapping[str, str] | None = None) -> int:
        """Settle a slot on ``value`` in one write: every head (of that member, in a set)
        is recorded right or wrong, and a confirmation fact of the confirmer's standing
        (unsigned: the highest unprotected tier; signed: the highest protected one) is
        written now, so the policy resolves the slot to ``value`` until newer evidence of
        at least that standing. Returns how many heads were labelled."""
        key = scoped(scope, subject)
        right, wrong = _heads_of_member(self.store, self.declarer.schema, key, attribute, value)
        signed = {"action": "confirm", "payload": {"subject": key, "attribute": attribute,
                                                   "value": value}}
        tier = self.store.top_tier(protected=signature is not None)
        fields = {"subject": subject, "attribute": attribute, "value": value,
                  "source": f"confirmation:{tier}", "tier": tier, "scope": scope,
                  "valid_from": from_us(self.clock()), "meta": {"confirmation": True},
                  "text": "confirmed by the owner" if signature is None
                  else "confirmed by the owner (signed)", "signature": signature}
        try:
            [fact] = self.validate([fields])
            bodies = [{**self.outcome_body(f, f.source, f.tier, ok, signature,  # right first
                                           signed), "confirmation": fact.id,
                       **({} if scope is None else {"scope": scope})}
                      for ok, ids in ((True, right), (False, wrong)) for f in self.store.facts(ids)]
            with ledger.write() as w:
                for b in bodies:
                    self._check_outcome(b, None)
                    self._nonce(w, b, _nonce_owner(b))
                self.logged(w, "outcome", bodies)
                self.facts(w, [fact])
        except TruthkeeperError as exc:
            self.audit.rejected(exc, {"confirm": [subject, attribute]})
            raise
        self.after_logged("outcome", bodies)
        return len(bodies)

    # ------------------------------------------------------------------ keys, checkpoints

    def start(self, ledger: Ledger, categories: Mapping[str, tuple[Any, ...]]) -> None:
        """At open: the keys offered, then the categories declared."""
        self.start_keys(ledger)
        self.start_categories(ledger, categories)

    def start_categories(self, ledger: Ledger, categories: Mapping[str, tuple[Any, ...]],
                         ) -> None:
        """Journal the categories declared at open where they differ from the journal's
        (which are kept when none are declared); a read-only memory only applies them."""
        new = {a: list(c) for a, c in categories.items()  # () removes a declaration
               if self.rel.book.category_values.get(a, ()) != tuple(c)}
        if not new:
            return
        if ledger.journal.readonly:
            self.rel.apply_prior({"categories": new})
            return
        self.log(ledger, "prior", [{"categories": new}])

    def start_keys(self, ledger: Ledger) -> None:
        """Journal the keys offered at open as the journal's first keys (bootstrap: one
        event, which nothing could sign), or refuse a new key the journal does not trust."""
        new = [k for k in dict.fromkeys(self.guard.offered) if k not in self.guard.ring.keys]
        if not new:
            return
        if self.guard.ring.keys:
            msg = (f"key {new[0][:16]}... is not one of this journal's keys; add it with "
                   "add_key(key, signature=...) signed by a trusted key")
            raise PolicyError(msg)
        if ledger.journal.readonly:
            return
        with ledger.write() as w:
            if self.guard.ring.keys:  # another process added keys meanwhile
                return
            first = {"key": new[0], "action": "added"}
            self.key(w, first if len(new) == 1 else {**first, "also": new[1:]})

    def key(self, w: Write, body: dict[str, Any]) -> None:
        """Add or revoke a trusted key (signed by a trusted key, except a journal's first)."""
        [at] = w.times(1)
        before = dict(self.guard.ring.keys)
        apply_key_event(self.guard.ring, body, at, self.guard)
        w.on_undo(lambda: _restore(self.guard.ring, before))
        self._nonce(w, body, "key")
        w.events.append(("key", at, body))

    def checkpoint(self, w: Write, cp: Mapping[str, Any], journal: Journal) -> None:
        """Journal an owner-signed checkpoint of the chain head after checking it."""
        problem = self.anchor_problem(cp, journal, None)  # signed by a key trusted now
        if problem is not None:
            raise TierNotAuthorized(f"checkpoint refused: {problem}")
        self._nonce(w, cp, "checkpoint")
        w.events.append(("checkpoint", w.times(1)[0], dict(cp)))

    def anchor_problem(self, cp: Mapping[str, Any], journal: Journal,
                       at: int | None = EVER) -> str | None:
        """Why the chain does not match a signed checkpoint, or None."""
        from .journal.verifying import anchor_problem

        return anchor_problem(self.guard, cp, journal, at)

    def after_logged(self, kind: str, bodies: Sequence[Mapping[str, Any]]) -> None:
        """Apply committed outcome or prior events."""
        for b in bodies:
            self._apply_other(kind, b)
        self.touch()

    def verify(self, journal: Journal, check: Callable[[str, Mapping[str, Any], int],
                                                    str | None],
               checkpoint: Mapping[str, Any] | None) -> Verification:
        """The chain, every signature, erasures and the signed checkpoint
        (:func:`.journal.verifying.verify`)."""
        from .journal.verifying import verify

        return verify(journal, check, checkpoint, self.anchor_problem)

    # ------------------------------------------------------------------ replay

    def replay(self, run: list[Event], touch: bool = True) -> None:
        """Apply a run of journal events (:func:`.journal.replay.replay`)."""
        from .journal.replay import replay

        replay(self, run, touch)

    def _placeholder(self, body: Mapping[str, Any], now: Any) -> Fact:
        """The fact an erased placeholder stands for: its slot, source, tier and times."""
        f = self.builder.build({**fact_fields(dict(body)), "value": None}, now)
        return replace(f, status="erased")

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
            else:
                self.store.bind_source(body["source"], body["tier"], body.get("scope"))
            self.rel.apply_outcome(body, slot)
        elif kind == "prior":
            self.rel.apply_prior(body)
        else:
            msg = f"unknown event kind {kind!r}"
            raise JournalCorrupt(msg)

    # ------------------------------------------------------------------ import

    def import_lines(self, ledger: Ledger, lines: list[tuple[int, str, dict[str, Any]]],
                     where: str) -> None:
        """Apply imported lines in one write, all or nothing (:mod:`.journal.importer`)."""
        from .journal.importer import import_lines

        import_lines(self, ledger, lines, where)


def _guarded(guard: Guard, item: object) -> bool:
    """Whether an item to add is at a tier whose writes need a signature."""
    tier = item.tier if isinstance(item, Fact) else (
        item.get("tier", "agent") if isinstance(item, Mapping) else None)
    return tier in guard.guarded


def _nonce_owner(body: Mapping[str, Any], kind: str = "outcome") -> str:
    """Who a signature nonce belongs to: one confirm signs its confirmation fact and the
    outcomes of several heads; any other use of a nonce is its own (so a second use is a
    replay)."""
    return nonce_owner(kind, body) or f"{kind}:{next(_UNIQUE)}"


def _restore(ring: KeyRing, keys: dict[str, Any]) -> None:
    ring.keys.clear()
    ring.keys.update(keys)


def _heads_of_member(store: Store, schema: Schema, key: str, attribute: str,
                     value: Any) -> tuple[list[str], list[str]]:
    """The heads a confirmation of ``value`` marks right and wrong (Prolog's match; in a
    scope's view, the heads of the union it shows). In a set a confirmation settles one
    member: a list, tuple or set that no member is was most likely meant as several, so
    it is refused (InvalidFact), nothing written."""
    several = schema.many(attribute) and isinstance(value, (list, tuple, set, frozenset))
    right, wrong = ([], []) if several and not isinstance(value, list) \
        else store.match_heads(list(dict.fromkeys((key, unscoped(key)[1]))), attribute, value)
    if several and not right:
        msg = (f"confirm settles one member of the set {attribute!r}, and no member is "
               f"{brief(value)}: call confirm once for each member")
        raise InvalidFact(msg)
    return right, wrong

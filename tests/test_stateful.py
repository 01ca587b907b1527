"""The Memory as a state machine, against the pure-Python reference model of the policies:
writes with explicit links, retractions, rules and their beliefs, outcomes, facts that end
or begin later, ``end``, a clock that moves both ways, a scope's view over the shared facts
(writes, confirmations, retractions and ends in either layer), and reopening the journal
(lazily or whole), with values whose types must not be confused; on SQLite and on
PostgreSQL."""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from truthkeeper import (
    Candidate,
    InvalidFact,
    Memory,
    ScopeError,
    Signer,
    SupersessionError,
    TierNotAuthorized,
    UnknownFact,
    UnsafeRule,
)
from truthkeeper.journal.ledger import now_us
from truthkeeper.schema import coerce_value
from truthkeeper.testing import at, policies, tiers
from truthkeeper.values import from_us, normalise_key, to_us

from .conftest import drop_pg_database, new_pg_database
from .reference import (
    SHARED,
    Reference,
    RFact,
    _vk,
    disputes_reference,
    phi_store_reference,
)

SLOTS = [("acme", "price"), ("acme", "owner"), ("ana", "city"), ("ana", "price"),
         ("ana", "pets"),  # pets: a set (declared many)
         ("b\x00o", "price")]  # a slot whose name holds NUL: never indexed, applied at open
SUBJECTS = {"acme": "acme", "ana": "ana", "b\x00o": "'b\\x0\\o'"}  # as a belief's text quotes it
VALUES = st.sampled_from([0, 1, 1.0, "1", "true", True, False, "Lisbon", " lisbon"])
SOURCES = st.sampled_from(["s", "t"])
RULES = {  # each with whether it holds of a subject, at a time, in the layers a view sees
    "priced(S) :- holds(S, price, _)":
        lambda ref, s, t, ls: ref.holds((s, "price"), t, ls)[0],
    "agree(S) :- holds(S, price, V), holds(S, owner, V)":
        lambda ref, s, t, ls: ref.holds((s, "price"), t, ls)[0]
        and ref.holds((s, "owner"), t, ls)[0]
        and ref.holds((s, "price"), t, ls)[1] == ref.holds((s, "owner"), t, ls)[1],
    "flagged(S) :- holds(S, price, @(true))":
        lambda ref, s, t, ls: ref.holds((s, "price"), t, ls) == (True, _vk(True)),
}
SCOPE = "u"
VIEW = (None, SCOPE)  # the layers the scope's view sees
LAYERS = st.sampled_from([None, SCOPE])


class MemoryMachine(RuleBasedStateMachine):
    @initialize(policy=policies)
    def setup(self, policy: str) -> None:
        self.path = self.new_journal()
        self.policy = policy
        self.minute = 10  # the memory's clock, in minutes after ``at(0)``
        self.mem = self.open_memory(self.path)
        self.mem.declare("pets", cardinality="many")
        self.view = self.mem.scope(SCOPE)
        self.ref = Reference(policy)
        self.rules: list[tuple[str, str | None]] = []  # (text, layer), in the order added
        self.types: dict[str, str | None] = {}  # declared value types
        self.categories: dict[str, set[object]] = {}  # declared categories, as value keys
        self.outcomes: Counter[str] = Counter()
        self.marks: list[tuple[int, Reference]] = []  # (a transaction time, what was known)

    deputy = Signer(Ed25519PrivateKey.generate())
    """A second key the owner adds and revokes (``deputy_key``), from either handle."""
    deputy_trusted = False

    signer: Signer | None = None
    """The owner's key where the human tier is protected (``SignedMachine``): a human fact,
    and a retraction, end, erasure or outcome of one, must be signed by it."""

    def open_memory(self, path: str | None, **kwargs: object) -> Memory:
        keys = [] if self.signer is None else [self.signer.public_key]
        return Memory(path, policy=self.policy, clock=self.clock, trusted_keys=keys,
                      protected_tiers=() if self.signer is None else ("human",),
                      **({"synchronous": "NORMAL"} if path else {}), **kwargs)

    def guarded(self, tier: str) -> bool:
        return self.signer is not None and tier == "human"

    def sig(self, sign: bool, tier: str, action: str, payload: dict) -> dict | None:
        """The owner's signature of an action on a fact of ``tier``, if ``sign``."""
        return self.signer.sign_action(action, payload) if (
            sign and self.guarded(tier) and self.signer is not None) else None

    def new_journal(self) -> str:
        """A fresh journal's location (here a SQLite file in a temporary folder)."""
        self.dir = tempfile.mkdtemp(prefix="tk-state-")
        return str(Path(self.dir) / "m.db")

    def drop_journal(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def clock(self) -> datetime:
        return at(self.minute)

    @property
    def now(self) -> int:
        return to_us(at(self.minute))

    def typed(self, attribute: str, value: object, closed: bool = True) -> object:
        """The value as the attribute's declared type has it; InvalidFact if it cannot, or
        (``closed``: a write's, not a filtered candidate's) if it is none of the
        attribute's declared categories."""
        typed = coerce_value(value, self.types.get(attribute), "value")
        if closed and attribute in self.categories and _vk(typed) not in self.categories[
                attribute]:
            raise InvalidFact(f"{typed!r} is none of the categories of {attribute!r}")
        return typed

    def beliefs_expected(self, layers: tuple[str | None, ...], t: int | None = None) -> set[str]:
        """The beliefs the rules of ``layers`` (the shared ones; in a view, its own too)
        derive over the facts of ``layers``."""
        t = self.now if t is None else t
        return {f"{text.split('(')[0]}({q})" for text, layer in self.rules if layer in layers
                for s, q in SUBJECTS.items() if RULES[text](self.ref, s, t, layers)}

    def writer(self, layer: str | None, elsewhere: bool = False) -> Memory:
        """The memory (or its scope's view) that writes; ``elsewhere``: a second handle
        on the same journal (another process's, say), which the first must catch up
        with."""
        if not elsewhere:
            return self.mem if layer is None else self.view
        if getattr(self, "other", None) is None:
            self.other = self.open_memory(self.path)
        return self.other if layer is None else self.other.scope(SCOPE)

    def close_other(self) -> None:
        if getattr(self, "other", None) is not None:
            self.other.close()
            self.other = None

    def teardown(self) -> None:
        if hasattr(self, "mem"):
            self.close_other()
            self.mem.close()
            self.drop_journal()

    @rule(slot=st.sampled_from(SLOTS), value=VALUES, t=st.integers(0, 6), tier=tiers,
          source=SOURCES, sup=st.one_of(st.none(), st.integers(0, 50)),
          present=st.booleans(), member=st.sampled_from(["cat", "dog", 1]),
          ends=st.one_of(st.none(), st.integers(1, 8)), layer=LAYERS, elsewhere=st.booleans(),
          sign=st.booleans(), by_deputy=st.booleans())
    def add(self, slot, value, t, tier, source, sup, present, member, ends, layer,
            elsewhere, sign, by_deputy=False) -> None:
        """A write; of a protected tier, signed (``add_many`` of ``Signer.sign``'s dict,
        whose value is never coerced) or refused; ``by_deputy``: signed by the deputy's key,
        refused unless it is trusted now (added, not revoked, by either handle)."""
        source = f"{source}:{tier}"  # a source name keeps one tier
        many = slot[1] == "pets"
        present = present or not many  # only a set's member leaves
        value = member if many else value  # a few members, each said often
        try:
            typed = self.typed(slot[1], value)
        except InvalidFact:
            typed = InvalidFact
        ids = list(self.ref.facts)
        target = ids[sup % len(ids)] if (sup is not None and ids) else None
        probe = RFact("?", slot, value, to_us(at(t)), 0, tier, target, source, layer=layer)
        problem = self.ref.link_problem(probe)
        item = {"subject": slot[0], "attribute": slot[1], "value": value, "source": source,
                "tier": tier, "valid_from": at(t), "supersedes": target, "present": present,
                "valid_to": None if ends is None else at(t + ends)}
        signed = sign and self.guarded(tier) and self.signer is not None
        if signed and layer is not None:
            item["scope"] = layer  # a view's fact is signed with its scope
        if signed and typed is not InvalidFact and (type(typed), typed) != (type(value), value):
            typed = InvalidFact  # a signed value is never coerced
        who = self.writer(layer, elsewhere)
        try:
            if signed and self.signer is not None:
                f = who.add_many([(self.deputy if by_deputy else self.signer).sign(item)])[0]
            else:
                f = who.add(**{k: v for k, v in item.items() if k != "scope"})
        except TierNotAuthorized:
            assert self.guarded(tier) and (not signed or (by_deputy and not self.deputy_trusted))
            return
        except SupersessionError as exc:
            assert problem in ("cross_slot", "lower_tier"), (problem, exc)
            return
        except UnknownFact:
            assert problem == "unknown"
            return
        except InvalidFact as exc:
            assert problem == "erased" or typed is InvalidFact, (problem, exc)
            return
        assert problem is None and typed is not InvalidFact
        assert signed or not self.guarded(tier), "a protected fact written unsigned"
        assert not (signed and by_deputy) or self.deputy_trusted, "a revoked key signed"
        assert (type(f.value), f.value) == (type(typed), typed), (value, f.value)
        value = typed
        self.ref.facts[f.id] = RFact(f.id, slot, value, to_us(f.valid_from),
                                     to_us(f.recorded_at), tier, target, source, many,
                                     present, None if ends is None else to_us(at(t + ends)),
                                     layer)

    @precondition(lambda self: hasattr(self, "mem") and self.signer is not None)
    @rule(add=st.booleans(), elsewhere=st.booleans())
    def deputy_key(self, add, elsewhere) -> None:
        """The owner adds or revokes the deputy's key through either handle; the other
        must honour it at its next signed write (it caught up with the key's event)."""
        assert self.signer is not None
        who, key = self.writer(None, elsewhere), self.deputy.public_key_hex
        action = "added" if add else "revoked"
        signature = self.signer.sign_action("key", {"key": key, "action": action})
        try:
            (who.add_key if add else who.revoke_key)(key, signature=signature)
        except TierNotAuthorized:
            assert not add and not self.ever_added, "a key event refused"
            return
        self.deputy_trusted, self.ever_added = add, self.ever_added or add

    ever_added = False

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(slot=st.sampled_from(SLOTS), value=VALUES, member=st.sampled_from(["cat", "dog", 1]),
          layer=LAYERS, elsewhere=st.booleans(), sign=st.booleans())
    def confirm(self, slot, value, member, layer, elsewhere, sign) -> None:
        """A user's confirmation: a fact of the highest tier that dominates every fact of
        a lower rank whatever the times; each head (of a set: about that member) gets an
        outcome (in the view: each head the view shows, in the view's book, which the
        shared book does not count)."""
        many = slot[1] == "pets"
        value = member if many else value
        key = (normalise_key(slot[0], "s"), slot[1])
        who = self.writer(layer, elsewhere)
        signature = self.sig(sign, "human", "confirm", {
            "subject": slot[0], "attribute": slot[1], "value": value, "scope": layer})
        try:
            typed = self.typed(slot[1], value)
            if signature is not None and (type(typed), typed) != (type(value), value):
                raise InvalidFact("a signed value is never coerced")
        except InvalidFact:
            try:
                who.confirm(slot[0], slot[1], value, signature=signature)
            except InvalidFact:
                return
            raise AssertionError(f"{value!r} confirmed against the declared type") from None
        # the heads it labels right or wrong: those its view shows (of a set: about that
        # member)
        labelled = [self.ref.facts[h] for h in self.ref.heads(
                        key, self.now, SHARED if layer is None else VIEW)
                    if not many or _vk(self.ref.facts[h].value) == _vk(value)]
        before = {f.id for f in who.history(*slot)}
        try:
            who.confirm(slot[0], slot[1], value, signature=signature)
        except TierNotAuthorized:  # unsigned, it cannot label a protected fact
            assert signature is None and any(self.guarded(f.tier) for f in labelled)
            return
        assert signature is not None or not any(self.guarded(f.tier) for f in labelled)
        if layer is None:
            for f in labelled:
                self.outcomes[f.source] += 1
        for f in who.history(*slot):
            if f.id not in before:
                self.ref.facts[f.id] = RFact(f.id, key, f.value, to_us(f.valid_from),
                                             to_us(f.recorded_at), f.tier, f.supersedes,
                                             f.source, many, f.present, layer=layer)

    @precondition(lambda self: bool(getattr(self, "ref", None) and self.ref.facts))
    @rule(k=st.integers(0, 50), elsewhere=st.booleans(), sign=st.booleans())
    def retract(self, k, elsewhere, sign) -> None:
        f = self.ref.facts[list(self.ref.facts)[k % len(self.ref.facts)]]
        who = self.writer(f.layer, elsewhere)
        reason = "again" if f.id in self.ref.retracted else "test"
        try:
            who.retract(f.id, reason=reason, signature=self.sig(
                sign, f.tier, "retract", {"id": f.id, "reason": reason}))
        except InvalidFact:
            assert f.id in self.ref.retracted, "retracting twice must fail"
            return
        except TierNotAuthorized:
            assert self.guarded(f.tier) and not sign
            return
        assert f.id not in self.ref.retracted and (sign or not self.guarded(f.tier))
        self.ref.retracted.add(f.id)

    @precondition(lambda self: bool(getattr(self, "ref", None) and self.ref.facts))
    @rule(k=st.integers(0, 50), whole_subject=st.booleans(), elsewhere=st.booleans(),
          sign=st.booleans())
    def erase(self, k, whole_subject, elsewhere, sign) -> None:
        """Erasure: the fact (or every fact of its subject in its layer) goes for good; to
        the policies it is a retraction. A protected fact's erasure is signed, or refused
        (a subject's whole, with nothing erased)."""
        f = self.ref.facts[list(self.ref.facts)[k % len(self.ref.facts)]]
        who = self.writer(f.layer, elsewhere)
        if whole_subject:
            gone = {g.id for g in self.ref.facts.values() if g.slot[0] == f.slot[0]
                    and g.layer == f.layer and g.id not in self.ref.erased}
            try:
                assert set(who.erase(subject=f.slot[0])) == gone
            except TierNotAuthorized:
                assert any(self.guarded(self.ref.facts[g].tier) for g in gone)
                return
            assert not any(self.guarded(self.ref.facts[g].tier) for g in gone)
        elif f.id in self.ref.erased:
            try:
                who.erase(f.id)
            except InvalidFact:
                return
            raise AssertionError("erasing twice must fail")
        else:
            gone = {f.id}
            try:
                assert who.erase(f.id, signature=self.sig(sign, f.tier, "erase", {
                    "ids": [f.id], "reason": "erasure request"})) == [f.id]
            except TierNotAuthorized:
                assert self.guarded(f.tier) and not sign
                return
            assert sign or not self.guarded(f.tier)
        self.ref.erased |= gone
        self.ref.retracted |= gone

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(cands=st.lists(st.tuples(st.sampled_from(SLOTS), VALUES, st.integers(0, 16), tiers,
                                   st.sampled_from(["cat", "dog", 1])), max_size=6),
          layer=LAYERS)
    def filter_candidates(self, cands, layer) -> None:
        """Retrieved candidates are judged against each other and the heads of their
        slots (in a view: of the union of its layers)."""
        items = [Candidate(s, a, m if a == "pets" else v, at(t), tier=tier)
                 for (s, a), v, t, tier, m in cands]
        if any(self.guarded(c.tier) for c in items):  # a candidate carries no signature
            with pytest.raises((TierNotAuthorized, InvalidFact)):  # whichever item is first
                self.writer(layer).filter(items)
            return
        try:  # filter reads values as add does: coerced to the declared type
            rows = [((normalise_key(c.subject, "s"), c.attribute),
                     self.typed(c.attribute, c.value, closed=False), to_us(c.valid_from),
                     c.tier)
                    for c in items]
        except InvalidFact:
            try:
                self.writer(layer).filter(items)
            except InvalidFact:
                return
            raise AssertionError("a candidate against the declared type kept") from None
        got = self.writer(layer).filter(items)
        kept = {id(c) for c in got.kept}  # by identity: False == 0 to Python
        dropped = {i for i, c in enumerate(items) if id(c) not in kept}
        layers = SHARED if layer is None else VIEW
        assert dropped == phi_store_reference(self.ref, rows, self.now, layers), rows
        index = {id(c): i for i, c in enumerate(items)}
        disputed = {index[id(d.item)]: {h.id for h in d.heads} for d in got.disputed}
        assert disputed == disputes_reference(
            self.ref, rows, self.now, layers, set(range(len(items))) - dropped), rows

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(minute=st.integers(0, 16))
    def move_clock(self, minute) -> None:
        """The caller's clock moves, forward or back (a simulation, a clock set back)."""
        self.minute = minute

    @precondition(lambda self: bool(getattr(self, "ref", None) and self.ref.facts))
    @rule(k=st.integers(0, 50), minute=st.integers(0, 16), elsewhere=st.booleans(),
          sign=st.booleans())
    def end(self, k, minute, elsewhere, sign) -> None:
        f = self.ref.facts[list(self.ref.facts)[k % len(self.ref.facts)]]
        vt = to_us(at(minute))
        try:
            self.writer(f.layer, elsewhere).end(f.id, valid_to=at(minute), signature=self.sig(
                sign, f.tier, "end", {"id": f.id, "valid_to": at(minute).isoformat()}))
        except InvalidFact:
            assert f.id in self.ref.retracted or vt <= f.vf
            return
        except TierNotAuthorized:
            assert self.guarded(f.tier) and not sign
            return
        assert f.id not in self.ref.retracted and vt > f.vf
        assert sign or not self.guarded(f.tier)
        f.vt = vt

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(text=st.sampled_from(sorted(RULES)), layer=LAYERS, elsewhere=st.booleans())
    def toggle_rule(self, text, layer, elsewhere) -> None:
        """Add a rule, or remove it: a shared one (the unscoped memory's) or the scope's
        own (its view's, which apply to the view alone). A view cannot add a rule the
        shared layer has, nor remove a shared one."""
        who = self.writer(layer, elsewhere)
        if (text, layer) in self.rules:
            who.remove_rule(text)
            self.rules.remove((text, layer))
        elif layer is not None and (text, None) in self.rules:
            try:
                who.add_rule(text)
            except UnsafeRule:
                pass
            else:
                raise AssertionError("a view added a rule the shared layer has")
            try:
                who.remove_rule(text)
            except ScopeError:
                return
            raise AssertionError("a view removed a shared rule")
        else:
            who.add_rule(text)
            self.rules.append((text, layer))

    @precondition(lambda self: bool(getattr(self, "ref", None) and self.ref.facts))
    @rule(k=st.integers(0, 50), correct=st.booleans(), elsewhere=st.booleans(),
          sign=st.booleans())
    def outcome(self, k, correct, elsewhere, sign) -> None:
        f = self.ref.facts[list(self.ref.facts)[k % len(self.ref.facts)]]
        try:
            self.writer(f.layer, elsewhere).record_outcome(f.id, correct=correct,
                                                           signature=self.sig(
                sign, f.tier, "outcome", {"id": f.id, "source": f.source, "correct": correct}))
        except TierNotAuthorized:
            assert self.guarded(f.tier) and not sign
            return
        assert sign or not self.guarded(f.tier)
        if f.layer is None:  # the view's outcomes are its own
            self.outcomes[f.source] += 1

    @precondition(lambda self: bool(getattr(self, "ref", None) and self.ref.facts))
    @rule(k=st.integers(0, 50), layer=LAYERS, elsewhere=st.booleans())
    def what_if_retract(self, k, layer, elsewhere) -> None:
        """``what_if(retract=...)`` names exactly the slots whose heads, and the beliefs
        that, retracting the fact would change (in the memory or the view that asks), and
        writes nothing."""
        f = self.ref.facts[list(self.ref.facts)[k % len(self.ref.facts)]]
        layers = SHARED if layer is None else VIEW
        if f.id in self.ref.retracted or f.layer not in layers:
            return
        who = self.writer(layer, elsewhere)

        def state() -> tuple[dict, set]:
            heads = {slot: self.ref.heads((normalise_key(slot[0], "s"), slot[1]), self.now,
                                          layers) for slot in SLOTS}
            return heads, self.beliefs_expected(layers)

        (before, held), length = state(), len(who)
        self.ref.retracted.add(f.id)
        try:
            after, held_after = state()
        finally:
            self.ref.retracted.discard(f.id)
        w = who.what_if(retract=[f.id])
        assert all(len(set(x)) == len(x) for h in w.heads  # each head once
                   for x in (h.heads_before, h.heads_after))
        assert {(h.subject, h.attribute): (set(h.heads_before), set(h.heads_after))
                for h in w.heads} == {(normalise_key(s, "s"), a): (before[s, a], after[s, a])
                                      for s, a in SLOTS if before[s, a] != after[s, a]}
        assert {str(b) for b in w.beliefs_gained} == held_after - held
        assert {str(b) for b in w.beliefs_lost} == held - held_after
        assert w.changed == bool(w.heads or w.beliefs_gained or w.beliefs_lost)
        assert len(who) == length and f.id not in {
            h.id for h in who.history(*f.slot) if h.status == "retracted"}

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(slot=st.sampled_from(SLOTS), value=VALUES, t=st.integers(0, 16), tier=tiers,
          source=SOURCES, sup=st.one_of(st.none(), st.integers(0, 50)),
          present=st.booleans(), member=st.sampled_from(["cat", "dog", 1]),
          ends=st.one_of(st.none(), st.integers(1, 8)), layer=LAYERS, elsewhere=st.booleans())
    def what_if_add(self, slot, value, t, tier, source, sup, present, member, ends,
                    layer, elsewhere) -> None:
        """``what_if(add=...)`` names exactly the slots whose heads, and the beliefs that,
        adding the fact would change (a supposed fact is refused as ``add`` would refuse
        it), and writes nothing."""
        source = f"{source}:{tier}"
        many = slot[1] == "pets"
        present = present or not many
        value = member if many else value
        layers = SHARED if layer is None else VIEW
        who = self.writer(layer, elsewhere)
        ids = list(self.ref.facts)
        target = ids[sup % len(ids)] if (sup is not None and ids) else None
        item = {"subject": slot[0], "attribute": slot[1], "value": value, "source": source,
                "tier": tier, "valid_from": at(t), "supersedes": target, "present": present,
                "valid_to": None if ends is None else at(t + ends)}
        try:
            typed = self.typed(slot[1], value)
        except InvalidFact:
            typed = InvalidFact
        key = (normalise_key(slot[0], "s"), slot[1])
        ra = max((f.ra for f in self.ref.facts.values()), default=0) + 1
        probe = RFact("?", key, typed, to_us(at(t)), ra, tier, target, source, many, present,
                      None if ends is None else to_us(at(t + ends)), layer)
        problem = self.ref.link_problem(probe)
        length = len(who)
        try:
            w = who.what_if(add=[item])
        except (SupersessionError, UnknownFact, InvalidFact) as exc:
            expected = {"cross_slot": SupersessionError, "lower_tier": SupersessionError,
                        "unknown": UnknownFact, "erased": InvalidFact}.get(problem)
            assert typed is InvalidFact or (expected is not None and isinstance(exc, expected)), \
                (problem, exc)
            return
        assert typed is not InvalidFact and problem is None, (typed, problem)

        def state() -> tuple[dict, set]:
            heads = {s: self.ref.heads((normalise_key(s[0], "s"), s[1]), self.now, layers)
                     for s in SLOTS}
            return heads, self.beliefs_expected(layers)

        before, held = state()
        self.ref.facts["?"] = probe
        try:
            after, held_after = state()
        finally:
            del self.ref.facts["?"]
        assert all(len(set(x)) == len(x) for h in w.heads  # each head once
                   for x in (h.heads_before, h.heads_after))
        got = {(h.subject, h.attribute): (set(h.heads_before),
                                          {"?" if i not in self.ref.facts else i
                                           for i in h.heads_after}) for h in w.heads}
        assert got == {(normalise_key(s, "s"), a): (before[s, a], after[s, a])
                       for s, a in SLOTS if before[s, a] != after[s, a]}
        assert {str(b) for b in w.beliefs_gained} == held_after - held
        assert {str(b) for b in w.beliefs_lost} == held - held_after
        assert len(who) == length

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(attribute=st.sampled_from(["price", "owner", "city"]),
          value_type=st.sampled_from([None, "number", "string", "boolean", "date"]),
          elsewhere=st.booleans())
    def declare_type(self, attribute, value_type, elsewhere) -> None:
        """Declare a value type: refused while a stored value (retracted or not; erased
        ones are gone) does not have it; later writes, confirmations and filtered
        candidates are coerced to it, by either handle. A view cannot declare."""
        def has(v: object) -> bool:
            try:
                c = coerce_value(v, value_type)
            except InvalidFact:
                return False
            return (type(c), c) == (type(v), v)

        clash = value_type not in (None, self.types.get(attribute)) and any(
            f.slot[1] == attribute and f.id not in self.ref.erased and not has(f.value)
            for f in self.ref.facts.values())
        try:
            self.view.declare(attribute, value_type=value_type)
        except ScopeError:
            pass
        else:
            raise AssertionError("a view declared")
        try:
            self.writer(None, elsewhere).declare(attribute, value_type=value_type)
        except InvalidFact:
            assert clash
            return
        assert not clash
        self.types[attribute] = value_type

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(attribute=st.sampled_from(["owner", "city"]),
          categories=st.sampled_from([[], ["Lisbon", 1], [" lisbon", 0, "true"], [1, "1"],
                                      ["Lisbon", True]]),
          typed=st.booleans(), elsewhere=st.booleans())
    def declare_categories(self, attribute, categories, typed, elsewhere) -> None:
        """Declare an attribute's categories (``[]`` removes them): later writes,
        confirmations and supposed facts outside them are refused, by either handle;
        filtered candidates are not (they are read, not written). The value type and the
        cardinality stay; ``typed``: the value type is declared again with them."""
        kwargs = {"value_type": self.types.get(attribute)} if typed else {}
        try:
            self.view.declare(attribute, categories=categories, **kwargs)
        except ScopeError:
            pass
        else:
            raise AssertionError("a view declared")
        try:
            self.writer(None, elsewhere).declare(attribute, categories=categories, **kwargs)
        except InvalidFact:
            assert any(isinstance(c, bool) for c in categories), categories
            return
        if categories:
            self.categories[attribute] = {_vk(c) for c in categories}
        else:
            self.categories.pop(attribute, None)

    @precondition(lambda self: hasattr(self, "mem"))
    @rule(lazy=st.booleans())
    def reopen(self, lazy) -> None:
        """Reopen the journal: lazily (the default) or replaying it whole."""
        self.close_other()
        self.mem.close()
        self.mem = self.open_memory(self.path, lazy=lazy)
        self.view = self.mem.scope(SCOPE)

    @precondition(lambda self: hasattr(self, "mem"))
    @rule()
    def export_and_import(self) -> None:
        """An export imported into a new memory answers as the memory does, in both layers
        (ends, sets, erasures, scopes and rules included); importing it again changes
        nothing."""
        out = Path(tempfile.mkdtemp(prefix="tk-export-")) / "m.jsonl"
        try:
            self.mem.export_jsonl(out)
            copy = self.open_memory(None)
            copy.import_jsonl(out)
            copy.import_jsonl(out)
            assert copy.rules() == self.mem.rules() and len(copy) == len(self.mem)
            assert copy.scope(SCOPE).rules() == self.view.rules()
            for mine, theirs in ((self.mem, copy), (self.view, copy.scope(SCOPE))):
                for slot in SLOTS:
                    a, b = mine.current(*slot), theirs.current(*slot)
                    assert (a.status, {f.id for f in a.heads}) == \
                        (b.status, {f.id for f in b.heads}), slot
                    assert [(f.id, f.status, f.value) for f in mine.history(*slot)] == \
                        [(f.id, f.status, f.value) for f in theirs.history(*slot)], slot
                assert [str(x) for x in mine.beliefs()] == [str(x) for x in theirs.beliefs()]
            copy.close()
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)

    @precondition(lambda self: hasattr(self, "mem"))
    @rule()
    def unknown_ids_fail(self) -> None:
        try:
            self.mem.retract("no-such-id", reason="x")
        except UnknownFact:
            return
        raise AssertionError("unknown id accepted")

    @invariant()
    def heads_match_reference(self) -> None:
        """In the unscoped memory (the shared layer) and in the scope's view (the union of
        both layers): heads, filter, status, a set's members and the conflicts."""
        if not hasattr(self, "mem"):
            return
        for who, layers in ((self.mem, SHARED), (self.view, VIEW)):
            for s, a in SLOTS:
                got = {f.id for f in who.current(s, a).heads}
                assert got == self.ref.heads((normalise_key(s, "s"), a), self.now, layers), \
                    (s, a, layers)
            every = [f.id for f in self.ref.facts.values() if f.layer in layers]
            if every:
                result = who.filter(every)
                kept = set(result.kept)
                assert kept == set().union(*(self.ref.kept(slot, self.now, layers)
                                             for slot in SLOTS)), layers
                for d in result.dropped:  # the fact named as the dominator is one
                    if d.rule not in ("retracted", "ended"):
                        by = self.ref.facts[d.dominated_by.id]
                        assert by.id not in self.ref.retracted and by.layer in layers
                        assert self.ref.dominates(by, self.ref.facts[d.item]), (d, layers)
            conflicts = set(who.conflicts())
            for slot in SLOTS:
                status, value = self.ref.status(slot, self.now, layers)
                got = who.current(*slot)
                assert (slot in conflicts) == (got.status == "conflict"), (slot, layers)
                assert got.status == status, (slot, got.status, layers)
                if status == "resolved" and slot[1] == "pets":
                    assert {_vk(v) for v in got.value} == value, (slot, got.value, layers)

    @invariant()
    def as_of_matches_reference(self) -> None:
        """``as_of`` at other valid times (before, at and after the facts' times), in the
        shared layer and in the view."""
        if not hasattr(self, "mem"):
            return
        for who, layers in ((self.mem, SHARED), (self.view, VIEW)):
            for minute in (0, 4, 9, 14):
                t = to_us(at(minute))
                for s, a in SLOTS:
                    got = {f.id for f in who.as_of(s, a, valid_at=at(minute)).heads}
                    assert got == self.ref.heads((normalise_key(s, "s"), a), t, layers), \
                        (s, a, minute, layers)

    @invariant()
    def known_at_answers_as_the_memory_did_then(self) -> None:
        """``as_of(known_at=...)`` at earlier transaction times answers with what was
        recorded by then: the facts, retractions and ends known at that time (the first
        mark and the last three are asked, at the clock's valid time)."""
        if not hasattr(self, "mem"):
            return
        for mark, then in self.marks[:1] + self.marks[-3:]:
            for who, layers in ((self.mem, SHARED), (self.view, VIEW)):
                for s, a in SLOTS:
                    key = (normalise_key(s, "s"), a)
                    if any(f.slot == key and f.id in self.ref.erased
                           for f in then.facts.values()):
                        continue  # an erased fact is gone from every time
                    got = {f.id for f in who.as_of(s, a, valid_at=self.clock(),
                                                   known_at=from_us(mark)).heads}
                    assert got == then.heads(key, self.now, layers), (s, a, layers, mark)
        self.marks.append((now_us(), Reference(
            self.policy, {i: replace(f) for i, f in self.ref.facts.items()},
            set(self.ref.retracted), set(self.ref.erased))))

    @invariant()
    def beliefs_hold_exactly_when_their_rule_body_holds(self) -> None:
        """The shared rules hold over the shared layer, and in the view over both."""
        if not hasattr(self, "mem"):
            return
        for who, layers in ((self.mem, SHARED), (self.view, VIEW)):
            texts = [t for t, layer in self.rules if layer in layers]
            assert who.rules() == list(dict.fromkeys(texts)), layers  # a text once
            expected = sorted(self.beliefs_expected(layers))  # (in the order of the terms,
            assert sorted(str(b) for b in who.beliefs()) == expected, layers  # not texts)

    @invariant()
    def outcomes_count_per_source(self) -> None:
        if not hasattr(self, "mem"):
            return
        got = {r.source: r.n for r in self.mem.reliability() if r.n}
        assert got == {s: n for s, n in self.outcomes.items() if n}


TestMemoryMachine = MemoryMachine.TestCase


class SignedMachine(MemoryMachine):
    """The same machine with the human tier protected: its facts, confirmations, and the
    retractions, ends, erasures and outcomes of its facts are signed by the owner's key,
    or refused with nothing changed."""

    signer = Signer(Ed25519PrivateKey.generate())


TestSignedMachine = SignedMachine.TestCase


class PostgresMachine(MemoryMachine):
    """The same machine on a PostgreSQL journal, a fresh database each run (erasure,
    reopening lazily and whole, scopes and rules on the shared journal's backend)."""

    admin = ""

    def new_journal(self) -> str:
        return new_pg_database(self.admin)

    def drop_journal(self) -> None:
        drop_pg_database(self.admin, self.path)


class PostgresSignedMachine(PostgresMachine):
    """The signed machine on PostgreSQL (its nonces and slot index are that backend's)."""

    signer = SignedMachine.signer


@pytest.mark.parametrize("machine", [PostgresMachine, PostgresSignedMachine],
                         ids=["open", "signed"])
def test_the_machine_on_postgresql(pg_admin: str, machine: type[PostgresMachine]) -> None:
    machine.admin = pg_admin
    n = settings.default.max_examples
    run_state_machine_as_test(machine, settings=settings(
        max_examples=max(10, n // (4 if machine is PostgresMachine else 8)),
        stateful_step_count=30, deadline=None, suppress_health_check=list(HealthCheck)))


INVARIANTS = ("as_of_matches_reference", "beliefs_hold_exactly_when_their_rule_body_holds",
              "heads_match_reference", "known_at_answers_as_the_memory_did_then",
              "outcomes_count_per_source")


def _price(**kwargs: object) -> tuple[str, dict[str, object]]:
    """The machine's ``add`` of acme's price 0 at minute 0 by source s."""
    return ("add", {"layer": None, "member": "cat", "present": False, "slot": ("acme", "price"),
                    "source": "s", "t": 0, "value": 0, **kwargs})


FOUND = {  # steps the machine found failing (2026-12-05), replayed on every run
    "a refused write left the store's clock at its own time": [
        ("move_clock", {"minute": 12}),
        ("declare_type", {"attribute": "price", "elsewhere": False, "value_type": None}),
        _price(elsewhere=True, ends=None, sign=True, sup=None, tier="human"),
        _price(elsewhere=False, ends=1, sign=False, sup=0, tier="verified"),
        ("move_clock", {"minute": 10}),
        ("end", {"elsewhere": False, "k": 0, "minute": 12, "sign": True})],
    "a view's beliefs stopped following writes after a what_if": [
        ("move_clock", {"minute": 12}),
        ("declare_type", {"attribute": "price", "elsewhere": False, "value_type": None}),
        ("toggle_rule", {"elsewhere": False, "layer": None,
                         "text": "priced(S) :- holds(S, price, _)"}),
        _price(elsewhere=True, ends=None, sign=True, sup=None, tier="human"),
        _price(elsewhere=False, ends=1, sign=False, sup=0, tier="unverified"),
        ("move_clock", {"minute": 11}),
        ("what_if_add", {"elsewhere": True, "ends": 1, "layer": "u", "member": "cat",
                         "present": True, "slot": ("ana", "city"), "source": "t", "sup": 8,
                         "t": 3, "tier": "verified", "value": "true"}),
        ("declare_type", {"attribute": "owner", "elsewhere": False, "value_type": "string"}),
        ("what_if_retract", {"elsewhere": True, "k": 32, "layer": "u"})],
    "a view's union read the empty front an erasure left in the shared slot": [
        _price(elsewhere=True, ends=None, sign=True, sup=None, tier="human", present=True),
        ("erase", {"elsewhere": False, "k": 35, "sign": True, "whole_subject": False}),
        ("add", {"elsewhere": False, "ends": None, "layer": "u", "member": "dog",
                 "present": True, "sign": False, "slot": ("acme", "price"), "source": "t",
                 "sup": None, "t": 2, "tier": "agent", "value": False}),
        _price(elsewhere=False, ends=None, sign=False, sup=None, tier="unverified",
               source="t", t=5, value=1.0)],
    "a candidate restating a value whose fact had ended was kept": [
        ("move_clock", {"minute": 12}),
        _price(elsewhere=False, ends=2, sign=False, sup=None, tier="agent"),
        ("filter_candidates", {"cands": [(("acme", "price"), 0, 1, "agent", "cat")],
                               "layer": None})],
    "a key added twice lost the span it signed in, and a lazy read refused the journal": [
        ("deputy_key", {"add": True, "elsewhere": True}),
        ("add", {"by_deputy": True, "elsewhere": False, "ends": None, "layer": None,
                 "member": "cat", "present": False, "sign": True, "slot": ("acme", "price"),
                 "source": "s", "sup": None, "t": 0, "tier": "human", "value": 0}),
        ("deputy_key", {"add": True, "elsewhere": False}),
        ("reopen", {"lazy": True})],
    "a view's signed confirmation could not label the shared protected head it shows": [
        ("confirm", {"elsewhere": False, "layer": None, "member": "cat", "sign": True,
                     "slot": ("acme", "price"), "value": 0}),
        ("confirm", {"elsewhere": False, "layer": "u", "member": "cat", "sign": True,
                     "slot": ("acme", "price"), "value": 0}),
        ("reopen", {"lazy": False})],
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_what_the_machine_found_stays_fixed(name: str) -> None:
    """Each failing run the state machine found, as explicit steps with every invariant
    checked after each (the signed machine, temporal policy)."""
    m = SignedMachine()
    try:
        m.setup(policy="temporal")
        for step, kwargs in FOUND[name]:
            getattr(m, step)(**kwargs)
            for check in INVARIANTS:
                getattr(m, check)()
    finally:
        m.teardown()

"""The Memory as a state machine, against the pure-Python reference model of the policies."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from truthkeeper import InvalidFact, Memory, SupersessionError, UnknownFact
from truthkeeper.values import normalise_key, to_us

from .reference import Reference, RFact
from .strategies import at, policies, tiers

SLOTS = [("acme", "price"), ("acme", "owner"), ("ana", "city")]


class MemoryMachine(RuleBasedStateMachine):
    @initialize(policy=policies)
    def setup(self, policy: str) -> None:
        self.mem = Memory(policy=policy, protected_tiers=())
        self.ref = Reference(policy)

    def teardown(self) -> None:
        if hasattr(self, "mem"):
            self.mem.close()

    @rule(slot=st.sampled_from(SLOTS), value=st.integers(0, 3), t=st.integers(0, 20),
          tier=tiers, sup=st.one_of(st.none(), st.integers(0, 50)))
    def add(self, slot, value, t, tier, sup) -> None:
        ids = list(self.ref.facts)
        target = ids[sup % len(ids)] if (sup is not None and ids) else None
        probe = RFact("?", slot, value, to_us(at(t)), 0, tier, target)
        problem = self.ref.link_problem(probe)
        try:
            f = self.mem.add(slot[0], slot[1], value, source="s", tier=tier, valid_from=at(t),
                             supersedes=target)
        except SupersessionError as exc:
            assert problem in ("cross_slot", "lower_tier"), (problem, exc)
            return
        assert problem is None
        self.ref.facts[f.id] = RFact(f.id, slot, value, to_us(f.valid_from),
                                     to_us(f.recorded_at), tier, target)

    @precondition(lambda self: bool(getattr(self, "ref", None) and self.ref.facts))
    @rule(k=st.integers(0, 50))
    def retract(self, k) -> None:
        fid = list(self.ref.facts)[k % len(self.ref.facts)]
        if fid in self.ref.retracted:
            try:
                self.mem.retract(fid, reason="again")
            except InvalidFact:
                return
            raise AssertionError("retracting twice must fail")
        self.mem.retract(fid, reason="test")
        self.ref.retracted.add(fid)

    @rule()
    def unknown_ids_fail(self) -> None:
        try:
            self.mem.retract("no-such-id", reason="x")
        except UnknownFact:
            return
        raise AssertionError("unknown id accepted")

    @invariant()
    def heads_match_reference(self) -> None:
        if not hasattr(self, "mem"):
            return
        for s, a in SLOTS:
            got = {f.id for f in self.mem.current(s, a).heads}
            assert got == self.ref.heads((normalise_key(s, "s"), a)), (s, a)
        every = list(self.ref.facts)
        if every:
            kept = set(self.mem.filter(every).kept)
            assert kept == set().union(*(self.ref.heads(slot) for slot in SLOTS))
        conflicts = set(self.mem.conflicts())
        for slot in SLOTS:
            heads = self.ref.heads(slot)
            values = {self.ref.facts[h].value for h in heads}
            assert (slot in conflicts) == (len(values) > 1)


TestMemoryMachine = MemoryMachine.TestCase

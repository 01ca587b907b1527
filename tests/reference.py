"""A small pure-Python reference model of the store and the three policies.

It follows DESIGN.md literally and quadratically; the tests check the Prolog layer against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from truthkeeper.values import value_key

TIERS = ("human", "verified", "agent", "unverified")
RANK = {t: len(TIERS) - i for i, t in enumerate(TIERS)}


@dataclass
class RFact:
    id: str
    slot: tuple[str, str]
    value: object
    vf: int
    ra: int
    tier: str
    supersedes: str | None = None
    source: str = "s"
    many: bool = False  # a claim about a set's member: in (present) or left
    present: bool = True
    vt: int | None = None  # valid_to: no longer true from then
    layer: str | None = None  # a scope's, or None: the shared layer's


SHARED: tuple[str | None, ...] = (None,)
"""The layers the unscoped memory sees; a scope's view sees ``(None, scope)``."""


def key(f: RFact) -> object:
    """What the policies compare: the value, or of a set's claim the member and presence."""
    return ("m", _vk(f.value), f.present) if f.many else _vk(f.value)


def _vk(v: object) -> object:
    k = value_key(v)
    return tuple(k) if isinstance(k, list) else k


def newer(f: RFact, g: RFact) -> bool:
    """Later valid time; at equal valid times only a later restatement by the same source."""
    return f.vf > g.vf or (f.vf == g.vf and f.source == g.source and f.ra > g.ra)


def policy_dominates(policy: str, f: RFact, g: RFact) -> bool:
    if key(f) == key(g):
        return False
    if f.many and g.many and _vk(f.value) != _vk(g.value):
        return False  # claims about two members of a set never conflict
    rf, rg = RANK[f.tier], RANK[g.tier]
    # a confirmation dominates every fact of a lower rank whatever the times, and no fact
    # of a lower rank dominates it
    if rf > rg and f.source.startswith("confirmation:"):
        return True
    if rf < rg and g.source.startswith("confirmation:"):
        return False
    if policy == "temporal":
        return newer(f, g)
    if policy == "temporal_within_authority":
        return newer(f, g) and rf >= rg
    return rf > rg or (rf == rg and newer(f, g))


@dataclass
class Reference:
    policy: str
    facts: dict[str, RFact] = field(default_factory=dict)
    retracted: set[str] = field(default_factory=set)
    erased: set[str] = field(default_factory=set)  # also retracted

    def dominates(self, f: RFact, g: RFact) -> bool:
        if f.supersedes == g.id:
            return True
        if g.supersedes == f.id:
            return False
        return policy_dominates(self.policy, f, g)

    def live(self, slot: tuple[str, str], now: int | None = None,
             layers: tuple[str | None, ...] = SHARED) -> list[RFact]:
        """The slot's facts in ``layers`` not retracted, and begun by ``now`` (None: every
        one)."""
        return [f for f in self.facts.values() if f.slot == slot and f.id not in self.retracted
                and f.layer in layers and (now is None or f.vf <= now)]

    def heads(self, slot: tuple[str, str], now: int | None = None,
              layers: tuple[str | None, ...] = SHARED) -> set[str]:
        """The facts begun by ``now`` that none of them dominates, less those ended by
        then (the facts an ended one dominates stay dominated)."""
        live = self.live(slot, now, layers)
        return {f.id for f in live if not any(g is not f and self.dominates(g, f) for g in live)
                and (now is None or f.vt is None or f.vt > now)}

    def status(self, slot: tuple[str, str], now: int | None = None,
               layers: tuple[str | None, ...] = SHARED) -> tuple[str, object]:
        """A slot's status and value: of a set, the value keys of the members it holds
        (a member is contested when its heads say both in and left)."""
        heads = [self.facts[h] for h in self.heads(slot, now, layers)]
        if not heads:  # a set something was said of: every member left, ended or is to come
            said = self.live(slot, None, layers)
            return ("resolved", set()) if said and said[0].many else ("unknown", None)
        if not heads[0].many:
            resolved, value = self.holds(slot, now, layers)
            return ("resolved", value) if resolved else ("conflict", None)
        said = {(_vk(f.value), f.present) for f in heads}
        contested = {m for m, p in said if p and (m, False) in said}
        if contested:
            return "conflict", None
        return "resolved", {m for m, p in said if p}

    def kept(self, slot: tuple[str, str], now: int,
             layers: tuple[str | None, ...] = SHARED) -> set[str]:
        """What ``filter`` keeps of the slot's facts: its heads, and the facts still to
        begin that no live fact dominates (not stale: not current yet)."""
        live = self.live(slot, None, layers)
        return self.heads(slot, now, layers) | {
            f.id for f in live
            if f.vf > now and not any(g is not f and self.dominates(g, f) for g in live)}

    def holds(self, slot: tuple[str, str], now: int | None = None,
              layers: tuple[str | None, ...] = SHARED) -> tuple[bool, object]:
        """(resolved, value key) of a slot: resolved when its heads hold one value."""
        keys = {_vk(self.facts[h].value) for h in self.heads(slot, now, layers)}
        return (True, keys.pop()) if len(keys) == 1 else (False, None)

    def link_problem(self, f: RFact) -> str | None:
        if f.supersedes is None:
            return None
        g = self.facts.get(f.supersedes)
        if g is None or g.layer not in (None, f.layer):  # another scope's: no fact here
            return "unknown"
        if g.id in self.erased:  # gone: a new fact cannot supersede it
            return "erased"
        if g.slot != f.slot or g.layer != f.layer:  # links stay within a layer
            return "cross_slot"
        if RANK[f.tier] < RANK[g.tier]:
            return "lower_tier"
        return None


def phi_reference(cands: list[tuple[tuple[str, str], object, int]]) -> set[int]:
    """Indices Phi_T drops: a candidate with a strictly newer, conflicting one in its slot."""
    out = set()
    for i, (slot, v, t) in enumerate(cands):
        for j, (slot2, v2, t2) in enumerate(cands):
            if i != j and slot2 == slot and _vk(v2) != _vk(v) and t2 > t:
                out.add(i)
                break
    return out


def phi_policy_reference(policy: str,
                         cands: list[tuple[tuple[str, str], object, int, str]]) -> set[int]:
    """Indices the policy's filter drops (ties in time dominate neither way)."""
    out = set()
    for i, (slot, v, t, tier) in enumerate(cands):
        for j, (slot2, v2, t2, tier2) in enumerate(cands):
            if i == j or slot2 != slot or _vk(v2) == _vk(v):
                continue
            r2, r = RANK[tier2], RANK[tier]
            newer_ = t2 > t
            if policy == "temporal":
                hit = newer_
            elif policy == "temporal_within_authority":
                hit = newer_ and r2 >= r
            else:
                hit = r2 > r or (r2 == r and newer_)
            if hit:
                out.add(i)
                break
    return out


def phi_store_reference(ref: Reference, cands: list[tuple[tuple[str, str], object, int, str]],
                        now: int, layers: tuple[str | None, ...] = SHARED) -> set[int]:
    """Indices ``filter`` drops of retrieved candidates ``(slot, value, valid from, tier)``
    read in ``layers``: another candidate of the slot dominates it, or a head of the slot
    (of the union of the layers, at ``now``) does, or its value ended: no head holds it,
    and a live fact of the slot that held it ended at or before ``now`` and after the
    candidate began, that end (a claim at the valid_to, by the fact's source and tier,
    that the value left) dominating it. A candidate has no recording time, so no tie in
    time dominates it (each is its own source)."""
    recs = [RFact(f"#{i}", slot, v, t, -1, tier, None, f"\x00candidate{i}", slot[1] == "pets")
            for i, (slot, v, t, tier) in enumerate(cands)]
    out = set()
    for i, c in enumerate(recs):
        rivals = [r for j, r in enumerate(recs) if j != i and r.slot == c.slot]
        rivals += [ref.facts[h] for h in ref.heads(c.slot, now, layers)]
        if any(policy_dominates(ref.policy, r, c) for r in rivals):
            out.add(i)
        elif key(c) not in {key(ref.facts[h]) for h in ref.heads(c.slot, now, layers)}:
            ends = [RFact(f.id, f.slot, f.value, f.vt, f.ra, f.tier, None, f.source, True,
                          present=False)
                    for f in ref.live(c.slot, None, layers)
                    if key(f) == key(c) and f.vt is not None and c.vf < f.vt <= now]
            if any(policy_dominates(ref.policy, e, c) for e in ends):
                out.add(i)
    return out


def disputes_reference(ref: Reference, cands: list[tuple[tuple[str, str], object, int, str]],
                       now: int, layers: tuple[str | None, ...], kept: set[int],
                       ) -> dict[int, set[str]]:
    """``{candidate index: head ids}`` that ``filter`` reports disputed: a kept candidate
    and the heads of its slot (as ``phi_store_reference`` reads them; of a set, about its
    member) that no candidate of the context dominates, when none of those heads holds the
    candidate's value."""
    recs = [RFact(f"#{i}", slot, v, t, -1, tier, None, f"\x00candidate{i}", slot[1] == "pets")
            for i, (slot, v, t, tier) in enumerate(cands)]
    out: dict[int, set[str]] = {}
    for i in kept:
        c = recs[i]
        free = [h for h in ref.heads(c.slot, now, layers)
                if not (c.many and _vk(ref.facts[h].value) != _vk(c.value))
                and not any(r.slot == c.slot and policy_dominates(ref.policy, r, ref.facts[h])
                            for r in recs)]
        if free and all(key(ref.facts[h]) != key(c) for h in free):
            out[i] = set(free)
    return out

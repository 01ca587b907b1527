"""Hypothesis properties of supersession and Phi_T (DESIGN.md, Invariants)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from truthkeeper import Candidate, Memory
from truthkeeper.testing import at, attributes, offsets, policies, sources, subjects, tiers, values
from truthkeeper.values import normalise_key, parse_time, to_us

from .reference import RFact, phi_reference


@given(policy=policies, tier=tiers, subject=subjects, attribute=attributes,
       vals=st.lists(values, min_size=3, max_size=3, unique_by=lambda v: repr(v)),
       order=st.permutations([0, 1, 2]))
def test_chain_collapses_in_every_insertion_order(policy, tier, subject, attribute, vals,
                                                  order) -> None:
    from truthkeeper.values import value_key

    keys = [value_key(v) for v in vals]
    if len({repr(k) for k in keys}) < 3:  # values equal after normalisation corroborate
        return
    with Memory(policy=policy, protected_tiers=()) as mem:
        ids = {}
        for i in order:
            ids[i] = mem.add(subject, attribute, vals[i], source="s", tier=tier,
                             valid_from=at(10 * i)).id
        r = mem.current(subject, attribute)
        assert [f.id for f in r.heads] == [ids[2]]
        assert r.value == vals[2]
        assert [f.id for f in mem.history(subject, attribute)] == [ids[0], ids[1], ids[2]]


cands = st.lists(st.tuples(subjects, st.sampled_from(["price", "city"]), values, offsets),
                 min_size=0, max_size=25)


def _candidates(raw):
    return [Candidate(s, a, v, at(t)) for s, a, v, t in raw]


def _dropped(mem: Memory, items) -> set[int]:
    res = mem.filter(items)
    gone = {id(d.item) for d in res.dropped}
    return {i for i, c in enumerate(items) if id(c) in gone}


@given(raw=cands, perm_seed=st.randoms(use_true_random=False))
def test_phi_t_matches_definition_is_idempotent_and_order_independent(raw, perm_seed) -> None:
    with Memory(policy="temporal") as mem:
        items = _candidates(raw)
        slots = [(normalise_key(s, "s"), a) for s, a, _, _ in raw]
        expected = phi_reference([(slots[i], raw[i][2], raw[i][3]) for i in range(len(raw))])
        dropped = _dropped(mem, items)
        assert dropped == expected
        kept = [c for i, c in enumerate(items) if i not in dropped]
        assert _dropped(mem, kept) == set()  # idempotent
        perm = list(range(len(items)))
        perm_seed.shuffle(perm)
        shuffled = [items[i] for i in perm]
        assert {perm[i] for i in _dropped(mem, shuffled)} == dropped  # order-independent


def _same_slot(x: tuple, y: tuple) -> bool:
    return normalise_key(x[0], "s") == normalise_key(y[0], "s") and x[1] == y[1]


def _differ(v: object, w: object) -> bool:
    from truthkeeper.values import value_key

    return repr(value_key(v)) != repr(value_key(w))


def _temporal_drops(raw) -> set[int]:
    with Memory(policy="temporal") as mem:
        return _dropped(mem, _candidates(raw))


@given(raw=cands)
def test_no_fact_without_a_conflicting_newer_fact_is_dropped(raw) -> None:
    dropped = _temporal_drops(raw)
    for i, x in enumerate(raw):
        if not any(_same_slot(x, y) and _differ(x[2], y[2]) and y[3] > x[3] for y in raw):
            assert i not in dropped


@given(raw=cands)
def test_newest_fact_drops_every_older_conflicting_fact(raw) -> None:
    dropped = _temporal_drops(raw)
    for x in raw:
        same = [j for j, y in enumerate(raw) if _same_slot(x, y)]
        if x[3] == max(raw[j][3] for j in same):
            for j in same:
                if raw[j][3] < x[3] and _differ(raw[j][2], x[2]):
                    assert j in dropped


@given(policy=policies,
       ops=st.lists(st.tuples(st.sampled_from(["add", "add", "add", "retract"]), subjects,
                              values, offsets, tiers), min_size=1, max_size=15),
       cut=st.integers(0, 15))
def test_as_of_known_at_equals_a_store_that_saw_only_earlier_events(policy, ops, cut) -> None:
    with Memory(policy=policy, protected_tiers=()) as live:
        log = []  # (kind, payload, recorded_at)
        for kind, subject, value, t, tier in ops:
            if kind == "add":
                f = live.add(subject, "price", value, source=tier, tier=tier, valid_from=at(t))
                log.append(("add", f, f.recorded_at))
            else:
                heads = live.current(subject, "price").heads
                if heads:
                    live.retract(heads[0].id, reason="test")
                    log.append(("retract", heads[0].id, live._ledger.last_ra))
        cut = min(cut, len(log))
        if cut == 0:
            return
        known_at = log[cut - 1][2]
        from truthkeeper.values import from_us

        known_dt = known_at if not isinstance(known_at, int) else from_us(known_at)
        with Memory(policy=policy, protected_tiers=()) as replay:
            for kind, payload, _ in log[:cut]:
                if kind == "add":
                    replay.add_many([payload])
                else:
                    replay.retract(payload, reason="test")
            for subject in {normalise_key(op[1], "s") for op in ops}:
                past = live.as_of(subject, "price", known_at=known_dt)
                now = replay.current(subject, "price")
                assert {f.id for f in past.heads} == {f.id for f in now.heads}
                assert past.status == now.status


def test_all_insertion_orders_of_a_mixed_tier_slot_agree() -> None:
    specs = [(1, "verified", 1), (2, "agent", 2), (3, "human", 3), (2, "agent", 4)]
    for policy in ("temporal", "authority_first", "temporal_within_authority"):
        seen = set()
        for order in itertools.permutations(range(len(specs))):
            with Memory(policy=policy, protected_tiers=()) as mem:
                got = {}
                for i in order:
                    v, tier, t = specs[i]
                    got[mem.add("s", "a", v, source=tier, tier=tier, valid_from=at(t)).id] = i
                seen.add(frozenset(got[f.id] for f in mem.current("s", "a").heads))
        assert len(seen) == 1, (policy, seen)


@given(policy=policies,
       raw=st.lists(st.tuples(subjects, st.sampled_from(["price", "city"]), values, offsets,
                              tiers), min_size=0, max_size=25))
def test_filter_matches_each_policy_definition(policy, raw) -> None:
    from .reference import phi_policy_reference

    with Memory(policy=policy, protected_tiers=()) as mem:
        items = [Candidate(s, a, v, at(t), tier=tier) for s, a, v, t, tier in raw]
        expected = phi_policy_reference(
            policy, [((normalise_key(s, "s"), a), v, t, tier) for s, a, v, t, tier in raw])
        assert _dropped(mem, items) == expected


@given(policy=policies,
       claims=st.lists(st.tuples(sources, values, tiers), min_size=1, max_size=8),
       order=st.randoms(use_true_random=False))
def test_equal_valid_times_are_decided_by_source_never_by_recording_order(policy, claims,
                                                                          order) -> None:
    """At one valid time, a source's later restatement corrects its earlier one; claims of
    different sources stay heads together whatever order they were recorded in."""
    from .reference import Reference, RFact

    heads = []
    for _ in range(2):
        shuffled = list(claims)
        order.shuffle(shuffled)
        with Memory(policy=policy, protected_tiers=()) as mem:
            ref = Reference(policy)
            for src0, v, tier in shuffled:
                src = f"{src0}:{tier}"  # a source name keeps one tier
                f = mem.add("x", "a", v, source=src, tier=tier, valid_from=at(5))
                ref.facts[f.id] = RFact(f.id, ("x", "a"), v, to_us(f.valid_from),
                                        to_us(f.recorded_at), tier, None, src)
            got = mem.current("x", "a")
            assert {f.id for f in got.heads} == ref.heads(("x", "a"))
            heads.append(sorted((f.source, repr(f.value)) for f in got.heads))
            if policy == "temporal":  # ranks play no part: one head per source, its last claim
                last = {f"{src}:{tier}": repr(v) for src, v, tier in shuffled}
                assert {s for s, _ in heads[-1]} == set(last)


@given(policy=policies,
       raw=st.lists(st.tuples(subjects, st.sampled_from(["price", "city"]), values, offsets,
                              tiers), min_size=0, max_size=15))
def test_kappa_that_compares_values_equals_the_policy_filter(policy, raw) -> None:
    """Under every policy, a kappa that says "the values differ" drops exactly what the
    built-in filter drops, and is never asked about a pair the policy cannot order."""
    from .reference import RANK

    with Memory(policy=policy, protected_tiers=()) as mem:
        items = [Candidate(s, a, v, at(t), tier=tier) for s, a, v, t, tier in raw]
        asked = []

        def kappa(newer: Candidate, older: Candidate) -> bool:
            asked.append((newer, older))
            return _differ(newer.value, older.value)

        res = mem.filter(items, kappa=kappa)
        gone = {id(d.item) for d in res.dropped}
        assert {i for i, c in enumerate(items) if id(c) in gone} == _dropped(mem, items)
        for n, o in asked:
            tn, to = parse_time(n.valid_from, "t"), parse_time(o.valid_from, "t")
            rn, ro = RANK[n.tier], RANK[o.tier]
            assert normalise_key(n.subject, "s") == normalise_key(o.subject, "s")
            ok = {"temporal": tn > to, "temporal_within_authority": tn > to and rn >= ro,
                  "authority_first": rn > ro or (rn == ro and tn > to)}[policy]
            assert ok, (policy, n, o)


@given(value=st.one_of(st.text(), st.integers(-(2**63), 2**63 - 1), values),
       text=st.one_of(st.none(), st.text(max_size=5)),
       meta=st.one_of(st.just({}), st.dictionaries(st.text(max_size=3), st.integers(),
                                                   max_size=2)),
       present=st.booleans())
def test_a_facts_stored_texts_are_the_canonical_json_of_its_fields(value, text, meta,
                                                                    present) -> None:
    """The payload the store keeps and the journal body are exactly the canonical JSON of
    the fact's fields (their common case is built without the general encoder)."""
    from dataclasses import replace

    from truthkeeper.journal.codec import canonical, fact_body, payload, unpayload

    with Memory() as mem:
        f = replace(mem.add("ana", "x", value, source="s", text=text, meta=meta),
                    present=present)
        assert payload(f) == canonical([value, text, meta, None,
                                        *([] if present else ["absent"])])
        assert unpayload(payload(f)) == (value, text, meta, None, present)
        body = f.to_dict()
        del body["recorded_at"], body["signature"]
        assert canonical(fact_body(f, "salt")) == canonical({**body, "salt": "salt"})


@given(st.text(alphabet=st.characters(max_codepoint=127), min_size=1, max_size=40))
def test_an_ascii_key_or_value_folds_as_the_unicode_rule_does(text: str) -> None:
    """ASCII keys and str values take a shorter path (lower and split) than the general
    rule (NFC, casefold, runs of whitespace collapsed): the same key, or the same refusal."""
    import re
    import unicodedata

    from truthkeeper.errors import InvalidFact
    from truthkeeper.keys import _normalise_key, value_key

    rule = re.sub(r"\s+", " ", unicodedata.normalize("NFC", text).casefold()).strip()
    if not rule:
        assert value_key(text) == ""  # a value may be blank; a key may not
        try:
            _normalise_key(text, "subject")
        except InvalidFact:
            return
        raise AssertionError(f"{text!r} normalised to a key")
    assert _normalise_key(text, "subject") == rule
    assert value_key(text) == rule  # a str value's key folds the same way


@given(policy=policies,
       claims=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 4), st.integers(0, 2),
                                 tiers), min_size=9, max_size=40),
       drop=st.integers(0, 39))
def test_many_claims_tied_in_time_resolve_as_each_checked_against_every_other(
        policy, claims, drop) -> None:
    """A slot with many claims at a few valid times (a frontier of more than eight records,
    checked group by group of one time and tier: policies:front_dominated/3) has the heads
    of the definition, read first after a bulk load, after a retraction, and as of a time."""
    with Memory(policy=policy, protected_tiers=()) as mem:
        facts, ref = _loaded(mem, policy, ("x", "a"), [(t, v, src, tier)
                                                       for src, v, t, tier in claims])
        assert {f.id for f in mem.current("x", "a").heads} == ref.heads(("x", "a"))
        gone = facts[drop % len(facts)].id
        mem.retract(gone, reason="test")
        ref.retracted.add(gone)
        assert {f.id for f in mem.current("x", "a").heads} == ref.heads(("x", "a"))
        when = to_us(parse_time(at(1), "t"))
        assert {f.id for f in mem.as_of("x", "a", valid_at=at(1)).heads} == \
            ref.heads(("x", "a"), when)


@given(policy=policies,
       raw=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2), tiers,
                              st.sampled_from([None, "s1", "s2", "s3"])),
                    min_size=9, max_size=60))
def test_filter_of_many_claims_tied_in_time_matches_each_policy_definition(policy,
                                                                            raw) -> None:
    """Many candidates of one slot at a few valid times (a poll): their frontier is grouped
    by time and rank (before, each was checked against every other: 20,000 tied
    candidates took 309 s); the drops are the policy's, and each names a dominator."""
    from .reference import RANK, phi_policy_reference

    with Memory(policy=policy, protected_tiers=()) as mem:
        items = [Candidate("poll", "answer", v, at(t), tier=tier, source=src)
                 for v, t, tier, src in raw]
        expected = phi_policy_reference(
            policy, [(("poll", "answer"), v, t, tier) for v, t, tier, _ in raw])
        res = mem.filter(items)
        where = {id(c): i for i, c in enumerate(items)}
        assert {where[id(d.item)] for d in res.dropped} == expected
        for d in res.dropped:  # the dominator named dominates it
            (v, t, tier, _), (v2, t2, tier2, _) = raw[where[id(d.item)]], \
                raw[where[id(d.dominated_by)]]
            r, r2 = RANK[tier], RANK[tier2]
            assert v2 != v and {"temporal": t2 > t,
                                "temporal_within_authority": t2 > t and r2 >= r}.get(
                policy, r2 > r or (r2 == r and t2 > t))


@given(policy=policies,
       claims=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 2), st.integers(0, 1),
                                 tiers), min_size=3, max_size=40))
def test_stored_facts_whose_value_returns_are_dropped_for_a_fact_that_dominates_them(
        policy, claims) -> None:
    """A slot whose value returns to an earlier one (a status: 0, 1, 0, ...): a fact of the
    head's value that no head dominates is dropped by ``filter`` for a live fact that
    dominates it (named by one sweep of the slot for all the ids of a call; before, each
    scanned the slot: filter of 4,000 such facts took 4 s), and ``graph`` draws that
    fact's edge into it."""
    with Memory(policy=policy, protected_tiers=()) as mem:
        facts, ref = _loaded(mem, policy, ("bot", "status"), claims)
        res = mem.filter([f.id for f in facts])
        assert set(res.kept) == ref.heads(("bot", "status"))
        edges = {(u, v) for u, v, k in mem.graph().edges(data="kind") if k == "supersedes"}
        for d in res.dropped:
            assert ref.dominates(ref.facts[d.dominated_by.id], ref.facts[d.item]), d
            assert (d.dominated_by.id, d.item) in edges
        assert len(edges) == len(res.dropped)


@given(policy=policies,
       claims=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(0, 2),
                                 tiers), min_size=2, max_size=30),
       one_by_one=st.booleans())
def test_many_sources_agreeing_keep_the_heads_of_the_definition(policy, claims,
                                                                 one_by_one) -> None:
    """Sources that mostly agree (two values, a few times, a source correcting itself at
    one time): a slot's frontier keeps the newest record of each of its two newest values
    with their ties, not every agreeing record (4,000 agreeing sources: a first read took
    20 s); its heads, read after a bulk load or kept up write by write, are the
    definition's."""
    from .reference import Reference

    with Memory(policy=policy, protected_tiers=()) as mem:
        ref = Reference(policy)
        rows = [{"subject": "hq", "attribute": "city", "value": v,
                 "source": f"s{src}:{tier}", "tier": tier, "valid_from": at(t)}
                for t, v, src, tier in claims]
        if one_by_one:
            mem.current("hq", "city")  # a derived slot: each write updates its frontier
            facts = []
            for r in rows:
                facts += mem.add_many([r])
                assert {f.id for f in mem.current("hq", "city").heads} == _heads(ref, facts)
        else:
            facts = mem.add_many(rows)
        assert {f.id for f in mem.current("hq", "city").heads} == _heads(ref, facts)


def _heads(ref, facts) -> set[str]:
    from .reference import RFact

    for f in facts:
        ref.facts[f.id] = RFact(f.id, ("hq", "city"), f.value, to_us(f.valid_from),
                                to_us(f.recorded_at), f.tier, None, f.source)
    return ref.heads(("hq", "city"))


def test_a_record_tied_with_the_newest_of_its_value_stays_a_possible_dominator() -> None:
    """At one valid time a source says v2 and then corrects itself to v1, and another source
    then says v1 too: the correction dominates v2 (same time, same source, recorded later)
    although the newest record of v1 is the other source's, which does not: the frontier
    keeps every record tied in time with the newest of its value."""
    for policy in ("temporal", "temporal_within_authority", "authority_first"):
        with Memory(policy=policy) as mem:
            wrong = mem.add("hq", "city", "Porto", source="b", valid_from=at(1))
            fixed = mem.add("hq", "city", "Lisbon", source="b", valid_from=at(1))
            other = mem.add("hq", "city", "Lisbon", source="a", valid_from=at(1))
            mem.add("hq", "city", "Lisbon", source="c", valid_from=at(0))
            r = mem.current("hq", "city")
            assert (r.status, {f.id for f in r.heads}) == ("resolved", {fixed.id, other.id})
            assert mem.filter([wrong.id]).dropped[0].dominated_by == fixed


@given(policy=policies,
       claims=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2), st.integers(0, 2),
                                 st.none() | st.integers(0, 39)), min_size=3, max_size=40),
       confirm=st.none() | st.integers(0, 2))
def test_filter_names_a_dominator_in_slots_with_links_or_a_confirmation(policy, claims,
                                                                       confirm) -> None:
    """A slot whose value returns, with explicit links to earlier facts and perhaps a
    confirmation: ``filter`` of all its facts keeps the definition's heads, and each drop
    names a live fact that dominates it, found in the front the slot keeps where it holds
    one (before, each fact that no head dominates scanned the slot: 4,000 facts took 4 s)."""
    from .reference import Reference, RFact

    with Memory(policy=policy) as mem:
        facts = []
        for t, v, src, link in claims:
            sup = facts[link % len(facts)].id if link is not None and facts else None
            facts.append(mem.add("x", "a", v, source=f"s{src}", valid_from=at(t),
                                 supersedes=sup))
        if confirm is not None:
            mem.confirm("x", "a", confirm)
        ref = Reference(policy)
        for f in mem.history("x", "a"):
            ref.facts[f.id] = RFact(f.id, ("x", "a"), f.value, to_us(f.valid_from),
                                    to_us(f.recorded_at), f.tier, f.supersedes, f.source)
        every = [f.id for f in mem.history("x", "a")]
        res = mem.filter(every)
        assert set(res.kept) == ref.heads(("x", "a"))
        for d in res.dropped:
            assert ref.dominates(ref.facts[d.dominated_by.id], ref.facts[d.item]), d


def _loaded(mem, policy, slot, claims):
    """The claims (time, value, source, tier) added to the slot in one call, and the
    reference model holding the facts made."""
    from .reference import Reference, RFact

    ref = Reference(policy)
    facts = mem.add_many([{"subject": slot[0], "attribute": slot[1], "value": v,
                           "source": f"s{src}:{tier}", "tier": tier, "valid_from": at(t)}
                          for t, v, src, tier in claims])
    for f in facts:
        ref.facts[f.id] = RFact(f.id, slot, f.value, to_us(f.valid_from),
                                to_us(f.recorded_at), f.tier, None, f.source)
    return facts, ref


@given(policy=policies,
       claims=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 5),
                                 tiers), min_size=3, max_size=30),
       gone=st.sets(st.integers(0, 29), min_size=1, max_size=6))
def test_erasing_some_facts_of_a_slot_leaves_the_heads_of_the_rest(policy, claims,
                                                                    gone) -> None:
    """An erasure makes the slot stale before its retractions (one derivation when next
    read, not one for each erased fact): the heads after it are the definition's over the
    facts left, read at once and after another write."""
    with Memory(policy=policy, protected_tiers=()) as mem:
        facts, ref = _loaded(mem, policy, ("x", "a"), claims)
        mem.current("x", "a")
        ids = {facts[i % len(facts)].id for i in gone}
        mem.erase(ids)
        ref.retracted |= ids
        assert {f.id for f in mem.current("x", "a").heads} == ref.heads(("x", "a"))
        more, _ = _loaded(mem, policy, ("x", "a"), [(2, 1, 9, "agent")])
        ref.facts.update({f.id: RFact(f.id, ("x", "a"), f.value, to_us(f.valid_from),
                                      to_us(f.recorded_at), f.tier, None, f.source)
                          for f in more})
        assert {f.id for f in mem.current("x", "a").heads} == ref.heads(("x", "a"))

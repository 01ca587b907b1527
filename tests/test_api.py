"""The Memory API: behaviour a user checks, bad input, no change on error."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import networkx as nx
import pytest

import truthkeeper
from truthkeeper import (
    Belief,
    Candidate,
    CrossSlotSupersession,
    InvalidFact,
    Memory,
    PolicyError,
    SupersessionCycle,
    TierInversion,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
    UnsafeRule,
)

T = "2026-11-{:02d}T10:00:00Z".format


def test_public_surface() -> None:
    assert set(truthkeeper.__all__) == {
        "Alternative", "AuditEntry", "Belief", "Candidate", "CrossSlotSupersession",
        "Decision", "Dispute", "Drop", "Fact",
        "FilterResult", "HeadChange", "InvalidFact", "JournalCorrupt", "JournalError",
        "Justification", "Memory", "Policy", "PolicyError", "PrologBridgeError", "Resolution",
        "RuleEvaluationError", "RuleWarning", "ScopeError", "Signer", "Similarity",
        "SourceReliability", "SupersessionCycle", "SupersessionError", "TierInversion",
        "TierNotAuthorized",
        "TruthkeeperError", "UnknownFact", "UnknownRule", "UnsafeRule", "Utility", "ValueSupport",
        "Verification", "WhatIf", "policies",
    }
    assert truthkeeper.__all__ == sorted(truthkeeper.__all__)


# what a call is about may be passed by position; a setting (a defaulted argument) may not
PRIMARY = {"Memory.slots": {"subject"}, "Memory.erase": {"fact_ids"}}
RECORDS = {"Alternative", "AuditEntry", "Decision", "Fact", "FilterResult", "Justification",
           "PrologBridgeError", "Resolution", "ValueSupport"}  # built by truthkeeper


def test_settings_are_keyword_only() -> None:
    """Every defaulted argument of Memory's methods, of the public functions and of the
    classes a user builds (Candidate, Policy, Similarity, Utility) is keyword-only."""
    import inspect

    targets = [(f"Memory.{n}", f) for n, f in inspect.getmembers(Memory)
               if not n.startswith("_") and inspect.isfunction(f)]
    targets += [(n, getattr(truthkeeper, n)) for n in truthkeeper.__all__
                if n not in RECORDS and n != "Memory"
                and callable(getattr(truthkeeper, n))
                and not (inspect.isclass(getattr(truthkeeper, n))
                         and issubclass(getattr(truthkeeper, n), Exception))]
    positional = {}
    for name, obj in targets:
        try:
            params = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            continue
        loose = {p.name for p in params if p.default is not p.empty
                 and p.kind is p.POSITIONAL_OR_KEYWORD} - PRIMARY.get(name, set())
        if loose:
            positional[name] = sorted(loose)
    assert positional == {}
    assert len(targets) > 40  # Memory's methods and the user-built classes were looked at
    with pytest.raises(TypeError):
        Candidate("ana", "city", "Lisbon", T(1), "human")  # type: ignore[misc]


def test_invoice_story_under_each_policy() -> None:
    results = {}
    for policy in ("temporal", "authority_first", "temporal_within_authority"):
        with Memory(policy=policy) as mem:
            mem.add("acme", "invoice_total", 4500, source="billing-email", tier="verified",
                    valid_from=T(20))
            mem.add("acme", "invoice_total", 5000, source="agent:planner", tier="agent",
                    valid_from=T(22))
            r = mem.current("acme", "invoice_total")
            results[policy] = (r.status, r.value, sorted(c.value for c in r.candidates))
    assert results["temporal"] == ("resolved", 5000, [5000])
    assert results["authority_first"] == ("resolved", 4500, [4500])
    assert results["temporal_within_authority"] == ("conflict", None, [4500, 5000])


def test_chain_history_and_corroboration() -> None:
    mem = Memory()
    a = mem.add("acme", "price", 1, source="s1", valid_from=T(1))
    b = mem.add("acme", "price", 2, source="s1", valid_from=T(2))
    c = mem.add("Acme", " PRICE", 2, source="s2", valid_from=T(3))
    r = mem.current("acme", "price")
    assert r.status == "resolved" and r.value == 2
    assert {f.id for f in r.heads} == {b.id, c.id}
    assert r.candidates[0].sources == ("s2", "s1")
    hist = mem.history("acme", "price")
    assert [(f.id, f.status) for f in hist] == [(a.id, "superseded"), (b.id, "head"),
                                                 (c.id, "head")]


def test_explicit_supersedes_beats_time_and_is_checked() -> None:
    mem = Memory(policy="temporal", protected_tiers=())
    new = mem.add("acme", "price", 2, source="s", valid_from=T(5))
    fix = mem.add("acme", "price", 1, source="s", valid_from=T(1), supersedes=new.id)
    assert [f.id for f in mem.current("acme", "price").heads] == [fix.id]
    assert mem.superseded_by(new.id) == [fix] and mem.superseded_by(fix.id) == []
    other = mem.add("globex", "price", 3, source="s")
    with pytest.raises(CrossSlotSupersession, match="within one slot"):
        mem.add("acme", "price", 9, source="s", supersedes=other.id)
    h = mem.add("acme", "price", 7, source="u", tier="human", valid_from=T(9))
    with pytest.raises(TierInversion, match="lower tier"):
        mem.add("acme", "price", 8, source="s", tier="agent", supersedes=h.id)
    with pytest.raises(UnknownFact, match="names no fact"):
        mem.add("acme", "price", 8, source="s", supersedes="nope")
    assert len(mem) == 4 and mem.current("acme", "price").value == 7


def test_cycle_in_a_batch_is_rejected_whole() -> None:
    mem = Memory()
    before = len(mem)
    with pytest.raises(SupersessionCycle):
        mem.add_many([
            {"id": "x", "subject": "s", "attribute": "a", "value": 1, "source": "q",
             "supersedes": "y"},
            {"id": "y", "subject": "s", "attribute": "a", "value": 2, "source": "q",
             "supersedes": "x"},
        ])
    assert len(mem) == before and mem.current("s", "a").status == "unknown"
    assert mem.audit()[-1].kind == "rejected_write"

@pytest.mark.parametrize("durable", [False, True])
def test_an_id_already_used_is_refused_and_nothing_changes(tmp_path: Path, durable: bool,
                                                           ) -> None:
    """A given id that a fact of the memory holds, or that another fact of the same batch
    gives, is refused whole, also beside facts whose ids are drawn at random (whose ids the
    store does not look up); a batch of drawn ids alone goes in."""
    mem = Memory(str(tmp_path / "m.db") if durable else None)
    mem.add_many([{"subject": "s", "attribute": "a", "value": 1, "source": "q", "id": "taken"}])
    drawn = [{"subject": f"t{i}", "attribute": "a", "value": i, "source": "q"}
             for i in range(3)]
    for batch in ([*drawn, {"subject": "u", "attribute": "a", "value": 2, "source": "q",
                            "id": "taken"}],
                  [*drawn, *({"subject": "u", "attribute": "a", "value": v, "source": "q",
                              "id": "twice"} for v in (2, 3))]):
        with pytest.raises(InvalidFact, match="already used by another fact"):
            mem.add_many(batch)
        assert len(mem) == 1 and mem.current("t0", "a").status == "unknown"
        assert mem.current("u", "a").status == "unknown"
    assert len(mem.add_many(drawn)) == 3 and len(mem) == 4
    assert mem.current("s", "a").value == 1 and mem.verify().ok



@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"subject": ""}, "subject must be a non-empty"),
        ({"subject": 3}, "subject must be a str"),
        ({"attribute": "   "}, "attribute must be a non-empty"),
        ({"valid_from": datetime(2026, 1, 1)}, "timezone-aware"),
        ({"valid_from": "2026-01-01T00:00:00"}, "timezone-aware"),
        ({"valid_from": "yesterday"}, "ISO 8601"),
        ({"tier": "god"}, "tier must be one of"),
        ({"value": "x" * 70000}, "limit is 65536"),
        ({"value": float("nan")}, "finite"),
        ({"value": object()}, "JSON-serialisable"),
        ({"value": 2**70}, "64 bits"),
        ({"source": ""}, "source must be a non-empty"),
        ({"meta": [1]}, "meta must be a dict"),
        ({"valid_to": T(1), "valid_from": T(2)}, "must be after"),
    ],
)
def test_bad_input_raises_and_changes_nothing(kwargs: dict, match: str) -> None:
    mem = Memory()
    mem.add("acme", "price", 1, source="s", valid_from=T(1))
    args = {"subject": "acme", "attribute": "price", "value": 5, "source": "s"} | kwargs
    with pytest.raises(InvalidFact, match=match):
        mem.add(args.pop("subject"), args.pop("attribute"), args.pop("value"), **args)
    assert len(mem) == 1 and mem.current("acme", "price").value == 1


def test_prolog_looking_values_are_data() -> None:
    mem = Memory()
    evil = "x'), halt. %"
    f = mem.add(evil, evil, evil, source=evil, valid_from=T(1))
    r = mem.current(evil, evil)
    assert r.value == evil and r.heads[0].source == evil
    mem.add(evil, evil, "foo(X) :- halt.", source="s", valid_from=T(2))
    assert mem.current(evil, evil).value == "foo(X) :- halt."
    assert mem.history(evil, evil)[0].id == f.id


def test_values_normalise_for_conflict() -> None:
    mem = Memory(policy="temporal")
    mem.add("ana", "city", "Lisbon", source="a", valid_from=T(1))
    mem.add("ana", "city", "  lisbon ", source="b", valid_from=T(2))
    r = mem.current("ana", "city")
    assert r.status == "resolved" and len(r.heads) == 2  # corroboration, not conflict
    mem.add("ana", "city", 1.0, source="c", valid_from=T(3))
    mem.add("ana", "city", 1, source="d", valid_from=T(4))
    assert len(mem.current("ana", "city").heads) == 2  # 1.0 == 1
    mem.add("ana", "city", True, source="e", valid_from=T(5))
    assert mem.current("ana", "city").value is True


def test_retract_is_an_event() -> None:
    mem = Memory()
    a = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    b = mem.add("acme", "price", 2, source="s", valid_from=T(2))
    mem.retract(b.id, reason="typo")
    assert mem.current("acme", "price").value == 1
    assert [f.status for f in mem.history("acme", "price")] == ["head", "retracted"]
    assert "typo" in str(mem.why(b.id))
    with pytest.raises(InvalidFact, match="already retracted"):
        mem.retract(b.id, reason="again")
    with pytest.raises(UnknownFact):
        mem.retract("nope", reason="x")
    with pytest.raises(InvalidFact, match="reason"):
        mem.retract(a.id, reason="")
    assert mem.current("acme", "price").value == 1


def test_as_of_bitemporal() -> None:
    mem = Memory()
    mem.add("acme", "price", 1, source="s", valid_from=T(1))
    known = datetime.now(UTC)
    mem.add("acme", "price", 2, source="s", valid_from=T(10), valid_to=T(20))
    assert mem.as_of("acme", "price", known_at=known).value == 1
    assert mem.as_of("acme", "price", valid_at=T(5)).value == 1
    assert mem.as_of("acme", "price", valid_at=T(15)).value == 2
    # 2 superseded 1 and then stopped being true: the slot is unknown, 1 does not come back
    assert mem.as_of("acme", "price", valid_at=T(25)).status == "unknown"
    assert mem.as_of("acme", "price", valid_at="2025-01-01T00:00:00Z").status == "unknown"
    with pytest.raises(InvalidFact, match="timezone-aware"):
        mem.as_of("acme", "price", known_at=datetime(2026, 1, 1))


def test_filter_store_facts_and_candidates() -> None:
    mem = Memory(policy="temporal")
    a = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    b = mem.add("acme", "price", 2, source="s", valid_from=T(2))
    c = mem.add("acme", "owner", "bob", source="s", valid_from=T(1))
    mem.retract(c.id, reason="wrong")
    old = Candidate("ana", "city", "berlin", T(1))
    new = Candidate("ana", "city", "lisbon", T(3))
    other = Candidate("ana", "job", "pilot", T(1))
    res = mem.filter([a.id, b, c.id, old, new, other], query="q1")
    assert res.kept == (b, new, other)
    by_item = {(d.item if isinstance(d.item, str) else d.item): d for d in res.dropped}
    assert by_item[a.id].dominated_by.id == b.id
    assert by_item[c.id].rule == "retracted"
    assert by_item[old].dominated_by == new
    drops = [e for e in mem.audit() if e.kind == "drop"]
    assert len(drops) == 3 and all(e.details["query"] == "q1" for e in drops)
    with pytest.raises(UnknownFact):
        mem.filter(["nope"])
    with pytest.raises(InvalidFact):
        mem.filter([42])


def test_a_refused_candidate_names_its_position_and_field() -> None:
    """A malformed Candidate is refused with its index and field named (the filter
    normalises each slot and tier once per call, so the name is built on refusal). A
    source that is no label was refused as "expected text" (no field named), and a
    valid_to not after valid_from, which ``add`` refuses, was taken as ended."""
    mem = Memory(policy="temporal")
    ok = Candidate("ana", "city", "Lisbon", T(1))
    for bad, field in ((Candidate("ana", "city", "x", "yesterday"), "valid_from"),
                       (Candidate("ana", "city", "x", T(1), valid_to="soon"), "valid_to"),
                       (Candidate("ana", "city", "x", T(1), tier="god"), "tier"),
                       (Candidate("ana", "city", "x", T(2), valid_to=T(1)), "valid_to"),
                       (Candidate("ana", "city", "x", T(1), source=["crm"]),  # type: ignore[arg-type]
                        "source"),
                       (Candidate("ana", "city", "x", T(1), source="a\x1fb"), "source"),
                       (Candidate("ana", 7, "x", T(1)), "attribute"),  # type: ignore[arg-type]
                       (Candidate("", "city", "x", T(1)), "subject")):
        with pytest.raises(InvalidFact, match=rf"^items\[1\]\.{field} "):
            mem.filter([ok, bad])


def test_facts_one_head_dominates_share_its_fact() -> None:
    """Stored ids that one head dominates name that head, one Fact for all of them."""
    mem = Memory(policy="temporal")
    old = [mem.add("ana", "city", c, source="s", valid_from=T(i))
           for i, c in enumerate(["Rome", "Oslo", "Bern"], start=1)]
    head = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(9))
    other = mem.add("bo", "city", "Faro", source="s", valid_from=T(1))
    newer = mem.add("bo", "city", "Braga", source="s", valid_from=T(2))
    res = mem.filter([f.id for f in old] + [other.id, head.id])
    assert res.kept == (head.id,)
    wins = [d.dominated_by for d in res.dropped]
    assert wins[:3] == [head] * 3 and wins[0] is wins[2] and wins[3] == newer


def test_a_drop_names_the_memorys_fact_that_wins_and_stays_immutable() -> None:
    """A head that dominates a candidate is reported as the memory's Fact (made when the
    drop is first read), the same object for every drop it wins; a Drop cannot change."""
    import dataclasses
    import json

    mem = Memory(policy="temporal")
    head = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(5), text="moved")
    res = mem.filter([Candidate("ana", "city", "Berlin", T(1)),
                      Candidate("ana", "city", "Paris", T(2))])
    assert res.kept == ()
    first, second = res.dropped
    assert first.dominated_by == head == mem.get(head.id)
    assert first.dominated_by is second.dominated_by
    assert first.dominated_by.text == "moved" and first.rule == "temporal"
    assert first != second and len({first, second, first}) == 2
    assert "dominated_by=Fact(" in repr(first)
    assert json.loads(json.dumps(res.to_dict()))["dropped"][0]["dominated_by"]["value"] \
        == "Lisbon"
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.rule = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.dominated_by = None  # type: ignore[misc]


def test_filter_with_kappa_callable() -> None:
    mem = Memory(policy="temporal")
    items = [Candidate("ctx", "text", "Ana lives in Berlin", T(1)),
             Candidate("ctx", "text", "Ana moved to Lisbon", T(2)),
             Candidate("ctx", "text", "Bob likes tea", T(3))]
    calls = []

    def kappa(newer: Candidate, older: Candidate) -> bool:
        calls.append((newer.value, older.value))
        return "Ana" in newer.value and "Ana" in older.value

    res = mem.filter(items, kappa=kappa)
    assert [d.item.value for d in res.dropped] == ["Ana lives in Berlin"]
    assert res.dropped[0].rule == "kappa"
    # kappa is asked only about (newer, older) pairs the policy lets dominate, newest
    # first, and no more once an item is dropped
    assert calls == [("Bob likes tea", "Ana lives in Berlin"),
                     ("Ana moved to Lisbon", "Ana lives in Berlin"),
                     ("Bob likes tea", "Ana moved to Lisbon")]


def test_filter_with_kappa_judges_candidates_against_the_memory() -> None:
    mem = Memory(policy="temporal")
    head = mem.add("ana", "city", "Porto", source="crm", valid_from=T(5))
    asked = []

    def kappa(newer: object, older: object) -> bool:
        asked.append((type(newer).__name__, type(older).__name__))
        return getattr(newer, "value", None) != getattr(older, "value", None)

    old = Candidate("ana", "city", "Lisbon", T(1), text="Ana lives in Lisbon")
    res = mem.filter([old], kappa=kappa)
    assert [(d.item, d.dominated_by, d.rule) for d in res.dropped] == [(old, head, "kappa")]
    assert asked == [("Fact", "Candidate")]
    # a newer candidate is not judged by the older head
    assert mem.filter([Candidate("ana", "city", "Faro", T(9))], kappa=kappa).dropped == ()


def test_rules_beliefs_and_why() -> None:
    mem = Memory()
    mem.add_rule("needs_vpn(U) :- holds(U, location, L), L \\== office")
    mem.add_rule("alert(U) :- needs_vpn(U), holds(U, role, admin)")
    loc = mem.add("Ana", "location", "home", source="s", valid_from=T(1))
    mem.add("ana", "role", "admin", source="s", valid_from=T(1))
    assert [str(b) for b in mem.beliefs()] == ["alert(ana)", "needs_vpn(ana)"]
    j = mem.why(Belief("alert", ("ana",), "alert(ana)"))
    text = str(j)
    assert "needs_vpn(ana)" in text and loc.id in text and "rule r2" in text
    mem.add("ana", "location", "office", source="s", valid_from=T(2))
    assert mem.beliefs() == []
    with pytest.raises(UnknownFact):
        mem.why("alert(ana)")


@pytest.mark.parametrize("text", ["p :- halt", "p(X) :- holds(X, a, _), shell(X)",
                                  "x'), halt. %", "holds(a, b, c)", "", "p(X) :- call(X)",
                                  "p :- assertz(q)"])
def test_unsafe_rules_refused(text: str) -> None:
    mem = Memory()
    with pytest.raises(UnsafeRule):
        mem.add_rule(text)
    assert mem.rules() == []


def test_what_if_writes_nothing() -> None:
    mem = Memory()
    mem.add_rule("remote(U) :- holds(U, location, L), L \\== office")
    a = mem.add("ana", "location", "home", source="s", valid_from=T(1))
    w = mem.what_if(add=[{"subject": "ana", "attribute": "location", "value": "office",
                          "source": "s", "valid_from": T(2)}])
    assert [str(b) for b in w.beliefs_lost] == ["remote(ana)"] and w.changed
    assert w.heads[0].heads_before == (a.id,)
    w2 = mem.what_if(retract=[a.id])
    assert w2.heads[0].heads_after == ()
    assert [str(b) for b in mem.beliefs()] == ["remote(ana)"]
    assert mem.current("ana", "location").value == "home" and len(mem) == 1
    with pytest.raises(UnknownFact):
        mem.what_if(retract=["nope"])


def test_what_if_of_a_join_names_each_belief_gained_and_lost_in_the_beliefs_order() -> None:
    """The beliefs before and after are compared through a balanced tree (list against
    list took 400 s at 89,700 beliefs; ``bench perf``'s ``shapes``): the same beliefs, in
    the order ``beliefs()`` lists them."""
    def company(people: list[str]) -> Memory:
        mem = Memory()
        mem.add_many([{"subject": p, "attribute": "employer", "value": "acme",
                       "source": "hr", "valid_from": T(1)} for p in people])
        mem.add_rule("colleague(X, Y) :- holds(X, employer, E), holds(Y, employer, E), "
                     "X \\== Y")
        return mem

    people = [f"p{i:02}" for i in range(30)]
    mem = company(people)
    before = [str(b) for b in mem.beliefs()]
    after = [str(b) for b in company([p for p in people if p != "p07"] + ["q"]).beliefs()]
    assert len(before) == len(after) == 870
    w = mem.what_if(retract=[mem.history("p07", "employer")[0].id], add=[
        {"subject": "q", "attribute": "employer", "value": "acme", "source": "hr",
         "valid_from": T(1)}])
    lost, gained = [str(b) for b in w.beliefs_lost], [str(b) for b in w.beliefs_gained]
    assert lost == [b for b in before if b not in after] and len(lost) == 58
    assert gained == [b for b in after if b not in before] and len(gained) == 58
    assert [str(b) for b in mem.beliefs()] == before  # nothing written


@pytest.mark.parametrize("rule", [False, True])
def test_what_if_asked_again_answers_the_same(rule: bool) -> None:
    """``what_if`` runs in a snapshot that is discarded. A slot first derived inside it,
    and changed there by the supposed fact, was seen twice by the next ``what_if`` (its
    head listed once more in ``heads_before`` at every call); the slots it reads are now
    derived before the snapshot."""
    mem = Memory()
    if rule:
        mem.add_rule("led(S) :- holds(S, ceo, _)")
    bo = mem.add("acme", "ceo", "Bo", source="o", valid_from=T(1))
    item = {"subject": "acme", "attribute": "ceo", "value": "Ana", "source": "o",
            "valid_from": T(1)}
    for _ in range(3):
        [h] = mem.what_if(add=[item]).heads
        assert h.heads_before == (bo.id,) and len(h.heads_after) == 1
    assert [f.id for f in mem.current("acme", "ceo").heads] == [bo.id]


def test_what_if_sets_a_signature_aside() -> None:
    """``what_if`` supposes a protected fact unsigned (nothing is written), so a signature
    given is neither checked nor its nonce used: one already used answers as an unsigned
    fact does, and the same signature still writes the fact afterwards. Before, a used
    nonce was refused (``TierNotAuthorized``) although no signature was needed."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    owner = truthkeeper.Signer(Ed25519PrivateKey.generate())
    mem = Memory(trusted_keys=[owner.public_key])
    item = {"subject": "acme", "attribute": "ceo", "value": "Ana", "source": "owner",
            "tier": "human", "valid_from": T(1)}
    signed, used = owner.sign(item), owner.sign({**item, "value": "Bo"})
    mem.add_many([used])
    for supposed in (signed, used):
        bare = mem.what_if(add=[{k: v for k, v in supposed.items() if k != "signature"}])
        w = mem.what_if(add=[supposed])
        assert [(h.heads_before, len(h.heads_after)) for h in w.heads] == [
            (h.heads_before, len(h.heads_after)) for h in bare.heads] != []
    assert len(mem) == 1 and mem.add_many([signed])[0].tier == "human"


def test_graph_edges() -> None:
    mem = Memory()
    mem.add_rule("known(S) :- holds(S, price, _)")
    a = mem.add("acme", "price", 1, source="s", tier="verified", valid_from=T(1))
    b = mem.add("acme", "price", 2, source="s", tier="verified", valid_from=T(2))
    g1 = mem.add("globex", "price", 1, source="e", tier="verified", valid_from=T(1))
    g2 = mem.add("globex", "price", 2, source="agent", tier="agent", valid_from=T(2))
    g = mem.graph()
    assert isinstance(g, nx.DiGraph)
    assert g.edges[b.id, a.id] == {"kind": "supersedes", "rule": "temporal_within_authority"}
    conflict = ("conflict", "globex", "price")  # one node for the slot's disagreeing heads
    assert {**g.nodes[conflict], "values": sorted(g.nodes[conflict]["values"])} == {
        "kind": "conflict", "subject": "globex", "attribute": "price", "values": [1, 2]}
    assert {u for u, _, k in g.in_edges(conflict, data="kind") if k == "conflicts"} == {
        g1.id, g2.id}
    assert g.edges[b.id, "known(acme)"]["kind"] == "supports"


def test_graph_grows_with_the_memory_not_with_its_pairs() -> None:
    """A log kept in one slot (each fact supersedes every older one) and a poll (many
    sources, five values, one time): one supersedes edge into each superseded fact, from
    the fact filter names for it, and one conflicts edge from each head; the explicit
    links stay edges. (Every dominated pair was an edge: 2,000 facts took 23 s.)"""
    mem = Memory()
    log = mem.add_many([{"subject": "bot", "attribute": "status", "value": f"v{i % 7}",
                         "source": "agent", "valid_from": f"2026-11-01T10:{i:02d}:00Z"}
                        for i in range(60)])
    poll = mem.add_many([{"subject": "q", "attribute": "answer", "value": i % 5,
                          "source": f"w{i}", "valid_from": T(1)} for i in range(40)])
    old = mem.add("ana", "city", "Lisbon", source="s")
    new = mem.add("ana", "city", "Porto", source="s", supersedes=old.id)
    g = mem.graph()
    sup = [(u, v, d["rule"]) for u, v, d in g.edges(data=True) if d["kind"] == "supersedes"]
    assert (new.id, old.id, "supersedes") in sup
    by = {d.item: d.dominated_by.id for d in mem.filter([f.id for f in log]).dropped}
    assert len(by) == 59 and {(v, u) for u, v, _ in sup if v in by} == set(by.items())
    assert all(r == "temporal_within_authority" for u, v, r in sup if v in by)
    conflict = ("conflict", "q", "answer")
    assert {u for u, _ in g.in_edges(conflict)} == {f.id for f in poll}
    assert sorted(g.nodes[conflict]["values"]) == [0, 1, 2, 3, 4]
    assert g.number_of_edges() == 59 + 40 + 1


def test_configuration_errors() -> None:
    with pytest.raises(PolicyError):
        Memory(policy="newest")
    with pytest.raises(PolicyError):
        Memory(tiers=())
    with pytest.raises(PolicyError):
        Memory(tiers=("a", "A"))
    mem = Memory(tiers=("boss", "staff"), protected_tiers=())
    mem.add("x", "y", 1, source="s", tier="staff")
    with pytest.raises(InvalidFact, match="boss, staff"):
        mem.add("x", "y", 1, source="s", tier="agent")


def test_memories_are_isolated_and_closed() -> None:
    m1, m2 = Memory(), Memory()
    m1.add("x", "y", 1, source="s")
    assert m2.current("x", "y").status == "unknown"
    m1.close()
    with pytest.raises(TruthkeeperError, match="closed"):
        m1.add("x", "y", 2, source="s")


def test_resolution_why() -> None:
    mem = Memory()
    f = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    j = mem.current("acme", "price").why()
    assert f.id in str(j) and "resolved" in str(j)


def test_threads_share_one_memory() -> None:
    import threading

    mem = Memory()

    def work(k: int) -> None:
        for i in range(150):
            mem.add(f"s{i % 7}", "a", k * 1000 + i, source=f"t{k}")
            mem.current(f"s{i % 7}", "a")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(mem) == 600
    assert all(mem.current(f"s{i}", "a").status == "resolved" for i in range(7))


def test_a_memory_first_opened_in_a_worker_thread_answers_in_the_main_thread() -> None:
    """Prolog starts in the thread that first opens a memory; every other thread, the
    main one included, still reads, writes and filters (janus's fastest call works in
    Prolog's initial thread only: elsewhere it crashed the process)."""
    import subprocess
    import sys

    code = """if True:
        import threading
        from truthkeeper import Candidate, Memory
        made = {}
        def work():
            made["m"] = m = Memory()
            m.add("a", "b", 1, source="s", valid_from="2026-01-01")
            print("worker", m.current("a", "b").value)
        t = threading.Thread(target=work); t.start(); t.join()
        m = made["m"]
        m.add("a", "b", 2, source="s", valid_from="2026-02-01")
        print("main", m.current("a", "b").value,
              len(m.filter([Candidate("a", "b", 1, "2026-01-01")]).dropped))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["worker", "1", "main", "2", "1"]


@pytest.mark.parametrize("policy", ["temporal", "authority_first", "temporal_within_authority"])
def test_a_retrieved_candidate_is_judged_against_the_memorys_heads(policy: str) -> None:
    """A vector store returns text chunks, not fact ids: a stale candidate of a corrected
    slot must not leak into the prompt (DESIGN, Agent integration)."""
    mem = Memory(policy=policy)
    mem.add("ana", "city", "Berlin", source="crm", tier="verified", valid_from=T(1))
    head = mem.add("ana", "city", "Lisbon", source="crm", tier="verified", valid_from=T(5))
    stale = Candidate("ana", "city", "Berlin", T(1), tier="verified")
    other = Candidate("bob", "city", "Rome", T(1))
    newer = Candidate("ana", "city", "Porto", T(9), tier="verified")
    res = mem.filter([stale, other])
    assert res.kept == (other,)
    [drop] = res.dropped
    assert drop.item is stale and drop.dominated_by == head and drop.rule == policy
    res = mem.filter([newer])  # a candidate newer than what the memory knows is kept
    assert res.kept == (newer,)
    assert mem.current("ana", "city").value == "Lisbon"  # filter never changes the memory


def test_a_date_alone_is_midnight_utc() -> None:
    mem = Memory()
    f = mem.add("ana", "city", "Lisbon", source="chat", valid_from="2025-03-01")
    assert f.valid_from == datetime(2025, 3, 1, tzinfo=UTC)
    assert mem.as_of("ana", "city", valid_at="2025-03-01").value == "Lisbon"
    with pytest.raises(InvalidFact, match="offset"):
        mem.add("ana", "city", "Porto", source="chat", valid_from="2025-03-01T10:00:00")


def test_a_loop_of_three_links_in_a_batch_is_rejected_and_a_long_chain_is_fine() -> None:
    mem = Memory()
    rows = [{"id": i, "subject": "s", "attribute": "a", "value": n, "source": "q",
             "supersedes": s} for n, (i, s) in enumerate([("x", "z"), ("y", "x"), ("z", "y")])]
    with pytest.raises(SupersessionCycle):
        mem.add_many(rows)
    chain = [{"id": f"c{i}", "subject": "s", "attribute": "a", "value": i, "source": "q",
              "valid_from": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
              "supersedes": None if i == 0 else f"c{i - 1}"} for i in range(300)][::-1]
    mem.add_many(chain)  # newest first in the batch: the links are walked once each
    assert mem.current("s", "a").value == 299 and len(mem.history("s", "a")) == 300


def test_a_fact_that_begins_now_leaves_its_slot_on_the_fast_path() -> None:
    """A fact with the default valid_from (now) is not taken for one that begins later
    (which made every such slot recompute its heads from scratch, writes and reads
    quadratic in a chain of explicit supersedes)."""
    from truthkeeper.logic import bridge

    mem = Memory()
    prev = None
    for i in range(3):
        prev = mem.add("agent", "plan", i, source="planner", supersedes=prev).id
    mem.add("ana", "city", "Paris", source="chat")
    def timed() -> bool:
        return bool(bridge.ask("( store:timed(M, _, _) -> T = 1 ; T = 0 )",
                               {"M": mem._store.h})["T"])

    assert not timed()
    mem.add("ana", "city", "Rome", source="chat", valid_from="2999-01-01")
    assert timed() and mem.current("ana", "city").value == "Paris"


def test_every_public_member_of_memory_has_an_example() -> None:
    """Each public method and property of Memory shows its use in a doctest (the doctests
    run with the suite: ``--doctest-modules``)."""
    import inspect

    members = [n for n, _ in inspect.getmembers(Memory) if not n.startswith("_")]
    bare = [n for n in members if ">>>" not in (inspect.getdoc(getattr(Memory, n)) or "")]
    assert bare == [] and len(members) > 40


def test_every_method_of_memory_has_numpydoc_sections() -> None:
    """Each method documents its parameters and what it returns, and shows an example, in
    numpydoc sections (run as doctests); what it raises where it raises more than a closed
    memory's TruthkeeperError."""
    import inspect

    methods = [n for n, f in inspect.getmembers(Memory)
               if (not n.startswith("_") or n == "__len__") and callable(f)]
    assert len(methods) > 40
    for name in methods:
        fn = getattr(Memory, name)
        doc = inspect.getdoc(fn) or ""
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters if p not in ("self", "cls")]
        sections = ["Examples"] + (["Parameters"] if params else [])
        if sig.return_annotation not in (None, "None"):
            sections.append("Returns")
        assert all(f"{sec}\n{'-' * len(sec)}" in doc for sec in sections), name
        if params:
            described = doc.split("Parameters\n")[1].split("Examples\n")[0]
            assert all(p in described for p in params), (name, params)


def test_every_public_name_has_numpydoc_sections() -> None:
    """Beyond Memory: each public class documents its fields (Attributes) or arguments
    (Parameters) with an example, and each of its public methods (and each public function)
    its parameters, what it returns and an example, all run as doctests."""
    import inspect

    def sections(doc: str) -> set[str]:
        return {s for s in ("Parameters", "Attributes", "Returns", "Raises", "Examples")
                if f"{s}\n{'-' * len(s)}" in doc}

    def check_callable(where: str, fn: object) -> None:
        doc = inspect.getdoc(fn) or ""
        sig = inspect.signature(fn)  # type: ignore[arg-type]
        params = [p for p in sig.parameters if p not in ("self", "cls")]
        want = {"Examples"} | ({"Parameters"} if params else set())
        if sig.return_annotation not in (None, "None"):
            want.add("Returns")
        assert want <= sections(doc), (where, want - sections(doc))

    for name in truthkeeper.__all__:
        obj = getattr(truthkeeper, name)
        if name == "Memory" or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        if not inspect.isclass(obj):
            check_callable(name, obj)
            continue
        found = sections(inspect.getdoc(obj) or "")
        assert "Examples" in found and found & {"Attributes", "Parameters"}, name
        for attr, member in vars(obj).items():
            if attr.startswith("_"):
                continue
            if isinstance(member, (classmethod, staticmethod)):
                check_callable(f"{name}.{attr}", getattr(obj, attr))
            elif inspect.isfunction(member):
                check_callable(f"{name}.{attr}", member)
            elif isinstance(member, property):
                assert inspect.getdoc(member), f"{name}.{attr}"


def test_why_names_the_rule_by_which_each_fact_dominates() -> None:
    """The rule in ``why``'s lines is Prolog's (phi:dominance_rule/4): an explicit link is
    named as such, a newer value by the policy."""
    mem = Memory(policy="temporal")
    a = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
    b = mem.add("ana", "city", "Porto", source="s", valid_from=T(2), supersedes=a.id)
    c = mem.add("ana", "city", "Faro", source="s", valid_from=T(3))
    lines = str(mem.why(b.id)).splitlines()
    assert any(f"dominates {a.id}" in x and "(explicit supersedes)" in x for x in lines)
    assert any(f"dominated by {c.id}" in x and "(policy temporal)" in x for x in lines)


def test_a_bulk_load_is_answered_in_full_before_any_slot_is_read() -> None:
    """A slot written but never read yet (its heads are derived when first asked about)
    answers every query that reaches it another way: the conflicts listing, a rule's
    beliefs, a retraction, an erasure, what-if, filter and history."""
    mem = Memory()
    mem.add_rule("lives_in(P, C) :- holds(P, city, C).")
    mem.add_many([
        {"subject": "ana", "attribute": "city", "value": "Lisbon", "source": "a",
         "valid_from": "2026-01-01"},
        {"subject": "ana", "attribute": "city", "value": "Porto", "source": "b",
         "valid_from": "2026-01-01"},                                     # a conflict
        {"subject": "bo", "attribute": "city", "value": "Oslo", "source": "a",
         "valid_from": "2026-01-01"},
        {"subject": "bo", "attribute": "city", "value": "Rome", "source": "a",
         "valid_from": "2026-02-01", "id": "bo-rome"},                     # supersedes Oslo
        {"subject": "cy", "attribute": "city", "value": "Paris", "source": "a",
         "valid_from": "2026-01-01", "id": "cy-paris"},
        {"subject": "di", "attribute": "city", "value": "Nice", "source": "a",
         "valid_from": "2026-01-01", "id": "di-nice"},
    ])
    assert [(s, a) for s, a in mem.conflicts()] == [("ana", "city")]
    assert {b.text for b in mem.beliefs()} == {"lives_in(bo,rome)", "lives_in(cy,paris)",
                                               "lives_in(di,nice)"}
    mem.retract("bo-rome", reason="wrong")
    mem.erase(["di-nice"])
    assert mem.current("bo", "city").value == "Oslo" and mem.current("di", "city").value is None
    w = mem.what_if(add=[{"subject": "cy", "attribute": "city", "value": "Lyon",
                          "source": "a", "valid_from": "2026-03-01"}])
    [change] = w.heads
    assert (change.subject, change.heads_before) == ("cy", ("cy-paris",))
    assert len(change.heads_after) == 1 and change.heads_after != change.heads_before
    kept = mem.filter([Candidate("cy", "city", "Nice", "2025-01-01")]).kept
    assert kept == () and [f.status for f in mem.history("cy", "city")] == ["head"]


def test_a_batch_crossing_into_prolog_in_parts_is_still_all_or_none(monkeypatch) -> None:
    """A large batch is added in parts; a part refused takes back the parts before it (a
    source bound before, sources the batch bound, slots it created), and a fact that
    supersedes one of a later part is not refused for it."""
    from truthkeeper.logic import store as store_mod

    monkeypatch.setattr(store_mod, "ADD_PART", 3)
    mem = Memory(policy="temporal")
    mem.add("x", "y", 1, source="s", tier="verified")
    facts = [{"subject": f"e{i}", "attribute": "a", "value": i, "source": f"n{i}",
              "valid_from": T(1)} for i in range(7)]
    facts.append({"subject": "e9", "attribute": "a", "value": 9, "source": "s",
                  "tier": "agent"})  # the third part: s is bound to verified
    with pytest.raises(TierNotAuthorized):
        mem.add_many(facts)
    assert len(mem) == 1 and mem.current("e0", "a").status == "unknown"
    assert mem.history("e4", "a") == []
    mem.add("e0", "a", 0, source="n0", tier="verified")  # n0's binding was taken back too
    chain = [{"id": f"f{i}", "subject": "z", "attribute": "a", "value": i, "source": "n",
              "valid_from": T(i + 1), **({"supersedes": f"f{i + 5}"} if i == 0 else {})}
             for i in range(7)]  # f0 supersedes f5 (written after it in the batch)
    mem.add_many(chain)
    assert mem.current("z", "a").value == 6 and len(mem) == 9
    assert [f.status for f in mem.history("z", "a")][:1] == ["superseded"]


def test_value_types_built_by_the_quick_init_behave_as_their_dataclass() -> None:
    """Fact, Candidate, ValueSupport, Resolution and FilterResult store their fields
    through their slots (``values.quick_init``): the same signature, defaults, factories,
    keyword-only fields, equality, hash, pickling and frozenness as the dataclass."""
    import dataclasses
    import inspect
    import pickle

    from truthkeeper import FilterResult, Resolution, ValueSupport
    from truthkeeper.values import Fact

    def plain(cls: type) -> type:  # the same fields with the dataclass's own __init__
        spec = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
        return dataclasses.make_dataclass(cls.__name__, spec, frozen=True, slots=True)

    for cls in (Fact, Candidate, ValueSupport, Resolution, FilterResult):
        assert str(inspect.signature(cls)) == str(inspect.signature(plain(cls))), cls
    t = datetime(2026, 1, 1, tzinfo=UTC)
    args = ("f1", "ana", "city", "Lisbon", t, t, "crm", "agent")
    f, g = Fact(*args), Fact(*args)
    assert f == g and hash(f) == hash(g) and f.meta == {} and f.meta is not g.meta
    assert (f.supersedes, f.valid_to, f.present, f.status) == (None, None, True, None)
    assert dataclasses.asdict(f) == dataclasses.asdict(plain(Fact)(*args))
    assert Fact(*args, meta={"k": 1}).meta == {"k": 1}
    assert dataclasses.replace(f, value="Porto").value == "Porto" and f.value == "Lisbon"
    assert pickle.loads(pickle.dumps(f)) == f
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.value = "Porto"  # type: ignore[misc]
    c = Candidate("ana", "city", "Lisbon", t, source="s")
    assert (c.tier, c.source, c.text, c.valid_to) == ("agent", "s", None, None)
    with pytest.raises(TypeError):
        Candidate("ana", "city", "Lisbon", t, "agent")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Fact(*args[:-1])  # type: ignore[call-arg]
    assert ValueSupport("x", ("f1",), ("s",)) == ValueSupport("x", ("f1",), ("s",), None)


def test_a_call_refused_on_entry_leaves_the_lock_free_and_the_scope_unset() -> None:
    """Every call enters the memory's context (its lock, its scope, catching up); when
    catching up raises, the lock is released and the caller's scope restored, so another
    thread can go on and no later audit entry is filed under the wrong scope."""
    import threading
    from unittest import mock

    from truthkeeper.audit import current_scope

    mem = Memory()
    mem.add("ana", "city", "Lisbon", source="s")
    bo = mem.scope("user:bo")
    with mock.patch.object(type(bo._p), "catch_up", side_effect=TruthkeeperError("down")), \
            pytest.raises(TruthkeeperError, match="down"):
        bo.current("ana", "city")
    assert current_scope() is None
    got: list[bool] = []

    def other() -> None:
        got.append(bo._lock.acquire(timeout=2))
        if got[-1]:
            bo._lock.release()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert got == [True]
    mem.close()
    with pytest.raises(TruthkeeperError, match="closed"):
        mem.current("ana", "city")
    assert current_scope() is None

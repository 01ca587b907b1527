"""Rules in layered scopes: a shared rule applies in every view, over that view's facts (its
scope's and the shared layer's); a rule added in a scope stays in it; no rule, belief, why or
what_if of one view reaches another scope's facts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthkeeper import Memory, ScopeError, UnknownFact, UnknownRule


def _two_users() -> tuple[Memory, Memory, Memory, str]:
    mem = Memory()
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    phone = ana.add("ana", "phone", "555-0101", source="chat").id
    ana.add("ana", "city", "Paris", source="chat")
    bob.add("bob", "city", "Rome", source="chat")
    return mem, ana, bob, phone


def test_a_scopes_rule_stays_in_it_and_a_shared_rule_applies_everywhere() -> None:
    mem, ana, bob, _ = _two_users()
    mem.add("acme", "price", 10, source="crm", tier="verified")
    mem.add_rule("cheap(X) :- holds(X, price, P), P < 20")
    bob.add_rule("in_rome(U) :- holds(U, city, rome)")
    assert bob.rules() == ["cheap(X) :- holds(X, price, P), P < 20",
                           "in_rome(U) :- holds(U, city, rome)"]
    assert ana.rules() == mem.rules() == ["cheap(X) :- holds(X, price, P), P < 20"]
    assert [b.text for b in bob.beliefs()] == ["cheap(acme)", "in_rome(bob)"]
    assert [b.text for b in ana.beliefs()] == [b.text for b in mem.beliefs()] == ["cheap(acme)"]
    # the same text may be added in another scope: it is that scope's own rule
    ana.add_rule("in_rome(U) :- holds(U, city, rome)")
    bob.remove_rule("in_rome(U) :- holds(U, city, rome)")
    assert ana.rules()[1:] == ["in_rome(U) :- holds(U, city, rome)"]
    assert [b.text for b in bob.beliefs()] == ["cheap(acme)"]


def test_a_view_removes_only_its_own_rules() -> None:
    mem, _ana, bob, _ = _two_users()
    mem.add_rule("p(X) :- holds(X, city, rome)")
    bob.add_rule("q(X) :- holds(X, city, rome)")
    with pytest.raises(ScopeError, match="shared"):
        bob.remove_rule("p(X) :- holds(X, city, rome)")
    with pytest.raises(UnknownRule, match="no rule"):
        mem.remove_rule("q(X) :- holds(X, city, rome)")  # bob's: not the shared layer's
    bob.remove_rule("q(X) :- holds(X, city, rome)")
    assert bob.rules() == ["p(X) :- holds(X, city, rome)"]


def test_a_rule_the_view_and_the_shared_layer_both_have_is_listed_once() -> None:
    mem, _ana, bob, _ = _two_users()
    bob.add_rule("q(X) :- holds(X, city, rome)")
    mem.add_rule("q(X) :- holds(X, city, rome)")  # the owner adds the same text, shared
    assert bob.rules() == ["q(X) :- holds(X, city, rome)"]
    assert [b.text for b in bob.beliefs()] == ["q(bob)"]
    bob.remove_rule("q(X) :- holds(X, city, rome)")  # its own goes; the shared one stays
    assert bob.rules() == mem.rules() == ["q(X) :- holds(X, city, rome)"]
    assert [b.text for b in bob.beliefs()] == ["q(bob)"]


def test_no_rule_reaches_another_scopes_facts() -> None:
    mem, ana, bob, _ = _two_users()
    # issue 29: a shared rule's free variables, and a join across subjects in bob's rule
    mem.add_rule("contact(U, P) :- holds(U, phone, P)")
    bob.add_rule("leak(S, V) :- holds(S, city, _), holds(_T, phone, V)")
    # a rule naming ana's store key (the scope separator written as an escape)
    bob.add_rule("peek(P) :- holds('user:ana\\x1f\\ana', phone, P)")
    assert bob.beliefs() == [] and mem.beliefs() == []
    assert [b.text for b in ana.beliefs()] == ["contact(ana,'555-0101')"]
    for pattern in ("contact(U, P)", "leak(S, V)", "peek(P)", "contact(ana, P)"):
        with pytest.raises(UnknownFact):
            bob.why(pattern)
    assert "555-0101" in str(ana.why("contact(U, P)"))


def test_a_views_beliefs_follow_writes_to_either_layer() -> None:
    mem = Memory()
    ana = mem.scope("user:ana")
    ana.add_rule("affordable(X) :- holds(X, price, P), P =< 100")
    old = mem.add("acme", "price", 90, source="crm", tier="verified",
                  valid_from="2026-01-01")
    assert [b.text for b in ana.beliefs()] == ["affordable(acme)"]
    mem.add("acme", "price", 120, source="crm", tier="verified", valid_from="2026-02-01")
    assert ana.beliefs() == []  # a newer shared price: the scope's belief retracts
    ana.add("acme", "price", 95, source="ana-notes", tier="verified", valid_from="2026-03-01")
    assert [b.text for b in ana.beliefs()] == ["affordable(acme)"]  # ana's own, newer
    assert mem.beliefs() == []  # the shared layer never sees ana's fact
    why = ana.why("affordable(acme)")
    assert old.id not in str(why) and "ana-notes" in str(why)


def test_what_if_in_a_view_answers_for_that_view_only() -> None:
    mem, ana, bob, phone = _two_users()
    bob.add_rule("in_rome(U) :- holds(U, city, rome)")
    unknown = "f" + "0" * 16
    for ids in ([phone], [unknown]):  # another scope's id is exactly an unknown one
        with pytest.raises(UnknownFact) as err:
            bob.what_if(retract=ids)
    assert "names no fact" in str(err.value)
    w = bob.what_if(add=[{"subject": "sue", "attribute": "city", "value": "Rome",
                          "source": "chat"}])
    assert [(h.subject, h.attribute) for h in w.heads] == [("sue", "city")]
    assert [b.text for b in w.beliefs_gained] == ["in_rome(sue)"]
    assert ana.what_if(add=[{"subject": "sue", "attribute": "city", "value": "Rome",
                             "source": "chat"}]).beliefs_gained == ()
    assert len(mem) == 0 and len(bob) == 1  # nothing was written
    w = bob.what_if(retract=[bob.current("bob", "city").heads[0].id])
    assert [b.text for b in w.beliefs_lost] == ["in_rome(bob)"]


def test_export_and_import_are_the_owners(tmp_path) -> None:
    mem, _ana, bob, _ = _two_users()
    with pytest.raises(ScopeError, match="owner"):
        bob.export_jsonl(tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()
    mem.export_jsonl(tmp_path / "all.jsonl")
    with pytest.raises(ScopeError, match="owner"):
        bob.import_jsonl(tmp_path / "all.jsonl")


def test_scope_rules_survive_reopen_and_import(tmp_path) -> None:
    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        bob = mem.scope("user:bob")
        bob.add("bob", "city", "Rome", source="chat")
        bob.add_rule("in_rome(U) :- holds(U, city, rome)")
        mem.export_jsonl(tmp_path / "all.jsonl")
    with Memory(path) as mem:
        assert mem.rules() == [] and [b.text for b in mem.scope("user:bob").beliefs()] == [
            "in_rome(bob)"]
    with Memory() as other:
        other.import_jsonl(tmp_path / "all.jsonl")
        assert other.rules() == [] and other.scope("user:bob").rules() == [
            "in_rome(U) :- holds(U, city, rome)"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y"]),
                          st.integers(0, 3)), max_size=8))
def test_a_view_with_nothing_of_its_own_derives_what_the_shared_layer_derives(
        facts: list[tuple[str, str, int]]) -> None:
    mem = Memory()
    for i, (s, a, v) in enumerate(facts):
        mem.add(s, a, v, source="crm", valid_from=f"2026-01-{i + 1:02d}")
    mem.add_rule("same(S, T) :- holds(S, x, V), holds(T, y, V)")
    mem.add_rule("big(S) :- holds(S, x, V), V >= 2")
    assert mem.scope("user:nobody").beliefs() == mem.beliefs()


def test_erasing_a_scope_erases_its_rules_to_the_byte(tmp_path) -> None:
    path = tmp_path / "m.db"
    with Memory(str(path)) as mem:
        ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
        ana.add_rule("allergic_to_penicillin(ana) :- true")
        ana.add_rule("tmp(X) :- holds(X, city, rome)")
        ana.remove_rule("tmp(X) :- holds(X, city, rome)")
        bob.add_rule("in_rome(U) :- holds(U, city, rome)")
        mem.add_rule("p(X) :- holds(X, city, rome)")
        assert mem.erase(scope="user:ana") == []  # no facts, but its rules go
        assert ana.rules() == ["p(X) :- holds(X, city, rome)"] and ana.beliefs() == []
        assert bob.rules() == ["in_rome(U) :- holds(U, city, rome)",
                               "p(X) :- holds(X, city, rome)"]
        assert mem.verify().ok
        mem.export_jsonl(tmp_path / "after.jsonl")
        assert mem.erase(scope="user:ana") == []  # nothing left: nothing written
    for f in [path, tmp_path / "after.jsonl"]:
        assert b"penicillin" not in f.read_bytes() and b"tmp(X)" not in f.read_bytes()
    with Memory(str(path)) as mem:  # the journal replays, the chain verifies
        assert mem.verify().ok and mem.scope("user:ana").rules() == [
            "p(X) :- holds(X, city, rome)"]
    with Memory() as other:
        other.import_jsonl(tmp_path / "after.jsonl")
        assert other.scope("user:bob").rules()[0] == "in_rome(U) :- holds(U, city, rome)"
        assert other.scope("user:ana").rules() == ["p(X) :- holds(X, city, rome)"]


def test_a_rule_blanked_without_an_erasure_breaks_the_chain(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "m.db"
    with Memory(str(path)) as mem:
        mem.scope("user:ana").add_rule("secret(ana) :- true")
    con = sqlite3.connect(path)  # a forger rewrites the rule's body as a placeholder
    body = con.execute("SELECT body FROM events WHERE kind = 'rule'").fetchone()[0]
    from truthkeeper.journal.codec import erased_scoped_body

    con.execute("UPDATE events SET body = ? WHERE kind = 'rule'", (erased_scoped_body(body, 1),))
    con.commit()
    con.close()
    with Memory(str(path), readonly=True) as mem:
        v = mem.verify()
    assert not v.ok and "without an erasure" in (v.reason or "")


def test_outcomes_recorded_in_a_scope_teach_that_scope_only(tmp_path) -> None:
    path = tmp_path / "m.db"

    def mean(view: Memory, source: str) -> float:
        return next(r.mean for r in view.reliability() if r.source == source)

    with Memory(str(path)) as mem:
        ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
        shared = mem.add("acme", "price", 10, source="pricebot", valid_from="2026-01-01")
        for _ in range(8):  # ana finds the bot wrong, in her scope
            ana.record_outcome(shared.id, correct=False)
        ana.record_source_outcome("ana-notes", correct=True, tier="verified")
        assert mean(ana, "pricebot") < mean(bob, "pricebot") == mean(mem, "pricebot")
        assert "ana-notes" in {r.source for r in ana.reliability()}
        assert "ana-notes" not in {r.source for r in bob.reliability()}
        ana.add("acme", "price", 12, source="webshop", valid_from="2026-01-01")
        bob.add("acme", "price", 12, source="webshop", valid_from="2026-01-01")
        # the same conflict: in ana's view the bot she found wrong counts for less
        p_ana = {c.value: c.p for c in ana.current("acme", "price").candidates}
        p_bob = {c.value: c.p for c in bob.current("acme", "price").candidates}
        assert p_ana[10] < p_bob[10]
    with Memory(str(path)) as mem:  # the journal keeps each outcome in its scope
        assert mean(mem.scope("user:ana"), "pricebot") < mean(mem, "pricebot")
        mem.erase(scope="user:ana")
        assert mean(mem.scope("user:ana"), "pricebot") == mean(mem, "pricebot")
        assert mem.verify().ok
    assert b"ana-notes" not in path.read_bytes()
    with Memory(str(path)) as mem:
        assert mem.verify().ok and mean(mem.scope("user:ana"), "pricebot") == mean(
            mem, "pricebot")


@pytest.mark.parametrize("lazy", [False, True])
def test_a_source_is_bound_per_scope_so_no_refusal_reveals_another_scope(tmp_path,
                                                                         lazy: bool) -> None:
    from truthkeeper import TierNotAuthorized

    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        mem.scope("user:ana").add("ana", "city", "Paris", source="notes", tier="agent")
        mem.add("acme", "price", 10, source="crm", tier="verified")
    with Memory(path, lazy=lazy) as mem:
        bob = mem.scope("user:bob")
        # bob's "notes" is his own source, whatever tier ana's has
        bob.add("bob", "city", "Rome", source="notes", tier="verified")
        mem.add("acme", "owner", "acme inc", source="notes", tier="verified")
        with pytest.raises(TierNotAuthorized):  # the shared binding holds in every scope
            bob.add("bob", "x", 1, source="crm", tier="agent")
        with pytest.raises(TierNotAuthorized):  # and the scope's own binding in the scope
            mem.scope("user:ana").add("ana", "x", 1, source="notes", tier="verified")
        bob.record_source_outcome("notes", correct=True, tier="verified")
    with Memory(path) as mem:  # the bindings replay as they were made
        assert mem.verify().ok
        assert {r.source: r.tier for r in mem.scope("user:bob").reliability()}["notes"] \
            == "verified"


@pytest.mark.parametrize("source", ["user:ana\x1fnotes", "a\x00b"])
def test_a_source_name_with_the_scope_separator_is_refused(source: str) -> None:
    from truthkeeper import InvalidFact

    mem = Memory()
    with pytest.raises(InvalidFact, match="control character"):
        mem.add("a", "b", 1, source=source)
    assert len(mem) == 0


def test_closing_a_memory_keeps_the_belief_tables_of_the_others() -> None:
    """Each memory's beliefs are tabled apart; closing one abolishes its own tables only
    (it abolished every memory's, so every other memory derived its beliefs again)."""
    from truthkeeper.logic import bridge

    def cost(m: Memory) -> int:  # Prolog inferences of one beliefs() call
        before = bridge.ask("statistics(inferences, N)", {})["N"]
        assert len(m.beliefs()) == 1_000
        return int(bridge.ask("statistics(inferences, N)", {})["N"]) - int(before)

    a, b = Memory(), Memory()
    for m in (a, b):
        m.add_many([{"subject": f"c{i}", "attribute": "city", "value": "Paris",
                     "source": "crm"} for i in range(1_000)])
        m.add_rule("in_paris(S) :- holds(S, city, paris)")
        m.beliefs()
    warm = cost(b)
    a.close()
    assert cost(b) < 1.2 * warm  # answered from its tables, not derived again
    b.close()


def test_a_scopes_beliefs_follow_writes_after_a_what_if() -> None:
    """A write bumps the memory's generation only when a scope's table read it since the
    last bump; a what_if evaluates the scope's beliefs inside a snapshot that is rolled back.
    Neither leaves a belief stale: not the hypothetical one, not one a later write makes."""
    mem = Memory()
    ana = mem.scope("user:ana")
    ana.add_rule("roman(U) :- holds(U, city, rome)")
    ana.add("bob", "city", "Rome", source="s")
    before = sorted(map(str, ana.beliefs()))
    w = ana.what_if(add=[{"subject": "sue", "attribute": "city", "value": "Rome",
                          "source": "s"}])
    assert [str(b) for b in w.beliefs_gained] == ["roman(sue)"]
    assert sorted(map(str, ana.beliefs())) == before == ["roman(bob)"]
    mem.add("zed", "colour", "red", source="s")  # a write no table of the scope reads
    mem.add("kim", "city", "Rome", source="s")  # in the shared layer, which the view sees
    assert sorted(map(str, ana.beliefs())) == ["roman(bob)", "roman(kim)"]
    ana.add("kim", "city", "Paris", source="s")  # newer, in the scope: current in its view
    assert sorted(map(str, ana.beliefs())) == ["roman(bob)"]
    ana.add("lea", "city", "Rome", source="s")  # a write, then a what_if before any read
    w = ana.what_if(add=[{"subject": "max", "attribute": "city", "value": "Rome",
                          "source": "s"}])
    assert [str(b) for b in w.beliefs_gained] == ["roman(max)"]
    mem.add("zoe", "city", "Rome", source="s")
    assert sorted(map(str, ana.beliefs())) == ["roman(bob)", "roman(lea)", "roman(zoe)"]


def test_a_rule_calling_what_no_rule_defines_is_added_with_a_warning_that_names_it() -> None:
    """Rules may come in any order (a body may name a head a later rule defines), so such
    a rule is no error; but a typo (``holdz`` for ``holds``) derived nothing, silently."""
    import warnings

    from truthkeeper import RuleWarning

    mem = Memory()
    mem.add("ana", "location", "home", source="s")
    with pytest.warns(RuleWarning, match=r"holdz/3.*did you mean holds/3"):
        mem.add_rule("needs_vpn(U) :- holdz(U, location, home)")
    assert mem.rules() == ["needs_vpn(U) :- holdz(U, location, home)"]  # added all the same
    with pytest.warns(RuleWarning, match=r"calls risky/1, which no rule defines"):
        mem.add_rule("alert(U) :- holds(U, location, home), risky(U)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # defined by an earlier rule, by itself, or shared
        mem.add_rule("risky(U) :- holds(U, location, home)")
        mem.add_rule("also(U) :- risky(U), \\+ alert(U)")
        mem.add_rule("reach(X, Y) :- holds(X, next, Y)")
        mem.add_rule("reach(X, Z) :- holds(X, next, Y), reach(Y, Z)")
        mem.scope("user:bo").add_rule("mine(U) :- risky(U)")
    assert sorted(str(b) for b in mem.beliefs()) == ["alert(ana)", "risky(ana)"]
    # a scope's own rule does not define a head for the shared layer or another scope
    mem.scope("user:bo").add_rule("vip(U) :- holds(U, location, home)")
    with pytest.warns(RuleWarning, match=r"vip/1"):
        mem.scope("user:cy").add_rule("vip_alert(U) :- vip(U)")

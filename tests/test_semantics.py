"""An agent's memory as agents mean it: facts that end (valid_to, the memory's clock, end()),
and the small traps of the API (one id where ids are taken, test strategies a default memory
accepts, format 2 journals)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthkeeper import (
    Candidate,
    Fact,
    FilterResult,
    InvalidFact,
    Memory,
    PolicyError,
    ScopeError,
    Signer,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
    Utility,
)
from truthkeeper.testing import at, histories, policies

T = "2026-11-{:02d}".format


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, now: str) -> None:
        self.now = datetime.fromisoformat(now).replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def set(self, now: str) -> None:
        self.now = datetime.fromisoformat(now).replace(tzinfo=UTC)


# ---------------------------------------------------------------- facts that end

def test_a_fact_whose_valid_to_passed_is_not_current() -> None:
    clock = Clock("2026-11-10")
    mem = Memory(clock=clock)
    f = mem.add("ana", "employer", "Globex", source="crm", valid_from=T(1), valid_to=T(20))
    assert mem.current("ana", "employer").value == "Globex"
    assert mem.about("ana")["employer"].value == "Globex"
    clock.set("2026-11-25")
    r = mem.current("ana", "employer")
    assert (r.status, r.value, r.heads) == ("unknown", None, ())
    assert "ended" in str(r.why()) and f.id in str(r.why())
    assert mem.history("ana", "employer")[0].status == "ended"
    assert mem.about("ana")["employer"].status == "unknown"
    # as_of before the end still sees it; at the clock it equals current
    assert mem.as_of("ana", "employer", valid_at=T(15)).value == "Globex"
    assert mem.as_of("ana", "employer").status == "unknown"


def test_a_superseded_fact_does_not_come_back_when_its_successor_ends() -> None:
    clock = Clock("2026-11-30")
    mem = Memory(clock=clock)
    mem.add("acme", "price", 100, source="billing", valid_from=T(1))
    mem.add("acme", "price", 120, source="billing", valid_from=T(10), valid_to=T(20))
    assert mem.current("acme", "price").status == "unknown"  # not 100 again
    assert [f.status for f in mem.history("acme", "price")] == ["superseded", "ended"]
    assert mem.as_of("acme", "price", valid_at=T(5)).value == 100
    assert mem.as_of("acme", "price", valid_at=T(15)).value == 120
    assert mem.as_of("acme", "price", valid_at=T(25)).status == "unknown"


def test_a_fact_that_begins_later_is_current_from_then_on() -> None:
    clock = Clock("2026-11-10")
    mem = Memory(clock=clock)
    mem.add("ana", "city", "Lisbon", source="chat", valid_from=T(1))
    mem.add("ana", "city", "Porto", source="chat", valid_from=T(20))  # a planned move
    assert mem.current("ana", "city").value == "Lisbon"
    assert [f.status for f in mem.history("ana", "city")] == ["head", "future"]
    clock.set("2026-11-21")
    assert mem.current("ana", "city").value == "Porto"


def test_beliefs_retract_when_their_fact_ends_without_a_write() -> None:
    clock = Clock("2026-11-10")
    mem = Memory(clock=clock)
    mem.add("ana", "location", "home", source="chat", valid_from=T(1), valid_to=T(12))
    mem.add_rule("needs_vpn(U) :- holds(U, location, home)")
    assert [str(b) for b in mem.beliefs()] == ["needs_vpn(ana)"]
    clock.set("2026-11-13")
    assert mem.beliefs() == []


def test_conflicts_and_decide_see_only_current_facts() -> None:
    clock = Clock("2026-11-10")
    mem = Memory(clock=clock)
    mem.add("ana", "city", "Lisbon", source="a", valid_from=T(1))
    mem.add("ana", "city", "Porto", source="b", valid_from=T(1), valid_to=T(15))
    assert mem.conflicts() == [("ana", "city")]
    cautious = Utility(correct=1, wrong=-4)
    assert mem.decide("ana", "city", utility=cautious).action == "abstain"
    clock.set("2026-11-16")
    assert mem.conflicts() == []
    d = mem.decide("ana", "city")
    assert (d.action, d.value) == ("answer", "Lisbon")


def test_filter_drops_ended_candidates_and_ended_facts() -> None:
    clock = Clock("2026-11-10")
    mem = Memory(policy="temporal", clock=clock)
    old = mem.add("acme", "price", 100, source="billing", valid_from=T(1), valid_to=T(5))
    items = [Candidate("ana", "city", "Lisbon", T(1), valid_to=T(3)),
             Candidate("ana", "city", "Porto", T(2), valid_to=T(30)),
             old.id]
    res = mem.filter(items)
    assert [c.value for c in res.kept if isinstance(c, Candidate)] == ["Porto"]
    assert {(d.rule, d.dominated_by) for d in res.dropped} == {("ended", None)}
    assert len(res.dropped) == 2
    # with a kappa too
    res = mem.filter(items, kappa=lambda a, b: True)
    assert sorted(d.rule for d in res.dropped) == ["ended", "ended"]


def test_filter_drops_a_retrieved_statement_of_a_value_the_memory_ended() -> None:
    """An agent ended "Ana lives in Lisbon" (she left; where to is not known). A retrieved
    chunk from before the end that says Lisbon is stale: it is dropped, naming the ended
    fact, in a set as in a one-valued slot and in a scope's view of the shared fact. It is
    kept when it is news (it began after the end), when a head still holds the value, and
    under the default policy when the end came from a lower tier than the chunk."""
    mem = Memory()
    lisbon = mem.add("ana", "city", "Lisbon", source="crm", valid_from="2021-01-01")
    mem.end(lisbon.id, valid_to="2023-01-01")
    mem.declare("skill", cardinality="many")
    rust = mem.add("ana", "skill", "rust", source="cv", valid_from="2020-01-01")
    mem.end(rust.id, valid_to="2024-01-01")
    stale = [Candidate("ana", "city", "Lisbon", "2021-06-01", text="Ana lives in Lisbon"),
             Candidate("ana", "city", "lisbon", "2019-01-01"),
             Candidate("ana", "skill", "rust", "2022-01-01")]
    for view in (mem, mem.scope("user:ana")):
        res = view.filter(stale)
        assert res.kept == ()
        assert [(d.rule, d.dominated_by.id, d.dominated_by.valid_to.year)
                for d in res.dropped] == [("ended", lisbon.id, 2023), ("ended", lisbon.id, 2023),
                                          ("ended", rust.id, 2024)]
    fresh = [Candidate("ana", "city", "Lisbon", "2024-01-01"),      # news: after the end
             Candidate("ana", "city", "Porto", "2021-06-01"),       # another value
             Candidate("ana", "skill", "rust", "2022-01-01", present=False),
             Candidate("ana", "city", "Lisbon", "2021-06-01", tier="verified")]  # outranks
    assert [mem.filter([c]).kept for c in fresh] == [(c,) for c in fresh]
    mem.add("ana", "city", "Lisbon", source="li", valid_from="2022-01-01")  # held again
    assert mem.current("ana", "city").value == "Lisbon"
    assert mem.filter(stale[:1]).kept == tuple(stale[:1])
    mem.retract(rust.id, reason="a mistake")  # a retracted fact's end says nothing
    assert mem.filter(stale[2:]).kept == tuple(stale[2:])


def test_a_kappa_filter_drops_a_free_text_statement_of_a_value_the_memory_ended() -> None:
    """The same rule on filter's kappa path, where kappa (here: whether the city the text
    names differs) says whether two statements agree. "Ana lives in Lisbon" from 2021 was
    kept though the memory ended Lisbon in 2023; it is dropped naming the ended fact. A
    text naming another city, news from after the end, and a text a head still agrees
    with are kept."""
    def city(x: Any) -> str:
        return next(w for w in str(x.value).replace(".", "").split() if w[0].isupper()
                    and w not in ("Ana",))

    asked = []

    def kappa(a: Any, b: Any) -> bool:
        asked.append((a.id if isinstance(a, Fact) else a.value, b.value))
        return city(a) != city(b)

    mem = Memory()
    lisbon = mem.add("ana", "city", "Lisbon", source="crm", valid_from="2021-01-01")
    mem.end(lisbon.id, valid_to="2023-01-01")
    stale = Candidate("ana", "city", "Ana lives in Lisbon.", "2021-06-01")
    for view in (mem, mem.scope("user:ana")):
        asked.clear()
        res = view.filter([stale], kappa=kappa)
        assert res.kept == () and [(d.rule, d.dominated_by.id) for d in res.dropped] == [
            ("ended", lisbon.id)]
        assert asked == [(lisbon.id, stale.value)]  # the end and the candidate: ordered
    assert mem.filter([stale]).kept == (stale,)  # without kappa: no value key is Lisbon's
    for kept in (Candidate("ana", "city", "Ana lives in Porto.", "2021-06-01"),
                 Candidate("ana", "city", "Ana lives in Lisbon again.", "2024-01-01")):
        assert mem.filter([kept], kappa=kappa).kept == (kept,)
    mem.add("ana", "city", "Lisbon", source="li", valid_from="2022-01-01")  # held again
    assert mem.filter([stale], kappa=kappa).kept == (stale,)
    # a view's heads are its layers' union: the shared Faro that Ana's own newer Porto
    # hides in her view drops nothing there (it was read as a head of its own layer)
    mem.add("ana", "city", "Faro", source="crm", valid_from="2024-06-01")
    ana = mem.scope("user:ana")
    ana.add("ana", "city", "Porto", source="chat", tier="verified", valid_from="2025-01-01")
    porto = Candidate("ana", "city", "Ana lives in Porto.", "2024-03-01")
    assert mem.filter([porto], kappa=kappa).dropped[0].dominated_by.value == "Faro"
    assert ana.current("ana", "city").value == "Porto"
    assert ana.filter([porto], kappa=kappa).kept == (porto,)


@pytest.mark.parametrize("scope", [None, "user:ana"])
def test_filter_of_many_ended_facts_of_one_slot_judges_each_as_alone(scope: str | None) -> None:
    """One filter call decides the ended facts of a slot from one sweep of it (each
    scanned the slot for a dominator: n^2 over n of them), with the verdicts ``filter``
    of each fact alone gives: ended when nothing dominates it, else dominated by the
    newest fact that does (no head dominates them: every fact has ended)."""
    clock = Clock("2026-11-10")
    mem = Memory(policy="temporal", clock=clock)
    view = mem if scope is None else mem.scope(scope)
    facts = [view.add("acme", "price", v, source="billing", valid_from=T(d), valid_to=T(d + 1))
             for d, v in [(1, 100), (2, 100), (3, 110), (4, 120), (5, 120)]]
    clock.set("2026-11-20")
    assert view.current("acme", "price").status == "unknown"

    def verdict(res: FilterResult, f: Fact) -> tuple[str, Any]:
        d = next((d for d in res.dropped if d.item == f.id), None)
        return ("kept", None) if d is None else (d.rule, getattr(d.dominated_by, "id", None))

    together = view.filter([f.id for f in facts])
    alone = [verdict(view.filter([f.id]), f) for f in facts]
    assert [verdict(together, f) for f in facts] == alone
    newest = facts[4].id  # 120 at day 5 dominates 110 and both 100s; the 120s nothing newer
    assert alone == [("temporal", newest), ("temporal", newest), ("temporal", newest),
                     ("ended", None), ("ended", None)]


def test_a_context_filtered_again_sees_every_change(tmp_path: Path) -> None:
    # filter's verdicts on stored facts are kept between calls: each change must reach them
    path = tmp_path / "m.db"
    clock = Clock("2026-11-10")

    def verdicts(m: Memory, ids: list[str]) -> list[tuple[str, str | None]]:
        res = m.filter(ids)
        dropped = {d.item: d for d in res.dropped}
        return [("kept", None) if i not in dropped else
                (dropped[i].rule, getattr(dropped[i].dominated_by, "value", None))
                for i in ids]

    with Memory(path, policy="temporal", clock=clock) as mem, \
            Memory(path, policy="temporal", clock=clock) as other:
        old = mem.add("ana", "city", "Lisbon", source="crm", valid_from=T(1))
        job = mem.add("ana", "employer", "Globex", source="crm", valid_from=T(1),
                      valid_to=T(20))
        ids = [old.id, job.id]
        assert verdicts(mem, ids) == [("kept", None), ("kept", None)]
        new = mem.add("ana", "city", "Porto", source="crm", valid_from=T(5))  # a write
        assert verdicts(mem, ids) == [("temporal", "Porto"), ("kept", None)]
        mem.retract(new.id, reason="a typo")                                # a retraction
        assert verdicts(mem, ids) == [("kept", None), ("kept", None)]
        other.add("ana", "city", "Faro", source="crm", valid_from=T(6))      # another writer
        assert verdicts(mem, ids) == [("temporal", "Faro"), ("kept", None)]
        clock.set("2026-11-21")                                             # the clock
        assert verdicts(mem, ids) == [("temporal", "Faro"), ("ended", None)]
        with pytest.raises(UnknownFact):                                    # nothing kept
            mem.filter([old.id, "no-such-fact"])
        assert verdicts(mem, ids) == [("temporal", "Faro"), ("ended", None)]


def test_end_is_an_event_that_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    clock = Clock("2026-11-30")
    with Memory(path, clock=clock) as mem:
        f = mem.add("ana", "employer", "Globex", source="crm", valid_from=T(1))
        g = mem.add("ana", "phone", "555", source="crm", valid_from=T(1))
        mem.end(f.id, valid_to=T(10))
        assert mem.current("ana", "employer").status == "unknown"
        assert mem.as_of("ana", "employer", valid_at=T(5)).value == "Globex"
        assert mem.get(f.id).valid_to == datetime(2026, 11, 10, tzinfo=UTC)
    for lazy in (False, True):
        with Memory(path, clock=clock, lazy=lazy) as again:
            assert again.current("ana", "employer").status == "unknown"
            assert again.current("ana", "phone").value == "555"
            assert again.history("ana", "employer")[0].status == "ended"
            assert again.verify().ok
    out = tmp_path / "e.jsonl"
    with Memory(path, clock=clock) as mem:
        mem.export_jsonl(out)
    with Memory(clock=clock) as copy:
        copy.import_jsonl(out)
        assert copy.current("ana", "employer").status == "unknown"
        copy.import_jsonl(out)  # idempotent
        assert len(copy) == 2 and copy.get(g.id).valid_to is None


@pytest.mark.parametrize("lazy", [True, False])
def test_as_of_before_an_end_was_recorded_sees_the_fact_as_it_was_known(
        tmp_path: Path, lazy: bool) -> None:
    """Bitemporal: an ``end`` is recorded at a transaction time, so ``as_of(known_at=...)``
    before it answers with the valid_to known then (none, or an earlier end's), also after
    a reopen and for a set's member. Before, every end applied at every known_at: the
    memory rewrote what it had known."""
    path = tmp_path / "m.db"
    clock = Clock("2026-11-30")
    with Memory(path, clock=clock) as mem:
        mem.declare("pets", cardinality="many")
        f = mem.add("ana", "employer", "Globex", source="crm", valid_from=T(1))
        p = mem.add("ana", "pets", "cat", source="crm", valid_from=T(1))
        before_end = mem.get(f.id).recorded_at
        mem.end(f.id, valid_to=T(20))
        mem.end(p.id, valid_to=T(10))
        first_end = mem.history("ana", "pets")[0].recorded_at  # the set's fact, unchanged
        assert first_end == p.recorded_at
        mid = datetime.now(UTC)
        mem.end(f.id, valid_to=T(10))  # ended earlier than first said
    with Memory(path, clock=clock, lazy=lazy) as again:
        def ask(known_at: datetime, attribute: str = "employer") -> str:
            return again.as_of("ana", attribute, valid_at=T(15), known_at=known_at).status

        assert ask(before_end) == "resolved"  # no end was known
        assert ask(mid) == "resolved"  # ended at the 20th, as known then
        assert ask(datetime.now(UTC)) == "unknown"  # ended at the 10th
        assert again.as_of("ana", "pets", valid_at=T(15),
                           known_at=first_end).value == ("cat",)
        assert again.as_of("ana", "pets", valid_at=T(15)).value == ()
        assert again.current("ana", "employer").status == "unknown"


def test_end_refuses_bad_input_and_changes_nothing() -> None:
    mem = Memory()
    f = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(5))
    with pytest.raises(InvalidFact, match="after the valid_from"):
        mem.end(f.id, valid_to=T(5))
    with pytest.raises(UnknownFact):
        mem.end("nope", valid_to=T(6))
    with pytest.raises(InvalidFact, match="timezone-aware"):
        mem.end(f.id, valid_to="2026-11-20T10:00:00")
    assert mem.get(f.id).valid_to is None and mem.current("ana", "city").value == "Lisbon"
    mem.retract(f.id, reason="typo")
    with pytest.raises(InvalidFact, match="retracted"):
        mem.end(f.id, valid_to=T(6))


def test_ending_a_protected_fact_needs_its_signature() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    owner = Signer(Ed25519PrivateKey.generate())
    mem = Memory(trusted_keys=[owner.public_key])
    [f] = mem.add_many([owner.sign({"subject": "acme", "attribute": "ceo", "value": "Ana",
                                    "source": "owner", "tier": "human", "valid_from": T(1)})])
    with pytest.raises(TierNotAuthorized):
        mem.end(f.id, valid_to=T(3))
    assert mem.current("acme", "ceo").value == "Ana"
    vt = datetime(2026, 11, 3, tzinfo=UTC).isoformat()
    mem.end(f.id, valid_to=T(3), signature=owner.sign_action("end", {"id": f.id,
                                                                      "valid_to": vt}))
    assert mem.current("acme", "ceo").status == "unknown"


def test_the_clock_must_be_callable() -> None:
    with pytest.raises(InvalidFact, match="clock"):
        Memory(clock="2026-11-01")  # type: ignore[arg-type]


@given(histories(), st.data())
def test_current_equals_as_of_at_the_clock(history: list[dict], data: st.DataObject) -> None:
    ends = data.draw(st.lists(st.integers(1, 30), min_size=len(history),
                              max_size=len(history)))
    with_ends = [{**f, "valid_to": f["valid_from"] + timedelta(minutes=e)} if e % 3 else f
                 for f, e in zip(history, ends, strict=True)]
    now = at(data.draw(st.integers(0, 90)))
    with Memory(clock=lambda: now) as mem:
        mem.add_many(with_ends)
        for s, a in mem.slots():
            r, q = mem.current(s, a), mem.as_of(s, a, valid_at=now)
            assert (r.status, r.value, [h.id for h in r.heads]) == \
                (q.status, q.value, [h.id for h in q.heads])


@settings(max_examples=80, deadline=None)
@given(histories(max_size=16), st.data(), policies, st.booleans())
def test_a_historys_statuses_are_each_facts_own(history: list[dict], data: st.DataObject,
                                                 policy: str, a_set: bool) -> None:
    """``history`` decides the statuses of a slot whose facts end or begin later in one
    sweep of the slot (deciding each alone scanned the slot: 22 s for 4,000 facts that
    ended); each is the one ``get`` (which decides it alone) gives, with retractions, in
    a plain slot and a set."""
    ends = data.draw(st.lists(st.integers(-5, 30), min_size=len(history),
                              max_size=len(history)))
    with_ends = [{**f, "valid_to": f["valid_from"] + timedelta(minutes=e)} if e > 0 else f
                 for f, e in zip(history, ends, strict=True)]
    now = at(data.draw(st.integers(0, 60)))
    with Memory(policy=policy, clock=lambda: now) as mem:
        if a_set:
            mem.declare("price", cardinality="many")
        added = mem.add_many(with_ends)
        for fid in data.draw(st.lists(st.sampled_from([f.id for f in added]), max_size=3,
                                      unique=True)):
            mem.retract(fid, reason="wrong")
        for s, a in mem.slots():
            statuses = [(f.id, f.status) for f in mem.history(s, a)]
            assert statuses == [(fid, mem.get(fid).status) for fid, _ in statuses]


def test_get_gives_a_facts_status_as_history_does_in_a_view_too() -> None:
    """``get`` promised a fact "with its status" and gave None (but erased); in a scope's
    view a head or a superseded fact is so in the union of its layers."""
    clock = Clock("2026-11-10")
    mem = Memory(clock=clock)
    view = mem.scope("user:al")
    old = view.add("ana", "city", "Lisbon", source="al", valid_from=T(1))
    new = mem.add("ana", "city", "Porto", source="crm", valid_from=T(2))
    gone = mem.add("ana", "employer", "Globex", source="crm", valid_from=T(1), valid_to=T(5))
    later = mem.add("ana", "team", "core", source="crm", valid_from=T(20))
    assert [(f.id, f.status) for f in view.history("ana", "city")] == [
        (old.id, "superseded"), (new.id, "head")]
    assert (view.get(old.id).status, view.get(new.id).status) == ("superseded", "head")
    assert (mem.get(new.id).status, mem.get(gone.id).status, mem.get(later.id).status) == (
        "head", "ended", "future")
    mem.retract(new.id, reason="wrong")
    assert (view.get(old.id).status, mem.get(new.id).status) == ("head", "retracted")


@settings(max_examples=60, deadline=None)
@given(histories(), st.data())
def test_current_follows_a_clock_that_goes_back(history: list[dict],
                                                data: st.DataObject) -> None:
    """A caller's clock (a simulation, a replay) or a system clock set back may go back:
    ``current`` is then what was true at the earlier time, as ``as_of`` says, in a plain
    slot, a set, and a scope's view over the shared facts (they kept the later answer)."""
    ends = data.draw(st.lists(st.integers(1, 30), min_size=len(history),
                              max_size=len(history)))
    with_ends = [{**f, "valid_to": f["valid_from"] + timedelta(minutes=e)} if e % 3 else f
                 for f, e in zip(history, ends, strict=True)]
    now = [at(90)]
    with Memory(clock=lambda: now[0], schema={"tags": {"cardinality": "many"}}) as mem:
        mem.add_many(with_ends)
        mem.add_many([{"subject": "ana", "attribute": "tags", "value": f"t{i % 3}",
                       "source": "s", "valid_from": at(5 * i),
                       "valid_to": at(5 * i + 12)} for i in range(8)])
        mine = mem.scope("u1")
        mine.add("acme", "price", 7, source="u", valid_from=at(20), valid_to=at(50))
        moves = data.draw(st.lists(st.integers(0, 90), min_size=1, max_size=6))
        for i, minute in enumerate(moves):
            now[0] = at(minute)
            if i % 2:  # a write at the clock as it stands
                mem.add("ana", "city", f"c{i}", source="s", valid_from=at(minute))
            for s, a in [*mem.slots(), ("ana", "tags")]:
                r, q = mem.current(s, a), mem.as_of(s, a, valid_at=now[0])
                assert (r.status, sorted(map(repr, r.value)) if a == "tags" else r.value,
                        sorted(h.id for h in r.heads)) == \
                    (q.status, sorted(map(repr, q.value)) if a == "tags" else q.value,
                     sorted(h.id for h in q.heads)), (s, a, minute)
            r = mine.current("acme", "price")
            q = mine.as_of("acme", "price", valid_at=now[0])
            assert (r.status, r.value, sorted(h.id for h in r.heads)) == \
                (q.status, q.value, sorted(h.id for h in q.heads)), minute


@given(histories(), st.integers(0, 60), st.integers(1, 60))
def test_ending_a_fact_never_changes_as_of_before_its_end(history: list[dict], pick: int,
                                                         span: int) -> None:
    with Memory() as mem:
        facts = mem.add_many(history)
        f = facts[pick % len(facts)]
        end = f.valid_from + timedelta(minutes=span)
        times = [at(m) for m in range(0, 120, 7) if at(m) < end]
        before = {(s, a, t): mem.as_of(s, a, valid_at=t).heads
                  for s, a in mem.slots() for t in times}
        mem.end(f.id, valid_to=end)
        after = {(s, a, t): mem.as_of(s, a, valid_at=t).heads
                 for s, a in mem.slots() for t in times}
        assert [[h.id for h in v] for v in before.values()] == \
            [[h.id for h in v] for v in after.values()]


# ---------------------------------------------------------------- small traps

@pytest.mark.parametrize("part", [None, 2])
def test_a_refused_write_leaves_the_clock_where_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: int | None) -> None:
    """A write moves the memory's clock to now with its facts; refused, it moves nothing.
    Before, the store's clock stayed at the refused write's time: with the caller's clock
    set back, a fact ending between the two times read as ended (found by the state
    machine). ``part``: a batch that crosses into Prolog in parts, the last refused."""
    import truthkeeper.logic.store as store_module

    if part is not None:
        monkeypatch.setattr(store_module, "ADD_PART", part)
    clock = Clock("2026-11-10")
    path = tmp_path / "m.db"
    with Memory(path, policy="temporal", clock=clock) as mem, \
            Memory(path, policy="temporal", clock=clock) as other:
        clock.set("2026-11-12")
        f = other.add("acme", "price", 0, source="s", valid_from=T(1))
        with pytest.raises(TierNotAuthorized):  # s is an agent's source: refused
            mem.add_many([{"subject": f"x{i}", "attribute": "a", "value": i, "source": "t"}
                          for i in range(4)] + [{"subject": "acme", "attribute": "price",
                                                 "value": 0, "source": "s",
                                                 "tier": "verified"}])
        clock.set("2026-11-10")
        mem.end(f.id, valid_to=T(12))  # ends later than now
        assert mem.current("acme", "price").value == 0
        assert len(mem) == 1


def test_one_id_is_taken_where_ids_are() -> None:
    mem = Memory()
    f = mem.add("ana", "phone", "555", source="chat")
    assert mem.what_if(retract=f.id).changed
    assert mem.filter(f.id).kept == (f.id,)
    assert mem.erase(f.id) == [f.id]
    assert mem.history("ana", "phone")[0].status == "erased"
    g = mem.add("ana", "phone", "556", source="chat")
    assert mem.erase(g) == [g.id]


@given(histories())
def test_the_strategies_draw_what_a_default_memory_accepts(history: list[dict]) -> None:
    with Memory() as mem:
        assert len(mem.add_many(history)) == len(history)


def test_query_and_inspect_refuse_a_broken_chain(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    from truthkeeper.cli import main

    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
        mem.add("ana", "city", "Porto", source="s", valid_from=T(2))
    con = sqlite3.connect(path)
    with con:
        con.execute("DROP TRIGGER events_append_only_update")
        con.execute("UPDATE events SET recorded_at = recorded_at + 1 WHERE seq = 3")
    con.close()
    for cmd in (["query", str(path), "ana"], ["inspect", str(path)]):
        assert main(cmd) == 1
        err = capsys.readouterr().err
        assert "chain is broken" in err and "event 3" in err
        assert main([*cmd, "--forensic"]) == 0
        captured = capsys.readouterr()
        assert "FORENSIC" in captured.err
    assert main(["query", str(path), "ana", "--forensic"]) == 0
    assert "Lisbon" in capsys.readouterr().out  # what event 2 says; event 3 is not read


# ---------------------------------------------------------------- sets and value types

def test_a_set_holds_every_member_and_a_member_leaves_by_a_newer_fact() -> None:
    mem = Memory()
    mem.declare("pet", cardinality="many")
    cat = mem.add("ana", "pet", "cat", source="user:ana", tier="verified", valid_from=T(1))
    mem.add("ana", "pet", "dog", source="user:ana", tier="verified", valid_from=T(2))
    mem.add("ana", "pet", "Cat", source="chat", tier="agent", valid_from=T(3))  # restated
    r = mem.current("ana", "pet")  # a member shows as its newest statement says it
    assert (r.status, r.value) == ("resolved", ("Cat", "dog"))
    assert [c.sources for c in r.candidates if c.value == "Cat"] == [("chat", "user:ana")]
    mem.add("ana", "pet", "cat", source="user:ana", tier="verified", valid_from=T(4),
            present=False)
    assert mem.current("ana", "pet").value == ("dog",)
    assert [(f.value, f.present, f.status) for f in mem.history("ana", "pet")][0] == \
        ("cat", True, "superseded")
    assert mem.why(cat.id).details["status"] == "superseded"
    mem.retract(mem.history("ana", "pet")[1].id, reason="no dog")
    assert mem.current("ana", "pet").value == ()  # every member left: empty, not unknown
    assert Memory(schema={"pet": {"cardinality": "many"}}).current("x", "pet").status == \
        "unknown"


def test_a_contested_member_makes_the_set_a_conflict_listed_per_member() -> None:
    mem = Memory(schema={"pet": {"cardinality": "many"}})
    mem.add("ana", "pet", "cat", source="user:ana", tier="verified", valid_from=T(1))
    mem.add("ana", "pet", "dog", source="user:ana", tier="verified", valid_from=T(1))
    mem.add("ana", "pet", "dog", source="agent:x", tier="agent", valid_from=T(5),
            present=False)  # a lower tier cannot remove a verified member
    r = mem.current("ana", "pet")
    assert r.status == "conflict" and r.value is None
    assert sorted((c.value, c.present) for c in r.candidates) == [
        ("cat", True), ("dog", False), ("dog", True)]
    assert mem.conflicts() == [("ana", "pet")]


def test_rules_see_each_member_and_filter_keeps_members_apart() -> None:
    mem = Memory(policy="temporal")
    mem.declare("pet", cardinality="many")
    mem.add_rule("has_pet(U, P) :- holds(U, pet, P)")
    mem.add("ana", "pet", "cat", source="u", valid_from=T(1))
    mem.add("ana", "pet", "dog", source="u", valid_from=T(2))
    assert sorted(str(b) for b in mem.beliefs()) == ["has_pet(ana,cat)", "has_pet(ana,dog)"]
    res = mem.filter([Candidate("ana", "pet", "cat", T(1)), Candidate("ana", "pet", "owl", T(5)),
                      Candidate("ana", "pet", "dog", T(3))])
    assert res.dropped == ()  # members of a set never make each other stale


def test_filter_reports_a_kept_candidate_that_disagrees_with_the_memorys_fact() -> None:
    """``FilterResult.disputed``: a kept candidate whose value none of the memory's heads of
    its slot holds, neither making the other obsolete (a head the context makes obsolete
    takes no part). Of a set, only claims about the same member dispute."""
    mem = Memory()
    price = mem.add("acme", "price", 120, source="catalog", tier="verified",
                    valid_from="2026-03-01")
    mem.declare("office", cardinality="many")
    lisbon = mem.add("acme", "office", "Lisbon", source="catalog", tier="verified",
                     valid_from="2026-03-01")
    rumour = Candidate("acme", "price", 150, "2026-04-01", tier="unverified", source="forum")
    copy = Candidate("acme", "price", 120, "2026-04-02", tier="unverified")
    res = mem.filter([rumour])
    assert res.kept == (rumour,) and res.dropped == ()
    assert [(d.item, d.heads) for d in res.disputed] == [(rumour, (price,))]
    assert res.to_dict()["disputed"][0]["heads"][0]["id"] == price.id
    res = mem.filter([rumour, copy])  # the copy, newer, drops the rumour: nothing disputed
    assert res.kept == (copy,) and res.disputed == ()
    newer = Candidate("acme", "price", 130, "2026-05-01", tier="verified")
    res = mem.filter([rumour, newer])  # the context makes the memory's fact obsolete
    assert res.kept == (newer,) and res.disputed == ()
    older = Candidate("acme", "price", 100, "2026-01-01", tier="verified")
    assert mem.filter([older]).disputed == ()  # stale: dropped, not disputed
    porto = Candidate("acme", "office", "Porto", "2026-04-01", tier="unverified")
    gone = Candidate("acme", "office", "Lisbon", "2026-04-01", tier="unverified",
                     present=False)
    res = mem.filter([porto, gone])
    assert res.kept == (porto, gone)
    assert [(d.item, d.heads) for d in res.disputed] == [(gone, (lisbon,))]
    view = mem.scope("user:ana")  # a view's candidates against the shared layer's heads
    assert [(d.item, d.heads) for d in view.filter([rumour]).disputed] == [(rumour, (price,))]


def test_filter_judges_a_retrieved_removal_from_a_set_as_one() -> None:
    """A retrieved statement that a set no longer holds a member (``present=False``, as a
    fact's) is judged on that member's chain: it agrees with a memory whose member was
    removed, where the same member said present at the same time is stale. Before,
    Candidate had no ``present``: a removal read as the member's presence, and was
    dropped as stale."""
    from truthkeeper.integrations.documents import judge_documents

    mem = Memory(policy="temporal")
    mem.declare("pet", cardinality="many")
    mem.add("ana", "pet", "cat", source="u", valid_from=T(1))
    mem.add("ana", "pet", "cat", source="u", valid_from=T(3), present=False)
    res = mem.filter([Candidate("ana", "pet", "cat", T(2), present=False, text="gave it away"),
                      Candidate("ana", "pet", "cat", T(2), text="has a cat")])
    assert [c.text for c in res.kept] == ["gave it away"]
    assert [d.item.text for d in res.dropped] == ["has a cat"]
    report = judge_documents(mem, [{"subject": "ana", "attribute": "pet", "value": "cat",
                                    "valid_from": T(2), "present": False},
                                   {"subject": "ana", "attribute": "pet", "value": "cat",
                                    "valid_from": T(2), "present": "no"}],
                             ["gave it away", "odd"])
    assert report.kept == (0,) and report.dropped == () and report.unjudged == (1,)
    assert "present must be a bool" in dict(report.why_unjudged)[1]
    with pytest.raises(InvalidFact, match=r"items\[0\]\.present must be a bool"):
        mem.filter([Candidate("ana", "pet", "cat", T(2), present=0)])  # type: ignore[arg-type]


@given(st.lists(st.sampled_from(["cat", "dog", "owl", "fish"]), min_size=1, max_size=8),
       st.sampled_from(["cat", "dog", "owl", "fish", "yak"]))
def test_adding_a_member_never_drops_another(members: list[str], new: str) -> None:
    with Memory(schema={"pet": {"cardinality": "many"}}) as mem:
        for i, m in enumerate(members):
            mem.add("ana", "pet", m, source="s", valid_from=at(i))
        before = set(mem.current("ana", "pet").value)
        mem.add("ana", "pet", new, source="s", valid_from=at(len(members)))
        assert set(mem.current("ana", "pet").value) == before | {new}


timed_set_step = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(["cat", "dog", "owl"]), st.booleans(),
              st.integers(0, 12), st.one_of(st.none(), st.integers(1, 6)),
              st.sampled_from(["user", "chat"])),
    st.tuples(st.just("end"), st.integers(0, 99), st.integers(0, 4)),
    st.tuples(st.just("retract"), st.integers(0, 99)),
    st.tuples(st.just("clock"), st.integers(1, 4)))


@settings(max_examples=30, deadline=None)
@given(st.lists(timed_set_step, min_size=1, max_size=25))
def test_a_set_whose_members_end_answers_as_a_full_replay_at_every_step(
        tmp_path_factory: pytest.TempPathFactory, steps: list[tuple]) -> None:
    """Members that end, begin later, are ended, retracted, and a clock that moves: after
    every step the memory answers as a fresh replay of its journal at the same clock (a
    timed set is kept member by member; the replay derives it whole)."""
    path = tmp_path_factory.mktemp("timed") / "m.db"
    clock = [at(3)]
    ids: list[str] = []
    with Memory(path, policy="temporal_within_authority", clock=lambda: clock[0],
                schema={"pet": {"cardinality": "many"}}) as mem:
        mem.current("ana", "pet")  # read first: later writes update the derived set
        for step in steps:
            try:
                if step[0] == "add":
                    _, pet, present, start, length, src = step
                    ids.append(mem.add(
                        "ana", "pet", pet, source=src, present=present,
                        tier="verified" if src == "user" else "agent", valid_from=at(start),
                        valid_to=None if length is None else at(start + length)).id)
                elif step[0] == "end" and ids:
                    mem.end(ids[step[1] % len(ids)], valid_to=clock[0] + timedelta(
                        minutes=step[2]))
                elif step[0] == "retract" and ids:
                    mem.retract(ids[step[1] % len(ids)], reason="test")
                elif step[0] == "clock":
                    clock[0] += timedelta(minutes=step[1])
            except TruthkeeperError:
                pass  # refused (an end before a fact begins, a retracted fact): no change
            with Memory(path, policy="temporal_within_authority", clock=lambda: clock[0],
                        lazy=False) as fresh:
                got, want = mem.current("ana", "pet"), fresh.current("ana", "pet")
                assert (got.status, got.value, sorted(f.id for f in got.heads)) == \
                    (want.status, want.value, sorted(f.id for f in want.heads)), step


def test_a_large_set_read_again_after_each_change_answers_as_a_full_replay(
        tmp_path: Path) -> None:
    """A set of many members is answered from the rows of its last answer where they did
    not change: a member that ends later (the same fact, a new valid_to), is erased, is
    retracted, leaves or joins is read as a fresh replay reads it, Fact for Fact."""
    path = tmp_path / "m.db"
    clock = Clock("2026-11-10")
    with Memory(path, clock=clock, schema={"pet": {"cardinality": "many"}}) as mem:
        facts = mem.add_many([{"subject": "ana", "attribute": "pet", "value": f"p{i}",
                               "source": "s", "valid_from": T(1)} for i in range(300)])
        assert len(mem.current("ana", "pet").heads) == 300
        steps = [lambda: mem.end(facts[0].id, valid_to=T(20)),
                 lambda: mem.erase([facts[1].id]),
                 lambda: mem.retract(facts[2].id, reason="test"),
                 lambda: mem.add("ana", "pet", "p3", source="s", present=False,
                                 valid_from=T(2)),
                 lambda: mem.add("ana", "pet", "new", source="s", valid_from=T(2)),
                 lambda: clock.set("2026-11-25")]
        for step in steps:
            step()
            got = mem.current("ana", "pet")
            with Memory(path, clock=clock, lazy=False) as fresh:
                want = fresh.current("ana", "pet")
            assert (got.status, got.value) == (want.status, want.value)
            assert sorted(got.heads, key=lambda f: f.id) == sorted(want.heads,
                                                                  key=lambda f: f.id)
            assert sorted(map(repr, got.candidates)) == sorted(map(repr, want.candidates))
        assert len(got.value) == 297 and "new" in got.value
        assert not {"p0", "p1", "p2", "p3"} & set(got.value)


def test_learning_from_agreement_reads_members_as_presence_claims() -> None:
    mem = Memory(schema={"pet": {"cardinality": "many"}})
    for src in ("a", "b", "c"):  # three sources, each naming another pet: no disagreement
        mem.add("ana", "pet", f"pet-{src}", source=src, valid_from=T(1))
    mem.add("bob", "pet", "cat", source="a", valid_from=T(1))
    mem.add("bob", "pet", "cat", source="b", valid_from=T(1))
    mem.add("bob", "pet", "cat", source="c", valid_from=T(2), present=False)
    est = mem.learn_from_agreement(apply=False)
    assert est["a"] == est["b"] and est["c"] < est["a"]  # c disagrees about one member only


def test_value_types_coerce_at_the_boundary_or_refuse() -> None:
    mem = Memory(schema={"price": {"value_type": "number"}})
    mem.declare("active", value_type="boolean")
    assert mem.add("acme", "price", "135", source="tool-a").value == 135
    mem.add("acme", "price", 135, source="tool-b")
    assert mem.current("acme", "price").status == "resolved"  # "135" and 135: one value
    with pytest.raises(InvalidFact, match="must be a number"):
        mem.add("acme", "price", "a lot", source="tool-a")
    assert mem.add("acme", "active", "yes", source="crm").value is True
    assert len(mem) == 3


@pytest.mark.parametrize("lazy", [True, False])
def test_a_value_type_another_handle_declared_is_applied_by_the_next_write(
        journal_url: str, lazy: bool) -> None:
    """Two handles on one journal (two processes, say): a write validated before it caught
    up with the other's declaration is coerced (or refused) as the declaration says, and
    so is a supposed fact of ``what_if``; a type removed there no longer refuses or
    coerces here. Before, the journal took 135 for a string attribute (which no replay
    checks again), and refused a value by a type removed since."""
    with Memory(journal_url) as first, Memory(journal_url, lazy=lazy) as second:
        second.add("acme", "city", "Lisbon", source="s", valid_from=T(1))
        first.declare("price", value_type="string")
        first.declare("active", value_type="boolean")
        assert second.add("acme", "price", 135, source="s", valid_from=T(1)).value == "135"
        [f] = second.scope("user:ana").add_many([{"subject": "acme", "attribute": "price",
                                                  "value": 136, "source": "s"}])
        assert f.value == "136"
        with pytest.raises(InvalidFact, match="must be a boolean"):
            second.add("acme", "active", "perhaps", source="s")
        second.add_rule("seven(S) :- holds(S, level, 7)")  # the number, not the text
        first.declare("level", value_type="number")
        w = second.what_if(add=[{"subject": "acme", "attribute": "level", "value": "7",
                                 "source": "s"}])
        assert [b.text for b in w.beliefs_gained] == ["seven(acme)"]
        assert second.add("acme", "active", "yes", source="s").value is True
        first.declare("active", value_type=None)  # no type: a value is kept as it is
        assert second.add("acme", "active", "perhaps", source="s").value == "perhaps"
        assert second.add("acme", "level", 1.0, source="s").value == 1
        first.declare("level", value_type=None)
        assert type(second.add("acme", "level", 1.0, source="s").value) is float
        assert len(second) == len(first) == 6  # the scope's fact is in its view alone
    with Memory(journal_url) as again:  # replayed: the values as they were coerced
        assert again.current("acme", "price").value == "135"
        assert again.scope("user:ana").current("acme", "price").value == "136"


def test_declarations_are_journalled_and_guarded(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.declare("pet", cardinality="many", value_type="string")
        mem.add("ana", "pet", "cat", source="s", valid_from=T(1))
        mem.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
        with pytest.raises(InvalidFact, match="holds facts already"):
            mem.declare("city", cardinality="many")
        with pytest.raises(InvalidFact, match="not a number"):
            mem.declare("city", value_type="number")
        mem.declare("city", value_type="string")  # every stored value is one already
        with pytest.raises(ScopeError, match="owner"):
            mem.scope("user:ana").declare("tag", cardinality="many")
        with pytest.raises(InvalidFact, match="cardinality"):
            mem.declare("tag", cardinality="several")
    with Memory(path) as again:
        assert again.declarations()["pet"].cardinality == "many"
        assert again.declarations()["city"].value_type == "string"
        again.add("ana", "pet", "dog", source="s", valid_from=T(2))
        assert again.current("ana", "pet").value == ("cat", "dog")


# ---------------------------------------------------------------- confirmations settle

def test_a_confirmation_settles_a_conflict_until_newer_evidence_of_its_standing() -> None:
    clock = Clock("2026-11-10")
    mem = Memory(clock=clock)
    mem.add("ana", "employer", "Globex", source="email", tier="verified", valid_from=T(1))
    mem.add("ana", "employer", "Initech", source="agent:planner", tier="agent",
            valid_from=T(5))
    r = mem.current("ana", "employer")
    assert (r.status, r.value) == ("conflict", None) and r.best is not None
    assert 0 < r.best_p < 1
    assert mem.confirm("ana", "employer", "Globex") == 2
    r = mem.current("ana", "employer")
    assert (r.status, r.value) == ("resolved", "Globex")
    assert "confirmation" in str(r.why())
    clock.set("2026-11-12")
    mem.add("ana", "employer", "Hooli", source="agent:planner", tier="agent", valid_from=T(11))
    assert mem.current("ana", "employer").value == "Globex"  # a newer guess does not undo it
    mem.add("ana", "employer", "Acme", source="email", tier="verified", valid_from=T(12))
    assert mem.current("ana", "employer").value == "Acme"  # newer evidence of its standing
    assert {r.source: r.n for r in mem.reliability()}["agent:planner"] == 1


def test_a_confirmation_in_a_scope_labels_the_heads_its_view_shows(tmp_path: Path) -> None:
    """Ana's view shows the shared layer's conflict (crm says Globex, web says Acme); she
    confirms Globex. Only her own layer's heads were labelled (none here: 0), so her
    view's reliability learnt nothing of crm and web. Every head her view shows is now
    labelled, teaching her view's book, not the shared layer's; her own fact too, and a
    shared head her own newer fact hides is not."""
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add("ana", "employer", "Globex", source="crm", tier="verified", valid_from=T(1))
        mem.add("ana", "employer", "Acme", source="web", tier="verified", valid_from=T(1))
        mem.add("ana", "city", "Lisbon", source="crm", tier="verified", valid_from=T(1))
        view = mem.scope("user:ana")
        view.add("ana", "city", "Porto", source="chat", tier="verified", valid_from=T(5))
        assert view.current("ana", "employer").status == "conflict"
        assert view.confirm("ana", "employer", "Globex") == 2
        assert view.current("ana", "employer").value == "Globex"
        mine = {r.source: (r.n, r.mean) for r in view.reliability()}
        assert mine["crm"][0] == 1 and mine["web"][0] == 1 and mine["crm"][1] > mine["web"][1]
        assert all(r.n == 0 for r in mem.reliability())  # the shared book learnt nothing
        assert mem.current("ana", "employer").status == "conflict"  # nor settled
        assert view.confirm("ana", "city", "Porto") == 1  # her Porto; Lisbon is no head
        assert {r.source: r.n for r in view.reliability()}["chat"] == 1
        job = mem.add("ana", "title", "CTO", source="hr", tier="verified", valid_from=T(1))
        mem.end(job.id, valid_to=T(3))  # ended: no head of the view
        view.add("ana", "title", "CEO", source="me", tier="agent", valid_from=T(4))
        assert view.confirm("ana", "title", "CEO") == 1
        assert {r.source: r.n for r in view.reliability()}.get("hr", 0) == 0
        want = {r.source: (r.n, r.mean) for r in view.reliability()}
    with Memory(db) as mem:  # replayed: the same
        assert {r.source: (r.n, r.mean) for r in mem.scope("user:ana").reliability()} == want
        assert all(r.n == 0 for r in mem.reliability())


def test_confirming_a_value_no_head_holds_records_it() -> None:
    mem = Memory()
    mem.add("ana", "city", "Lisbon", source="a", tier="agent", valid_from=T(1))
    assert mem.confirm("ana", "city", "Porto") == 1
    assert mem.current("ana", "city").value == "Porto"


def test_a_confirmation_in_a_set_is_about_that_member_only() -> None:
    mem = Memory(schema={"pet": {"cardinality": "many"}})
    mem.add("ana", "pet", "cat", source="a", valid_from=T(1))
    mem.add("ana", "pet", "dog", source="b", valid_from=T(1))
    assert mem.confirm("ana", "pet", "cat") == 1  # the dog's source is not marked wrong
    assert {r.source: r.n for r in mem.reliability()}.get("b", 0) == 0
    assert mem.current("ana", "pet").value == ("cat", "dog")


def test_confirming_a_list_in_a_set_is_refused_unless_a_member_is_that_list() -> None:
    mem = Memory(schema={"pet": {"cardinality": "many"}, "spot": {"cardinality": "many"}})
    mem.add("ana", "pet", "cat", source="a", valid_from=T(1))
    mem.add("ana", "pet", "dog", source="b", valid_from=T(1))
    mem.add("ana", "spot", [1, 2], source="a", valid_from=T(1))
    before = len(mem.history("ana", "pet"))
    for several in (["cat", "dog"], ("cat", "dog"), {"cat"}):
        with pytest.raises(InvalidFact, match="one member of the set 'pet'.*once for each"):
            mem.confirm("ana", "pet", several)
    assert len(mem.history("ana", "pet")) == before  # nothing written
    assert mem.current("ana", "pet").value == ("cat", "dog")
    assert mem.confirm("ana", "spot", [1, 2]) == 1  # a member that is a list
    mem.declare("tags", cardinality="one")
    assert mem.confirm("ana", "tags", ["x", "y"]) == 0  # one value at a time: a list is one


def test_a_signed_confirmation_stands_at_the_protected_tier(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    owner = Signer(Ed25519PrivateKey.generate())
    path = tmp_path / "m.db"
    with Memory(path, trusted_keys=[owner.public_key]) as mem:
        mem.add("acme", "ceo", "Bo", source="crm", tier="verified", valid_from=T(1))
        payload = {"subject": "acme", "attribute": "ceo", "value": "Ana"}
        sig = owner.sign_action("confirm", payload)
        with pytest.raises(TierNotAuthorized):
            mem.confirm("acme", "ceo", "Ana", signature=owner.sign_action(
                "confirm", {**payload, "value": "Eve"}))
        mem.confirm("acme", "ceo", "Ana", signature=sig)
        assert mem.current("acme", "ceo").heads[0].tier == "human"
        with pytest.raises(TierNotAuthorized, match="nonce"):
            mem.confirm("acme", "ceo", "Ana", signature=sig)  # a replayed signature
        mem.add("acme", "ceo", "Cy", source="crm", tier="verified", valid_from="2026-11-30")
        assert mem.current("acme", "ceo").value == "Ana"  # verified is below human
        assert mem.verify().ok
    with Memory(path, trusted_keys=[owner.public_key]) as again:
        assert again.current("acme", "ceo").value == "Ana" and again.verify().ok
        with pytest.raises(TierNotAuthorized, match="nonce"):
            again.confirm("acme", "ceo", "Ana", signature=sig)


def test_a_view_signs_its_protected_facts_and_confirmations_with_its_scope(
        tmp_path: Path) -> None:
    """In a scope's view a protected fact is signed with its ``scope`` (the signature
    binds it there; without it the refusal says so), and a confirmation with
    ``sign_action("confirm", {..., "scope"})``, names as the owner writes them. Before,
    a signed confirmation in a view could not be made: it had to sign an internal key,
    and its outcome about a protected head of the view was refused as not signed."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    owner = Signer(Ed25519PrivateKey.generate())
    path = tmp_path / "m.db"
    item = {"subject": "acme", "attribute": "ceo", "value": "Ana", "source": "owner",
            "tier": "human", "valid_from": T(1)}
    with Memory(path, trusted_keys=[owner.public_key]) as mem:
        view = mem.scope("user:ana")
        with pytest.raises(TierNotAuthorized, match="with its scope"):
            view.add_many([owner.sign(item)])
        view.add_many([owner.sign({**item, "scope": "user:ana"})])
        n = view.confirm("Acme ", "ceo", "Bo", signature=owner.sign_action("confirm", {
            "subject": "Acme ", "attribute": "CEO", "value": "Bo", "scope": "User:Ana"}))
        assert n == 1 and view.current("acme", "ceo").value == "Bo"
        assert view.current("acme", "ceo").heads[0].tier == "human"
        assert mem.current("acme", "ceo").status == "unknown"
    with Memory(path, trusted_keys=[owner.public_key]) as again:
        assert again.verify().ok and again.scope("user:ana").current("acme", "ceo").value == "Bo"


# ---------------------------------------------------------------- fresh across processes

def test_a_memory_sees_another_writers_commit_before_it_answers(journal_url: str) -> None:
    import subprocess
    import sys

    reader = Memory(journal_url)
    reader.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
    assert reader.current("ana", "city").value == "Lisbon"  # cached now
    code = ("import sys; from truthkeeper import Memory\n"
            "with Memory(sys.argv[1]) as m:\n"
            "    m.add('ana', 'city', 'Porto', source='s', valid_from='2026-11-02')\n")
    subprocess.run([sys.executable, "-c", code, journal_url], check=True, timeout=120)
    # no refresh(), no write of its own, and no wait for a notification
    assert reader.current("ana", "city").value == "Porto"
    assert [f.value for f in reader.history("ana", "city")] == ["Lisbon", "Porto"]
    reader.close()


# ---------------------------------------------------------------- erasure of every byte

def _raw(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith("m.db"))


@pytest.mark.parametrize("how", ["scope", "subject", "ids"])
def test_erasure_reaches_audit_entries_queries_and_exports(tmp_path: Path, how: str) -> None:
    path = tmp_path / "m.db"
    secrets = ["555-0199-VALUE", "TEXT-OF-THE-CHUNK", "QUERY-ABOUT-ANA", "CANDIDATE-VALUE"]
    with Memory(path, policy="temporal") as mem:
        ana = mem.scope("user:ana")
        old = ana.add("ana", "phone", secrets[0], source="chat", valid_from=T(1),
                      text=secrets[1])
        new = ana.add("ana", "phone", "555-0100", source="chat", valid_from=T(2))
        shared = mem.add("acme", "price", 100, source="billing", valid_from=T(1))
        res = ana.filter([old.id, Candidate("ana", "phone", secrets[3], T(1))],
                         query=secrets[2])
        assert len(res.dropped) == 2 and len(ana.audit()) == 2
        mem.filter([shared.id], query="about acme")  # nothing dropped: no entry
        mem.close()
    with Memory(path, policy="temporal") as mem:  # the entries were journalled
        ana = mem.scope("user:ana")
        assert len(ana.audit()) == 2
        raw = _raw(path)
        assert all(s.encode() in raw for s in secrets)
        if how == "scope":
            mem.erase(scope="user:ana")
        elif how == "subject":
            ana.erase(subject="ana")
        else:
            ana.erase([old.id, new.id])
        assert ana.audit() == []
        assert mem.verify().ok
        mem.export_jsonl(tmp_path / "after.jsonl")
        assert mem.current("acme", "price").value == 100
    raw = _raw(path) + (tmp_path / "after.jsonl").read_bytes()
    for s in secrets:
        assert s.encode() not in raw, s
    with Memory(path, policy="temporal") as again:
        assert again.verify().ok and again.scope("user:ana").audit() == []
        for lazy in (True,):
            with Memory(path, policy="temporal", lazy=lazy) as lz:
                assert lz.scope("user:ana").audit() == []


def test_a_blanked_audit_entry_without_an_erasure_is_caught(tmp_path: Path) -> None:
    import sqlite3

    from truthkeeper.journal.codec import erased_audit_body, event_hash

    path = tmp_path / "m.db"
    with Memory(path, policy="temporal") as mem:
        f = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
        mem.add("ana", "city", "Porto", source="s", valid_from=T(2))
        mem.filter([f.id], query="where?")
    con = sqlite3.connect(path)
    seq, kind, ra, body, prev = con.execute(
        "SELECT seq, kind, recorded_at, body, prev_hash FROM events WHERE kind = 'audit'"
    ).fetchone()
    blank = erased_audit_body(body, ra)
    with con:  # rewrite it and every later hash, as a careful forger would
        con.execute("DROP TRIGGER events_append_only_update")
        rows = con.execute("SELECT seq, kind, recorded_at, body FROM events WHERE seq >= ? "
                           "ORDER BY seq", (seq,)).fetchall()
        for s, k, r, b in rows:
            b = blank if s == seq else b
            h = event_hash(prev, s, k, r, b)
            con.execute("UPDATE events SET body = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                        (b, prev, h, s))
            prev = h
    con.close()
    with Memory(path, policy="temporal", readonly=True) as ro:
        v = ro.verify()
        assert not v.ok and "without an erasure" in (v.reason or "")


# ---------------------------------------------------------------- layered scopes

view_step = st.one_of(
    st.tuples(st.just("add"), st.booleans(), st.sampled_from(["a", "b", "c"]),
              st.integers(0, 12), st.one_of(st.none(), st.integers(1, 6)),
              st.sampled_from(["crm:verified", "bot:agent", "chat:agent"]),
              st.one_of(st.none(), st.integers(0, 99))),
    st.tuples(st.just("confirm"), st.booleans(), st.sampled_from(["a", "b", "c"])),
    st.tuples(st.just("retract"), st.integers(0, 99)),
    st.tuples(st.just("clock"), st.integers(1, 4)))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["temporal", "temporal_within_authority", "authority_first"]),
       st.lists(view_step, min_size=1, max_size=25))
def test_a_views_current_answer_is_its_union_as_of_now_after_every_write(
        tmp_path_factory: pytest.TempPathFactory, policy: str, steps: list[tuple]) -> None:
    """A scope's view over the shared layer: writes to either layer (links, confirmations,
    facts that end or begin later, retractions) and a moving clock. After every step the
    view's current answer (from what each layer keeps) is its answer as of now (each
    layer derived at that time) and a fresh replay's."""
    path = tmp_path_factory.mktemp("view") / "m.db"
    clock = [at(3)]
    ids: list[str] = []
    with Memory(path, policy=policy, clock=lambda: clock[0]) as mem:
        ana = mem.scope("user:ana")
        ana.current("acme", "price")  # read first: later writes update what it keeps
        for step in steps:
            try:
                if step[0] == "add":
                    _, mine, value, start, length, src, sup = step
                    ids.append((ana if mine else mem).add(
                        "acme", "price", value, source=src.split(":")[0],
                        tier=src.split(":")[1], valid_from=at(start),
                        valid_to=None if length is None else at(start + length),
                        supersedes=ids[sup % len(ids)] if sup is not None and ids else None,
                    ).id)
                elif step[0] == "confirm":
                    (ana if step[1] else mem).confirm("acme", "price", step[2])
                elif step[0] == "retract" and ids:
                    mem.retract(ids[step[1] % len(ids)], reason="test")
                elif step[0] == "clock":
                    clock[0] += timedelta(minutes=step[1])
            except TruthkeeperError:
                pass  # refused (a link across layers or tiers, a retracted fact)
            got = ana.current("acme", "price")
            want = ana.as_of("acme", "price", valid_at=clock[0])
            with Memory(path, policy=policy, clock=lambda: clock[0], lazy=False) as fresh:
                again = fresh.scope("user:ana").current("acme", "price")
            for other in (want, again):
                assert (got.status, got.value, sorted(f.id for f in got.heads)) == \
                    (other.status, other.value, sorted(f.id for f in other.heads)), step


def test_a_scope_reads_through_to_the_shared_layer() -> None:
    mem = Memory()
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    ana.add("acme", "price", 90, source="agent:ana", tier="agent", valid_from=T(1))
    shared = mem.add("acme", "price", 100, source="billing", tier="verified", valid_from=T(2))
    r = ana.current("acme", "price")  # a newer verified shared price beats the older guess
    assert (r.value, r.heads[0].scope) == (100, None)
    mine = ana.add("acme", "price", 95, source="user:ana", tier="verified", valid_from=T(3))
    r = ana.current("acme", "price")  # the user's newer verified statement, for ana only
    assert (r.value, r.heads[0].scope) == (95, "user:ana")
    assert bob.current("acme", "price").value == 100 == mem.current("acme", "price").value
    assert [f.status for f in ana.history("acme", "price")] == ["superseded", "superseded",
                                                                 "head"]
    assert len(mem) == 1 and len(ana) == 3 and len(bob) == 1
    assert bob.get(shared.id).value == 100 and ana.slots() == [("acme", "price")]
    # a retrieved candidate is judged against both layers
    res = bob.filter([Candidate("acme", "price", 80, T(1)), shared.id])
    by = [getattr(d.dominated_by, "id", d.dominated_by) for d in res.dropped]
    assert by == [shared.id] and res.kept == (shared.id,)
    res = ana.filter([shared.id, mine.id])
    by = [getattr(d.dominated_by, "id", d.dominated_by) for d in res.dropped]
    assert res.kept == (mine.id,) and by == [mine.id]
    # writes stay in the scope: a view cannot retract, end or erase the shared layer
    for write in (lambda: ana.retract(shared.id, reason="no"),
                  lambda: ana.end(shared.id, valid_to=T(4)),
                  lambda: ana.erase(shared.id)):
        with pytest.raises(ScopeError, match="shared layer"):
            write()
    assert mem.erase(scope="user:ana") == [f.id for f in ana.history("acme", "price")
                                           if f.scope == "user:ana"]
    assert mem.current("acme", "price").value == 100 == ana.current("acme", "price").value
    assert ana.erase(subject="acme") == []  # the shared fact is not the view's to erase


def test_conflicts_of_a_view_are_those_of_its_union() -> None:
    mem = Memory()
    ana = mem.scope("user:ana")
    mem.add("ana", "city", "Lisbon", source="crm", valid_from=T(1))
    ana.add("ana", "city", "Porto", source="chat", valid_from=T(1))  # same time: a conflict
    assert mem.conflicts() == [] and ana.conflicts() == [("ana", "city")]
    mem.add("acme", "ceo", "Bo", source="a", valid_from=T(1))
    mem.add("acme", "ceo", "Cy", source="b", valid_from=T(1))
    assert mem.conflicts() == [("acme", "ceo")]
    assert ana.conflicts() == [("acme", "ceo"), ("ana", "city")]


@given(histories(), st.booleans())
def test_a_scope_with_nothing_of_its_own_answers_as_the_shared_layer(
        history: list[dict], set_valued: bool) -> None:
    with Memory(schema={"price": {"cardinality": "many"}} if set_valued else None) as mem:
        mem.add_many(history)
        view = mem.scope("user:nobody")
        assert view.slots() == mem.slots()
        for s, a in mem.slots():
            r, q = mem.current(s, a), view.current(s, a)
            assert (r.status, r.value, [h.id for h in r.heads]) == \
                (q.status, q.value, [h.id for h in q.heads])
            assert [f.id for f in mem.history(s, a)] == [f.id for f in view.history(s, a)]


def test_scope_names_merge_only_when_they_are_one_name() -> None:
    mem = Memory()
    mem.scope("user:straße").add("me", "city", "Graz", source="s")
    assert mem.scope("user:strasse").current("me", "city").status == "unknown"
    assert mem.scope("User:Straße ").current("me", "city").value == "Graz"
    for forged in ("user:\u212aim", "user:ｋim"):  # a Kelvin sign, a fullwidth k
        with pytest.raises(InvalidFact, match="compatibility"):
            mem.scope(forged)


def test_one_filter_call_keeps_the_audit_log_bounded(tmp_path: Path) -> None:
    from truthkeeper.audit import AuditLog

    with Memory(tmp_path / "m.db", policy="temporal") as mem:
        mem._audit._rows = AuditLog(limit=50)._rows  # a small bound, to keep the test fast
        items = [Candidate("acme", "price", i, at(i)) for i in range(300)]
        assert len(mem.filter(items, query="q").dropped) == 299
        assert len(mem.audit()) == 50  # the newest 50 drops
        mem.add("acme", "x", 1, source="s")  # the next write journals the log
    import sqlite3

    con = sqlite3.connect(tmp_path / "m.db")
    assert con.execute("SELECT count(*) FROM events WHERE kind = 'audit'").fetchone()[0] <= 50
    con.close()


def test_a_lone_surrogate_is_refused_and_poisons_nothing() -> None:
    from truthkeeper import Policy, TruthkeeperError

    mem, other = Memory(), Memory()
    other.add("a", "b", 1, source="s")
    for call in (lambda: mem.why("p('\ud800')"),
                 lambda: Policy.from_prolog("x", "dominates(F, G) :- newer(F, G). % \ud800")):
        with pytest.raises(TruthkeeperError, match="surrogate"):
            call()
        assert other.current("a", "b").value == 1  # the next call of another memory works


@pytest.mark.parametrize("dsn", ["postgresql://tk:s3cr3t-pw@127.0.0.1:9/none",
                                 "host=127.0.0.1 port=9 user=tk password=s3cr3t-pw dbname=x",
                                 "host=127.0.0.1 port=9 password='s3cr3t-pw' dbname=x",
                                 "postgresql://tk@127.0.0.1:9/none?password=s3cr3t-pw"])
def test_a_postgresql_password_never_reaches_a_message(
        dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    from truthkeeper import JournalError
    from truthkeeper.cli import main
    from truthkeeper.journal.postgres import PostgresJournal

    with pytest.raises(JournalError) as info:
        PostgresJournal(dsn, connect_timeout=1)
    assert "s3cr3t-pw" not in str(info.value) and "***" in str(info.value)
    if dsn.startswith("postgresql://"):
        assert main(["inspect", dsn]) == 2
        err = capsys.readouterr().err
        assert "s3cr3t-pw" not in err and "***" in err


def test_a_policy_reading_an_undeclared_meta_key_is_refused() -> None:
    from truthkeeper import Policy

    text = "dominates(F, G) :- meta(F, erratum, true), newer(F, G)."
    with pytest.raises(PolicyError, match="does not declare"):
        Policy.from_prolog("erratum_first_undeclared", text).register()
    Policy.from_prolog("erratum_first_declared", text, meta_keys=["erratum"]).register()


def test_two_journals_with_one_policy_name_and_two_texts(tmp_path: Path) -> None:
    from truthkeeper import Policy

    newer = Policy.from_prolog("same_name", "dominates(F, G) :- newer(F, G).")
    with Memory(tmp_path / "a.db", policy=newer) as a:
        a.add("x", "y", 100, source="s", valid_from=T(1))
    # another process wrote b.db with another text under the same name
    import subprocess
    import sys

    code = ("import sys; from truthkeeper import Memory, Policy\n"
            "p = Policy.from_prolog('same_name', 'dominates(F, G) :- newer(G, F).')\n"
            "with Memory(sys.argv[1], policy=p) as m:\n"
            "    m.add('x', 'y', 100, source='s', valid_from='2026-11-01')\n"
            "    m.add('x', 'y', 200, source='s', valid_from='2026-11-02')\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "b.db")], check=True,
                   timeout=120)
    with pytest.raises(PolicyError, match="another text"):
        Memory(tmp_path / "b.db", policy="same_name")  # never decided by a.db's text


def test_decide_and_the_bayesian_reading_of_a_set() -> None:
    mem = Memory(schema={"pet": {"cardinality": "many"}})
    for pet in ("cat", "dog"):
        mem.add("ana", "pet", pet, source="user:ana", tier="verified", valid_from=T(1))
    d = mem.decide("ana", "pet", utility=Utility(correct=1, wrong=0))
    assert (d.action, d.value) == ("answer", ("cat", "dog")) and 0 < d.p < 1
    mem.add("ana", "pet", "dog", source="web", tier="unverified", valid_from=T(2),
            present=False)  # a weak claim that the dog is gone: contested, not decided
    r = mem.current("ana", "pet")
    assert r.status == "conflict" and r.value is None
    assert r.best == ("cat", "dog") and 0 < r.best_p < d.p  # the verified side is likelier
    dog = {c.present: c for c in r.candidates if c.value == "dog"}
    assert dog[True].p > dog[False].p and dog[True].best and not dog[False].best
    for _ in range(30):  # the web source proves right, ana's relay wrong: the reading follows
        mem.record_source_outcome("web", correct=True, tier="unverified")
        mem.record_source_outcome("user:ana", correct=False, tier="verified")
    assert mem.current("ana", "pet").best == ("cat",)


def test_declare_absorbs_categories(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.declare("label", categories=["cat", "dog"])
        with pytest.raises(InvalidFact):
            mem.add("img1", "label", "owl", source="w1")
        mem.add("img1", "label", "cat", source="w1")
    with Memory(path) as again:  # journalled
        with pytest.raises(InvalidFact):
            again.add("img2", "label", "owl", source="w1")
        again.declare("label", categories=[])  # removed
        again.add("img2", "label", "owl", source="w1")


def test_fact_ids_are_not_guessable() -> None:
    mem = Memory()
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    a = [ana.add("me", "k", i, source="s").id for i in range(3)]
    b = bob.add("me", "k", 0, source="s").id
    # no id follows from another: a view cannot name the next user's fact
    assert len({x[:-2] for x in [*a, b]}) == 4 and len(b) >= 17
    for probe in (b, "f" + "0" * 16):
        with pytest.raises(UnknownFact) as info:
            ana.get(probe)
        assert str(info.value) == f"{probe!r} names no fact of this memory"


def test_the_number_of_rules_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import truthkeeper.events
    from truthkeeper import UnsafeRule

    monkeypatch.setattr(truthkeeper.events, "MAX_RULES", 3)
    mem = Memory()
    for i in range(3):
        mem.add_rule(f"p{i}(X) :- holds(X, a, b)")
    with pytest.raises(UnsafeRule, match="at most 3 rules"):
        mem.add_rule("q(X) :- holds(X, a, b)")
    mem.remove_rule("p0(X) :- holds(X, a, b)")
    mem.add_rule("q(X) :- holds(X, a, b)")
    assert len(mem.rules()) == 3


def test_the_graph_of_a_view_draws_its_union() -> None:
    mem = Memory()
    shared = mem.add("acme", "price", 100, source="billing", tier="verified", valid_from=T(1))
    ana = mem.scope("user:ana")
    mine = ana.add("acme", "price", 90, source="user:ana", tier="verified", valid_from=T(2))
    ana.add("acme", "city", "Lyon", source="a", valid_from=T(1))
    other = ana.add("acme", "city", "Nice", source="b", valid_from=T(1))
    mem.scope("user:bob").add("acme", "price", 80, source="user:bob", tier="verified",
                              valid_from=T(3))
    g = ana.graph()
    assert g.nodes[shared.id]["layer"] is None and g.nodes[mine.id]["layer"] == "user:ana"
    assert g.edges[mine.id, shared.id]["kind"] == "supersedes"  # across the layers
    assert any(d["kind"] == "conflicts" for _, _, d in g.edges(other.id, data=True))
    assert len([n for n, d in g.nodes(data=True) if d["kind"] == "fact"]) == 4  # not bob's
    assert set(mem.graph().nodes) == {shared.id}  # the memory: the shared layer


def test_why_in_a_view_never_proves_another_scopes_belief() -> None:
    mem = Memory()
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    ana.add("me", "phone", "555-0101", source="chat")
    mem.add_rule("contact(U, P) :- holds(U, phone, P)")
    assert [b.text for b in ana.beliefs()] == ["contact(me,'555-0101')"]
    assert "555-0101" in str(ana.why("contact(me,'555-0101')"))
    for pattern in ("contact(U, P)", "contact(me,'555-0101')"):
        with pytest.raises(UnknownFact) as info:
            bob.why(pattern)
        assert "555" not in str(info.value) or pattern.endswith("')")
        assert str(info.value) == f"{pattern!r} is neither a fact id of this memory nor a " \
                                  "current belief"


def test_filter_reads_candidates_with_the_declared_types() -> None:
    mem = Memory(policy="temporal", schema={"price": {"value_type": "number"}})
    mem.add("acme", "price", 135, source="billing", valid_from=T(2))
    res = mem.filter([Candidate("acme", "price", "135", T(1)),     # the same value: kept
                      Candidate("acme", "price", "120", T(1))])    # older, another: dropped
    assert [c.value for c in res.kept] == ["135"] and len(res.dropped) == 1
    with pytest.raises(InvalidFact, match="must be a number"):
        mem.filter([Candidate("acme", "price", "a lot", T(1))])


def test_a_set_said_of_then_retracted_is_resolved_as_known_before_the_retraction() -> None:
    """``as_of(known_at=...)`` before a retraction sees the fact (a set whose only member
    ended is the empty set, not unknown), in the shared layer and in a scope's view."""
    mem = Memory(schema={"pets": {"cardinality": "many"}})
    for m in (mem, mem.scope("user:ana")):
        f = m.add("ana", "pets", "cat", source="s", valid_from=T(1), valid_to=T(2))
        m.retract(f.id, reason="typo")
        assert m.current("ana", "pets").status == "unknown"
        before = m.as_of("ana", "pets", known_at=f.recorded_at)
        assert (before.status, before.value) == ("resolved", ())


def test_a_fact_still_to_begin_makes_no_current_fact_stale_in_filter() -> None:
    """``filter`` keeps a stored fact that has not begun (nothing dominates it), and that
    fact judges no other: the current head stays, in a view and beside a retrieved
    candidate too (it was dropped there, the later fact taken for a current one)."""
    from truthkeeper import Candidate

    clock = Clock("2026-11-10")
    mem = Memory(policy="temporal", clock=clock)
    now = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
    later = mem.add("ana", "city", "Porto", source="s", valid_from=T(20))
    assert mem.current("ana", "city").value == "Lisbon"
    other = Candidate("bob", "city", "Rome", T(2))
    for who in (mem, mem.scope("user:ana")):
        assert who.filter([now.id, later.id]).kept == (now.id, later.id)
        assert who.filter([now.id, later.id, other]).kept == (now.id, later.id, other)
    clock.set("2026-11-21")
    r = mem.filter([now.id, later.id])
    assert r.kept == (later.id,) and r.dropped[0].dominated_by.id == later.id

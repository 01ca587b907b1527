"""An agent's memory as agents mean it: facts that end (valid_to, the memory's clock, end()),
and the small traps of the API (one id where ids are taken, test strategies a default memory
accepts, format 2 journals)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthkeeper import (
    Candidate,
    InvalidFact,
    Memory,
    Signer,
    TierNotAuthorized,
    UnknownFact,
    Utility,
)
from truthkeeper.testing import at, histories

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

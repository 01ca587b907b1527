"""Opening lazily (``Memory(path, lazy=True)``): every answer is that of a full replay,
whatever the history, the queries and their order; a damaged index is rebuilt and a
damaged event is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import example, given, settings
from hypothesis import strategies as st

import truthkeeper.lazy
from truthkeeper import (
    Candidate,
    JournalCorrupt,
    Memory,
    Signer,
    TierNotAuthorized,
    TruthkeeperError,
)
from truthkeeper.lazy import HELD_SLOTS
from truthkeeper.testing import at, policies

SLOTS = [("acme", "price"), ("acme", "owner"), ("ana", "city"), ("bob", "city"),
         ("bob", "price"), ("ana", "pets")]  # pets: a set (declared many)
TIERS = ["human", "verified", "agent", "unverified"]
RULES = ["priced(S) :- holds(S, price, _)", "same_city :- holds(ana, city, C), holds(bob, city, C)",
         "owner_of(S, O) :- holds(S, owner, O)"]

write = st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(SLOTS) - 1), st.integers(0, 3),
              st.integers(0, 8), st.integers(0, 3), st.sampled_from(["a", "b", "c"]),
              st.one_of(st.none(), st.integers(0, 99))),
    st.tuples(st.just("retract"), st.integers(0, 99)),
    st.tuples(st.just("outcome"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("source_outcome"), st.sampled_from(["a:agent", "web:agent"]),
              st.booleans()),
    st.tuples(st.just("rule"), st.integers(0, len(RULES) - 1)),
    st.tuples(st.just("unrule"), st.integers(0, len(RULES) - 1)),
    st.tuples(st.just("erase"), st.integers(0, 99)),
    st.tuples(st.just("erase_subject"), st.integers(0, len(SLOTS) - 1)),
)
query = st.one_of(
    st.tuples(st.sampled_from(["current", "history", "decide"]),
              st.integers(0, len(SLOTS) - 1)),
    st.tuples(st.just("as_of"), st.integers(0, len(SLOTS) - 1), st.integers(0, 9),
              st.one_of(st.none(), st.integers(0, 99))),
    st.tuples(st.sampled_from(["get", "why", "superseded_by"]), st.integers(0, 99)),
    st.tuples(st.just("filter"), st.lists(st.integers(0, 99), max_size=4),
              st.lists(st.tuples(st.integers(0, len(SLOTS) - 1), st.integers(0, 9)),
                       max_size=3)),
    st.tuples(st.sampled_from(["len", "slots", "conflicts", "reliability", "about",
                               "beliefs", "why_belief"])),
    st.tuples(st.just("write"), write),
    st.tuples(st.just("other_writer"), write),
)


def _apply(mem: Memory, ids: list[str], op: tuple[Any, ...]) -> Any:
    """One write; refusals are part of the answer (the same for both memories)."""
    try:
        if op[0] == "add":
            _, k, v, t, tier, src, sup = op
            s, a = SLOTS[k]
            target = ids[sup % len(ids)] if sup is not None and ids else None
            f = mem.add(s, a, f"v{v}", source=f"{src}:{TIERS[tier]}", tier=TIERS[tier],
                        valid_from=at(t), supersedes=target,
                        present=a != "pets" or v % 3 != 0)  # a member leaves now and then
            ids.append(f.id)
            return f
        if op[0] == "rule":
            return mem.add_rule(RULES[op[1]])
        if op[0] == "unrule":
            return mem.remove_rule(RULES[op[1]])
        if op[0] == "erase_subject":
            return mem.erase(subject=SLOTS[op[1]][0])
        if not ids and op[0] in ("retract", "outcome", "erase"):
            return None
        if op[0] == "erase":
            return mem.erase([ids[op[1] % len(ids)]])
        if op[0] == "retract":
            return mem.retract(ids[op[1] % len(ids)], reason="test")
        if op[0] == "outcome":
            return mem.record_outcome(ids[op[1] % len(ids)], correct=op[2])
        return mem.record_source_outcome(op[1], correct=op[2])
    except TruthkeeperError as exc:
        return type(exc).__name__


def _ask(mem: Memory, ids: list[str], q: tuple[Any, ...]) -> Any:
    kind = q[0]
    try:
        if kind in ("current", "history", "decide"):
            return getattr(mem, kind)(*SLOTS[q[1]])
        if kind == "as_of":
            known = None if q[3] is None else mem.get(ids[q[3] % len(ids)]).recorded_at \
                if ids else None
            return mem.as_of(*SLOTS[q[1]], valid_at=at(q[2]), known_at=known)
        if kind in ("get", "why", "superseded_by"):
            return getattr(mem, kind)(ids[q[1] % len(ids)]) if ids else None
        if kind == "filter":
            items: list[Any] = [ids[i % len(ids)] for i in q[1]] if ids else []
            items += [Candidate(*SLOTS[k], f"v{t}", at(t)) for k, t in q[2]]
            return mem.filter(items)
        if kind == "len":
            return len(mem)
        if kind == "about":
            return mem.about("bob"), mem.slots("acme")
        if kind == "why_belief":
            return [mem.why(b) for b in mem.beliefs()]
        return getattr(mem, kind)()
    except TruthkeeperError as exc:
        return type(exc).__name__


@settings(max_examples=40)
@example(policy="temporal", touched=set(), queries=[("len",)], other_lazy=False, held=1, history=[
    ("add", 0, 0, 0, 0, "a", None), ("add", 0, 0, 0, 0, "a", None), ("outcome", 0, False),
    ("add", 0, 0, 0, 0, "a", None), ("outcome", 20, False)])
@given(policy=policies, history=st.lists(write, max_size=25),
       touched=st.sets(st.integers(0, len(SLOTS) - 1)), other_lazy=st.booleans(),
       queries=st.lists(query, min_size=1, max_size=12), held=st.sampled_from([1, 2, HELD_SLOTS]))
def test_every_query_after_a_lazy_open_answers_as_a_full_replay(new_journal, policy, history,
                                                                  touched, queries,
                                                                  other_lazy, held):
    """``held``: how many slots the lazy memory keeps read in (1: before each call it
    takes out every slot Prolog lets it, and reads them again when asked)."""
    path = new_journal()
    ids: list[str] = []
    with Memory(path, policy=policy, protected_tiers=(), synchronous="NORMAL") as w:
        w.declare("pets", cardinality="many")
        for op in history:
            _apply(w, ids, op)
    lazy = Memory(path, policy=policy, protected_tiers=(), lazy=True)
    full = Memory(path, policy=policy, protected_tiers=(), lazy=False)
    other = Memory(path, policy=policy, protected_tiers=(), lazy=other_lazy)
    held_before, truthkeeper.lazy.HELD_SLOTS = truthkeeper.lazy.HELD_SLOTS, held
    try:
        # at open: the slots outcomes name, and the placeholders' slots erasures name
        assert {s for s in lazy._store.lazy.loaded if not s.endswith("\x1f$erased")} <= {
            "bob\x1fcity", "bob\x1fprice", "acme\x1fprice", "acme\x1fowner", "ana\x1fcity",
            "ana\x1fpets"}
        for k in sorted(touched):  # some slots are read before the writes below
            assert lazy.current(*SLOTS[k]) == full.current(*SLOTS[k])
        for q in queries:
            if q[0] == "write":  # through the lazy memory; the full one catches up
                _apply(lazy, ids, q[1])
                full.refresh()
                continue
            if q[0] == "other_writer":  # another process's commit reaches both
                _apply(other, ids, q[1])
                lazy.refresh()
                full.refresh()
                continue
            assert _ask(lazy, ids, q) == _ask(full, ids, q), q
        for s, a in SLOTS:  # and every slot in the end
            assert lazy.history(s, a) == full.history(s, a)
            assert lazy.current(s, a) == full.current(s, a)
        assert lazy.reliability() == full.reliability()
        assert lazy.verify().ok
    finally:
        truthkeeper.lazy.HELD_SLOTS = held_before
        for m in (lazy, full, other):
            m.close()


def _memory(loc: str, n: int = 30) -> str:
    """A memory at ``loc`` (a directory for SQLite, or a PostgreSQL URL) with n slots."""
    path = loc if loc.startswith("postgresql://") else str(Path(loc) / "m.db")
    with Memory(path, synchronous="NORMAL") as m:
        for i in range(n):
            m.add(f"u{i}", "city", "Lisbon", source="crm", valid_from=at(0))
            m.add(f"u{i}", "city", f"Porto{i}", source="crm", valid_from=at(5))
    return path


def _sql(path: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the journal's database behind truthkeeper's back."""
    if path.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(path, autocommit=True) as conn:
            cur = conn.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if cur.description is not None else []
    con = sqlite3.connect(path)
    try:
        out = con.execute(sql, params).fetchall()
        con.commit()
        return out
    finally:
        con.close()


@pytest.fixture
def loc(journal_url: str) -> str:
    """Where ``_memory`` puts a memory, on each backend."""
    return str(Path(journal_url).parent) if not journal_url.startswith("postgresql://") \
        else journal_url


def test_a_lazy_open_reads_only_the_slots_asked_about(loc):
    path = _memory(loc)
    with Memory(path, lazy=True) as m:
        assert m._store.lazy.loaded == set()
        assert m.current("u3", "city").value == "Porto3"
        assert m._store.lazy.loaded == {"u3\x1fcity"}
        assert m.conflicts() == []  # what ranges over every slot loads them all
        assert m._store.lazy.done


def test_len_of_a_lazy_memory_counts_on_the_index_and_loads_no_slot(loc):
    """``len`` loaded every slot (5.6 s and the whole store's memory at 100,000 facts). It
    counts on the index, and equals a full replay's count in every view: with scopes (a
    shared subject named as a scope is no scope's), erased and retracted facts, a subject
    with NUL (applied at open), and another writer's commits made after the count's
    catch-up."""
    path = _memory(loc, 4)
    with Memory(path, synchronous="NORMAL") as w:
        w.add("user:ana", "city", "Faro", source="crm")  # a shared slot named as a scope
        ana = w.scope("user:ana")
        f = ana.add("me", "city", "Lisbon", source="me")
        ana.add("me", "pet", "cat", source="me")
        w.scope("user:bo").add("me", "city", "Porto", source="me")
        ana.erase([f.id])
        w.retract(w.add("u1", "city", "Beja", source="crm").id, reason="typo")
        w.add("a\x00b", "city", "Nul", source="crm")
        w.erase(subject="u2")
    views = [None, "user:ana", "user:bo", "user:cy"]
    with Memory(path, lazy=False) as full:
        want = [len(full if v is None else full.scope(v)) for v in views]
    assert want == [11, 13, 12, 11]
    with Memory(path, lazy=True) as m, Memory(path, synchronous="NORMAL") as other:
        got = [len(m if v is None else m.scope(v)) for v in views]
        assert got == want and m._store.lazy.loaded <= {"a\x00b\x1fcity"} | {
            s for s in m._store.lazy.loaded if s.endswith("$erased")}
        assert not m._store.lazy.done
        upto = m._store.lazy.upto
        other.scope("user:bo").add("me", "job", "cook", source="me")
        other.add("u9", "city", "Tavira", source="crm")
        # counted as the memory stood before them (a commit between its catch-up and
        # its count), then after
        assert [m._store.lazy.journal.index_fact_count(upto, v) for v in views] == want
        assert [len(m if v is None else m.scope(v)) for v in views] == [12, 14, 14, 12]


def test_a_write_asks_the_index_nothing_while_it_holds_the_journals_lock(loc):
    """A lazily opened memory brings a write's slots (and its sources' tiers) in before
    the write takes the journal's lock, and never looks up an id it drew itself: under the
    lock (other writers wait on it) the index is not asked anything. An id given by the
    caller, or a source the journal has not bound yet, is still looked up there, since
    another writer may have used it meanwhile."""
    path = _memory(loc)
    with Memory(path, lazy=True, index_check="before-write") as m:
        j = m._ledger.journal
        asked: list[tuple[str, bool]] = []

        def locked() -> bool:
            return bool(j._in_txn) if hasattr(j, "_in_txn") else j._conn.in_transaction

        def spying(name: str) -> Any:
            orig = getattr(j, name)

            def spy(*a: Any, **k: Any) -> Any:
                asked.append((name, locked()))
                return orig(*a, **k)
            return spy

        for name in ("index_lookup", "index_sync", "slot_events", "index_slots"):
            setattr(j, name, spying(name))
        m.add("u3", "city", "Faro", source="crm")  # a slot not read yet
        m.add("u4", "city", "Braga", source="crm")
        m.add("u4", "city", "Beja", source="crm")
        assert asked and not [n for n, inside in asked if inside], asked
        for given in ({"id": "given-1", "source": "crm"}, {"source": "new"}):
            asked.clear()
            m.add_many([{"subject": "u5", "attribute": "city", "value": "Tomar", **given}])
            assert ("index_lookup", True) in asked, given  # checked under the lock
        assert m.current("u4", "city").value == "Beja"


def test_a_writer_does_not_ask_whether_the_index_took_its_own_writes(loc):
    """After a write of its own, with no other writer's event between, a lazily opened
    memory knows the index holds that write (it was indexed in the same transaction): a
    write to a new slot asks the journal for that slot's events only, not again for the
    index's position. Another writer's commit makes it ask, and its facts are read."""
    path = _memory(loc)
    with Memory(path, lazy=True) as m, Memory(path, synchronous="NORMAL") as other:
        j = m._ledger.journal
        synced: list[int] = []
        orig = j.index_sync

        def spy() -> bool:
            synced.append(1)
            return orig()
        j.index_sync = spy
        m.add("n0", "city", "Faro", source="crm")  # the first asks
        synced.clear()
        for i in range(1, 4):
            m.add(f"n{i}", "city", "Faro", source="crm")
        assert synced == []
        other.add("n9", "city", "Tomar", source="crm")
        m.refresh()
        m.add("n5", "city", "Faro", source="crm")
        assert synced == [1]
        assert m.current("n9", "city").value == "Tomar"
        assert [m.current(f"n{i}", "city").value for i in range(4)] == ["Faro"] * 4


def test_about_a_subject_reads_only_that_subjects_slots(loc):
    """``about`` and ``slots(subject)`` find a subject's slots through the index (they
    read every slot before: minutes at a million facts); scopes stay apart."""
    path = _memory(loc)
    with Memory(path, synchronous="NORMAL") as m:
        m.add("u3", "phone", "555", source="crm")
        m.add("u30", "city", "Braga", source="crm")  # a subject that u3 is a prefix of
        m.scope("team").add("u3", "city", "Team city", source="crm")
        m.scope("u3").add("x", "city", "Scope named like the subject", source="crm")
    with Memory(path, lazy=True) as m:
        assert {a: r.value for a, r in m.about("U3 ").items()} == {"city": "Porto3",
                                                                  "phone": "555"}
        assert m._store.lazy.loaded == {"u3\x1fcity", "u3\x1fphone", "u3\x1fx\x1fcity"}
        assert m.slots("u3") == [("u3", "city"), ("u3", "phone")]
        assert m.about("nobody") == {} and not m._store.lazy.done
        team = m.scope("team")
        # a scope reads through to the shared layer: its own city, the shared phone
        assert {a: r.value for a, r in team.about("u3").items()} == {"city": "Team city",
                                                                     "phone": "555"}
        assert m.scope("u3").slots("x") == [("x", "city")]
        assert not m._store.lazy.done
        loaded = set(m._store.lazy.loaded)  # listing every slot reads none: the index's
        assert len(m.slots()) == 32 and m._store.lazy.loaded == loaded
        assert not m._store.lazy.done


def test_listing_every_slot_lazily_reads_none_and_lists_what_a_full_replay_does(loc):
    """``slots()`` read every slot in (6 s and 100 MB at 100,000 facts: an MCP client's
    first ``slots`` call); it now lists them from the slot index, in every layer, with
    the slots read in (a NUL-named one is never indexed), without erased ones."""
    path = _memory(loc, 6)
    with Memory(path, synchronous="NORMAL") as m:
        m.scope("team").add("u1", "phone", "555", source="crm")
        m.scope("team").add("desk", "floor", 3, source="crm")
        m.add("u\x00x", "city", "Nul", source="crm")
        gone = m.add("u7", "city", "Elvas", source="crm")
        m.retract(m.add("u8", "city", "Beja", source="crm").id, reason="wrong")
        m.erase(subject="u2")
        m.scope("team").erase(subject="desk")
        m.erase([gone.id])
    def listing(lazy: bool) -> tuple[Any, ...]:
        with Memory(path, lazy=lazy) as m:
            at_open = set(m._store.lazy.loaded) if lazy else set()  # erasures', NUL's
            got = (m.slots(), m.scope("team").slots(), m.scope("other").slots(), m.scopes())
            assert not lazy or not m._store.lazy.done and \
                m._store.lazy.loaded - {"$audit"} == at_open  # scopes() reads the audit
            return got
    full = listing(False)
    assert listing(True) == full
    assert ("u\x00x", "city") in full[0] and ("u8", "city") in full[0]
    assert ("u2", "city") not in full[0] and ("u7", "city") not in full[0]
    assert set(full[1]) - set(full[0]) == {("u1", "phone")} and full[3] == ["team"]


def test_bringing_a_slot_in_keeps_the_answers_already_given(loc):
    """A slot's first read loads its events, which changes no other slot's answer: the
    answers cached for the slots read before stay cached (they were emptied on every load,
    so a lazy memory kept paying a Prolog call for its warm reads)."""
    path = _memory(loc)
    with Memory(path, lazy=True) as m:
        first = m.current("u3", "city")
        assert m.current("u4", "city").value == "Porto4"
        assert m._cache[(None, "u3", "city")][0] is first
        assert m.current("u3", "city") is first
        m.add("u3", "city", "Faro", source="s", valid_from="2026-06-01")  # a write empties it
        assert (None, "u3", "city") not in m._cache
        assert m.current("u3", "city").value == "Faro"


def test_the_cache_of_answers_is_bounded(loc, monkeypatch):
    """Reading every slot once must not keep an answer per slot (a million-slot memory
    would keep gigabytes): the oldest answers go first."""
    import truthkeeper.session

    monkeypatch.setattr(truthkeeper.session, "CACHE_SIZE", 3)
    path = _memory(loc, 6)
    for lazy in (True, False):
        with Memory(path, lazy=lazy) as m:
            for i in range(6):
                assert m.current(f"u{i}", "city").value == f"Porto{i}"
            assert list(m._cache) == [(None, f"u{i}", "city") for i in (3, 4, 5)]
            assert m.current("u0", "city").value == "Porto0"  # read again, cached again
            assert len(m._cache) == 3


def test_a_lazy_memory_holds_a_bounded_number_of_slots(loc, monkeypatch):
    """Past HELD_SLOTS slots read in, the least recently asked about are taken out of the
    store before the next call, and read from the journal again when asked: what a long-
    lived reader holds does not grow with what it has read, and every answer stays."""
    monkeypatch.setattr(truthkeeper.lazy, "HELD_SLOTS", 8)
    path = _memory(loc, 30)
    with Memory(path, lazy=True) as m:
        lazy = m._store.lazy
        for _ in range(2):
            for i in range(30):
                assert m.current(f"u{i}", "city").value == f"Porto{i}"
                assert [f.value for f in m.history(f"u{i}", "city")] == ["Lisbon", f"Porto{i}"]
                assert len(lazy.loaded) <= 9
        from truthkeeper.logic.store import Store
        assert Store.count(m._store, None) <= 2 * 9  # the facts held now (nothing loaded)
        m.retract(m.current("u0", "city").heads[0].id, reason="wrong")  # u0 taken out before
        for i in range(1, 30):
            m.current(f"u{i}", "city")
        assert m.current("u0", "city").value == "Lisbon"
        assert len(m) == 60 and m.verify().ok


def test_sets_taken_out_and_read_again_answer_as_a_full_replay(tmp_path, monkeypatch):
    """A set's slot taken out of a lazy memory and read in again knows each member's facts
    once (Prolog's index of a set's members is taken out with the slot): adding and
    retracting members afterwards answers as a full replay of the journal does."""
    monkeypatch.setattr(truthkeeper.lazy, "HELD_SLOTS", 4)
    path = str(tmp_path / "m.db")
    with Memory(path, schema={"pet": {"cardinality": "many"}}) as m:
        for i in range(12):
            m.add_many([{"subject": f"u{i}", "attribute": "pet", "value": v, "source": "crm",
                         "valid_from": at(0)} for v in ("cat", "dog", "eel")])
    with Memory(path, lazy=True) as m:
        for _ in range(2):  # every slot read, taken out, read again
            for i in range(12):
                assert sorted(m.current(f"u{i}", "pet").value) == ["cat", "dog", "eel"]
        for i in range(12):
            m.add(f"u{i}", "pet", "dog", source="crm", valid_from=at(3), present=False)
            m.add(f"u{i}", "pet", "fox", source="crm", valid_from=at(3))
            m.add(f"u{i}", "pet", "eel", source="crm", valid_from=at(4))  # eel said again
            m.retract(m.current(f"u{i}", "pet").heads[0].id, reason="wrong")
        lazily = {i: (sorted(m.current(f"u{i}", "pet").value),
                      len(m.current(f"u{i}", "pet").heads)) for i in range(12)}
    with Memory(path, lazy=False) as full:
        assert lazily == {i: (sorted(full.current(f"u{i}", "pet").value),
                              len(full.current(f"u{i}", "pet").heads)) for i in range(12)}


def test_written_and_linked_slots_stay_in(loc, monkeypatch):
    """A slot this memory writes to stays in (a writer cycling over more slots than it may
    hold would read each back at every write); so does a slot whose facts are linked by
    supersedes (Prolog's unload_slots/3 keeps it)."""
    monkeypatch.setattr(truthkeeper.lazy, "HELD_SLOTS", 1)
    path = _memory(loc, 10)
    with Memory(path) as w:  # another writer's link: this memory only reads the slot
        w.add("u2", "city", "Braga", source="crm", supersedes=w.current("u2", "city").heads[0].id)
    with Memory(path, lazy=True) as m:
        lazy = m._store.lazy
        m.add("u1", "city", "Faro", source="crm", valid_from=at(7))
        assert m.current("u2", "city").value == "Braga"
        for i in range(3, 10):
            assert m.current(f"u{i}", "city").value == f"Porto{i}"
        assert {"u1\x1fcity", "u2\x1fcity"} <= lazy.loaded
        assert not {f"u{i}\x1fcity" for i in range(3, 8)} & lazy.loaded
        assert m.current("u1", "city").value == "Faro"
        assert m.current("u2", "city").value == "Braga"
        assert m.current("u3", "city").value == "Porto3"


def test_rules_in_the_journal_open_lazily_and_beliefs_read_every_slot(tmp_path):
    path = _memory(str(tmp_path), 3)
    with Memory(path) as m:
        m.add_rule("moved(U) :- holds(U, city, porto1)")
    with Memory(path, lazy=True) as m:
        assert not m._store.lazy.done and m._store.lazy.loaded == set()
        assert m.current("u2", "city").value == "Porto2"
        assert m.rules() == ["moved(U) :- holds(U, city, porto1)"]
        assert not m._store.lazy.done  # listing rules evaluates none
        assert [str(b) for b in m.beliefs()] == ["moved(u1)"]
        assert m._store.lazy.done


def test_an_erasure_in_the_journal_opens_lazily(tmp_path):
    path = _memory(str(tmp_path), 3)
    with Memory(path) as m:
        gone = m.erase(subject="u1")
    with Memory(path, lazy=True) as m:
        assert not m._store.lazy.done
        assert m.current("u1", "city").status == "unknown"
        assert [f.status for f in m.history("u1", "city")] == ["erased", "erased"]
        assert m.get(gone[0]).status == "erased"
        assert m.current("u2", "city").value == "Porto2"
        assert not m._store.lazy.done
        assert m.slots() == [("u0", "city"), ("u2", "city")]


def test_an_erased_fact_whose_slot_held_nul_opens_lazily_with_its_source_bound(journal_url):
    """A slot whose name holds NUL is never indexed (PostgreSQL text cannot hold it): its
    events are applied at open. Erased, its fact moves to a placeholder slot, whose event
    is not: the index lacked the id (a lazy open failed with UnknownFact on both backends,
    so the acknowledged writes could only be read with ``lazy=False``) and the source's
    binding (``verify`` found the index differing from the chain)."""
    with Memory(journal_url) as m:
        m.add("a\x00b", "city", "Lisbon", source="crm")
        m.add("c", "city", "Porto", source="web")
        m.erase(subject="a\x00b")
        assert m.verify().ok
    for lazy in (True, False):
        with Memory(journal_url, lazy=lazy) as m:
            assert m.current("a\x00b", "city").status == "unknown"
            assert [f.status for f in m.history("a\x00b", "city")] == ["erased"]
            assert m.current("c", "city").value == "Porto" and m.verify().ok
            with pytest.raises(TierNotAuthorized, match="crm"):  # bound to agent still
                m.add("d", "city", "Faro", source="crm", tier="verified")


def test_a_signed_retraction_of_an_erased_fact_whose_slot_held_nul_keeps_the_index(
        journal_url):
    """A signed retraction's nonce is indexed with the slot of the fact it names; a fact
    whose slot holds NUL has none (its events are applied at open). Erased, the fact moves
    to a placeholder slot, and a rebuilt index has the nonce there too. Before, the
    erasure only updated the nonce's row, which did not exist: the index differed from the
    chain, and another handle's next write refused to go on (JournalCorrupt; found by the
    stateful test's signed machine)."""
    owner = Signer(Ed25519PrivateKey.generate())

    def open_it() -> Memory:
        return Memory(journal_url, trusted_keys=[owner.public_key], protected_tiers=("human",))

    with open_it() as m:
        f = m.add_many([owner.sign({"subject": "b\x00o", "attribute": "price", "value": 3,
                                    "source": "owner", "tier": "human",
                                    "valid_from": "2026-01-01"})])[0]
        m.retract(f.id, reason="wrong", signature=owner.sign_action(
            "retract", {"id": f.id, "reason": "wrong"}))
        m.erase(f.id, signature=owner.sign_action(
            "erase", {"ids": [f.id], "reason": "erasure request"}))
        with open_it() as other:  # opened lazily: its index checked before its write
            other.add("acme", "price", 4, source="crm")
            assert other.current("acme", "price").value == 4 and other.verify().ok
        assert m.verify().ok
    with open_it() as again:
        assert [x.status for x in again.history("b\x00o", "price")] == ["erased"]
        assert again.verify().ok


def test_a_rule_added_to_a_lazy_memory_sees_every_slot(tmp_path):
    path = _memory(str(tmp_path), 3)
    with Memory(path, lazy=True) as m:
        m.add_rule("moved(U) :- holds(U, city, porto2)")
        assert [str(b) for b in m.beliefs()] == ["moved(u2)"]


def test_an_index_whose_position_is_not_the_chain_is_rebuilt(loc):
    path = _memory(loc)
    _sql(path, "UPDATE tk_index_state2 SET hash = 'forged'")
    _sql(path, "DELETE FROM tk_index_slot WHERE slot = ?", ("u4\x1fcity",))
    with Memory(path, lazy=True) as m:
        assert [f.value for f in m.history("u4", "city")] == ["Lisbon", "Porto4"]
        assert m.verify().ok


def test_an_index_behind_the_chain_is_brought_up_to_date(loc):
    path = _memory(loc)
    last = _sql(path, "SELECT max(seq) FROM events")[0][0]
    [(h,)] = _sql(path, "SELECT hash FROM events WHERE seq = ?", (last - 2,))
    _sql(path, "DELETE FROM tk_index_slot WHERE seq > ?", (last - 2,))
    _sql(path, "UPDATE tk_index_state2 SET seq = ?, hash = ?", (last - 2, h))
    with Memory(path, lazy=True) as m:
        assert m.current("u29", "city").value == "Porto29"


def test_a_journal_without_an_index_is_indexed_at_its_first_lazy_open(loc):
    """A journal an earlier truthkeeper wrote has no index tables: the first lazy open
    indexes it; writers that find no index write none until one exists."""
    path = _memory(loc, 5)
    for table in ("tk_index_slot", "tk_index_key", "tk_index_state2"):
        _sql(path, f"DROP TABLE {table}")
    with Memory(path, synchronous="NORMAL") as m:
        m.add("u9", "city", "Beja", source="crm")
    with Memory(path, lazy=True) as m:
        assert m.current("u9", "city").value == "Beja"
        assert m._store.lazy.loaded == {"u9\x1fcity"} and m.verify().ok
    assert _sql(path, "SELECT count(*) FROM tk_index_slot")[0][0] > 0


def test_an_event_listed_under_another_slot_is_detected_and_the_index_rebuilt(loc):
    path = _memory(loc)
    seq = _sql(path, "SELECT seq FROM tk_index_slot WHERE slot = ? ORDER BY seq DESC LIMIT 1",
               ("u7\x1fcity",))[0][0]
    _sql(path, "UPDATE tk_index_slot SET slot = ? WHERE seq = ?", ("u8\x1fcity", seq))
    with Memory(path, lazy=True, index_check="before-write") as m:
        assert m.current("u8", "city").value == "Porto8"  # the stray event is noticed
        assert m.current("u7", "city").value == "Porto7"  # and the rebuilt index used


def test_an_index_missing_rows_is_found_by_verify_and_rebuilt(loc):
    path = _memory(loc)
    _sql(path, "DELETE FROM tk_index_key WHERE key LIKE ?", ("s:%",))
    with Memory(path, lazy=False) as m:
        v = m.verify()
        assert not v.ok and "slot index" in (v.reason or "")
        assert m.verify().ok  # rebuilt


@pytest.mark.parametrize("before", ["nothing", "retract", "end"])
def test_erasing_a_signed_fact_keeps_the_index_true_to_the_chain(loc, before):
    """The erased placeholder no longer holds the signature: its nonce leaves the index
    (verify() reported a mismatch, and rebuilt the index, after every such erasure). A
    signed retraction or end of it moves to the placeholder's slot, its nonce too (it
    stayed with the old slot: a lazily opened memory refused to go on)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from truthkeeper import Signer

    path = _memory(loc, 2)
    owner = Signer(Ed25519PrivateKey.generate())
    with Memory(path, trusted_keys=[owner.public_key]) as m:
        [f] = m.add_many([owner.sign({"subject": "ana", "attribute": "ssn", "value": "123",
                                      "source": "user:ana", "tier": "human",
                                      "valid_from": at(1)})])
        if before == "retract":
            m.retract(f.id, reason="typo", signature=owner.sign_action(
                "retract", {"id": f.id, "reason": "typo"}))
        elif before == "end":
            m.end(f.id, valid_to=at(2), signature=owner.sign_action(
                "end", {"id": f.id, "valid_to": at(2).isoformat()}))
        m.erase([f.id], reason="user request",
                signature=owner.sign_action("erase", {"ids": [f.id], "reason": "user request"}))
        v = m.verify()
        assert v.ok, v.reason
    with Memory(path, trusted_keys=[owner.public_key], lazy=True) as m:
        assert m.history("ana", "ssn")[0].status == "erased" and m.verify().ok


def test_one_erasure_of_many_facts_of_a_slot_moves_each_ones_retractions_and_ends(loc):
    """An erasure reads each slot's retractions and ends once for all the facts it erases
    there (it read them once per fact: quadratic in the slot): each erased fact takes
    those naming it to its placeholder's slot, and a retraction of a fact that stays,
    in the same slot, stays with it; the index is what a rebuild from the chain makes."""
    path = _memory(loc, 2)
    with Memory(path) as m:
        fs = m.add_many([{"subject": "ana", "attribute": "note", "value": f"n{i}",
                          "source": "crm", "valid_from": at(i)} for i in range(8)])
        for f in fs[:3]:
            m.retract(f.id, reason="typo")
        m.end(fs[3].id, valid_to=at(20))
        m.end(fs[3].id, valid_to=at(21))
        m.retract(fs[7].id, reason="kept")
        m.erase([f.id for f in fs[:6]], reason="user request")
        v = m.verify()
        assert v.ok, v.reason
    with Memory(path, lazy=True) as m:
        hist = m.history("ana", "note")
        assert [f.status for f in hist].count("erased") == 6
        assert [f.value for f in hist if f.status != "erased"] == ["n6", "n7"]
        assert m.current("ana", "note").value == "n6" and m.verify().ok


def test_a_write_indexes_its_facts_as_their_bodies_read(loc):
    """A write indexes its facts from the fields it built them with, not by parsing the
    text it wrote: each fact's slot (a scope's too), its id, its source's tier and its
    signature's nonce are listed as a rebuild from the chain lists them (``verify`` compares
    the two), and a lazy open finds them through the index."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from truthkeeper import Signer

    path = _memory(loc, 2)
    owner = Signer(Ed25519PrivateKey.generate())
    with Memory(path, trusted_keys=[owner.public_key]) as m:
        m.add_many([{"subject": "ana", "attribute": "city", "value": "Faro", "source": "app"},
                    owner.sign({"subject": "ana", "attribute": "ssn", "value": "123",
                                "source": "user:ana", "tier": "human", "valid_from": at(1)})])
        m.scope("ana").add_many([{"subject": "u1", "attribute": "city", "value": "Braga",
                                  "source": "notes"}])
        v = m.verify()
        assert v.ok, v.reason
    with Memory(path, trusted_keys=[owner.public_key], lazy=True) as m:
        assert m.verify().ok
        assert m.current("ana", "ssn").value == "123"
        assert m.scope("ana").current("u1", "city").value == "Braga"
        assert m._store.lazy.loaded >= {"ana\x1fssn"}


def test_a_subject_with_nul_is_applied_at_open(loc):
    """PostgreSQL text cannot hold NUL: a slot whose name has one is never indexed; its
    events belong to no slot and are applied at open (on both backends alike)."""
    path = _memory(loc, 2)
    with Memory(path, synchronous="NORMAL") as m:
        f = m.add("a\x00b", "city", "Nul", source="crm")
        m.retract(f.id, reason="typo")
        m.add("a\x00b", "city", "Nul2", source="crm")
    with Memory(path, lazy=True) as m:
        assert m.current("a\x00b", "city").value == "Nul2"
        assert [x.status for x in m.history("a\x00b", "city")] == ["retracted", "head"]
        assert m.about("a\x00b")["city"].value == "Nul2"
        assert m.current("u1", "city").value == "Porto1" and m.verify().ok


def test_a_lazy_memory_sees_another_writers_commits(loc):
    path = _memory(loc, 3)
    with Memory(path, lazy=True) as m, Memory(path, synchronous="NORMAL") as other:
        assert m.current("u1", "city").value == "Porto1"
        other.add("u1", "city", "Evora", source="crm", valid_from=at(8))
        other.add("u2", "city", "Tomar", source="crm", valid_from=at(8))
        m.refresh()
        assert m.current("u1", "city").value == "Evora"  # a slot loaded before
        assert m.current("u2", "city").value == "Tomar"  # a slot loaded after


def test_an_edited_event_is_refused_when_its_slot_is_read(tmp_path):
    path = _memory(str(tmp_path))
    con = sqlite3.connect(path)
    con.execute("DROP TRIGGER events_append_only_update")
    seq, body = con.execute("SELECT seq, body FROM events WHERE kind = 'fact' AND "
                            "body LIKE '%Porto5%'").fetchone()
    con.execute("UPDATE events SET body = ? WHERE seq = ?",
                (body.replace("Porto5", "Paris"), seq))
    con.commit()
    con.close()
    with Memory(path, lazy=True, index_check="before-write") as m:
        assert m.current("u6", "city").value == "Porto6"
        with pytest.raises(JournalCorrupt, match="edited"):
            m.current("u5", "city")
        with pytest.raises(JournalCorrupt):
            m.current("u5", "city")  # and stays refused
    with pytest.raises(JournalCorrupt):
        Memory(path, lazy=False)  # as a full replay refuses it


def test_a_read_only_lazy_open(tmp_path):
    path = _memory(str(tmp_path))
    with Memory(path, readonly=True, lazy=True) as m:
        assert m.current("u2", "city").value == "Porto2"
        assert m._store.lazy.loaded == {"u2\x1fcity"}


def test_lazy_must_be_a_bool(tmp_path):
    with pytest.raises(TruthkeeperError, match="lazy"):
        Memory(Path(tmp_path) / "m.db", lazy="yes")  # type: ignore[arg-type]


def test_the_audit_log_is_read_when_asked_and_keeps_its_order(tmp_path):
    path = _memory(str(tmp_path), 3)
    old = Candidate("u1", "city", "Lisbon", at(0))
    with Memory(path) as m:
        m.filter([old], query="before")
    with Memory(path) as full:
        expected = [(e.kind, e.details.get("query")) for e in full.audit()]
    assert expected == [("drop", "before")]
    with Memory(path, lazy=True) as m:
        assert m._store.lazy.loaded == set() and not m._audit._rows  # nor the audit log
        m.filter([old], query="after")
        got = [(e.kind, e.details.get("query")) for e in m.audit()]
        assert got == expected + [("drop", "after")]
        assert len(m.audit()) == 2  # read once
        len(m)  # loading every slot leaves the audit log as it is
        assert len(m.audit()) == 2


def test_an_index_of_the_earlier_version_is_rebuilt(tmp_path) -> None:
    import sqlite3

    path = str(tmp_path / "m.db")
    with Memory(path) as mem:
        mem.scope("user:ana").add("ana", "city", "Paris", source="notes", tier="agent")
    with Memory(path, lazy=True) as mem:  # builds the index
        assert mem.scope("user:ana").current("ana", "city").value == "Paris"
    con = sqlite3.connect(path)  # as the previous version left it: its state table's name
    con.execute("ALTER TABLE tk_index_state2 RENAME TO tk_index_state")
    con.commit()
    con.close()
    with Memory(path, lazy=True) as mem:  # still a truthkeeper journal; the index is rebuilt
        ana = mem.scope("user:ana")
        with pytest.raises(TierNotAuthorized):  # ana's binding of "notes", from the index
            ana.add("ana", "x", 1, source="notes", tier="verified")
        assert ana.current("ana", "city").value == "Paris" and mem.verify().ok
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()
    assert "tk_index_state" not in tables and "tk_index_state2" in tables


_FORGERIES = {
    # the index row of a slot's newest event deleted: a lazy read sees the older value
    "newest event unlisted": ("DELETE FROM tk_index_slot WHERE slot = ? AND seq = "
                              "(SELECT max(seq) FROM tk_index_slot WHERE slot = ?)",
                              ("u4\x1fcity", "u4\x1fcity"),
                              {"subject": "u4", "attribute": "city", "value": "Faro",
                               "source": "crm"}),
    # the source's tier row edited: a write in another tier would look allowed
    "source tier edited": ("UPDATE tk_index_key SET slot = 'human' WHERE key = ?",
                           ("s:crm",),
                           {"subject": "u5", "attribute": "x", "value": 1, "source": "crm",
                            "tier": "verified"}),
    # an id's row pointed elsewhere: a duplicate id would look free
    "id row moved": ("DELETE FROM tk_index_key WHERE key LIKE ?", ("i:%",),
                     {"subject": "u6", "attribute": "x", "value": 1, "source": "crm"}),
}


@pytest.mark.parametrize("name", sorted(_FORGERIES))
def test_a_forged_index_never_decides_a_write(loc, name: str) -> None:
    path = _memory(loc)
    sql, params, fact = _FORGERIES[name]
    if name == "id row moved":
        with Memory(path) as full:
            fact = {**fact, "id": full.history("u1", "city")[0].id}  # a taken id
    _sql(path, sql, params)
    with Memory(path, lazy=True, index_check="before-write") as m:
        m.current("u4", "city")  # reads trust the index until the first write
        with pytest.raises(JournalCorrupt, match="slot index"):
            m.add_many([fact])
        with pytest.raises(JournalCorrupt):  # it may have answered from the forged rows
            m.current("u4", "city")
    with Memory(path) as full:  # nothing was committed; the journal opens and verifies
        assert full.verify().ok and len(full) == 60
        assert full.current("u4", "city").value == "Porto4"
    with Memory(path, lazy=True) as again:  # the rebuilt index serves a lazy open again
        assert again.current("u4", "city").value == "Porto4"
        again.add("u7", "city", "Faro", source="crm")


@pytest.mark.parametrize("hash_seed", [None, "0"])
def test_the_index_check_finds_each_forgery_whichever_hash_it_keys(tmp_path, hash_seed) -> None:
    """The check sums both sides under the interpreter's string hash when its key is random
    and under keyed BLAKE2b when ``PYTHONHASHSEED`` fixes it: each finds every forgery."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed

    def check(path: str) -> str:
        with subprocess.Popen([sys.executable, "-m", "truthkeeper.journal.indexcheck"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=env) as child:  # (it stops when its stdin ends)
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(json.dumps({"path": path, "busy_ms": 5000}) + "\n")
            child.stdin.flush()
            line = child.stdout.readline()
            child.stdin.close()
        return str(json.loads(line)["result"])

    assert check(_memory(str(tmp_path))) == "match"
    for i, (sql, params, _fact) in enumerate(_FORGERIES.values()):
        (tmp_path / str(i)).mkdir()
        path = _memory(str(tmp_path / str(i)))
        _sql(path, sql, params)
        assert check(path) == "differ"


def _raises_soon(call: Any, seconds: float = 30.0) -> JournalCorrupt:
    """Call until JournalCorrupt is raised (the background check has finished)."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            call()
        except JournalCorrupt as exc:
            return exc
        time.sleep(0.02)
    raise AssertionError("no JournalCorrupt within the time allowed")


@pytest.mark.parametrize("name", sorted(_FORGERIES))
def test_the_background_check_makes_a_read_after_a_forged_index_raise(loc, name: str) -> None:
    """By default a lazy open compares the whole index with the chain in the background;
    a read that may have trusted a forged row is followed by JournalCorrupt, not silence."""
    path = _memory(loc)
    sql, params, _fact = _FORGERIES[name]
    _sql(path, sql, params)
    with Memory(path, lazy=True) as m:
        exc = _raises_soon(lambda: m.current("u4", "city"))
        assert "slot index" in str(exc)
        with pytest.raises(JournalCorrupt):  # every later call too
            m.add("u9", "city", "Faro", source="crm")
        for listing in (m.slots, m.scopes):  # (which read the index, not a slot)
            with pytest.raises(JournalCorrupt):
                listing()
    with Memory(path, lazy=True) as again:  # the index was rebuilt: the full replay's answer
        assert again.current("u4", "city").value == "Porto4"
        again.add("u9", "city", "Faro", source="crm")
    with Memory(path) as full:
        assert full.verify().ok and full.current("u9", "city").value == "Faro"


def test_the_background_check_stops_when_nobody_waits_for_it(pg_admin: str) -> None:
    """The memory keeps the check's stdin open; when it ends (the memory's process died
    without closing it) the check stops at once, whatever it is blocked on. An orphaned
    check ran to its end before: half a minute of a core at a million facts, after every
    short-lived process that opened a memory. A locked table holds it here (a SQLite reader
    is never blocked)."""
    import json
    import subprocess
    import sys

    import psycopg

    from truthkeeper.lazy import _CHECK

    from .conftest import drop_pg_database, new_pg_database

    url = new_pg_database(pg_admin)
    try:
        with Memory(url, index_check="before-write") as m:
            m.add("u1", "city", "Lisbon", source="crm")
            spec = m._store.lazy.journal.reader_spec()
        with psycopg.connect(url) as lock:
            lock.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")  # until the end
            proc = subprocess.Popen([sys.executable, "-c", _CHECK], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(spec) + "\n")
                proc.stdin.flush()
                with pytest.raises(subprocess.TimeoutExpired):
                    proc.wait(timeout=1)  # blocked on the table
                proc.stdin.close()        # as when the memory's process is gone
                assert proc.wait(timeout=30) == 0
            finally:
                proc.kill()
                proc.wait()
                for pipe in (proc.stdin, proc.stdout):
                    if pipe is not None:
                        pipe.close()
    finally:
        drop_pg_database(pg_admin, url)


def test_the_background_check_runs_in_another_process(loc):
    """The comparison runs outside the memory's process (as a thread it stalled the reads
    it overlapped), and the journal's location, which may hold a password, is not in its
    command line."""
    import os

    path = _memory(loc)
    with Memory(path, lazy=True) as m:
        proc = m._store.lazy.check.proc
        assert proc is not None and proc.pid != os.getpid()
        assert not any(path in str(a) or "postgres" in str(a) for a in proc.args)
        assert m.current("u4", "city").value == "Porto4"


def test_the_background_check_passes_a_sound_index(loc):
    import time

    path = _memory(loc)
    with Memory(path, lazy=True) as m:
        assert m.current("u4", "city").value == "Porto4"
        end = time.monotonic() + 30
        while not m._store.lazy.verified and time.monotonic() < end:
            time.sleep(0.02)
        assert m._store.lazy.verified  # the first write needs no comparison of its own
        m.add("u4", "city", "Faro", source="crm")
        assert m.current("u4", "city").value == "Faro"
        assert not m._store.lazy.done  # and the memory is still lazy


def test_the_first_write_waits_for_the_check_under_way_and_compares_nothing_again(
        loc, monkeypatch):
    """A write that comes while the background check runs waits for its answer: it compared
    the whole index a second time beside it before, doubling the first write's work (two
    cores busy for about two seconds at 100,000 facts)."""
    import threading

    from truthkeeper.lazy import IndexCheck

    path = _memory(loc)
    gate = threading.Event()
    answer = IndexCheck._wait

    def held(proc: Any, spec: str, report: Any) -> None:
        gate.wait(30)  # the check is still under way when the write comes
        answer(proc, spec, report)

    monkeypatch.setattr(IndexCheck, "_wait", staticmethod(held))
    with Memory(path, lazy=True) as m:
        lazy = m._store.lazy
        compared: list[int] = []
        problem = lazy.journal.index_problem
        monkeypatch.setattr(lazy.journal, "index_problem",
                            lambda: compared.append(1) or problem())
        assert lazy.check.running() and not lazy.verified
        threading.Timer(0.3, gate.set).start()
        m.add("u4", "city", "Faro", source="crm")
        assert lazy.verified and compared == []
        assert m.current("u4", "city").value == "Faro"
    with Memory(path) as m:
        assert m.current("u4", "city").value == "Faro"


def _edit_value(path: str, old: str, new: str) -> None:
    """Edit one event's value behind truthkeeper's back (its hash no longer matches)."""
    con = sqlite3.connect(path)
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute("UPDATE events SET body = replace(body, ?, ?) WHERE seq = "
                "(SELECT seq FROM events WHERE body LIKE ?)", (f'"{old}"', f'"{new}"',
                                                             f'%"{old}"%'))
    con.commit()
    con.close()


def test_a_damaged_event_found_in_the_background_is_reported(tmp_path):
    path = _memory(str(tmp_path))
    _edit_value(path, "Porto29", "Porto92")
    with Memory(path, lazy=True) as m:
        exc = _raises_soon(lambda: m.current("u1", "city"))  # a slot the damage is not in
        assert "corrupt" in str(exc)


def test_index_check_takes_only_its_choices(tmp_path):
    with pytest.raises(TruthkeeperError, match="index_check"):
        Memory(str(tmp_path / "m.db"), lazy=True, index_check="never")
    assert not (tmp_path / "m.db").exists()


def test_memories_open_lazily_by_default(tmp_path):
    """A memory opens in constant time unless asked to replay (issue 30): the default
    reads no slot at open; ``lazy=False`` (also through ``Memory.open``) replays all."""
    path = _memory(str(tmp_path), 3)
    with Memory(path) as m:
        assert m._store.lazy is not None and m._store.lazy.loaded == set()
        assert m.current("u1", "city").value == "Porto1"
    with Memory.open(path, lazy=False) as m:
        assert m._store.lazy is None and m.current("u1", "city").value == "Porto1"
    with Memory.open(path) as m:  # read-only, lazily
        assert m._store.lazy is not None and m.current("u2", "city").value == "Porto2"
    with pytest.raises(TypeError, match="colour"):  # as Memory(colour=...) does
        Memory.open(path, colour="red")


def test_verify_reports_the_damage_the_background_check_found(tmp_path):
    """``verify()`` is how damage is diagnosed: after the background check found a damaged
    event it reports it (it raised JournalCorrupt, 'reopen it'); other calls still raise."""
    import time

    path = _memory(str(tmp_path))
    _edit_value(path, "Porto3", "Porto33")
    with Memory(path, readonly=True) as m:
        end = time.monotonic() + 30
        while m._store.lazy.forged is None and time.monotonic() < end:
            time.sleep(0.02)
        v = m.verify()
        assert not v.ok and "edited" in (v.reason or "")
        with pytest.raises(JournalCorrupt):
            m.current("u1", "city")


@pytest.mark.parametrize("lazy", [True, False])
def test_another_writers_fact_is_current_at_the_first_read(tmp_path: Path, lazy: bool) -> None:
    """A fact another connection writes "now" is current at this memory's first read of
    its slot (a lazily opened memory answered unknown once: the slot came in after the
    clock had been checked, and the fact looked as if it began later)."""
    path = tmp_path / "m.db"
    with Memory(path) as writer, Memory(path, lazy=lazy) as reader:
        assert reader.current("bo", "city").status == "unknown"
        writer.add("ana", "city", "Lisbon", source="s")
        assert reader.current("ana", "city").value == "Lisbon"
        writer.add("ana", "city", "Porto", source="s")
        writer.add("ana", "job", "pilot", source="s")
        assert reader.refresh() == 2  # the events it applied, counted
        assert reader.refresh() == 0
        assert reader.current("ana", "city").value == "Porto"


@pytest.mark.parametrize("lazy", [True, False])
def test_a_fact_that_began_after_the_open_is_current_when_its_slot_comes_in(
        tmp_path: Path, lazy: bool) -> None:
    """Written to begin later, read after it began: the lazy memory loads the slot after
    its clock last moved, and must move the clock as a full replay's would have."""
    path = tmp_path / "m.db"
    now = [at(1)]
    with Memory(path, clock=lambda: now[0]) as m:
        m.add("ana", "city", "Lisbon", source="s", valid_from=at(5))
        m.add("bo", "city", "Rome", source="s", valid_from=at(0))
    now[0] = at(2)
    with Memory(path, clock=lambda: now[0], lazy=lazy) as m:
        assert m.current("bo", "city").value == "Rome"  # the clock is read at 2
        now[0] = at(10)
        assert m.current("ana", "city").value == "Lisbon"
        now[0] = at(3)  # a clock may be set back: the slot is as of then again
        assert m.as_of("ana", "city", valid_at=at(3)).status == "unknown"


def test_a_lazily_opened_memory_lists_its_own_journalled_audit_entries_once(
        tmp_path: Path) -> None:
    """The audit entries a lazily opened memory recorded and journalled with a write,
    before anything read its audit log, were listed twice: once as recorded, once read
    back from the journal (another connection's entries are read back, once)."""
    from truthkeeper import InvalidFact

    path = tmp_path / "m.db"
    mem = Memory(path)
    mem.add("ana", "city", "Lisbon", source="s", valid_from="2026-01-02")
    with pytest.raises(InvalidFact):
        mem.add("ana", "", "x", source="s")
    mem.filter([Candidate("ana", "city", "Porto", "2026-01-01")] * 2, query="twice")
    mem.add("bob", "city", "Oslo", source="s")  # journals the three entries
    assert [e.kind for e in mem.audit()] == ["rejected_write", "drop", "drop"]
    other = Memory(path)
    with pytest.raises(InvalidFact):
        other.add("eve", "", "x", source="s")
    other.add("eve", "city", "Rome", source="s")
    mem.close()
    with Memory(path) as again:
        with pytest.raises(InvalidFact):
            again.add("zed", "", "x", source="s")
        again.add("zed", "city", "Faro", source="s")
        assert [e.kind for e in again.audit()] == ["rejected_write", "drop", "drop",
                                                   "rejected_write", "rejected_write"]
    other.close()

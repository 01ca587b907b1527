"""Scopes (many users' memories in one journal) and erasure (the right to be forgotten)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from truthkeeper import (
    Candidate,
    InvalidFact,
    Memory,
    ScopeError,
    Signer,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
)
from truthkeeper.journal.codec import erased_body

T = "2026-11-{:02d}".format
SECRET = "555-0199-SECRET"


def _view(mem: Memory, scope: str) -> dict:
    v = mem.scope(scope) if scope else mem
    return {(s, a): (r.status, r.value) for (s, a), r in
            (((s, a), v.current(s, a)) for s, a in v.slots())}


def test_scopes_keep_memories_apart(journal_url: str) -> None:
    mem = Memory(journal_url)
    ana, bob = mem.scope("user:ana"), mem.scope("User:Bob ")
    fa = ana.add("me", "city", "Lisbon", source="chat", valid_from=T(2))
    bob.add("me", "city", "Oslo", source="chat", valid_from=T(3))
    mem.add("me", "city", "Porto", source="chat", valid_from=T(1))  # the shared layer
    assert ana.current("me", "city").value == "Lisbon"  # newer than the shared fact
    assert bob.current("me", "city").value == "Oslo"
    assert mem.current("me", "city").value == "Porto"  # the memory sees the shared layer only
    assert fa.scope == "user:ana" and fa.subject == "me"
    assert [f.value for f in ana.history("me", "city")] == ["Porto", "Lisbon"]
    assert [f.value for f in mem.history("me", "city")] == ["Porto"]
    assert ana.slots() == [("me", "city")] and set(ana.about("me")) == {"city"}
    assert mem.scope("user:carol").about("me")["city"].value == "Porto"  # read through
    # no read by id crosses a scope (another scope's id is an unknown id)
    for other in (bob, mem):
        with pytest.raises(UnknownFact, match="names no fact"):
            other.get(fa.id)
        with pytest.raises(UnknownFact):
            other.retract(fa.id, reason="not mine")
        with pytest.raises(UnknownFact):
            other.filter([fa.id])
    # a retrieved candidate is judged against its own scope's memory only
    res = bob.filter([Candidate("me", "city", "Lisbon", T(1))])
    assert [d.dominated_by.value for d in res.dropped] == ["Oslo"]
    assert ana.filter([Candidate("me", "city", "Lisbon", T(1))]).dropped == ()
    # conflicts are per scope
    ana.add("me", "job", "nurse", source="a", valid_from=T(1))
    ana.add("me", "job", "chef", source="b", valid_from=T(1))
    assert ana.conflicts() == [("me", "job")] and bob.conflicts() == [] == mem.conflicts()
    # a view closing does not close the memory; scopes survive a reopen
    ana.close()
    assert ana.current("me", "city").value == "Lisbon"
    before = {s: _view(mem, s) for s in ("", "user:ana", "user:bob")}
    mem.close()
    with Memory(journal_url) as again:
        assert {s: _view(again, s) for s in before} == before


def test_a_scope_name_cannot_be_forged_through_a_subject() -> None:
    mem = Memory()
    mem.scope("user:ana").add("me", "pin", 1234, source="s")
    for subject in ("user:ana\x1fme", "user:ana me", "user:ana\u001fme"):
        assert mem.current(subject, "pin").status == "unknown"
    with pytest.raises(InvalidFact):
        mem.scope("")


def test_a_scopes_fact_cannot_link_to_a_shared_one_and_the_error_says_why() -> None:
    from truthkeeper import CrossSlotSupersession

    mem = Memory()
    shared = mem.add("acme", "price", 1, source="s", valid_from="2026-01-01")
    ana = mem.scope("user:ana")
    with pytest.raises(CrossSlotSupersession, match="a scope's fact does not supersede"):
        ana.add("acme", "price", 2, source="s", valid_from="2026-01-01", supersedes=shared.id)
    assert ana.current("acme", "price").value == 1 and len(ana.history("acme", "price")) == 1
    ana.add("acme", "price", 2, source="s", valid_from="2026-02-01")  # newer: it dominates
    assert ana.current("acme", "price").value == 2 and mem.current("acme", "price").value == 1


def test_a_view_keeps_its_memory_open_while_it_is_held(tmp_path: Path) -> None:
    """``Memory(path).scope("user:ana")`` kept only the view: Python collected the memory
    behind it and closed it, so the view's first call said "this Memory is closed"."""
    import gc
    import weakref

    ana = Memory(tmp_path / "m.db", index_check="before-write").scope("user:ana")
    gc.collect()  # (a check of the index in the background would hold the memory until done)
    ana.add("me", "city", "Lisbon", source="chat")
    assert ana.current("me", "city").value == "Lisbon"
    owner = weakref.ref(ana._owner)
    del ana
    gc.collect()
    assert owner() is None  # and with the last view goes the memory (closed: not leaked)
    with Memory(tmp_path / "m.db") as mem:
        assert mem.scope("user:ana").current("me", "city").value == "Lisbon"


def test_a_views_write_that_names_another_scope_is_refused_not_moved() -> None:
    """The owner writes an item that names a scope into that scope; a view moved it into
    its own without a word (a what_if too). It is refused now, and nothing changes."""
    mem = Memory()
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    item = {"subject": "me", "attribute": "city", "value": "Porto", "source": "chat",
            "scope": "user:ana"}
    with pytest.raises(ScopeError, match=r"facts\[1\] names scope 'user:ana'"):
        bob.add_many([{**item, "scope": "user:bob"}, item])
    with pytest.raises(ScopeError, match=r"add\[0\] names scope 'user:ana'"):
        bob.what_if(add=[item])
    with pytest.raises(ScopeError):
        bob.add_many([replace(ana.add("me", "city", "Faro", source="chat"), id=None)])
    with pytest.raises(InvalidFact, match="facts must be a list"):
        bob.add_many(5)  # was a TypeError
    assert bob.slots() == [] and len(mem) == 0
    assert [f.scope for f in mem.add_many([item])] == ["user:ana"]  # the owner's act
    assert [f.scope for f in ana.add_many([item, {**item, "scope": None}])] == ["user:ana"] * 2


CALLS_WITH_AN_ID = {
    "add(supersedes=)": lambda m, i: m.add("acme", "price", 1, source="s",
                                           valid_from="2026-02-01", supersedes=i),
    "retract": lambda m, i: m.retract(i, reason="r"),
    "end": lambda m, i: m.end(i, valid_to="2026-03-01"),
    "erase": lambda m, i: m.erase(i),
    "get": lambda m, i: m.get(i),
    "why": lambda m, i: m.why(i),
    "filter": lambda m, i: m.filter([i]),
    "what_if": lambda m, i: m.what_if(retract=i),
    "record_outcome": lambda m, i: m.record_outcome(i, correct=True),
    "superseded_by": lambda m, i: m.superseded_by(i),
}


@pytest.mark.parametrize("erased", [False, True])
@pytest.mark.parametrize("call", sorted(CALLS_WITH_AN_ID))
def test_another_scopes_fact_id_is_answered_as_an_id_nothing_holds(call: str,
                                                                  erased: bool) -> None:
    """Another scope's fact is no fact in a view, nor in the unscoped memory, erased or
    not: every call that takes an id answers it as it answers an id nothing holds (the
    same error, the same message). A link to it said it was in another slot, or took an
    erased one; ``why`` and ``filter`` said it in other words than for an unknown id."""
    mem = Memory()
    bob = mem.scope("user:bob")
    bobs = bob.add("acme", "price", 2, source="s", valid_from="2026-01-01")
    if erased:
        bob.erase(bobs.id)
    for who in (mem.scope("user:ana"), mem):
        answers = []
        for fid in (bobs.id, "f0000000000000000"):
            try:
                answers.append(("ok", repr(CALLS_WITH_AN_ID[call](who, fid))))
            except TruthkeeperError as exc:
                answers.append((type(exc).__name__, str(exc).replace(fid, "ID")))
        assert answers[0] == answers[1]
        assert who.current("acme", "price").status == "unknown"
    assert bob.current("acme", "price").value == (None if erased else 2)


def test_a_views_filter_of_its_facts_keeps_exactly_the_views_heads() -> None:
    """The scope's fact is the head of its own layer, and a shared fact that is no head
    (a newer one of the same value as the scope's stands over it) dominates it: the
    view's heads leave it out, so must its filter (it was kept: only the layers' heads
    were compared)."""
    mem = Memory(policy="temporal")
    ana = mem.scope("user:ana")
    mine = ana.add("acme", "price", 1, source="s", valid_from="2026-01-01")
    middle = mem.add("acme", "price", 0, source="s", valid_from="2026-01-02")
    newest = mem.add("acme", "price", 1, source="s", valid_from="2026-01-03")
    assert [h.id for h in ana.current("acme", "price").heads] == [newest.id]
    r = ana.filter([mine.id, middle.id, newest.id])
    assert r.kept == (newest.id,)
    assert {d.item: d.dominated_by.id for d in r.dropped} == {mine.id: middle.id,
                                                              middle.id: newest.id}


def test_a_views_filter_judges_candidates_against_the_views_heads() -> None:
    """A retrieved candidate that agrees with the view's current value is kept, as in a
    memory that holds both facts itself: the shared head that would outdate it is one the
    scope's newer fact outdated (it was dropped: each layer's heads were compared)."""
    mem = Memory(policy="temporal")
    ana = mem.scope("user:ana")
    mem.add("acme", "price", 0, source="s", valid_from="2026-01-02")
    ana.add("acme", "price", 1, source="s", valid_from="2026-01-03")
    assert ana.current("acme", "price").value == 1
    old_one = Candidate("acme", "price", 1, "2026-01-01", tier="verified")
    old_zero = Candidate("acme", "price", 0, "2026-01-01", tier="verified")
    assert ana.filter([old_one, old_zero]).kept == (old_one,)
    alone = Memory(policy="temporal")
    alone.add("acme", "price", 0, source="s", valid_from="2026-01-02")
    alone.add("acme", "price", 1, source="s", valid_from="2026-01-03")
    assert alone.filter([old_one, old_zero]).kept == (old_one,)


def _raw(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith("m.db"))


def test_erase_removes_the_value_for_good_and_keeps_the_chain(journal_url: str,
                                                              tmp_path: Path) -> None:
    mem = Memory(journal_url)
    ana = mem.scope("user:ana")
    old = ana.add("me", "phone", "555-0100", source="chat", valid_from=T(1))
    new = ana.add("me", "phone", SECRET, source="chat", valid_from=T(2),
                  text=f"call me on {SECRET}", meta={"note": SECRET})
    ana.record_outcome(new.id, correct=True)
    assert ana.current("me", "phone").value == SECRET
    assert ana.erase([new.id]) == [new.id]
    # the slot falls back to what is left; history keeps a placeholder
    assert ana.current("me", "phone").value == "555-0100"
    placeholder = ana.history("me", "phone")[-1]
    assert (placeholder.id, placeholder.status, placeholder.value, placeholder.text,
            dict(placeholder.meta)) == (new.id, "erased", None, None, {})
    assert placeholder.valid_from == new.valid_from and placeholder.source == "chat"
    assert mem.verify().ok
    with pytest.raises(InvalidFact, match="erased already"):
        ana.erase([new.id])
    out = tmp_path / "export.jsonl"
    mem.export_jsonl(out)
    assert SECRET not in out.read_text()
    assert "erase" in {json.loads(line)["kind"] for line in out.read_text().splitlines()}
    mem.close()
    if not journal_url.startswith("postgresql"):
        assert SECRET.encode() not in _raw(Path(journal_url))  # not in free pages or the WAL
    with Memory(journal_url) as again:  # replay: the same answers, the chain verifies
        a2 = again.scope("user:ana")
        assert a2.current("me", "phone").value == "555-0100"
        assert [f.status for f in a2.history("me", "phone")] == ["head", "erased"]
        assert again.verify().ok
    copy = Memory()
    copy.import_jsonl(out)
    copy.import_jsonl(out)  # idempotent
    c = copy.scope("user:ana")
    assert c.current("me", "phone").value == "555-0100"
    assert c.history("me", "phone")[-1].status == "erased" and copy.verify().ok
    assert old.id in {f.id for f in c.history("me", "phone")}


def test_erase_by_subject_and_by_scope() -> None:
    mem = Memory()
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    ana.add("ana", "city", "Lisbon", source="chat")
    ana.add("ana", "phone", "1", source="chat")
    ana.add("cat", "name", "Tom", source="chat")
    b = bob.add("ana", "city", "Oslo", source="chat")
    assert len(ana.erase(subject="ana", attribute="phone")) == 1
    assert ana.about("ana")["city"].value == "Lisbon"
    assert len(ana.erase(subject="ana")) == 1
    # an erased slot is no longer listed (its name went with it); asked by name, its
    # history still shows the erased placeholders
    assert ana.about("ana") == {} and ana.current("ana", "city").status == "unknown"
    assert [f.status for f in ana.history("ana", "city")] == ["erased"]
    with pytest.raises(ScopeError, match="another scope"):
        ana.erase(scope="user:bob")
    assert len(mem.erase(scope="user:ana")) == 1  # the cat; what is erased stays erased
    assert ana.erase(scope="user:ana") == []
    assert ana.slots() == [] and [f.status for f in ana.history("cat", "name")] == ["erased"]
    assert bob.get(b.id).value == "Oslo"


def _everywhere(journal_url: str) -> Memory:
    """A memory whose scopes hold a fact, only a rule, only an outcome, or only the audit
    entry of a filter whose query names the person."""
    mem = Memory(journal_url)
    mem.add("ana", "phone", "555-0100", source="crm", valid_from=T(2))  # the shared layer
    mem.scope("user:ana").add("ana", "phone", SECRET, source="chat", valid_from=T(3))
    mem.scope("team:ops").add_rule("reachable(X) :- holds(X, phone, _)")
    mem.scope("user:bob").record_source_outcome("crm", correct=False)
    res = mem.scope("user:carol").filter([Candidate("ana", "phone", "555-0000", T(1))],
                                         query=f"is ana's number {SECRET}?")
    assert len(res.dropped) == 1  # the shared head is newer: an audit entry in carol's scope
    return mem


def test_the_owner_lists_every_scope_and_erases_a_person_from_all_of_them(
        journal_url: str) -> None:
    """``scopes()`` lists every scope that holds anything (a fact, a rule, an outcome, an
    audit entry), after reopening too, and only to the owner; erasing the person in each
    leaves no value, query text or outcome of theirs in the journal."""
    mem = _everywhere(journal_url)
    everyone = ["team:ops", "user:ana", "user:bob", "user:carol"]
    assert mem.scopes() == everyone
    with pytest.raises(ScopeError, match="owner"):
        mem.scope("user:ana").scopes()
    mem.close()
    for lazy in (True, False):
        with Memory(journal_url, lazy=lazy) as again:
            assert again.scopes() == everyone
    mem = Memory(journal_url)
    erased = {name: mem.scope(name).erase(subject="ana") for name in mem.scopes()}
    assert [len(erased[n]) for n in everyone] == [0, 1, 0, 0]
    assert mem.scope("user:carol").audit() == []  # its query about ana went too
    assert len(mem.erase(subject="ana")) == 1  # the shared layer's
    assert mem.erase(scope="user:bob") == [] and mem.scopes() == ["team:ops"]
    assert mem.verify().ok
    out = Path(journal_url).parent / "export.jsonl" if not journal_url.startswith(
        "postgresql") else None
    mem.close()
    if out is not None:
        assert SECRET.encode() not in _raw(Path(journal_url))
    with Memory(journal_url) as again:
        assert again.verify().ok and again.scope("user:carol").audit() == []
        assert again.scope("user:ana").current("ana", "phone").status == "unknown"
        assert again.scopes() == ["team:ops"]


def test_a_lazily_opened_memory_lists_its_scopes_from_its_index(journal_url: str) -> None:
    """``scopes()`` of a lazily opened memory reads the slot index, not every slot (it
    read them all: 6.3 s at 100,000 facts, 0.1 s now), with the answer of a full replay:
    a scope whose facts were retracted, ended or confirmed and then erased is gone, one
    whose fact was retracted stays."""
    mem = Memory(journal_url)
    mem.declare("pets", cardinality="many")
    mem.add("acme", "ceo", "Ana", source="crm")
    a, b, c = mem.scope("user:a"), mem.scope("user:b"), mem.scope("user:c")
    a.add("me", "city", "Lisbon", source="chat")
    f = b.add("me", "city", "Oslo", source="chat", valid_from=T(1))
    b.add("me", "pets", "cat", source="chat", valid_from=T(1))
    b.add("me", "pets", "cat", source="chat", valid_from=T(2), present=False)
    b.end(f.id, valid_to=T(3))
    b.confirm("me", "city", "Bergen")
    c.retract(c.add("me", "city", "Rome", source="chat").id, reason="wrong")
    assert len(mem.erase(scope="user:b")) == 4
    mem.add("zed", "city", "Faro", source="crm")  # a write after the erasure
    mem.close()
    with Memory(journal_url) as lazy, Memory(journal_url, lazy=False) as full:
        assert lazy.scopes() == full.scopes() == ["user:a", "user:c"]
        assert lazy._store.lazy is not None and not lazy._store.lazy.done
        lazy.scope("user:d").add("me", "city", "Paris", source="chat")
        assert lazy.scopes() == ["user:a", "user:c", "user:d"]
        # erasing a scope reads that scope's slots in, through the index, and no others
        assert len(lazy.erase(scope="user:c")) == 1 and not lazy._store.lazy.done
        assert lazy.scopes() == ["user:a", "user:d"]
        assert lazy.scope("user:a").current("me", "city").value == "Lisbon"


@pytest.mark.parametrize("what", ["scope", "subject"])
def test_erasing_a_scope_or_subject_that_holds_no_fact_reaches_its_audit_and_outcomes(
        tmp_path: Path, what: str) -> None:
    """A scope that only filtered (its query texts in the audit) or only recorded an
    outcome holds no fact; erasing it, or the subject its queries were about, still
    blanks them (it wrote nothing before)."""
    path = str(tmp_path / "m.db")
    mem = _everywhere(path)
    carol, bob = mem.scope("user:carol"), mem.scope("user:bob")
    if what == "scope":
        assert mem.erase(scope="user:carol") == [] and mem.erase(scope="user:bob") == []
        assert bob.reliability()[0].mean == mem.reliability()[0].mean  # its outcome went
    else:
        assert carol.erase(subject="ana") == []
    assert carol.audit() == []
    kinds = [e.kind for e in mem._ledger.journal.read()]
    assert kinds.count("erase") == (2 if what == "scope" else 1)
    assert mem.erase(scope="user:nobody") == [] and carol.erase(subject="zoe") == []
    # written all the same (another handle may hold entries of theirs), naming no one
    events = list(mem._ledger.journal.read())
    assert [e.kind for e in events] == kinds + ["erase", "erase"]
    assert not any(n in json.dumps(e.body) for e in events[-2:] for n in ("nobody", "zoe"))
    mem.close()
    raw = _raw(Path(path))
    assert b"is ana's number" not in raw
    with Memory(path) as again:
        assert again.verify().ok and again.scope("user:carol").audit() == []


@pytest.mark.parametrize("what", ["scope", "subject"])
def test_another_handles_erasure_reaches_what_this_one_holds_for_a_write(
        journal_url: str, what: str) -> None:
    """A handle journals its audit entries with its next write. Another handle's erasure
    could not blank those still waiting (no journal held them), so they were written
    after it; and this handle kept the scope's entries and reliabilities in memory. The
    erasure names its scope and subjects by digest, and this handle follows it (the
    scope's rules, which it blanked, stayed in force here too)."""
    eraser, other = Memory(journal_url), Memory(journal_url)
    eraser.add("ana", "phone", "555-0100", source="crm", valid_from=T(2))
    z = other.scope("user:z")
    z.record_source_outcome("crm", correct=False)
    z.add_rule("home(X) :- holds(X, city, _)")
    z.add("me", "city", "Oslo", source="chat")
    z.filter([Candidate("ana", "phone", "555-0001", T(1))], query=f"first {SECRET}")
    z.add("me", "city", "Bergen", source="chat")  # journals the entry before it
    z.filter([Candidate("ana", "phone", "555-0002", T(1))], query=f"second {SECRET}")
    crm = lambda: {r.source: r.n for r in z.reliability()}["crm"]  # noqa: E731
    assert len(z.audit()) == 2 and crm() == 1
    if what == "scope":
        assert len(eraser.erase(scope="user:z")) == 2
    else:
        assert eraser.scope("user:z").erase(subject="ana") == []
    assert z.audit() == []  # caught up: gone here too
    assert crm() == (0 if what == "scope" else 1)
    assert z.rules() == ([] if what == "scope" else ["home(X) :- holds(X, city, _)"])
    assert [str(b) for b in z.beliefs()] == ([] if what == "scope" else ["home(me)"])
    other.add("flush", "city", "Faro", source="crm")  # a write: nothing of z's is journalled
    eraser.close()
    other.close()
    with Memory(journal_url) as again:
        assert again.scope("user:z").audit() == [] and again.verify().ok
        assert again.scopes() == ([] if what == "scope" else ["user:z"])
    if not journal_url.startswith("postgresql"):
        assert SECRET.encode() not in _raw(Path(journal_url))


@pytest.mark.parametrize("what", ["scope", "subject"])
def test_a_fact_another_handle_commits_while_an_erasure_is_chosen_is_erased_too(
        journal_url: str, what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An erasure of a scope or subject chooses its facts once caught up, then takes the
    journal's lock. Before, a fact of the scope or subject that another handle committed
    in between was left out: the person's new fact outlived the erasure."""
    eraser, other = Memory(journal_url), Memory(journal_url)
    eraser.scope("user:z").add("ana", "city", "Oslo", source="chat")
    ledger, flush = eraser._ledger, eraser._ledger.flush
    other_view = other.scope("user:z")

    def meanwhile() -> None:  # after the choice, before the lock
        other_view.add("ana", "phone", "555-0199", source="chat")
        flush()

    monkeypatch.setattr(ledger, "flush", meanwhile)
    ids = (eraser.erase(scope="user:z") if what == "scope"
           else eraser.scope("user:z").erase(subject="ana"))
    monkeypatch.undo()
    assert len(ids) == 2
    for mem in (eraser, other):
        view = mem.scope("user:z")
        assert [f.status for a in ("city", "phone") for f in view.history("ana", a)] \
            == ["erased", "erased"]
    eraser.close()
    other.close()
    with Memory(journal_url) as again:
        assert again.verify().ok and again.scope("user:z").current("ana", "phone").value is None
        if not journal_url.startswith("postgresql"):
            assert b"555-0199" not in _raw(Path(journal_url))


def test_erasing_a_subject_erases_its_refused_writes_whose_messages_quote_them(
        journal_url: str) -> None:
    """A refused write's audit entry keeps the error's message, which may quote the
    refused item's value. Before, it named no subject, and ``erase(subject=...)`` left
    it: the person's value stayed in the audit log and the journal."""
    mem = Memory(journal_url)
    mem.declare("age", value_type="number")
    view = mem.scope("user:z")
    refused = [  # one item; the culprit of a batch of several subjects; in a scope
        lambda: mem.add("Bob", "phone", SECRET, source="crm", valid_from=f"x{SECRET}"),
        lambda: mem.add_many([{"subject": "ana", "attribute": "age", "value": 30,
                               "source": "crm"},
                              {"subject": "bob", "attribute": "age", "value": SECRET,
                               "source": "crm"}]),
        lambda: view.add("bob", "age", SECRET, source="chat")]
    for write in refused:
        with pytest.raises(InvalidFact, match=SECRET):
            write()
    mem.add("ana", "city", "Lisbon", source="crm")  # journals the entries
    assert sum(SECRET in e.details["message"] for e in mem.audit()) == 2
    assert sum(SECRET in e.details["message"] for e in view.audit()) == 1
    assert mem.erase(subject="BOB") == [] and view.erase(subject="bob") == []
    assert not any(SECRET in str(e.details) for e in [*mem.audit(), *view.audit()])
    mem.close()
    with Memory(journal_url) as again:
        assert again.verify().ok
        assert not any(SECRET in str(e.details) for e in again.scope("user:z").audit())
    if not journal_url.startswith("postgresql"):
        assert SECRET.encode() not in _raw(Path(journal_url))


def test_an_erasure_that_finds_nothing_here_reaches_another_handles_waiting_entries(
        journal_url: str) -> None:
    """A scope that only filtered through another handle holds nothing this handle sees
    (the entry waits for that handle's next write): the erasure is written all the same,
    and the other handle drops the entry instead of journalling it after."""
    eraser, other = Memory(journal_url), Memory(journal_url)
    eraser.add("ana", "phone", "555-0100", source="crm", valid_from=T(2))
    other.scope("user:z").filter([Candidate("ana", "phone", "555-0001", T(1))],
                                 query=f"is it {SECRET}?")
    assert eraser.erase(scope="user:z") == []
    assert other.scope("user:z").audit() == []
    other.add("flush", "city", "Faro", source="crm")
    other.close()
    eraser.close()
    with Memory(journal_url) as again:
        assert again.scope("user:z").audit() == [] and again.scopes() == []
    if not journal_url.startswith("postgresql"):
        assert SECRET.encode() not in _raw(Path(journal_url))


def test_another_handles_erasure_keeps_the_entries_made_after_it(journal_url: str) -> None:
    """A handle that has not caught up with an erasure yet may record entries after it
    was written (a refused write is refused before catching up): those stay."""
    eraser, other = Memory(journal_url), Memory(journal_url)
    eraser.add("ana", "phone", "555-0100", source="crm", valid_from=T(2))
    other.refresh()
    assert eraser.erase(scope="user:z") == []
    with pytest.raises(InvalidFact):
        other.scope("user:z").add("me", "", "x", source="chat")  # after the erasure
    other.add("flush", "city", "Faro", source="crm")  # catches up, then journals it
    assert [e.kind for e in other.scope("user:z").audit()] == ["rejected_write"]
    other.close()
    eraser.close()
    with Memory(journal_url) as again:
        assert [e.kind for e in again.scope("user:z").audit()] == ["rejected_write"]


def test_erasing_a_scope_erases_its_outcomes_about_facts_erased_before(journal_url: str
                                                                        ) -> None:
    """An outcome a scope recorded about a shared fact keeps who was right or wrong, and
    its scope, when the fact is erased; erasing the scope after passed over it (already a
    placeholder), so a reopened memory counted it in the erased scope's book again and
    listed the scope."""
    mem = Memory(journal_url)
    f = mem.add("bob", "city", "Porto", source="crm", valid_from=T(1))
    mem.scope("user:z").record_outcome(f.id, correct=False)
    assert mem.erase(subject="bob") == [f.id]
    assert [(r.source, r.n) for r in mem.scope("user:z").reliability()] == [("crm", 1)]
    assert mem.erase(scope="user:z") == []
    assert mem.scopes() == []
    mem.close()
    for lazy in (True, False):
        with Memory(journal_url, lazy=lazy) as again:
            assert again.scopes() == [], lazy
            assert [r.n for r in again.scope("user:z").reliability()] == [0], lazy
            assert again.verify().ok


@pytest.mark.parametrize("what", ["scope", "subject"])
def test_a_memory_in_memory_erases_the_audit_of_a_scope_or_subject_that_holds_no_fact(
        what: str) -> None:
    """A memory in memory journals no audit entry, so an erasure that found no fact, rule
    or outcome found nothing to erase and left the scope's refused writes and query texts
    in its audit (a file's memory erased them)."""
    mem = Memory()
    carol = mem.scope("user:carol")
    mem.add("ana", "city", "Lisbon", source="crm", valid_from=T(2))
    carol.filter([Candidate("ana", "city", "Porto", T(1))], query="where is ana's flat?")
    with pytest.raises(InvalidFact):
        carol.add("ana", "", "x", source="chat")
    assert len(carol.audit()) == 2
    if what == "scope":
        assert mem.erase(scope="user:carol") == []
        assert carol.audit() == []
    else:
        assert carol.erase(subject="ana") == []
        assert carol.audit() == []  # the refused write was about ana too
    assert "ana's flat" not in repr(carol.audit())
    assert mem.current("ana", "city").value == "Lisbon"  # the shared layer stays


@pytest.mark.parametrize("lazy", [False, True])
def test_audit_does_not_cross_a_scope(tmp_path: Path, lazy: bool) -> None:
    """A scope view's audit holds the drops and refused writes made through it, and no
    other scope's (a drop names another user's query and facts); so does the memory's own,
    after a reopen too."""
    mem = Memory(tmp_path / "m.db")
    ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
    bob.add("me", "city", "Oslo", source="chat", valid_from=T(2))
    bob.filter([Candidate("me", "city", "Bergen", T(1))], query="where does bob live?")
    with pytest.raises(InvalidFact):
        ana.add("me", "", "x", source="chat")
    with pytest.raises(InvalidFact):
        mem.add_many([{"subject": "me"}])

    def seen(m: Memory) -> list[tuple[str, str | None]]:
        return [(e.kind, e.details.get("scope")) for e in m.audit()]

    assert seen(bob) == [("drop", "user:bob")]
    assert bob.audit()[0].details["query"] == "where does bob live?"
    assert seen(ana) == [("rejected_write", "user:ana")]
    assert seen(mem) == [("rejected_write", None)]
    assert mem.scope("user:carol").audit() == []
    mem.close()
    with Memory(tmp_path / "m.db", lazy=lazy) as again:
        assert seen(again.scope("user:bob")) == [("drop", "user:bob")]
        assert seen(again.scope("user:ana")) == [("rejected_write", "user:ana")]
        assert seen(again) == [("rejected_write", None)]


def test_erasing_a_protected_fact_needs_the_owners_signature() -> None:
    owner = Signer(Ed25519PrivateKey.generate())
    mem = Memory(trusted_keys=[owner.public_key])
    [f] = mem.add_many([owner.sign({"subject": "ana", "attribute": "ssn", "value": "123",
                                    "source": "user:ana", "tier": "human",
                                    "valid_from": T(1)})])
    with pytest.raises(TierNotAuthorized):
        mem.erase([f.id])
    assert mem.get(f.id).value == "123" and mem.audit()  # nothing changed; refusal logged
    sig = owner.sign_action("erase", {"ids": [f.id], "reason": "user request"})
    mem.erase([f.id], reason="user request", signature=sig)
    assert mem.history("ana", "ssn")[0].status == "erased" and mem.verify().ok
    with pytest.raises(TierNotAuthorized):  # a signature is not replayed
        mem.erase([mem.add("ana", "x", 1, source="s").id], reason="user request",
                  signature=sig)


def test_a_body_blanked_without_an_erasure_is_detected(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add("ana", "city", "Lisbon", source="s")
    con = sqlite3.connect(db)
    (body,) = con.execute("SELECT body FROM events WHERE seq = 2").fetchone()
    con.execute("UPDATE events SET body = ? WHERE seq = 2", (erased_body(body, 1),))
    con.commit()
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):  # any other edit
        con.execute("UPDATE events SET body = '{}' WHERE seq = 2")
    con.close()
    with Memory(db, readonly=True, lazy=False) as mem:
        v = mem.verify()
        assert not v.ok and v.first_bad == 2 and "without an erasure" in (v.reason or "")


def test_beliefs_why_and_graph_stay_in_their_scope() -> None:
    mem = Memory()
    ana = mem.scope("user:ana")
    f = ana.add("me", "location", "home", source="s")
    shared = mem.add("bob", "location", "home", source="s")
    mem.add_rule("needs_vpn(U) :- holds(U, location, home)")
    # a shared rule applies in every view, over the view's facts: its scope's and the shared
    assert [b.text for b in ana.beliefs()] == ["needs_vpn(bob)", "needs_vpn(me)"]
    assert [b.text for b in mem.beliefs()] == ["needs_vpn(bob)"]
    assert [b.text for b in mem.scope("user:bob").beliefs()] == ["needs_vpn(bob)"]
    assert f.id in str(ana.why("needs_vpn(me)")) and f.id in str(ana.why(ana.beliefs()[1]))
    g = ana.graph()  # its scope's facts and the shared layer's (never another scope's)
    assert set(g.nodes) == {f.id, shared.id, "needs_vpn(me)", "needs_vpn(bob)"}
    assert g.has_edge(f.id, "needs_vpn(me)") and g.has_edge(shared.id, "needs_vpn(bob)")
    assert f.id not in mem.graph().nodes


@pytest.mark.parametrize("call", [
    lambda m: m.scope(42),
    lambda m: m.scope("a\x00b" * 400),
    lambda m: m.about(None),
    lambda m: m.slots(subject=7),
    lambda m: m.erase(["no-such-fact"]),
    lambda m: m.erase(scope=""),
    lambda m: m.erase([1]),
    lambda m: m.erase(subject="ana", reason=""),
])
def test_bad_input_to_the_new_calls_changes_nothing(call) -> None:
    from truthkeeper import TruthkeeperError

    mem = Memory()
    f = mem.add("ana", "city", "Lisbon", source="s")
    before = mem.verify().events
    with pytest.raises(TruthkeeperError):
        call(mem)
    assert mem.get(f.id).value == "Lisbon" and mem.verify().events == before
    assert mem.erase() == []  # nothing selected: nothing written
    assert mem.verify().events == before


def test_erasure_vacuums_postgresql(journal_url: str) -> None:
    if not journal_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite zeroes pages (secure_delete) and truncates its WAL")
    import time

    import psycopg

    with Memory(journal_url) as mem:
        f = mem.add("ana", "phone", SECRET, source="s")
        mem.erase([f.id])
    with psycopg.connect(journal_url, autocommit=True) as c:
        for _ in range(50):  # statistics arrive asynchronously
            (last,) = c.execute("SELECT last_vacuum FROM pg_stat_user_tables "
                                "WHERE relname = 'events'").fetchone()
            if last is not None:
                break
            time.sleep(0.1)
        assert last is not None


def test_an_erasure_that_cannot_truncate_the_wal_says_so_and_completes_later(tmp_path) -> None:
    import subprocess
    import sys
    import time

    from truthkeeper import JournalError

    path = tmp_path / "m.db"
    mem = Memory(str(path))
    f = mem.add("ana", "phone", "555-0199-secret", source="chat")
    reader = subprocess.Popen(  # another process, holding a read transaction open
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "c.execute('BEGIN'); c.execute('SELECT count(*) FROM events').fetchone()\n"
         "print('reading', flush=True); sys.stdin.readline(); c.execute('COMMIT')"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    t = time.monotonic()
    with pytest.raises(JournalError, match="write-ahead log"):
        mem.erase(f.id)
    assert time.monotonic() - t < 15  # not the 30 s busy timeout, and never silent
    assert mem.history("ana", "phone")[0].status == "erased"  # the erasure is committed
    reader.communicate("done\n", timeout=30)
    mem.add("bob", "city", "Rome", source="chat")  # the next write completes the checkpoint
    wal = tmp_path / "m.db-wal"
    assert not wal.exists() or b"555-0199-secret" not in wal.read_bytes()
    mem.close()
    for name in ("m.db", "m.db-wal"):
        p = tmp_path / name
        assert not p.exists() or b"555-0199-secret" not in p.read_bytes()


def test_erasing_a_slot_leaves_neither_its_names_nor_a_signed_confirmations_payload(
        tmp_path) -> None:
    owner = Signer(Ed25519PrivateKey.generate())
    path = tmp_path / "m.db"
    slot = ("patient-7781", "diagnosis-zx")
    with Memory(str(path), trusted_keys=[owner.public_key]) as mem:
        mem.add(*slot, "condition-qq", source="clinic", tier="verified")
        mem.add("acme", "price", 10, source="clinic", tier="verified")
        payload = {"subject": slot[0], "attribute": slot[1], "value": "condition-qq"}
        mem.confirm(*slot, "condition-qq", signature=owner.sign_action("confirm", payload))
        ids = [f.id for f in mem.history(*slot)]
        sig = owner.sign_action("erase", {"ids": ids, "reason": "gdpr"})
        assert mem.erase(ids, reason="gdpr", signature=sig) == ids
        taught = {r.source: (r.n, round(r.mean, 9)) for r in mem.reliability()}
        assert mem.slots() == [("acme", "price")] and mem.verify().ok
        mem.export_jsonl(tmp_path / "after.jsonl")
    for f in (path, tmp_path / "m.db-wal", tmp_path / "after.jsonl"):
        data = f.read_bytes() if f.exists() else b""
        for word in (b"patient-7781", b"diagnosis-zx", b"condition-qq"):
            assert word not in data, (f.name, word)
    with Memory(str(path), trusted_keys=[owner.public_key]) as mem:  # replays the same
        assert mem.verify().ok
        assert [f.status for f in mem.history(*slot)] == ["erased", "erased"]
        assert {r.source: (r.n, round(r.mean, 9)) for r in mem.reliability()} == taught


@pytest.mark.parametrize("erased", ["superseded", "superseding"])
def test_erasing_one_end_of_a_supersedes_link_keeps_the_journal_openable(
        journal_url: str, erased: str) -> None:
    """An erased fact moves to its placeholder's slot; a supersedes link that names it
    crosses slots from then on, and replay must not take that for a forged link (the
    journal refused to open: JournalCorrupt at the superseding fact)."""
    with Memory(journal_url, protected_tiers=()) as m:
        a = m.add("acme", "price", 100, source="crm", valid_from="2026-01-01")
        b = m.add("acme", "price", 90, source="crm", valid_from="2026-01-01", supersedes=a.id)
        m.erase([a.id] if erased == "superseded" else [b.id])
        live = m.history("acme", "price"), m.current("acme", "price").value
    for lazy in (False, True):
        with Memory(journal_url, protected_tiers=(), lazy=lazy) as again:
            assert (again.history("acme", "price"),
                    again.current("acme", "price").value) == live
            assert again.verify().ok
    assert live[1] == (90 if erased == "superseded" else 100)


def test_the_placeholders_attribute_is_reserved() -> None:
    m = Memory()
    with pytest.raises(InvalidFact, match="reserved"):
        m.add("acme", "$erased", 1, source="crm")
    assert len(m) == 0


def test_an_erasure_reaches_a_fact_the_slot_index_lost(tmp_path: Path) -> None:
    """An erasure finds the events it blanks through the slot index; a fact the index
    does not list (a damaged index) is found by reading the journal: no byte is left."""
    path = tmp_path / "m.db"
    with Memory(str(path)) as mem:
        f = mem.add("ana", "phone", SECRET, source="s")
        mem.add("bo", "phone", "555-0100", source="s")
    with sqlite3.connect(path) as c:
        assert c.execute("DELETE FROM tk_index_key WHERE key = ?", ("i:" + f.id,)).rowcount
    with Memory(str(path), lazy=False) as mem:  # the store holds every fact
        assert mem.erase([f.id]) == [f.id]
        assert "slot index" in (mem.verify().reason or "")  # seen and rebuilt
        assert mem.verify().ok and mem.current("bo", "phone").value == "555-0100"
    assert SECRET.encode() not in _raw(path)


def _erasures_between_writes(mem: Memory, tmp_path: Path) -> None:
    a = mem.add("ana", "phone", SECRET, source="s")
    keep = mem.add("ana", "city", "Lisbon", source="s")
    assert mem.erase([a.id]) == [a.id]
    b = mem.add("bo", "phone", SECRET + "-2", source="s", text=f"bo: {SECRET}")
    with pytest.raises(UnknownFact):
        mem.erase([b.id, "no-such-fact"])  # refused: nothing changes
    c = mem.scope("user:cy").add("me", "phone", SECRET + "-3", source="s")
    assert sorted(mem.erase(subject="bo")) == [b.id]
    assert mem.scope("user:cy").erase(subject="me") == [c.id]
    out = tmp_path / "export.jsonl"
    mem.export_jsonl(out)
    assert SECRET not in out.read_text() and "Lisbon" in out.read_text()
    assert mem.verify().ok and mem.get(keep.id).value == "Lisbon"


def test_erasures_reach_what_was_written_between_them(journal_url: str,
                                                      tmp_path: Path) -> None:
    """Erasures one after another, with writes and a refused erasure between them, each
    blank every byte of what they erase and keep the chain."""
    with Memory(journal_url) as mem:
        _erasures_between_writes(mem, tmp_path)
    if not journal_url.startswith("postgresql"):
        assert SECRET.encode() not in _raw(Path(journal_url))


def test_erasures_in_memory_reach_what_was_written_between_them(tmp_path: Path) -> None:
    """The same in memory, where the first erasure builds the lookup of fact events that
    the next ones use (kept up to date by every write after it)."""
    with Memory() as mem:
        _erasures_between_writes(mem, tmp_path)


def test_an_erasure_reaches_a_body_compressed_in_an_in_memory_journal(tmp_path: Path) -> None:
    """An in-memory journal compresses older bodies in blocks: erasing a fact of an early
    block leaves its value nowhere in the export, the chain verifies, and a batch refused
    afterwards changes nothing."""
    with Memory() as mem:
        mem.add("ana", "diagnosis", "secret-flu", source="doctor")
        mem.add_many([{"subject": f"s{i}", "attribute": "x", "value": i, "source": "s"}
                      for i in range(1_000)])
        assert mem.erase(subject="ana")
        with pytest.raises(InvalidFact):
            mem.add_many([{"subject": "b", "attribute": "x", "value": 1, "source": "s"},
                          {"subject": "", "attribute": "x", "value": 1, "source": "s"}])
        assert mem.verify().ok
        mem.export_jsonl(tmp_path / "out.jsonl")
    text = (tmp_path / "out.jsonl").read_text()
    assert "secret-flu" not in text and text.count('"kind": "fact"') == 1_001


def test_a_new_fact_cannot_supersede_an_erased_one_and_a_journal_with_such_a_link_opens(
        tmp_path: Path) -> None:
    """A link made before the erasure replays (the journal, an export); a new fact may not
    name an erased one (it was taken, across slots too: the placeholder is in no slot)."""
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        old = mem.add("ana", "city", "Lisbon", source="s", valid_from=T(1))
        new = mem.add("ana", "city", "Porto", source="s", valid_from=T(2), supersedes=old.id)
        mem.erase(old.id)
        for slot in (("ana", "city"), ("ana", "phone")):
            with pytest.raises(InvalidFact, match="is erased"):
                mem.add(*slot, "x", source="s", valid_from=T(3), supersedes=old.id)
        assert mem.current("ana", "city").value == "Porto" and len(mem) == 2
        mem.export_jsonl(tmp_path / "e.jsonl")
    for lazy in (True, False):
        with Memory(path, lazy=lazy) as again:
            assert again.current("ana", "city").value == "Porto" and again.verify().ok
    with Memory() as copy:
        copy.import_jsonl(tmp_path / "e.jsonl")
        assert copy.get(new.id).supersedes == old.id


def test_what_if_refuses_a_supposed_fact_that_supersedes_an_erased_one() -> None:
    """``what_if`` refuses a supposed fact as ``add`` would: it cannot supersede an erased
    fact. Before, it answered as if the link held."""
    mem = Memory()
    old = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    mem.erase(old.id)
    supposed = {"subject": "acme", "attribute": "price", "value": 2, "source": "s",
                "valid_from": T(1), "supersedes": old.id}
    with pytest.raises(InvalidFact, match="is erased"):
        mem.add(**supposed)
    with pytest.raises(InvalidFact, match="is erased"):
        mem.what_if(add=[supposed])
    assert len(mem) == 1 and mem.current("acme", "price").status == "unknown"


@pytest.mark.parametrize("lazy", [True, False])
def test_another_handles_erasure_is_seen_by_a_write_that_links_to_it(journal_url: str,
                                                                     lazy: bool) -> None:
    """Two handles on one journal (two processes, say). The write checks its links once
    caught up with the other's erasure: it was checked before, and took the link. A link
    to a fact this handle never read, erased since, is refused too, and catching up with
    it does not load the fact twice (a lazy handle found its journal corrupt)."""
    with Memory(journal_url) as first, Memory(journal_url, lazy=lazy) as second:
        seen = second.add("acme", "price", 1, source="s", valid_from=T(1))
        first.erase(seen.id)
        with pytest.raises(InvalidFact, match="is erased"):
            second.add("acme", "price", 2, source="s", valid_from=T(2), supersedes=seen.id)
        unread = first.add("acme", "owner", "bob", source="s", valid_from=T(1))
        first.erase(subject="acme")
        with pytest.raises(InvalidFact, match="is erased"):
            second.add("acme", "owner", "ann", source="s", valid_from=T(2),
                       supersedes=unread.id)
        assert len(second) == len(first) == 2 and second.verify().ok
        assert second.current("acme", "owner").status == "unknown"


@pytest.mark.parametrize("signed", [False, True])
def test_reimporting_an_erasure_that_blanked_outcomes_changes_nothing(tmp_path: Path,
                                                                       signed: bool) -> None:
    """An erasure's event names the outcome events it blanked by their place in its own
    journal, which an import renumbers: a second import of the same export took it for a
    new erasure (signed: refused as a replayed signature; unsigned: journalled again)."""
    owner = Signer(Ed25519PrivateKey.generate())
    mem = Memory(trusted_keys=[owner.public_key])
    if signed:
        mem.confirm("acme", "price", 0, signature=owner.sign_action(
            "confirm", {"subject": "acme", "attribute": "price", "value": 0}))
    else:
        mem.add("acme", "price", 0, source="crm", tier="verified")
    f = mem.history("acme", "price")[0]
    mem.record_outcome(f.id, correct=False, signature=owner.sign_action(
        "outcome", {"id": f.id, "source": f.source, "correct": False}) if signed else None)
    mem.add("acme", "owner", "ana", source="crm", tier="verified")
    mem.erase([f.id], signature=owner.sign_action(
        "erase", {"ids": [f.id], "reason": "erasure request"}) if signed else None)
    events = mem.export_jsonl(tmp_path / "m.jsonl")
    copy = Memory(trusted_keys=[owner.public_key])
    copy.import_jsonl(tmp_path / "m.jsonl")
    once = copy.export_jsonl(tmp_path / "once.jsonl")
    copy.import_jsonl(tmp_path / "m.jsonl")
    assert copy.export_jsonl(tmp_path / "twice.jsonl") == once >= events - 1
    assert copy.verify().ok and [g.status for g in copy.history("acme", "price")] == ["erased"]
    assert copy.current("acme", "owner").value == "ana"

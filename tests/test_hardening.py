"""Hostile input and several writers (issue 9): nothing forged, nothing lost, nothing crashes.

Each test names the item of the issue it covers; each failed on the main before it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from truthkeeper import (
    Candidate,
    Fact,
    InvalidFact,
    JournalCorrupt,
    JournalError,
    Memory,
    RuleEvaluationError,
    Signer,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
    UnsafeRule,
    Utility,
)
from truthkeeper.journal.codec import event_hash
from truthkeeper.testing import hostile_values

from .test_journal import _human

T = "2026-11-{:02d}T10:00:00Z".format
OWNER = Signer(Ed25519PrivateKey.generate())
NEW_OWNER = Signer(Ed25519PrivateKey.generate())


def _state(mem: Memory) -> list:
    """What a user would compare between a live and a reopened memory."""
    slots = sorted({(f.subject, f.attribute) for f, _ in mem._store.all_facts()})
    return [(s, [(f.id, f.value, f.status) for f in mem.history(*s)],
             mem.current(*s).status) for s in slots] + [mem.rules(), len(mem)]


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter (a crash or a hang must not take the tests down)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)


# ---------------------------------------------------------------- 1. replay across writers

def test_1_a_signature_replayed_by_a_second_writer_is_refused(journal_url: str) -> None:
    db = journal_url
    a = Memory(db, trusted_keys=[OWNER.public_key])
    b = Memory(db, trusted_keys=[OWNER.public_key])  # opened before A writes
    signed = OWNER.sign(_human(4800))
    a.add_many([signed])
    a.add("acme", "note", "x", source="s")
    with pytest.raises(TierNotAuthorized, match="already used"):
        b.add_many([signed])
    a.close()
    b.close()
    with Memory(db) as again:  # the journal still opens and verifies
        assert again.current("acme", "invoice_total").value == 4800
        assert again.verify().ok and len(again) == 2


# ---------------------------------------------------------------- 2. key rotation

def test_2_rotating_a_key_keeps_history_and_a_revoked_key_signs_nothing(
        journal_url: str) -> None:
    db = journal_url
    with Memory(db, trusted_keys=[OWNER.public_key]) as mem:
        mem.add_many([OWNER.sign(_human(4800))])
        new_hex = NEW_OWNER.public_key_hex
        with pytest.raises(TierNotAuthorized):  # a key is added only by a trusted key
            mem.add_key(new_hex, signature=NEW_OWNER.sign_action(
                "key", {"key": new_hex, "action": "added"}))
        mem.add_key(new_hex, signature=OWNER.sign_action(
            "key", {"key": new_hex, "action": "added"}))
        old_hex = OWNER.public_key_hex
        mem.revoke_key(old_hex, signature=NEW_OWNER.sign_action(
            "key", {"key": old_hex, "action": "revoked"}))
        with pytest.raises(TierNotAuthorized, match="revoked"):
            mem.add_many([OWNER.sign(_human(5000, day=2))])
        mem.add_many([NEW_OWNER.sign(_human(5100, day=3))])
    for keys in ([NEW_OWNER.public_key], [], [OWNER.public_key]):
        with Memory(db, trusted_keys=keys) as again:  # nothing bricks
            assert [f.value for f in again.history("acme", "invoice_total")] == [4800, 5100]
            assert again.verify().ok
    with Memory(db, readonly=True) as ro:
        assert len(ro) == 2 and ro.corruption is None


def test_2_a_key_another_writer_revoked_signs_nothing_here_and_one_it_added_does(
        journal_url: str) -> None:
    """Two memories on one journal: the second checked a signed write against the keys it
    had read when it last caught up. A key the first revoked meanwhile was still accepted,
    and the journal then refused to open ever after (replay: "not a trusted key ... or was
    revoked"); a key the first added was refused."""
    db = journal_url
    deputy = Signer(Ed25519PrivateKey.generate())
    a = Memory(db, trusted_keys=[OWNER.public_key])
    b = Memory(db, trusted_keys=[OWNER.public_key])
    assert b.current("acme", "invoice_total").status == "unknown"  # b has caught up
    a.add_key(deputy.public_key, signature=OWNER.sign_action(
        "key", {"key": deputy.public_key_hex, "action": "added"}))
    assert b.add_many([deputy.sign(_human(4800))])[0].tier == "human"
    a.revoke_key(deputy.public_key, signature=OWNER.sign_action(
        "key", {"key": deputy.public_key_hex, "action": "revoked"}))
    with pytest.raises(TierNotAuthorized, match="revoked"):
        b.add_many([deputy.sign(_human(5000, day=2))])
    with pytest.raises(TierNotAuthorized, match="revoked"):
        b.confirm("acme", "invoice_total", 4800, signature=deputy.sign_action(
            "confirm", {"subject": "acme", "attribute": "invoice_total", "value": 4800}))
    assert [f.value for f in b.history("acme", "invoice_total")] == [4800]
    a.close()
    b.close()
    with Memory(db, trusted_keys=[OWNER.public_key], lazy=False) as again:
        assert again.verify().ok
        assert [f.value for f in again.history("acme", "invoice_total")] == [4800]


def test_2_a_key_added_again_or_revoked_and_added_again_keeps_what_it_signed(
        journal_url: str) -> None:
    """A key ring kept one span a key: adding a trusted key again moved its start to the
    second add, and adding a revoked key again dropped the span it was first trusted in.
    A lazily opened memory (which checks a slot's signed facts when it reads the slot,
    with every key event already applied) then refused the journal as corrupt for a fact
    the key signed before: found by the state machine. Each key keeps every span."""
    db = journal_url
    deputy = Signer(Ed25519PrivateKey.generate())
    added = {"key": deputy.public_key_hex, "action": "added"}
    revoked = {"key": deputy.public_key_hex, "action": "revoked"}
    with Memory(db, trusted_keys=[OWNER.public_key]) as mem:
        mem.add_key(deputy.public_key, signature=OWNER.sign_action("key", added))
        mem.add_many([deputy.sign(_human(4800))])
        mem.add_key(deputy.public_key, signature=OWNER.sign_action("key", added))  # again
        mem.add_many([deputy.sign({**_human(4900, day=2), "attribute": "paid"})])
        mem.revoke_key(deputy.public_key, signature=OWNER.sign_action("key", revoked))
        with pytest.raises(TierNotAuthorized, match="revoked"):
            mem.add_many([deputy.sign({**_human(1, day=3), "attribute": "late"})])
        mem.add_key(deputy.public_key, signature=OWNER.sign_action("key", added))
        mem.add_many([deputy.sign({**_human(5000, day=4), "attribute": "due"})])
    for lazy in (True, False):
        with Memory(db, lazy=lazy) as again:
            assert [again.current("acme", a).value
                    for a in ("invoice_total", "paid", "due")] == [4800, 4900, 5000]
            assert again.current("acme", "late").status == "unknown"
            assert again.verify().ok


# ---------------------------------------------------------------- 3. lone surrogates

@pytest.mark.parametrize("field", ["subject", "value", "text", "meta", "source"])
def test_3_lone_surrogates_are_refused_before_anything_changes(tmp_path: Path,
                                                                field: str) -> None:
    db = tmp_path / "m.db"
    mem = Memory(db)
    mem.add("acme", "price", 1, source="s")
    args = {"subject": "acme", "attribute": "price", "value": 2, "source": "s"}
    args[field] = {"k": "\ud800"} if field == "meta" else "\ud800"
    with pytest.raises(InvalidFact, match="surrogate"):
        mem.add(**args)
    assert mem.current("acme", "price").value == 1  # the next Prolog call works
    live = _state(mem)
    mem.close()
    with Memory(db) as again:
        assert _state(again) == live and again.verify().ok


# ---------------------------------------------------------------- 4. anchoring

def _rewrite(db: Path, seq: int, value: int) -> None:
    """An attacker with the file: drop the triggers, edit a value, recompute the chain."""
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER events_append_only_update")
    rows = con.execute("SELECT seq, kind, recorded_at, body, prev_hash FROM events "
                       "ORDER BY seq").fetchall()
    prev = "0" * 64
    for s, kind, ra, body, _ in rows:
        if s == seq:
            b = json.loads(body)
            b["value"] = value
            body = json.dumps(b, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        h = event_hash(prev, s, kind, ra, body)
        con.execute("UPDATE events SET body = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                    (body, prev, h, s))
        prev = h
    con.commit()
    con.close()


def test_4_a_signed_checkpoint_exposes_a_rewritten_chain_and_a_cut_tail(
        tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db, trusted_keys=[OWNER.public_key]) as mem:
        for i in range(5):
            mem.add("acme", "price", i, source="s", valid_from=T(i + 1))
        v = mem.verify()
        cp = OWNER.sign_checkpoint(v.events, v.head_hash)
        mem.checkpoint(cp)
        assert mem.verify(checkpoint=cp).ok
    rewritten = tmp_path / "r.db"
    rewritten.write_bytes(db.read_bytes())
    _rewrite(rewritten, 4, 99)
    with Memory(rewritten) as mem:
        assert mem.current("acme", "price").value == 4  # the chain itself verifies ...
        got = mem.verify(checkpoint=cp)  # ... but not against the owner's checkpoint
        assert not got.ok and "rewritten" in (got.reason or "")
        assert not mem.verify().ok  # the journalled checkpoint catches it too
    cut = tmp_path / "c.db"
    cut.write_bytes(db.read_bytes())
    con = sqlite3.connect(cut)
    con.execute("DROP TRIGGER events_append_only_delete")
    con.execute("DELETE FROM events WHERE seq >= 5")
    con.commit()
    con.close()
    with Memory(cut) as mem:
        got = mem.verify(checkpoint=cp)
        assert not got.ok and "cut" in (got.reason or "")
    db.write_bytes(b"")  # truncated to nothing: not a new empty memory
    (tmp_path / "m.db-wal").unlink(missing_ok=True)
    with pytest.raises(JournalCorrupt, match="empty file"):
        Memory(db)


# ---------------------------------------------------------------- 5, 6. protected tiers

def test_5_retracting_a_protected_fact_needs_a_signature(journal_url: str) -> None:
    db = journal_url
    with Memory(db, trusted_keys=[OWNER.public_key]) as mem:
        [f] = mem.add_many([OWNER.sign(_human(4800))])
        mem.add("acme", "invoice_total", 5000, source="agent:planner", valid_from=T(2))
        with pytest.raises(TierNotAuthorized, match="signed"):
            mem.retract(f.id, reason="agent says so")
        forged = NEW_OWNER.sign_action("retract", {"id": f.id, "reason": "x"})
        with pytest.raises(TierNotAuthorized):
            mem.retract(f.id, reason="x", signature=forged)
        assert mem.current("acme", "invoice_total").status == "conflict"
        sig = OWNER.sign_action("retract", {"id": f.id, "reason": "owner"})
        mem.retract(f.id, reason="owner", signature=sig)
        with pytest.raises(TruthkeeperError):
            mem.retract(f.id, reason="owner", signature=sig)  # no replay
        assert mem.current("acme", "invoice_total").value == 5000
    with Memory(db) as again:
        assert again.current("acme", "invoice_total").value == 5000 and again.verify().ok


def test_6_reliability_cannot_be_hijacked_without_a_signature() -> None:
    mem = Memory(trusted_keys=[OWNER.public_key])
    mem.add_many([OWNER.sign(_human(4800))])
    mem.add("acme", "invoice_total", 5000, source="agent:planner", valid_from=T(2))
    with pytest.raises(TierNotAuthorized, match="keeps one tier"):
        mem.add("acme", "other", 1, source="user:ana", tier="agent")
    with pytest.raises(TierNotAuthorized, match="keeps one tier"):
        mem.record_source_outcome("user:ana", correct=False, tier="agent")
    for _ in range(5):
        with pytest.raises(TierNotAuthorized):
            mem.record_source_outcome("user:ana", correct=False, tier="human")
    [ana] = [f for f in mem.current("acme", "invoice_total").heads if f.source == "user:ana"]
    with pytest.raises(TierNotAuthorized):
        mem.record_outcome(ana.id, correct=False)
    with pytest.raises(TierNotAuthorized):
        mem.confirm("acme", "invoice_total", 5000)
    assert [r.n for r in mem.reliability() if r.source == "user:ana"] == [0]
    d = mem.decide("acme", "invoice_total", utility=Utility(correct=1, wrong=-1))
    assert d.value == 4800
    sig = OWNER.sign_action("outcome", {"id": ana.id, "source": "user:ana", "correct": True})
    mem.record_outcome(ana.id, correct=True, signature=sig)
    assert [r.n for r in mem.reliability() if r.source == "user:ana"] == [1]


def test_6_a_retrieved_claim_cannot_take_a_protected_tier_into_a_decision() -> None:
    """A retrieved item or passage carries no signature: claiming tier human it let a
    forged newer price drop the owner's signed one from the context, and a passage outrank
    the model's own answer. Now it is refused (an adapter leaves the document unjudged)."""
    from langchain_core.documents import Document

    from truthkeeper import Candidate
    from truthkeeper.integrations.langchain import TruthkeeperCompressor
    from truthkeeper.integrations.mcp import build_server

    from .test_integrations import _call

    with Memory(protected_tiers=("verified",), trusted_keys=[OWNER.public_key]) as mem:
        [signed] = mem.add_many([OWNER.sign(_human(4800))])  # valid from T(1)
        forged = Candidate("acme", "invoice_total", 5000, T(9), tier="human", source="mail")
        for tier in ("human", "verified", " Verified"):  # both protected here
            with pytest.raises(TierNotAuthorized, match=r"items\[1\]\.tier .* is protected"):
                mem.filter([signed.id, Candidate("acme", "invoice_total", 5000, T(9),
                                                 tier=tier)])
        assert mem.filter([signed.id, replace(forged, tier="agent")]).kept[0] == signed.id
        with pytest.raises(TierNotAuthorized, match="context_tier 'human' is protected"):
            mem.resolve_context(question="total?", context_value=5000, context_source="mail",
                                context_tier="human", parametric_value=4800,
                                parametric_confidence=0.9)
        with pytest.raises(TierNotAuthorized, match="'user:ana' belongs to protected tier"):
            mem.resolve_context(question="total?", context_value=5000,  # the owner's name:
                                context_source="user:ana", parametric_value=4800,  # her
                                parametric_confidence=0.9)  # reliability, borrowed
        assert mem.audit() == []  # nothing refused was a write
        docs = [Document("4800", metadata={"fact_id": signed.id}),
                Document("5000", metadata={"subject": "acme", "attribute": "invoice_total",
                                           "value": 5000, "valid_from": T(9),
                                           "tier": "human"})]
        compressor = TruthkeeperCompressor(memory=mem)
        assert [d.page_content for d in compressor.compress_documents(docs, "total?")] \
            == ["4800", "5000"]
        assert compressor.last_report.unjudged == (1,)
        assert "TierNotAuthorized" in compressor.last_report.reason(1)["reason"]
        server = build_server(mem)  # what an MCP client (a prompt-injected model) may send
        err, res = _call(server, "filter_context", {"items": [
            {"fact_id": signed.id}, dict(docs[1].metadata)]})
        assert not err and [(k["index"], k["judged"]) for k in res["kept"]] \
            == [(0, True), (1, False)]
        assert "is protected" in res["kept"][1]["reason"]
        err, res = _call(server, "resolve_context", {
            "question": "total?", "context_value": 5000, "context_source": "mail",
            "context_tier": "human", "parametric_value": 4800, "parametric_confidence": 0.9})
        assert err and "is protected" in res


# ---------------------------------------------------------------- 7-11. rules

def test_7_deep_nesting_is_refused_not_a_crash() -> None:
    r = _run("""
        from truthkeeper import Memory, TruthkeeperError
        mem = Memory()
        for text in ["f(" * 15000 + "x" + ")" * 15000, "[" * 20000 + "]" * 20000]:
            for call in (mem.add_rule, mem.why):
                try:
                    call(text)
                except TruthkeeperError as e:
                    print(type(e).__name__)
        print(mem.add("a", "b", 1, source="s").value)
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["UnsafeRule", "InvalidFact", "UnsafeRule", "InvalidFact", "1"]


def test_8_a_rule_that_derives_without_end_is_bounded() -> None:
    r = _run("""
        from truthkeeper import Memory, RuleEvaluationError
        mem, other = Memory(), Memory()
        other.add("x", "a", 1, source="s")
        mem.add_rule("n(0)")
        try:
            mem.add_rule("n(Y) :- n(X), Y is X + 1")
        except RuleEvaluationError as e:
            print("refused", "inferences" in str(e))
        print(other.current("x", "a").value, [str(b) for b in mem.beliefs()])
    """, timeout=90)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[:2] == ["refused True", "1 ['n(0)']"]


def test_8_a_join_too_large_for_one_evaluation_is_refused_saying_so() -> None:
    """A colleague rule over 3,000 people in 10 companies derives 900,000 beliefs, past one
    evaluation's budget. It was refused as "a rule that derives without end?", which it is
    not: the message now names the other cause (a join over many subjects) and nothing is
    added."""
    from truthkeeper import RuleEvaluationError

    mem = Memory()
    mem.add_many([{"subject": f"p{i}", "attribute": "employer", "value": f"e{i % 10}",
                   "source": "hr"} for i in range(3000)])
    with pytest.raises(RuleEvaluationError, match="join over many subjects"):
        mem.add_rule("colleague(X, Y) :- holds(X, employer, E), holds(Y, employer, E), "
                     "X \\== Y")
    assert mem.rules() == [] and mem.beliefs() == []
    mem.add_rule("employed(X) :- holds(X, employer, _)")  # the memory goes on
    assert len(mem.beliefs()) == 3000


def test_9_a_raising_rule_is_refused_and_a_rule_can_be_removed() -> None:
    mem = Memory()
    mem.add("ana", "employer", "acme", source="s")
    with pytest.raises(RuleEvaluationError, match="instantiation"):
        mem.add_rule("bad(X) :- holds(X, employer, E), atom_length(_, E)")
    assert mem.rules() == []
    mem.add_rule("late(X) :- holds(X, hours, H), R is 1 / H, R > 0")  # raises only with data
    mem.add("ana", "hours", 0, source="s")
    with pytest.raises(RuleEvaluationError):
        mem.beliefs()
    mem.remove_rule("late(X) :- holds(X, hours, H), R is 1 / H, R > 0")
    assert mem.beliefs() == []


def test_9_a_rule_that_raises_for_one_subject_among_many_is_refused_when_added() -> None:
    """``add_rule`` derives every belief, not the first of each rule (its check no longer
    lists them: adding the 400th rule over 40,000 beliefs took 90 ms)."""
    mem = Memory()
    mem.add_many([{"subject": f"p{i:03}", "attribute": "hours", "value": 200 - i,
                   "source": "s"} for i in range(200)])  # p000 200 hours ... p199 1 hour
    mem.add("zed", "hours", 0, source="s")
    with pytest.raises(RuleEvaluationError):
        mem.add_rule("late(X) :- holds(X, hours, H), R is 1 / H, R > 0")
    assert mem.rules() == [] and mem.beliefs() == []


def test_9_a_journalled_rule_that_now_raises_never_makes_the_journal_unopenable(
        tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add_rule("late(X) :- holds(X, hours, H), R is 1 / H, R > 0")
        mem.add("ana", "hours", 0, source="s")
    with Memory(db) as again:
        assert again.rules() == ["late(X) :- holds(X, hours, H), R is 1 / H, R > 0"]
        with pytest.raises(RuleEvaluationError):
            again.beliefs()


@pytest.mark.parametrize("text", ["a(X) :- holds(X, b, c). d(Y) :- holds(Y, e, f)",
                                  "a(X) :- holds(X, b, c). garbage(",
                                  "a(X) :- holds(X, b, c). %ok\n x"])
def test_10_several_clauses_or_trailing_text_are_refused(text: str) -> None:
    mem = Memory()
    with pytest.raises(UnsafeRule):
        mem.add_rule(text)
    assert mem.rules() == []


def test_10_one_clause_with_its_full_stop_and_a_comment_is_fine() -> None:
    mem = Memory()
    mem.add_rule("a(X) :- holds(X, b, c). % why")
    assert mem.rules() == ["a(X) :- holds(X, b, c). % why"]


def test_11_a_capitalised_constant_is_refused_with_how_to_write_it() -> None:
    mem = Memory()
    mem.add("ana", "employer", "Acme", source="s")
    with pytest.raises(UnsafeRule, match="capital letter.*lower case or quoted"):
        mem.add_rule("works_at_globex(U) :- holds(U, employer, Globex)")
    mem.add_rule("works_at_acme(U) :- holds(U, employer, acme)")
    mem.add_rule("employed(U) :- holds(U, employer, _)")
    assert [str(b) for b in mem.beliefs()] == ["employed(ana)", "works_at_acme(ana)"]


# ---------------------------------------------------------------- 12. import / export

def test_12_export_import_is_complete_atomic_and_idempotent(tmp_path: Path,
                                                          journal_url: str) -> None:
    src = Memory(tmp_path / "a.db")
    f = src.add("acme", "price", None, source="s", valid_from=T(1))
    g = src.add("acme", "price", 5, source="t", valid_from=T(2))
    src.record_outcome(g.id, correct=True)
    src.record_source_outcome("web", correct=False, tier="unverified")
    src.learn_from_agreement()
    src.add_rule("priced(S) :- holds(S, price, _)")
    src.add_rule("gone(S) :- holds(S, x, _)")
    src.remove_rule("gone(S) :- holds(S, x, _)")
    src.retract(f.id, reason="typo")
    out = tmp_path / "e.jsonl"
    n = src.export_jsonl(out)
    kinds = {json.loads(line)["kind"] for line in out.read_text().splitlines()}
    assert {"fact", "retract", "rule", "rule_removed", "outcome", "prior"} <= kinds
    dst = Memory(journal_url)
    assert dst.import_jsonl(out) == n
    assert _state(dst) == _state(src)
    assert [(r.source, r.n) for r in dst.reliability()] == \
        [(r.source, r.n) for r in src.reliability()]
    before = _state(dst)
    events = dst.verify().events
    dst.import_jsonl(out)  # again: nothing changes
    assert _state(dst) == before and dst.verify().events == events
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text() + '{"kind": "fact", "recorded_at": 1, "body": {}}\n')
    fresh = Memory()
    with pytest.raises(InvalidFact, match="line"):
        fresh.import_jsonl(bad)
    assert len(fresh) == 0 and fresh.rules() == []  # all or nothing
    for m in (src, dst, fresh):
        m.close()


# ---------------------------------------------------------------- 13, 14. bad input

def test_13_bad_input_raises_the_family_and_changes_nothing(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m.db")
    mem.add("acme", "price", 1, source="s")
    deep: object = [1]
    for _ in range(3000):
        deep = [deep]
    calls = [
        lambda: mem.add("a", "b", deep, source="s"),
        lambda: mem.add("a", "b", 1, source="s", valid_from="0001-01-01T00:00:00+14:00"),
        lambda: mem.current(["a"], "x"),  # type: ignore[arg-type]
        lambda: mem.import_jsonl(tmp_path / "missing.jsonl"),
        lambda: mem.add("a", "b", 1, source="s", supersedes="none"),
        lambda: mem.add("a", "b", (1, 2), source="s"),
        lambda: mem.add("a", "b", {1: 2}, source="s"),
        lambda: mem.add("a", "b", 1, source="s", meta={"k": (1,)}),
    ]
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
    calls.append(lambda: mem.import_jsonl(tmp_path / "bin.jsonl"))
    for call in calls:
        with pytest.raises(TruthkeeperError):
            call()
    assert len(mem) == 1 and mem.verify().ok
    mem.close()


def test_a_refused_add_names_the_field_not_a_batch_it_did_not_pass() -> None:
    """``add`` writes a batch of one; its refusal used to begin ``facts[0]:``, a list the
    caller never passed (in a scope's view too). A batch's refusal still names its item."""
    mem = Memory()
    for who in (mem, mem.scope("user:ana")):
        with pytest.raises(InvalidFact) as err:
            who.add("ana", "city", "Lisbon", source="s", tier="tool")
        assert str(err.value).startswith("tier must be one of"), err.value
        with pytest.raises(InvalidFact, match=r"^the attribute '\$erased' is reserved"):
            who.add("ana", "$erased", 1, source="s")
        with pytest.raises(InvalidFact, match=r"^facts\[1\]: tier must be one of"):
            who.add_many([{"subject": "a", "attribute": "b", "value": 1, "source": "s"},
                          {"subject": "a", "attribute": "c", "value": 1, "source": "s",
                           "tier": "tool"}])
    assert len(mem) == 0 and mem.scope("user:ana").add("a", "b", 1, source="s").scope == \
        "user:ana"


def test_a_journal_of_another_format_is_refused(tmp_path: Path) -> None:
    """SQLite's user_version carries the journal format: a later or an earlier one is
    refused with what to do, and the file is left as it was."""
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.add("ana", "city", "Lisbon", source="a", valid_from=T(1))
    for version, what in ((4, "later truthkeeper"), (1, "earlier truthkeeper")):
        con = sqlite3.connect(path)
        con.execute(f"PRAGMA user_version={version}")
        con.close()
        before = path.read_bytes()
        for readonly in (False, True):
            with pytest.raises(JournalError, match=what):
                Memory(path, readonly=readonly)
        assert path.read_bytes() == before
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version=2")  # format 2 (before end and declare events)
    con.close()
    with Memory(path, readonly=True) as ro:  # read as it is, and left as it is
        assert ro.current("ana", "city").value == "Lisbon"
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
    with Memory(path) as mem:  # opened for writing: upgraded in place
        assert mem.current("ana", "city").value == "Lisbon" and mem.verify().ok
        mem.end(mem.history("ana", "city")[0].id, valid_to=T(2))
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3
    with Memory(path) as again:
        assert again.current("ana", "city").status == "unknown" and again.verify().ok


def test_13_files_that_are_not_journals_are_refused(tmp_path: Path) -> None:
    app = tmp_path / "app.db"
    con = sqlite3.connect(app)
    con.execute("CREATE TABLE users(name)")
    con.commit()
    con.close()
    with pytest.raises(JournalError, match="not a truthkeeper journal"):
        Memory(app)
    con = sqlite3.connect(app)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["users"]
    con.close()
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        for i in range(50):
            mem.add("a", "b", i, source="s", text="x" * 2000)
    half = tmp_path / "half.db"
    half.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    for ro in (False, True):
        with pytest.raises(JournalError):
            Memory(half, readonly=ro)


def test_14_names_spelled_none_stay_names() -> None:
    mem = Memory(policy="temporal")
    with pytest.raises(UnknownFact):
        mem.add("a", "b", 1, source="s", supersedes="none")
    a = mem.add("a", "b", 1, source="none", valid_from=T(1))
    b = mem.add("a", "b", 2, source="none", valid_from=T(1))  # same source, same time
    assert [f.id for f in mem.current("a", "b").heads] == [b.id] != [a.id]


# ---------------------------------------------------------------- 15. audit

def test_15_the_audit_log_survives_a_reopen(journal_url: str) -> None:
    db = journal_url
    with Memory(db, trusted_keys=[OWNER.public_key]) as mem:
        with pytest.raises(TierNotAuthorized):
            mem.add("acme", "invoice_total", 1, source="user:ana", tier="human")
        with pytest.raises(UnsafeRule):
            mem.add_rule("p :- halt")
    with Memory(db) as again:
        kinds = [(e.kind, e.details.get("error")) for e in again.audit()]
        assert ("rejected_write", "TierNotAuthorized") in kinds
        assert ("rejected_write", "UnsafeRule") in kinds


def test_15_the_audit_log_is_bounded_in_memory() -> None:
    from truthkeeper.audit import AuditLog

    log = AuditLog(limit=100)
    for i in range(1000):
        log.rejected(InvalidFact(str(i)), {"n": i})
    entries = log.entries()
    assert len(entries) == 100 and entries[-1].details["n"] == 999


# ---------------------------------------------------------------- hostile values, any write

hostile = st.one_of(
    hostile_values,
    st.sampled_from(["", " ", "x'), halt. %", "f(" * 200, "@(true)", "none", "\x00",
                     "2026-02-30", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
                     "2026-01-01T00:00:00", "Z" * 600]),
    st.booleans(), st.datetimes(timezones=st.none() | st.timezones()),
)


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["add", "add", "retract", "rule", "outcome",
                                               "many", "filter"]),
                              hostile, hostile, hostile), min_size=1, max_size=6))
def test_hostile_values_on_every_write_raise_the_family_and_replay_equal(ops) -> None:
    import shutil
    import tempfile

    from truthkeeper import Candidate

    d = tempfile.mkdtemp(prefix="tk-hostile-")
    try:
        db = Path(d) / "m.db"
        mem = Memory(db)
        mem.add("acme", "price", 1, source="s")
        for op, x, y, z in ops:
            try:
                if op == "add":
                    mem.add(x, "a", y, source="s", valid_from=z)
                elif op == "retract":
                    mem.retract(x, reason=y)
                elif op == "rule":
                    mem.add_rule(x)
                elif op == "outcome":
                    mem.record_source_outcome(x, correct=True, tier=y)
                elif op == "many":
                    mem.add_many([{"subject": "s", "attribute": "a", "value": x,
                                   "source": "s", "meta": y, "text": z}])
                else:
                    mem.filter([Candidate("s", "a", x, z), Candidate(y, "a", 1, T(1))])
            except TruthkeeperError:
                pass
        live = _state(mem)
        assert mem.verify().ok
        mem.close()
        with Memory(db) as again:
            assert _state(again) == live
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- 16. scale within a slot

def _inferences(fn: object) -> int:
    """Prolog inferences one call costs: a count, not a timing (machines are noisy)."""
    from truthkeeper.logic import bridge

    before = bridge.ask("statistics(inferences, I)", {})["I"]
    fn()  # type: ignore[operator]
    return int(bridge.ask("statistics(inferences, I)", {})["I"]) - int(before)


def _slot(n: int) -> tuple[Memory, list[str]]:
    from datetime import timedelta

    from truthkeeper.values import parse_time

    base = parse_time(T(1), "t")
    mem = Memory(protected_tiers=())
    mem.add_many([{"subject": "acme", "attribute": "price", "value": i % 7,
                   "source": "a" if i % 3 else "v", "tier": "agent" if i % 3 else "verified",
                   "valid_from": base + timedelta(seconds=i)} for i in range(n)])
    return mem, [f.id for f in mem.history("acme", "price")]


def test_16_a_write_into_a_big_slot_costs_what_it_costs_in_a_small_one() -> None:
    from datetime import timedelta

    from truthkeeper.values import parse_time

    costs = {}
    for n in (500, 8000):
        mem, ids = _slot(n)
        late = parse_time(T(1), "t") + timedelta(days=1)
        add = _inferences(lambda m=mem, t=late: m.add("acme", "price", 3, source="a",
                                                      valid_from=t))
        retract = _inferences(lambda m=mem, i=ids: m.retract(i[len(i) // 2], reason="r"))
        as_of = _inferences(lambda m=mem: m.as_of("acme", "price", valid_at=T(1)))
        costs[n] = (add, retract, as_of)
        mem.close()
    (add_s, retract_s, as_of_s), (add_b, retract_b, as_of_b) = costs[500], costs[8000]
    assert add_b <= 2 * add_s, costs  # 16 times the facts: the same cost per write
    assert retract_b <= 2 * retract_s, costs
    assert as_of_b <= 2 * 16 * as_of_s, costs  # linear in the slot, not quadratic


def test_16_one_sources_corrections_at_one_time_cost_what_they_are() -> None:
    """An agent that records a status many times a day with a date for its valid_from:
    one source, one valid time, each write a correction of the one before. The slot's
    frontier holds them all (tied in time), and each was looked at against every other
    for a record of another source: n^2, a first read of 4,000 took 5.4 s."""
    costs = {}
    for n in (500, 2000):
        mem = Memory()
        mem.add_many([{"subject": "job", "attribute": "status", "value": f"s{i % (n // 2)}",
                       "source": "agent", "valid_from": T(1)} for i in range(n)])
        costs[n] = _inferences(lambda m=mem: m.current("job", "status"))
        assert mem.current("job", "status").value == f"s{(n - 1) % (n // 2)}"  # the last
        mem.close()
    assert costs[2000] <= 2 * 4 * costs[500], costs  # linear in the facts, not n^2


def test_16_a_poll_on_one_sets_member_costs_what_its_claims_do() -> None:
    """Many sources saying at one time whether "cat" is one of a set's members: the
    member's frontier holds them all (tied), and a set's records were never grouped (a
    list might hold two members), so each was checked against every other: n^2, 3.1 s at
    2,000. A list of one member's records is grouped as a slot's are."""
    costs = {}
    for n in (500, 2000):
        mem = Memory()
        mem.declare("pets", cardinality="many")
        mem.add_many([{"subject": "ana", "attribute": "pets", "value": "cat",
                       "present": bool(i % 2), "source": f"s{i}", "valid_from": T(1)}
                      for i in range(n)])
        costs[n] = _inferences(lambda m=mem: m._store.resolve("ana", "pets"))
        assert len(mem.current("ana", "pets").heads) == n  # none makes another obsolete
        mem.close()
    assert costs[2000] <= 2 * 4 * costs[500], costs


def test_16_a_filter_of_a_logs_ended_values_costs_what_its_candidates_do() -> None:
    """Candidates restating the values of a slot of facts that all ended (a log): each
    looked through the slot for the fact of its value, and each named fact's row swept
    the slot for its status: n^2 (8,000: 2.4 s a warm call)."""
    costs = {}
    for n in (500, 2000):
        mem = Memory()
        mem.add_many([{"subject": "log", "attribute": "state", "value": f"s{i}",
                       "source": f"a{i}", "valid_from": T(1), "valid_to": T(2)}
                      for i in range(n)])
        cands = [Candidate("log", "state", f"s{i}", T(1)) for i in range(n)]
        assert mem.filter(cands).kept == ()  # each restates a value that ended
        costs[n] = _inferences(lambda m=mem, c=cands: m.filter(c))
        mem.close()
    assert costs[2000] <= 2 * 4 * costs[500], costs


def _view_poll(n: int) -> tuple[Memory, Memory, list[str]]:
    """A poll of ``n`` claims tied in time in the shared layer and ``n`` in a scope."""
    mem = Memory()
    shared = mem.add_many([{"subject": "poll", "attribute": "v", "value": i % 5,
                            "source": f"doc{i}", "valid_from": T(1)} for i in range(n)])
    view = mem.scope("user:ana")
    view.add_many([{"subject": "poll", "attribute": "v", "value": i % 5,
                    "source": f"mine{i}", "valid_from": T(1)} for i in range(n)])
    return mem, view, [f.id for f in shared]


def test_16_a_views_filter_of_a_poll_in_both_layers_costs_what_its_claims_do() -> None:
    """A poll (claims tied in time) in a scope and in the shared layer: each claim is a head
    of the view, and each re-derived the union's heads (against every record of the other
    layer's front, all tied): n^2 for each id, a filter of 4,000 ids ran for hours."""
    costs = {}
    for n in (40, 160):
        mem, view, ids = _view_poll(n)
        assert len(view.current("poll", "v").heads) == 2 * n  # every claim a head
        costs[n] = _inferences(lambda v=view, i=ids: v.filter(i))
        assert len(view.filter(ids).kept) == n
        mem.close()
    assert costs[160] <= 2 * 4 * costs[40], costs  # linear in the claims, not n^3


def test_16_a_views_reads_of_one_fact_derive_the_union_once_until_it_changes() -> None:
    """``get`` in a scope's view gives a fact's status in the union of the layers, which
    no layer keeps: each ``get`` of a poll's claims derived its hundreds of heads again."""
    mem, view, ids = _view_poll(200)
    one = _inferences(lambda: view.get(ids[0]))
    assert view.get(ids[0]).status == "head"
    many = _inferences(lambda: [view.get(i) for i in ids[:50]])
    assert many <= 2 * one, (one, many)  # one derivation, not 50
    view.add("poll", "v", 9, source="me", valid_from=T(2))  # a write: derived anew
    assert {view.get(i).status for i in ids[:50]} == {"superseded"}
    assert mem.get(ids[0]).status == "head"  # the shared layer's own answer
    mem.close()


def test_16_a_confirmed_views_filter_of_a_poll_costs_what_its_claims_do() -> None:
    """A confirmation in a scope's view over a poll: each claim was checked against the
    poll's tied heads before the confirmation (in the union's heads, and in the scope's
    front, which no group could stand for once it held a confirmation): n^2."""
    costs = {}
    for n in (40, 160):
        mem, view, ids = _view_poll(n)
        view.confirm("poll", "v", 3)
        assert view.current("poll", "v").value == 3
        costs[n] = _inferences(lambda v=view, i=ids: v.filter(i))
        kept = view.filter(ids).kept
        assert len(kept) == n // 5 and {mem.get(k).value for k in kept} == {3}
        mem.close()
    assert costs[160] <= 2 * 4 * costs[40], costs  # linear in the claims


def test_16_a_views_filter_of_a_sets_claims_asks_the_claims_about_their_member() -> None:
    """A set whose members come and go, in a scope and in the shared layer: each claim's
    dominator was sought among every head of the set (of every member) and every fact of
    the other layer, though claims about two members never dominate one another."""
    costs = {}
    for n in (200, 800):
        mem = Memory()
        mem.declare("tags", cardinality="many")
        k = n // 10  # members: ten claims about each in each layer, whatever n
        mem.add_many([{"subject": "c", "attribute": "tags", "value": f"t{i % k}",
                       "source": f"doc{i}", "valid_from": T(1 + i % 20),
                       "present": (i // k) % 2 == 0} for i in range(n)])
        view = mem.scope("user:ana")
        own = view.add_many([{"subject": "c", "attribute": "tags", "value": f"t{i % k}",
                              "source": f"me{i}", "valid_from": T(2 + i % 20),
                              "present": (i // (3 * k)) % 2 == 0} for i in range(n)])
        heads = {h.id for h in view.current("c", "tags").heads}
        ids = [f.id for f in own]
        costs[n] = _inferences(lambda v=view, i=ids: v.filter(i))
        assert set(view.filter(ids).kept) == heads & set(ids)  # the view's heads, kept
        mem.close()
    assert costs[800] <= 2 * 4 * costs[200], costs  # linear in the claims


# ---------------------------------------------------------------- sandboxes: memory and time

_GROWERS = {
    "doubling an atom": ["g(X) :- holds(_, big, X)", "g(Y) :- g(X), atom_concat(X, X, Y)"],
    "appending to an atom": ["g(X) :- holds(_, big, X)", "g(Y) :- g(X), atom_concat(X, a, Y)"],
    "every substring": ["s(S) :- holds(_, big, X), sub_atom(X, _, _, _, S)"],
    "repeated squaring": ["h(X) :- holds(_, big, _), X = 3", "h(Y) :- h(X), Y is X * X"],
    "a huge power": ["p(Y) :- holds(_, big, _), Y is 7 ** 100000000"],
    "long lists": ["l(N) :- holds(_, big, _), between(1, 4000, N), length(_L, N)"],
    "lists without end": ["l(N) :- holds(_, big, _), length(L, N), L == [a]"],
    "a loop in arithmetic": ["w(X) :- holds(_, big, _), between(1, inf, X), X < 0"],
}


@pytest.mark.parametrize("name", sorted(_GROWERS))
def test_a_rule_that_grows_memory_or_time_is_refused_and_the_process_lives(name: str) -> None:
    r = _run(f"""
        import time
        from truthkeeper import Memory, RuleEvaluationError
        mem, other = Memory(), Memory()
        other.add("x", "a", 1, source="s")
        mem.add("a", "big", "x" * 60000, source="s")
        t = time.monotonic()
        try:
            for text in {_GROWERS[name]!r}:
                mem.add_rule(text)
            print("accepted")
        except RuleEvaluationError as e:
            print("refused")
        print(round(time.monotonic() - t), other.current("x", "a").value)
    """, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout.split()
    assert out[0] == "refused" and int(out[1]) <= 12 and out[2] == "1"


def test_a_custom_policy_that_grows_atoms_is_refused_not_a_crash() -> None:
    r = _run("""
        from truthkeeper import Memory, Policy, RuleEvaluationError, TruthkeeperError
        grow = Policy.from_prolog("test_grower", '''
            dominates(F, G) :- value(F, V), atom_concat(V, V, A), atom_concat(A, A, B),
                atom_concat(B, B, C), atom_concat(C, C, D), atom_concat(D, D, E),
                atom_concat(E, E, X), atom_concat(X, X, Y), atom_concat(Y, Y, Z),
                atom_length(Z, N), N > 0, newer(F, G).''')
        mem, other = Memory(policy=grow), Memory()
        other.add("x", "a", 1, source="s")
        mem.add("a", "v", "x" * 60000, source="s", valid_from="2026-01-01")
        try:
            mem.add("a", "v", "y" * 60000, source="s", valid_from="2026-02-01")
            print("accepted")
        except TruthkeeperError as e:
            print("refused", "evaluation_memory" in str(e))
        print(len(mem), other.current("x", "a").value)
    """, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[:2] == ["refused True", "1 1"]


@pytest.mark.parametrize("lazy", [True, False])
def test_several_keys_offered_at_creation_are_the_first_keys(tmp_path: Path,
                                                             lazy: bool) -> None:
    """Memory(trusted_keys=[a, b]) on a new journal trusts both (it raised
    TierNotAuthorized: the second key was taken for an unsigned addition); the journal
    holds them as one event, and reopening, verifying and importing agree."""
    a, b = (Signer(Ed25519PrivateKey.generate()) for _ in range(2))
    path = tmp_path / "m.db"
    with Memory(path, trusted_keys=[a.public_key, b.public_key]) as mem:
        for signer, value in ((a, 1), (b, 2)):
            mem.add_many([signer.sign({"subject": "acme", "attribute": "total", "value": value,
                                       "source": "user:ana", "tier": "human",
                                       "valid_from": T(value)})])
        assert mem.verify().ok
        mem.export_jsonl(tmp_path / "m.jsonl")
    with Memory(path, trusted_keys=[b.public_key], lazy=lazy) as again:
        assert again.current("acme", "total").value == 2 and again.verify().ok
    copy = Memory()
    copy.import_jsonl(tmp_path / "m.jsonl")
    assert copy.current("acme", "total").value == 2
    # only the first key event may add several keys: later it is refused, signed or not
    c = Signer(Ed25519PrivateKey.generate())
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"kind": "key", "recorded_at": T(9), "body": {
        "key": c.public_key_hex, "action": "added", "also": [c.public_key_hex],
        "signature": a.sign_action("key", {"key": c.public_key_hex, "action": "added"})}})
        + "\n")
    with Memory(path) as mem, pytest.raises(InvalidFact, match="first key event"):
        mem.import_jsonl(more)


def test_a_tier_above_a_protected_one_is_protected_and_an_unsigned_confirm_goes_below() -> None:
    """protected_tiers=("verified",) protects human too (it ranks above); which tiers need
    a signature is Prolog's answer alone, so an unsigned confirm writes at the highest tier
    that needs none (it was written at human, and refused)."""
    from truthkeeper.logic import bridge

    with Memory(protected_tiers=("verified",)) as mem:
        with pytest.raises(TierNotAuthorized):
            mem.add("acme", "ceo", "Ana", source="user:ana", tier="human")
        mem.add("acme", "ceo", "Ana", source="a", tier="agent")
        mem.add("acme", "ceo", "Bo", source="b", tier="agent")
        assert mem.confirm("acme", "ceo", "Bo") == 1
        head = mem.current("acme", "ceo").heads[0]
        assert (head.value, head.tier) == ("Bo", "agent")
        asked = bridge.ask("tk_guarded_tiers(M, Ts)", {"M": mem._store.h})["Ts"]
        assert sorted(asked) == ["human", "verified"]


def test_files_that_cannot_be_read_or_written_raise_journal_errors(tmp_path) -> None:
    """Exporting to a folder that does not exist, or opening a journal that is not there,
    is a JournalError (a TruthkeeperError), not a bare OSError; nothing is created."""
    mem = Memory()
    mem.add("ana", "city", "Lisbon", source="s")
    with pytest.raises(JournalError, match="cannot write"):
        mem.export_jsonl(tmp_path / "missing" / "x.jsonl")
    with pytest.raises(JournalError, match="no memory file"):
        Memory.open(str(tmp_path / "none.db"))
    assert list(tmp_path.iterdir()) == []


def test_a_rule_that_fails_in_one_memory_leaves_the_others_tables() -> None:
    """A rule error abandons the failing memory's tables only: another memory's beliefs,
    tabled already, are not thrown away (before, every memory's tables were)."""
    from truthkeeper.logic import bridge

    other = Memory()
    other.add_rule("local(X) :- holds(X, city, lisbon)")
    other.add("ana", "city", "Lisbon", source="s")
    assert [b.text for b in other.beliefs()] == ["local(ana)"]

    def tabled() -> int:
        return int(bridge.ask("aggregate_all(count, (current_table(tms:_V, _), "
                              "_V = belief(M, _, _)), N)", {"M": other._store.h})["N"])

    before = tabled()
    mem = Memory()
    mem.add_rule("late(X) :- holds(X, hours, H), R is 1 / H, R > 0")  # raises only with data
    mem.add("ana", "hours", 0, source="s")
    with pytest.raises(RuleEvaluationError):
        mem.beliefs()
    assert before > 0 and tabled() == before
    assert [b.text for b in other.beliefs()] == ["local(ana)"]


def test_the_caches_of_parsed_times_and_keys_stay_bounded() -> None:
    """A bulk load of distinct times and subjects keeps at most a bounded number of them
    parsed (they were kept up to 100,000 each: about 35 MB), and answers stay right."""
    from truthkeeper import keys, validation

    mem = Memory()
    mem.add_many([{"subject": f"s{i}", "attribute": "a", "value": i, "source": "s",
                   "valid_from": f"2026-01-01T00:{i // 3600 % 60:02d}:{i // 60 % 60:02d}."
                                 f"{i % 60:02d}0000Z"} for i in range(20_000)])
    assert len(validation._TIMES) <= validation.CACHED
    assert len(validation._TIMES_US) <= validation.CACHED
    assert len(keys._KEYS) <= 16_384
    f = mem.history("s1", "a")[0]
    assert f.valid_from == validation.parse_time("2026-01-01T00:00:00.010000Z", "t")


def test_answers_that_hold_lists_do_not_grow_the_process() -> None:
    """janus never frees a list it makes inside a tuple: learning from agreement (each
    slot's claims), what_if, beliefs, why, filter with a kappa and every refused write
    held such answers, so each call left its answer behind (about 360 objects a
    ``learn_from_agreement`` of 120 slots, 6 a ``what_if``). Called again and again, they
    keep the number of live objects flat."""
    import gc

    from truthkeeper import Candidate

    mem = Memory(categories={"colour": ["red", "blue"]})
    for i in range(40):
        mem.add(f"s{i}", "city", "Lisbon", source="a", valid_from="2026-01-01")
        mem.add(f"s{i}", "city", "Porto", source="b", valid_from="2026-01-01")
        mem.add(f"s{i}", "colour", "red", source="a", valid_from="2026-01-01")
        mem.add(f"s{i}", "colour", "blue", source="b", valid_from="2026-01-01")
    mem.add("z", "owner", "ana", source="a")
    mem.add_rule("owned(X) :- holds(X, owner, _)")
    calls = [
        mem.learn_from_agreement,
        lambda: mem.what_if(add=[{"subject": "z", "attribute": "owner", "value": "bo",
                                  "source": "b"}]),
        mem.beliefs,
        lambda: mem.why("owned(z)"),
        lambda: mem.filter([Candidate("s1", "city", "Braga", "2027-01-01")],
                           kappa=lambda x, y: x != y),
    ]

    def refused() -> None:
        with pytest.raises(InvalidFact):
            mem.add("z", "owner", "x", source="a", valid_from="not a time")

    calls.append(refused)

    def live() -> int:
        gc.collect()
        return len(gc.get_objects())

    for call in calls:
        call()
        call()
        before = live()
        for _ in range(30):
            call()
        assert live() - before < 60, calls.index(call)


def test_an_integer_too_long_to_print_is_refused_with_the_family_everywhere() -> None:
    """Python refuses to print an integer of more than 4,300 digits (ValueError), and
    error messages showed the offending input: such an integer as a meta key, a rule's
    text, ``why``'s argument or an erasure's ids escaped as a ValueError. Every entry
    point now refuses it with the family, and nothing changes."""
    from truthkeeper import Candidate

    big = 10**5000
    mem = Memory()
    fact = mem.add("acme", "price", 1, source="s")
    calls = [
        lambda: mem.add("s", "a", big, source="s"),
        lambda: mem.add("s", "a", 1, source="s", meta={big: 1}),
        lambda: mem.add("s", "a", 1, source="s", meta={"k": [big]}),
        lambda: mem.add("s", "a", 1, source="s", valid_from=big),
        lambda: mem.add("s", "a", 1, source="s", tier=big),
        lambda: mem.add_rule(big),
        lambda: mem.why(big),
        lambda: mem.erase(big),
        lambda: mem.retract(fact.id, reason=big),
        lambda: mem.end(fact.id, valid_to=big),
        lambda: mem.record_source_outcome("s", correct=True, tier=big),
        lambda: mem.filter([Candidate("s", "a", 1, big)]),
        lambda: mem.filter([big]),
    ]
    for call in calls:
        with pytest.raises(TruthkeeperError) as info:
            call()
        assert len(str(info.value)) < 400  # the integer is named by its size
    assert len(mem) == 1 and mem.verify().ok
    from truthkeeper.schema import boundary_time  # the MCP server's dates: epoch numbers too

    for when in (big, -big, "9" * 5000):
        with pytest.raises(TruthkeeperError):
            boundary_time(when, "valid_from")


def test_paths_of_the_wrong_kind_are_refused_with_the_family(tmp_path: Path) -> None:
    """A NUL in a file name, a number or None where a file is wanted raised ValueError or
    TypeError; bytes raised a TypeError about str; a journal in a folder that does not
    exist was named by the temporary file it is made under. Now: the family, naming the
    path asked for; bytes are a file name in the file system's encoding."""
    from truthkeeper import InvalidFact, JournalError

    for bad in ("a\x00b", 12, 1.5, ["x.db"]):
        with pytest.raises(InvalidFact, match="path"):
            Memory(bad)  # type: ignore[arg-type]
    missing = tmp_path / "no" / "such" / "m.db"
    with pytest.raises(JournalError, match="cannot create journal") as info:
        Memory(missing)
    assert ".new" not in str(info.value) and "does not exist" in str(info.value)
    made = Memory(os.fsencode(tmp_path / "b.db"))  # type: ignore[arg-type]
    made.add("a", "x", 1, source="s")
    assert made.path == str(tmp_path / "b.db")
    for bad in ("a\x00b", 12, None):
        with pytest.raises(InvalidFact, match="path"):
            made.export_jsonl(bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidFact, match="path"):
            made.import_jsonl(bad)  # type: ignore[arg-type]
    out = tmp_path / "e.jsonl"
    assert made.export_jsonl(os.fsencode(out)) == 1  # type: ignore[arg-type]
    assert Memory().import_jsonl(os.fsencode(out)) == 1  # type: ignore[arg-type]
    made.close()


def test_a_folder_or_a_file_taken_for_one_is_named_as_such(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder given as a memory's file was refused as "unable to open database file"
    (the CLI said "disk I/O error"); a journal under a file taken for a folder was said to
    be in a folder that "does not exist". Both now say what the path is."""
    from truthkeeper import JournalError
    from truthkeeper.cli import main

    for readonly in (False, True):
        with pytest.raises(JournalError, match="is a folder, not a journal file"):
            Memory(tmp_path, readonly=readonly)
    (tmp_path / "f").write_text("x")
    with pytest.raises(JournalError, match="'.*f' is a file, not a folder"):
        Memory(tmp_path / "f" / "m.db")
    assert sorted(os.listdir(tmp_path)) == ["f"]  # nothing made
    for command in ("verify", "inspect", "query"):
        assert main([command, str(tmp_path), *(["x"] if command == "query" else [])]) == 2
        assert "is a folder, not a journal file" in capsys.readouterr().err


_OWNER = Signer(Ed25519PrivateKey.generate())


@settings(max_examples=120, deadline=None)
@given(bad=hostile_values)
def test_a_signature_or_a_checkpoint_of_the_wrong_kind_is_refused_and_changes_nothing(
        bad: object) -> None:
    """``end``, ``retract``, ``erase``, ``add_key`` and ``revoke_key`` raised TypeError for a
    signature that is not a dict of texts (``dict(signature)``, or sorting its keys to
    write it), ``checkpoint(None)`` an AttributeError, and ``Memory(trusted_keys=5)`` a
    TypeError. The family now, and nothing changes."""
    mem = Memory(trusted_keys=[_OWNER.public_key])
    [f] = mem.add_many([_OWNER.sign({"subject": "ana", "attribute": "city", "value": "Lisbon",
                                     "source": "user:ana", "tier": "human",
                                     "valid_from": "2026-01-01"})])  # each call needs one
    for call in (lambda: mem.end(f.id, signature=bad), lambda: mem.checkpoint(bad),
                 lambda: mem.retract(f.id, reason="r", signature=bad),
                 lambda: mem.erase([f.id], signature=bad),
                 lambda: mem.add_key(_OWNER.public_key, signature=bad),
                 lambda: mem.revoke_key(_OWNER.public_key, signature=bad),
                 lambda: mem.checkpoint({"seq": bad, "hash": bad, "signature": bad})):
        with contextlib.suppress(TruthkeeperError):
            call()
    assert mem.current("ana", "city").value == "Lisbon" and mem.verify().ok
    if isinstance(bad, (str, bytes)) or not hasattr(bad, "__iter__") or list(bad):
        with pytest.raises(TruthkeeperError):  # (no keys at all is a memory that trusts none)
            Memory(trusted_keys=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("journal", [(0,), "memory.db", 5, object()])
def test_a_journal_that_is_not_one_is_refused_with_the_family(journal: object) -> None:
    """``Memory(journal=...)`` with something that is not a Journal raised AttributeError
    (while closing what it had made)."""
    with pytest.raises(JournalError, match="journal must be a truthkeeper Journal"):
        Memory(journal=journal)  # type: ignore[arg-type]
    assert Memory().add("a", "x", 1, source="s").value == 1  # the process goes on


def _calls(f: Fact) -> dict[str, dict[str, object]]:
    """Each public call with arguments it takes, to put a hostile value in one at a time."""
    slot = {"subject": "ana", "attribute": "city"}
    return {
        "add": {**slot, "value": "Faro", "source": "crm"}, "declare": {"attribute": "tags"},
        "end": {"fact_id": f.id}, "retract": {"fact_id": f.id, "reason": "r"},
        "add_rule": {"text": "p(S) :- holds(S, city, lisbon)"},
        "remove_rule": {"text": "p(S) :- holds(S, city, lisbon)"},
        "record_outcome": {"fact_id": f.id, "correct": True},
        "record_source_outcome": {"source": "crm", "correct": True},
        "confirm": {**slot, "value": "Lisbon"}, "scope": {"name": "user:x"}, "slots": {},
        "about": {"subject": "ana"}, "erase": {"fact_ids": [f.id]}, "get": {"fact_id": f.id},
        "superseded_by": {"fact_id": f.id}, "current": slot, "history": slot, "as_of": slot,
        "filter": {"items": [f.id]}, "why": {"item": f.id}, "what_if": {},
        "decide": slot, "audit": {}, "verify": {},
    }


@settings(max_examples=25, deadline=None)
@given(bad=hostile_values)
def test_every_public_call_refuses_a_hostile_argument_with_the_family(bad: object) -> None:
    """One hostile value in one argument of a public call at a time: the call answers or
    raises from the family (a signature whose keys are not texts raised TypeError from
    ``add``, ``filter(None)`` and ``what_if(add=None)`` TypeError, ``verify(checkpoint="")``
    AttributeError)."""
    import inspect

    mem = Memory()
    mem.declare("tags", cardinality="many")
    f = mem.add("ana", "city", "Lisbon", source="crm", valid_from="2026-01-01")
    for name, args in _calls(f).items():
        call = getattr(mem, name)
        for p in inspect.signature(call).parameters.values():
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                with contextlib.suppress(TruthkeeperError):
                    call(**{**args, p.name: bad})

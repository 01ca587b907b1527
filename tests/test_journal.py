"""The durable journal: replay, append-only, tamper evidence, refresh, export/import, faults."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from truthkeeper import (
    InvalidFact,
    JournalCorrupt,
    JournalError,
    Memory,
    PolicyError,
    Signer,
    TierNotAuthorized,
    UnsafeRule,
)

T = "2026-11-{:02d}T10:00:00Z".format


def _state(mem: Memory, slots) -> dict:
    return {
        "heads": {s: sorted(f.id for f in mem.current(*s).heads) for s in slots},
        "history": {s: [(f.id, f.status) for f in mem.history(*s)] for s in slots},
        "as_of": {s: mem.as_of(*s, valid_at=T(5)).value for s in slots},
        "beliefs": [str(b) for b in mem.beliefs()],
    }


def test_reopen_replays_everything(journal_url: str) -> None:
    db = journal_url
    slots = [("acme", "price"), ("ana", "location")]
    with Memory(db) as mem:
        mem.add_rule("remote(U) :- holds(U, location, L), L \\== office")
        a = mem.add("acme", "price", 1, source="s", valid_from=T(1))
        mem.add("acme", "price", 2, source="s", valid_from=T(6), supersedes=None)
        mem.add_many([{"subject": "ana", "attribute": "location", "value": v, "source": "s",
                       "valid_from": T(d)} for v, d in (("home", 1), ("office", 3), ("cafe", 7))])
        mem.retract(a.id, reason="wrong")
        live = _state(mem, slots)
        live_known = mem.as_of("acme", "price", known_at=a.recorded_at).value
    with Memory(db) as again:
        assert _state(again, slots) == live
        assert again.as_of("acme", "price", known_at=a.recorded_at).value == live_known == 1
        assert again.verify().ok and again.verify().events == 8  # config, rule, 5 facts, retract


def test_a_batch_larger_than_the_journals_part_is_one_chain(journal_url: str) -> None:
    """A batch is chained and handed to the backend in parts (``_APPEND_PART`` events):
    one chain across the parts, every fact replayed, lazily and in full."""
    from truthkeeper.journal.base import _APPEND_PART

    n = 2 * _APPEND_PART + 7
    rows = [{"subject": f"s{i % 500}", "attribute": "a", "value": i, "source": "s",
             "valid_from": T(1 + i // 500)} for i in range(n)]
    with Memory(journal_url) as mem:
        added = mem.add_many(rows)
        assert mem.verify().ok and mem.verify().events == n + 1  # the config, the facts
        live = [mem.current(f"s{k}", "a").value for k in (0, 7, 499)]
    for lazy in (True, False):
        with Memory(journal_url, lazy=lazy) as again:
            assert [again.current(f"s{k}", "a").value for k in (0, 7, 499)] == live
            assert again.get(added[-1].id) == added[-1] and len(again) == n
            assert again.verify().ok


def test_many_openers_of_a_new_journal_at_once(tmp_path: Path) -> None:
    """Six threads open the same journal path at the same moment, 30 times: every open
    succeeds (before: 'an empty file', 'trigger already exists' or a UNIQUE failure of the
    slot index in most rounds), and the journal they share works."""
    import threading

    from truthkeeper.journal.sqlite import SqliteJournal

    for round_ in range(30):
        path = str(tmp_path / f"j{round_}.db")
        barrier, errors = threading.Barrier(6), []

        def open_it(p: str = path, b: threading.Barrier = barrier,
                    e: list[str] = errors) -> None:
            b.wait()
            try:
                SqliteJournal(p).close()
            except Exception as exc:  # noqa: BLE001 - collected, asserted below
                e.append(repr(exc))

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
    with Memory(path) as mem:
        mem.add("a", "x", 1, source="s")
    with Memory(path) as again:
        assert again.current("a", "x").value == 1 and again.verify().ok
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("j29")) == [
        "j29.db"]  # nothing left behind by the build


def test_journal_is_append_only(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        mem.add("acme", "price", 1, source="s")
    con = sqlite3.connect(db)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE events SET body = '{}' WHERE seq = 2")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM events")
    con.close()


def _tamper(db: Path, seq: int, column: str, value: object) -> None:
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute(f"UPDATE events SET {column} = ? WHERE seq = ?", (value, seq))
    con.commit()
    con.close()


def test_tampering_is_detected_and_named(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory(db) as mem:
        for i in range(5):
            mem.add("acme", "price", i, source="s", valid_from=T(i + 1))
    body = sqlite3.connect(db).execute("SELECT body FROM events WHERE seq = 4").fetchone()[0]
    _tamper(db, 4, "body", body.replace('"value":2', '"value":99'))
    with pytest.raises(JournalCorrupt, match="event 4"):
        Memory(db, lazy=False)
    with Memory(db, index_check="before-write") as lazy, \
            pytest.raises(JournalCorrupt, match="event 4"):  # lazily: when its slot is read
        lazy.current("acme", "price")
    ro = Memory(db, readonly=True, lazy=False)  # forensics: what verifies is loaded
    assert ro.corruption is not None and "event 4" in ro.corruption
    assert [f.value for f in ro.history("acme", "price")] == [0, 1]
    v = ro.verify()
    assert not v.ok and v.first_bad == 4 and "edited" in (v.reason or "")
    with pytest.raises(JournalError, match="read-only"):
        ro.add("acme", "price", 7, source="s")
    ro.close()


def test_config_mismatch_is_refused(journal_url: str) -> None:
    db = journal_url
    Memory(db).close()
    with pytest.raises(PolicyError, match="created with"):
        Memory(db, policy="temporal")


def test_refresh_sees_other_writers(journal_url: str) -> None:
    db = journal_url
    m1, m2 = Memory(db), Memory(db)
    f = m1.add("acme", "price", 1, source="s", valid_from=T(1))
    # every read first catches up with what other connections committed: no refresh, no wait
    assert m2.current("acme", "price").value == 1
    assert m2.refresh() == 0
    g = m2.add("acme", "price", 2, source="s", valid_from=T(2))  # m2 writes after catching up
    h = m1.add("acme", "price", 3, source="s", valid_from=T(3))  # m1 catches up inside its write
    assert [x.id for x in m1.history("acme", "price")] == [f.id, g.id, h.id]
    assert g.recorded_at < h.recorded_at
    m1.close()
    m2.close()


def test_export_import_roundtrip_and_bad_line(tmp_path: Path, journal_url: str) -> None:
    src = Memory()
    src.add_rule("known(S) :- holds(S, price, _)")
    a = src.add("acme", "price", 1, source="s", valid_from=T(1), meta={"k": [1]})
    src.add("acme", "price", 2, source="s", valid_from=T(2), text="price went up")
    src.retract(a.id, reason="dup")
    out = tmp_path / "x.jsonl"
    assert src.export_jsonl(out) == 4
    dst = Memory(journal_url)
    assert dst.import_jsonl(out) == 4
    assert [(f.id, f.status) for f in dst.history("acme", "price")] == \
           [(f.id, f.status) for f in src.history("acme", "price")]
    assert [str(b) for b in dst.beliefs()] == ["known(acme)"]
    bad = tmp_path / "bad.jsonl"
    lines = out.read_text().splitlines()
    lines.insert(1, json.dumps({"kind": "fact", "recorded_at": 1,
                                "body": {"subject": "", "attribute": "a", "value": 1,
                                         "source": "s", "valid_from": T(1)}}))
    bad.write_text("\n".join(lines) + "\n")
    fresh = Memory()
    with pytest.raises(InvalidFact, match="line 2"):
        fresh.import_jsonl(bad)
    assert len(fresh) == 0 and fresh.rules() == []


def test_importing_an_export_again_keeps_rules_removed_and_added_again(tmp_path: Path) -> None:
    """A rule removed, or removed and added again, imports as the export has it, once and
    again: the second import skipped the rule's additions (held already) but applied its
    removals, which failed or removed the rule the copy holds."""
    src = Memory(tmp_path / "src.db")
    src.add_rule("gone(S) :- holds(S, price, _)")
    with pytest.raises(UnsafeRule):  # audited: the copy's rule ids differ from these
        src.add_rule("gone(S) :- holds(S, price, _)")
    src.remove_rule("gone(S) :- holds(S, price, _)")
    for _ in range(2):
        src.add_rule("back(S) :- holds(S, price, _)")
        src.remove_rule("back(S) :- holds(S, price, _)")
    src.add_rule("back(S) :- holds(S, price, _)")
    src.scope("user:ana").add_rule("gone(S) :- holds(S, price, _)")
    src.scope("user:ana").remove_rule("gone(S) :- holds(S, price, _)")
    src.scope("user:ana").add_rule("gone(S) :- holds(S, price, _)")
    out = tmp_path / "x.jsonl"
    src.export_jsonl(out)
    dst = Memory()
    for _ in range(3):
        dst.import_jsonl(out)
        assert dst.rules() == src.rules() == ["back(S) :- holds(S, price, _)"]
        assert dst.scope("user:ana").rules() == src.scope("user:ana").rules() == [
            "back(S) :- holds(S, price, _)", "gone(S) :- holds(S, price, _)"]
        assert [e.kind for e in dst._ledger.journal.read()] == \
            [e.kind for e in src._ledger.journal.read() if e.kind != "audit"]


class _FailingCommit:
    """A connection wrapper whose COMMIT fails like a full or failing disk."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.fail = True

    def execute(self, sql: str, *args: object) -> object:
        if sql == "COMMIT" and self.fail:
            self.fail = False
            raise OSError(28, "No space left on device")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)


def test_failed_commit_reaches_caller_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    mem = Memory(db)
    mem.add_rule("known(S) :- holds(S, price, _)")
    a = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    before = _state(mem, [("acme", "price")])
    journal = mem._ledger.journal
    assert journal is not None
    real = journal._conn
    for write in (lambda: mem.add("acme", "price", 2, source="s", valid_from=T(2)),
                  lambda: mem.retract(a.id, reason="x"),
                  lambda: mem.add_rule("other(S) :- holds(S, price, _)")):
        journal._conn = _FailingCommit(real)  # type: ignore[assignment]
        with pytest.raises(JournalError, match="No space left"):
            write()
        assert _state(mem, [("acme", "price")]) == before and len(mem) == 1
    journal._conn = real
    b = mem.add("acme", "price", 3, source="s", valid_from=T(3))
    mem.close()
    with Memory(db) as again:
        assert [f.id for f in again.history("acme", "price")] == [a.id, b.id]
        assert again.rules() == ["known(S) :- holds(S, price, _)"]
        assert again.verify().ok


def test_a_failed_commit_takes_back_the_source_it_bound(tmp_path: Path) -> None:
    """A write whose commit fails was never acknowledged: the tier it bound a new source
    to is taken back with it, so a retry at another tier is not refused."""
    mem = Memory(tmp_path / "m.db")
    journal = mem._ledger.journal
    real = journal._conn
    journal._conn = _FailingCommit(real)  # type: ignore[assignment]
    with pytest.raises(JournalError, match="No space left"):
        mem.add("acme", "price", 1, source="crm", tier="agent")
    journal._conn = real
    assert mem.add("acme", "price", 1, source="crm", tier="verified").tier == "verified"
    mem.close()


def test_full_disk_via_page_limit(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    mem = Memory(db)
    mem.add("acme", "price", 0, source="s")
    journal = mem._ledger.journal
    assert journal is not None
    pages = journal._conn.execute("PRAGMA page_count").fetchone()[0]
    journal._conn.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(JournalError):
        mem.add_many([{"subject": "acme", "attribute": "price", "value": i, "source": "s",
                       "text": "x" * 60000} for i in range(20)])
    assert len(mem) == 1 and mem.current("acme", "price").value == 0
    journal._conn.execute("PRAGMA max_page_count=1073741823")
    mem.add("acme", "price", 5, source="s")
    assert mem.current("acme", "price").value == 5
    mem.close()


# ---------------------------------------------------------------- unforgeable tiers

OWNER = Signer(Ed25519PrivateKey.generate())
STRANGER = Signer(Ed25519PrivateKey.generate())


def _human(value: object, day: int = 1) -> dict:
    return {"subject": "acme", "attribute": "invoice_total", "value": value,
            "source": "user:ana", "tier": "human", "valid_from": T(day)}


def test_signed_human_write_accepted_and_survives_replay(journal_url: str) -> None:
    db = journal_url
    with Memory(db, trusted_keys=[OWNER.public_key_hex]) as mem:
        [f] = mem.add_many([OWNER.sign(_human(4800))])
        assert f.signature is not None and mem.current("acme", "invoice_total").value == 4800
    with Memory(db, trusted_keys=[OWNER.public_key]) as again:
        assert again.current("acme", "invoice_total").value == 4800
        assert again.verify().ok
    with pytest.raises(PolicyError, match="not one of this journal's keys"):
        Memory(db, trusted_keys=[STRANGER.public_key])  # a key is added only by a trusted one
    with Memory(db) as keyless:  # the journal keeps its keys: history still verifies
        assert keyless.current("acme", "invoice_total").value == 4800
        assert keyless.verify().ok


def _forgeries(mem: Memory, value: int) -> list[dict]:
    good = OWNER.sign(_human(value))
    mem.add_many([good])  # the genuine one is used once
    altered = {**good, "value": value + 1}
    other = OWNER.sign(_human(value + 2))
    swapped = {**_human(value + 3), "signature": other["signature"]}
    return [
        _human(value + 4),                                   # unsigned
        STRANGER.sign(_human(value + 5)),                    # untrusted key
        good,                                                # replayed nonce
        altered,                                             # altered value
        swapped,                                             # another fact's signature
        {**good, "signature": {**good["signature"], "sig": "00" * 64}},  # garbage signature
        {**OWNER.sign(_human(value + 6)), "tier": "HUMAN ", "valid_from": T(9)},  # altered time
    ]


@settings(max_examples=150)
@given(value=st.integers(0, 10**6))
def test_forged_human_writes_are_all_rejected(value: int) -> None:
    # 150 examples x 7 forgeries x 2 entry points: 2,100 forged writes per run
    with Memory(trusted_keys=[OWNER.public_key]) as mem:
        forgeries = _forgeries(mem, value)
        state = (len(mem), mem.current("acme", "invoice_total").value)
        for forged in forgeries:
            with pytest.raises(TierNotAuthorized):
                mem.add_many([forged])
            with pytest.raises(TierNotAuthorized):
                mem.add(**{k: v for k, v in forged.items() if k != "signature"},
                        signature=forged.get("signature"))
        assert (len(mem), mem.current("acme", "invoice_total").value) == state == (1, value)
        rejected = [e for e in mem.audit() if e.kind == "rejected_write"]
        assert len(rejected) == 2 * len(forgeries)
        assert all(e.details["error"] == "TierNotAuthorized" for e in rejected)


@settings(max_examples=30)
@given(data=st.data())
def test_random_byte_edits_are_detected_by_verify(tmp_path_factory, data) -> None:
    db = tmp_path_factory.mktemp("j") / "m.db"
    with Memory(db, trusted_keys=[OWNER.public_key]) as mem:
        mem.add_many([{"subject": "s", "attribute": "a", "value": i, "source": "x",
                       "valid_from": T(i + 1)} for i in range(4)])
        mem.add_many([OWNER.sign(_human(7))])
        mem.add_rule("p(S) :- holds(S, a, _)")
    con = sqlite3.connect(db)
    rows = con.execute("SELECT seq, body FROM events").fetchall()
    con.close()
    seq, body = data.draw(st.sampled_from(rows))
    column = data.draw(st.sampled_from(["body", "kind", "recorded_at", "hash"]))
    raw = {"body": body, "kind": "fact", "recorded_at": "1", "hash": "0" * 64}[column]
    pos = data.draw(st.integers(0, len(raw) - 1))
    new_char = data.draw(st.characters(codec="ascii").filter(lambda c: c != raw[pos]))
    edited = raw[:pos] + new_char + raw[pos + 1:]
    if column == "recorded_at":
        edited = int(data.draw(st.integers(2, 10**15)))
    elif column == "kind":
        edited = data.draw(st.sampled_from(["fact", "retract", "rule", "config", "x"]))
        current = sqlite3.connect(db).execute(
            "SELECT kind FROM events WHERE seq = ?", (seq,)).fetchone()[0]
        if edited == current:
            edited = edited + "!"
    _tamper(db, seq, column, edited)
    ro = Memory(db, readonly=True, trusted_keys=[OWNER.public_key])
    v = ro.verify()
    assert not v.ok and v.first_bad == seq
    ro.close()


@settings(max_examples=15)
@given(ops=st.lists(st.tuples(st.sampled_from(["add", "add", "retract", "rule"]),
                              st.sampled_from(["acme", "ana"]), st.integers(0, 3),
                              st.integers(1, 9)), min_size=1, max_size=12))
def test_reopen_equals_live_memory(new_journal, ops) -> None:
    db = new_journal()
    slots = [("acme", "price"), ("ana", "price")]
    rules = iter(["cheap(S) :- holds(S, price, P), P < 2", "known(S) :- holds(S, price, _)"])
    with Memory(db) as live:
        for kind, subject, value, day in ops:
            if kind == "add":
                live.add(subject, "price", value, source="s", valid_from=T(day))
            elif kind == "retract":
                heads = live.current(subject, "price").heads
                if heads:
                    live.retract(heads[0].id, reason="r")
            else:
                text = next(rules, None)
                if text:
                    live.add_rule(text)
        state = _state(live, slots)
    with Memory(db) as again:
        assert _state(again, slots) == state


def test_replay_in_bounded_runs_equals_the_live_memory(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay applies consecutive fact events at most ``RUN`` at a time (so a reopen never
    holds the whole journal); cutting runs anywhere, even inside one ``add_many`` batch and
    between equal-time claims, gives the state the live memory had."""
    from truthkeeper.journal import ledger

    db = tmp_path / "runs.db"
    slots = [(f"e{i}", "price") for i in range(4)]
    with Memory(db) as live:
        live.add_many({"subject": f"e{i % 4}", "attribute": "price", "value": i,
                       "source": f"s{i % 3}", "tier": "verified" if i % 3 == 0 else "agent",
                       "valid_from": T(1 + i // 6)} for i in range(40))
        live.retract(live.current("e1", "price").heads[0].id, reason="wrong")
        live.add_many({"subject": "e2", "attribute": "price", "value": v, "source": s,
                       "valid_from": T(20)} for v, s in ((7, "a"), (8, "b")))
        state = _state(live, slots)
    monkeypatch.setattr(ledger, "RUN", 3)
    with Memory(db) as again:
        assert _state(again, slots) == state
        assert again.current("e2", "price").status == "conflict"


def test_an_in_memory_journal_rolls_back_appends_and_rewritten_bodies() -> None:
    """A transaction that raises leaves an in-memory journal as it was: the events it
    appended gone, the bodies it rewrote (an erasure) back, a nested transaction's too."""
    from truthkeeper.journal.memory import MemoryJournal

    j = MemoryJournal()
    with j.transaction() as t:
        t.append_many([("fact", 1, {"n": 1}), ("fact", 2, {"n": 2})])
    before = list(j._select(0))
    with pytest.raises(RuntimeError), j.transaction() as t:
        t.erase(1, '{"n":0}')
        with j.transaction() as inner:
            inner.erase(2, '{"n":0}')
            inner.append_many([("fact", 3, {"n": 3})])
        raise RuntimeError
    assert list(j._select(0)) == before
    assert j.verify(lambda e: None).ok


@settings(max_examples=200)
@given(steps=st.lists(st.tuples(st.integers(0, 7), st.lists(st.integers(0, 40), max_size=3),
                                st.booleans()), max_size=12))
def test_an_in_memory_journal_with_compressed_bodies_reads_what_was_written(steps) -> None:
    """Bodies compressed in blocks (three to a block here) read back as written, after
    appends, rewrites (erasures) and rolled back transactions cutting into a block."""
    from unittest import mock

    from truthkeeper.journal import memory as journal_memory

    with mock.patch.object(journal_memory, "_BLOCK", 3):
        j = journal_memory.MemoryJournal()
        model: list[str] = []
        for step, (n, erase, fail) in enumerate(steps):
            kept = list(model)
            try:
                with j.transaction() as t:
                    t.append_many([("fact", len(model) + i + 1, {"n": len(model) + i, "é": step})
                                   for i in range(n)])
                    model += [f'{{"n":{len(model) + i},"é":{step}}}' for i in range(n)]
                    for seq in (s + 1 for s in erase if s < len(model)):
                        t.erase(seq, f'{{"erased":{seq}}}')
                        model[seq - 1] = f'{{"erased":{seq}}}'
                    if fail:
                        raise RuntimeError
            except RuntimeError:
                model = kept
            assert [r[3] for r in j._select(0)] == model
            assert [j._bodies[i] for i in reversed(range(len(model)))] == model[::-1]


_texts = st.text(st.characters(codec="utf-8"), max_size=12)


@settings(max_examples=300)
@given(value=st.one_of(st.integers(-10**30, 10**30), _texts, st.booleans(), st.floats(
           allow_nan=False), st.lists(st.integers(), max_size=3)),
       subject=_texts.filter(str.strip), text=st.none() | _texts,
       supersedes=st.none() | st.just("f12ab"), scope=st.none() | st.just("user:ana"),
       ended=st.booleans(), meta=st.sampled_from([{}, {"k": "é"}]),
       present=st.booleans(), salt=st.none() | st.just("00ff"))
def test_a_fact_body_written_out_directly_is_its_canonical_json(
        value, subject, text, supersedes, scope, ended, meta, present, salt) -> None:
    """The journal's text of a fact (``fact_text``'s direct path for most facts) is
    byte for byte the canonical JSON of its body, which the chain hashes."""
    from truthkeeper.journal.codec import canonical, fact_body, fact_text
    from truthkeeper.values import EPOCH, Fact, parse_time

    f = Fact(id="f0a1", subject=subject, attribute="pet \"x\"\n", value=value,
             valid_from=parse_time("2026-01-01T00:00:01.5+02:00", "t"), recorded_at=EPOCH,
             source="src\u2028", tier="agent", supersedes=supersedes,
             valid_to=parse_time("2027-01-01", "t") if ended else None, text=text,
             meta=meta, scope=scope, present=present)
    got = fact_text(f, salt)
    want = canonical(fact_body(f, salt))
    if salt is None:  # a random salt each time: compare the rest
        got, want = (json.loads(t) for t in (got, want))
        assert got.pop("salt") != want.pop("salt")
    assert got == want


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_warm_read_sees_every_other_connections_commit(tmp_path: Path) -> None:
    """A durable read asks SQLite whether another connection committed only when the
    wal-index header moved (journal/walheader.py): every commit of another connection,
    in this process or another, is still seen by the next read, however many reads of
    an unchanged journal came before; the header is read through SQLite's own descriptor
    of the -shm file, and no descriptor is left open once the memories close."""
    db = str(tmp_path / "w.db")
    before = _open_fds()
    m1, m2 = Memory(db), Memory(db)
    m1.add("acme", "price", 1, source="s", valid_from=T(1))
    assert m2._p.ledger.journal._wal.fd >= 0  # the header is read, not asked for
    for value in range(2, 12):
        for _ in range(3):  # warm reads: the header is unchanged between them
            assert m2.current("acme", "price").value == value - 1
        m1.add("acme", "price", value, source="s", valid_from=T(value))
        assert m2.current("acme", "price").value == value
    code = ("import sys; from truthkeeper import Memory; m = Memory(sys.argv[1]); "
            "m.add('acme', 'price', 99, source='s', valid_from='2026-11-30T10:00:00Z'); "
            "m.close()")
    subprocess.run([sys.executable, "-c", code, db], check=True, timeout=120)
    assert m1.current("acme", "price").value == 99
    assert m2.current("acme", "price").value == 99
    m1.close()
    m3 = Memory(db)
    m3.add("acme", "price", 100, source="s", valid_from="2026-12-01T10:00:00Z")
    m3.close()
    assert m2.current("acme", "price").value == 100
    m2.close()
    assert _open_fds() == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_closing_a_memory_keeps_the_locks_of_other_connections_on_its_file(
        tmp_path: Path) -> None:
    """An application's own SQLite connection to a journal holds a read transaction while
    a memory on the same file opens and closes in the same process: the read still holds
    the log, so another process cannot truncate it (a checkpoint reports busy). Before,
    the memory closed a descriptor of its own on the -shm file, which dropped every POSIX
    lock of the process on it: the checkpoint truncated the log under the open read."""
    import sqlite3

    db = str(tmp_path / "j.db")
    mem = Memory(db)
    mem.add("a", "x", 1, source="s")
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("BEGIN")
    assert raw.execute("SELECT count(*) FROM events").fetchone()[0] == 2
    mem.add("a", "x", 2, source="s")  # the read's snapshot is now behind the log's end
    mem.close()
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "print(c.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", code, db], check=True, timeout=60,
                         capture_output=True, text=True).stdout
    assert out.strip() == "1"  # busy: the open read keeps the log
    assert raw.execute("SELECT count(*) FROM events").fetchone()[0] == 2
    raw.execute("ROLLBACK")
    raw.close()


def test_without_a_wal_index_every_read_asks_sqlite(tmp_path: Path) -> None:
    """No -shm file (not in WAL mode, or gone) or no descriptor of it: the header reader
    answers None, which never counts as unchanged, so every version check asks SQLite
    itself; a header cut short or not initialised, or a descriptor that no longer names
    the file, is read the same way."""
    from truthkeeper.journal import walheader

    none = walheader.attach(str(tmp_path / "absent.db"))
    assert none.read() is None and not none.unchanged(none.read())
    shm = tmp_path / "x.db-shm"
    shm.write_bytes(b"\0" * 40)  # cut short
    assert walheader.attach(str(tmp_path / "x.db")).fd == -1  # nobody has it open
    fd = os.open(shm, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        cut = walheader.WalHeader((st.st_dev, st.st_ino), fd)
        assert cut.read() is None
        shm.write_bytes(b"\0" * 200)  # long enough, never initialised
        assert cut.read() is None and not cut.unchanged(cut.read())
        init = bytearray(200)
        init[12] = 1
        shm.write_bytes(bytes(init))
        assert cut.read() == bytes(init[:96])
        other = tmp_path / "other"
        other.write_bytes(bytes(init))
        wrong = walheader.WalHeader((st.st_dev, os.stat(other).st_ino), fd)
        assert wrong.read() is None  # the descriptor names another file
    finally:
        os.close(fd)


def test_the_journal_refuses_an_event_that_does_not_chain_from_its_tail(
        journal_url: str) -> None:
    """A writer chains its events from the tail it remembers (it read it, or wrote it).
    Were that ever not the journal's tail (the CI's crash test once found a link broken
    after a kill), the database itself refuses the event: the write fails with a
    JournalError, nothing is appended, the memory's state is as before and the chain
    still verifies; a memory that reads the tail again writes on."""
    from truthkeeper import JournalError

    mem = Memory(journal_url)
    first = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    events = mem.verify().events
    right = mem._p.ledger.hash
    mem._p.ledger.hash = "f" * 64  # a tail this journal does not have
    with pytest.raises(JournalError, match="must chain from its hash"):  # a link: never fast
        mem.add("acme", "price", 2, source="s", valid_from=T(2), supersedes=first.id)
    assert mem.current("acme", "price").value == 1
    mem._p.ledger.hash = right
    assert mem.verify().ok and mem.verify().events == events
    mem.add("acme", "price", 3, source="s", valid_from=T(3), supersedes=first.id)
    assert mem.verify().ok and mem.current("acme", "price").value == 3
    mem.close()


def test_an_export_holds_the_audit_entries_that_wait_for_a_write(tmp_path: Path) -> None:
    """A durable memory journals a filter's drops with its next write; an export made
    before that write left them out (the same memory exported them after any write)."""
    mem = Memory(tmp_path / "m.db")
    old = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    mem.add("acme", "price", 2, source="s", valid_from=T(2))
    assert [d.item for d in mem.filter([old.id], query="acme's price").dropped] == [old.id]
    out = tmp_path / "x.jsonl"
    mem.export_jsonl(out)
    audit = [json.loads(line) for line in out.read_text().splitlines()
             if json.loads(line)["kind"] == "audit"]
    assert [(a["body"]["details"]["item"], a["body"]["details"]["query"]) for a in audit] == \
        [(old.id, "acme's price")]
    mem.close()


@pytest.mark.parametrize("lazy", [True, False])
def test_opening_a_journal_waits_for_no_other_connections_write(tmp_path: Path,
                                                                lazy: bool) -> None:
    """Opening wrote the schema again (in a write transaction), so it waited for any other
    connection's write: a bulk load in another process held every open for as long, and
    one past the busy timeout (30 s) failed it, "database is locked". A journal whose
    schema is current is now opened by reads alone (a held write lock here: without the
    change the open fails after 30 s)."""
    path = str(tmp_path / "m.db")
    with Memory(path) as m:
        m.add("ana", "city", "Lisbon", source="crm")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process's write under way
        with Memory(path, lazy=lazy) as m:
            assert m.current("ana", "city").value == "Lisbon"
            assert m.verify().ok
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Memory(path) as m:  # and writes as before
        m.add("ana", "city", "Porto", source="crm")
        assert m.current("ana", "city").value == "Porto"

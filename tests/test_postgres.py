"""The journal on PostgreSQL: many writers, faults, tampering (issue 11).

The backend-independent journal tests run on both backends (the ``journal_url`` fixture in
conftest.py); these are PostgreSQL's own.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import psycopg
import pytest

from truthkeeper import JournalError, Memory

from ._writer import close, run_writers, spawn
from .conftest import drop_pg_database, new_pg_database

ROOT = Path(__file__).resolve().parent.parent
T = "2026-11-{:02d}T10:00:00Z".format


@pytest.fixture
def url(pg_admin: str):
    u = new_pg_database(pg_admin)
    yield u
    drop_pg_database(pg_admin, u)


def _ids(url: str) -> list[str]:
    with Memory(url) as mem:
        return [f.id for f, _ in mem._store.all_facts()]


@pytest.mark.slow
def test_eight_processes_write_1000_each_into_one_chain(url: str) -> None:
    Memory(url).close()
    acked = run_writers(url, 8, 1000)
    assert len(acked) == 8_000 == len(set(acked))
    with Memory(url) as mem:
        v = mem.verify()
        assert v.ok and v.events == 8_001  # the config event and every write, one chain
        assert sorted(f.id for f, _ in mem._store.all_facts()) == sorted(acked)


@pytest.mark.slow
def test_kill_9_of_writers_loses_no_acknowledged_write(url: str) -> None:
    rnd = random.Random(11)
    acked: set[str] = set()
    kills = 0
    for round_ in range(12):
        p = spawn(url, round_ * 1000, 1000, "batches")
        assert p.stdout is not None
        stop_after = rnd.randint(1, 6)
        for n, line in enumerate(p.stdout, 1):
            acked.update(line.split())
            if n >= stop_after:
                break
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.wait()
        acked.update(i for line in p.stdout for i in line.split())
        close(p)
    assert kills >= 6
    stored = set(_ids(url))
    assert acked <= stored
    with Memory(url) as mem:
        assert mem.verify().ok


def test_a_connection_killed_mid_write_fails_clearly_and_reconnects(url: str,
                                                                   pg_admin: str) -> None:
    mem = Memory(url)
    a = mem.add("acme", "price", 1, source="s", valid_from=T(1))
    backend_pid = mem._ledger.journal._conn.info.backend_pid
    with psycopg.connect(pg_admin, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (backend_pid,))
    with pytest.raises(JournalError):
        mem.add("acme", "price", 2, source="s", valid_from=T(2))
    assert [f.id for f in mem.history("acme", "price")] == [a.id]  # nothing partial
    b = mem.add("acme", "price", 3, source="s", valid_from=T(3))  # reconnects
    live = [(f.id, f.value, f.status) for f in mem.history("acme", "price")]
    mem.close()
    with Memory(url) as again:
        assert [(f.id, f.value, f.status) for f in again.history("acme", "price")] == live
        assert [f.id for f in again.current("acme", "price").heads] == [b.id]
        assert again.verify().ok


def test_a_server_restart_loses_no_acknowledged_event(pg_admin: str, tmp_path: Path) -> None:
    """On a server of its own: restarting the one the other tests share cut their
    connections mid-test when they ran in parallel (``AdminShutdown`` in another worker's
    eight writers)."""
    server = ["bash", str(ROOT / "scripts" / "pg-test-server.sh")]
    env = {**os.environ, "TK_PG_STATE": str(tmp_path / "pg")}
    admin = subprocess.run([*server, "start"], check=True, cwd=ROOT, env=env, timeout=300,
                           capture_output=True, text=True).stdout.strip()
    try:
        url = new_pg_database(admin)
        mem = Memory(url)
        written = [mem.add("acme", "n", i, source="s", valid_from=T(1 + i)).id
                   for i in range(5)]
        subprocess.run([*server, "restart"], check=True, cwd=ROOT, env=env, timeout=120)
        deadline = time.monotonic() + 30
        while True:  # the first call after the restart may fail; a later one reconnects
            try:
                written.append(mem.add("acme", "n", 99, source="s", valid_from=T(20)).id)
                break
            except JournalError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        mem.close()
        assert sorted(_ids(url)) == sorted(written)
    finally:
        subprocess.run([*server, "stop"], check=False, cwd=ROOT, env=env, timeout=120)


def test_a_tampered_row_is_detected(url: str) -> None:
    with Memory(url) as mem:
        for i in range(4):
            mem.add("acme", "price", i, source="s", valid_from=T(i + 1))
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.Error, match="append-only"):
            conn.execute("UPDATE events SET body = '{}' WHERE seq = 3")
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        conn.execute("UPDATE events SET body = replace(body, '\"value\":1', '\"value\":7') "
                     "WHERE seq = 3")
    with Memory(url, readonly=True) as ro:
        v = ro.verify()
        assert not v.ok and v.first_bad == 3 and "edited" in (v.reason or "")


def test_the_journal_format_is_marked_and_checked(url: str) -> None:
    """The table comment carries the format: a journal of a later (or earlier) format is
    refused with what to do, and nothing is written; one marked before formats were (the
    bare mark, format 2) opens and is marked on its next writable open."""
    with Memory(url) as mem:
        mem.add("ana", "city", "Lisbon", source="a", valid_from=T(1))

    def comment() -> str:
        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute("SELECT obj_description('events'::regclass, 'pg_class')"
                                ).fetchone()[0]

    def set_comment(text: str) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"COMMENT ON TABLE events IS '{text}'")

    assert comment() == "truthkeeper journal format 3"
    for text, what in (("truthkeeper journal format 4", "later truthkeeper"),
                       ("truthkeeper journal format 1", "earlier truthkeeper"),
                       ("truthkeeper journal format x", "not a truthkeeper journal")):
        set_comment(text)
        for readonly in (False, True):
            with pytest.raises(JournalError, match=what):
                Memory(url, readonly=readonly)
        assert comment() == text  # refused before anything was written
    set_comment("truthkeeper journal")
    with Memory(url, readonly=True) as ro:
        assert ro.current("ana", "city").value == "Lisbon"
    assert comment() == "truthkeeper journal"
    with Memory(url) as mem:
        assert mem.verify().ok
    assert comment() == "truthkeeper journal format 3"  # format 2, upgraded in place


def test_another_applications_table_is_never_touched(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE events (id int)")
    with pytest.raises(JournalError, match="not a truthkeeper journal"):
        Memory(url)
    with psycopg.connect(url, autocommit=True) as conn:
        triggers = conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname = "
                                "'events_append_only'").fetchone()[0]
    assert triggers == 0


def test_a_read_sees_another_hosts_write_without_refresh(url: str) -> None:
    reader, writer = Memory(url), Memory(url)
    assert reader.current("acme", "price").status == "unknown"
    writer.add("acme", "price", 5, source="s", valid_from=T(1))
    t0 = time.monotonic()
    while reader.current("acme", "price").status == "unknown":
        assert time.monotonic() - t0 < 2.0, "the write was not seen within 2 s"
        time.sleep(0.005)
    assert reader.current("acme", "price").value == 5
    reader.close()
    writer.close()


def test_an_append_refused_at_commit_takes_the_write_back(url: str, monkeypatch) -> None:
    """A write's append goes with its COMMIT: the server's refusal then reaches the caller
    as JournalError, the store takes the write back, and the next write goes through."""
    from truthkeeper.journal import postgres

    with Memory(url) as mem:
        mem.add("acme", "price", 1, source="s", valid_from=T(1))
        for name in ("_APPEND", "_APPEND_UNINDEXED"):
            monkeypatch.setattr(postgres, name, "SELECT 1 / 0 WHERE %(rows)s::text IS NOT NULL")
        monkeypatch.setattr(postgres, "_APPEND_FACTS",  # the append of plain facts too
                            "SELECT 1 / 0 WHERE %s::bigint + length(%s || %s || %s) > 0")
        with pytest.raises(JournalError, match="division by zero"):
            mem.add("acme", "price", 2, source="s", valid_from=T(2))
        assert mem.current("acme", "price").value == 1 and len(mem) == 1
        with pytest.raises(JournalError, match="division by zero"):  # a linked fact: slow
            mem.add("acme", "price", 2, source="s", valid_from=T(2),
                    supersedes=mem.history("acme", "price")[0].id)
        assert mem.current("acme", "price").value == 1 and len(mem) == 1
        monkeypatch.undo()
        mem.add("acme", "price", 3, source="s", valid_from=T(3))
        assert mem.verify().ok
    with Memory(url) as again:
        assert [f.value for f in again.history("acme", "price")] == [1, 3]


def test_a_memory_on_postgresql_starts_no_thread(url: str) -> None:
    """Freshness is the last-seq query before each answer: no listener thread (it woke at
    every other writer's commit and took the CPU from the writer holding the lock)."""
    import threading

    before = threading.active_count()
    with Memory(url, index_check="before-write") as mem:
        mem.add("acme", "price", 1, source="s")
        assert threading.active_count() == before
        assert mem.current("acme", "price").value == 1


def test_a_journal_object_carries_connection_options(url: str) -> None:
    from truthkeeper.journal.postgres import PostgresJournal

    with Memory(journal=PostgresJournal(url, connect_timeout=3)) as mem:
        mem.add("acme", "price", 1, source="s")
    with Memory(url) as again:
        assert again.current("acme", "price").value == 1
    with pytest.raises(JournalError, match="cannot connect"):
        PostgresJournal("postgresql://nobody@127.0.0.1:1/none", connect_timeout=1)


def test_opening_a_journal_waits_for_no_writer(url: str) -> None:
    """Opening a journal whose schema is current reads it in one round trip: it neither
    takes the writers' lock nor writes the catalog, so it does not wait for a write."""
    import threading

    import psycopg

    from truthkeeper.journal.postgres import _LOCK_KEY

    Memory(url).close()
    writer = psycopg.connect(url)
    writer.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))  # a write under way
    opened: list[int] = []

    def open_and_read() -> None:
        with Memory(url) as mem:
            opened.append(len(mem))

    t = threading.Thread(target=open_and_read)
    t.start()
    t.join(timeout=20)
    waited = t.is_alive()
    writer.rollback()
    writer.close()
    t.join()
    assert not waited and opened == [0]


def test_a_batch_of_many_megabytes_is_written_not_stalled(url: str) -> None:
    """One add_many whose rows come to 24 MB: in pipeline mode libpq stalled on so large a
    message (both ends waiting, for ever). Run in a child process so a stall fails the test
    instead of hanging the run."""
    import sys

    code = ("import sys; from truthkeeper import Memory\n"
            "m = Memory(sys.argv[1])\n"
            "m.add_many([dict(subject=f's{i}', attribute='a', value='x' * 60000 + str(i),"
            " source='crm') for i in range(400)])\n"
            "m.close()\n")
    subprocess.run([sys.executable, "-c", code, url], check=True, timeout=120)
    with Memory(url) as mem:
        assert len(mem) == 400 and mem.current("s399", "a").value.endswith("x399")
        assert mem.verify().ok


def test_a_read_is_one_statement_that_keeps_its_prepared_plan(url: str) -> None:
    """Reads run in autocommit mode: no transaction is left open after one, and psycopg
    keeps the statements it prepared (a rollback after every read discarded them, so a
    slot's events were planned again on every first read: 1 ms instead of 0.2)."""
    with Memory(url) as mem:
        mem.add_many([{"subject": f"s{i}", "attribute": "a", "value": i, "source": "crm"}
                      for i in range(20)])
    with Memory(url) as mem:  # lazily: each first read loads its slot from the index
        assert [mem.current(f"s{i}", "a").value for i in range(20)] == list(range(20))
        conn = mem._p.ledger.journal._conn
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        plans = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
        assert any("tk_index_slot" in s for (s,) in plans)


def test_a_write_whose_transaction_failed_is_never_acknowledged(url: str) -> None:
    """A statement of a write that failed, its error swallowed, leaves the transaction
    aborted; the server answers its COMMIT with ROLLBACK and no error. The write must fail,
    not return as if its events were in the chain."""
    from truthkeeper.journal.postgres import PostgresJournal

    Memory(url).close()
    j = PostgresJournal(url)
    try:
        before = j.tail()
        with pytest.raises(JournalError, match="transaction is aborted"), \
                j.transaction() as txn:
            with pytest.raises(psycopg.errors.DivisionByZero):
                j._conn.execute("SELECT 1/0")
            txn.append_many([("outcome", before[2] + 1, {"note": "lost?"})])
        # nothing queued after the failure (an erasure's update runs at once): the COMMIT
        # alone meets the aborted transaction
        with pytest.raises(JournalError, match="rolled it back"), j.transaction(), \
                pytest.raises(psycopg.errors.DivisionByZero):
            j._conn.execute("SELECT 1/0")
        assert j.tail() == before
        with j.transaction() as txn:  # the connection is usable again
            txn.append_many([("outcome", before[2] + 1, {"note": "kept"})])
        assert j.tail()[0] == before[0] + 1
    finally:
        j.close()


def _spy_appends(mem: Memory, monkeypatch) -> dict[str, list]:
    """Record which way each write of ``mem`` went: ``fast`` (the database chained plain
    facts: None when it refused) or ``locked`` (caught up under the writers' lock)."""
    seen: dict[str, list] = {"fast": [], "locked": []}
    journal = mem._ledger.journal
    append, transaction = journal.append_facts, journal.transaction

    def fast(clean, events):
        out = append(clean, events)
        seen["fast"].append(out)
        return out

    def locked(after=None):
        seen["locked"].append(after)
        return transaction(after)

    monkeypatch.setattr(journal, "append_facts", fast)
    monkeypatch.setattr(journal, "transaction", locked)
    return seen


def _as_replayed(url: str, *mems: Memory) -> None:
    """Every memory answers as a full replay of the journal, transaction times included."""
    with Memory(url, lazy=False) as ref:
        assert ref.verify().ok
        for s in ("x", "y"):
            want = [(f.id, f.value, f.recorded_at) for f in ref.history(s, "p")]
            for m in mems:
                assert [(f.id, f.value, f.recorded_at) for f in m.history(s, "p")] == want
                assert m.current(s, "p").value == ref.current(s, "p").value


def test_plain_facts_of_two_writers_are_chained_by_the_database(url: str, monkeypatch) -> None:
    """A plain fact whose source is bound already is decided without catching up (issue
    30): one statement appends and chains it under the writers' lock. Two writers that
    never read interleave; each then reads the other's facts, passing over its own."""
    a, b = Memory(url), Memory(url)
    try:
        spy = _spy_appends(a, monkeypatch)
        a.add("x", "p", 0, source="w", valid_from=T(1))  # binds w: caught up, under the lock
        assert len(spy["locked"]) == 1 and not spy["fast"]
        b.add("y", "p", 0, source="w", valid_from=T(1))
        for i in range(1, 4):
            a.add("x", "p", i, source="w", valid_from=T(1 + i))
            b.add("y", "p", i, source="w", valid_from=T(1 + i))
        assert len(spy["locked"]) == 1 and len(spy["fast"]) == 3 and None not in spy["fast"]
        assert a._ledger.ahead  # its own events past others' it has not read yet
        assert a.refresh() == 4  # b's four facts; its own are passed over
        assert a.current("y", "p").value == 3 and b.current("x", "p").value == 3
        assert not a._ledger.ahead
        _as_replayed(url, a, b)
    finally:
        a.close()
        b.close()


def test_a_plain_fact_after_another_writers_retraction_waits_for_it(url: str,
                                                                     monkeypatch) -> None:
    """An event other than a fact came first (a retraction): the database refuses the fast
    append, and the write is made again after catching up, where the retraction holds."""
    a, b = Memory(url), Memory(url)
    try:
        first = a.add("x", "p", 1, source="w", valid_from=T(1))
        second = a.add("x", "p", 2, source="w", valid_from=T(2))
        b.retract(second.id, reason="wrong")
        spy = _spy_appends(a, monkeypatch)
        a.add("y", "p", 5, source="w", valid_from=T(3))
        assert spy["fast"] == [None] and len(spy["locked"]) == 1
        assert a.current("x", "p").value == 1 == first.value
        _as_replayed(url, a, b)
    finally:
        a.close()
        b.close()


def test_a_transaction_time_behind_the_tail_moves_past_it(url: str) -> None:
    """Another writer recorded a later transaction time: the database moves the fast
    write's time just past it (times increase along the chain) and the writer's memory
    holds the fact at the time the journal recorded."""
    a, b = Memory(url), Memory(url)
    try:
        a.add("x", "p", 0, source="w", valid_from=T(1))
        b.add("y", "p", 0, source="w", valid_from=T(1))
        b._ledger.last_ra += 60_000_000  # a clock a minute ahead
        late = b.add("y", "p", 1, source="w", valid_from=T(2))
        f = a.add("x", "p", 1, source="w", valid_from=T(2))
        assert f.recorded_at > late.recorded_at
        assert a.history("x", "p")[-1].recorded_at == f.recorded_at
        _as_replayed(url, a, b)
    finally:
        a.close()
        b.close()


def test_a_memory_that_only_writes_keeps_no_growing_list(url: str, monkeypatch) -> None:
    """Its own events past other writers' unread facts are remembered until it catches up;
    a memory that never reads catches up once it has written AHEAD of them."""
    from truthkeeper.journal import ledger

    monkeypatch.setattr(ledger, "AHEAD", 3)
    a, b = Memory(url), Memory(url)
    try:
        a.add("x", "p", 0, source="w", valid_from=T(1))
        b.add("y", "p", 0, source="w", valid_from=T(1))
        sizes = []
        for i in range(1, 8):
            a.add("x", "p", i, source="w", valid_from=T(1 + i))
            b.add("y", "p", i, source="w", valid_from=T(1 + i))
            sizes.append(len(a._ledger.ahead))
        assert max(sizes) == 3 and sizes[3] < 3  # caught up before its fourth such write
        _as_replayed(url, a, b)
    finally:
        a.close()
        b.close()

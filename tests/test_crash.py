"""Crash and concurrency tests of the journal (slow; still run by make test and CI)."""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from truthkeeper import Memory

from ._writer import close, run_writers, spawn

ROOT = Path(__file__).resolve().parent.parent


_spawn, _close = spawn, close


def _lost(db: Path, lost: set[str], kills: int, seq: int) -> str:
    """The failure's message: the journal copied aside (pytest keeps its folder) and, for
    each lost id, whether its event is in the journal at all."""
    import shutil

    keep = db.parent / f"lost-after-kill-{kills}"
    keep.mkdir(exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            shutil.copy(f"{db}{suffix}", keep)
    con = sqlite3.connect(keep / db.name)
    found = {fid: con.execute("SELECT seq FROM events WHERE body LIKE ?",
                              (f'%"{fid}"%',)).fetchall() for fid in sorted(lost)}
    last = con.execute("SELECT max(seq) FROM events").fetchone()[0]
    con.close()
    return (f"lost {len(lost)} acknowledged facts after kill {kills}: events {found}, "
            f"the journal's last seq {last}, the reopened memory's {seq}; kept in {keep}")


@pytest.mark.slow
def test_kill_9_never_loses_an_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    rnd = random.Random(20261129)
    acked: set[str] = set()
    written = 0
    kills = 0
    target = 4_000
    rounds = 0
    while (written < target or kills < 50) and rounds < 400:  # at least 50 kills
        rounds += 1
        # past the target each writer still has facts to write, so that it is killed
        p = _spawn(db, written, max(target - written, 500), "batches")
        assert p.stdout is not None
        # kill after a random number of acknowledged commits (or a random delay)
        stop_after = rnd.randint(1, 8)
        deadline = time.monotonic() + rnd.uniform(0.0, 0.05)
        for lines, line in enumerate(p.stdout, 1):
            acked.update(line.split())
            if lines >= stop_after and time.monotonic() >= deadline:
                break
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            kills += 1
        p.wait()
        for line in p.stdout:  # acknowledgements already in the pipe count too
            acked.update(line.split())
        err = p.stderr.read() if p.stderr is not None else ""
        _close(p)
        if p.returncode not in (0, -signal.SIGKILL):  # a writer failed: keep the evidence
            raise AssertionError(_lost(db, set(), kills, -1) + f"; writer exited "
                                 f"{p.returncode}: {err[-2000:]}")
        with Memory(db) as mem:
            ids = {f.id for f, _ in mem._store.all_facts()}
            if not acked <= ids:  # seen once (2026-12-05), not reproduced: keep the evidence
                raise AssertionError(_lost(db, acked - ids, kills, mem._p.ledger.seq))
            assert mem.verify().ok
            written = len(ids)
        con = sqlite3.connect(db)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.close()
    assert kills >= 50, f"only {kills} kills happened"
    with Memory(db) as mem:
        assert len(mem) == written >= target


@pytest.mark.slow
def test_four_processes_write_in_turn_without_loss_or_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "multi.db"
    Memory(db).close()
    acked = run_writers(db, 4, 1000)
    assert len(acked) == 4000 == len(set(acked))
    with Memory(db) as mem:
        facts = [f for f, _ in mem._store.all_facts()]
        assert {f.id for f in facts} == set(acked)
        assert sorted(f.value for f in facts) == list(range(4000))
        v = mem.verify()
        assert v.ok and v.events == 4001
        ras = [f.recorded_at for f in facts]
        assert len(set(ras)) == 4000  # transaction time strictly increasing across processes

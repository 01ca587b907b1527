"""``truthkeeper bench perf``: medians of current (warm, and a slot's first read: p50 and
p99), the peak RSS of a fresh process that ingests ``n`` facts in memory, filter of 50
items (Candidates or stored ids, in 10 or in 50 slots) with where one filter's time goes
(marshalling the items in Python, the one Prolog call, and the janus round trip of the
same inputs alone: the floor of this design), add_many rate, and decide on a conflict
(open values and categories) after learning from agreement."""

from __future__ import annotations

import platform
import statistics
import time
from typing import Any

from ..memory import Memory
from ..values import Candidate
from . import median_time, shapes


def _fact(i: int, slots: int) -> dict[str, Any]:
    return {"subject": f"s{i % slots}", "attribute": "a", "value": i, "source": f"src{i % 7}",
            "tier": "agent", "valid_from": f"2026-01-01T00:00:{i % 60:02d}.{i:06d}Z"[:26] + "Z"}


def _facts(n: int, slots: int) -> list[dict[str, Any]]:
    return [_fact(i, slots) for i in range(n)]


def _decide_ms(categorical: bool, repeat: int, slots: int = 200,
               sources: int = 9) -> float:
    """Median ms of the first ``decide`` of a conflict (nothing cached) after
    ``learn_from_agreement()``: ``slots`` slots, each answered by ``sources`` sources of
    .6-.9 among three categories."""
    import random

    rng = random.Random(0)
    cats = ("red", "green", "blue")
    facts = []
    for i in range(slots):
        truth = rng.randrange(3)
        for s in range(sources):
            said = truth if rng.random() < 0.6 + 0.3 * s / sources else rng.randrange(3)
            facts.append({"subject": f"s{i}", "attribute": "colour", "value": cats[said],
                          "source": f"src{s}", "valid_from": "2026-01-01"})
    times = []
    with Memory(categories={"colour": cats} if categorical else None) as mem:
        mem.add_many(facts)
        for _ in range(repeat):
            mem.learn_from_agreement()  # a new version: every answer computed again
            for i in range(slots):
                t = time.perf_counter()
                mem.decide(f"s{i}", "colour")
                times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def _median_us(fn: Any, times: int) -> float:
    return median_time(fn, times, unit=1e6)


def _filters(repeat: int, n: int = 20_000) -> dict[str, Any]:
    """filter of 50 items: Candidates or stored ids, in 10 or in 50 slots of a memory of
    ``n`` facts (chains of 4); stored ids also when no filter has judged them since the
    memory last changed (its kept verdicts dropped before each call); then the parts of one
    Candidates call."""
    from ..logic import bridge
    from ..logic.filter import candidate_rows

    out: dict[str, Any] = {}
    with Memory() as mem:
        facts = mem.add_many(_facts(max(n, 400), slots=max(n, 400) // 4))
        times = max(repeat * 10, 50)
        for n_slots in (10, 50):
            cands = [Candidate(f"s{i % n_slots}", "a", i % 3, f"2026-02-01T00:{i:02d}:00Z")
                     for i in range(50)]
            ids = [f.id for f in facts if int(f.subject[1:]) < n_slots][:50]
            out[f"candidates_{n_slots}_slots_us"] = _median_us(lambda c=cands: mem.filter(c),
                                                               times)
            out[f"ids_{n_slots}_slots_us"] = _median_us(lambda i=ids: mem.filter(i), times)

            def unjudged(i: list[str] = ids) -> Any:
                mem._p.answers.judged.clear()  # as a change would
                return mem.filter(i)

            out[f"ids_{n_slots}_slots_not_judged_since_a_change_us"] = _median_us(unjudged,
                                                                                  times)
        p = mem._p  # the parts of one call, as Memory.filter makes it
        store, coerce = p.store, p.events.declarer.schema.coerce

        def marshal() -> Any:
            return candidate_rows(store, p.builder, cands, None, coerce, p.guard)

        rows, slots, _, _ = marshal()
        inputs = {"M": store.h, "Cs": rows,
                  "Ss": [x for layers in slots.values() for x in layers]}
        out["parts_of_candidates_50_slots_us"] = {
            "marshal_in_python": _median_us(marshal, times),
            "prolog_call": _median_us(
                lambda: bridge.ask("tk_phi_store(M, Cs, Ss, Ds, Dps)", dict(inputs)), times),
            "janus_round_trip_of_the_inputs": _median_us(
                lambda: bridge.ask("true", dict(inputs)), times),
        }
    return out


def _first_reads(n_slots: int = 20_000) -> dict[str, float]:
    """``current`` of each slot once (nothing cached): p50 and p99, microseconds."""
    with Memory() as mem:
        mem.add_many(_facts(n_slots * 3, slots=n_slots))
        out = []
        for i in range(n_slots):
            t = time.perf_counter()
            mem.current(f"s{i}", "a")
            out.append((time.perf_counter() - t) * 1e6)
    out.sort()
    return {"p50": out[len(out) // 2], "p99": out[int(len(out) * 0.99)], "slots": n_slots}


def _sets(members: tuple[int, ...] = (1_000, 10_000), repeat: int = 5,
          ends: bool = False) -> dict[str, Any]:
    """A set (``cardinality="many"``) of each size, one claim a member: its first read
    after the bulk load, then medians of adding a member, ``current`` after that add,
    and retracting a member, ms. Each grows with the set's size, linearly. With ``ends``,
    every claim ends (``valid_to``) in the coming years: a timed set, decided at the clock
    member by member as well (whole on every write, before)."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)

    def until(i: int) -> dict[str, str]:
        return {"valid_to": (now + timedelta(days=30 + i)).isoformat()} if ends else {}

    def end(i: int) -> datetime | None:
        return now + timedelta(days=30 + i) if ends else None

    out: dict[str, Any] = {}
    for n in members:
        with Memory() as mem:
            mem.declare("pet", cardinality="many")
            facts = mem.add_many([{"subject": "u", "attribute": "pet", "value": f"p{i}",
                                   "source": "s", "valid_from": "2026-01-01", **until(i)}
                                  for i in range(n)])
            t = time.perf_counter()
            mem.current("u", "pet")
            first = (time.perf_counter() - t) * 1e3
            add, cur, retract = [], [], []
            for i in range(repeat):
                t = time.perf_counter()
                mem.add("u", "pet", f"new{i}", source="s", valid_to=end(i))
                add.append((time.perf_counter() - t) * 1e3)
                t = time.perf_counter()
                mem.current("u", "pet")
                cur.append((time.perf_counter() - t) * 1e3)
                t = time.perf_counter()
                mem.retract(facts[i].id, reason="bench")
                retract.append((time.perf_counter() - t) * 1e3)
        out[f"{n}_members"] = {"first_read_ms": first,
                               "add_member_ms": statistics.median(add),
                               "current_after_add_ms": statistics.median(cur),
                               "retract_member_ms": statistics.median(retract)}
    return out


def _view_reads(n: int = 10_000, repeat: int = 20) -> dict[str, Any]:
    """A scope's view over a shared slot of ``n`` facts (a price's history), the scope's
    own fact older than them: the median ms of the view's ``current`` after each write to
    the shared layer. The union of the layers was compared pairwise, before: 2.2 s a read
    at 2,000 facts."""
    def when(i: int) -> str:
        return f"2020-01-{1 + i // 86_400:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:" \
               f"{i % 60:02d}Z"

    with Memory() as mem:
        mem.add_many([{"subject": "acme", "attribute": "price", "value": i, "source": "s",
                       "valid_from": when(i)} for i in range(n)])
        ana = mem.scope("user:ana")
        ana.add("acme", "price", -1, source="chat", valid_from="2019-01-01")
        times = []
        for k in range(repeat):
            mem.add("acme", "price", n + k, source="s", valid_from="2021-01-01")
            t = time.perf_counter()
            ana.current("acme", "price")
            times.append((time.perf_counter() - t) * 1e3)
    return {"facts": n, "read_after_write_ms": statistics.median(times)}


def _chains(n: int = 4_000, repeat: int = 10) -> dict[str, Any]:
    """A slot of ``n`` facts that is a chain of explicit ``supersedes`` links, and one that
    a confirmation settled: the median ms of a write with ``current`` after it, and of a
    retraction with ``current`` after it; of the chain also its first read. Each scanned
    the slot (a write) or compared every pair of its facts (a retraction: 2.3 s at 2,000),
    before; the chain's first read and a retraction in it checked each link against a
    list of the slot's facts (n^2: 190 ms at 4,000), until 2026-12-06."""
    def when(i: int) -> str:
        return f"2020-01-{1 + i // 86_400:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:" \
               f"{i % 60:02d}Z"

    def timed(call: Any) -> float:
        t = time.perf_counter()
        call()
        return (time.perf_counter() - t) * 1e3

    out: dict[str, Any] = {"facts": n}
    with Memory() as mem:
        facts = mem.add_many([{"subject": "c", "attribute": "v", "value": i, "source": "s",
                               "valid_from": when(i), "id": f"c{i}",
                               **({"supersedes": f"c{i - 1}"} if i else {})}
                              for i in range(n)])
        last = facts[-1].id
        out["linked_first_read_ms"] = timed(lambda: mem.current("c", "v"))
        times = []
        for k in range(repeat):
            t = time.perf_counter()
            last = mem.add("c", "v", -k, source="s", supersedes=last).id
            mem.current("c", "v")
            times.append((time.perf_counter() - t) * 1e3)
        out["linked_write_ms"] = statistics.median(times)

        def unlink(k: int) -> None:
            mem.retract(facts[n // 2 + k].id, reason="bench")
            mem.current("c", "v")

        out["linked_retract_ms"] = statistics.median(
            timed(lambda k=k: unlink(k)) for k in range(repeat))
    with Memory() as mem:
        facts = mem.add_many([{"subject": "c", "attribute": "v", "value": i, "source": "s",
                               "valid_from": when(i)} for i in range(n)])
        mem.confirm("c", "v", n - 1)
        mem.current("c", "v")
        out["confirmed_write_ms"] = statistics.median(
            timed(lambda k=k: (mem.add("c", "v", -k, source="s"), mem.current("c", "v")))
            for k in range(repeat))
        def retract(k: int) -> None:
            mem.retract(facts[k].id, reason="bench")
            mem.current("c", "v")

        out["confirmed_retract_ms"] = statistics.median(
            timed(lambda k=k: retract(k)) for k in range(repeat))
    return out


def _timed_slot(n: int = 10_000, repeat: int = 20) -> dict[str, Any]:
    """One slot of ``n`` facts that each end (``valid_to``): the median ms of adding one
    more to it, once it has been read (it grew with the slot's size, before), and of its
    ``history`` (each ended fact's status scanned the slot, before 2026-12-06: 22 s at
    4,000), and of ``filter`` and ``get`` of 50 of its facts (each ended fact's verdict
    scanned the slot, before: 399 ms at 2,000)."""
    def when(i: int) -> str:
        return f"2020-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"

    with Memory() as mem:
        mem.add_many([{"subject": "c", "attribute": "v", "value": i, "source": "s",
                       "valid_from": f"2020-01-{1 + i // 86_400:02d}" + when(i)[10:],
                       "valid_to": f"2020-02-{1 + i // 86_400:02d}" + when(i)[10:]}
                      for i in range(n)])
        mem.current("c", "v")
        times = []
        for k in range(repeat):
            t = time.perf_counter()
            mem.add("c", "v", -k, source="s", valid_from="2020-03-01", valid_to="2020-03-02")
            times.append((time.perf_counter() - t) * 1e3)
        history, filtered, got = [], [], []
        for k in range(3):
            mem.add("other", "v", k, source="s")  # a write: no verdict is kept
            t = time.perf_counter()
            ids = [f.id for f in mem.history("c", "v")[::n // 50]]
            history.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            mem.filter(ids)
            filtered.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            for fid in ids:
                mem.get(fid)
            got.append((time.perf_counter() - t) * 1e3)
    return {"facts": n, "add_ms": statistics.median(times),
            "history_ms": statistics.median(history),
            "filter_50_ids_ms": statistics.median(filtered),
            "get_50_ms": statistics.median(got)}


def _tied_slot(n: int = 2_000) -> dict[str, Any]:
    """One slot of ``n`` claims of ``n`` sources at one valid time, each another value (a
    poll): ms of its first read, of ``as_of`` and of a retraction with the read after it.
    Each claim was checked against every other, and the heads grouped by value pair by
    pair (2.2 s for the first read's Prolog part at 2,000, before 2026-12-06). Also: ms
    of ``filter`` of ``n`` such claims retrieved as Candidates (2.9 s at 2,000 before
    2026-12-06: each checked against every other), of ``graph``, of ``filter`` of the
    claims' ids once a newer fact answered the poll (its n heads' dead clauses were
    walked by every lookup of the slot's heads until SWI-Prolog happened to reclaim
    them: 0.9 s at 8,000, before the seventh session of 2026-12-06) and of ``erase``."""
    with Memory() as mem:
        facts = mem.add_many([{"subject": "poll", "attribute": "answer", "value": i,
                               "source": f"voter{i}", "valid_from": "2026-01-01"}
                              for i in range(n)])
        t = time.perf_counter()
        mem.current("poll", "answer")
        first = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        mem.as_of("poll", "answer", valid_at="2026-06-01")
        as_of = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        mem.retract(facts[0].id, reason="bench")
        mem.current("poll", "answer")
        retract = (time.perf_counter() - t) * 1e3
        cands = [Candidate("vote", "answer", i, "2026-01-01", source=f"voter{i}")
                 for i in range(n)]
        t = time.perf_counter()
        mem.filter(cands)
        filtered = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        mem.graph()
        graph = (time.perf_counter() - t) * 1e3
        mem.add("poll", "answer", -1, source="official", valid_from="2026-02-01")
        mem.current("poll", "answer")
        t = time.perf_counter()  # the poll's n heads just replaced by one
        mem.filter([f.id for f in facts[1:]])
        answered = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        mem.erase(subject="poll")  # each erased fact derived the slot again (n^2) before
        erase = (time.perf_counter() - t) * 1e3
    return {"claims": n, "first_read_ms": first, "as_of_ms": as_of,
            "retract_and_read_ms": retract, "filter_candidates_ms": filtered,
            "graph_ms": graph, "answered_filter_ids_ms": answered, "erase_ms": erase}


def _ms(call: Any) -> float:
    """Milliseconds one call takes."""
    t = time.perf_counter()
    call()
    return (time.perf_counter() - t) * 1e3


def _second(i: int) -> str:
    """The ``i``-th second of 2026 as an ISO time (facts each at its own time)."""
    return (f"2026-01-{1 + i // 86_400:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:"
            f"{i % 60:02d}Z")


def _agreeing_slot(n: int = 4_000) -> dict[str, Any]:
    """One slot of ``n`` facts of ``n`` sources that agree, each at its own time (many
    documents stating one address): ms of its first read and of ``filter`` of all its
    ids. Every record was in the slot's frontier, each checked against all (n^2: 20 s
    at 4,000, before 2026-12-06)."""
    with Memory() as mem:
        facts = mem.add_many([{"subject": "acme", "attribute": "hq", "value": "Lisbon",
                               "source": f"doc{i}",
                               "valid_from": _second(i)} for i in range(n)])
        t = time.perf_counter()
        mem.current("acme", "hq")
        first = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        mem.filter([f.id for f in facts])
        filtered = (time.perf_counter() - t) * 1e3
    return {"facts": n, "first_read_ms": first, "filter_all_ids_ms": filtered}


def _status_slot(n: int = 4_000) -> dict[str, Any]:
    """One slot of ``n`` facts of one source whose value returns, in turn, to one of three
    (a status): ms of ``filter`` of all its ids and of ``graph``. A fact whose value is the
    head's, which no head dominates, scanned the slot for a dominator (n^2: 4.0 s at
    4,000, before 2026-12-06); every dominated pair was an edge of ``graph`` (n^2 / 2)."""
    with Memory() as mem:
        facts = mem.add_many([{"subject": "bot", "attribute": "status", "value": i % 3,
                               "source": "agent",
                               "valid_from": _second(i)} for i in range(n)])
        mem.current("bot", "status")
        filtered = _ms(lambda: mem.filter([f.id for f in facts]))
        graph = _ms(mem.graph)
    return {"facts": n, "filter_all_ids_ms": filtered, "graph_ms": graph}


def _view_poll(n: int = 2_000) -> dict[str, Any]:
    """A poll of ``n`` claims tied in time in a scope and ``n`` in the shared layer, every
    claim a head of the view: ms of the view's first read, of its ``filter`` of the shared
    claims' ids (each id derived the union's heads again, against every record of the
    other layer's front: hours at 4,000, before the seventh session of 2026-12-06), of 50
    ``get`` of them, and of that ``filter`` once the view confirmed a value."""
    with Memory() as mem:
        shared = mem.add_many([{"subject": "poll", "attribute": "v", "value": i % 5,
                                "source": f"doc{i}", "valid_from": "2026-01-01"}
                               for i in range(n)])
        view = mem.scope("user:ana")
        view.add_many([{"subject": "poll", "attribute": "v", "value": i % 5,
                        "source": f"mine{i}", "valid_from": "2026-01-01"} for i in range(n)])
        t = time.perf_counter()
        view.current("poll", "v")
        first = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        view.filter([f.id for f in shared])
        filtered = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()  # each derived the union's heads again, before
        for f in shared[:50]:
            view.get(f.id)
        got = (time.perf_counter() - t) * 1e3
        view.confirm("poll", "v", 3)
        t = time.perf_counter()  # each claim was checked against the tied heads, before
        view.filter([f.id for f in shared])
        confirmed = (time.perf_counter() - t) * 1e3
    return {"claims_per_layer": n, "first_read_ms": first, "filter_shared_ids_ms": filtered,
            "get_50_ms": got, "confirmed_filter_shared_ids_ms": confirmed}


def _view_set(n: int = 4_000, members: int = 200) -> dict[str, Any]:
    """A set whose ``members`` come and go, ``n`` claims in a scope and ``n`` in the shared
    layer: ms of the view's ``filter`` of its own claims' ids and of ``graph``. Each
    claim's dominator was sought among every head of the set and every fact of the other
    layer, and the claims judged as items were compared pairwise across members (3.5 s
    and 5.6 s at 4,000, before the seventh session of 2026-12-06)."""
    def claims(layer: str, shift: int, flip: int) -> list[dict[str, Any]]:
        return [{"subject": "c", "attribute": "tags", "value": f"t{i % members}",
                 "source": f"{layer}{i}", "present": (i // flip) % 2 == 0,
                 "valid_from": _second(i + shift)} for i in range(n)]
    with Memory() as mem:
        mem.declare("tags", cardinality="many")
        mem.add_many(claims("doc", 0, members))
        view = mem.scope("user:ana")
        own = view.add_many(claims("me", 1, 3 * members // 2))
        view.current("c", "tags")
        filtered = _ms(lambda: view.filter([f.id for f in own]))
        graph = _ms(view.graph)
    return {"claims_per_layer": n, "members": members, "filter_own_ids_ms": filtered,
            "graph_ms": graph}


def _ending_reads(n: int = 100_000, seconds: float = 2.0) -> dict[str, Any]:
    """Reads for ``seconds`` of a memory of ``n`` facts that end one every 3 ms from now
    on (the clock passes one end on almost every read): p50 / p99 us. Moving the clock
    looked at every timed fact, before (135 ms a read at 100,000)."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    with Memory() as mem:
        mem.add_many([{"subject": f"s{i}", "attribute": "v", "value": i, "source": "s",
                       "valid_from": now - timedelta(days=1),
                       "valid_to": now + timedelta(milliseconds=200 + 3 * i)}
                      for i in range(n)])
        out, end, k = [], time.perf_counter() + seconds, 0
        while time.perf_counter() < end:
            t = time.perf_counter()
            mem.current(f"s{k * 7919 % n}", "v")
            out.append((time.perf_counter() - t) * 1e6)
            k += 1
    out.sort()
    return {"facts": n, "reads": len(out), "p50": out[len(out) // 2],
            "p99": out[int(len(out) * 0.99)]}


def _ending_slot(n: int = 10_000, seconds: float = 1.5) -> dict[str, Any]:
    """Reads for ``seconds`` of one slot of ``n`` facts that end one every 3 ms from now
    on: p50 / p99 us. Each end the clock passed derived the whole slot, before (23-25 ms
    a read that passed one, at 10,000 facts)."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    with Memory() as mem:
        mem.add_many([{"subject": "s", "attribute": "v", "value": i, "source": "s",
                       "valid_from": now - timedelta(days=1) + timedelta(seconds=i),
                       "valid_to": now + timedelta(milliseconds=300 + 3 * i)}
                      for i in range(n)])
        mem.current("s", "v")
        out, end = [], time.perf_counter() + seconds
        while time.perf_counter() < end:
            t = time.perf_counter()
            mem.current("s", "v")
            out.append((time.perf_counter() - t) * 1e6)
    out.sort()
    return {"facts": n, "reads": len(out), "p50": out[len(out) // 2],
            "p99": out[int(len(out) * 0.99)]}


_RSS_PROBE = r"""
import json, sys
from truthkeeper import Memory
from truthkeeper.bench.perf import _fact
n, batch = int(sys.argv[1]), int(sys.argv[2])
with Memory() as mem:
    before = peak_rss_mb()
    for i in range(0, n, batch):  # each batch made as it goes, as a loader reads its input
        mem.add_many([_fact(j, n // 4) for j in range(i, min(i + batch, n))])
    print(json.dumps({"before_mb": before, "peak_mb": peak_rss_mb(), "facts": len(mem)}))
"""


def _rss_after_ingest(n: int) -> dict[str, Any]:
    """Peak RSS of a fresh process that ingests ``n`` facts into an in-memory Memory, in
    one ``add_many`` and in batches of 10,000 (each batch made as it goes: what a loader
    holds of its input is not counted beyond one batch)."""
    import json
    import subprocess
    import sys

    from . import PEAK_RSS_CODE

    out: dict[str, Any] = {"facts": n, "target_mb": 150}
    for batch in (n, 10_000):
        code = PEAK_RSS_CODE + _RSS_PROBE
        p = subprocess.run([sys.executable, "-c", code, str(n), str(min(batch, n))],
                           capture_output=True, text=True, check=False)
        if p.returncode != 0:
            msg = f"the RSS probe failed: {p.stderr[-2000:]}"
            raise RuntimeError(msg)
        got = json.loads(p.stdout.strip().splitlines()[-1])
        out["one_add_many" if batch >= n else "batches_of_10000"] = got
    return out


def run(*, n: int = 100_000, repeat: int = 5) -> dict[str, Any]:
    """Run the in-memory performance benchmark; returns a JSON-ready dict."""
    # the reads first, in a process that has not yet held (and closed) the large memories
    # of the write rows: after them every row below ran 10-50% slower, from run to run
    filters = _filters(repeat, min(n, 20_000))
    rss = _rss_after_ingest(n)
    first_reads = _first_reads(max(n // 5, 100))
    with Memory() as mem:
        mem.add_many(_facts(20_000, slots=5_000))
        keys = [(f"s{i}", "a") for i in range(0, 5_000, 7)]
        for s, a in keys:  # warm
            mem.current(s, a)
        cur = []
        for _ in range(repeat):
            t = time.perf_counter()
            for s, a in keys:
                mem.current(s, a)
            cur.append((time.perf_counter() - t) / len(keys) * 1e6)
        cands = [Candidate(f"s{i % 10}", "a", i % 3, f"2026-02-01T00:{i:02d}:00Z")
                 for i in range(50)]
        filt = []
        for _ in range(max(repeat, 20)):
            t = time.perf_counter()
            mem.filter(cands)
            filt.append((time.perf_counter() - t) * 1e6)
        ids = [f.id for f in mem.history("s1", "a")] * 1
        store_filter = []
        for _ in range(max(repeat, 20)):
            t = time.perf_counter()
            mem.filter(ids)
            store_filter.append((time.perf_counter() - t) * 1e6)

    add_rates, add_one, erase = [], [], []
    for _ in range(repeat):
        facts = _facts(n, slots=n // 4)
        with Memory() as mem:
            t = time.perf_counter()
            mem.add_many(facts)
            add_rates.append(n / (time.perf_counter() - t))
            for i in range(40):  # one fact at a time into the full memory, new slots
                t = time.perf_counter()
                mem.add(f"one{i}", "a", i, source="src0", tier="agent")
                add_one.append((time.perf_counter() - t) * 1e6)
            for i in range(1, 6):  # one subject's facts (4 of them), as a user asks
                t = time.perf_counter()
                mem.erase(subject=f"s{i}")
                erase.append((time.perf_counter() - t) * 1e3)
    return {
        "benchmark": "perf",
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "add_many_facts_per_s": {"median": statistics.median(add_rates), "n": n,
                                 "runs": add_rates, "target": 120_000},
        "add_one_us": {"median": statistics.median(add_one), "memory_facts": n},
        "rss_after_ingest_mb": rss,
        "erase_one_subject_ms": {"median": statistics.median(erase), "memory_facts": n,
                                 "note": "the first erasure of a memory also builds its "
                                         "lookup of fact events (counted here)"},
        "current_us": {"median": statistics.median(cur), "target": 10},
        "filter_50_candidates_us": {"median": statistics.median(filt), "target": 150},
        "filter_store_ids_us": {"median": statistics.median(store_filter),
                                "items": len(ids)},
        "filter_50_items_us": filters,
        "current_first_read_us": first_reads,
        "set_ms": _sets(repeat=repeat),
        "timed_set_ms": _sets(repeat=repeat, ends=True),
        "timed_slot": _timed_slot(),
        "tied_slot": _tied_slot(),
        "status_slot": _status_slot(),
        "agreeing_slot": _agreeing_slot(),
        "view_over_shared_history": _view_reads(),
        "view_poll": _view_poll(),
        "view_set": _view_set(),
        "chains": _chains(),
        "reads_while_facts_end_us": _ending_reads(),
        "reads_while_one_slots_facts_end_us": _ending_slot(),
        "decide_conflict_ms": {"open_values": _decide_ms(False, repeat),
                               "categorical": _decide_ms(True, repeat), "sources": 9},
        "shapes": shapes.run(small=n < 100_000),  # (a quick look at a tenth of each size)
    }

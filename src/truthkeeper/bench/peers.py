"""``truthkeeper bench peers``: one seeded workload through truthkeeper, memvara and
veritas-tms, side by side in one run (issue 15).

The workload: ``subjects`` subjects x 3 attributes; each slot a chain of 1-5 values from
verified sources (valid times a year apart); in 10% of the slots a later claim by a
lower-trust agent, which must not become the current value. Each peer gets the facts in its
own vocabulary (below), answers the same questions, and is checked against the intended
answers (``agreement``): a timing of a wrong answer is not a win.

How each peer is driven (the equivalents are stated in the JSON under ``how``):

- truthkeeper: ``add_many`` in batches of 10,000; ``current``, ``history``,
  ``as_of(valid_at=)``, ``filter`` of :class:`~truthkeeper.Candidate` objects.
- memvara 0.21 (``Memvara(path, embeddings=False)``, attributes declared single-valued):
  ``remember(..., valid_from=, confidence=)`` one fact at a time (it has no batch write);
  current is ``history(s, p, valid_at=now)``, as-of ``history(s, p, valid_at=t)``;
  filter has no equivalent, so each candidate is looked up (current value of its slot).
- veritas-tms 0.17 (``BeliefStore``, the heuristic detector, attributes named after
  relations it treats as single-valued): ``assert_belief("e's status is v", ...)`` with
  entrenchment by source reliability, confidence and recency, so valid times are mapped to
  recent timestamps in the same order; the application keeps the ids per slot (veritas has
  no slot lookup); current is the active belief among them, history is
  ``timetravel.history_of`` per value, as-of ``timetravel.beliefs_at(t)``, filter the status
  of each candidate's belief; durability is ``veritas.save`` (a JSON snapshot), reopen
  ``veritas.load``. Its ingest is quadratic, so it runs on the first ``veritas_subjects``
  subjects only (stated in the output).

Latencies are medians over interleaved rounds (each round runs every peer once); ingest is
one run per peer; reopening runs in a fresh process per peer and reports the seconds from
the open call to the first answer (imports excluded, reported apart) and the process's RSS
after 1,000 random reads (truthkeeper opens with ``lazy=True``). truthkeeper's probe starts
its engine (SWI-Prolog) first and reports that apart (``engine_start_s``, with the RSS it
leaves, ``rss_after_engine_start_mb``; ``open_with_engine_start_s`` the sum): issue 30
compares the open with memvara's within that start, since memvara starts no engine.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import TruthkeeperError
from ..memory import Memory
from ..values import Candidate
from . import PEAK_RSS_CODE

__all__ = ["run", "workload"]

_ATTRS = ("status", "address", "owner")  # single-valued relations in veritas's detector
_BASE = datetime(2000, 1, 1, tzinfo=UTC)
_STEP = timedelta(days=365)


@dataclass(frozen=True, slots=True)
class Claim:
    subject: str
    attribute: str
    value: str
    valid_from: datetime
    source: str
    trusted: bool


def workload(subjects: int, seed: int = 0) -> tuple[list[Claim], dict[tuple[str, str], str]]:
    """The claims in write order, and the intended current value of every slot."""
    rng = random.Random(seed)
    claims: list[Claim] = []
    truth: dict[tuple[str, str], str] = {}
    for i in range(subjects):
        for a in _ATTRS:
            n = rng.randint(1, 5)
            for link in range(n):
                claims.append(Claim(f"e{i}", a, f"v{i}-{a}-{link}", _BASE + link * _STEP,
                                    f"src{rng.randrange(7)}", True))
            truth[(f"e{i}", a)] = f"v{i}-{a}-{n - 1}"
            if rng.random() < 0.1:
                claims.append(Claim(f"e{i}", a, f"guess{i}-{a}", _BASE + n * _STEP,
                                    "agent-guess", False))
    # interleave slots as a live memory sees them: by valid time, then subject
    claims.sort(key=lambda c: (c.valid_from, c.subject, c.attribute))
    return claims, truth


# ---------------------------------------------------------------- the three drivers


def _answer(r: Any) -> Any:
    """A resolution's value; in a conflict (a lower-trust claim newer than the head), the
    candidate the reliability layer ranks best, which is what a caller would use."""
    if r.value is not None or not r.candidates:
        return r.value
    return next((c.value for c in r.candidates if c.best), None)


class _Truthkeeper:
    name = "truthkeeper"

    def __init__(self, path: str | None, synchronous: str = "NORMAL") -> None:
        self.mem = Memory(path, synchronous=synchronous)

    def ingest(self, claims: Sequence[Claim]) -> None:
        rows = [{"subject": c.subject, "attribute": c.attribute, "value": c.value,
                 "source": c.source, "tier": "verified" if c.trusted else "agent",
                 "valid_from": c.valid_from} for c in claims]
        for k in range(0, len(rows), 10_000):
            self.mem.add_many(rows[k:k + 10_000])

    def current(self, s: str, a: str) -> Any:
        return _answer(self.mem.current(s, a))

    def history(self, s: str, a: str) -> list[Any]:
        return [f.value for f in self.mem.history(s, a)]

    def as_of(self, s: str, a: str, t: datetime) -> Any:
        return self.mem.as_of(s, a, valid_at=t).value

    def filter(self, cands: Sequence[Claim]) -> list[Any]:
        res = self.mem.filter([Candidate(c.subject, c.attribute, c.value, c.valid_from,
                                         tier="verified" if c.trusted else "agent",
                                         source=c.source) for c in cands])
        return [k.value for k in res.kept]

    def close(self) -> None:
        self.mem.close()


@contextlib.contextmanager
def _pysqlite3_as_sqlite3() -> Iterator[None]:
    """memvara needs SQLite >= 3.42: pysqlite3-binary's module stands for ``sqlite3`` while
    memvara is imported and builds its store (its modules bind it then), and the
    standard module is put back after: a second copy of SQLite left as ``sqlite3`` would be
    the one later code of this process opens a journal with, and two copies on one file
    drop each other's POSIX locks."""
    import importlib

    before = sys.modules.get("sqlite3")
    with contextlib.suppress(ImportError):
        sys.modules["sqlite3"] = importlib.import_module("pysqlite3")
    try:
        yield
    finally:
        if before is not None:
            sys.modules["sqlite3"] = before


def _memvara_module() -> Any:
    import importlib

    with _pysqlite3_as_sqlite3():
        return importlib.import_module("memvara")


class _Memvara:
    name = "memvara"

    def __init__(self, path: str | None) -> None:
        import warnings

        mv = _memvara_module()
        reg = mv.PredicateRegistry(tuple(mv.PredicateSpec(name=a, cardinality=mv.Cardinality.ONE)
                                         for a in _ATTRS))
        with warnings.catch_warnings(), _pysqlite3_as_sqlite3():
            warnings.simplefilter("ignore")
            self.mem = mv.Memvara(path or ":memory:", registry=reg, embeddings=False,
                                  llm=mv.NullLLM(), user="bench")

    def ingest(self, claims: Sequence[Claim]) -> None:
        for c in claims:
            self.mem.remember(c.subject, c.attribute, c.value, valid_from=c.valid_from,
                              confidence=1.0 if c.trusted else 0.5)

    def current(self, s: str, a: str) -> Any:
        live = self.mem.history(s, a, valid_at=datetime.now(UTC))
        return live[-1].object if live else None

    def history(self, s: str, a: str) -> list[Any]:
        return [c.object for c in self.mem.history(s, a)]

    def as_of(self, s: str, a: str, t: datetime) -> Any:
        at = self.mem.history(s, a, valid_at=t)
        return at[-1].object if at else None

    def filter(self, cands: Sequence[Claim]) -> list[Any]:
        return [c.value for c in cands if self.current(c.subject, c.attribute) == c.value]

    def close(self) -> None:
        self.mem.close()


_NOW = time.time()


def _stamp(t: datetime) -> float:
    """Valid times mapped to recent timestamps in the same order (veritas ranks recency
    by age: a chain set in 2000-2005 would be uniformly stale to it)."""
    return _NOW - 400 * 86400 + (t - _BASE).days / 365 * 30 * 86400


class _Veritas:
    name = "veritas-tms"

    def __init__(self, path: str | None) -> None:
        import veritas

        self.v = veritas
        self.path = path
        self.store = veritas.BeliefStore()
        self.ids: dict[tuple[str, str], list[str]] = {}
        self.by_value: dict[tuple[str, str, str], str] = {}

    @staticmethod
    def _prop(s: str, a: str, v: str) -> str:
        return f"{s}'s {a} is {v}"

    def ingest(self, claims: Sequence[Claim]) -> None:
        for c in claims:
            ts = _stamp(c.valid_from)
            b = self.store.assert_belief(
                self._prop(c.subject, c.attribute, c.value),
                confidence=0.9 if c.trusted else 0.5, source=c.source,
                source_reliability=0.8 if c.trusted else 0.3, timestamp=ts, valid_from=ts)
            if b is not None:
                self.ids.setdefault((c.subject, c.attribute), []).append(b.id)
                self.by_value[(c.subject, c.attribute, c.value)] = b.id
        if self.path:
            self.v.save(self.store, self.path)

    def current(self, s: str, a: str) -> Any:
        for bid in reversed(self.ids.get((s, a), ())):
            b = self.store.get(bid)
            if b is not None and b.status == "active":
                return b.proposition.rsplit(" is ", 1)[1]
        return None

    def history(self, s: str, a: str) -> list[Any]:
        out = []
        for bid in self.ids.get((s, a), ()):
            b = self.store.get(bid)
            if b is not None and self.store.timetravel.history_of(b.proposition):
                out.append(b.proposition.rsplit(" is ", 1)[1])
        return out

    def as_of(self, s: str, a: str, t: datetime) -> Any:
        prefix = f"{s}'s {a} is "
        at = [b for b in self.store.timetravel.beliefs_at(_stamp(t) + 1)
              if b.proposition.startswith(prefix)]
        return at[-1].proposition.rsplit(" is ", 1)[1] if at else None

    def filter(self, cands: Sequence[Claim]) -> list[Any]:
        out = []
        for c in cands:
            bid = self.by_value.get((c.subject, c.attribute, c.value))
            b = None if bid is None else self.store.get(bid)
            if b is not None and b.status == "active":
                out.append(c.value)
        return out

    def close(self) -> None:
        pass


_HOW = {
    "truthkeeper": {"ingest": "add_many, batches of 10,000",
                    "durable": "SQLite journal, synchronous NORMAL (FULL reported apart)",
                    "current": "current(s, a)", "history": "history(s, a)",
                    "as_of": "as_of(s, a, valid_at=t)",
                    "filter": "filter(50 Candidates): one call, store-aware Phi_T"},
    "memvara": {"ingest": "remember() per fact (no batch write)",
                "durable": "its SQLite store (WAL, synchronous NORMAL)",
                "current": "history(s, p, valid_at=now)", "history": "history(s, p)",
                "as_of": "history(s, p, valid_at=t)",
                "filter": "no equivalent: one current lookup per candidate"},
    "veritas-tms": {"ingest": "assert_belief() per fact; entrenchment decides",
                    "durable": "veritas.save (JSON snapshot) after ingest",
                    "current": "the active belief among the slot's ids (kept by the caller)",
                    "history": "timetravel.history_of per value of the slot",
                    "as_of": "timetravel.beliefs_at(t), then the slot's belief",
                    "filter": "status of each candidate's belief (ids kept by the caller)"},
}

_PROBE_HEAD = r"""
import json, random, sys, time
t0 = time.perf_counter()
path, subjects = sys.argv[1], int(sys.argv[2])
""" + PEAK_RSS_CODE

_PROBE_TAIL = r"""
first_s = time.perf_counter() - t
rng = random.Random(1)
for _ in range(1000):
    answer(f"e{rng.randrange(subjects)}", rng.choice(["status", "address", "owner"]))
out = {"import_s": imported, "open_to_first_answer_s": first_s,
       "rss_after_1k_reads_mb": peak_rss_mb(), "first": first}
if "engine_s" in globals():  # truthkeeper: its engine's start, apart and included
    out.update(engine_start_s=engine_s, rss_after_engine_start_mb=engine_rss,
               open_with_engine_start_s=engine_s + first_s)
print(json.dumps(out))
"""

# each peer's reopen imports only that peer (RSS is the process's)
_PROBES = {
    "truthkeeper": r"""
from truthkeeper import Memory, policies
from truthkeeper.bench.peers import _answer
imported = time.perf_counter() - t0
t = time.perf_counter()
policies()  # SWI-Prolog started: the engine the other peers do not have
engine_s, engine_rss = time.perf_counter() - t, peak_rss_mb()
t = time.perf_counter()
mem = Memory(path, lazy=True)
def answer(s, a):
    return _answer(mem.current(s, a))
first = answer("e0", "status")
""",
    "memvara": r"""
import warnings
sys.modules["sqlite3"] = __import__("pysqlite3")
import memvara as mv
from datetime import datetime, timezone
imported = time.perf_counter() - t0
t = time.perf_counter()
reg = mv.PredicateRegistry(tuple(mv.PredicateSpec(name=a, cardinality=mv.Cardinality.ONE)
                                 for a in ("status", "address", "owner")))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    mem = mv.Memvara(path, registry=reg, embeddings=False, llm=mv.NullLLM(), user="bench")
def answer(s, a):
    live = mem.history(s, a, valid_at=datetime.now(timezone.utc))
    return live[-1].object if live else None
first = answer("e0", "status")
""",
    "veritas-tms": r"""
import veritas
imported = time.perf_counter() - t0
t = time.perf_counter()
store = veritas.load(path)
index = {}
for b in store.active_beliefs():  # the caller's slot index, rebuilt
    subj, rest = b.proposition.split("'s ", 1)
    attr, value = rest.split(" is ", 1)
    index[(subj, attr)] = value
def answer(s, a):
    return index.get((s, a))
first = answer("e0", "status")
""",
}


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def _available() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name, mod in (("memvara", "memvara"), ("veritas-tms", "veritas")):
        try:
            m = _memvara_module() if mod == "memvara" else __import__(mod)
            out[name] = str(getattr(m, "__version__", "?"))
        except ImportError:
            out[name] = None
    return out


def run(*, subjects: int = 10_000, veritas_subjects: int = 150, rounds: int = 5,
        ops: int = 200, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the side-by-side benchmark (see the module docstring); a JSON-ready dict."""
    say = progress or (lambda _m: None)
    versions = _available()
    missing = [k for k, v in versions.items() if v is None]
    if missing:
        msg = (f"bench peers needs {', '.join(missing)}: pip install 'truthkeeper[bench]' "
               "(or make bench-extras)")
        raise TruthkeeperError(msg)
    claims, truth = workload(subjects, seed)
    small_subjects = min(veritas_subjects, subjects)
    small = [c for c in claims if int(c.subject[1:]) < small_subjects]
    out: dict[str, Any] = {
        "benchmark": "peers", "versions": versions, "seed": seed,
        "workload": {"subjects": subjects, "attributes": len(_ATTRS), "facts": len(claims),
                     "slots": len(truth),
                     "lower_trust_claims": sum(not c.trusted for c in claims),
                     "veritas_subjects": small_subjects, "veritas_facts": len(small)},
        "how": _HOW, "peers": {},
    }
    rng = random.Random(seed + 1)
    with tempfile.TemporaryDirectory() as d:
        drivers: dict[str, Any] = {}
        for make, name, data in ((_Truthkeeper, "truthkeeper", claims),
                                 (_Memvara, "memvara", claims),
                                 (_Veritas, "veritas-tms", small)):
            res: dict[str, Any] = {"facts": len(data)}
            say(f"{name}: ingest {len(data):,} facts in memory")
            drv = make(None)
            t = time.perf_counter()
            drv.ingest(data)
            res["ingest_memory_facts_per_s"] = len(data) / (time.perf_counter() - t)
            drv.close()
            say(f"{name}: ingest {len(data):,} facts durably")
            path = os.path.join(d, f"{name}.store")
            drv = make(path)
            t = time.perf_counter()
            drv.ingest(data)
            res["ingest_durable_facts_per_s"] = len(data) / (time.perf_counter() - t)
            if name == "truthkeeper":
                full = _Truthkeeper(os.path.join(d, "full.db"), synchronous="FULL")
                t = time.perf_counter()
                full.ingest(data)
                res["ingest_durable_full_sync_facts_per_s"] = (
                    len(data) / (time.perf_counter() - t))
                full.close()
            drivers[name] = (drv, path, data)
            out["peers"][name] = res
        say("interleaved reads")
        samples: dict[str, dict[str, list[float]]] = {
            n: {"current_first": [], "current": [], "history": [], "as_of": [],
                "filter_50": []} for n in drivers}
        agree: dict[str, list[bool]] = {n: [] for n in drivers}
        for _ in range(rounds):
            for name, (drv, _path, data) in drivers.items():
                n_subj = small_subjects if name == "veritas-tms" else subjects
                keys = [(f"e{rng.randrange(n_subj)}", rng.choice(_ATTRS)) for _ in range(ops)]
                s = samples[name]
                for k in keys:
                    t = time.perf_counter()
                    v = drv.current(*k)
                    s["current_first"].append(time.perf_counter() - t)
                    agree[name].append(v == truth[k])
                for k in keys:
                    t = time.perf_counter()
                    drv.current(*k)
                    s["current"].append(time.perf_counter() - t)
                for k in keys[: max(ops // 10, 5)]:
                    t = time.perf_counter()
                    drv.history(*k)
                    s["history"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    drv.as_of(*k, _BASE + _STEP + timedelta(days=100))
                    s["as_of"].append(time.perf_counter() - t)
                for _ in range(5):
                    cands = rng.sample(data, 50)
                    t = time.perf_counter()
                    kept = drv.filter(cands)
                    s["filter_50"].append(time.perf_counter() - t)
                    agree[name].append(_filter_right(cands, set(kept), truth))
        for name in drivers:
            res = out["peers"][name]
            for op, xs in samples[name].items():
                res[f"{op}_us"] = _median_us(xs)
            res["agreement"] = sum(agree[name]) / len(agree[name])
        for name, (drv, path, _data) in drivers.items():
            drv.close()
            say(f"{name}: reopen in a fresh process")
            n_subj = small_subjects if name == "veritas-tms" else subjects
            code = _PROBE_HEAD + _PROBES[name] + _PROBE_TAIL
            p = subprocess.run([sys.executable, "-c", code, path, str(n_subj)],
                               capture_output=True, text=True, check=False)
            if p.returncode != 0:
                msg = f"the reopen probe for {name} failed: {p.stderr[-2000:]}"
                raise RuntimeError(msg)
            out["peers"][name].update(json.loads(p.stdout.strip().splitlines()[-1]))
    out["ratios"] = _ratios(out["peers"])
    return out


def _filter_right(cands: Sequence[Claim], kept: set[Any],
                  truth: dict[tuple[str, str], str]) -> bool:
    """Every current value kept and no superseded verified value kept (a lower-trust
    claim newer than the head may stay: it is contested, not stale)."""
    for c in cands:
        current = truth[(c.subject, c.attribute)] == c.value
        if current and c.value not in kept:
            return False
        if c.trusted and not current and c.value in kept:
            return False
    return True


_HIGHER = ("ingest_memory_facts_per_s", "ingest_durable_facts_per_s")
_LOWER = ("current_first_us", "current_us", "history_us", "as_of_us", "filter_50_us",
          "open_to_first_answer_s", "rss_after_1k_reads_mb")


def _ratios(peers: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per operation, truthkeeper against the best peer: > 1 means truthkeeper is better
    (faster, or less memory) by that factor."""
    tk = peers["truthkeeper"]
    out: dict[str, dict[str, Any]] = {}
    for op in _HIGHER + _LOWER:
        others = {n: r[op] for n, r in peers.items() if n != "truthkeeper" and op in r}
        if not others or op not in tk:
            continue
        if op in _HIGHER:
            best = max(others, key=lambda n: others[n])
            ratio = tk[op] / max(others[best], 1e-12)
        else:
            best = min(others, key=lambda n: others[n])
            ratio = others[best] / max(tk[op], 1e-12)
        out[op] = {"best_peer": best, "truthkeeper_advantage": ratio}
    return out

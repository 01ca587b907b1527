"""``truthkeeper bench shadowing-text``: semantic shadowing with a real lexical retriever
(seed 000, "The Immutable Past").

A memory written as text chunks: each of ``entities`` projects has N stale status updates (an
old status) and M current ones (the new status), in paraphrases that are equally relevant to
the question "what is the status of project X?", interleaved over time with the other
projects' updates. BM25 (``bm25s``) ranks the chunks; a short-term buffer optionally adds the
newest chunks written. Strategies pick the context:

- ``standard``: the top k by BM25;
- ``timestamp_rerank``: the top 2k by BM25 re-ranked newest first, k kept;
- ``multi_factor``: the seed's ablation, score = recency + relevance + usage + stability (each
  scaled to [0, 1]; usage counts past retrievals, which old chunks have accumulated; stability
  is age), top k;
- ``phi_t``: the top k by BM25, then Phi_T over the retrieved set (``Memory.filter`` of the
  chunks as candidates, with a memory that knows nothing: the seed's operator);
- ``truthkeeper``: the top k by BM25 filtered by a memory that holds every chunk as a fact
  (chain heads only), falling back to ``current()`` when no head was retrieved.

Two readers answer from the context's chunks about the asked project: the majority reader
(the most frequent status: the Majority Vote Trap) and the newest reader (the newest chunk's
status). Reported per N:M ratio, k and buffer: the current chunks retrieved against the
theory kM/(N+M) (k capped at N+M), the share of stale chunks, and each reader's accuracy.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from ..memory import Memory
from ..values import Candidate

__all__ = ["RATIOS", "STRATEGIES", "run"]

RATIOS = ((1, 1), (5, 1), (10, 1), (20, 1), (50, 1), (100, 1))
STRATEGIES = ("standard", "timestamp_rerank", "multi_factor", "phi_t", "truthkeeper")
_TEMPLATES = (
    "Status update: the {p} project is {v}.",
    "{p} project status is now {v}, according to the weekly sync.",
    "Quick note on {p}: the project is {v}.",
    "The team reports that project {p} is {v} this week.",
    "FYI the {p} project status: {v}.",
)
_OLD, _NEW = "blocked", "shipped"


def _corpus(entities: int, n: int, m: int, rng: random.Random) -> list[dict[str, Any]]:
    """Chunks in writing order; every project's stale updates come before its current ones,
    and projects interleave."""
    queues = {e: [_OLD] * n + [_NEW] * m for e in range(entities)}
    chunks: list[dict[str, Any]] = []
    live = list(queues)
    while live:
        e = rng.choice(live)
        v = queues[e].pop(0)
        t = len(chunks)
        chunks.append({"entity": e, "value": v, "t": t,
                       "text": rng.choice(_TEMPLATES).format(p=f"P{e:03d}", v=v)})
        if not queues[e]:
            live.remove(e)
    return chunks


def _iso(t: int) -> str:
    """The t-th second of 2026 as ISO 8601."""
    from datetime import UTC, datetime, timedelta

    return (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=t)).isoformat()


def _readers(ctx: list[dict[str, Any]], e: int) -> tuple[Any, Any]:
    about = [c for c in ctx if c["entity"] == e]
    if not about:
        return None, None
    majority = Counter(c["value"] for c in about).most_common(1)[0][0]
    newest = max(about, key=lambda c: c["t"])["value"]
    return majority, newest


def _scaled(xs: list[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    return [0.0 if hi == lo else (x - lo) / (hi - lo) for x in xs]


def _one_ratio(n: int, m: int, entities: int, ks: tuple[int, ...], buffer: int,
               rng: random.Random) -> dict[str, Any]:
    import bm25s
    import numpy as np

    chunks = _corpus(entities, n, m, rng)
    perm = list(range(len(chunks)))  # index in random order: BM25 ties are broken by
    rng.shuffle(perm)                 # position, which must not favour old chunks
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([chunks[i]["text"] for i in perm], stopwords="en",
                                   show_progress=False), show_progress=False)
    queries = [f"What is the status of the P{e:03d} project?" for e in range(entities)]
    depth = min(len(chunks), 2 * max(ks))
    docs, scores = retriever.retrieve(bm25s.tokenize(queries, stopwords="en",
                                                     show_progress=False),
                                      k=depth, show_progress=False)
    usage = np.zeros(len(chunks))  # past retrievals: older chunks were retrieved more often
    for c in chunks:
        usage[c["t"]] = (len(chunks) - c["t"]) * rng.uniform(0.5, 1.5)
    mem = Memory(policy="temporal", protected_tiers=())
    ids = [f.id for f in mem.add_many(
        {"subject": f"P{c['entity']:03d}", "attribute": "status", "value": c["value"],
         "source": "log", "valid_from": _iso(c["t"])} for c in chunks)]
    empty = Memory(policy="temporal", protected_tiers=())
    newest = chunks[-buffer:] if buffer else []
    out: dict[str, Any] = {}
    try:
        for k in ks:
            stats = {s: {"current": 0.0, "stale": 0.0, "size": 0.0, "majority": 0, "newest": 0}
                     for s in STRATEGIES}
            for e in range(entities):
                ranked = [chunks[perm[int(i)]] for i in docs[e]]
                rel = [float(x) for x in scores[e]]
                ctxs: dict[str, list[dict[str, Any]]] = {
                    "standard": ranked[:k],
                    "timestamp_rerank": sorted(ranked[:2 * k], key=lambda c: -c["t"])[:k]}
                rec = _scaled([c["t"] for c in ranked])
                rl = _scaled(rel)
                us = _scaled([float(usage[c["t"]]) for c in ranked])
                st = _scaled([-c["t"] for c in ranked])
                score = [rec[i] + rl[i] + us[i] + st[i] for i in range(len(ranked))]
                order = sorted(range(len(ranked)), key=lambda i: -score[i])
                ctxs["multi_factor"] = [ranked[i] for i in order[:k]]
                base = ranked[:k] + [c for c in newest if c not in ranked[:k]]
                for s in ("standard", "timestamp_rerank", "multi_factor"):
                    ctxs[s] = ctxs[s] + [c for c in newest if c not in ctxs[s]]
                cands = [Candidate(f"P{c['entity']:03d}", "status", c["value"], _iso(c["t"]))
                         for c in base]
                kept = {id(x) for x in empty.filter(cands).kept}
                ctxs["phi_t"] = [c for c, x in zip(base, cands, strict=True) if id(x) in kept]
                res = mem.filter([ids[c["t"]] for c in base])
                heads = set(res.kept)
                ctxs["truthkeeper"] = [c for c in base if ids[c["t"]] in heads]
                for s, ctx in ctxs.items():
                    about = [c for c in ctx if c["entity"] == e]
                    cur = sum(c["value"] == _NEW for c in about)
                    stats[s]["current"] += cur
                    stats[s]["stale"] += len(about) - cur
                    stats[s]["size"] += len(ctx)
                    maj, nw = _readers(ctx, e)
                    if s == "truthkeeper" and maj is None:  # no head retrieved: the memory
                        maj = nw = mem.current(f"P{e:03d}", "status").value
                    stats[s]["majority"] += maj == _NEW
                    stats[s]["newest"] += nw == _NEW
            out[str(k)] = {
                "theory_current": min(k, n + m) * m / (n + m),
                **{s: {"current_retrieved": v["current"] / entities,
                       "stale_share": v["stale"] / max(v["current"] + v["stale"], 1),
                       "context_size": v["size"] / entities,
                       "majority_accuracy": v["majority"] / entities,
                       "newest_accuracy": v["newest"] / entities} for s, v in stats.items()}}
    finally:
        mem.close()
        empty.close()
    return out


def run(*, entities: int = 60, m: int = 2, ks: tuple[int, ...] = (5, 10, 20),
        buffers: tuple[int, ...] = (0, 20), seed: int = 0) -> dict[str, Any]:
    """The grid: N:M ratios x k x buffer sizes (see the module docstring)."""
    rng = random.Random(seed)
    out: dict[str, Any] = {"entities": entities, "m_current": m, "ks": list(ks),
                           "buffers": list(buffers), "retriever": "BM25 (bm25s), English "
                           "stopwords", "ratios": {}}
    for n_ratio, m_ratio in RATIOS:
        n = n_ratio * m // m_ratio
        out["ratios"][f"{n_ratio}:{m_ratio}"] = {
            f"buffer_{b}": _one_ratio(n, m, entities, ks, b, rng) for b in buffers}
    return out

"""``truthkeeper bench provenance``: seed 003's depth, density and tier-inversion lines.

Depth d (2-6): d competing values across the top d of six tiers, the top tier's value right
and oldest, each lower tier newer and wrong; ``random`` picks one of the d values (1/d).
Density rho: a fraction rho of the slots hold such a depth-2 conflict. Inversion: 20% of the
conflicts carry a stale, wrong human decision (always from the same human source) over a
correct, newer verified fact. The inversion sweep (0-50%) spreads the stale decisions over
ten human sources of different reliability (source j is stale with probability 2 r j / 9,
capped at 1, so the mean rate is r), and reports learning curves. Policies: ``temporal`` is
the flat recency store, ``authority_first`` the provenance store; truthkeeper's default
(``temporal_within_authority``) leaves such slots in conflict and answers with ``decide``,
learning per-source reliability from the confirmed truth after each question. Protected
tiers are off here (no signatures in a simulation).
"""

from __future__ import annotations

import random
from typing import Any

from ..memory import Memory

__all__ = ["run"]

TIERS = ("human", "verified", "agent", "unverified")
DEEP_TIERS = ("owner", "human", "verified", "agent", "tool", "unverified")
POLICIES = ("temporal", "authority_first", "temporal_within_authority")


def _at(minute: int) -> str:
    return f"2026-03-01T{minute // 60:02d}:{minute % 60:02d}:00Z"


def _answer(mem: Memory, policy: str, slot: tuple[str, str]) -> Any:
    if policy == "temporal_within_authority":
        d = mem.decide(*slot)  # an abstention is not a right answer
        return d.value if d.action == "answer" else None
    return mem.current(*slot).value


def _depth(d: int, n: int, rng: random.Random | None = None) -> dict[str, float]:
    out = {}
    tiers = DEEP_TIERS if d > len(TIERS) else TIERS
    for policy in POLICIES:
        right = 0
        with Memory(policy=policy, tiers=tiers, protected_tiers=()) as mem:
            for i in range(n):
                for level in range(d):  # level 0 = top tier, right, oldest
                    mem.add(f"c{i}", "value", f"v{level}", source=f"{tiers[level]}-src",
                            tier=tiers[level], valid_from=_at(level))
                right += _answer(mem, policy, (f"c{i}", "value")) == "v0"
        out[policy] = right / n
    if rng is not None:
        out["random"] = sum(rng.randrange(d) == 0 for _ in range(n)) / n
    return out


def _density(rho: float, n: int, rng: random.Random) -> dict[str, float]:
    out = {}
    conflicted = set(rng.sample(range(n), round(rho * n)))
    for policy in POLICIES:
        right = 0
        with Memory(policy=policy, protected_tiers=()) as mem:
            for i in range(n):
                mem.add(f"s{i}", "value", "right", source="email", tier="verified",
                        valid_from=_at(1))
                if i in conflicted:
                    mem.add(f"s{i}", "value", "guess", source="agent:planner", tier="agent",
                            valid_from=_at(2))
                right += _answer(mem, policy, (f"s{i}", "value")) == "right"
        out[policy] = right / n
    return out


def _inversion(n: int, rate: float, rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    inverted = set(rng.sample(range(n), round(rate * n)))
    for policy in POLICIES:
        hits = []
        with Memory(policy=policy, protected_tiers=()) as mem:
            for i in range(n):
                slot = (f"q{i}", "value")
                if i in inverted:   # a stale human decision outranks the correct email
                    mem.add(*slot, "stale", source="user:stale", tier="human", valid_from=_at(1))
                    mem.add(*slot, "right", source=f"email{i % 5}", tier="verified",
                            valid_from=_at(2))
                else:               # the human decision is right, an agent's guess is newer
                    mem.add(*slot, "right", source=f"user:{i % 4}", tier="human",
                            valid_from=_at(1))
                    mem.add(*slot, "guess", source="agent:planner", tier="agent",
                            valid_from=_at(2))
                hits.append(_answer(mem, policy, slot) == "right")
                mem.confirm(*slot, "right")  # feedback after the question is answered
        third = n // 3
        out[policy] = {"accuracy": sum(hits) / n,
                       "accuracy_last_two_thirds": sum(hits[third:]) / (n - third)}
    return out


def _sweep(n: int, rate: float, rng: random.Random, humans: int = 10) -> dict[str, Any]:
    """Tier inversion at ``rate``, spread over ``humans`` human sources of different
    reliability; accuracy, and a learning curve (accuracy per tenth of the stream)."""
    stale_p = [min(1.0, 2 * rate * j / (humans - 1)) for j in range(humans)]
    plan = []
    for i in range(n):
        j = rng.randrange(humans)
        plan.append((i, j, rng.random() < stale_p[j]))
    out: dict[str, Any] = {"human_stale_probability": stale_p,
                           "inverted_share": sum(x[2] for x in plan) / n}
    for policy in POLICIES:
        hits = []
        with Memory(policy=policy, protected_tiers=()) as mem:
            for i, j, inverted in plan:
                slot = (f"q{i}", "value")
                if inverted:   # the human decision is stale; the newer email is right
                    mem.add(*slot, "stale", source=f"user:{j}", tier="human", valid_from=_at(1))
                    mem.add(*slot, "right", source=f"email{i % 5}", tier="verified",
                            valid_from=_at(2))
                else:          # the human decision is right; an agent's guess is newer
                    mem.add(*slot, "right", source=f"user:{j}", tier="human", valid_from=_at(1))
                    mem.add(*slot, "guess", source="agent:planner", tier="agent",
                            valid_from=_at(2))
                hits.append(_answer(mem, policy, slot) == "right")
                mem.confirm(*slot, "right")
        tenth = max(n // 10, 1)
        out[policy] = {"accuracy": sum(hits) / n,
                       "curve": [sum(hits[k:k + tenth]) / len(hits[k:k + tenth])
                                 for k in range(0, n, tenth)]}
    return out


def run(*, n: int = 300, seed: int = 0, sweep: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    return {
        "depth": {str(d): _depth(d, n // 3, rng) for d in (2, 3, 4, 5, 6)},
        "density": {f"{rho:.2f}": _density(rho, n, rng) for rho in (0.0, 0.25, 0.5, 0.75, 1.0)},
        "inversion_20pct": _inversion(n, 0.2, rng),
        "inversion_sweep": {f"{r:.1f}": _sweep(n, r, rng) for r in
                            (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)} if sweep else {},
        "policies": {"temporal": "flat recency store", "authority_first": "provenance store",
                     "temporal_within_authority": "truthkeeper default + decide() with "
                     "reliability learned from confirmed outcomes"},
    }

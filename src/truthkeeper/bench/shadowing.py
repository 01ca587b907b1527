"""``truthkeeper bench shadowing``: semantic shadowing and Phi_T (seed 000), simulated.

Each entity has N stale facts (its previous value) and M current facts (the new value), all
equally similar to the query, so retrieval draws k of the N + M uniformly (semantic shadowing).
Per N:M ratio it reports the mean number of current facts retrieved against the theory
E[X] = kM / (N + M) (Theorem 3.4), and the answer accuracy of a majority vote over the raw
context, over the context after ``filter`` with retrieved items as foreign candidates (Phi_T),
after the store-aware ``filter`` of fact ids (chain heads only; an empty context is an
abstention, never a wrong answer), and of ``current()``, which does not depend on retrieval.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from ..memory import Memory
from ..values import Candidate

__all__ = ["run"]

RATIOS = ((1, 1), (5, 1), (10, 1), (20, 1), (50, 1), (100, 1))


def _vote(values: list[Any]) -> Any:
    if not values:
        return None
    counts = Counter(values).most_common()
    return counts[0][0]


def run(*, entities: int = 200, k: int = 10, m: int = 2, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    out: dict[str, Any] = {"k": k, "m_current_per_entity": m, "entities": entities,
                           "ratios": {}}
    for n_ratio, m_ratio in RATIOS:
        n = n_ratio * m // m_ratio
        with Memory(policy="temporal", protected_tiers=()) as mem:
            ids: dict[int, list[tuple[str, Any, int]]] = {}
            facts = []
            for e in range(entities):
                for j in range(n):
                    facts.append({"subject": f"e{e}", "attribute": "state", "value": "old",
                                  "source": "log", "valid_from": f"2026-01-01T00:{j // 60:02d}:"
                                  f"{j % 60:02d}Z"})
                for j in range(m):
                    facts.append({"subject": f"e{e}", "attribute": "state", "value": "new",
                                  "source": "log", "valid_from": f"2026-02-01T00:00:{j:02d}Z"})
            for f in mem.add_many(facts):
                ids.setdefault(int(f.subject[1:]), []).append(
                    (f.id, f.value, int(f.valid_from.timestamp())))
            context_only = Memory(policy="temporal")  # knows no facts: the seed's Phi_T
            x_total = 0
            raw_ok = phi_ok = phi_wrong = store_ok = store_abstain = current_ok = 0
            for e in range(entities):
                got = rng.sample(ids[e], min(k, len(ids[e])))
                x_total += sum(v == "new" for _, v, _ in got)
                raw_ok += _vote([v for _, v, _ in got]) == "new"
                cands = [Candidate(f"e{e}", "state", v, _iso(t)) for _, v, t in got]
                kept = context_only.filter(cands).kept  # Phi_T over the context alone
                phi_answer = _vote([c.value for c in kept])
                phi_ok += phi_answer == "new"
                phi_wrong += phi_answer == "old"
                kept_ids = mem.filter([i for i, _, _ in got]).kept
                answer = _vote([mem.get(i).value for i in kept_ids])
                store_ok += answer == "new"
                store_abstain += answer is None
                current_ok += mem.current(f"e{e}", "state").value == "new"
            k_eff = min(k, n + m)
            out["ratios"][f"{n}:{m}"] = {
                "mean_current_retrieved": x_total / entities,
                "theory_kM_over_N_plus_M": k_eff * m / (n + m),
                "majority_vote_accuracy_raw": raw_ok / entities,
                "accuracy_after_phi_t": phi_ok / entities,
                "wrong_after_phi_t": phi_wrong / entities,
                "accuracy_after_store_filter": store_ok / entities,
                "abstentions_after_store_filter": store_abstain / entities,
                "wrong_after_store_filter": (entities - store_ok - store_abstain) / entities,
                "current_accuracy": current_ok / entities,
            }
    return out


def _iso(epoch_s: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch_s, UTC).isoformat()

"""``truthkeeper eval truth``: truth discovery over open values, on the sets in a
folder the user names (read at run time).

Data sets are found by their layout (:mod:`.truth_data`: a table of claims with its clean
copy, as ``flights_raha``; or a claims file with a gold file, as ``book_yin2008``), whatever
their folder is called, and read under matching rules chosen per column by what its cells
look like (author lists as word sets, times as 24-hour ``HH:MM``, numbers, text); the JSON
states the rules (``matching``) and which each set took (``rules``).

Methods, all on the same claims: majority vote (ties: the value claimed first), TruthFinder
(Yin, Han, Yu 2008; with the implication of similar values for word sets: Jaccard similarity
minus 0.5; for numbers: +0.5 within 0.1% of each other, -0.5 farther), ACCU (Dong,
Berti-Equille, Srivastava 2009; without copy detection), and truthkeeper through its public
API: each claim is a fact (subject = item, source = the site, tier ``unverified``, one valid
time), ``learn_from_agreement()``, then ``decide()`` (never abstaining) gives the value and
its probability; on word-set values (books) also with ``Similarity.tokens()`` (overlapping
author lists support each other), on numbers with ``Similarity.numbers()``, and for
comparison with ``correlation=False`` (claims about one item counted as independent) and
with ``dependence=True``. Accuracy is over the gold items; ECE (10 equal-width bins), Brier
and log loss over the probability each method gives its answer (of the event "the answer is
right").
"""

from __future__ import annotations

import csv
import functools
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import TruthkeeperError
from ..memory import Memory
from ..reliability.calibration import brier, ece, ece_if_calibrated, log_loss
from ..reliability.similarity import Similarity
from ..results import Utility
from .truth_data import (
    Claims,
    find_truth_sets,
    load_books,
    load_flights,
    load_truth_set,
    normalise_authors,
    normalise_number,
    normalise_time,
)

__all__ = ["Claims", "accu", "evaluate_truth", "load_books", "load_flights", "majority_vote",
           "normalise_authors", "normalise_time", "truthfinder"]


# ---------------------------------------------------------------- baselines


def majority_vote(claims: Claims) -> dict[str, tuple[str, float]]:
    """The most claimed value per item (ties: claimed first) and its vote share."""
    out = {}
    for item, cs in claims.items():
        count: dict[str, int] = {}
        for _, v in cs:
            count[v] = count.get(v, 0) + 1
        best = max(count, key=lambda v: count[v])  # first maximal in reading order
        out[item] = (best, count[best] / len(cs))
    return out


def _source_means(claims: Claims, score: dict[tuple[str, str], float]) -> dict[str, float]:
    """Per source, the mean score of the values it claims (TruthFinder's trust, ACCU's
    accuracy)."""
    per: dict[str, list[float]] = defaultdict(list)
    for item, cs in claims.items():
        for w, v in cs:
            per[w].append(score[(item, v)])
    return {w: sum(xs) / len(xs) for w, xs in per.items()}


def truthfinder(claims: Claims, *, similarity: Callable[[str, str], float] | None = None,
                rho: float = 0.5, gamma: float = 0.3, base_sim: float = 0.5,
                t0: float = 0.9, iterations: int = 20, tol: float = 1e-6,
                ) -> dict[str, tuple[str, float]]:
    """TruthFinder: trust t(w), confidence score sigma(f) = sum of -ln(1 - t(w)) over the
    sources of f, adjusted by rho * sum over the item's other values f' of sigma(f') *
    (sim(f', f) - base_sim), confidence s(f) = 1 / (1 + exp(-gamma sigma*(f))); t(w) is the
    mean confidence of w's facts. Returns the most confident value per item and its
    confidence."""
    sources = {w for cs in claims.values() for w, _ in cs}
    trust = dict.fromkeys(sources, t0)
    values = {item: sorted({v for _, v in cs}) for item, cs in claims.items()}
    conf: dict[tuple[str, str], float] = {}
    for _ in range(iterations):
        conf = {}
        for item, cs in claims.items():
            tau: dict[str, float] = defaultdict(float)
            for w, v in cs:
                tau[v] += -math.log(max(1 - trust[w], 1e-9))
            for v in values[item]:
                adj = tau[v]
                if similarity is not None:
                    adj += rho * sum(tau[u] * (similarity(u, v) - base_sim)
                                     for u in values[item] if u != v)
                conf[(item, v)] = 1 / (1 + math.exp(-gamma * adj))
        new = _source_means(claims, conf)
        change = max(abs(new[w] - trust[w]) for w in sources)
        trust = new
        if change < tol:
            break
    return {item: max(((v, conf[(item, v)]) for v in values[item]), key=lambda x: x[1])
            for item in claims}


def accu(claims: Claims, *, n_false: int = 100, a0: float = 0.8, iterations: int = 20,
         tol: float = 1e-6) -> dict[str, tuple[str, float]]:
    """ACCU without copy detection: vote count C(v) = sum over v's sources of
    ln(n A(s) / (1 - A(s))) with n false values per item, P(v) = exp C(v) / sum over the
    item's claimed values, A(s) the mean P of its claims. Returns the most probable value
    per item and its probability."""
    sources = {w for cs in claims.values() for w, _ in cs}
    acc = dict.fromkeys(sources, a0)
    prob: dict[tuple[str, str], float] = {}
    for _ in range(iterations):
        prob = {}
        for item, cs in claims.items():
            c: dict[str, float] = defaultdict(float)
            for w, v in cs:
                a = min(max(acc[w], 1e-6), 1 - 1e-6)
                c[v] += math.log(n_false * a / (1 - a))
            top = max(c.values())
            z = sum(math.exp(x - top) for x in c.values())
            for v, x in c.items():
                prob[(item, v)] = math.exp(x - top) / z
        new = _source_means(claims, prob)
        change = max(abs(new[w] - acc[w]) for w in sources)
        acc = new
        if change < tol:
            break
    out = {}
    for item, cs in claims.items():
        vs = {v for _, v in cs}
        out[item] = max(((v, prob[(item, v)]) for v in vs), key=lambda x: x[1])
    return out


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of two normalised author lists (sets of words)."""
    x, y = set(a.split()), set(b.split())
    return len(x & y) / len(x | y) if x | y else 1.0


_NEAR = Similarity.numbers()


def near_numbers(a: str, b: str) -> float:
    """``Similarity.numbers()`` of two normalised numbers: TruthFinder's implication for
    numbers, the same nearness truthkeeper's similarity run uses."""
    return _NEAR(float(a), float(b))


# ---------------------------------------------------------------- truthkeeper


_ANSWER = Utility(correct=1.0, wrong=0.0, abstain=-1.0)


def truthkeeper_answers(claims: Claims, attribute: str | Mapping[str, str], items: list[str],
                        similarity: Similarity | None = None, dependence: bool = False,
                        correlation: bool = True) -> dict[str, tuple[str, float]]:
    """Claims in as facts, ``learn_from_agreement()``, then ``decide()`` for ``items``;
    ``attribute`` one for all, or per item. Values under the ``number`` rule go in as
    numbers (so that ``Similarity.numbers()`` applies) and come out as they were written."""
    attr = (lambda item: attribute) if isinstance(attribute, str) else attribute.__getitem__

    def typed(item: str, v: str) -> Any:
        return float(v) if attr(item) == "number" else v

    with Memory(protected_tiers=(), similarity=similarity) as mem:
        mem.add_many({"subject": item, "attribute": attr(item), "value": typed(item, v),
                      "source": w, "tier": "unverified", "valid_from": "2026-01-01"}
                     for item, cs in claims.items() for w, v in cs)
        mem.learn_from_agreement(dependence=dependence, correlation=correlation)
        out = {}
        for item in items:
            d = mem.decide(item, attr(item), utility=_ANSWER)
            value = (normalise_number(str(d.value)) or str(d.value)) if attr(item) == "number" \
                else d.value
            out[item] = (value, d.p)
    return out


def _score(answers: dict[str, tuple[str, float]], gold: dict[str, str]) -> dict[str, Any]:
    """Accuracy, ECE (10 equal-width, 15 equal-mass bins), Brier and log loss of "the
    answer is right" (a method that says 1.0 and is wrong scores ln 10^12 = 27.6 there);
    and what each ECE would be if the probabilities were calibrated, on this many gold
    items."""
    items = [i for i in gold if i in answers]
    ok = [answers[i][0] == gold[i] for i in items]
    p = [answers[i][1] for i in items]
    return {"accuracy": sum(ok) / len(items), "ece": ece(p, ok),
            "ece_mass15": ece(p, ok, bins=15, equal_mass=True), "brier": brier(p, ok),
            "log_loss": log_loss(p, ok), "gold_items": len(items),
            "ece_if_calibrated": ece_if_calibrated(p, ok),
            "ece_mass15_if_calibrated": ece_if_calibrated(p, ok, bins=15, equal_mass=True)}


_SIMILARITY: dict[str, tuple[Callable[[str, str], float] | None, Similarity | None]] = {
    "authors": (jaccard, Similarity.tokens()), "number": (near_numbers, _NEAR)}
"""Per matching rule: TruthFinder's implication and truthkeeper's similarity, where the
values have one (word sets overlap; numbers come near)."""


def evaluate_truth(root: Path) -> dict[str, Any]:
    """Every method on every data set under ``root`` (:func:`.truth_data.find_truth_sets`)."""
    from . import truth_data

    doc = truth_data.__doc__ or ""
    out: dict[str, Any] = {"matching": doc[doc.find("Matching rules"):].strip(), "sets": {}}
    for folder in find_truth_sets(root):
        try:
            claims, gold, rule_of = load_truth_set(folder)
        except (ValueError, csv.Error, OSError) as exc:
            print(f"skipping {folder.name}: {exc}", file=sys.stderr)
            continue
        items = [i for i in gold if i in claims]
        if not items:
            print(f"skipping {folder.name}: no gold value for an item with claims",
                  file=sys.stderr)
            continue
        res: dict[str, Any] = {"items": len(claims), "claims": sum(map(len, claims.values())),
                               "sources": len({w for cs in claims.values() for w, _ in cs}),
                               "rules": sorted(set(rule_of.values()))}
        # gold values no source claims: no method that picks a claimed value can get these
        res["gold_not_claimed"] = sum(gold[i] not in {v for _, v in claims[i]} for i in items)
        only = set(rule_of.values())  # one rule for every item: its similarity, if any
        tf_sim, sim = _SIMILARITY.get(only.pop(), (None, None)) if len(only) == 1 else (None, None)
        run = functools.partial(truthkeeper_answers, claims, rule_of, items)
        runs: dict[str, Callable[[], dict[str, tuple[str, float]]]] = {
            "majority_vote": functools.partial(majority_vote, claims),
            "truthfinder": functools.partial(truthfinder, claims, similarity=tf_sim),
            "accu": functools.partial(accu, claims),
            "truthkeeper": run,
            "truthkeeper_independent_claims": functools.partial(run, correlation=False),
            "truthkeeper_dependence": functools.partial(run, None, True),
        }
        if sim is not None:  # values that come near each other support each other
            runs["truthkeeper_similarity"] = functools.partial(run, sim)
            runs["truthkeeper_similarity_dependence"] = functools.partial(run, sim, True)
        for method, fn in runs.items():
            t = time.perf_counter()
            try:
                answers = fn()
            except TruthkeeperError as exc:  # a claim the memory refuses: said, not fatal
                res[method] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            res[method] = {**_score(answers, gold), "seconds": time.perf_counter() - t}
        out["sets"][folder.name] = res
    return out

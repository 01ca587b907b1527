"""Decisions under a utility: answer with the best value, or abstain."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..results import Alternative, Decision, Utility
from ..values import Resolution
from .book import ReliabilityBook

__all__ = ["decide", "decide_slot"]


def decide(u: Utility, options: Sequence[tuple[Any, float, tuple[float, float] | None]],
           why: str) -> Decision:
    """The option of highest expected utility, or abstain when none beats abstaining.

    Examples
    --------
    >>> d = decide(Utility(correct=1, wrong=-4, abstain=0), [("a", 0.7, None)], "one value")
    >>> d.action, round(d.expected_utility, 2)
    ('abstain', 0)
    >>> decide(Utility(), [("a", 0.9, None), ("b", 0.1, None)], "two").value
    'a'
    """
    alts = sorted((Alternative(v, p, p * u.correct + (1 - p) * u.wrong, iv)
                   for v, p, iv in options), key=lambda a: -a.expected_utility)
    best = alts[0]
    if best.expected_utility > u.abstain:
        return Decision("answer", best.value, best.p, best.expected_utility, tuple(alts), why)
    return Decision("abstain", best.value, best.p, u.abstain, tuple(alts),
                    f"{why}; no answer beats abstaining ({u.abstain})")


def decide_slot(book: ReliabilityBook, r: Resolution, u: Utility) -> Decision:
    """Decide a slot: abstain when it is unknown; otherwise weigh each candidate value by
    P(value is the truth) (a resolved value still competes with "something else"; on a
    categorical attribute, every category competes, claimed or not)."""
    from .conflict import (
        category_options,
        claim_probabilities,
        claims_of,
        score_candidates,
        score_set,
    )

    if r.status == "unknown":
        return Decision("abstain", None, 0.0, u.abstain, (), "the slot has no facts")
    if isinstance(r.value, tuple) or any(not c.present for c in r.candidates):
        _, members, p = score_set(book, r)  # a set: answered whole, members weighed apart
        return decide(u, [(members, p, None)], r.status)
    claims = claims_of(r)
    options = category_options(book, claims, r.attribute)
    if options is not None:
        return decide(u, options, r.status)
    if r.status == "resolved":
        [(p, iv)] = claim_probabilities(book, claims, attribute=r.attribute)
        return decide(u, [(r.candidates[0].value, p, iv)], r.status)
    cands = r.candidates if r.candidates[0].p is not None else score_candidates(book, r)
    return decide(u, [(c.value, c.p or 0.0, c.interval) for c in cands], r.status)

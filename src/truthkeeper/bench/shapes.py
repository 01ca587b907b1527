"""Shapes of memory an agent builds whose calls were quadratic in their size, for ``bench
perf`` (``"shapes"``): each call's milliseconds at two sizes, so that a call that grows
faster than its input shows it (the ratio of the two).

- ``decide`` of a set: members were looked up in a list (10,000 members 7.7 s).
- ``what_if`` of a rule joining every pair of people in a company: the beliefs before and
  after were compared list against list (89,700 beliefs, 400 s).
- ``learn_from_agreement`` over a poll of distinct answers: each claim's value was looked
  for among the slot's values in a list (6,000 values, 4 s).
- ``add_rule``, one rule after another (n rules, each deriving a belief of 100 subjects):
  each was checked by listing every belief as text (400 rules 18 s).
- ``filter`` of a retrieved context over as many slots as candidates, each slot with a
  value that ended: each candidate's slot, and each head, was looked for in a list of
  them all (8,000 candidates 1.3 s; with a ``kappa`` 36 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..memory import Memory
from ..values import Candidate

__all__ = ["run"]


def _ms(call: Any) -> float:
    t = time.perf_counter()
    call()
    return (time.perf_counter() - t) * 1e3


def _set_decide(n: int) -> float:
    with Memory() as mem:
        mem.declare("member", cardinality="many")
        mem.add_many([{"subject": "team", "attribute": "member", "value": f"p{i}",
                       "source": "hr", "valid_from": "2026-01-01"} for i in range(n)])
        mem.current("team", "member")
        return _ms(lambda: mem.decide("team", "member"))


def _join_what_if(n: int) -> float:
    with Memory() as mem:
        facts = mem.add_many([{"subject": f"p{i}", "attribute": "employer", "value": "acme",
                               "source": "hr", "valid_from": "2026-01-01"} for i in range(n)])
        mem.add_rule("colleague(X, Y) :- holds(X, employer, E), holds(Y, employer, E), "
                     "X \\== Y")
        mem.beliefs()
        return _ms(lambda: mem.what_if(retract=[facts[0].id]))


def _poll_learning(n: int) -> float:
    with Memory() as mem:
        mem.add_many([{"subject": "poll", "attribute": "answer", "value": f"v{i}",
                       "source": f"s{i}", "valid_from": "2026-01-01"} for i in range(n)])
        return _ms(lambda: mem.learn_from_agreement())


def _wide_filter(n: int, kappa: bool) -> float:
    with Memory() as mem:
        for value, since, until in (("A", "2025-01-01", "2026-01-01"), ("B", "2026-02-01", None)):
            mem.add_many([{"subject": f"e{i}", "attribute": "city", "value": value,
                           "source": "crm", "valid_from": since, "valid_to": until}
                          for i in range(n)])
        items = [Candidate(f"e{i}", "city", "A", "2025-06-01") for i in range(n)]
        mem.filter(items)
        return _ms(lambda: mem.filter(items, kappa=(lambda a, b: a.value != b.value)
                                      if kappa else None))


def _rule_adds(n: int) -> float:
    with Memory() as mem:
        mem.add_many([{"subject": f"u{i}", "attribute": f"a{i % 50}", "value": "x",
                       "source": "s", "valid_from": "2026-01-01"} for i in range(5_000)])
        t = time.perf_counter()
        for r in range(n):
            mem.add_rule(f"p{r}(U) :- holds(U, a{r % 50}, x)")
        return (time.perf_counter() - t) * 1e3


def run(small: bool = False) -> dict[str, Any]:
    """Each shape at two sizes (``small``: a tenth of them, for a quick look), after a
    call at a small size (a process's first call fits the reliability model's code). The
    join's size is its beliefs: n people make n(n - 1)."""
    k = 10 if small else 1
    out: dict[str, Any] = {}
    shapes: list[tuple[str, Callable[[int], float], tuple[int, int], Callable[[int], int]]] = [
        ("set_decide_ms", _set_decide, (1_000, 10_000), lambda n: n),
        ("join_what_if_ms", _join_what_if, (100, 300), lambda n: n * (n - 1)),
        ("poll_learning_ms", _poll_learning, (2_000, 6_000), lambda n: n),
        ("rule_adds_ms", _rule_adds, (100, 400), lambda n: n),
        ("wide_filter_ms", lambda n: _wide_filter(n, False), (2_000, 8_000), lambda n: n),
        ("wide_filter_kappa_ms", lambda n: _wide_filter(n, True), (2_000, 8_000),
         lambda n: n)]
    for name, call, sizes, size_of in shapes:
        call(10)
        a, b = (max(s // k, 10) for s in sizes)
        ta, tb = call(a), call(b)
        out[name] = {str(size_of(a)): ta, str(size_of(b)): tb,
                     "size_ratio": size_of(b) / size_of(a), "time_ratio": tb / ta}
    return out

"""Hypothesis strategies and invariant checks for supersession policies, yours included.

Use the strategies in your own property tests, and ``check_policy`` to verify a policy
against the invariants of ``docs/design.md``; each failed invariant comes with the shrunk
counterexample (facts you can paste into a test). Needs Hypothesis (``pip install
truthkeeper[testing]``).

Examples
--------
>>> from truthkeeper import Policy
>>> from truthkeeper.testing import check_policy
>>> report = check_policy("temporal", max_examples=20)
>>> report.ok, [r.name for r in report.results if not r.ok]
(True, [])
>>> older_wins = Policy.from_prolog("doc_older_wins", '''
...     dominates(F, G) :- rank(F, R), rank(G, R), valid_from(F, TF), valid_from(G, TG),
...                        TF < TG.''')
>>> report = check_policy(older_wins, max_examples=50)
>>> report.ok, "chain_collapses" in [r.name for r in report.results if not r.ok]
(False, True)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from .logic.policy import Policy
from .memory import Memory
from .values import Candidate, normalise_key, parse_time, value_key

__all__ = [
    "INVARIANTS",
    "SHIPPED_EXPECTATIONS",
    "CheckResult",
    "PolicyReport",
    "at",
    "attributes",
    "candidates",
    "check_policy",
    "facts",
    "histories",
    "hostile_values",
    "offsets",
    "open_tiers",
    "policies",
    "sources",
    "subjects",
    "tiers",
    "values",
]

BASE = datetime(2026, 1, 1, tzinfo=UTC)

subjects = st.sampled_from(["acme", "Acme ", "globex", "ana", "x'), halt. %"])
attributes = st.sampled_from(["price", "location", "invoice_total"])
values = st.one_of(
    st.integers(min_value=-5, max_value=5),
    st.sampled_from(["a", "B", "b ", "x'), halt. %", "foo(X) :- halt.", "'\"", "",
                     "true", "false", "1", "1.0", "@(true)", "json([1])"]),
    st.sampled_from([1.0, 2.5, -0.0, None]),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=2),
)
"""Values whose types must not be confused: "true" and True, "1", 1 and 1.0, None, lists."""
tiers = st.sampled_from(["human", "verified", "agent", "unverified"])
"""Every default tier, the protected ``human`` included (a memory that accepts them all:
``Memory(protected_tiers=())``)."""
open_tiers = st.sampled_from(["verified", "agent", "unverified"])
"""The tiers a default ``Memory()`` accepts unsigned: what ``facts``, ``histories`` and
``candidates`` draw unless given ``tiers=``."""
sources = st.sampled_from(["s", "t", "u"])
policies = st.sampled_from(["temporal", "authority_first", "temporal_within_authority"])
offsets = st.integers(min_value=0, max_value=50)
"""Minutes after BASE: small, so that equal valid times (one source or several) are common."""
hostile_values = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=20),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.recursive(st.integers(), lambda c: st.lists(c, max_size=2), max_leaves=300),
    st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), st.integers(), max_size=2),
    st.tuples(st.integers()), st.binary(max_size=4), st.none(),
    st.sampled_from([10**5000, -(10**4400), [10**5000]]),  # past Python's int-to-str limit
)
"""Values a hostile caller passes: surrogates, huge numbers (some too long for Python to
print), NaN, deep nesting, tuples, bytes."""


def at(minutes: int) -> datetime:
    """A valid time ``minutes`` after 2026-01-01 UTC."""
    return BASE + timedelta(minutes=minutes)


@st.composite
def facts(draw: Any, *, slots: Sequence[tuple[str, str]] = (("acme", "price"),),
          sources: st.SearchStrategy[str] = sources,
          tiers: st.SearchStrategy[str] = open_tiers) -> dict[str, Any]:
    """One fact as ``add_many`` takes it; a source keeps one tier (its name carries it)."""
    s, a = draw(st.sampled_from(list(slots)))
    tier = draw(tiers)
    return {"subject": s, "attribute": a, "value": draw(values),
            "source": f"{draw(sources)}:{tier}", "tier": tier,
            "valid_from": at(draw(offsets))}


def histories(*, slots: Sequence[tuple[str, str]] = (("acme", "price"), ("ana", "city")),
              sources: st.SearchStrategy[str] = sources,
              tiers: st.SearchStrategy[str] = open_tiers, max_size: int = 12,
              ) -> st.SearchStrategy[list[dict[str, Any]]]:
    """A slot history in insertion order (lists of facts over a few slots)."""
    return st.lists(facts(slots=slots, sources=sources, tiers=tiers), min_size=1,
                    max_size=max_size)


def candidates(*, tiers: st.SearchStrategy[str] = open_tiers,
               max_size: int = 15) -> st.SearchStrategy[list[Candidate]]:
    """A retrieved candidate set over a few slots."""
    one = st.builds(lambda s, a, v, t, tier: Candidate(s, a, v, at(t), tier=tier),
                    subjects, st.sampled_from(["price", "city"]), values, offsets, tiers)
    return st.lists(one, max_size=max_size)


# --------------------------------------------------------------------------- invariants


@dataclass(frozen=True)
class CheckResult:
    """One invariant checked against a policy: ``ok``, whether it was ``expected`` to hold,
    and the shrunk counterexample when it does not."""

    name: str
    ok: bool
    expected: bool
    counterexample: Any = None
    description: str = ""

    @property
    def as_expected(self) -> bool:
        """True when the invariant holds, or fails where the policy breaks it on purpose."""
        return self.ok or not self.expected


@dataclass(frozen=True)
class PolicyReport:
    """Every invariant checked against one policy."""

    policy: str
    results: tuple[CheckResult, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """Every invariant the policy is expected to satisfy holds."""
        return all(r.as_expected for r in self.results)

    def __str__(self) -> str:
        lines = [f"policy {self.policy}: {'ok' if self.ok else 'FAILED'}"]
        for r in self.results:
            mark = "pass" if r.ok else ("fail (expected)" if not r.expected else "FAIL")
            lines.append(f"  {mark:16} {r.name}: {r.description}")
            if not r.ok:
                lines.append(f"  {'':16} counterexample: {_describe(r.counterexample)}")
        return "\n".join(lines)


def _describe(case: Any) -> str:
    """A counterexample as short text: candidates and facts as (subject, attribute, value,
    valid_from, tier)."""
    def one(x: Any) -> Any:
        if isinstance(x, Candidate):
            t = x.valid_from.isoformat() if isinstance(x.valid_from, datetime) else x.valid_from
            return (x.subject, x.attribute, x.value, t, x.tier)
        if isinstance(x, dict) and "subject" in x:
            t = x["valid_from"]
            return (x["subject"], x["attribute"], x["value"],
                    t.isoformat() if isinstance(t, datetime) else t, x.get("tier"))
        if isinstance(x, (list, tuple)):
            return type(x)(one(y) for y in x)
        return x
    return repr(one(case))


def _key(v: object) -> str:
    return repr(value_key(v))


def _memory(policy: str | Policy) -> Memory:
    return Memory(policy=policy, protected_tiers=())


def _chain_breaks(policy: str | Policy, case: tuple[list[Any], str, list[int]]) -> bool:
    vals, tier, order = case
    with _memory(policy) as mem:
        ids = {}
        for i in order:
            ids[i] = mem.add("s", "a", vals[i], source=f"x:{tier}", tier=tier,
                             valid_from=at(10 * i)).id
        return [f.id for f in mem.current("s", "a").heads] != [ids[2]]


def _phi_breaks(policy: str | Policy, case: tuple[list[Candidate], int]) -> bool:
    items, seed = case
    with _memory(policy) as mem:
        res = mem.filter(items)
        gone = {id(d.item) for d in res.dropped}
        if mem.filter(list(res.kept)).dropped:
            return True  # not idempotent
        shuffled = list(items)
        random.Random(seed).shuffle(shuffled)
        return {id(d.item) for d in mem.filter(shuffled).dropped} != gone


def _t(c: Candidate) -> datetime:
    return parse_time(c.valid_from, "valid_from")


def _slot(c: Candidate) -> tuple[str, str]:
    return normalise_key(c.subject, "s"), c.attribute


def _valid_dropped(policy: str | Policy, items: list[Candidate]) -> bool:
    with _memory(policy) as mem:
        gone = {id(d.item) for d in mem.filter(items).dropped}
    for x in items:
        newer_conflict = any(_slot(y) == _slot(x) and _key(y.value) != _key(x.value)
                             and _t(y) > _t(x) for y in items)
        if not newer_conflict and id(x) in gone:
            return True
    return False


def _newest_keeps_older(policy: str | Policy, items: list[Candidate]) -> bool:
    with _memory(policy) as mem:
        gone = {id(d.item) for d in mem.filter(items).dropped}
    for x in items:
        same = [y for y in items if _slot(y) == _slot(x)]
        if _t(x) == max(_t(y) for y in same):
            for y in same:
                if _t(y) < _t(x) and _key(y.value) != _key(x.value) \
                        and id(y) not in gone:
                    return True
    return False


def _cyclic(policy: str | Policy, history: list[dict[str, Any]]) -> bool:
    with _memory(policy) as mem:
        mem.add_many(history)
        for s, a in {(normalise_key(f["subject"], "s"), f["attribute"]) for f in history}:
            live = [f for f in mem.history(s, a) if f.status != "retracted"]
            if live and not mem.current(s, a).heads:
                return True  # every live fact dominated: a cycle
            for f in live:
                just = mem.why(f)
                if f.id in just.details["dominates"]:
                    return True  # reflexive
    return False


def _filter_not_heads(policy: str | Policy, history: list[dict[str, Any]]) -> bool:
    with _memory(policy) as mem:
        added = mem.add_many(history)
        kept = set(mem.filter([f.id for f in added]).kept)
        heads = set()
        for s, a in {(f.subject, f.attribute) for f in added}:
            heads |= {f.id for f in mem.current(s, a).heads}
        return kept != heads


def _chains() -> st.SearchStrategy[Any]:
    three = st.lists(values, min_size=3, max_size=3).filter(
        lambda vs: len({_key(v) for v in vs}) == 3)
    return st.tuples(three, tiers, st.permutations([0, 1, 2]))


INVARIANTS: dict[str, tuple[str, Callable[[], st.SearchStrategy[Any]],
                            Callable[[Any, Any], bool]]] = {
    "chain_collapses": ("A -> B -> C of one source and tier collapses to C in every "
                        "insertion order", _chains, _chain_breaks),
    "phi_idempotent_and_order_free": ("filtering the kept items drops nothing; the input "
                                      "order does not matter",
                                      lambda: st.tuples(candidates(tiers=tiers),
                                                        st.integers(0, 99)),
                                      _phi_breaks),
    "no_valid_fact_dropped": ("a candidate with no conflicting newer one in its slot is "
                              "kept", lambda: candidates(tiers=tiers), _valid_dropped),
    "newest_drops_older": ("the newest candidate of a slot drops every older conflicting "
                           "one (Theorem 4.1 of seed 000)", lambda: candidates(tiers=tiers),
                           _newest_keeps_older),
    "irreflexive_and_acyclic": ("no fact dominates itself; every slot with live facts has "
                                "a head", lambda: histories(tiers=tiers), _cyclic),
    "filter_keeps_heads": ("filtering a memory's own facts keeps exactly the chain heads",
                           lambda: histories(tiers=tiers), _filter_not_heads),
}
"""Every invariant: its description, the strategy of cases, and a predicate that is True
when a case breaks it."""

SHIPPED_EXPECTATIONS: dict[str, frozenset[str]] = {
    "temporal": frozenset(INVARIANTS),
    "temporal_within_authority": frozenset(INVARIANTS) - {"newest_drops_older"},
    "authority_first": frozenset(INVARIANTS) - {"newest_drops_older",
                                                "no_valid_fact_dropped"},
}
"""Which invariants each shipped policy satisfies: ranks let an older, more authoritative
fact stand against (``temporal_within_authority``) or drop (``authority_first``) a newer
one, on purpose."""


def check_policy(policy: str | Policy, *, max_examples: int = 100,
                 expect: Sequence[str] | None = None) -> PolicyReport:
    """Check every invariant against a policy; each failure carries its shrunk
    counterexample.

    Parameters
    ----------
    policy
        A shipped policy's name or a :class:`~truthkeeper.Policy`.
    max_examples
        Hypothesis examples per invariant.
    expect
        The invariants the policy is meant to satisfy (default: those of the shipped policy
        of that name, else all of them).
    """
    name = policy.name if isinstance(policy, Policy) else policy
    expected = frozenset(expect) if expect is not None else SHIPPED_EXPECTATIONS.get(
        name, frozenset(INVARIANTS))
    # derandomized: the same policy gets the same report on every run (a random search could
    # miss a rare counterexample one run in many and report a different set of invariants)
    cfg = settings(max_examples=max_examples, database=None, deadline=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))
    results = []
    for inv, (description, strategy, breaks) in INVARIANTS.items():
        def violated(case: Any, breaks: Callable[[Any, Any], bool] = breaks) -> bool:
            return breaks(policy, case)

        try:
            example = find(strategy(), violated, settings=cfg)
        except NoSuchExample:
            results.append(CheckResult(inv, True, inv in expected, None, description))
        else:
            results.append(CheckResult(inv, False, inv in expected, example, description))
    return PolicyReport(name, tuple(results))

"""What the memory's answers and reports are made of, beyond facts and slots: a
hypothetical change's effects, decisions with their utilities, reliability summaries, the
journal's verification and the audit log's entries. Every one converts to JSON
(``to_dict``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .fastinit import quick_init
from .values import Belief, Fact, ToDict, jsonable

__all__ = ["Alternative", "AuditEntry", "Decision", "Dispute", "Drop", "FilterResult",
           "HeadChange", "SourceReliability", "Utility", "Verification", "WhatIf"]


@dataclass(frozen=True, slots=True)
class HeadChange(ToDict):
    """A slot whose heads a hypothetical change would alter (``WhatIf.heads``).

    Attributes
    ----------
    subject, attribute
        The slot.
    heads_before, heads_after
        The ids of its heads now and after the change.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); f = mem.add("ana", "city", "Lisbon", source="s")
    >>> h = mem.what_if(retract=[f.id]).heads[0]
    >>> h.heads_before == (f.id,), h.heads_after
    (True, ())
    """

    subject: str
    attribute: str
    heads_before: tuple[str, ...]
    heads_after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WhatIf(ToDict):
    """The result of ``Memory.what_if``: what would change; nothing was written.

    Attributes
    ----------
    heads
        The slots whose heads would change (:class:`HeadChange`).
    beliefs_gained, beliefs_lost
        The beliefs that would appear and go.
    changed
        Whether anything would change.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); mem.add_rule("local(X) :- holds(X, city, lisbon)")
    >>> w = mem.what_if(add=[{"subject": "ana", "attribute": "city", "value": "Lisbon",
    ...                       "source": "s"}])
    >>> w.changed, [b.text for b in w.beliefs_gained]
    (True, ['local(ana)'])
    """

    heads: tuple[HeadChange, ...]
    beliefs_gained: tuple[Belief, ...]
    beliefs_lost: tuple[Belief, ...]

    @property
    def changed(self) -> bool:
        """Whether any head or belief would change."""
        return bool(self.heads or self.beliefs_gained or self.beliefs_lost)


@dataclass(frozen=True, slots=True, kw_only=True)
class Utility(ToDict):
    """What an answer is worth (keyword arguments): ``decide`` answers only when the
    expected utility of answering beats abstaining.

    Attributes
    ----------
    correct
        The gain of a right answer.
    wrong
        The gain (a loss: negative) of a wrong one.
    abstain
        The value of abstaining.

    Examples
    --------
    >>> from truthkeeper import Memory, Utility
    >>> mem = Memory()
    >>> _ = mem.add("ana", "city", "Lisbon", source="a", valid_from="2026-01-01")
    >>> _ = mem.add("ana", "city", "Porto", source="b", valid_from="2026-01-01")
    >>> mem.decide("ana", "city", utility=Utility(correct=1, wrong=-100)).action
    'abstain'
    """

    correct: float = 1.0
    wrong: float = -1.0
    abstain: float = 0.0


@dataclass(frozen=True, slots=True)
class Alternative(ToDict):
    """One possible answer of a decision, with its probability and expected utility.

    Attributes
    ----------
    value
        The answer.
    p, interval
        Its probability of being right and the 90% interval (None when not sampled).
    expected_utility
        What answering it is worth on average, under the decision's utility.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
    >>> a = mem.decide("ana", "city").alternatives[0]; a.value, a.p > 0.5
    ('Lisbon', True)
    """

    value: Any
    p: float
    expected_utility: float
    interval: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class Decision(ToDict):
    """What ``decide`` or ``resolve_context`` chose.

    Attributes
    ----------
    action
        ``"answer"`` or ``"abstain"``.
    value, p
        The chosen answer (when abstaining: the most probable one) and its probability.
    expected_utility
        What the chosen action is worth on average.
    alternatives
        Every candidate answer, best first (:class:`Alternative`).
    reason
        Why, in words.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
    >>> d = mem.decide("ana", "city"); d.action, d.value
    ('answer', 'Lisbon')
    """

    action: str
    value: Any
    p: float
    expected_utility: float
    alternatives: tuple[Alternative, ...]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class SourceReliability(ToDict):
    """Posterior summary of one source's reliability (``Memory.reliability``).

    Attributes
    ----------
    source, tier
        The source and the tier it is bound to.
    mean, low, high
        The posterior mean probability that it is right, and its 90% interval.
    n
        The outcomes seen.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); mem.record_source_outcome("web", correct=True)
    >>> r = mem.reliability()[0]; r.source, r.n, r.low < r.mean < r.high
    ('web', 1, True)
    """

    source: str
    tier: str
    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True, slots=True)
class Verification(ToDict):
    """The result of ``Memory.verify()``.

    Attributes
    ----------
    ok
        Whether everything checked.
    events
        The events checked.
    first_bad, reason
        The first bad event's seq and why (None when ok).
    head_hash
        The hash of the last good event: record it elsewhere to anchor the chain.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> v = Memory().verify(); v.ok, v.events, v.first_bad
    (True, 1, None)
    """

    ok: bool
    events: int
    first_bad: int | None
    reason: str | None
    head_hash: str


@dataclass(frozen=True, slots=True)
class AuditEntry(ToDict):
    """One line of the audit log (``Memory.audit``).

    Attributes
    ----------
    kind
        ``"drop"`` (made by ``filter``) or ``"rejected_write"``.
    at
        When.
    details
        What: the query, the item, what dominated it and the rule; or the refused
        write's error and arguments.

    Examples
    --------
    >>> from truthkeeper import Candidate, Memory
    >>> mem = Memory(policy="temporal")
    >>> _ = mem.filter([Candidate("a", "b", 1, "2026-01-01"),
    ...                 Candidate("a", "b", 2, "2026-02-01")], query="b?")
    >>> e = mem.audit()[0]; e.kind, e.details["query"], e.details["rule"]
    ('drop', 'b?', 'temporal')
    """

    kind: str
    at: datetime
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)


class Drop(ToDict):
    """An item ``filter`` removed, the item that dominates it and the rule that applied.

    Immutable, compared and hashed by ``(item, dominated_by, rule)``. A memory's fact
    that dominates is made into a :class:`Fact` when ``dominated_by`` is first read, so a
    caller that keeps only ``FilterResult.kept`` never pays for the winners' Facts.

    Attributes
    ----------
    item
        The dropped item, as given.
    dominated_by
        The item or fact that dominates it. For ``"ended"``: the memory's fact whose
        value the item restates from before that fact's end (no head holds the value
        now), or None when the item itself ended; None when it was retracted.
    rule
        The policy, ``"supersedes"``, ``"kappa"``, ``"ended"`` or ``"retracted"``.

    Examples
    --------
    >>> from truthkeeper import Candidate, Memory
    >>> mem = Memory(policy="temporal")
    >>> f = mem.add("ana", "city", "Porto", source="s", valid_from="2026-06-01")
    >>> d = mem.filter([Candidate("ana", "city", "Lisbon", "2026-01-01")]).dropped[0]
    >>> d.dominated_by == f, d.rule
    (True, 'temporal')
    """

    __slots__ = ("_by", "_make", "item", "rule")
    __match_args__ = ("item", "dominated_by", "rule")

    item: Any
    rule: str
    _by: Any
    _make: Callable[[], Any] | None

    def __init__(self, item: Any, dominated_by: Any, rule: str, *,
                 make: Callable[[], Any] | None = None) -> None:
        put = object.__setattr__  # frozen: set once here (a filter makes one per drop)
        put(self, "item", item)
        put(self, "_by", dominated_by)
        put(self, "rule", rule)
        put(self, "_make", make)

    @property
    def dominated_by(self) -> Any:
        """The item or fact that dominates ``item`` (for ``"ended"``: the memory's fact whose
        end it restates, or None; None when it was retracted)."""
        make = self._make
        if make is not None:
            object.__setattr__(self, "_by", make())
            object.__setattr__(self, "_make", None)
        return self._by

    def __setattr__(self, name: str, value: Any) -> None:
        msg = f"cannot assign to field {name!r}"
        raise dataclasses.FrozenInstanceError(msg)

    def __delattr__(self, name: str) -> None:
        msg = f"cannot delete field {name!r}"
        raise dataclasses.FrozenInstanceError(msg)

    def _fields(self) -> tuple[Any, Any, str]:
        return (self.item, self.dominated_by, self.rule)

    def __eq__(self, other: object) -> bool:
        return other._fields() == self._fields() if type(other) is Drop else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Drop(item={self.item!r}, dominated_by={self.dominated_by!r}, rule={self.rule!r})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of this drop.

        Returns
        -------
        dict
            ``item``, ``dominated_by`` (as dicts when they are results or facts) and ``rule``.

        Examples
        --------
        >>> from truthkeeper import Candidate, Memory
        >>> res = Memory(policy="temporal").filter([Candidate("a", "b", 1, "2026-01-01"),
        ...                                         Candidate("a", "b", 2, "2026-02-01")])
        >>> res.dropped[0].to_dict()["rule"]
        'temporal'
        """
        return {"item": jsonable(self.item), "dominated_by": jsonable(self.dominated_by),
                "rule": self.rule}


@quick_init
@dataclass(frozen=True, slots=True)
class FilterResult(ToDict):
    """What ``Memory.filter`` kept and dropped.

    Attributes
    ----------
    kept
        The kept items, in input order.
    dropped
        A :class:`Drop` for each removed item, in input order.
    disputed
        A :class:`Dispute` for each kept :class:`Candidate` whose value none of the
        memory's heads of its slot holds, where neither makes the other obsolete (a head
        the context makes obsolete takes no part), in input order; empty when a
        ``kappa`` judges conflicts.

    Examples
    --------
    >>> from truthkeeper import Candidate, Memory
    >>> res = Memory(policy="temporal").filter([Candidate("a", "b", 1, "2026-01-01"),
    ...                                         Candidate("a", "b", 2, "2026-02-01")])
    >>> [c.value for c in res.kept], [d.item.value for d in res.dropped]
    ([2], [1])
    """

    kept: tuple[Any, ...]
    dropped: tuple[Drop, ...]
    disputed: tuple[Dispute, ...] = ()


@dataclass(frozen=True, slots=True)
class Dispute(ToDict):
    """A kept candidate whose value none of the memory's heads of its slot holds (of a set:
    of its member), where neither the candidate nor those heads make the other obsolete
    under the policy: under the default policy, a newer claim of a lower tier than the
    memory's fact. It is not stale, but it is not what the memory holds either
    (``resolve_context`` weighs a passage against the memory).

    Attributes
    ----------
    item
        The kept candidate, as given.
    heads
        The memory's facts it disagrees with (the same tuple for every candidate of the
        slot).

    Examples
    --------
    >>> from truthkeeper import Candidate, Memory
    >>> mem = Memory()
    >>> f = mem.add("acme", "price", 120, source="catalog", tier="verified",
    ...             valid_from="2026-03-01")
    >>> res = mem.filter([Candidate("acme", "price", 150, "2026-04-01", source="forum")])
    >>> [c.value for c in res.kept], [(d.item.value, [h.value for h in d.heads])
    ...                               for d in res.disputed]
    ([150], [(150, [120])])
    """

    item: Any
    heads: tuple[Fact, ...]

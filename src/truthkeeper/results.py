"""What the memory's answers and reports are made of, beyond facts and slots: a
hypothetical change's effects, decisions with their utilities, reliability summaries, the
journal's verification and the audit log's entries. Every one converts to JSON
(``to_dict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .values import Belief, ToDict

__all__ = ["Alternative", "AuditEntry", "Decision", "HeadChange", "SourceReliability",
           "Utility", "Verification", "WhatIf"]


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

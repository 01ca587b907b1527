"""The API's value types (frozen dataclasses, each with ``to_dict``).

The validation of user input lives in :mod:`.validation` and the normalisation of keys and
values in :mod:`.keys`; their names are re-exported here, where the rest of the package has
always found them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import Any

from .errors import InvalidFact

__all__ = [
    "MAX_KEY_CHARS",
    "MAX_VALUE_BYTES",
    "Alternative",
    "AuditEntry",
    "Belief",
    "Candidate",
    "Decision",
    "Drop",
    "Fact",
    "FilterResult",
    "HeadChange",
    "Justification",
    "Resolution",
    "SourceReliability",
    "Utility",
    "ValueSupport",
    "Verification",
    "WhatIf",
]



class ToDict:
    """``to_dict()``: every result converts to JSON (times as ISO 8601, tuples as lists)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of this result."""
        out = jsonable(self)
        if isinstance(self, Justification):
            out["text"] = str(self)
        return out  # type: ignore[no-any-return]


def jsonable(x: Any) -> Any:
    """``x`` as JSON-ready data: results and facts as dicts, times as ISO 8601 strings."""
    if isinstance(x, (Fact, Drop)):
        return x.to_dict()
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)
                if not f.name.startswith("_")}
    if isinstance(x, datetime):
        return x.isoformat()
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    return str(x)


@dataclass(frozen=True, slots=True)
class Fact:
    """One assertion about a slot. Immutable once written.

    ``status`` is filled in by queries that report it (``history``): ``"head"``,
    ``"superseded"``, ``"retracted"``, ``"ended"`` (its ``valid_to`` has passed, and no
    newer fact superseded it) or ``"future"`` (its ``valid_from`` has not come yet, at
    the memory's clock); it is ``None`` on the object ``add`` returns.
    An erased fact (``Memory.erase``) keeps its slot, source, tier and times; its value,
    text and meta are gone (``None``) and its status is ``"erased"``. ``scope`` is the
    scope it was written in (``Memory.scope``), ``None`` for the memory's own.
    """

    id: str
    subject: str
    attribute: str
    value: Any
    valid_from: datetime
    recorded_at: datetime
    source: str
    tier: str
    supersedes: str | None = None
    valid_to: datetime | None = None
    text: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    signature: Mapping[str, str] | None = field(default=None, compare=False, hash=False)
    status: str | None = field(default=None, compare=False)
    scope: str | None = None
    present: bool = True
    """False for a fact that says its value is *no longer* a member of a set attribute
    (``declare(attribute, cardinality="many")``): it ends that member's chain."""

    @property
    def slot(self) -> tuple[str, str]:
        """The normalised ``(subject, attribute)`` key."""
        return (self.subject, self.attribute)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO 8601 strings)."""
        return {
            "id": self.id,
            "subject": self.subject,
            "attribute": self.attribute,
            "value": self.value,
            "valid_from": self.valid_from.isoformat(),
            "recorded_at": self.recorded_at.isoformat(),
            "source": self.source,
            "tier": self.tier,
            "supersedes": self.supersedes,
            "valid_to": None if self.valid_to is None else self.valid_to.isoformat(),
            "text": self.text,
            "meta": dict(self.meta),
            "signature": None if self.signature is None else dict(self.signature),
        } | ({} if self.scope is None else {"scope": self.scope}) \
          | ({} if self.status is None else {"status": self.status}) \
          | ({} if self.present else {"present": False})


@dataclass(frozen=True, slots=True)
class Candidate(ToDict):
    """A retrieved item that is not (necessarily) a fact of this memory, for ``filter``."""

    subject: str
    attribute: str
    value: Any
    valid_from: datetime | str
    _: KW_ONLY
    tier: str = "agent"
    source: str | None = None
    text: str | None = None
    valid_to: datetime | str | None = None
    """When the retrieved statement stopped being true: at or before the memory's clock,
    the candidate is stale (dropped with rule ``"ended"``)."""


@dataclass(frozen=True, slots=True)
class ValueSupport(ToDict):
    """One candidate value of a slot, with the head facts and sources that support it.

    ``p`` (posterior probability that this value is the truth) and ``interval`` are filled
    by the Bayesian layer; they are ``None`` when it has not been consulted.
    """

    value: Any
    fact_ids: tuple[str, ...]
    sources: tuple[str, ...]
    p: float | None = None
    interval: tuple[float, float] | None = None
    best: bool = False
    present: bool = True
    """In a set (``cardinality="many"``): False for the facts that say ``value`` left it."""


@dataclass(frozen=True, slots=True)
class Resolution(ToDict):
    """What a slot's current value is: ``status`` is resolved, conflict or unknown.

    ``value`` is set only when resolved; a conflict never silently picks a winner, the
    candidates carry every value with its support. ``best`` and ``best_p``: in a conflict,
    the value the Bayesian layer finds most probable and its probability (None otherwise):
    a reading an agent may use, apart from ``value``, which stays None. A set's ``value``
    (``cardinality="many"``) is the tuple of its members; ``heads`` name the ``layer``
    each came from in a scope's view (``Fact.scope``: None for the shared layer).
    """

    subject: str
    attribute: str
    status: str
    value: Any
    heads: tuple[Fact, ...]
    candidates: tuple[ValueSupport, ...]
    best: Any = None
    best_p: float | None = None
    _why: Callable[[], Justification] | None = field(
        default=None, repr=False, compare=False, hash=False
    )

    def why(self) -> Justification:
        """The justification of this answer (its head facts and what they dominate)."""
        if self._why is None:
            msg = "this Resolution carries no justification"
            raise InvalidFact(msg)
        return self._why()


class Drop(ToDict):
    """An item ``filter`` removed, the item that dominates it and the rule that applied.

    Immutable, compared and hashed by ``(item, dominated_by, rule)``. A memory's fact
    that dominates is made into a :class:`Fact` when ``dominated_by`` is first read, so a
    caller that keeps only ``FilterResult.kept`` never pays for the winners' Facts.
    """

    __slots__ = ("_by", "_make", "item", "rule")
    __match_args__ = ("item", "dominated_by", "rule")

    item: Any
    rule: str
    _by: Any
    _make: Callable[[], Any] | None

    def __init__(self, item: Any, dominated_by: Any, rule: str, *,
                 make: Callable[[], Any] | None = None) -> None:
        for name, v in (("item", item), ("_by", dominated_by), ("rule", rule),
                        ("_make", make)):
            object.__setattr__(self, name, v)

    @property
    def dominated_by(self) -> Any:
        """The item or fact that dominates ``item`` (None when it ended or was retracted)."""
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
        """A JSON-ready dict of this drop."""
        return {"item": jsonable(self.item), "dominated_by": jsonable(self.dominated_by),
                "rule": self.rule}


@dataclass(frozen=True, slots=True)
class FilterResult(ToDict):
    """The kept items (in input order) and the drops."""

    kept: tuple[Any, ...]
    dropped: tuple[Drop, ...]


@dataclass(frozen=True, slots=True)
class Belief(ToDict):
    """A derived belief, e.g. ``needs_vpn(ana)``."""

    predicate: str
    args: tuple[Any, ...]
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Justification(ToDict):
    """A node of a justification tree; ``str(j)`` renders the whole tree as text."""

    kind: str
    label: str
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)
    children: tuple[Justification, ...] = ()

    def lines(self, depth: int = 0) -> list[str]:
        """The tree as indented lines."""
        out = ["  " * depth + self.label]
        for child in self.children:
            out.extend(child.lines(depth + 1))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True, slots=True)
class HeadChange(ToDict):
    """A slot whose heads a hypothetical change would alter."""

    subject: str
    attribute: str
    heads_before: tuple[str, ...]
    heads_after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WhatIf(ToDict):
    """The result of ``what_if``: what would change; nothing was written."""

    heads: tuple[HeadChange, ...]
    beliefs_gained: tuple[Belief, ...]
    beliefs_lost: tuple[Belief, ...]

    @property
    def changed(self) -> bool:
        return bool(self.heads or self.beliefs_gained or self.beliefs_lost)


@dataclass(frozen=True, slots=True, kw_only=True)
class Utility(ToDict):
    """Gain for a right answer, loss for a wrong one, value of abstaining."""

    correct: float = 1.0
    wrong: float = -1.0
    abstain: float = 0.0


@dataclass(frozen=True, slots=True)
class Alternative(ToDict):
    """One possible answer with its probability and expected utility."""

    value: Any
    p: float
    expected_utility: float
    interval: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class Decision(ToDict):
    """``action`` is ``"answer"`` or ``"abstain"``; ``value`` and ``p`` are the chosen (or,
    when abstaining, the most probable) answer; ``alternatives`` every candidate, best first."""

    action: str
    value: Any
    p: float
    expected_utility: float
    alternatives: tuple[Alternative, ...]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class SourceReliability(ToDict):
    """Posterior summary of one source's reliability: mean, 90% interval, outcomes, tier."""

    source: str
    tier: str
    mean: float
    low: float
    high: float
    n: int


@dataclass(frozen=True, slots=True)
class Verification(ToDict):
    """The result of ``Memory.verify()``: ``ok``, events checked, the first bad event (its
    seq) and why, and the hash of the last good event (record it elsewhere to anchor the
    chain)."""

    ok: bool
    events: int
    first_bad: int | None
    reason: str | None
    head_hash: str


@dataclass(frozen=True, slots=True)
class AuditEntry(ToDict):
    """One line of the audit log: a drop made by ``filter`` or a rejected write."""

    kind: str
    at: datetime
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)


# --------------------------------------------------------------------------- re-exports

from .keys import (  # noqa: E402
    MAX_KEY_CHARS,
    MAX_NESTING,
    MAX_VALUE_BYTES,
    SCOPE_SEP,
    check_scope,
    normalise_key,
    scoped,
    unscoped,
    value_key,
)
from .validation import (  # noqa: E402
    EPOCH,
    FACT_KEYS,
    FactBuilder,
    check_label,
    check_meta,
    check_nesting,
    check_source,
    check_text,
    check_tiers,
    from_us,
    parse_time,
    to_us,
)

__all__ += ["EPOCH", "FACT_KEYS", "MAX_NESTING", "SCOPE_SEP", "FactBuilder", "check_label",
            "check_meta", "check_nesting", "check_scope", "check_source", "check_text",
            "check_tiers", "from_us", "normalise_key", "parse_time", "scoped", "to_us", "unscoped",
            "value_key"]

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

from .errors import InvalidFact, ScopeError, brief
from .fastinit import quick_init

__all__ = [
    "MAX_KEY_CHARS",
    "MAX_VALUE_BYTES",
    "Belief",
    "Candidate",
    "Fact",
    "Justification",
    "Resolution",
    "ValueSupport",
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
    if isinstance(x, Fact) or (isinstance(x, ToDict) and not dataclasses.is_dataclass(x)):
        return x.to_dict()  # (a Drop: its own, whose winner is made when first asked for)
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


@quick_init
@dataclass(frozen=True, slots=True)
class Fact:
    """One assertion about a slot. Immutable once written.

    An erased fact (``Memory.erase``) keeps its slot, source, tier and times; its value,
    text and meta are gone (``None``) and its status is ``"erased"``.

    Attributes
    ----------
    id, subject, attribute, value
        The fact's id and what it says (subject and attribute normalised).
    valid_from, valid_to
        When it became true and stopped being true (``valid_to`` None: still true).
    recorded_at
        When the memory recorded it (transaction time).
    source, tier
        Who said it and the tier that source is bound to.
    supersedes
        The id of the fact it explicitly replaces, or None.
    text, meta, signature
        Free text, a JSON object of metadata, and the signature of a protected tier.
    status
        Filled by queries that report it (``history``): ``"head"``, ``"superseded"``,
        ``"retracted"``, ``"ended"`` (its ``valid_to`` has passed and no newer fact
        superseded it), ``"future"`` (its ``valid_from`` has not come yet) or
        ``"erased"``; None on the object ``add`` returns.
    scope
        The scope it was written in (``Memory.scope``); None for the memory's own.
    present
        False for a fact that says its value is *no longer* a member of a set attribute
        (``declare(attribute, cardinality="many")``): it ends that member's chain.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> f = Memory().add("ana", "City", "Lisbon", source="crm", valid_from="2026-01-01")
    >>> f.slot, f.value, f.tier, f.valid_from.year
    (('ana', 'city'), 'Lisbon', 'agent', 2026)
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

    @property
    def slot(self) -> tuple[str, str]:
        """The normalised ``(subject, attribute)`` key."""
        return (self.subject, self.attribute)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the fact.

        Returns
        -------
        dict
            Its fields, times as ISO 8601 strings; ``scope``, ``status`` and ``present`` only
            when set.

        Examples
        --------
        >>> from truthkeeper import Memory
        >>> d = Memory().add("ana", "city", "Lisbon", source="s", valid_from="2026-01-01").to_dict()
        >>> d["value"], d["valid_from"]
        ('Lisbon', '2026-01-01T00:00:00+00:00')
        """
        return fact_dict(self)


def claimed(value: Any, present: bool = True) -> str:
    """A claim's value as text: its repr, or ``not 'x'`` for a claim that a set does not
    hold ``x`` (``present=False``)."""
    return repr(value) if present else f"not {value!r}"


def fact_dict(f: Fact, recorded: bool = True) -> dict[str, Any]:
    """:meth:`Fact.to_dict`; without ``recorded_at`` when not ``recorded`` (a journal body:
    the event's own time is the fact's)."""
    out = {"id": f.id, "subject": f.subject, "attribute": f.attribute, "value": f.value,
           "valid_from": f.valid_from.isoformat()}
    if recorded:
        out["recorded_at"] = f.recorded_at.isoformat()
    out.update(source=f.source, tier=f.tier, supersedes=f.supersedes,
               valid_to=None if f.valid_to is None else f.valid_to.isoformat(), text=f.text,
               meta=dict(f.meta), signature=None if f.signature is None else dict(f.signature))
    if f.scope is not None:
        out["scope"] = f.scope
    if f.status is not None:
        out["status"] = f.status
    if not f.present:
        out["present"] = False
    return out


@quick_init
@dataclass(frozen=True, slots=True)
class Candidate(ToDict):
    """A retrieved item that is not (necessarily) a fact of this memory, for
    ``Memory.filter``.

    Attributes
    ----------
    subject, attribute, value
        What the retrieved statement says.
    valid_from
        When it became true (a datetime or an ISO 8601 string).
    tier, source
        Its source's tier (keyword) and name, if known. Not a protected tier: a candidate
        carries no signature (``filter`` refuses it with TierNotAuthorized).
    text
        The retrieved text, kept as it is.
    valid_to
        When it stopped being true: at or before the memory's clock, the candidate is
        stale (dropped with rule ``"ended"``).
    present
        False for a statement that the value is no longer a member of a set attribute
        (as a fact's ``present``): it is judged on that member's chain.

    Examples
    --------
    >>> from truthkeeper import Candidate, Memory
    >>> res = Memory(policy="temporal").filter([
    ...     Candidate("ana", "city", "Lisbon", "2026-01-01", text="Ana lives in Lisbon"),
    ...     Candidate("ana", "city", "Porto", "2026-06-01", text="Ana moved to Porto")])
    >>> [c.text for c in res.kept]
    ['Ana moved to Porto']
    """

    subject: str
    attribute: str
    value: Any
    valid_from: datetime | str
    _: KW_ONLY
    tier: str = "agent"
    source: str | None = None
    text: str | None = None
    valid_to: datetime | str | None = None
    present: bool = True


@quick_init
@dataclass(frozen=True, slots=True)
class ValueSupport(ToDict):
    """One candidate value of a slot, with the head facts and sources that support it.

    Attributes
    ----------
    value
        The value.
    fact_ids, sources
        The head facts that state it and their sources.
    p, interval
        The Bayesian layer's posterior probability that this value is the truth and its
        90% interval; None when it was not consulted (a resolved slot).
    best
        Whether it is the most probable value of a conflict.
    present
        In a set (``cardinality="many"``): False for the facts that say ``value`` left it.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory()
    >>> _ = mem.add("ana", "city", "Lisbon", source="a", valid_from="2026-01-01")
    >>> _ = mem.add("ana", "city", "Porto", source="b", valid_from="2026-01-01")
    >>> sorted((c.value, c.sources) for c in mem.current("ana", "city").candidates)
    [('Lisbon', ('a',)), ('Porto', ('b',))]
    """

    value: Any
    fact_ids: tuple[str, ...]
    sources: tuple[str, ...]
    p: float | None = None
    interval: tuple[float, float] | None = None
    best: bool = False
    present: bool = True


@quick_init
@dataclass(frozen=True, slots=True)
class Resolution(ToDict):
    """What a slot's current value is.

    A conflict never silently picks a winner: ``value`` stays None and the candidates
    carry every value with its support.

    Attributes
    ----------
    subject, attribute
        The slot.
    status
        ``"resolved"``, ``"conflict"`` or ``"unknown"``.
    value
        The value when resolved (a set's: the tuple of its members), else None.
    heads
        The chain heads, newest first; in a scope's view each names its layer
        (``Fact.scope``: None for the shared layer).
    candidates
        Every value with its support (:class:`ValueSupport`).
    best, best_p
        In a conflict, the value the Bayesian layer finds most probable and its
        probability (None otherwise): a reading an agent may use, apart from ``value``.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
    >>> r = mem.current("ana", "city")
    >>> r.status, r.value, len(r.heads)
    ('resolved', 'Lisbon', 1)
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
        """The justification of this answer: its head facts and what they dominate.

        Returns
        -------
        Justification
            The tree (``str`` renders it).

        Raises
        ------
        InvalidFact
            The Resolution was not made by a memory (it carries no justification).

        Examples
        --------
        >>> from truthkeeper import Memory
        >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> mem.current("ana", "city").why().kind
        'resolution'
        """
        if self._why is None:
            msg = "this Resolution carries no justification"
            raise InvalidFact(msg)
        return self._why()


@dataclass(frozen=True, slots=True)
class Belief(ToDict):
    """A belief the rules derive, e.g. ``needs_vpn(ana)``; ``str(belief)`` is its text.

    Attributes
    ----------
    predicate
        The rule head's name.
    args
        Its arguments.
    text
        The belief as text (what ``why`` accepts).

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); mem.add_rule("local(X) :- holds(X, city, lisbon)")
    >>> _ = mem.add("ana", "city", "Lisbon", source="s")
    >>> b = mem.beliefs()[0]; b.predicate, b.args, str(b)
    ('local', ('ana',), 'local(ana)')
    """

    predicate: str
    args: tuple[Any, ...]
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Justification(ToDict):
    """A node of a justification tree (``Memory.why``); ``str(j)`` renders the whole
    tree as indented text.

    Attributes
    ----------
    kind
        What the node is: a fact, a belief, a rule, a dominance, ...
    label
        Its one-line description.
    details
        Its data (ids, the rule, the facts it dominates ...).
    children
        The nodes it rests on.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory(); old = mem.add("ana", "city", "Lisbon", source="s")
    >>> new = mem.add("ana", "city", "Porto", source="s", supersedes=old.id)
    >>> j = mem.why(new.id); j.kind, len(j.lines()) > 1
    ('fact', True)
    """

    kind: str
    label: str
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)
    children: tuple[Justification, ...] = ()

    def lines(self, depth: int = 0) -> list[str]:
        """The tree as indented lines.

        Parameters
        ----------
        depth
            The indentation of this node (two spaces a level).

        Returns
        -------
        list[str]
            This node's label, then its children's lines, one level deeper.

        Examples
        --------
        >>> from truthkeeper import Justification
        >>> Justification("belief", "b", children=(Justification("fact", "f"),)).lines()
        ['b', '  f']
        """
        out = ["  " * depth + self.label]
        for child in self.children:
            out.extend(child.lines(depth + 1))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


# --------------------------------------------------------------------------- re-exports

from .keys import (  # noqa: E402
    MAX_KEY_CHARS,
    MAX_NESTING,
    MAX_VALUE_BYTES,
    SCOPE_SEP,
    normalise_key,
    scoped,
    unscoped,
    value_key,
)
from .validation import (  # noqa: E402
    EPOCH,
    FACT_KEYS,
    FactBuilder,
    OneFact,
    check_label,
    check_list,
    check_meta,
    check_nesting,
    check_scope,
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
            "value_key", "OneFact", "in_scope"]


def in_scope(items: object, scope: str, name: str) -> list[Any]:
    """The items of ``add_many`` (or ``what_if``'s ``add``, ``name``) in a scope's view,
    each with the scope: a Fact, or the fields of one (a :class:`OneFact` stays one);
    anything else as it is (refused later). One that names another scope is refused
    (ScopeError): the owner's memory writes it there, a view would have moved it."""
    out = []
    for i, item in enumerate(check_list(items, name, "dicts or Facts")):
        named = item.scope if isinstance(item, Fact) else \
            item.get("scope") if isinstance(item, Mapping) else None
        if named is not None and named != scope:
            msg = f"{name}[{i}] names scope {brief(named)}: a view of {scope!r} writes in its own"
            raise ScopeError(msg)
        out.append(dataclasses.replace(item, scope=scope) if isinstance(item, Fact) else
                   (OneFact if type(item) is OneFact else dict)(item, scope=scope)
                   if isinstance(item, Mapping) else item)
    return out


_MOVED = frozenset({"Alternative", "AuditEntry", "Decision", "HeadChange", "SourceReliability",
                    "Utility", "Verification", "WhatIf"})


def __getattr__(name: str) -> Any:
    """The results that moved to :mod:`truthkeeper.results`, still importable from here."""
    if name in _MOVED:
        from . import results

        return getattr(results, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)

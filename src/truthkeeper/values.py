"""The API's value types (frozen dataclasses) and the validation of user input.

Everything a user passes in is checked here before anything changes: keys are normalised,
times parsed, values given the typed key that the symbolic layer compares (``value_key``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import secrets
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
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

MAX_KEY_CHARS = 512
"""Longest subject, attribute, source or fact id accepted (characters, after normalisation)."""
MAX_VALUE_BYTES = 65536
"""Largest value, text or meta accepted (bytes of UTF-8 / canonical JSON)."""
MAX_NESTING = 100
"""Deepest nesting accepted in a value, meta, a rule text or a belief text."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_WS = re.compile(r"\s+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


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
    if isinstance(x, Fact):
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


@dataclass(frozen=True, slots=True)
class Drop(ToDict):
    """An item ``filter`` removed, the item that dominates it and the rule that applied."""

    item: Any
    dominated_by: Any
    rule: str


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


@dataclass(frozen=True, slots=True)
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


# --------------------------------------------------------------------------- validation


def _utf8(value: str, name: str) -> None:
    """Refuse text that cannot be stored (lone surrogates are not UTF-8)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        msg = f"{name} contains a lone surrogate ({value!r}); pass valid Unicode text"
        raise InvalidFact(msg) from None


def normalise_key(value: object, name: str) -> str:
    """Unicode NFC, casefolded, whitespace collapsed; non-empty and bounded."""
    if type(value) is str and value in _KEYS:
        return _KEYS[value]
    key = _normalise_key(value, name)
    if len(_KEYS) < 100_000:
        _KEYS[value] = key  # type: ignore[index]
    return key


_KEYS: dict[str, str] = {}


def _normalise_key(value: object, name: str) -> str:
    if not isinstance(value, str):
        msg = f"{name} must be a str, got {value!r} ({type(value).__name__})"
        raise InvalidFact(msg)
    _utf8(value, name)
    key = _WS.sub(" ", unicodedata.normalize("NFC", value).casefold()).strip()
    if not key:
        msg = f"{name} must be a non-empty string, got {value!r}"
        raise InvalidFact(msg)
    if len(key) > MAX_KEY_CHARS:
        msg = f"{name} is {len(key)} characters long; the limit is {MAX_KEY_CHARS}"
        raise InvalidFact(msg)
    return key


def check_label(value: object, name: str) -> str:
    """A non-empty bounded string kept as given (sources, ids, reasons)."""
    if not isinstance(value, str) or not value.strip():
        msg = f"{name} must be a non-empty str, got {value!r} ({type(value).__name__})"
        raise InvalidFact(msg)
    if len(value) > MAX_KEY_CHARS:
        msg = f"{name} is {len(value)} characters long; the limit is {MAX_KEY_CHARS}"
        raise InvalidFact(msg)
    _utf8(value, name)
    return value


def parse_time(value: object, name: str) -> datetime:
    """A timezone-aware datetime from a datetime or an ISO 8601 string with an offset."""
    if type(value) is str:
        cached = _TIMES.get(value)
        if cached is not None:
            return cached
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            msg = f"{name} must be an ISO 8601 time with an offset, got {value!r}"
            raise InvalidFact(msg) from None
        if _DATE.fullmatch(value):  # a date alone means midnight UTC
            dt = dt.replace(tzinfo=UTC)
    else:
        msg = (
            f"{name} must be a timezone-aware datetime or an ISO 8601 string with an offset,"
            f" got {value!r} ({type(value).__name__})"
        )
        raise InvalidFact(msg)
    if dt.tzinfo is None or dt.utcoffset() is None:
        msg = (f"{name} must be timezone-aware, got {value!r} (naive datetime); add an "
               "offset, e.g. '2026-11-20T10:00:00+00:00' or datetime(..., tzinfo=UTC)")
        raise InvalidFact(msg)
    try:
        out = dt.astimezone(UTC)
    except (OverflowError, ValueError):
        msg = f"{name} is out of the representable range once converted to UTC: {value!r}"
        raise InvalidFact(msg) from None
    if type(value) is str and len(_TIMES) < 100_000:
        _TIMES[value] = out  # ISO strings repeat (bulk loads, retrieved contexts)
    return out


_TIMES: dict[str, datetime] = {}


def to_us(dt: datetime) -> int:
    """Microseconds since the Unix epoch."""
    return (dt - _EPOCH) // _US


def from_us(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def _plain(value: object, name: str, depth: int = 0) -> None:
    """Only what comes back from the journal as it went in: dicts with str keys, lists,
    str, int, float, bool and None (a tuple would come back a list, {1: 2} as {"1": 2})."""
    if depth > MAX_NESTING:
        msg = f"{name} nests more than {MAX_NESTING} deep"
        raise InvalidFact(msg)
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if type(value) is list:
        for v in value:
            _plain(v, name, depth + 1)
        return
    if type(value) is dict:
        for k, v in value.items():
            if type(k) is not str:
                msg = (f"{name} has a key {k!r} that is not a str; it would come back as "
                       f"{str(k)!r} after a reopen")
                raise InvalidFact(msg)
            _plain(v, name, depth + 1)
        return
    msg = (f"{name} holds a value of type {type(value).__name__}, which is not "
           "JSON-serialisable as it is (it would not come back the same after a reopen); use "
           "str, int, float, bool, None, list or dict with str keys")
    raise InvalidFact(msg)


def _json(value: object, name: str) -> str:
    _plain(value, name)
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        msg = f"{name} must be JSON-serialisable (str, int, float, bool, None, list, dict): {exc}"
        raise InvalidFact(msg) from None
    _utf8(text, name)
    return text


def value_key(value: object) -> object:
    """The typed key of a value: what the symbolic layer compares (kappa) and ``holds/3``
    shows, as it crosses to Prolog.

    Strings are normalised like keys (NFC, casefold, whitespace collapsed) and become atoms;
    numbers stay numbers (an integral float is the int: ``1.0`` and ``1`` are one value);
    booleans, ``None`` and JSON values (lists, dicts) are tagged, so the string ``"true"``,
    the boolean ``True``, the string ``"1"`` and the number ``1`` are four different values.
    Raises InvalidFact on unsupported or oversized values.
    """
    if isinstance(value, str):
        if len(value) > MAX_VALUE_BYTES // 4 and len(value.encode("utf-8", "replace")) \
                > MAX_VALUE_BYTES:
            msg = f"value is {len(value.encode('utf-8', 'replace'))} bytes; the limit is " \
                  f"{MAX_VALUE_BYTES}"
            raise InvalidFact(msg)
        _utf8(value, "value")
        return _WS.sub(" ", unicodedata.normalize("NFC", value).casefold()).strip()
    if value is None:
        return ("n", 0)
    if isinstance(value, bool):
        return ("b", 1 if value else 0)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            msg = f"value {value} is out of range; integers must fit in 64 bits"
            raise InvalidFact(msg)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"value must be a finite number, got {value!r}"
            raise InvalidFact(msg)
        if value.is_integer() and abs(value) < 2**63:
            return int(value)
        return value
    text = _json(value, "value")
    if len(text) > MAX_VALUE_BYTES:
        msg = f"value is {len(text)} bytes as JSON; the limit is {MAX_VALUE_BYTES}"
        raise InvalidFact(msg)
    return ("j", text)


def check_nesting(text: str, name: str) -> str:
    """Refuse text whose brackets nest deeper than MAX_NESTING (the parser would recurse
    that deep)."""
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        msg = f"{name} nests brackets {deepest} deep; the limit is {MAX_NESTING}"
        raise InvalidFact(msg)
    return text


def check_text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"{name} must be a str or None, got {type(value).__name__}"
        raise InvalidFact(msg)
    _utf8(value, name)
    if len(value.encode()) > MAX_VALUE_BYTES:
        msg = f"{name} is {len(value.encode())} bytes; the limit is {MAX_VALUE_BYTES}"
        raise InvalidFact(msg)
    return value


def check_meta(value: object) -> dict[str, Any]:
    if value is None or (type(value) is dict and not value):
        return {}
    if not isinstance(value, Mapping):
        msg = f"meta must be a dict or None, got {type(value).__name__}"
        raise InvalidFact(msg)
    text = _json(dict(value), "meta")
    if len(text) > MAX_VALUE_BYTES:
        msg = f"meta is {len(text)} bytes as JSON; the limit is {MAX_VALUE_BYTES}"
        raise InvalidFact(msg)
    return dict(value)


# --------------------------------------------------------------------------- facts in


def check_tiers(tiers: object, protected: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Normalised tier names (most authoritative first) and protected tiers; PolicyError
    when they are empty, repeated, or a protected tier is not a tier."""
    from .errors import PolicyError

    if isinstance(tiers, str) or not isinstance(tiers, (list, tuple)) or not tiers:
        msg = f"tiers must be a non-empty sequence of tier names, got {tiers!r}"
        raise PolicyError(msg)
    if isinstance(protected, str) or not isinstance(protected, (list, tuple)):
        msg = f"protected_tiers must be a sequence of tier names, got {protected!r}"
        raise PolicyError(msg)
    try:
        names = tuple(normalise_key(t, "tiers[]") for t in tiers)
        prot = tuple(normalise_key(t, "protected_tiers[]") for t in protected)
    except InvalidFact as exc:
        raise PolicyError(str(exc)) from None
    if len(set(names)) != len(names):
        msg = f"tiers must be distinct, got {tiers!r}"
        raise PolicyError(msg)
    for t in prot:
        if t not in names:
            msg = f"protected tier {t!r} is not one of the tiers {names!r}"
            raise PolicyError(msg)
    return names, prot

FACT_KEYS = frozenset({"subject", "attribute", "value", "source", "tier", "valid_from",
                       "valid_to", "supersedes", "text", "meta", "id", "signature", "scope",
                       "present"})
SCOPE_SEP = "\x1f"
"""Joins a scope and a subject into the store's subject key; normalised keys never hold it
(it is whitespace to the normaliser), so no subject can reach into a scope."""


def check_scope(scope: object) -> str | None:
    """A scope name, or None (the memory's own scope): NFC, lower case, whitespace
    collapsed, but not casefolded, so that two names merge only when they are one name
    (``user:straße`` is not ``user:strasse``); a name holding compatibility characters (a
    Kelvin sign for ``k``, a fullwidth letter) is refused rather than merged with another."""
    if scope is None:
        return None
    normalise_key(scope, "scope")  # type, emptiness, length, surrogates: its errors
    raw = str(scope)
    name = _WS.sub(" ", unicodedata.normalize("NFC", raw).lower()).strip()
    singleton = any((d := unicodedata.decomposition(c)) and not d.startswith("<")
                    and " " not in d for c in raw)  # the Kelvin sign is K, the Ohm sign
    if singleton or unicodedata.normalize("NFKC", raw) != unicodedata.normalize("NFC", raw):
        msg = (f"scope {scope!r} holds compatibility characters (such as a Kelvin sign or "
               "fullwidth letters) that read as other letters; write them plainly")
        raise InvalidFact(msg)
    return name


def scoped(scope: str | None, subject: str) -> str:
    """The store's subject key of a normalised subject in a scope."""
    return subject if scope is None else f"{scope}{SCOPE_SEP}{subject}"


def unscoped(key: str) -> tuple[str | None, str]:
    """``(scope, subject)`` of a store subject key."""
    scope, sep, subject = key.rpartition(SCOPE_SEP)
    return (scope, subject) if sep else (None, key)
EPOCH = from_us(0)


class FactBuilder:
    """Validates what a user passes for a fact and builds the :class:`Fact` (its
    ``recorded_at`` is set by the store when the fact is written).

    Parameters
    ----------
    tiers
        The memory's tier names (normalised), most authoritative first.
    """

    def __init__(self, tiers: tuple[str, ...]) -> None:
        self.tiers = tiers

    def tier(self, tier: object) -> str:
        """A known tier, normalised; InvalidFact otherwise."""
        t = normalise_key(tier, "tier")
        if t not in self.tiers:
            msg = f"tier must be one of {', '.join(self.tiers)}; got {tier!r}"
            raise InvalidFact(msg)
        return t

    def build(self, fields: Mapping[str, Any], now: datetime) -> Fact:
        """One fact from keyword fields (those of ``Memory.add`` plus ``id``)."""
        g = fields.get
        s = normalise_key(fields["subject"], "subject")
        a = normalise_key(fields["attribute"], "attribute")
        value = fields["value"]
        value_key(value)
        vf = now if g("valid_from") is None else parse_time(g("valid_from"), "valid_from")
        vt = None if g("valid_to") is None else parse_time(g("valid_to"), "valid_to")
        if vt is not None and vt <= vf:
            msg = f"valid_to ({vt.isoformat()}) must be after valid_from ({vf.isoformat()})"
            raise InvalidFact(msg)
        sup = None if g("supersedes") is None else check_label(g("supersedes"), "supersedes")
        fid = f"f{secrets.token_hex(8)}" if g("id") is None \
            else check_label(g("id"), "id")
        sig = g("signature")
        if sig is not None and not isinstance(sig, Mapping):
            msg = "signature must be a dict with key, nonce and sig"
            raise InvalidFact(msg)
        present = g("present", True)
        if not isinstance(present, bool):
            msg = f"present must be a bool, got {present!r}"
            raise InvalidFact(msg)
        return Fact(id=fid, subject=s, attribute=a, value=value, valid_from=vf,
                    recorded_at=EPOCH, source=check_label(fields["source"], "source"),
                    tier=self.tier(g("tier", "agent")), supersedes=sup, valid_to=vt,
                    text=check_text(g("text"), "text"), meta=check_meta(g("meta")),
                    signature=None if sig is None else dict(sig),
                    scope=check_scope(g("scope")), present=present)

    def coerce(self, item: object, index: int, now: datetime) -> Fact:
        """One item of a batch: a dict of fields or a :class:`Fact`."""
        if isinstance(item, Fact):
            fields: Mapping[str, Any] = {k: getattr(item, k) for k in FACT_KEYS}
        elif isinstance(item, Mapping):
            fields = item
            unknown = item.keys() - FACT_KEYS
            if unknown:
                msg = (f"facts[{index}] has unknown keys {sorted(map(str, unknown))}; "
                       f"accepted: {sorted(FACT_KEYS)}")
                raise InvalidFact(msg)
            for k in ("subject", "attribute", "value", "source"):
                if k not in item:
                    msg = f"facts[{index}] is missing {k!r}"
                    raise InvalidFact(msg)
        else:
            msg = f"facts[{index}] must be a dict or a Fact, got {type(item).__name__}"
            raise InvalidFact(msg)
        try:
            return self.build(fields, now)
        except InvalidFact as exc:
            msg = f"facts[{index}]: {exc}"
            raise InvalidFact(msg) from None

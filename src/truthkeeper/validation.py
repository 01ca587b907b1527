"""Validation of what users pass in: labels, times, texts, meta, tiers, the
:class:`FactBuilder` that turns ``add``'s arguments into a :class:`~.values.Fact`, and the
settings of the calls (probabilities, utilities, flags, the clock). Every check runs
before anything changes. A check that needs a domain's own types stays with them
(categories, similarity, rule texts, declarations, scopes)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .errors import InvalidFact
from .keys import (
    MAX_KEY_CHARS,
    MAX_NESTING,
    MAX_VALUE_BYTES,
    SCOPE_SEP,
    _json,
    _utf8,
    check_scope,
    normalise_key,
    value_key,
)

if TYPE_CHECKING:
    from .results import Utility
    from .values import Fact

__all__ = ["EPOCH", "FACT_KEYS", "FactBuilder", "check_alternatives", "check_bool", "check_choice",
           "check_clock", "check_probability", "check_utility", "check_label", "check_meta",
           "check_nesting", "check_source", "check_text", "check_tiers", "from_us", "parse_time",
           "to_us"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


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


def check_source(value: object, name: str = "source") -> str:
    """A source name: a label without the scope separator or NUL (a source is bound to
    its tier per scope, under the key scope + separator + source)."""
    src = check_label(value, name)
    if SCOPE_SEP in src or "\x00" in src:
        msg = f"{name} {src!r} contains a control character (\\x1f or \\x00)"
        raise InvalidFact(msg)
    return src


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


EPOCH = from_us(0)


def check_choice(value: object, choices: tuple[str, ...], name: str) -> str:
    """A setting that must be one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        msg = f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}"
        raise InvalidFact(msg)
    return value


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
        from .values import Fact  # the types module re-exports this one: imported late

        return Fact(id=fid, subject=s, attribute=a, value=value, valid_from=vf,
                    recorded_at=EPOCH, source=check_source(fields["source"]),
                    tier=self.tier(g("tier", "agent")), supersedes=sup, valid_to=vt,
                    text=check_text(g("text"), "text"), meta=check_meta(g("meta")),
                    signature=None if sig is None else dict(sig),
                    scope=check_scope(g("scope")), present=present)

    def coerce(self, item: object, index: int, now: datetime) -> Fact:
        """One item of a batch: a dict of fields or a :class:`Fact`."""
        from .values import Fact
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
            f = self.build(fields, now)
        except InvalidFact as exc:
            msg = f"facts[{index}]: {exc}"
            raise InvalidFact(msg) from None
        if f.attribute == "$erased":
            msg = (f"facts[{index}]: the attribute '$erased' is reserved (erased facts' "
                   "placeholders have it)")
            raise InvalidFact(msg)
        return f


# --------------------------------------------------------------------------- settings


def check_utility(u: object) -> Utility:
    """The utility to use (the default when ``None``)."""
    from .results import Utility

    if u is None:
        return Utility()
    if not isinstance(u, Utility):
        msg = f"utility must be a truthkeeper.Utility, got {type(u).__name__}"
        raise InvalidFact(msg)
    return u


def check_probability(x: object, name: str) -> float:
    """A number in [0, 1]; InvalidFact otherwise."""
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not 0.0 <= x <= 1.0:
        msg = f"{name} must be a number in [0, 1], got {x!r}"
        raise InvalidFact(msg)
    return float(x)


def check_alternatives(alternatives: object) -> int | None:
    """None, or how many answers a question has: an integer of at least 2."""
    if alternatives is not None and (isinstance(alternatives, bool) or not isinstance(
            alternatives, int) or alternatives < 2):
        msg = f"alternatives must be None or an integer >= 2, got {alternatives!r}"
        raise InvalidFact(msg)
    return alternatives


def check_clock(clock: object) -> Callable[[], datetime] | None:
    """``Memory(clock=...)``: a callable returning a timezone-aware datetime, or None."""
    if clock is not None and not callable(clock):
        msg = f"clock must be a callable returning a timezone-aware datetime, got {clock!r}"
        raise InvalidFact(msg)
    return clock


def check_discount(discount: object) -> float:
    """The reliability book's geometric decay of old evidence: a number in (0, 1]."""
    if not (isinstance(discount, (int, float)) and 0.0 < discount <= 1.0):
        msg = f"discount must be a number in (0, 1], got {discount!r}"
        raise InvalidFact(msg)
    return float(discount)


def check_bool(value: object, name: str = "correct") -> bool:
    """A flag that must be a bool (not a truthy value)."""
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {value!r}"
        raise InvalidFact(msg)
    return value

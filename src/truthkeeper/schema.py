"""Declarations: an attribute's cardinality (one value, or a set) and value type, and the
coercion of values and times as agents send them (the boundary: MCP, adapters, ``add``).

A declaration is the memory owner's act on the whole memory (``Memory.declare``, journalled
as a ``declare`` event). What a cardinality *means* for supersession is Prolog's (the
policy registry keeps members of a set apart); this module only checks and coerces input.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from .errors import InvalidFact, brief
from .validation import check_declaration
from .values import ToDict, parse_time

__all__ = ["CARDINALITIES", "UNCHANGED", "VALUE_TYPES", "Declaration", "Schema",
           "boundary_time", "coerce_value"]

CARDINALITIES = ("one", "many")
VALUE_TYPES = ("number", "string", "boolean", "date")
_INT = re.compile(r"[-+]?\d+")
_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _Unchanged(enum.Enum):
    UNCHANGED = "unchanged"

    def __repr__(self) -> str:
        return "<unchanged>"


UNCHANGED = _Unchanged.UNCHANGED
"""``Memory.declare``'s default: what the attribute has (declared or not) stays."""
Unchanged = Literal[_Unchanged.UNCHANGED]


def declaration(attribute: object, cardinality: object, value_type: object,
                ) -> tuple[Declaration, tuple[bool, bool]]:
    """``Memory.declare``'s arguments checked (InvalidFact otherwise), and which of the
    cardinality and the value type stay as the attribute has them (:data:`UNCHANGED`)."""
    keep = (cardinality is UNCHANGED, value_type is UNCHANGED)
    return check_declaration(attribute, "one" if keep[0] else cardinality,
                             None if keep[1] else value_type), keep


@dataclass(frozen=True, slots=True)
class Declaration(ToDict):
    """What the owner declared about an attribute: ``cardinality`` ``"one"`` (one current
    value; supersession decides) or ``"many"`` (a set: each value has its own chain), and an
    optional ``value_type`` (values are coerced to it at the boundary, or refused)."""

    attribute: str
    cardinality: str = "one"
    value_type: str | None = None


def coerce_value(value: Any, value_type: str | None, name: str = "value") -> Any:
    """``value`` as ``value_type`` wants it, as an LLM's tool call may send it: ``"135"``
    is the number 135, ``"yes"`` is True, ``1770231626`` as a date is its ISO day-time.
    InvalidFact when it is not such a value; any value when ``value_type`` is None.

    Examples
    --------
    >>> coerce_value("135", "number"), coerce_value(" 2.5 ", "number")
    (135, 2.5)
    >>> coerce_value("No", "boolean"), coerce_value("2025-06-01", "date")
    (False, '2025-06-01')
    """
    if value_type is None:
        return value
    if value_type == "number":
        return _number(value, name)
    if value_type == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        msg = f"{name} must be a string (declared value_type 'string'), got {brief(value)}"
        raise InvalidFact(msg)
    if value_type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        msg = f"{name} must be a boolean (declared value_type 'boolean'), got {brief(value)}"
        raise InvalidFact(msg)
    if isinstance(value, str) and _DATE.fullmatch(value.strip()):
        return value.strip()  # a calendar date stays a date
    return boundary_time(value, name).isoformat()


def _number(value: Any, name: str) -> int | float:
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        return value
    elif isinstance(value, float) and math.isfinite(value):
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    elif isinstance(value, str):
        text = value.strip().replace("_", "")
        if _INT.fullmatch(text) and len(text) < 20:
            return int(text)
        try:
            x = float(text)
        except ValueError:
            pass
        else:
            if math.isfinite(x):
                return int(x) if x.is_integer() and abs(x) < 2**63 else x
    msg = f"{name} must be a number (declared value_type 'number'), got {brief(value)}"
    raise InvalidFact(msg)


def boundary_time(value: Any, name: str) -> datetime:
    """A time as agents and vector stores send it: a datetime (naive is UTC), ISO 8601 with
    or without an offset (without: UTC), a bare date (midnight UTC), or epoch seconds or
    milliseconds (a number, or digits; over 1e11 is read as milliseconds).

    Examples
    --------
    >>> boundary_time(1770231626, "t").isoformat()
    '2026-02-04T19:00:26+00:00'
    >>> boundary_time("2026-02-04T19:00:26", "t") == boundary_time(1770231626000, "t")
    True
    """
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str) and _INT.fullmatch(value.strip()) and len(value) < 40:
        value = int(value.strip())  # (longer digits: no epoch time; refused below)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            msg = f"{name} must be a time, got {brief(value)}"
            raise InvalidFact(msg)
        try:
            seconds = value / 1000 if abs(value) > 1e11 else value
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            msg = f"{name} is out of range as epoch seconds or milliseconds: {brief(value)}"
            raise InvalidFact(msg) from None
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip())
        except ValueError:
            msg = (f"{name} must be ISO 8601 (with or without an offset), a date YYYY-MM-DD, "
                   f"or epoch seconds or milliseconds; got {brief(value)}")
            raise InvalidFact(msg) from None
        return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    return parse_time(value, name)  # the error that says what a time may be


class Schema:
    """The memory's declarations, by attribute (an attribute never declared is ``one``,
    untyped)."""

    def __init__(self) -> None:
        self.by_attribute: dict[str, Declaration] = {}

    def get(self, attribute: str) -> Declaration:
        """The declaration of an (already normalised) attribute."""
        return self.by_attribute.get(attribute) or Declaration(attribute)

    def many(self, attribute: str) -> bool:
        """Whether the attribute holds a set."""
        d = self.by_attribute.get(attribute)
        return d is not None and d.cardinality == "many"

    def set(self, d: Declaration) -> None:
        self.by_attribute[d.attribute] = d

    def coerce(self, attribute: str, value: Any, name: str = "value") -> Any:
        """``value`` coerced to the attribute's declared type."""
        d = self.by_attribute.get(attribute)
        return value if d is None or d.value_type is None else coerce_value(
            value, d.value_type, name)

    def declarations(self) -> Mapping[str, Declaration]:
        return dict(self.by_attribute)


class Declarer:
    """Applies declarations to one memory: the schema (Python's, for coercion) and the
    store's cardinalities (Prolog's, for supersession). Live writes journal a ``declare``
    event; replay and import apply the same bodies.

    A cardinality is fixed once the attribute holds a fact (changing it would change what
    every stored fact of it means): declare before the first fact. A value type may be
    declared later only when every stored value of the attribute already has that type;
    stored values are never rewritten (facts are immutable).
    """

    def __init__(self, store: Any, schema: Schema) -> None:
        self.store, self.schema = store, schema

    def resolve(self, d: Declaration, keep: tuple[bool, bool]) -> Declaration:
        """``d`` with the cardinality (``keep[0]``) and the value type (``keep[1]``) the
        attribute has now: what ``Memory.declare`` was not passed stays."""
        old = self.schema.get(d.attribute)
        return Declaration(d.attribute, old.cardinality if keep[0] else d.cardinality,
                           old.value_type if keep[1] else d.value_type)

    def check(self, d: Declaration) -> None:
        """Refuse (InvalidFact) a declaration the attribute's stored facts contradict."""
        old = self.schema.get(d.attribute)
        if old == d:
            return
        if old.cardinality != d.cardinality and self.store.attribute_used(d.attribute):
            msg = (f"attribute {d.attribute!r} holds facts already, so its cardinality stays "
                   f"{old.cardinality!r}: declare an attribute before its first fact")
            raise InvalidFact(msg)
        if d.value_type is not None and d.value_type != old.value_type:
            for f, _ in self.store.all_facts():
                if f.attribute == d.attribute and f.status != "erased" and not _typed(
                        f.value, d.value_type):
                    msg = (f"attribute {d.attribute!r} holds {f.value!r} (fact {f.id}), "
                           f"which is not a {d.value_type}; stored values are never "
                           "rewritten, so this value type cannot be declared")
                    raise InvalidFact(msg)

    def apply(self, body: Mapping[str, Any]) -> Declaration:
        """Apply a ``declare`` event's body (checked: InvalidFact otherwise)."""
        d = check_declaration(body.get("attribute"), body.get("cardinality", "one"),
                              body.get("value_type"))
        self.schema.set(d)
        self.store.declare(d.attribute, d.cardinality)
        return d

    def undo(self, old: Declaration) -> None:
        self.schema.set(old)
        self.store.declare(old.attribute, old.cardinality)

    def coerce(self, fact: Any, guarded: bool) -> Any:
        """The fact with its value coerced to its attribute's declared type. A signed
        (protected-tier) fact is never changed: its value must already be typed."""
        d = self.schema.by_attribute.get(fact.attribute)
        if d is None or d.value_type is None or fact.value is None:
            return fact
        value = coerce_value(fact.value, d.value_type, f"value of {fact.attribute!r}")
        if value == fact.value and type(value) is type(fact.value):
            return fact
        if guarded:
            msg = (f"a signed fact's value is not coerced: {fact.value!r} is not a "
                   f"{d.value_type}; sign the {d.value_type} value")
            raise InvalidFact(msg)
        from dataclasses import replace

        return replace(fact, value=value)


def _typed(value: Any, value_type: str) -> bool:
    try:
        v = coerce_value(value, value_type)
    except InvalidFact:
        return False
    return v == value and type(v) is type(value)

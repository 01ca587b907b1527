"""Validation of what users pass in: labels, times, texts, meta, tiers, the
:class:`FactBuilder` that turns ``add``'s arguments into a :class:`~.values.Fact`, and the
settings of the calls (probabilities, utilities, flags, the clock) and those of the
domains (scopes, rule texts, categories and what was learned of them, similarity,
declarations and schemas). Every check runs before anything changes; it is the only place
where what a user passes in is checked (a check that returns a domain's type imports it
when called: the domains import this module, not the other way round)."""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .errors import InvalidFact, UnsafeRule, brief
from .keys import (
    MAX_KEY_CHARS,
    MAX_NESTING,
    MAX_VALUE_BYTES,
    SCOPE_SEP,
    _json,
    _utf8,
    normalise_key,
    random_hex,
    remember,
    value_key,
)

if TYPE_CHECKING:
    from .reliability.similarity import Similarity
    from .results import Utility
    from .schema import Declaration
    from .values import Fact

__all__ = ["EPOCH", "FACT_KEYS", "FactBuilder", "MAX_CATEGORIES", "MAX_RULE_BYTES", "OneFact",
           "check_alternatives", "check_bool", "check_categories", "check_choice", "check_clock",
           "check_confusion_body", "check_declaration", "check_discount", "check_label",
           "check_meta",
           "check_nesting", "check_probability", "check_rule_text", "check_schema", "check_scope",
           "check_similarity", "check_source", "check_text", "check_tiers", "check_utility",
           "from_us", "parse_time", "to_us"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WS = re.compile(r"\s+")
MAX_RULE_BYTES = 65536
"""The longest rule text, in UTF-8 bytes."""
MAX_CATEGORIES = 64
"""The most categories an attribute may be declared with."""


def check_label(value: object, name: str) -> str:
    """A non-empty bounded string kept as given (sources, ids, reasons)."""
    if not isinstance(value, str) or not value.strip():
        msg = f"{name} must be a non-empty str, got {brief(value)} ({type(value).__name__})"
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
            msg = f"{name} must be an ISO 8601 time with an offset, got {brief(value)}"
            raise InvalidFact(msg) from None
        if _DATE.fullmatch(value):  # a date alone means midnight UTC
            dt = dt.replace(tzinfo=UTC)
    else:
        msg = (
            f"{name} must be a timezone-aware datetime or an ISO 8601 string with an offset,"
            f" got {brief(value)} ({type(value).__name__})"
        )
        raise InvalidFact(msg)
    if dt.tzinfo is None or dt.utcoffset() is None:
        msg = (f"{name} must be timezone-aware, got {brief(value)} (naive datetime); add an "
               "offset, e.g. '2026-11-20T10:00:00+00:00' or datetime(..., tzinfo=UTC)")
        raise InvalidFact(msg)
    try:
        out = dt.astimezone(UTC)
    except (OverflowError, ValueError):
        msg = f"{name} is out of the representable range once converted to UTC: {brief(value)}"
        raise InvalidFact(msg) from None
    if type(value) is str:  # ISO strings repeat (bulk loads, retrieved contexts)
        remember(_TIMES, value, out, CACHED)
    return out


_TIMES: dict[str, datetime] = {}
CACHED = 8192
"""The most ISO times (and, in :mod:`~truthkeeper.keys`, keys) kept with their answers: a
bulk load of distinct times would otherwise hold a copy of each (about 35 MB at 100,000)."""


def to_us(dt: datetime) -> int:
    """Microseconds since the Unix epoch."""
    return (dt - _EPOCH) // _US


def time_us(value: object, name: str) -> int:
    """:func:`parse_time` in microseconds since the Unix epoch (an ISO string's answer
    kept, as ``parse_time`` keeps its datetime: retrieved contexts repeat their times)."""
    if type(value) is str:
        cached = _TIMES_US.get(value)
        if cached is not None:
            return cached
        return remember(_TIMES_US, value, to_us(parse_time(value, name)), CACHED)
    return to_us(parse_time(value, name))


_TIMES_US: dict[str, int] = {}


def from_us(us: int) -> datetime:
    return _EPOCH + _US * us  # exact (integer microseconds), twice as fast as timedelta(us)


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
        msg = f"tiers must be a non-empty sequence of tier names, got {brief(tiers)}"
        raise PolicyError(msg)
    if isinstance(protected, str) or not isinstance(protected, (list, tuple)):
        msg = f"protected_tiers must be a sequence of tier names, got {brief(protected)}"
        raise PolicyError(msg)
    try:
        names = tuple(normalise_key(t, "tiers[]") for t in tiers)
        prot = tuple(normalise_key(t, "protected_tiers[]") for t in protected)
    except InvalidFact as exc:
        raise PolicyError(str(exc)) from None
    if len(set(names)) != len(names):
        msg = f"tiers must be distinct, got {brief(tiers)}"
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
        msg = f"{name} must be one of {', '.join(map(repr, choices))}, got {brief(value)}"
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
        from .values import Fact  # the types module re-exports this one: imported late

        self.tiers = tiers
        self.fact = Fact
        self.checked: dict[tuple[Callable[[Any], Any], str], Any] = {}
        """Sources and scopes already checked, with the check's answer (a bulk load
        repeats a few)."""

    def _memo(self, value: object, check: Callable[[Any], Any]) -> Any:
        """``check(value)``, remembered for a str."""
        if type(value) is not str:
            return check(value)
        hit = self.checked.get((check, value))
        if hit is None:
            hit = check(value)
            if len(self.checked) < 10_000:
                self.checked[check, value] = hit
        return hit

    def tier(self, tier: object) -> str:
        """A known tier, normalised; InvalidFact otherwise."""
        t = normalise_key(tier, "tier")
        if t not in self.tiers:
            msg = f"tier must be one of {', '.join(self.tiers)}; got {brief(tier)}"
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
        fid = f"f{random_hex()}" if g("id") is None \
            else check_label(g("id"), "id")
        sig = check_signature(g("signature"))
        present = g("present", True)
        if not isinstance(present, bool):
            msg = f"present must be a bool, got {brief(present)}"
            raise InvalidFact(msg)
        scope = g("scope")
        return self.fact(id=fid, subject=s, attribute=a, value=value, valid_from=vf,
                         recorded_at=EPOCH, source=self._memo(fields["source"], check_source),
                         tier=self.tier(g("tier", "agent")), supersedes=sup, valid_to=vt,
                         text=check_text(g("text"), "text"), meta=check_meta(g("meta")),
                         signature=sig,
                         scope=None if scope is None else self._memo(scope, check_scope),
                         present=present)

    def coerce(self, item: object, index: int, now: datetime) -> Fact:
        """One item of a batch: a dict of fields or a :class:`Fact`."""
        if isinstance(item, self.fact):
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
        where = "" if type(item) is OneFact else f"facts[{index}]: "  # add names no batch
        try:
            f = self.build(fields, now)
        except InvalidFact as exc:
            msg = f"{where}{exc}"
            raise InvalidFact(msg) from None
        if f.attribute == "$erased":
            msg = (f"{where}the attribute '$erased' is reserved (erased facts' "
                   "placeholders have it)")
            raise InvalidFact(msg)
        return f


class OneFact(dict):  # type: ignore[type-arg]
    """The fields of one ``Memory.add``: a refusal of it names no batch (``facts[0]``)."""


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
        msg = f"{name} must be a number in [0, 1], got {brief(x)}"
        raise InvalidFact(msg)
    return float(x)


def check_alternatives(alternatives: object) -> int | None:
    """None, or how many answers a question has: an integer of at least 2."""
    if alternatives is not None and (isinstance(alternatives, bool) or not isinstance(
            alternatives, int) or alternatives < 2):
        msg = f"alternatives must be None or an integer >= 2, got {brief(alternatives)}"
        raise InvalidFact(msg)
    return alternatives


def check_clock(clock: object) -> Callable[[], datetime] | None:
    """``Memory(clock=...)``: a callable returning a timezone-aware datetime, or None."""
    if clock is not None and not callable(clock):
        msg = f"clock must be a callable returning a timezone-aware datetime, got {brief(clock)}"
        raise InvalidFact(msg)
    return clock


def check_discount(discount: object) -> float:
    """The reliability book's geometric decay of old evidence: a number in (0, 1]."""
    if not (isinstance(discount, (int, float)) and 0.0 < discount <= 1.0):
        msg = f"discount must be a number in (0, 1], got {brief(discount)}"
        raise InvalidFact(msg)
    return float(discount)


def check_bool(value: object, name: str = "correct") -> bool:
    """A flag that must be a bool (not a truthy value)."""
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {brief(value)}"
        raise InvalidFact(msg)
    return value


def check_signature(signature: object) -> dict[str, Any] | None:
    """None, or a signature (a dict of texts: key, nonce and sig) as a dict of its own."""
    if signature is None or (isinstance(signature, Mapping) and all(
            type(k) is str and type(v) is str for k, v in signature.items())):
        return None if signature is None else dict(signature)
    raise InvalidFact(f"signature must be a dict of texts (key, nonce, sig): {brief(signature)}")


def check_list(value: object, name: str, what: str) -> list[Any]:
    """``value`` as a list: any iterable but a text or a dict; InvalidFact naming it."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InvalidFact(f"{name} must be a list of {what}, got {brief(value)}")
    return list(value)


def check_path(path: object) -> str | None:
    """A memory's location: None (in memory), a str or path (a SQLite file, or a
    PostgreSQL URL), or bytes (a file name in the file system's encoding)."""
    if path is None:
        return None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    elif isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        msg = (f"path must be a file name, a path, a PostgreSQL URL or None, got "
               f"{brief(path)} ({type(path).__name__})")
        raise InvalidFact(msg)
    if "\x00" in path:
        msg = f"path contains a NUL character: {brief(path)}"
        raise InvalidFact(msg)
    return path


# --------------------------------------------------------------------------- domains


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


def check_rule_text(text: object) -> str:
    """A rule text of the right type and size (UnsafeRule otherwise)."""
    if not isinstance(text, str) or not text.strip():
        msg = f"rule text must be a non-empty str, got {brief(text)}"
        raise UnsafeRule(msg)
    try:
        size = len(text.encode())
    except UnicodeEncodeError:
        msg = "rule text contains a lone surrogate; pass valid Unicode text"
        raise UnsafeRule(msg) from None
    if size > MAX_RULE_BYTES:
        msg = f"rule text is longer than {MAX_RULE_BYTES} bytes"
        raise UnsafeRule(msg)
    try:
        return check_nesting(text, "rule text")
    except InvalidFact as exc:
        raise UnsafeRule(str(exc)) from None


def check_categories(categories: object) -> dict[str, tuple[Any, ...]]:
    """``{attribute: categories}`` validated: the attribute's key -> its categories
    (strings or integers, at least two, distinct as values), or ``()`` for None or an empty
    list: the attribute's declaration is removed (it takes open values again)."""
    if categories is None:
        return {}
    if not isinstance(categories, Mapping):
        msg = f"categories must map an attribute to its categories, got {brief(categories)}"
        raise InvalidFact(msg)
    out: dict[str, tuple[Any, ...]] = {}
    for attr, cats in categories.items():
        key = normalise_key(attr, "attribute")
        if key in out:
            msg = f"attribute {attr!r} is given categories twice"
            raise InvalidFact(msg)
        if cats is None or (isinstance(cats, Sequence) and not isinstance(cats, (str, bytes))
                            and len(cats) == 0):
            out[key] = ()
            continue
        if isinstance(cats, (str, bytes)) or not isinstance(cats, Sequence):
            msg = f"the categories of {attr!r} must be a list of values, got {brief(cats)}"
            raise InvalidFact(msg)
        if not 2 <= len(cats) <= MAX_CATEGORIES:
            msg = f"{attr!r} needs 2 to {MAX_CATEGORIES} categories, got {len(cats)}"
            raise InvalidFact(msg)
        keys = []
        for c in cats:
            if isinstance(c, bool) or not isinstance(c, (str, int)):
                msg = f"a category must be a string or an integer, got {brief(c)} for {attr!r}"
                raise InvalidFact(msg)
            k = value_key(c)
            if k in keys or k == "":
                msg = f"category {c!r} of {attr!r} is empty or given twice (as a value)"
                raise InvalidFact(msg)
            keys.append(k)
        out[key] = tuple(cats)
    return out


def check_confusion_body(body: object) -> dict[str, Any]:
    """A prior event's ``confusion`` (from an import): ``{attribute: {"categories": [...],
    "class_prior": [K], "correlation": rho, "perception": K x K, "sources": {source:
    K x K}, and optionally "bagged": {source: B x K x K}}}`` (B bootstrap fits), every
    number finite and positive (rho in [0, 1])."""
    def bad(what: str) -> InvalidFact:
        return InvalidFact(f"confusion: {what}")

    if not isinstance(body, dict):
        raise bad("must map an attribute to what was learned about it")
    for attr, c in body.items():
        if not isinstance(attr, str) or not isinstance(c, dict):
            raise bad(f"{attr!r} must map to an object")
        cats = c.get("categories")
        if not (isinstance(cats, list) and 2 <= len(cats) <= MAX_CATEGORIES and all(
                isinstance(x, (str, int)) and not isinstance(x, bool) for x in cats)
                and len({repr(x) for x in cats}) == len(cats)):
            raise bad(f"the categories of {attr!r} must be 2 to {MAX_CATEGORIES} distinct "
                      "strings or integers")
        k = len(cats)
        rho = c.get("correlation")
        if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0 <= rho <= 1:
            raise bad(f"the correlation of {attr!r} must be a number in [0, 1]")
        if not _positive(c.get("class_prior"), (k,)):
            raise bad(f"the class prior of {attr!r} must be {k} positive numbers")
        if not _positive(c.get("perception"), (k, k)):
            raise bad(f"the perception of {attr!r} must be {k} x {k} positive numbers")
        srcs = c.get("sources")
        if not isinstance(srcs, dict) or not all(
                isinstance(s, str) and _positive(a, (k, k)) for s, a in srcs.items()):
            raise bad(f"the sources rows of {attr!r} must map a source to {k} x {k} "
                      "positive numbers")
        fits = c.get("bagged", {})  # each bootstrap fit's rows: learned since 0.3
        if not isinstance(fits, dict) or not all(
                isinstance(s, str) and isinstance(a, list) and 1 <= len(a) <= MAX_RESAMPLES
                and _positive(a, (len(a), k, k)) for s, a in fits.items()):
            raise bad(f"the bagged rows of {attr!r} must map a source to 1 to "
                      f"{MAX_RESAMPLES} fits of {k} x {k} positive numbers")
    return body


MAX_RESAMPLES = 100
"""The most bootstrap fits a source's bagged rows may hold."""


def _positive(x: object, shape: tuple[int, ...]) -> bool:
    if not isinstance(x, list) or len(x) != shape[0]:
        return False
    if len(shape) > 1:
        return all(_positive(r, shape[1:]) for r in x)
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               and v > 0 for v in x)


def check_similarity(sim: object) -> Similarity | None:
    """None, a Similarity, or a callable wrapped as one."""
    from .reliability.similarity import Similarity

    if sim is None or isinstance(sim, Similarity):
        return sim
    return Similarity(sim)  # type: ignore[arg-type]


def check_declaration(attribute: object, cardinality: object = "one",
                      value_type: object = None) -> Declaration:
    """A checked declaration (InvalidFact otherwise).

    Examples
    --------
    >>> check_declaration("Pet", "many")
    Declaration(attribute='pet', cardinality='many', value_type=None)
    """
    from .schema import CARDINALITIES, VALUE_TYPES, Declaration

    a = normalise_key(attribute, "attribute")
    check_choice(cardinality, CARDINALITIES, "cardinality")
    if value_type is not None and value_type not in VALUE_TYPES:
        msg = f"value_type must be None or one of {VALUE_TYPES}, got {brief(value_type)}"
        raise InvalidFact(msg)
    return Declaration(a, str(cardinality), None if value_type is None else str(value_type))


def check_schema(schema: object) -> dict[str, Declaration]:
    """``Memory(schema=...)``: ``{attribute: {"cardinality": ..., "value_type": ...}}``."""
    if schema is None:
        return {}
    if not isinstance(schema, Mapping):
        msg = f"schema must map attributes to declarations, got {brief(schema)}"
        raise InvalidFact(msg)
    out = {}
    for a, spec in schema.items():
        if not isinstance(spec, Mapping) or set(spec) - {"cardinality", "value_type"}:
            msg = (f"schema[{a!r}] must be a dict with cardinality and/or value_type, "
                   f"got {brief(spec)}")
            raise InvalidFact(msg)
        d = check_declaration(a, spec.get("cardinality", "one"), spec.get("value_type"))
        out[d.attribute] = d
    return out

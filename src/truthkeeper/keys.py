"""Keys: how subjects, attributes, sources and scopes are normalised, and the typed key a
value gets for the symbolic layer to compare (``value_key``). One place, used by the store,
the filter, the rules and the reliability layer."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import unicodedata
from typing import Any, TypeVar

from .errors import InvalidFact, brief

__all__ = ["MAX_KEY_CHARS", "MAX_NESTING", "MAX_VALUE_BYTES", "SCOPE_SEP", "fold_prefix",
           "forget_keys", "normalise_key", "random_hex", "remember", "scoped", "unscoped",
           "value_key"]

MAX_KEY_CHARS = 512
"""Longest subject, attribute, source or fact id accepted (characters, after normalisation)."""
MAX_VALUE_BYTES = 65536
"""Largest value, text or meta accepted (bytes of UTF-8 / canonical JSON)."""
MAX_NESTING = 100
"""Deepest nesting accepted in a value, meta, a rule text or a belief text."""

_WS = re.compile(r"\s+")


def _utf8(value: str, name: str) -> None:
    """Refuse text that cannot be stored (lone surrogates are not UTF-8)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        msg = f"{name} contains a lone surrogate ({brief(value)}); pass valid Unicode text"
        raise InvalidFact(msg) from None


def normalise_key(value: object, name: str) -> str:
    """Unicode NFC, casefolded, whitespace collapsed; non-empty and bounded."""
    if type(value) is str and value in _KEYS:
        return _KEYS[value]
    return remember(_KEYS, value, _normalise_key(value, name), 16_384)


_KEYS: dict[str, str] = {}


def forget_keys() -> None:
    """Empty the cache of normalised keys (after an erasure: an erased subject's name
    stays nowhere in the process)."""
    _KEYS.clear()


_T = TypeVar("_T")


def remember(cache: dict[Any, Any], key: object, value: _T, limit: int) -> _T:
    """Keep ``value`` under ``key`` in a cache of at most ``limit`` entries, emptied when
    full (what a load parses comes in runs: the recent entries come back); ``value``."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def _fold(value: str, name: str) -> str:
    """NFC, casefolded, runs of whitespace one space, stripped (InvalidFact for text that is
    not valid Unicode); ASCII text by a shorter path with the same result (it is valid
    UTF-8 and NFC already, casefold is lower there, and ``\\s`` is ``str.isspace``)."""
    if value.isascii():
        return " ".join(value.lower().split())
    _utf8(value, name)
    return _WS.sub(" ", unicodedata.normalize("NFC", value).casefold()).strip()


def fold_prefix(value: str, name: str) -> str:
    """A prefix of keys as the keys are folded (NFC, casefolded, whitespace collapsed); a
    trailing space is kept, so ``"new "`` is not ``"new"``."""
    if not isinstance(value, str):
        msg = f"{name} must be a str, got {brief(value)} ({type(value).__name__})"
        raise InvalidFact(msg)
    folded = _fold(value, name)
    return folded + " " if folded and value[-1:].isspace() else folded


def _normalise_key(value: object, name: str) -> str:
    if not isinstance(value, str):
        msg = f"{name} must be a str, got {brief(value)} ({type(value).__name__})"
        raise InvalidFact(msg)
    key = _fold(value, name)
    if not key:
        msg = f"{name} must be a non-empty string, got {brief(value)}"
        raise InvalidFact(msg)
    if len(key) > MAX_KEY_CHARS:
        msg = f"{name} is {len(key)} characters long; the limit is {MAX_KEY_CHARS}"
        raise InvalidFact(msg)
    return key


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
                msg = (f"{name} has a key {brief(k)} that is not a str; it would come back as "
                       "a string after a reopen")
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
        return _fold(value, "value")
    if value is None:
        return ("n", 0)
    if isinstance(value, bool):
        return ("b", 1 if value else 0)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            msg = f"value {brief(value)} is out of range; integers must fit in 64 bits"
            raise InvalidFact(msg)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"value must be a finite number, got {brief(value)}"
            raise InvalidFact(msg)
        if value.is_integer() and abs(value) < 2**63:
            return int(value)
        return value
    text = _json(value, "value")
    if len(text) > MAX_VALUE_BYTES:
        msg = f"value is {len(text)} bytes as JSON; the limit is {MAX_VALUE_BYTES}"
        raise InvalidFact(msg)
    return ("j", text)


SCOPE_SEP = "\x1f"
"""Joins a scope and a subject into the store's subject key; normalised keys never hold it
(it is whitespace to the normaliser), so no subject can reach into a scope."""


def scoped(scope: str | None, subject: str) -> str:
    """The store's subject key of a normalised subject in a scope."""
    return subject if scope is None else f"{scope}{SCOPE_SEP}{subject}"


def unscoped(key: str) -> tuple[str | None, str]:
    """``(scope, subject)`` of a store subject key."""
    scope, sep, subject = key.rpartition(SCOPE_SEP)
    return (scope, subject) if sep else (None, key)


def random_hex() -> str:
    """16 random hex digits (64 bits from ``os.urandom``, as ``secrets.token_hex(8)``):
    fact ids and journal salts. Drawn from a buffer refilled 4 KiB at a time, so that a
    bulk load does not ask the kernel twice per fact; each digit is handed out once."""
    global _HEX, _AT  # noqa: PLW0603
    with _HEX_LOCK:
        if len(_HEX) <= _AT:
            _HEX, _AT = os.urandom(4096).hex(), 0
        out = _HEX[_AT:_AT + 16]
        _AT += 16
    return out


_HEX = ""
_AT = 0
_HEX_LOCK = threading.Lock()


def _forget_hex() -> None:
    """A forked child draws its own digits, never its parent's buffered ones."""
    global _HEX, _AT, _HEX_LOCK  # noqa: PLW0603
    _HEX, _AT, _HEX_LOCK = "", 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_hex)

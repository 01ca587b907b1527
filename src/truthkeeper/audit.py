"""The audit log: drops made by ``filter`` and refused writes, bounded in memory.

Every entry belongs to the scope of the view that made the call (``details["scope"]``; none
for the memory itself), and a view reads only its own scope's entries: no query crosses a
scope.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from .errors import InvalidFact
from .journal.codec import is_erased
from .results import AuditEntry, Drop
from .values import Candidate, Fact, normalise_key

__all__ = ["AuditLog", "caller_scope", "current_scope", "enter_scope", "leave_scope"]

_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("truthkeeper_scope",
                                                                    default=None)


@contextlib.contextmanager
def caller_scope(scope: str | None) -> Iterator[None]:
    """The scope whose call runs inside: entries recorded meanwhile belong to it."""
    token = enter_scope(scope)
    try:
        yield
    finally:
        leave_scope(token)


def enter_scope(scope: str | None) -> contextvars.Token[str | None]:
    """:func:`caller_scope`'s entry, for a context manager written as a class (the
    memory's own, entered by every call); :func:`leave_scope` with the token undoes it."""
    return _CALLER.set(scope)


def leave_scope(token: contextvars.Token[str | None]) -> None:
    _CALLER.reset(token)


def current_scope() -> str | None:
    """The scope whose call is running (None: the unscoped memory's)."""
    return _CALLER.get()


def _scoped(details: dict[str, Any], scope: str | None) -> dict[str, Any]:
    return details if scope is None else {**details, "scope": scope}


class AuditLog:
    """The newest ``limit`` audit entries, oldest first; filter drops are expanded into
    entries only when read."""

    def __init__(self, limit: int = 10_000,
                 sink: Callable[[Callable[[], list[dict[str, Any]]]], None] | None = None,
                 ) -> None:
        self._rows: collections.deque[Any] = collections.deque(maxlen=limit)
        self._lock = threading.Lock()
        self.sink = sink
        """Receives, for each new entry, a function that makes its journal event bodies (the
        memory journals them with its next write)."""
        self.on_erase: Callable[[Callable[[Mapping[str, Any]], bool], datetime | None],
                                None] | None = None
        """Told of each erasure's match: the entries waiting for a write go too."""

    def rejected(self, exc: BaseException, details: Mapping[str, Any]) -> None:
        """Record a refused write."""
        entry = AuditEntry("rejected_write", datetime.now(UTC), _scoped(_safe(
            {**details, "error": type(exc).__name__, "message": str(exc)}), _CALLER.get()))
        with self._lock:
            self._rows.append(entry)
        if self.sink is not None:
            self.sink(lambda: [_body(entry)])

    def dropped(self, query: str | None, drops: tuple[Drop, ...]) -> None:
        """Record the drops of one ``filter`` call."""
        at, scope = datetime.now(UTC), _CALLER.get()
        drops = drops[-(self._rows.maxlen or len(drops)):]  # the bound holds for one call too
        with self._lock:
            self._rows.extend((at, query, (d,), scope) for d in drops)
        if self.sink is not None:
            self.sink(lambda: [_body(AuditEntry("drop", at, _scoped(_safe(_drop(query, d)),
                                                                    scope)))
                               for d in drops])

    def restore(self, body: Mapping[str, Any]) -> None:
        """An entry read back from the journal."""
        with self._lock:
            self._rows.append(_entry(body))

    def restore_older(self, bodies: list[Mapping[str, Any]]) -> None:
        """Entries read back from the journal after newer ones were recorded (a memory
        opened lazily reads its journalled entries when first asked); those it recorded
        itself since, and journalled with a write, are held once (they were listed twice)."""
        with self._lock:
            held = collections.Counter(_key(_body(e)) for e in self._expanded(True))
            older = []
            for b in bodies:
                if is_erased(b):
                    continue
                if held[_key(b)]:
                    held[_key(b)] -= 1
                    continue
                older.append(_entry(b))
            self._rows = collections.deque(older + list(self._rows), maxlen=self._rows.maxlen)

    def _expanded(self, safe: bool = False, scope: Any = ...) -> Iterator[AuditEntry]:
        """Every entry kept (of ``scope``, when given), oldest first, drops expanded
        (``safe``: as journalled)."""
        for row in self._rows:
            if isinstance(row, AuditEntry):
                if scope is ... or row.details.get("scope") == scope:
                    yield row
                continue
            at, query, drops, where = row
            for d in drops if scope is ... or where == scope else ():
                details = _drop(query, d)
                yield AuditEntry("drop", at, _scoped(_safe(details) if safe else details, where))

    def erase(self, match: Callable[[Mapping[str, Any]], bool],
              until: datetime | None = None) -> None:
        """Forget every entry whose details ``match`` (an erasure), of those recorded up to
        ``until`` when given (another handle's erasure reaches no entry made after it)."""
        with self._lock:
            kept: list[Any] = []
            for row in self._rows:
                if isinstance(row, AuditEntry):
                    if (until is not None and row.at > until) or not match(row.details):
                        kept.append(row)
                    continue
                at, query, drops, where = row
                left = drops if until is not None and at > until else tuple(
                    d for d in drops if not match(_scoped(_safe(_drop(query, d)), where)))
                if left:
                    kept.append((at, query, left, where))
            self._rows = collections.deque(kept, maxlen=self._rows.maxlen)
        if self.on_erase is not None:
            self.on_erase(match, until)

    def scopes(self) -> set[str]:
        """The scopes that have an entry kept."""
        with self._lock:
            rows = list(self._rows)
        return {x for x in (r.details.get("scope") if isinstance(r, AuditEntry) else r[3]
                            for r in rows) if x is not None}

    def entries(self, scope: str | None = None) -> list[AuditEntry]:
        """Every entry kept of ``scope`` (None: the memory's own), oldest first."""
        with self._lock:
            return list(self._expanded(scope=scope))


def _drop(query: str | None, d: Drop) -> dict[str, Any]:
    return {"query": query, "item": _describe(d.item),
            "dominated_by": _describe(d.dominated_by), "rule": d.rule,
            "subject": _subject(d.item)}


def _subject(item: Any) -> str | None:
    """The (normalised) subject an item is about, so that erasing a subject finds it."""
    try:
        return normalise_key(item.subject, "subject") if isinstance(
            item, (Fact, Candidate)) else None
    except InvalidFact:
        return None


def _key(body: Mapping[str, Any]) -> tuple[Any, ...]:
    """An entry's journal body as a key: the same entry journalled and held compare equal."""
    return (body.get("kind"), body.get("at"),
            json.dumps(body.get("details"), sort_keys=True, default=str))


def _body(entry: AuditEntry) -> dict[str, Any]:
    return {"kind": entry.kind, "at": entry.at.isoformat(), "details": dict(entry.details)}


def _safe(details: Mapping[str, Any]) -> dict[str, Any]:
    """Details that can be journalled whatever the refused input held: short text, valid
    Unicode, plain values."""
    out: dict[str, Any] = {}
    for k, v in details.items():
        if not isinstance(v, (str, int, float, bool, type(None))):
            try:
                v = repr(v)
            except Exception:  # noqa: BLE001 - any repr failure
                v = f"<{type(v).__name__}>"
        if isinstance(v, str):
            v = v[:500].encode("utf-8", "replace").decode("utf-8")
        out[str(k)[:100].encode("utf-8", "replace").decode("utf-8")] = v
    return out


def _describe(item: Any) -> Any:
    return item.id if isinstance(item, Fact) else item


def _entry(body: Mapping[str, Any]) -> AuditEntry:
    return AuditEntry(str(body.get("kind")), datetime.fromisoformat(str(body.get("at"))),
                      dict(body.get("details") or {}))

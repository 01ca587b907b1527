"""The audit log: drops made by ``filter`` and refused writes, bounded in memory."""

from __future__ import annotations

import collections
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .values import AuditEntry, Drop, Fact

__all__ = ["AuditLog"]


class AuditLog:
    """The newest ``limit`` audit entries, oldest first; filter drops are expanded into
    entries only when read."""

    def __init__(self, limit: int = 100_000) -> None:
        self._rows: collections.deque[Any] = collections.deque(maxlen=limit)
        self._lock = threading.Lock()

    def rejected(self, exc: BaseException, details: Mapping[str, Any]) -> None:
        """Record a refused write."""
        with self._lock:
            self._rows.append(AuditEntry(
                "rejected_write", datetime.now(UTC),
                {**details, "error": type(exc).__name__, "message": str(exc)}))

    def dropped(self, query: str | None, drops: tuple[Drop, ...]) -> None:
        """Record the drops of one ``filter`` call."""
        with self._lock:
            self._rows.append((datetime.now(UTC), query, drops))

    def entries(self) -> list[AuditEntry]:
        """Every entry kept, oldest first."""
        with self._lock:
            rows = list(self._rows)
        out: list[AuditEntry] = []
        for row in rows:
            if isinstance(row, AuditEntry):
                out.append(row)
                continue
            at, query, drops = row
            out.extend(AuditEntry("drop", at, {
                "query": query, "item": _describe(d.item),
                "dominated_by": _describe(d.dominated_by), "rule": d.rule}) for d in drops)
        return out


def _describe(item: Any) -> Any:
    return item.id if isinstance(item, Fact) else item

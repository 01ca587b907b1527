"""What the LangChain and LlamaIndex adapters share: retrieved documents' metadata mapped
to filter items, and a report of what was kept, dropped (and why) or left unjudged.

A document is judged when its metadata names a ``fact_id`` of the memory, or a slot
(``subject``, ``attribute``) with ``valid_from``; its value is ``metadata["value"]`` when
given, else the document's text. ``tier`` defaults to ``unverified`` (retrieved text) and
``source`` to none. Documents without that metadata pass through untouched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memory import Memory
from ..values import Candidate, ToDict, jsonable

__all__ = ["DocumentReport", "judge_documents"]


@dataclass(frozen=True, slots=True)
class DocumentReport(ToDict):
    """By input position: kept (judged current), dropped ``(position, rule, dominated_by)``
    and unjudged (no slot metadata, passed through)."""

    kept: tuple[int, ...]
    dropped: tuple[tuple[int, str, Any], ...]
    unjudged: tuple[int, ...]

    def reason(self, position: int) -> dict[str, Any]:
        """What happened to the document at ``position``, as JSON-ready metadata."""
        if position in self.unjudged:
            return {"status": "unjudged"}
        for pos, rule, by in self.dropped:
            if pos == position:
                return {"status": "dropped", "rule": rule, "dominated_by": jsonable(by)}
        return {"status": "current"}


def judge_documents(memory: Memory, metadatas: Sequence[Mapping[str, Any] | None],
                    contents: Sequence[str], query: str | None = None) -> DocumentReport:
    """Filter retrieved documents through ``memory`` (Phi_T against each other and against
    what the memory knows of their slots); the drops go to the memory's audit log."""
    items: list[Any] = []
    where: list[int] = []
    unjudged: list[int] = []
    for pos, (md, text) in enumerate(zip(metadatas, contents, strict=True)):
        md = md or {}
        if md.get("fact_id"):
            items.append(str(md["fact_id"]))
        elif md.get("subject") and md.get("attribute") and md.get("valid_from"):
            items.append(Candidate(md["subject"], md["attribute"], md.get("value", text),
                                   md["valid_from"], tier=md.get("tier") or "unverified",
                                   source=md.get("source"), text=text))
        else:
            unjudged.append(pos)
            continue
        where.append(pos)
    if not items:
        return DocumentReport((), (), tuple(unjudged))
    res = memory.filter(items, query=query)
    kept_iter, drop_iter = iter(res.kept), iter(res.dropped)
    next_kept, next_drop = next(kept_iter, None), next(drop_iter, None)
    kept: list[int] = []
    dropped: list[tuple[int, str, Any]] = []
    for pos, item in zip(where, items, strict=True):
        if next_kept is item:
            kept.append(pos)
            next_kept = next(kept_iter, None)
        elif next_drop is not None and next_drop.item is item:
            dropped.append((pos, next_drop.rule, next_drop.dominated_by))
            next_drop = next(drop_iter, None)
    return DocumentReport(tuple(kept), tuple(dropped), tuple(unjudged))

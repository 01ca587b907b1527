"""What the LangChain and LlamaIndex adapters share: retrieved documents' metadata mapped
to filter items, and a report of what was kept, dropped (and why) or left unjudged.

A document is judged when its metadata names a ``fact_id`` of the memory, or a slot
(``subject``, ``attribute``) with a ``value`` and ``valid_from``. ``valid_from`` and
``valid_to`` may be ISO 8601 with or without an offset (without: UTC), a date, or epoch
seconds or milliseconds; the value follows the attribute's declared type (``"135"`` is 135
where ``price`` is a number). ``tier`` defaults to ``unverified`` (retrieved text) and
``source`` to none; ``present`` false (or ``"false"``, as a vector store may keep it)
says the value is no longer a member of a set attribute. Everything else passes unjudged
with its reason in the report (no slot, no value: a document's text is never compared as
a value, unusable metadata); a document never fails the retrieval. Verdicts go into
metadata, never into the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import TruthkeeperError, brief
from ..memory import Memory
from ..schema import boundary_time
from ..values import Candidate, ToDict, jsonable

__all__ = ["HELD_SHOWN", "DocumentReport", "judge_documents"]


@dataclass(frozen=True, slots=True)
class DocumentReport(ToDict):
    """By input position: kept (not dominated), dropped ``(position, rule, dominated_by)``
    and unjudged (passed through), with why each unjudged one was not judged. ``unknown``
    are the kept ones about a slot of which the memory holds no fact now (never told, or
    erased): judged against the other documents only, so not known to be current.
    ``disputed``: ``(position, facts)``, a kept document whose value none of the facts the
    memory holds on its slot has, neither making the other obsolete (under the default
    policy, a newer document of a lower tier than the memory's fact): not stale, and not
    what the memory holds either. Its facts come the highest tier first, then the newest;
    a document's metadata names the first :data:`HELD_SHOWN`."""

    kept: tuple[int, ...]
    dropped: tuple[tuple[int, str, Any], ...]
    unjudged: tuple[int, ...]
    why_unjudged: tuple[tuple[int, str], ...] = ()
    unknown: tuple[int, ...] = ()
    disputed: tuple[tuple[int, tuple[Any, ...]], ...] = ()

    def reason(self, position: int) -> dict[str, Any]:
        """What happened to the document at ``position``, as JSON-ready metadata."""
        if position in self.unjudged:
            why = dict(self.why_unjudged).get(position)
            return {"status": "unjudged", **({} if why is None else {"reason": why})}
        for pos, rule, by in self.dropped:
            if pos == position:
                return {"status": "dropped", "rule": rule, "dominated_by": jsonable(by)}
        if position in self.unknown:
            return {"status": "unknown", "reason": _UNKNOWN}
        for p, facts in self.disputed:
            if p == position:  # the strongest few: a poll's hundreds would flood a context
                more = len(facts) - HELD_SHOWN
                return {"status": "conflict", "reason": _CONFLICT,
                        "memory": [_held(f) for f in facts[:HELD_SHOWN]],
                        **({"memory_omitted": more} if more > 0 else {})}
        return {"status": "current"}


HELD_SHOWN = 5
"""How many of the memory's facts a disputed document's metadata names (the highest tier
first, then the newest); ``memory_omitted`` counts the others."""

_ITEM = re.compile(r"^items\[\d+\]\.?")
"""How ``filter`` names an item in an error: its position in the call, not the document's."""
_UNKNOWN = "the memory holds no fact on this slot: judged against the other documents only"
_CONFLICT = ("the memory holds facts on this slot that disagree with this document, and "
             "neither makes the other obsolete under its policy (e.g. a newer claim of a "
             "lower tier than the memory's fact)")


def _held(f: Any) -> dict[str, Any]:
    """What a document's metadata says of a fact the memory holds."""
    return {"fact_id": f.id, "value": jsonable(f.value), "tier": f.tier, "source": f.source,
            "valid_from": jsonable(f.valid_from)}


def _item(memory: Memory, md: Mapping[str, Any], text: str) -> Any:
    """The filter item of one document's metadata, or a str: why it is not judged."""
    fid = md.get("fact_id")
    if fid:  # an id a vector store may have kept as a number: its text, if it is short
        if isinstance(fid, str) or (type(fid) is int and fid.bit_length() <= 256):
            return str(fid), None
        return None, f"unusable metadata: fact_id must be a fact's id, got {brief(fid)}"
    if not (md.get("subject") and md.get("attribute")):
        return None, "no subject and attribute in its metadata"
    if "value" not in md:
        return None, "no value in its metadata (its text is not compared as a value)"
    if md.get("valid_from") in (None, ""):
        return None, "no valid_from in its metadata"
    try:  # the value's declared type is the memory's to apply (filter coerces)
        vt = md.get("valid_to")
        return Candidate(md["subject"], md["attribute"], md["value"],
                         boundary_time(md["valid_from"], "valid_from"),
                         tier=md.get("tier") or "unverified", source=md.get("source"),
                         text=text,
                         valid_to=None if vt in (None, "") else boundary_time(vt, "valid_to"),
                         present=_flag(md.get("present", True))), None
    except TruthkeeperError as exc:
        return None, f"unusable metadata: {exc}"


def _flag(value: Any) -> Any:
    """A boolean as a vector store may keep it: ``"false"`` or ``"true"`` (any case) as
    that boolean, as MCP's arguments read it; anything else as it is (``filter`` refuses
    what is no bool, with its reason)."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def judge_documents(memory: Memory, metadatas: Sequence[Mapping[str, Any] | None],
                    contents: Sequence[str], query: str | None = None) -> DocumentReport:
    """Filter retrieved documents through ``memory`` (Phi_T against each other and against
    what the memory knows of their slots); the drops go to the memory's audit log. A
    document the memory cannot judge passes with its reason: this never raises for a
    document's metadata (an error about none of them, a damaged journal say, is raised)."""
    items: list[Any] = []
    where: list[int] = []
    why: dict[int, str] = {}
    for pos, (md, text) in enumerate(zip(metadatas, contents, strict=True)):
        item, reason = _item(memory, md or {}, text)
        if item is None:
            why[pos] = str(reason)
            continue
        items.append(item)
        where.append(pos)
    res = None
    while items:  # each refused item is left out and the rest asked again: one call decides
        try:      # (and writes the audit log's drops: only once)
            res = memory.filter(items, query=query)
            break
        except TruthkeeperError as exc:
            if exc.item is None or not 0 <= exc.item < len(items):
                raise  # about no document (a damaged journal, say): the memory's to report
            text = _ITEM.sub(lambda m: "" if m[0].endswith(".") else "it", str(exc))
            why[where[exc.item]] = f"refused by the memory: {type(exc).__name__}: {text}"
            del items[exc.item], where[exc.item]
    report = _report(res, where, items)
    unjudged = tuple(sorted(why))
    item_at = dict(zip(where, items, strict=True))
    held: dict[tuple[Any, Any], bool] = {}  # one read a slot, however many documents
    for p in report[0]:
        if isinstance(c := item_at[p], Candidate) and (c.subject, c.attribute) not in held:
            held[c.subject, c.attribute] = memory.current(c.subject, c.attribute).status \
                != "unknown"
    unknown = tuple(p for p in report[0] if isinstance(c := item_at[p], Candidate)
                    and not held[c.subject, c.attribute])
    at = {id(item): p for p, item in zip(where, items, strict=True)}
    rank = {t: i for i, t in enumerate(memory.tiers)}  # the highest tier first, then newest
    disputed = () if res is None else tuple(
        (at[id(d.item)], tuple(sorted(d.heads, key=lambda f: (rank.get(f.tier, len(rank)),
                                                              -f.valid_from.timestamp(), f.id))))
        for d in res.disputed)
    return DocumentReport(report[0], report[1], unjudged, tuple((p, why[p]) for p in unjudged),
                          unknown, disputed)


def _report(res: Any, where: list[int], items: list[Any],
            ) -> tuple[tuple[int, ...], tuple[tuple[int, str, Any], ...]]:
    if res is None:
        return (), ()
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
    return tuple(kept), tuple(dropped)

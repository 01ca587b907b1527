"""The parts of a store that hold no facts' decisions: the Facts of its last large answers,
what it forgets after an erasure, and its listing by layer (scope)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..journal.codec import row_fact
from ..keys import forget_keys
from ..values import Fact, ValueSupport, unscoped
from . import bridge

__all__ = ["Forgetting", "LargeAnswers", "Layers"]


class LargeAnswers:
    """The Facts of the last answers that had many heads (a set of many members), by the
    store's rows: a row that comes back unchanged is the same Fact (:func:`row_fact` is a
    function of the row alone), so reading a large set again after one member changed
    makes one Fact, not one per member. Bounded: ``SLOTS`` answers of at least ``HEADS``
    heads each."""

    HEADS = 256
    SLOTS = 4

    def __init__(self) -> None:
        self.by_slot: dict[tuple[Any, ...], dict[tuple[Any, ...], Any]] = {}

    def answer(self, key: tuple[Any, ...], groups: list[list[tuple[Any, ...]]],
               ) -> tuple[list[Fact], tuple[ValueSupport, ...]]:
        """The heads and the values they support of these groups of rows, one group a
        value (``key``: the slot and how it was asked)."""
        large = sum(map(len, groups)) >= self.HEADS
        known = self.by_slot.pop(key, {}) if large else {}
        made: dict[Any, Any] = {}
        heads: list[Fact] = []
        cands: list[ValueSupport] = []
        for g in groups:
            row = g[0] if len(g) == 1 else tuple(g)  # several heads of one value: rare
            hit = known.get(row)
            if hit is None:
                fs = [row_fact(r) for r in g]
                hit = (fs, ValueSupport(fs[0].value, tuple(f.id for f in fs),
                                        tuple(dict.fromkeys(f.source for f in fs)),
                                        present=fs[0].present))
            if large:
                made[row] = hit
            heads += hit[0]
            cands.append(hit[1])
        if large:
            if len(self.by_slot) >= self.SLOTS:  # the oldest goes first
                self.by_slot.pop(next(iter(self.by_slot)))
            self.by_slot[key] = made
        return heads, tuple(cands)


class Forgetting:
    """What a store's process keeps of erased facts besides the store (its caches, Prolog's
    tables, clauses and atoms), forgotten after erasures: at once after this memory's own,
    before the next answer after others' (:meth:`forget_now`, once for a run of them)."""

    h: int
    large: LargeAnswers
    forgetting: list[tuple[str, str]] | None = None
    """Erasures applied since :meth:`forget` last ran (their facts' slots)."""

    def forget_later(self, slots: Iterable[tuple[str, str]]) -> None:
        """An erasure was applied: :meth:`forget` is due, with the erased facts' slots."""
        self.forgetting = [*(self.forgetting or ()), *slots]

    def forget_now(self) -> None:
        """:meth:`forget`, if an erasure was applied since it last ran."""
        if self.forgetting is not None:
            slots, self.forgetting = self.forgetting, None
            self.forget(slots)

    def forget(self, slots: Iterable[tuple[str, str]] = ()) -> None:
        """After erasures: the normalised names' cache and the heads kept of the last
        large answers go, and Prolog's belief tables, then its clauses and atoms nothing
        holds (the erased values leave the process now, not at SWI-Prolog's next
        collection). ``slots``: the erased facts' (a lazy store stops listing as read in
        those left without an event)."""
        forget_keys()
        self.large = LargeAnswers()
        bridge.ask("tk_forget(M)", {"M": self.h})


class Layers:
    """What a store holds by layer (scope), for the owner's listing and a scope's erasure."""

    def slots(self, subject: str | None = None) -> list[tuple[str, str]]:
        raise NotImplementedError

    def slots_starting(self, prefix: str) -> list[tuple[str, str]]:
        """The slots whose subject key starts with ``prefix``, sorted."""
        return [x for x in self.slots(None) if x[0].startswith(prefix)]

    def scopes(self) -> set[str]:
        """The scopes of the slots that hold a fact."""
        return {sc for s, _ in self.slots(None) for sc in [unscoped(s)[0]] if sc is not None}

    def scope_slots(self, scope: str) -> list[tuple[str, str]]:
        """The slots of ``scope``'s own facts (store keys), sorted."""
        return [(s, a) for s, a in self.slots(None) if unscoped(s)[0] == scope]

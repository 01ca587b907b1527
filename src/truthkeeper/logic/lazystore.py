"""A store opened lazily: each call first brings in, from the journal's slot index, the
slots it reads (all of them for what ranges over all), then answers as :class:`Store` does.

The loading is this class's only concern; the loader (:class:`~truthkeeper.lazy.LazyLoad`)
reads and verifies the slots' events, and :class:`Store` holds and decides. A store whose
loader has read everything (or that had to replay the journal in full) answers as a
:class:`Store` at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set
from typing import Any

from ..journal.codec import ERASED_ATTRIBUTE, erased_slot
from ..journal.slotindex import slot_key
from ..values import SCOPE_SEP, Fact, Resolution, scoped, unscoped
from .store import Store

__all__ = ["LazyStore", "source_keys"]


def source_keys(scope: str | None, source: str) -> list[str]:
    """The slot index keys of a source's bindings a view of ``scope`` must know: the
    shared layer's and, in a scope, the scope's own (``s:<scope><sep><source>``)."""
    return ["s:" + source] + ([] if scope is None else ["s:" + scoped(scope, source)])


class LazyStore(Store):
    """A :class:`Store` whose slots come in when first read (``Memory(lazy=True)``, the
    default for a journal with a slot index). ``lazy`` is set once the loader exists."""

    lazy: Any

    def need(self, slots: Iterable[tuple[str, str]] = (), ids: Iterable[str | None] = (),
             keys: Iterable[str] = (), *, hold: bool = False) -> None:
        """Bring these slots (store keys), those of these fact ids and these index keys
        into the store; ``hold``: keep the slots in (a write's: see ``LazyLoad.need``)."""
        if self.lazy is not None and not self.lazy.done:
            self.lazy.need([slot_key(s, a) for s, a in slots],
                           [*("i:" + i for i in ids if isinstance(i, str)), *keys], hold=hold)
            # a slot loaded now may hold a fact that began or ended between the clock's
            # last move and the time the memory last asked at: move it as catching up
            # would have, had the slot been in the store then
            if self.asked_at is not None and self.due(self.asked_at):
                self.tick(self.asked_at)

    def need_all(self) -> None:
        """Bring every slot into the store."""
        if self.lazy is not None and not self.lazy.done and not self.lazy.busy:
            self.lazy.load_all()

    # ------------------------------------------------------------------ writes

    def prefetch(self, facts: Sequence[Fact], drawn: Set[str] = frozenset()) -> None:
        self._need_for(facts, drawn)

    def commutes(self, facts: Sequence[Fact], drawn: Set[str]) -> bool:
        self._need_for(facts, drawn)  # the sources' bindings (``prefetch`` brought them in)
        return super().commutes(facts, drawn)

    def add(self, facts: Sequence[Fact], ras: Sequence[int], now: int | None = None,
            drawn: Set[str] = frozenset()) -> list[Fact]:
        # under the write's lock this asks the journal nothing when ``prefetch`` brought
        # the slots in and the sources are bound: a write holds the lock for less
        self._need_for(facts, drawn)
        return super().add(facts, ras, now, drawn)

    def _need_for(self, facts: Sequence[Fact], drawn: Set[str]) -> None:
        """The slots of ``facts``, those of the ids they supersede, and of their own ids
        unless drawn at random; the index keys they must not collide with: their sources'
        bindings and their signatures' nonces."""
        if self.lazy is not None and not self.lazy.done:
            # a batch names few sources: each one's keys once
            keys = [k for scope, source in dict.fromkeys((f.scope, f.source) for f in facts)
                    for k in source_keys(scope, source)]
            keys += ["n:" + n for f in facts if f.signature is not None
                     and isinstance(n := f.signature.get("nonce"), str)]
            self.need([(scoped(f.scope, f.subject), f.attribute) for f in facts],
                      [x for f in facts for x in (f.id, f.supersedes) if x not in drawn],
                      keys, hold=True)

    def retract(self, fid: str, ra: int, reason: str) -> None:
        self.need(ids=[fid])
        super().retract(fid, ra, reason)

    def end(self, fid: str, valid_to: int | None, ra: int | None) -> None:
        self.need(ids=[fid])
        super().end(fid, valid_to, ra)

    def erase(self, fids: Sequence[str], ra: int) -> None:
        if self.lazy is not None:  # supersedes links may cross slots from now on
            self.lazy.erasures = True
        super().erase(fids, ra)

    def bind_source(self, source: str, tier: str, scope: str | None = None, *,
                    restore: bool = False, check: bool = False) -> None:
        if not restore:
            self.need(keys=source_keys(scope, source))
        super().bind_source(source, tier, scope, restore=restore, check=check)

    def use_nonce(self, nonce: str, owner: str) -> None:
        self.need(keys=["n:" + nonce])
        super().use_nonce(nonce, owner)

    # ------------------------------------------------------------------ reads of some slots

    def source_tier(self, source: str, scope: str | None = None) -> str | None:
        self.need(keys=source_keys(scope, source))
        return super().source_tier(source, scope)

    def facts(self, ids: Sequence[str], with_status: bool = False) -> list[Fact]:
        self.need(ids=ids)
        return super().facts(ids, with_status)

    def status(self, fid: str) -> tuple[str, int | None, str | None]:
        self.need(ids=[fid])
        return super().status(fid)

    def slots(self, subject: str | None = None) -> list[tuple[str, str]]:
        """Every slot: from the slot index, while not every slot is read in (reads none:
        listing them read all in, 6 s at 100,000 facts), with the slots read in."""
        if self.lazy is None or self.lazy.done:
            return super().slots(subject)
        if subject is not None:
            self.lazy.need_subject(subject)
            return super().slots(subject)
        return self.slots_starting("")

    def slots_starting(self, prefix: str) -> list[tuple[str, str]]:
        """Those whose subject key starts with ``prefix``: a range of the slot index, while
        not every slot is read in (see :meth:`slots`)."""
        keys = None if self.lazy is None else self.lazy.index_slots(prefix)
        # those read in (all, when the index is not asked: every slot is in, or being read
        # in); a slot whose name holds NUL is in the store, never indexed
        got = {x for x in super().slots(None) if x[0].startswith(prefix)}
        for key in keys or ():
            s, sep, a = key.rpartition(SCOPE_SEP)  # no separator: the events of no slot
            if sep and a != ERASED_ATTRIBUTE and s.startswith(prefix):  # (GLOBAL, AUDIT);
                got.add((s, a))  # an erased fact's placeholder slot holds no fact
        return sorted(got)

    def scopes(self) -> set[str]:
        """From the slot index, while not every slot is read in (see :meth:`slots`)."""
        return {sc for s, _ in self.slots(None) for sc in [unscoped(s)[0]] if sc}

    def scope_slots(self, scope: str) -> list[tuple[str, str]]:
        """Those the slot index lists under the scope, read in (not every slot)."""
        if self.lazy is not None and not self.lazy.done:
            self.lazy.need(self.lazy.index_slots(scope + SCOPE_SEP) or ())
        return [(s, a) for s, a in super().slots(None) if unscoped(s)[0] == scope]

    def forget(self, slots: Iterable[tuple[str, str]] = ()) -> None:
        super().forget(slots)
        if self.lazy is not None:
            self.lazy.forget([slot_key(s, a) for s, a in slots])

    def history(self, subject: str, attribute: str) -> list[Fact]:
        scope, plain = unscoped(subject)
        hidden = (scoped(scope, erased_slot(plain, attribute)[0]), ERASED_ATTRIBUTE)
        # the placeholders' slot can hold something only once the journal has an erasure
        self.need([(subject, attribute)] + ([hidden] if self.lazy is None
                                            or self.lazy.erasures else []))
        return super().history(subject, attribute)

    def resolve(self, subject: str, attribute: str, *, known_at: int | None = None,
                valid_at: int | None = None, as_of: bool = False,
                layers: Sequence[str] | None = None) -> Resolution:
        self.need([(subject, attribute)] if layers is None else
                  [(k, attribute) for k in layers])
        return super().resolve(subject, attribute, known_at=known_at, valid_at=valid_at,
                               as_of=as_of, layers=layers)

    def links(self, fid: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        self.need(ids=[fid])
        return super().links(fid)

    def dominance_pairs(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        self.need(ids=ids)
        return super().dominance_pairs(ids)

    def verdicts(self, ids: Sequence[str], scope: str | None = None) -> list[tuple[Any, ...]]:
        self.need(ids=ids)
        return super().verdicts(ids, scope)

    def match_heads(self, layers: Sequence[str], attribute: str, value: object,
                    ) -> tuple[list[str], list[str]]:
        self.need([(k, attribute) for k in layers])
        return super().match_heads(layers, attribute, value)

    # ------------------------------------------------------------------ reads of every slot

    def attribute_used(self, attribute: str) -> bool:
        self.need_all()
        return super().attribute_used(attribute)

    def sources(self, scope: str | None = None) -> list[tuple[str, str]]:
        self.need_all()
        return super().sources(scope)

    def __len__(self) -> int:
        self.need_all()
        return super().__len__()

    def count(self, scope: str | None) -> int:
        n: int | None = None if self.lazy is None else self.lazy.count(scope)
        if n is None:
            self.need_all()
            return super().count(scope)
        return n

    def all_facts(self) -> list[tuple[Fact, str]]:
        self.need_all()
        return super().all_facts()

    def conflicts(self) -> list[tuple[str, str]]:
        self.need_all()
        return super().conflicts()

    def claims(self, gold: Sequence[str],
               ) -> list[tuple[list[str], list[int], int, int, list[Any], str]]:
        self.need_all()
        return super().claims(gold)

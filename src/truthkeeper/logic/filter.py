"""Phi_T over a retrieved context: which items are stale, and what makes them so.

The decision is Prolog's (``phi.pl`` over the policy registry, ``tk_filter_ids`` for facts
of the store, ``tk_order_pairs`` for the pairs a kappa may judge); this module marshals the
items and builds the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import InvalidFact, TierNotAuthorized, TruthkeeperError, UnknownFact, brief
from ..journal.codec import row_fact
from ..results import Dispute, Drop, FilterResult
from ..validation import check_list, check_source, from_us, time_us
from ..values import (
    Candidate,
    Fact,
    FactBuilder,
    normalise_key,
    scoped,
    to_us,
    unscoped,
)
from . import bridge
from .store import Store, member_key

if TYPE_CHECKING:
    from ..signing import Guard

__all__ = ["candidate_rows", "filter_items"]


def _layers(slots: dict[str, list[tuple[str, str, str]]], scope: str | None, s: str,
            a: str) -> None:
    """The store slots a candidate of (store key ``s``, ``a``) is judged against: its own,
    and in a scope's view the shared layer's too (the same candidate key for both)."""
    key = f"{s}\x1f{a}"
    if key not in slots:
        shared = unscoped(s)[1]
        slots[key] = [(key, s, a)] + ([(key, shared, a)] if scope is not None else [])


def _winner(made: dict[str, Fact], row: tuple[Any, ...]) -> Callable[[], Fact]:
    """The Fact of a head's row, made once for every drop it wins."""
    def make() -> Fact:
        fid = row[0]
        return made.get(fid) or made.setdefault(fid, row_fact(row))
    return make


E = TypeVar("E", bound=TruthkeeperError)


def _at(i: int, exc: E) -> E:
    """``exc``, about the item at position ``i`` (:attr:`TruthkeeperError.item`)."""
    exc.item = i
    return exc


def _not_ours(i: int, fid: str) -> UnknownFact:
    return _at(i, UnknownFact(f"items[{i}] is not a fact of this memory: {fid!r}"))


def _judge_ids(store: Store, items: list[Any], store_idx: list[int], store_ids: list[str],
               scope: str | None, judged: bool, drops: dict[int, Drop],
               by_id: dict[str, Fact], rows: list[tuple[Any, ...]],
               slots: dict[str, list[tuple[str, str, str]]],
               verdicts_of: Callable[[list[str]], list[tuple[Any, ...]]]) -> set[str]:
    """The items that name facts of the store: Prolog's verdict on each (one call, with the
    rows of the facts that dominate them, made into Facts when first read); in a view, the
    verdict in the view on those its layer keeps (a second call). The heads become rows
    when they are ``judged`` against other items (foreign items, a view's two layers, or
    a kappa); a fact still to begin is kept unless a fact dominates it, and takes no part
    in judging others (it is not current). Returns the ids of these facts and of those that
    dominate them."""
    try:
        verdicts = verdicts_of(store_ids)
    except UnknownFact:
        known = store.known_ids(store_ids)
        i, fid = next(((i, f) for i, f in zip(store_idx, store_ids, strict=True)
                       if f not in known), (store_idx[0], store_ids[0]))
        raise _not_ours(i, fid) from None
    given = [(i, item) for i in store_idx if isinstance(item := items[i], Fact)]
    if given:  # a Fact must be the memory's, as it is now
        for (i, item), f in zip(given, store.facts([f.id for _, f in given]), strict=True):
            if replace(item, status=None) != f:
                msg = f"items[{i}] is not a fact of this memory: {item!r}"
                raise _at(i, UnknownFact(msg))
    live: list[tuple[int, str, str]] = []
    seen = set(store_ids)
    for i, fid, (s, a, status, by, rule) in zip(store_idx, store_ids, verdicts, strict=True):
        layer = unscoped(s)[0]
        if layer not in (scope, None) or (scope is None and layer is not None):
            raise _not_ours(i, fid)  # another scope's fact: as an id nothing holds
        if status in ("retracted", "ended"):
            drops[i] = Drop(items[i], None, status)
        elif status == "dominated":
            seen.add(by[0])
            drops[i] = Drop(items[i], None, rule, make=_winner(by_id, by))
        else:
            if scope is not None:  # a view: judged against the union of its layers
                _layers(slots, scope, scoped(scope, unscoped(s)[1]), a)
            live.append((i, fid, status))  # a head, or a fact still to begin
    if scope is not None and live:  # a head of its layer may be no head of the view
        store.need([(s, a) for layers in slots.values() for _, s, a in layers])
        for (i, _, _), (_, _, status, by, rule) in zip(
                live, store.verdicts([fid for _, fid, _ in live], scope), strict=True):
            if status == "dominated":
                seen.add(by[0])
                drops[i] = Drop(items[i], None, rule, make=_winner(by_id, by))
    heads = [(i, fid) for i, fid, status in live if status == "head" and i not in drops]
    if judged and heads:
        for (i, _), f in zip(heads, store.facts([fid for _, fid in heads]), strict=True):
            by_id[f.id] = f
            rows.append(_fact_row(store, i, f"{scoped(scope, f.subject)}\x1f{f.attribute}", f))
    return seen


def _fact_row(store: Store, i: int, key: str, f: Fact) -> tuple[Any, ...]:
    """A fact of the store as a candidate row (see :func:`candidate_rows`)."""
    return (i, key, store.key(f.attribute, f.value, f.present), to_us(f.valid_from), f.tier,
            to_us(f.recorded_at), f.source, None if f.valid_to is None else to_us(f.valid_to))


def candidate_rows(store: Store, builder: FactBuilder, items: list[Any], scope: str | None,
                   coerce: Callable[[str, Any, str], Any] | None, guard: Guard,
                   ) -> tuple[list[tuple[Any, ...]], dict[str, list[tuple[str, str, str]]],
                              list[int], list[str]]:
    """The items as Prolog takes them: a row per Candidate (index, slot key, value key,
    valid from, tier, recorded at, source, valid to), the store slots each is judged
    against, and the positions and ids of the items that name facts of the store. A
    candidate carries no signature: one at a protected tier is refused (``guard``)."""
    rows: list[tuple[Any, ...]] = []
    slots: dict[str, list[tuple[str, str, str]]] = {}
    store_idx: list[int] = []
    store_ids: list[str] = []
    # a retrieved context names few slots and tiers many times: each is normalised once
    named: dict[tuple[str, str], tuple[str, str, bool]] = {}
    tiers: dict[str, str] = {}
    for i, item in enumerate(items):
        if isinstance(item, (str, Fact)):
            fid = item if isinstance(item, str) else item.id
            if not isinstance(fid, str) or not fid:
                msg = f"items[{i}] is not a fact of this memory: {item!r}"
                raise _at(i, UnknownFact(msg))
            store_idx.append(i)
            store_ids.append(fid)
        elif isinstance(item, Candidate):
            try:  # the names of the fields in an error are built only then
                rows.append(_candidate_row(i, item, named, tiers, slots, store, builder,
                                           scope, coerce, guard))
            except (InvalidFact, TierNotAuthorized) as exc:
                msg = f"items[{i}].{exc}"
                raise _at(i, type(exc)(msg)) from None
        else:
            msg = (f"items[{i}] must be a fact id, a Fact or a Candidate, got "
                   f"{type(item).__name__}")
            raise _at(i, InvalidFact(msg))
    return rows, slots, store_idx, store_ids


def _candidate_row(i: int, item: Candidate, named: dict[tuple[str, str], tuple[str, str, bool]],
                   tiers: dict[str, str], slots: dict[str, list[tuple[str, str, str]]],
                   store: Store, builder: FactBuilder, scope: str | None,
                   coerce: Callable[[str, Any, str], Any] | None, guard: Guard,
                   ) -> tuple[Any, ...]:
    """A Candidate as a row (see :func:`candidate_rows`); InvalidFact names the field."""
    sa = (item.subject, item.attribute)
    slot = named.get(sa) if type(sa[0]) is str and type(sa[1]) is str else None
    if slot is None:
        s = scoped(scope, normalise_key(item.subject, "subject"))
        a = normalise_key(item.attribute, "attribute")
        _layers(slots, scope, s, a)
        slot = named[sa] = (f"{s}\x1f{a}", a, a in store.many)
    key, a, many = slot
    tier = tiers.get(item.tier) if type(item.tier) is str else None
    if tier is None:
        tier = builder.tier(item.tier)
        guard.check_claim(tier, "tier")
        tiers[item.tier] = tier
    value = item.value if coerce is None else coerce(a, item.value, "value")
    vf = time_us(item.valid_from, "valid_from")
    vt = None if item.valid_to is None else time_us(item.valid_to, "valid_to")
    if vt is not None and vt <= vf:  # as add refuses it
        msg = (f"valid_to ({from_us(vt).isoformat()}) must be after valid_from "
               f"({from_us(vf).isoformat()})")
        raise InvalidFact(msg)
    source = item.source if item.source is None else builder._memo(item.source, check_source)
    if item.present is not True and item.present is not False:
        raise InvalidFact(f"present must be a bool, got {brief(item.present)}")
    return (i, key, member_key(value, many, item.present), vf, tier, None, source, vt)


def _kappa_ended(store: Store, items: Sequence[Any], ends: list[tuple[int, list[str]]],
                 kappa: Callable[[Any, Any], bool], drops: dict[int, Drop]) -> None:
    """The ended-value rule of the kappa path: a kept candidate that a fact of its slot
    stated until an end that Prolog found dominating it, its value held by no head
    (``ends``), is dropped as ``"ended"`` when kappa finds no conflict between that fact
    and the candidate (kappa is asked of the end and the candidate: a pair the policy
    orders)."""
    for i, ids in ends:
        if i not in drops:
            said = next((f for f in store.facts(ids) if not kappa(f, items[i])), None)
            if said is not None:
                drops[i] = Drop(items[i], said, "ended")


def filter_items(store: Store, builder: FactBuilder, guard: Guard,
                 items: Iterable[str | Fact | Candidate],
                 kappa: Callable[[Any, Any], bool] | None = None,
                 scope: str | None = None,
                 coerce: Callable[[str, Any, str], Any] | None = None,
                 verdicts: Callable[[list[str]], list[tuple[Any, ...]]] | None = None,
                 ) -> FilterResult:
    """Drop the stale items of ``items`` (see ``Memory.filter``); candidates are read in
    ``scope`` (facts must be visible there) and their values coerced to the attribute's
    declared type (``coerce(attribute, value, name)``), as ``add`` coerces them.
    ``verdicts``: Prolog's verdicts on facts of the store (default ``store.verdicts``; a
    memory passes its cache of them)."""
    items = check_list(items, "items", "fact ids, Facts or Candidates")
    drops: dict[int, Drop] = {}
    disputed: list[Dispute] = []
    by_id: dict[str, Fact] = {}
    rows, slots, store_idx, store_ids = candidate_rows(store, builder, items, scope, coerce, guard)
    given: set[str] = set()
    if store_ids:
        given = _judge_ids(store, items, store_idx, store_ids, scope, kappa is not None or
                   len(store_idx) < len(items) or scope is not None, drops, by_id, rows,
                   slots, store.verdicts if verdicts is None else verdicts)
    rows.sort(key=lambda r: r[0])
    store.need([(s, a) for layers in slots.values() for _, s, a in layers])
    # chain heads never dominate each other: Phi_T is needed only with foreign items (and
    # in a view, where the heads of its two layers may)
    foreign = len(store_idx) < len(items) or scope is not None
    if kappa is None:
        if foreign:  # candidates are judged against each other and the memory's heads
            pairs, disputes = bridge.call("phi_store", store.h, rows,
                                          [x for layers in slots.values() for x in layers])
            for i, j in pairs:  # j: a candidate's index, "ended", ("head" | "ended", a row)
                if j == "ended":
                    drops[i] = Drop(items[i], None, "ended")
                    continue
                if isinstance(j, tuple):  # a fact: its Fact is made when first asked for
                    drops[i] = Drop(items[i], None, store.policy if j[0] == "head" else "ended",
                                    make=_winner(by_id, j[1]))
                else:
                    drops[i] = Drop(items[i], items[j], store.policy)
            by_index: dict[int, Dispute] = {}
            for indexes, rows_of_heads in disputes:  # the heads' Facts made once a slot
                heads = tuple(_winner(by_id, row)() for row in rows_of_heads)
                by_index.update((i, Dispute(items[i], heads)) for i in indexes)
            disputed = [by_index[i] for i in sorted(by_index)]
    else:
        # the memory's heads of the candidates' slots take part, as Facts, after the items
        pool: list[Any] = list(items)
        ends: list[tuple[int, list[str]]] = []
        if rows:
            out = bridge.ask("tk_ended_rows(M, Cs, Ss, Is, Es)", {
                "M": store.h, "Cs": rows, "Ss": [x for ls in slots.values() for x in ls]})
            for i in out["Is"]:
                drops[i] = Drop(items[i], None, "ended")
            ends = [(int(i), list(fs)) for i, fs in out["Es"]]
            rows = [r for r in rows if r[0] not in drops]
        for key, layers in slots.items():  # a view's heads: of its two layers' union
            _, s, a = layers[0]
            for h in (store.resolve(s, a) if len(layers) == 1 else store.resolve(
                    s, a, valid_at=store.clock_at, as_of=True,
                    layers=[x[1] for x in layers])).heads:
                if h.id not in given:
                    rows.append(_fact_row(store, len(pool), key, h))
                    pool.append(h)
        if len(rows) > 1:
            pairs = bridge.ask("tk_order_pairs(M, Cs, Ps)", {"M": store.h, "Cs": rows})["Ps"]
            for i, js in pairs:
                if i >= len(items):
                    continue
                for j in js:
                    if kappa(pool[j], pool[i]):
                        drops[i] = Drop(items[i], pool[j], "kappa")
                        break
        _kappa_ended(store, items, ends, kappa, drops)
    kept = tuple(items[i] for i in range(len(items)) if i not in drops)
    return FilterResult(kept=kept, dropped=tuple(drops[i] for i in sorted(drops)),
                        disputed=tuple(disputed))

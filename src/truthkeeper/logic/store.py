"""The symbolic store: owns the Prolog handle and the one copy of every fact.

Facts live in Prolog only (``store.pl``): what decisions need as typed terms, the rest as a
payload the store hands back unread. Python asks; it never decides which fact dominates
which, which value equals which, or whether a slot is in conflict.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence, Set
from dataclasses import replace
from typing import Any

from ..errors import PolicyError, TruthkeeperError, brief
from ..journal.base import Journal
from ..journal.codec import ERASED_ATTRIBUTE, ERASED_PAYLOAD, erased_slot, payload, row_fact
from ..values import (
    Fact,
    Resolution,
    ValueSupport,
    from_us,
    scoped,
    to_us,
    unscoped,
    value_key,
)
from . import bridge
from .storeparts import Forgetting, LargeAnswers, Layers

__all__ = ["Store", "policies"]


def policies() -> tuple[str, ...]:
    """The names of the registered policies (Prolog's registry).

    Returns
    -------
    tuple[str, ...]
        The shipped ones, then those registered with ``Policy.from_prolog``.

    Examples
    --------
    >>> from truthkeeper import policies
    >>> policies()[:3]
    ('temporal', 'authority_first', 'temporal_within_authority')
    """
    return tuple(bridge.ask("tk_policies(Ps)", {})["Ps"])


def policy_config(policy: object, tiers: tuple[str, ...], protected: tuple[str, ...],
                  journal: Journal) -> dict[str, Any]:
    """The configuration event of a memory. A custom policy's text is part of it, so the
    journal keeps the rule: reopening by the policy's name registers it from the journal."""
    from .policy import Policy

    try:
        first = journal.first()
    except TruthkeeperError:  # a damaged first event: replay reports it
        first = None
    stored = first.body if first is not None and first.kind == "config" else {}
    if isinstance(policy, str) and stored.get("policy") == policy and "policy_text" in stored:
        # the journal's own text, registered or compared with what this process registered
        # under that name (another text is refused, never silently used)
        policy = Policy.from_prolog(policy, stored["policy_text"],
                                    meta_keys=stored.get("policy_meta_keys", ()))
    if isinstance(policy, Policy):
        policy.register()
        name: str = policy.name
    elif isinstance(policy, str) and policy in policies():
        name = policy
    else:
        msg = f"policy must be one of {', '.join(policies())} or a Policy; got {brief(policy)}"
        raise PolicyError(msg)
    config: dict[str, Any] = {"policy": name, "tiers": list(tiers),
                              "protected_tiers": list(protected)}
    keys = bridge.ask("tk_policy_meta_keys(P, K)", {"P": name})["K"]
    if isinstance(policy, Policy):
        config.update(policy_text=policy.text, policy_meta_keys=list(keys))
    elif "policy_text" in stored and stored.get("policy") == name:
        config.update(policy_text=stored["policy_text"],
                      policy_meta_keys=stored.get("policy_meta_keys", []))
    return config


def _row(f: Fact, ra: int, meta_keys: Sequence[str] = (), many: bool = False,
         ) -> tuple[Any, ...]:
    nonce = f.signature.get("nonce") if f.signature else None
    if f.meta.get("confirmation") is True:
        nonce = None  # a signed confirmation's nonce is the confirm's (Applier registers it)
    meta = [(k, value_key(f.meta[k])) for k in meta_keys if k in f.meta]
    return (f.id, scoped(f.scope, f.subject), f.attribute,
            "$erased" if f.status == "erased" else member_key(f.value, many, f.present),
            to_us(f.valid_from),
            None if f.valid_to is None else to_us(f.valid_to), ra, f.tier, f.source,
            f.supersedes, nonce if isinstance(nonce, str) else None, payload(f), meta)


ADD_PART = 10_000
"""The most facts one call into Prolog adds (a larger batch crosses in parts)."""


def _links_forward(facts: Sequence[Fact], part: int) -> bool:
    """Whether a fact supersedes a fact of a later part of the batch."""
    if len(facts) <= part or all(f.supersedes is None for f in facts):
        return False
    at = {f.id: i // part for i, f in enumerate(facts)}
    return any(at.get(f.supersedes, -1) > i // part
               for i, f in enumerate(facts) if f.supersedes is not None)


def member_key(value: Any, many: bool, present: bool = True) -> Any:
    """The value key the store compares: a set's member keys carry their presence."""
    k = value_key(value)
    return ("m", (k, 1 if present else 0)) if many else k


class Store(Forgetting, Layers):
    """One memory's facts, retractions and chain heads in Prolog.

    Parameters
    ----------
    policy
        A registered policy name.
    tiers
        Tier names, most authoritative first.
    """

    lazy: Any = None
    """The :class:`~truthkeeper.lazy.LazyLoad` of a store opened lazily
    (:class:`~truthkeeper.logic.lazystore.LazyStore`); None here: this store holds every
    slot of its journal."""

    def __init__(self, policy: str, tiers: Sequence[str], protected: Sequence[str] = ()) -> None:
        self.h = bridge.new_handle()
        bridge.ask("tk_new(M, P, Ts)", {"M": self.h, "P": policy, "Ts": list(tiers)})
        bridge.ask("tk_protect(M, Ts)", {"M": self.h, "Ts": list(protected)})
        self.policy = policy
        self.meta_keys: tuple[str, ...] = tuple(
            bridge.ask("tk_policy_meta_keys(P, K)", {"P": policy})["K"])
        self.many: set[str] = set()
        """The attributes declared to hold sets (``declare``)."""
        self.holds_erased = False
        """Whether any fact was erased into a placeholder's slot (until then ``history``
        has no placeholders' slot to read)."""
        self.clock_at: int | None = None
        """The memory's clock as Prolog last saw it (``tick``), microseconds."""
        self.asked_at: int | None = None
        """The time the memory last asked the clock to stand at (``tick``), moved or not."""
        self.next_due: int | None = None
        """When a timed slot's fact next begins or ends after ``clock_at`` (None: never)."""
        self.commuting: set[tuple[str, str, str]] = set()
        """The (scope or "", source, tier) that ``tk_commuting/3`` found commuting: what it
        reads (the policy, a binding made) does not change once so."""
        self.large = LargeAnswers()
        """The heads of the last answers of many heads, by their rows (:class:`LargeAnswers`)."""

    def key(self, attribute: str, value: Any, present: bool = True) -> Any:
        """The key the store compares for a value of this attribute."""
        return member_key(value, attribute in self.many, present)

    def declare(self, attribute: str, cardinality: str) -> None:
        """Set an attribute's cardinality (the caller checked that it holds no facts)."""
        bridge.ask("tk_declare(M, A, C)", {"M": self.h, "A": attribute, "C": cardinality})
        (self.many.add if cardinality == "many" else self.many.discard)(attribute)

    def guarded_tiers(self) -> list[str]:
        """The tiers whose writes need a signature: the protected ones and every tier
        above the lowest of them."""
        return list(bridge.ask("tk_guarded_tiers(M, Ts)", {"M": self.h})["Ts"])

    def tiers(self) -> tuple[str, ...]:
        """The tiers by rank, most authoritative first (Prolog's order)."""
        return tuple(bridge.ask("tk_tiers(M, Ts)", {"M": self.h})["Ts"])

    def top_tier(self, *, protected: bool) -> str:
        """The most authoritative protected tier, or unprotected one (Prolog's order)."""
        return str(bridge.ask("tk_top_tier(M, P, T)", {"M": self.h, "P": protected})["T"])

    def attribute_used(self, attribute: str) -> bool:
        """Whether any fact (of any scope, live or not) has this attribute."""
        return bool(bridge.ask("tk_attribute_used(M, A, U)",
                               {"M": self.h, "A": attribute})["U"])

    # ------------------------------------------------------------------ the clock

    def due(self, now: int) -> bool:
        """Whether heads may differ at ``now`` from those at the last tick (a clock that
        went back included)."""
        at = self.clock_at
        return at is None or now < at or (self.next_due is not None and now >= self.next_due)

    def tick(self, now: int, *, force: bool = False) -> bool:
        """Move the memory's clock to ``now`` when a fact begins or ends by then (or, with
        ``force``, in any case; Prolog recomputes the slots whose facts began or ended);
        True when it did."""
        self.asked_at = now
        if not (force or self.due(now)):
            return False
        nxt = bridge.ask("tk_advance(M, N, X)", {"M": self.h, "N": now})["X"]
        self.clock_at, self.next_due = now, (None if nxt is None else int(nxt))
        return True

    def _due_at(self, times: Iterable[int]) -> None:
        """Times at which a fact just added or ended begins or ends: the clock must be
        advanced when it passes them."""
        at = self.clock_at
        later = [t for t in times if at is None or t > at]
        if later:
            first = min(later)
            self.next_due = first if self.next_due is None else min(self.next_due, first)

    def need(self, slots: Iterable[tuple[str, str]] = (), ids: Iterable[str | None] = (),
             keys: Iterable[str] = ()) -> None:
        """Bring these slots (store keys), those of these fact ids and these index keys
        into the store before a call that reads them directly: nothing to do here, where
        every slot is in (a :class:`~truthkeeper.logic.lazystore.LazyStore` loads them)."""

    def known_ids(self, ids: list[str]) -> set[str]:
        """The ids among ``ids`` of facts the store holds."""
        return set(bridge.ask("tk_known_ids(M, Is, K)", {"M": self.h, "Is": ids})["K"])

    def need_all(self) -> None:
        """Bring every slot into the store (see :meth:`need`)."""

    def close(self) -> None:
        """Drop this memory's Prolog state."""
        with contextlib.suppress(TruthkeeperError):  # interpreter shutdown
            bridge.ask("tk_close(M)", {"M": self.h})

    # ------------------------------------------------------------------ writes

    def prefetch(self, facts: Sequence[Fact], drawn: Set[str] = frozenset()) -> None:
        """Before a write takes the journal's lock: bring in what adding ``facts`` reads
        (a lazily opened store; nothing here)."""

    def add(self, facts: Sequence[Fact], ras: Sequence[int], now: int | None = None,
            drawn: Set[str] = frozenset()) -> list[Fact]:
        """Add a batch atomically with these transaction times; returns the facts with
        their ``recorded_at``. Raises the mapped error (nothing changed) when refused.
        ``now`` (a live write: the memory's clock) first moves the store's clock there, so
        a fact that begins now is not taken for one that begins later. ``drawn``: ids
        drawn at random for this batch, which no fact anywhere holds (a lazily opened
        store does not look them up; Prolog does not look up a part of such ids alone)."""
        clock = None
        if now is not None and (self.clock_at is None or now > self.clock_at):
            if self.clock_at is not None and (self.next_due is None or now < self.next_due):
                clock = now  # nothing begins or ends by now: the clock moves with the batch
            else:
                self.tick(now, force=True)
        # a large batch crosses in parts (Prolog's stacks and the rows stay small), each
        # part a transaction; a refused part takes back the parts before it, so the batch
        # is still all or none. A part whose fact supersedes one of a later part would be
        # refused alone: such a batch crosses whole.
        step = len(facts) if _links_forward(facts, ADD_PART) else ADD_PART
        done: list[str] = []
        times: list[int] = []
        try:
            for i in range(0, max(len(facts), 1), step):  # an empty batch moves the clock
                rows = [_row(f, ra, self.meta_keys, f.attribute in self.many)
                        for f, ra in zip(facts[i:i + step], ras[i:i + step], strict=True)]
                if not self.holds_erased:  # a replayed or imported placeholder
                    self.holds_erased = any(r[2] == ERASED_ATTRIBUTE for r in rows)
                bridge.call("add", self.h, rows, clock,
                            bool(drawn) and all(r[0] in drawn for r in rows))
                done += [r[0] for r in rows]
                times += [t for r in rows for t in (r[4], r[5]) if t is not None]
        except TruthkeeperError:
            if done and clock is not None:  # the refused part's clock did not move; the
                bridge.call("add", self.h, [], self.clock_at, False)  # before it: back
            if done:
                self.undo_add(done)
            raise
        if clock is not None:
            self.clock_at = clock
        self._due_at(times)
        out = []
        for f, ra in zip(facts, ras, strict=True):
            object.__setattr__(f, "recorded_at", from_us(ra))  # not published yet
            out.append(f)
        return out

    def commutes(self, facts: Sequence[Fact], drawn: Set[str]) -> bool:
        """Whether adding ``facts`` commutes with any fact another writer may append
        meanwhile (Prolog's ``tk_commuting/3``), so that the write may be decided without
        the journal's tail: plain facts (no link, no signature, ids drawn at random) whose
        sources are bound to their tiers already, under a shipped policy."""
        if not facts or any(f.supersedes is not None or f.signature is not None
                            or f.id not in drawn for f in facts):
            return False
        rows = {(f.scope or "", f.source, f.tier): scoped(f.scope, f.subject) for f in facts
                if (f.scope or "", f.source, f.tier) not in self.commuting}
        if rows and bridge.ask("tk_commuting(M, Ss, Rs, Ts, C)", {
                "M": self.h, "Ss": list(rows.values()), "Rs": [r[1] for r in rows],
                "Ts": [r[2] for r in rows]})["C"] is not True:
            return False
        if len(self.commuting) < 65_536:
            self.commuting.update(rows)
        return True

    def retime(self, facts: Sequence[Fact], moved: dict[int, int]) -> None:
        """Move facts added with the times in ``moved``'s keys to its values (the journal
        recorded them later than given)."""
        changed = [(f, moved[to_us(f.recorded_at)]) for f in facts
                   if moved.get(to_us(f.recorded_at), to_us(f.recorded_at))
                   != to_us(f.recorded_at)]
        if changed:
            self.undo_add([f.id for f, _ in changed])
            Store.add(self, [f for f, _ in changed], [ra for _, ra in changed])

    def unload(self, slots: Sequence[tuple[str, str, str]]) -> list[str]:
        """Take these slots (key, store subject, attribute) out of the store, as if never
        read in (a lazily opened memory reads them again when asked); the keys of those
        taken out: Prolog keeps a slot whose facts are linked (``store:unload_slots/3``)."""
        out: list[str] = bridge.ask("tk_unload_slots(M, Ss, Us)",
                                    {"M": self.h, "Ss": list(slots)})["Us"]
        return out

    def undo_add(self, ids: Iterable[str]) -> None:
        """Take back facts whose commit failed (never acknowledged)."""
        bridge.ask("tk_undo_facts(M, Ids)", {"M": self.h, "Ids": list(ids)})

    def retract(self, fid: str, ra: int, reason: str) -> None:
        """Retract a live fact (UnknownFact, or InvalidFact when already retracted)."""
        bridge.ask("tk_retract(M, Id, RA, R)", {"M": self.h, "Id": fid, "RA": ra, "R": reason})

    def end(self, fid: str, valid_to: int | None, ra: int | None) -> None:
        """The fact stopped being true at ``valid_to``, as recorded at ``ra`` (``as_of``
        before then sees the valid_to it had). ``ra`` None: the undo of the last end,
        ``valid_to`` the one before it. UnknownFact; InvalidFact when the fact is retracted
        or ``valid_to`` is not after its ``valid_from``."""
        bridge.ask("tk_end(M, Id, VT, RA)", {"M": self.h, "Id": fid, "VT": valid_to,
                                             "RA": ra})
        if valid_to is not None:
            self._due_at([valid_to])

    def unretract(self, fid: str) -> None:
        """Take back a retraction whose commit failed."""
        bridge.ask("tk_unretract(M, Id)", {"M": self.h, "Id": fid})

    def erase(self, fids: Sequence[str], ra: int) -> None:
        """Erase facts' content from the store for good (retracted, reason ``erased``),
        their slots too: each fact moves to its placeholder's slot (``erased_slot``). The
        facts are read once for all (reading each after the one before had changed its
        slot derived the slot again: erasing a slot of n facts was n^2)."""
        self.holds_erased = True
        for f in self.facts(fids):
            subject, attribute = (f.subject, f.attribute) \
                if f.attribute == ERASED_ATTRIBUTE else erased_slot(f.subject, f.attribute)
            bridge.ask("tk_erase(M, Id, RA, P, S, A)",
                       {"M": self.h, "Id": f.id, "RA": ra, "P": ERASED_PAYLOAD,
                        "S": scoped(f.scope, subject), "A": attribute})

    def bind_source(self, source: str, tier: str, scope: str | None = None, *,
                    restore: bool = False, check: bool = False) -> None:
        """Bind a source named by an outcome recorded in ``scope`` (None: shared) to its
        tier (TierNotAuthorized if it has another there); ``restore``: a binding the
        journal made, recorded as it was (a lazy memory loading it); ``check``: only
        check that the binding would be allowed (Prolog's one rule), recording nothing."""
        how = "$restore" if restore else "$check" if check else "$outcome"
        bridge.ask("tk_bind_source(M, Sc, S, T, R)",
                   {"M": self.h, "Sc": scope or "", "S": source, "T": tier, "R": how})

    def source_tier(self, source: str, scope: str | None = None) -> str | None:
        """The tier a source is bound to in ``scope``'s view, or None."""
        t = bridge.ask("tk_source_tier(M, Sc, S, T)",
                       {"M": self.h, "Sc": scope or "", "S": source})["T"]
        return None if t is None else str(t)

    def sources(self, scope: str | None = None) -> list[tuple[str, str]]:
        """The sources of the facts ``scope``'s view sees (None: the shared layer's), with
        their tiers."""
        return [(s, t) for s, t in bridge.ask("tk_sources(M, Sc, Ps)",
                                              {"M": self.h, "Sc": scope or ""})["Ps"]]

    def use_nonce(self, nonce: str, owner: str) -> None:
        """Record a signature nonce (TierNotAuthorized when it was used before)."""
        bridge.ask("tk_use_nonce(M, N, O)", {"M": self.h, "N": nonce, "O": owner})

    def unuse_nonce(self, nonce: str) -> None:
        """Take back a nonce whose write failed."""
        bridge.ask("tk_unuse_nonce(M, N)", {"M": self.h, "N": nonce})

    # ------------------------------------------------------------------ reads

    def __len__(self) -> int:
        return int(bridge.ask("tk_count(M, N)", {"M": self.h})["N"])

    def count(self, scope: str | None) -> int:
        """The facts a view of ``scope`` sees: the shared layer's and its own."""
        return int(bridge.ask("tk_count_scope(M, S, N)", {"M": self.h, "S": scope})["N"])

    def get(self, fid: str, with_status: bool = False) -> Fact:
        """The fact with this id (UnknownFact otherwise), with its status if asked."""
        return self.facts([fid], with_status)[0]

    def facts(self, ids: Sequence[str], with_status: bool = False) -> list[Fact]:
        """The facts with these ids, in order (with their statuses if asked)."""
        [rows] = bridge.call("facts", self.h, list(ids))
        return [row_fact(r, with_status) for r in rows]

    def all_facts(self) -> list[tuple[Fact, str]]:
        """Every fact with its status (head, superseded, retracted), in recording order."""
        rows = bridge.ask("tk_all_facts(M, Rs)", {"M": self.h})["Rs"]
        return [(row_fact(r), r[-1] if isinstance(r[-1], str) else r[-1][0]) for r in rows]

    def status(self, fid: str) -> tuple[str, int | None, str | None]:
        """``("head" | "superseded", None, None)`` or ``("retracted", at, reason)``."""
        st = bridge.ask("tk_facts(M, Ids, Rs)", {"M": self.h, "Ids": [fid]})["Rs"][0][-1]
        return (st, None, None) if isinstance(st, str) else (st[0], st[1], st[2])

    def slots(self, subject: str | None = None) -> list[tuple[str, str]]:
        """Every slot that holds a fact (of the subject with this store key, or all), as
        store keys ``(subject key, attribute)``, sorted."""
        return [(s, a) for s, a in bridge.ask("tk_slots(M, S, Ss)",
                                              {"M": self.h, "S": subject})["Ss"]
                if a != ERASED_ATTRIBUTE]

    def history(self, subject: str, attribute: str) -> list[Fact]:
        """Every fact of a slot, oldest first (valid time, then recording), with status;
        its erased facts are found in their placeholders' slot (``erased_slot``) and shown
        under the slot asked about."""
        scope, plain = unscoped(subject)
        hidden = scoped(scope, erased_slot(plain, attribute)[0])
        out = []
        for key, attr in ((subject, attribute), (hidden, ERASED_ATTRIBUTE))[
                :2 if self.holds_erased else 1]:
            rows = bridge.ask("tk_slot_facts(M, S, A, Rs)",
                              {"M": self.h, "S": key, "A": attr})["Rs"]
            out += [replace(f, subject=plain, attribute=attribute) if attr != attribute
                    else f for f in (row_fact(r, with_status=True) for r in rows)]
        out.sort(key=lambda f: (f.valid_from, f.recorded_at))
        return out

    def resolve(self, subject: str, attribute: str, *, known_at: int | None = None,
                valid_at: int | None = None, as_of: bool = False,
                layers: Sequence[str] | None = None) -> Resolution:
        """The slot's status (unknown, resolved, conflict) and its heads grouped by value,
        newest first, from one call; ``as_of`` asks at a valid and a transaction time;
        ``layers`` (subject keys: a scope's and the shared one) resolves their union."""
        if layers is not None:
            st, gs = bridge.call("resolve_union", self.h, list(layers), attribute, known_at,
                                 valid_at)
        elif as_of:
            st, gs = bridge.call("resolve_rows_at", self.h, subject, attribute, known_at,
                                 valid_at)
        else:
            st, gs = bridge.call("resolve_rows", self.h, subject, attribute)
        if len(gs) == 1 and len(gs[0]) == 1:  # one head (most slots): nothing to order
            f = row_fact(gs[0][0])
            heads: tuple[Fact, ...] = (f,)
            cands: tuple[ValueSupport, ...] = (
                ValueSupport(f.value, (f.id,), (f.source,), present=f.present),)
        else:
            found, cands = self.large.answer((subject, attribute, as_of, layers is not None),
                                             gs)
            heads = tuple(sorted(found, key=lambda f: (f.valid_from, f.recorded_at),
                                 reverse=True))
        if attribute in self.many:  # a set: its members, in the order of their keys
            value: Any = tuple(c.value for c in cands if c.present) \
                if st == "resolved" else None
        else:
            value = heads[0].value if st == "resolved" else None
        return Resolution(unscoped(subject)[1], attribute, st, value, heads, cands)

    def links(self, fid: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(live facts that dominate ``fid``, live facts it dominates), each as ``(id,
        rule)``: ``"supersedes"`` for an explicit link, else the policy's name."""
        r = bridge.ask("tk_links(M, Id, Ds, Dd)", {"M": self.h, "Id": fid})
        return [tuple(x) for x in r["Ds"]], [tuple(x) for x in r["Dd"]]

    def dominance_pairs(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """The (winner, loser) pairs among these live facts (any slots, any layers)."""
        return [tuple(x) for x in bridge.ask("tk_dominance_pairs(M, Ids, Ps)",
                                             {"M": self.h, "Ids": list(ids)})["Ps"]]

    def verdicts(self, ids: Sequence[str], scope: str | None = None) -> list[tuple[Any, ...]]:
        """For each id: ``(subject key, attribute, status, by, rule)``, the status head,
        retracted, ended, future or dominated, ``by`` the row of the fact that dominates it
        (:func:`~truthkeeper.journal.codec.row_fact`; ``""`` when none does) under
        ``rule`` (supersedes or the policy). In ``scope``'s view (both layers' slots in
        the store): a head of its own layer that the other layer dominates is dominated."""
        vs, rs = bridge.call("filter_ids", self.h, scope or "", list(ids))
        rows = {row[0]: row for row in rs}  # each winner's row crosses once
        return [(s, a, status, rows[by] if by else "", rule) for s, a, status, by, rule in vs]

    def conflicts(self) -> list[tuple[str, str]]:
        """The slots whose heads disagree (residual conflicts), sorted."""
        return [tuple(x) for x in bridge.ask("tk_conflicts(M, Ss)", {"M": self.h})["Ss"]]

    def same_value(self, a: object, b: object) -> bool:
        """Whether two values are one value to the symbolic layer."""
        return bool(bridge.ask("tk_same_value(A, B, S)",
                               {"A": value_key(a), "B": value_key(b)})["S"])

    def match_heads(self, layers: Sequence[str], attribute: str, value: object,
                    ) -> tuple[list[str], list[str]]:
        """The heads of a slot that hold ``value`` and those that do not; ``layers``: the
        slot's subject key, or a scope's and the shared one (their union's heads)."""
        r = bridge.ask("tk_match_heads(M, Ss, A, K, R, W)",
                       {"M": self.h, "Ss": list(layers), "A": attribute,
                        "K": self.key(attribute, value)})
        return list(r["R"]), list(r["W"])

    def claims(self, gold: Sequence[str],
               ) -> list[tuple[list[str], list[int], int, int, list[Any], str]]:
        """Per slot: each source's latest claim as a value index, the number of values,
        the index of the confirmed value (or -1), the values' keys and the slot's attribute.
        For learning from agreement."""
        rows = bridge.ask("tk_claims(M, G, Is)", {"M": self.h, "G": list(gold)})["Is"]
        return [(list(s), list(i), int(n), int(g), list(v), str(a))
                for s, i, n, g, v, a in rows]

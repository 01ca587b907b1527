"""A Memory's parts and their lifecycle: wiring them to one journal, the answer cache, the
clock, closing. ``Memory`` (the facade) validates, locks and delegates; this module is what
it delegates its own plumbing to.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Self

from .audit import AuditLog, enter_scope, leave_scope
from .erasure import refused_subject
from .errors import (
    InvalidFact,
    JournalError,
    PolicyError,
    TierNotAuthorized,
    TruthkeeperError,
    brief,
)
from .events import Applier
from .journal import Journal, open_journal
from .journal.codec import ERASED_ATTRIBUTE
from .journal.ledger import FastRefused, Ledger, now_us
from .lazy import INDEX_CHECKS, LazyLoad
from .logic.lazystore import LazyStore
from .logic.rules import Reasoner
from .logic.store import Store, policy_config
from .reliability.conflict import score_candidates, score_set
from .reliability.state import Reliability
from .schema import Declaration, Declarer, Schema
from .signing import Guard
from .validation import (
    check_bool,
    check_categories,
    check_choice,
    check_clock,
    check_discount,
    check_list,
    check_path,
    check_schema,
    check_similarity,
)
from .values import (
    Fact,
    FactBuilder,
    Resolution,
    check_label,
    check_tiers,
    in_scope,
    parse_time,
    scoped,
    to_us,
)

__all__ = ["CACHE_SIZE", "Answers", "CallContext", "Closing", "Parts"]

CACHE_SIZE = 1024
"""How many ``current`` answers a Memory keeps (about 1-2 KB each): reading every slot of a
large memory must not keep an answer per slot."""


class Closing:
    """A context manager that closes its object on exit, and when it is collected."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finaliser
            self.close()


class Parts:
    """Everything one memory is made of, wired to its journal (``Memory.__init__``'s
    arguments, checked)."""

    def __init__(self, path: str | os.PathLike[str] | None, settings: Mapping[str, Any]) -> None:
        g: Callable[[str], Any] = settings.__getitem__
        self.path = check_path(path)
        self.clock = check_clock(g("clock"))
        schema, lazy = check_schema(g("schema")), check_bool(g("lazy"), "lazy")
        self.index_check = check_choice(g("index_check"), INDEX_CHECKS, "index_check")
        self.tiers, self.protected = check_tiers(g("tiers"), g("protected_tiers"))
        self.sim = check_similarity(g("similarity"))
        self.lock, self.closed = threading.RLock(), False
        self.guard = Guard(g("trusted_keys"))
        try:
            self.discount, categories = (check_discount(g("discount")),
                                         check_categories(g("categories")))
        except InvalidFact as exc:
            raise PolicyError(str(exc)) from None
        journal = g("journal") or open_journal(self.path, synchronous=g("synchronous"),
                                               readonly=g("readonly"))
        if not isinstance(journal, Journal):  # a journal of its own (tests, another store)
            msg = f"journal must be a truthkeeper Journal, got {type(journal).__name__}"
            raise JournalError(msg)
        try:
            config = policy_config(g("policy"), self.tiers, self.protected, journal)
            self._wire(journal, config, lazy, categories, schema)
        except BaseException:
            journal.close()
            self.close()
            raise

    def _wire(self, journal: Journal, config: dict[str, Any], lazy: bool,
              categories: Mapping[str, tuple[Any, ...]],
              schema: Mapping[str, Declaration]) -> None:
        self.policy = config["policy"]
        self.builder, self.audit = FactBuilder(self.tiers), AuditLog()
        lazy = lazy and journal.indexed
        self.store = (LazyStore if lazy else Store)(self.policy, self.tiers, self.protected)
        self.rel = Reliability(self.store.tiers(), self.discount)  # the store's tier order
        self.guard.guarded = frozenset(self.store.guarded_tiers())
        self.guarded = tuple(t for t in self.tiers if t in self.guard.guarded)  # in order
        self.store.tick(self.now())
        self.reasoner = Reasoner(self.store)
        self.answers = Answers(self)
        self.events = Applier(self.store, self.reasoner, self.rel, self.guard, self.builder,
                              self.audit, config, self.answers.clear, self.now,
                              Declarer(self.store, Schema()))
        loader = LazyLoad(journal, self.store, self.events.replay, self.audit) \
            if lazy else None
        self.store.lazy = loader
        self.ledger = Ledger(journal, self.events.replay if loader is None else loader.apply)
        self.ledger.start(config, loader)
        if loader is not None and not loader.done and self.index_check == "background":
            loader.check_in_background()
        self.events.start(self.ledger, categories)
        self.events.start_schema(self.ledger, schema)
        self.audit.sink = lambda body: self.ledger.defer("audit", body)
        self.audit.on_erase = self.ledger.erase_deferred
        self.events.opened = True  # an erasure caught up with from now is another handle's
        self.events.key_news = self._key_news

    def now(self) -> int:
        """The memory's clock, in microseconds since the epoch."""
        return now_us() if self.clock is None else to_us(parse_time(self.clock(), "clock()"))

    def add_facts(self, built: list[Fact], drawn: set[str]) -> list[Fact]:
        """Add validated facts (``add_many``, under the memory's lock). Plain facts whose
        adding commutes with any fact another writer appends (``Store.commutes``) are
        decided without catching up, on a journal that chains appends itself (PostgreSQL);
        when it refuses (another kind of event came first), as every other write."""
        self.store.prefetch(built, drawn)  # a lazy store's slots, before the journal's lock
        fast = self.ledger.journal.fast and self.store.commutes(built, drawn)
        try:
            return self._write_facts(built, drawn, fast)
        except FastRefused:
            return self._write_facts(built, drawn, False)

    def _write_facts(self, built: list[Fact], drawn: set[str], fast: bool) -> list[Fact]:
        with self.ledger.write(fast=fast) as w:
            try:  # caught up: another writer's declarations and erasures count too
                built = self.typed(built)
                self.rel.check_values(built)
                self.no_links_to_erased(built)
            except InvalidFact as exc:
                if fast:  # not caught up (a fast write does not): decided once it is
                    raise FastRefused from None
                self.audit.rejected(exc, {"facts": [f.id for f in built], "subject":
                                          refused_subject(built, check=self._refuses)})
                raise
            return self.events.facts(w, built, drawn=drawn)

    def passage(self, source: object, tier: object, scope: str | None) -> tuple[str, str]:
        """A retrieved passage's source and tier as ``resolve_context`` weighs them: a known
        tier that needs no signature, and a source not bound to such a tier (a passage
        carries no signature: naming the owner's source, it would borrow its reliability);
        called caught up (the binding may be another writer's)."""
        src = check_label(source, "context_source")
        t = self.guard.check_claim(self.builder.tier(tier), "context_tier")
        bound = self.store.source_tier(src, scope)
        if bound in self.guard.guarded:
            msg = (f"context_source {src!r} belongs to protected tier {bound!r}: a passage "
                   "carries no signature, so it cannot speak as that source; name where it "
                   "came from")
            raise TierNotAuthorized(msg)
        return src, t

    def hypothetical(self, items: Any, scope: str | None, now: int) -> list[Fact]:
        """The facts ``what_if`` supposes, built and checked as a write would (types,
        categories, links to erased facts); called caught up."""
        items = check_list(items, "add", "dicts or Facts") if scope is None else \
            in_scope(items, scope, "add")  # as a write in the view takes them
        facts = self.events.hypothetical(items, scope, now)
        self.no_links_to_erased(facts)
        return facts

    def typed(self, built: list[Fact]) -> list[Fact]:
        """The facts' values coerced to the value types declared now (InvalidFact if one
        cannot be): ``add_many`` validates a batch before the write catches up, and
        another writer may have declared or removed a type since."""
        return [self.events.declarer.coerce(f, f.tier in self.guard.guarded) for f in built]

    def _refuses(self, built: list[Fact]) -> None:
        """The checks a write makes once caught up (InvalidFact)."""
        self.rel.check_values(self.typed(built))
        self.no_links_to_erased(built)

    def no_links_to_erased(self, built: list[Fact]) -> None:
        """A new fact cannot supersede an erased one (it is gone; its placeholder is in no
        slot): InvalidFact. A journal or an export replays the links made before an
        erasure, so the store takes them: this check is the live write's (and
        ``what_if``'s). A fact the writer does not see (another scope's) is left to the
        store, which refuses it as an unknown id."""
        links = {f.supersedes: f for f in built if f.supersedes is not None}
        if not links:
            return
        known = self.store.known_ids(list(links))
        for g in self.store.facts([i for i in links if i in known]) if known else ():
            if g.attribute == ERASED_ATTRIBUTE and g.scope in (None, links[g.id].scope):
                msg = f"fact {g.id!r} is erased: a new fact cannot supersede it"
                raise InvalidFact(msg)

    def fresh(self) -> bool:
        """No other connection committed and no fact began or ended since the last call."""
        with self.lock:
            lazy = self.store.lazy
            return self.ledger.fresh() and not self.store.due(self.now()) and (
                lazy is None or (lazy.broken is None and lazy.forged is None))

    def catch_up(self, strict: bool = True, poll: bool = True) -> None:
        """Before an answer: other connections' commits, then the clock's effects. A lazy
        memory that found its journal damaged raises; not ``strict`` (``verify``, which
        reads the journal itself): it skips catching up instead. Not ``poll``: before a
        write that catches up under the journal's lock itself (``add_many``), the
        journal is not asked whether another connection committed."""
        lazy = self.store.lazy
        if lazy is not None and (lazy.broken is not None or lazy.forged is not None):
            if not strict:
                return
            lazy.raise_if_broken()
        if poll:
            self.ledger.poll()
        self.store.forget_now()  # if another writer's erasure was applied
        if lazy is not None and lazy.trim():  # its memory stays bounded by what it holds
            self.answers.clear()
        if self.store.tick(self.now()):  # a fact began or ended since the last call
            self.answers.clear()

    def _key_news(self) -> bool:
        """Catch up with other connections' commits: whether the trusted keys changed
        (``add_many`` checks signatures before its write catches up)."""
        with self.lock:
            if self.closed:
                return False
            before = dict(self.guard.ring.keys)
            self.catch_up()
            return self.guard.ring.keys != before

    def refresh(self, guard: Callable[[], Any]) -> int:
        """Catch up with other connections' commits (inside ``guard``, the memory's open
        check, which catches up itself); how many events were applied."""
        with self.lock:  # the events the guard's own catching up applied count too
            before = self.ledger.seq - self.ledger.passed
            with guard():
                self.ledger.catch_up()
                return self.ledger.seq - self.ledger.passed - before

    def close(self) -> None:
        """Release the journal and the Prolog state (idempotent)."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if hasattr(self, "answers"):
                self.answers.clear()
            if hasattr(self, "store") and self.store.lazy is not None:
                self.store.lazy.stop_check()  # its connection closes before the journal's
            if hasattr(self, "ledger"):
                with contextlib.suppress(TruthkeeperError, ValueError):
                    self.ledger.flush()  # the audit entries not journalled yet
                self.ledger.journal.close()
            if hasattr(self, "store"):
                self.store.close()


class Answers:
    """``current`` answers, cached per (scope, subject, attribute) until anything changes
    (a write, another connection's commit, the clock passing a fact's time, a new
    reliability for a conflict's probabilities); ``filter``'s verdicts on facts of the
    store, and the heads of a scope's view (the union of its layers, which no layer keeps:
    ``get`` of each of a poll's claims derived its thousands of heads again), until the
    same changes."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.cache: dict[tuple[str | None, str, str], tuple[Resolution, int]] = {}
        self.judged: dict[str, tuple[Any, ...]] = {}
        self.unions: dict[tuple[str, str, str], Resolution] = {}

    def clear(self) -> None:
        self.cache.clear()
        self.judged.clear()
        self.unions.clear()

    def verdicts(self, ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """:meth:`~.logic.store.Store.verdicts`, each fact's kept until anything changes:
        Prolog is asked about the facts it has not judged since (in one call), so a context
        retrieved again costs no call. Called within the memory's context (caught up)."""
        judged = self.judged
        missing = [fid for fid in dict.fromkeys(ids) if fid not in judged]
        if not missing:
            return [judged[fid] for fid in ids]
        new = dict(zip(missing, self.parts.store.verdicts(missing), strict=True))
        out = [judged[fid] if fid in judged else new[fid] for fid in ids]
        if len(judged) + len(new) > CACHE_SIZE:  # bounded: the old verdicts go
            judged.clear()
        if len(new) <= CACHE_SIZE:
            judged.update(new)
        return out

    def cached(self, key: tuple[str | None, str, str]) -> Resolution | None:
        """The cached answer, if it is still the answer."""
        hit = self.cache.get(key)
        p = self.parts
        if hit is not None and not p.closed and p.fresh() and (
                hit[0].status != "conflict" or hit[1] == p.rel.version):
            return hit[0]
        return None

    def heads(self, scope: str | None, subject: str, attribute: str, *,
              known_at: int | None = None, valid_at: int | None = None) -> Resolution:
        """A slot's status and heads in ``scope``'s view (its facts and the shared layer's),
        at ``valid_at`` (default: now) as known at ``known_at``; no why, no probabilities."""
        p = self.parts
        key = scoped(scope, subject)
        if scope is None and known_at is None and valid_at is None:
            return p.store.resolve(key, attribute)
        now = known_at is None and valid_at is None
        if now:
            hit = self.unions.get((scope or "", subject, attribute))
            if hit is not None and not p.closed and p.fresh():
                return hit
        at = p.now() if valid_at is None else valid_at
        clock = p.store.clock_at
        if valid_at is None and known_at is None and clock is not None and clock <= at:
            # nothing begins or ends between the store's clock and now (catching up moved
            # it when something was due): the heads at the clock, which the layers keep
            at = clock
        r = p.store.resolve(key, attribute, known_at=known_at, valid_at=at, as_of=True,
                            layers=None if scope is None else [key, subject])
        if now:
            if len(self.unions) >= CACHE_SIZE:  # the oldest go first
                self.unions.pop(next(iter(self.unions)), None)
            self.unions[(scope or "", subject, attribute)] = r
        return r

    def resolve(self, guard: Callable[[], Any], scope: str | None, subject: str,
                attribute: str, *, known_at: int | None = None,
                valid_at: int | None = None) -> Resolution:
        """:meth:`heads` with its ``why`` and, for a conflict, each candidate's
        probability."""
        p = self.parts
        r = self.heads(scope, subject, attribute, known_at=known_at, valid_at=valid_at)
        r = p.reasoner.with_why(guard, r, (scoped(scope, subject), attribute))
        if r.status == "conflict" and r.attribute in p.store.many:
            cands, members, joint = score_set(p.rel.book_for(scope), r)
            r = replace(r, candidates=cands, best=members, best_p=joint)
        elif r.status == "conflict":
            cands = score_candidates(p.rel.book_for(scope), r, p.sim)
            top = next((c for c in cands if c.best), None)
            r = replace(r, candidates=cands, best=None if top is None else top.value,
                        best_p=None if top is None else top.p)
        return r

    def put(self, key: tuple[str | None, str, str], r: Resolution) -> Resolution:
        if len(self.cache) >= CACHE_SIZE:  # the oldest answer goes first
            self.cache.pop(next(iter(self.cache)), None)
        self.cache[key] = (r, self.parts.rel.version)
        return r


def recorded_settings(target: str, *, readonly: bool, create: bool) -> dict[str, Any]:
    """``Memory``'s arguments for a journal: the settings it was created with (policy,
    tiers, protected tiers, from its configuration event) and ``readonly`` (never for a
    PostgreSQL URL, whose readers share the server). JournalError for a missing file
    (unless ``create``: then the defaults) or an empty journal."""
    url = target.startswith(("postgresql://", "postgres://"))
    if not url and not os.path.exists(target):
        if create:
            return {}
        raise JournalError(f"no memory file at {target!r}")
    journal = open_journal(target, readonly=readonly)
    try:
        first = journal.first()
    finally:
        journal.close()
    cfg = first.body if first is not None and first.kind == "config" else {}
    if not cfg and not create:
        raise JournalError(f"{target!r} holds no memory yet (no configuration event)")
    return {"readonly": readonly and not url,
            **{k: cfg[k] for k in ("policy", "tiers", "protected_tiers") if k in cfg}}


def id_list(ids: object, name: str) -> list[Any]:
    """Fact ids as a list: one id (a string or a Fact) is a list of one."""
    from .values import Fact

    if isinstance(ids, (str, Fact)):
        return [ids.id if isinstance(ids, Fact) else ids]
    try:
        return [i.id if isinstance(i, Fact) else i for i in ids]  # type: ignore[attr-defined]
    except TypeError:
        msg = f"{name} must be a fact id or an iterable of fact ids, got {brief(ids)}"
        raise InvalidFact(msg) from None


class CallContext:
    """What every ``Memory`` call runs in: the memory's lock held, its scope the caller's
    (:func:`~.audit.caller_scope`), a closed memory refused, and other connections' commits
    caught up (:meth:`Parts.catch_up`). A class, not a generator's context manager, since
    every call enters it (4.1 -> 1.7 us); when catching up raises, the lock and the scope
    are given back."""

    __slots__ = ("lock", "parts", "poll", "scope", "strict", "token")

    def __init__(self, lock: threading.RLock, scope: str | None, parts: Parts,
                 strict: bool, poll: bool) -> None:
        self.lock, self.scope, self.parts = lock, scope, parts
        self.strict, self.poll = strict, poll

    def __enter__(self) -> None:
        self.lock.acquire()
        self.token = enter_scope(self.scope)
        try:
            if self.parts.closed:
                raise TruthkeeperError("this Memory is closed")  # noqa: EM101
            self.parts.catch_up(self.strict, self.poll)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        leave_scope(self.token)
        self.lock.release()

"""The ``Memory`` API: facts keyed by slot, supersession, Phi_T, beliefs and why."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from . import engine
from .errors import (
    CrossSlotSupersession,
    InvalidFact,
    JournalCorrupt,
    JournalError,
    PolicyError,
    SupersessionCycle,
    TierInversion,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
    UnsafeRule,
)
from .facts import (
    Alternative,
    AuditEntry,
    Belief,
    Candidate,
    Decision,
    Drop,
    Fact,
    FilterResult,
    HeadChange,
    Justification,
    Resolution,
    SourceReliability,
    Utility,
    ValueSupport,
    Verification,
    WhatIf,
    check_label,
    check_meta,
    check_text,
    from_us,
    normalise_key,
    parse_time,
    to_us,
    value_key,
)
from .journal import GENESIS, Event, Journal, check_row
from .reliability.book import ReliabilityBook
from .signing import public_key_hex, verify_signature

__all__ = ["DEFAULT_TIERS", "POLICIES", "Memory"]

POLICIES = ("temporal", "authority_first", "temporal_within_authority")
DEFAULT_TIERS = ("human", "verified", "agent", "unverified")
_FACT_KEYS = frozenset(
    {"subject", "attribute", "value", "source", "tier", "valid_from", "valid_to",
     "supersedes", "text", "meta", "id", "signature"}
)


def _now_us() -> int:
    return time.time_ns() // 1000


class Memory:
    """An agent's memory of facts, with supersession, conflicts, beliefs and history.

    Parameters
    ----------
    path
        Reserved for the durable journal; ``None`` keeps everything in memory.
    policy
        ``"temporal_within_authority"`` (default), ``"temporal"`` (Phi_T) or
        ``"authority_first"``.
    tiers
        Provenance tiers, most authoritative first.

    Examples
    --------
    >>> from truthkeeper import Memory
    >>> mem = Memory()
    >>> _ = mem.add("acme", "invoice_total", 4500, source="billing-email", tier="verified",
    ...             valid_from="2026-11-20T10:00:00Z")
    >>> _ = mem.add("acme", "invoice_total", 4700, source="billing-email", tier="verified",
    ...             valid_from="2026-11-21T10:00:00Z")
    >>> r = mem.current("acme", "invoice_total")
    >>> r.status, r.value
    ('resolved', 4700)
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        policy: str = "temporal_within_authority",
        tiers: Sequence[str] = DEFAULT_TIERS,
        protected_tiers: Sequence[str] = ("human",),
        trusted_keys: Sequence[Any] = (),
        synchronous: str = "FULL",
        readonly: bool = False,
        discount: float = 1.0,
    ) -> None:
        if policy not in POLICIES:
            msg = f"policy must be one of {', '.join(POLICIES)}; got {policy!r}"
            raise PolicyError(msg)
        if isinstance(tiers, str) or not tiers:
            msg = f"tiers must be a non-empty sequence of tier names, got {tiers!r}"
            raise PolicyError(msg)
        tier_names = tuple(normalise_key(t, "tiers[]") for t in tiers)
        if len(set(tier_names)) != len(tier_names):
            msg = f"tiers must be distinct, got {tiers!r}"
            raise PolicyError(msg)
        for t in protected_tiers:
            if normalise_key(t, "protected_tiers[]") not in tier_names:
                msg = f"protected tier {t!r} is not one of the tiers {tier_names!r}"
                raise PolicyError(msg)
        self.policy = policy
        self.tiers = tier_names
        self.protected_tiers = tuple(normalise_key(t, "protected_tiers[]") for t in protected_tiers)
        lowest = max((tier_names.index(t) for t in self.protected_tiers), default=-1)
        self._guarded = frozenset(tier_names[: lowest + 1])  # at or above a protected tier
        try:
            self._trusted = {public_key_hex(k): k for k in trusted_keys}
        except InvalidFact as exc:
            raise PolicyError(str(exc)) from None
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        self._trusted = {h: Ed25519PublicKey.from_public_bytes(bytes.fromhex(h))
                         for h in self._trusted}
        self._nonces: set[str] = set()
        if not (isinstance(discount, (int, float)) and 0.0 < discount <= 1.0):
            msg = f"discount must be a number in (0, 1], got {discount!r}"
            raise PolicyError(msg)
        self._book = ReliabilityBook(tier_names, discount=float(discount))
        self._rel_version = 0
        self._confirmed: dict[tuple[str, str], Any] = {}
        self.path = None if path is None else os.fspath(path)
        self._lock = threading.RLock()
        self._h = engine.new_handle()
        engine.ask("tk_new(M, P, Ts)", {"M": self._h, "P": policy, "Ts": list(tier_names)})
        self._facts: dict[str, Fact] = {}
        self._slots: dict[tuple[str, str], list[str]] = {}
        self._retracted: dict[str, tuple[int, str]] = {}
        self._cache: dict[tuple[str, str], Resolution] = {}
        self._cache_rel: dict[tuple[str, str], int] = {}
        self._audit: list[AuditEntry | tuple[datetime, str | None, tuple[Drop, ...]]] = []
        # in-memory event log (export_jsonl); facts are kept as Fact and serialised on export
        self._events: list[tuple[str, int, Any]] = []
        self._rules: list[tuple[str, str]] = []
        self._last_ra = 0
        self._id_prefix = os.urandom(4).hex()
        self._ids = itertools.count(1)  # next() is atomic: ids stay unique across threads
        self._closed = False
        self._journal: Journal | None = None
        self._jseq, self._jhash = 0, GENESIS
        self.corruption: str | None = None
        if self.path is not None:
            self._open_journal(synchronous, readonly)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Release the Prolog-side state of this memory."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._journal is not None:
                    self._journal.close()
                with contextlib.suppress(TruthkeeperError):  # interpreter shutdown
                    engine.ask("tk_close(M)", {"M": self._h})

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finaliser
            self.close()

    def __len__(self) -> int:
        return len(self._facts)

    def _check_open(self) -> None:
        if self._closed:
            msg = "this Memory is closed"
            raise TruthkeeperError(msg)

    # ------------------------------------------------------------------ writes

    def _new_id(self) -> str:
        return f"f{self._id_prefix}{next(self._ids):x}"

    def _tier(self, tier: object) -> str:
        t = normalise_key(tier, "tier")
        if t not in self.tiers:
            msg = f"tier must be one of {', '.join(self.tiers)}; got {tier!r}"
            raise InvalidFact(msg)
        return t

    def _build(
        self,
        subject: object,
        attribute: object,
        value: object,
        *,
        source: object,
        tier: object = "agent",
        valid_from: object = None,
        valid_to: object = None,
        supersedes: object = None,
        text: object = None,
        meta: object = None,
        id: object = None,  # noqa: A002 - the field's name
        signature: object = None,
        now_us: int | None = None,
    ) -> tuple[Fact, tuple[Any, ...]]:
        """Validate one fact; return it and the tuple Prolog receives (recorded_at unset)."""
        s = normalise_key(subject, "subject")
        a = normalise_key(attribute, "attribute")
        vk = value_key(value)
        src = check_label(source, "source")
        t = self._tier(tier)
        vf_dt = from_us(now_us if now_us is not None else _now_us()) if valid_from is None \
            else parse_time(valid_from, "valid_from")
        vt_dt = None if valid_to is None else parse_time(valid_to, "valid_to")
        if vt_dt is not None and vt_dt <= vf_dt:
            msg = f"valid_to ({vt_dt.isoformat()}) must be after valid_from ({vf_dt.isoformat()})"
            raise InvalidFact(msg)
        sup = None if supersedes is None else check_label(supersedes, "supersedes")
        fid = self._new_id() if id is None else check_label(id, "id")
        txt, mt = check_text(text, "text"), check_meta(meta)
        sig = None
        if t in self._guarded:
            fields = {"subject": s, "attribute": a, "value": value, "valid_from": vf_dt,
                      "valid_to": vt_dt, "supersedes": sup, "source": src, "tier": t,
                      "text": txt, "meta": mt}
            problem = (verify_signature(fields, signature, self._trusted)
                       if isinstance(signature, Mapping) else
                       "it carries no signature" if signature is None else
                       "signature must be a dict with key, nonce and sig")
            if problem is None and signature["nonce"] in self._nonces:  # type: ignore[index]
                problem = "its nonce was already used (a replayed signature)"
            if problem is not None:
                msg = (f"a write at tier {t!r} (protected: {', '.join(sorted(self._guarded))}) "
                       f"must be signed by a trusted key; refused: {problem}")
                raise TierNotAuthorized(msg)
            sig = dict(signature)  # type: ignore[call-overload]
        fact = Fact(
            id=fid, subject=s, attribute=a, value=value, valid_from=vf_dt,
            recorded_at=_EPOCH_DT, source=src, tier=t, supersedes=sup, valid_to=vt_dt,
            text=txt, meta=mt, signature=sig,
        )
        row = (fid, s, a, vk, to_us(vf_dt), None if vt_dt is None else to_us(vt_dt), 0, t, src,
               sup)
        return fact, row

    def _coerce(self, item: Mapping[str, Any] | Fact, index: int) -> tuple[Fact, tuple[Any, ...]]:
        if isinstance(item, Fact):
            return self._build(
                item.subject, item.attribute, item.value, source=item.source, tier=item.tier,
                valid_from=item.valid_from, valid_to=item.valid_to, supersedes=item.supersedes,
                text=item.text, meta=item.meta, id=item.id, signature=item.signature,
            )
        if type(item) is not dict and not isinstance(item, Mapping):
            msg = f"facts[{index}] must be a dict or a Fact, got {type(item).__name__}"
            raise InvalidFact(msg)
        unknown = item.keys() - _FACT_KEYS
        if unknown:
            msg = (f"facts[{index}] has unknown keys {sorted(unknown)}; "
                   f"accepted: {sorted(_FACT_KEYS)}")
            raise InvalidFact(msg)
        for k in ("subject", "attribute", "value", "source"):
            if k not in item:
                msg = f"facts[{index}] is missing {k!r}"
                raise InvalidFact(msg)
        g = item.get
        try:
            return self._build(
                item["subject"], item["attribute"], item["value"], source=item["source"],
                tier=g("tier", "agent"), valid_from=g("valid_from"), valid_to=g("valid_to"),
                supersedes=g("supersedes"), text=g("text"), meta=g("meta"), id=g("id"),
                signature=g("signature"))
        except InvalidFact as exc:
            msg = f"facts[{index}]: {exc}"
            raise InvalidFact(msg) from None

    def add(
        self,
        subject: str,
        attribute: str,
        value: Any,
        *,
        source: str,
        tier: str = "agent",
        valid_from: datetime | str | None = None,
        valid_to: datetime | str | None = None,
        supersedes: str | None = None,
        text: str | None = None,
        meta: Mapping[str, Any] | None = None,
        signature: Mapping[str, str] | None = None,
    ) -> Fact:
        """Add one fact and return it (with its id and recorded_at).

        A write at a protected tier needs ``signature`` from :class:`~truthkeeper.Signer`
        (or use ``add_many([signer.sign({...})])``).

        Raises
        ------
        InvalidFact
            Bad types, empty keys, naive times, unknown tier, oversized value.
        UnknownFact
            ``supersedes`` names a fact this memory does not hold.
        CrossSlotSupersession, TierInversion, SupersessionCycle
            ``supersedes`` crosses slots, goes from a lower tier over a higher one, or closes
            a cycle (all are SupersessionError).
        TierNotAuthorized
            A protected-tier write without a valid, fresh signature by a trusted key.
        """
        self._check_open()
        try:
            built = self._build(
                subject, attribute, value, source=source, tier=tier, valid_from=valid_from,
                valid_to=valid_to, supersedes=supersedes, text=text, meta=meta,
                signature=signature,
            )
        except TruthkeeperError as exc:
            self._reject(exc, {"subject": subject, "attribute": attribute})
            raise
        return self._commit([built])[0]

    def add_many(self, facts: Iterable[Mapping[str, Any] | Fact]) -> list[Fact]:
        """Add a batch of facts atomically: all of them, or none when one is bad.

        Each item is a dict with the keyword arguments of :meth:`add` (plus the positional
        ``subject``, ``attribute``, ``value``; optionally ``id``) or a :class:`Fact`.
        ``supersedes`` may name a fact added earlier in the same batch.
        """
        self._check_open()
        now = _now_us()
        built = []
        try:
            now_dt = from_us(now)
            for i, item in enumerate(facts):
                if (type(item) is dict or isinstance(item, Mapping)) and \
                        item.get("valid_from") is None:
                    item = {**item, "valid_from": now_dt}
                built.append(self._coerce(item, i))
        except TruthkeeperError as exc:
            self._reject(exc, {"batch": True})
            raise
        return self._commit(built)

    def _commit(self, built: list[tuple[Fact, tuple[Any, ...]]]) -> list[Fact]:
        nonces = [f.signature["nonce"] for f, _ in built if f.signature is not None]
        if len(set(nonces)) != len(nonces):
            err = TierNotAuthorized("two facts of one batch carry the same signature nonce")
            self._reject(err, {"facts": [f.id for f, _ in built]})
            raise err
        with self._write() as w:
            out = self._apply_facts(built, w.times(len(built)))
            w.undo = lambda: self._undo_facts(out)
            w.events.extend(("fact", to_us(f.recorded_at), f) for f in out)
        return out

    @contextlib.contextmanager
    def _write(self) -> Iterator[_Write]:
        """One write: the body applies its change to Prolog and lists its events; they are then
        journalled in one transaction (or kept in the in-memory log). If the commit fails, the
        body's ``undo`` takes the change back and the JournalError reaches the caller."""
        with self._lock:
            self._check_open()
            if self._journal is None:
                w = _Write(self, None)
                yield w
                self._events.extend(w.events)
                return
            jw: _Write | None = None
            try:
                with self._journal.transaction() as txn:
                    self._catch_up()  # apply what other processes appended first
                    jw = _Write(self, txn)
                    yield jw
                    txn.append_many([(k, ra, _fact_body(b) if isinstance(b, Fact) else b)
                                     for k, ra, b in jw.events])
            except JournalError:
                if jw is not None and jw.undo is not None:
                    jw.undo()
                raise
            self._jseq, self._jhash = txn.seq, txn.hash

    def _apply_facts(self, built: list[tuple[Fact, tuple[Any, ...]]],
                     ras: list[int]) -> list[Fact]:
        """Add validated facts with the given transaction times to Prolog and the indexes."""
        rows = []
        out = []
        for (fact, row), ra in zip(built, ras, strict=True):
            rows.append(row[:6] + (ra,) + row[7:])
            # the Fact is not published yet: set the store's transaction time in place
            object.__setattr__(fact, "recorded_at", from_us(ra))
            out.append(fact)
        res = engine.ask("tk_add(M, Fs, R)", {"M": self._h, "Fs": rows})["R"]
        if res != "ok":
            self._raise_rejected(res, out)
        for f in out:
            self._facts[f.id] = f
            slot = (f.subject, f.attribute)
            ids = self._slots.get(slot)
            if ids is None:
                self._slots[slot] = [f.id]
            else:
                ids.append(f.id)
            self._cache.pop(slot, None)
            if f.signature is not None:
                self._nonces.add(f.signature["nonce"])
        if ras:
            self._last_ra = max(self._last_ra, ras[-1])
        return out

    def _undo_facts(self, facts: list[Fact]) -> None:
        """Take back facts whose journal commit failed (never acknowledged)."""
        engine.ask("tk_undo_facts(M, Ids)", {"M": self._h, "Ids": [f.id for f in facts]})
        for f in facts:
            self._facts.pop(f.id, None)
            slot = (f.subject, f.attribute)
            ids = self._slots.get(slot, [])
            if f.id in ids:
                ids.remove(f.id)
            self._cache.pop(slot, None)
            if f.signature is not None:
                self._nonces.discard(f.signature["nonce"])

    def _raise_rejected(self, res: Any, facts: list[Fact]) -> None:
        kind, fid, other = res
        err: TruthkeeperError
        if kind == "duplicate_id":
            err = InvalidFact(f"id {fid!r} is already used by another fact; ids must be unique")
        elif kind == "unknown_fact":
            err = UnknownFact(
                f"supersedes={other!r} (on fact {fid!r}) names no fact of this memory"
            )
        elif kind == "cross_slot":
            err = CrossSlotSupersession(
                f"fact {fid!r} cannot supersede {other!r}: supersedes links stay within one "
                "slot (same subject and attribute)"
            )
        elif kind == "lower_tier":
            err = TierInversion(
                f"fact {fid!r} cannot supersede {other!r}: a lower tier never supersedes a "
                f"higher one (tiers, highest first: {', '.join(self.tiers)})"
            )
        elif kind == "cycle":
            err = SupersessionCycle(
                f"fact {fid!r} superseding {other!r} would close a cycle of supersedes links"
            )
        else:  # pragma: no cover - defensive
            err = TruthkeeperError(f"write rejected: {res!r}")
        self._reject(err, {"facts": [f.id for f in facts]})
        raise err

    def _reject(self, exc: BaseException, details: Mapping[str, Any]) -> None:
        self._audit.append(AuditEntry(
            "rejected_write", datetime.now(UTC),
            {**details, "error": type(exc).__name__, "message": str(exc)},
        ))

    def retract(self, fact_id: str, *, reason: str) -> None:
        """Retract a fact: an event, not a delete (``history`` keeps it)."""
        fid = check_label(fact_id, "fact_id")
        why = check_label(reason, "reason")
        with self._write() as w:
            [ra] = w.times(1)
            self._apply_retract(fid, ra, why)
            w.undo = lambda: self._unretract(fid)
            w.events.append(("retract", ra, {"id": fid, "reason": why}))

    def _unretract(self, fid: str) -> None:
        engine.ask("tk_unretract(M, Id)", {"M": self._h, "Id": fid})
        self._retracted.pop(fid, None)
        f = self._facts[fid]
        self._cache.pop((f.subject, f.attribute), None)

    def _apply_retract(self, fid: str, ra: int, why: str) -> None:
        res = engine.ask("tk_retract(M, Id, RA, R)", {"M": self._h, "Id": fid, "RA": ra})["R"]
        if res == "unknown_fact":
            msg = f"fact_id {fid!r} names no fact of this memory"
            raise UnknownFact(msg)
        if res == "already_retracted":
            msg = f"fact {fid!r} is already retracted"
            raise InvalidFact(msg)
        self._retracted[fid] = (ra, why)
        self._last_ra = max(self._last_ra, ra)
        f = self._facts[fid]
        self._cache.pop((f.subject, f.attribute), None)

    # ------------------------------------------------------------------ journal

    def _config_body(self) -> dict[str, Any]:
        return {"policy": self.policy, "tiers": list(self.tiers),
                "protected_tiers": list(self.protected_tiers)}

    def _open_journal(self, synchronous: str, readonly: bool) -> None:
        assert self.path is not None
        if readonly and not os.path.exists(self.path):
            msg = f"journal {self.path!r} does not exist (readonly=True opens existing journals)"
            raise JournalError(msg)
        self._journal = Journal(self.path, synchronous=synchronous, readonly=readonly)
        self._readonly = readonly
        if self._journal.tail()[0] == 0 and not readonly:
            with self._journal.transaction() as txn:
                if txn.seq == 0:
                    txn.append("config", max(_now_us(), txn.last_ra + 1), self._config_body())
        self._catch_up()

    def _catch_up(self) -> None:
        """Apply the journal's events that this Memory has not seen (replay, refresh)."""
        assert self._journal is not None
        batch: list[Event] = []
        try:
            try:
                for ev in self._journal.read_checked(self._jseq, self._jhash):
                    if ev.kind == "fact":
                        batch.append(ev)
                        continue
                    self._replay_facts(batch)
                    batch = []
                    self._replay_other(ev)
                    self._jseq, self._jhash = ev.seq, ev.hash
            finally:
                pending, batch = batch, []
                self._replay_facts(pending)  # the events read so far verified
        except PolicyError:
            raise
        except (JournalCorrupt, TruthkeeperError) as exc:
            if not isinstance(exc, JournalCorrupt):
                bad = batch[0].seq if batch else self._jseq + 1
                exc = JournalCorrupt(f"journal {self.path!r} is corrupt at event {bad}: {exc}")
            if getattr(self, "_readonly", False):
                self.corruption = str(exc)
                return
            raise exc from None

    def _replay_facts(self, events: list[Event]) -> None:
        if not events:
            return
        built = []
        for ev in events:
            b = dict(ev.body)
            try:
                built.append(self._build(
                    b.pop("subject"), b.pop("attribute"), b.pop("value"), source=b.pop("source"),
                    tier=b.pop("tier"), valid_from=b.pop("valid_from"),
                    valid_to=b.pop("valid_to", None), supersedes=b.pop("supersedes", None),
                    text=b.pop("text", None), meta=b.pop("meta", None), id=b.pop("id"),
                    signature=b.pop("signature", None)))
            except (KeyError, TruthkeeperError) as exc:
                msg = f"journal {self.path!r} is corrupt at event {ev.seq}: {exc}"
                raise JournalCorrupt(msg) from None
        try:
            self._apply_facts(built, [ev.recorded_at for ev in events])
        except TruthkeeperError as exc:
            msg = (f"journal {self.path!r} is corrupt in events {events[0].seq}.."
                   f"{events[-1].seq}: {exc}")
            raise JournalCorrupt(msg) from None
        self._jseq, self._jhash = events[-1].seq, events[-1].hash

    def _replay_other(self, ev: Event) -> None:
        b = ev.body
        if ev.kind == "config":
            want = self._config_body()
            if b != want:
                msg = (f"journal {self.path!r} was created with {b}; open it with the same "
                       f"policy, tiers and protected_tiers (got {want})")
                raise PolicyError(msg)
        elif ev.kind == "retract":
            self._apply_retract(b["id"], ev.recorded_at, b["reason"])
        elif ev.kind == "rule":
            self._apply_rule(b["id"], b["text"])
        elif ev.kind == "outcome":
            self._apply_outcome(b)
        elif ev.kind == "prior":
            self._apply_prior(b)
        else:
            msg = f"unknown event kind {ev.kind!r}"
            raise JournalCorrupt(msg)
        self._last_ra = max(self._last_ra, ev.recorded_at)

    def refresh(self) -> int:
        """Apply events that other processes appended to the journal; returns how many."""
        with self._lock:
            self._check_open()
            if self._journal is None:
                return 0
            before = self._jseq
            self._catch_up()
            return self._jseq - before

    def verify(self) -> Verification:
        """Check the journal's hash chain and every signature; report the first bad event."""
        with self._lock:
            self._check_open()
            if self._journal is None:
                return Verification(True, len(self._events), None, None, "")
            prev, expected = GENESIS, 1
            nonces: set[str] = set()
            n = 0
            try:
                rows = self._journal._conn.execute(
                    "SELECT seq, kind, recorded_at, body, prev_hash, hash FROM events "
                    "ORDER BY seq").fetchall()
            except Exception as exc:  # noqa: BLE001 - report any read failure
                return Verification(False, 0, expected, f"cannot read: {exc}", prev)
            for seq, kind, ra, body, p, h in rows:
                problem = check_row(seq, kind, ra, body, p, h, expected, prev)
                if problem is None:
                    problem = _json_problem(body)
                if problem is None and kind == "fact":
                    problem = self._check_signed(body, nonces)
                if problem is not None:
                    return Verification(False, n, seq, problem, prev)
                prev, expected, n = h, seq + 1, n + 1
            return Verification(True, n, None, None, prev)

    def _check_signed(self, body_text: str, nonces: set[str]) -> str | None:
        import json

        body = json.loads(body_text)
        try:
            tier = normalise_key(body.get("tier"), "tier")
        except InvalidFact as exc:
            return str(exc)
        if tier not in self._guarded:
            return None
        sig = body.get("signature")
        if sig is None:
            return f"a {tier}-tier fact without a signature"
        problem = verify_signature(body, sig, self._trusted)
        if problem is None:
            if sig["nonce"] in nonces:
                return "a replayed signature nonce"
            nonces.add(sig["nonce"])
        return problem

    def export_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Write every event, oldest first, as JSON Lines; returns the number of lines.

        Line format: ``{"kind": "fact"|"retract"|"rule", "recorded_at": <microseconds since
        the epoch>, "body": {...}}``. A fact body has the keys of ``Fact.to_dict()`` (with
        ``signature`` when signed); a retract body ``{"id", "reason"}``; a rule body
        ``{"id", "text"}``.
        """
        import json

        with self._lock:
            self._check_open()
            if self._journal is not None:
                events = [(e.kind, e.recorded_at, e.body) for e in self._journal.read()
                          if e.kind != "config"]
            else:
                events = [(k, ra, _fact_body(b) if isinstance(b, Fact) else b)
                          for k, ra, b in self._events]
        with open(path, "w", encoding="utf-8") as fh:
            for kind, ra, body in events:
                fh.write(json.dumps({"kind": kind, "recorded_at": ra, "body": body},
                                    sort_keys=True, ensure_ascii=False) + "\n")
        return len(events)

    def import_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Import a JSON Lines file written by :meth:`export_jsonl`.

        Every line is validated first (facts as ``add_many`` validates them, signatures
        included); one bad line rejects the whole file with an error naming the line. Facts
        are then added in one batch (keeping their ids; recorded_at is this store's), then
        rules, then retractions. Returns the number of lines imported.
        """
        import json

        lines = []
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    if not isinstance(obj, dict) or not isinstance(obj.get("body"), dict):
                        raise ValueError("not an object with a body")
                    if obj.get("kind") not in ("fact", "retract", "rule", "outcome", "prior"):
                        raise ValueError(f"unknown kind {obj.get('kind')!r}")
                except ValueError as exc:
                    msg = f"{os.fspath(path)} line {n}: {exc}"
                    raise InvalidFact(msg) from None
                lines.append((n, obj["kind"], obj["body"]))
        facts, rules, retracts = [], [], []
        fact_ids = set()
        for n, kind, body in lines:
            try:
                if kind == "fact":
                    item = {k: body[k] for k in body if k in _FACT_KEYS and body[k] is not None}
                    self._coerce(item, 0)
                    facts.append(item)
                    fact_ids.add(body.get("id"))
                elif kind == "rule":
                    if not isinstance(body.get("text"), str):
                        raise InvalidFact("a rule line needs a text")
                    rules.append(body["text"])
                else:
                    fid = check_label(body.get("id"), "id")
                    check_label(body.get("reason"), "reason")
                    if fid not in fact_ids and fid not in self._facts:
                        raise UnknownFact(f"retracts {fid!r}, which is neither in the file "
                                          "nor in this memory")
                    retracts.append((fid, body["reason"]))
            except (TruthkeeperError, KeyError) as exc:
                msg = f"{os.fspath(path)} line {n}: {exc}"
                raise InvalidFact(msg) from None
        self.add_many(facts)
        for text in rules:
            self.add_rule(text)
        for fid, reason in retracts:
            self.retract(fid, reason=reason)
        return len(lines)

    # ------------------------------------------------------------------ reads

    def superseded_by(self, fact_id: str) -> list[Fact]:
        """The facts that explicitly supersede ``fact_id`` (the reverse of ``Fact.supersedes``;
        ``why`` also lists what dominates it under the policy)."""
        f = self.get(fact_id)
        return [g for g in (self._facts[i] for i in self._slots[(f.subject, f.attribute)])
                if g.supersedes == f.id]

    def get(self, fact_id: str) -> Fact:
        """The fact with this id."""
        try:
            return self._facts[fact_id]
        except (KeyError, TypeError):
            msg = f"fact_id {fact_id!r} names no fact of this memory"
            raise UnknownFact(msg) from None

    def _slot_key(self, subject: object, attribute: object) -> tuple[str, str]:
        return normalise_key(subject, "subject"), normalise_key(attribute, "attribute")

    def current(self, subject: str, attribute: str) -> Resolution:
        """The slot's current value: resolved, conflict (every candidate) or unknown."""
        slot = (subject, attribute)
        r = self._cache.get(slot)
        if r is not None and (r.status != "conflict" or self._cache_rel.get(slot)
                              == self._rel_version):
            return r
        slot = self._slot_key(subject, attribute)
        r = self._cache.get(slot)
        if r is not None and (r.status != "conflict" or self._cache_rel.get(slot)
                              == self._rel_version):
            return r
        with self._lock:
            self._check_open()
            heads = engine.ask("tk_heads(M, S, A, Hs)",
                               {"M": self._h, "S": slot[0], "A": slot[1]})["Hs"]
            r = self._resolution(slot, heads)
            if r.status == "conflict":
                r = self._with_probabilities(r)
                self._cache_rel[slot] = self._rel_version
            self._cache[slot] = r
            return r

    def _resolution(self, slot: tuple[str, str], head_ids: Sequence[str]) -> Resolution:
        heads = sorted((self._facts[h] for h in head_ids),
                       key=lambda f: (f.valid_from, f.recorded_at), reverse=True)
        groups: dict[Any, list[Fact]] = {}
        for f in heads:
            groups.setdefault(value_key(f.value), []).append(f)
        cands = tuple(
            ValueSupport(value=fs[0].value, fact_ids=tuple(f.id for f in fs),
                         sources=tuple(dict.fromkeys(f.source for f in fs)))
            for fs in groups.values()
        )
        if not heads:
            status, value = "unknown", None
        elif len(groups) == 1:
            status, value = "resolved", heads[0].value
        else:
            status, value = "conflict", None
        ids = tuple(f.id for f in heads)
        return Resolution(
            subject=slot[0], attribute=slot[1], status=status, value=value, heads=tuple(heads),
            candidates=cands, _why=lambda: self._why_resolution(slot, ids),
        )

    def history(self, subject: str, attribute: str) -> list[Fact]:
        """Every fact of the slot, oldest first (valid time), each with its status."""
        slot = self._slot_key(subject, attribute)
        with self._lock:
            ids = list(self._slots.get(slot, ()))
            heads = {f.id for f in self.current(*slot).heads}
            out = []
            for fid in ids:
                f = self._facts[fid]
                st = "retracted" if fid in self._retracted else (
                    "head" if fid in heads else "superseded")
                out.append(replace(f, status=st))
        out.sort(key=lambda f: (f.valid_from, f.recorded_at))
        return out

    def as_of(
        self,
        subject: str,
        attribute: str,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> Resolution:
        """Bitemporal: what was true at ``valid_at``, as the store knew it at ``known_at``."""
        slot = self._slot_key(subject, attribute)
        va = None if valid_at is None else to_us(parse_time(valid_at, "valid_at"))
        ka = None if known_at is None else to_us(parse_time(known_at, "known_at"))
        with self._lock:
            self._check_open()
            heads = engine.ask(
                "tk_heads_at(M, S, A, K, V, Hs)",
                {"M": self._h, "S": slot[0], "A": slot[1], "K": ka, "V": va},
            )["Hs"]
            return self._resolution(slot, heads)

    def conflicts(self) -> list[tuple[str, str]]:
        """The slots whose heads disagree (residual conflicts)."""
        with self._lock:
            self._check_open()
            return [tuple(x) for x in engine.ask("tk_conflicts(M, Ss)", {"M": self._h})["Ss"]]

    # ------------------------------------------------------------------ filter (Phi_T)

    def filter(
        self,
        items: Iterable[str | Fact | Candidate],
        *,
        kappa: Callable[[Any, Any], bool] | None = None,
        query: str | None = None,
    ) -> FilterResult:
        """Drop the stale items of a retrieved context (Phi_T and its policy variants).

        Facts of this memory (or their ids) are dropped when they are not chain heads
        (dominated or retracted). All items are then filtered against each other: an item is
        dropped when another item of the same slot with a different value dominates it under
        this memory's policy (``temporal``: strictly newer, which is Phi_T). With ``kappa``,
        ``kappa(newer, older)`` decides whether two items conflict instead (for free text).
        Every drop is written to the audit log with ``query``.
        """
        items = list(items)
        with self._lock:
            self._check_open()
            drops: dict[int, Drop] = {}
            cands: list[tuple[int, Any, Any, Any, int, str]] = []
            store_idx: list[int] = []
            store_ids: list[str] = []
            for i, item in enumerate(items):
                if isinstance(item, (str, Fact)):
                    fid = item if isinstance(item, str) else item.id
                    f = self._facts.get(fid) if isinstance(fid, str) else None
                    if f is None or (isinstance(item, Fact) and item.id in self._facts
                                     and self._facts[item.id] != replace(item, status=None)):
                        msg = f"items[{i}] is not a fact of this memory: {item!r}"
                        raise UnknownFact(msg)
                    store_idx.append(i)
                    store_ids.append(fid)
                    cands.append((i, f.subject, f.attribute, f.value, to_us(f.valid_from), f.tier))
                elif isinstance(item, Candidate):
                    s, a = self._slot_key(item.subject, item.attribute)
                    tau = to_us(parse_time(item.valid_from, f"items[{i}].valid_from"))
                    cands.append((i, s, a, item.value, tau, self._tier(item.tier)))
                else:
                    msg = (f"items[{i}] must be a fact id, a Fact or a Candidate, got "
                           f"{type(item).__name__}")
                    raise InvalidFact(msg)
            if store_ids:
                verdicts = engine.ask("tk_filter_ids(M, Ids, Vs)",
                                      {"M": self._h, "Ids": store_ids})["Vs"]
                for i, (_fid, status, by) in zip(store_idx, verdicts, strict=True):
                    if status == "retracted":
                        drops[i] = Drop(items[i], None, "retracted")
                    elif status == "dominated":
                        rule = "supersedes" if self._facts[by].supersedes == _fid else self.policy
                        drops[i] = Drop(items[i], self._facts[by], rule)
            live = [c for c in cands if c[0] not in drops]
            # chain heads never dominate each other: Phi_T is needed only with foreign items
            foreign = len(store_idx) < len(items)
            if kappa is None:
                rows = [(i, f"{s}\x1f{a}", value_key(v), tau, t) for i, s, a, v, tau, t in live]
                pairs = engine.ask("tk_phi(M, Cs, Ds)", {"M": self._h, "Cs": rows})["Ds"] \
                    if len(rows) > 1 and foreign else []
                for i, j in pairs:
                    drops[i] = Drop(items[i], items[j], self.policy)
            else:
                self._kappa_filter(items, live, kappa, drops)
            kept = tuple(items[i] for i in range(len(items)) if i not in drops)
            dropped = tuple(drops[i] for i in sorted(drops))
            if dropped:  # expanded into AuditEntry rows when audit() is read
                self._audit.append((datetime.now(UTC), query, dropped))
            return FilterResult(kept=kept, dropped=dropped)

    def _kappa_filter(self, items: list[Any], live: list[tuple[Any, ...]],
                      kappa: Callable[[Any, Any], bool], drops: dict[int, Drop]) -> None:
        ranks = {t: len(self.tiers) - k for k, t in enumerate(self.tiers)}
        order = sorted(live, key=lambda c: c[4], reverse=True)
        for n, (i, _s, _a, _v, tau, t) in enumerate(order):
            for j, _s2, _a2, _v2, tau2, t2 in order[:n]:
                if tau2 <= tau or not self._rank_allows(ranks[t2], ranks[t], tau2 > tau):
                    continue
                if kappa(items[j], items[i]):
                    drops[i] = Drop(items[i], items[j], "kappa")
                    break

    def _rank_allows(self, r_new: int, r_old: int, newer: bool) -> bool:
        if self.policy == "temporal":
            return newer
        if self.policy == "temporal_within_authority":
            return newer and r_new >= r_old
        return r_new > r_old or (r_new == r_old and newer)

    # ------------------------------------------------------------------ rules, beliefs, why

    def add_rule(self, text: str) -> None:
        """Add a rule over ``holds(Subject, Attribute, Value)`` deriving beliefs.

        Example: ``"needs_vpn(U) :- holds(U, location, L), L \\== office"``. Rule bodies may
        call holds/3, other rule heads, comparisons, arithmetic and a few pure builtins only.
        Subjects, attributes and string values appear as normalised atoms.
        """
        if not isinstance(text, str) or not text.strip():
            msg = f"rule text must be a non-empty str, got {text!r}"
            raise UnsafeRule(msg)
        if len(text.encode()) > 65536:
            msg = "rule text is longer than 65536 bytes"
            raise UnsafeRule(msg)
        with self._write() as w:
            rid = f"r{w.next_seq()}"
            self._apply_rule(rid, text)
            w.undo = lambda: self._drop_rule(rid)
            w.events.append(("rule", w.times(1)[0], {"id": rid, "text": text}))

    def _drop_rule(self, rid: str) -> None:
        engine.ask("tk_drop_rule(M, Id)", {"M": self._h, "Id": rid})
        self._rules.pop()

    def _apply_rule(self, rid: str, text: str) -> None:
        kind, message = engine.ask("tk_add_rule(M, Id, T, R)",
                                   {"M": self._h, "Id": rid, "T": text})["R"]
        if kind != "ok":
            msg = f"rule {text!r} refused ({kind}): {message}"
            self._reject(UnsafeRule(msg), {"rule": text})
            raise UnsafeRule(msg)
        self._rules.append((rid, text))

    def rules(self) -> list[str]:
        """The rule texts, in the order they were added."""
        return [t for _, t in self._rules]

    def beliefs(self) -> list[Belief]:
        """Every belief the rules derive from the current facts (kept current incrementally)."""
        with self._lock:
            self._check_open()
            raw = engine.ask("tk_beliefs(M, Bs)", {"M": self._h})["Bs"]
        return [_belief(b) for b in raw]

    def why(self, item: str | Fact | Belief) -> Justification:
        """The justification of a fact (who, when, tier, what it dominates / what dominates
        it) or of a belief (rule and supporting facts, recursively)."""
        with self._lock:
            self._check_open()
            if isinstance(item, Fact):
                item = item.id
            if isinstance(item, str) and item in self._facts:
                return self._why_fact(item)
            text = str(item) if isinstance(item, Belief) else item
            if not isinstance(text, str) or not text.strip():
                msg = f"why() takes a fact id, a Fact or a Belief, got {item!r}"
                raise InvalidFact(msg)
            proof = engine.ask("tk_explain(M, T, P)", {"M": self._h, "T": text})["P"]
            if proof == "none":
                msg = f"{text!r} is neither a fact id of this memory nor a current belief"
                raise UnknownFact(msg)
            return self._proof(proof)

    def _why_fact(self, fid: str) -> Justification:
        f = self._facts[fid]
        links = engine.ask("tk_links(M, Id, Ds, Dd)", {"M": self._h, "Id": fid})
        dominators, dominated = links["Ds"], links["Dd"]
        if fid in self._retracted:
            status = "retracted"
        elif not dominators:
            status = "head"
        else:
            status = "superseded"
        label = (f"fact {fid}: {f.subject}.{f.attribute} = {f.value!r} ({status}); "
                 f"said by {f.source} [{f.tier}], valid from {f.valid_from.isoformat()}, "
                 f"recorded {f.recorded_at.isoformat()}")
        children = []
        if fid in self._retracted:
            ra, reason = self._retracted[fid]
            children.append(Justification("retraction", f"retracted at {from_us(ra).isoformat()}: "
                                          f"{reason}", {"reason": reason}))
        for d in dominators:
            g = self._facts[d]
            children.append(Justification(
                "dominated_by", f"dominated by {d}: {g.value!r} from {g.source} [{g.tier}], "
                f"valid from {g.valid_from.isoformat()} ({self._rule_name(g, f)})",
                {"fact": g}))
        for d in dominated:
            g = self._facts[d]
            children.append(Justification(
                "dominates", f"dominates {d}: {g.value!r} from {g.source} [{g.tier}], "
                f"valid from {g.valid_from.isoformat()} ({self._rule_name(f, g)})",
                {"fact": g}))
        return Justification("fact", label, {
            "fact": f, "status": status, "dominated_by": tuple(dominators),
            "dominates": tuple(dominated)}, tuple(children))

    def _rule_name(self, winner: Fact, loser: Fact) -> str:
        return "explicit supersedes" if winner.supersedes == loser.id else f"policy {self.policy}"

    def _why_resolution(self, slot: tuple[str, str], ids: tuple[str, ...]) -> Justification:
        r = self.current(*slot)
        label = f"{slot[0]}.{slot[1]}: {r.status}" + (
            f" = {r.value!r}" if r.status == "resolved" else "")
        return Justification("resolution", label, {"status": r.status},
                             tuple(self._why_fact(i) for i in ids))

    def _proof(self, node: Any) -> Justification:
        kind = node[0]
        if kind == "belief":
            _, text, rid, rtext, children = node
            return Justification("belief", f"{text}  [rule {rid}: {rtext}]",
                                 {"belief": text, "rule": rtext},
                                 tuple(self._proof(c) for c in children))
        if kind == "holds":
            _, s, a, v, heads = node
            facts = tuple(self._facts[h] for h in heads)
            return Justification(
                "holds", f"holds({s}, {a}, {v})", {"facts": facts},
                tuple(self._why_fact(h) for h in heads))
        return Justification(kind, node[1], {})  # a test or a negation, as Prolog text

    def what_if(
        self,
        *,
        add: Iterable[Mapping[str, Any] | Fact] = (),
        retract: Iterable[str] = (),
    ) -> WhatIf:
        """Which heads and beliefs would change if ``add`` were added and ``retract``
        retracted. Nothing is written."""
        with self._lock:
            self._check_open()
            now = _now_us()
            rows = []
            for i, item in enumerate(add):
                if isinstance(item, Mapping) and item.get("valid_from") is None:
                    item = {**item, "valid_from": from_us(now)}
                _, row = self._coerce(item, i)
                rows.append(row[:6] + (self._last_ra + 1 + i,) + row[7:])
            rids = []
            for fid in retract:
                if fid not in self._facts:
                    msg = f"retract: {fid!r} names no fact of this memory"
                    raise UnknownFact(msg)
                rids.append(fid)
            res = engine.ask("tk_what_if(M, As, Rs, C)",
                             {"M": self._h, "As": rows, "Rs": rids})["C"]
            if res[0] == "error":
                self._raise_rejected(res[1], [])
            _, slots, gained, lost = res
            return WhatIf(
                heads=tuple(HeadChange(s, a, tuple(b), tuple(c)) for s, a, b, c in slots),
                beliefs_gained=tuple(_belief(b) for b in gained),
                beliefs_lost=tuple(_belief(b) for b in lost),
            )

    # ------------------------------------------------------------------ reliability

    def _log(self, events: list[tuple[str, dict[str, Any]]], apply: Callable[[], None]) -> None:
        """Journal events that cannot be refused, then apply them (outcomes, priors)."""
        with self._write() as w:
            w.events.extend((kind, ra, body)
                            for (kind, body), ra in zip(events, w.times(len(events)),
                                                        strict=True))
        apply()

    def _apply_outcome(self, body: Mapping[str, Any]) -> None:
        self._book.record(body["source"], body["tier"], bool(body["correct"]))
        f = self._facts.get(body.get("id") or "")
        if f is not None and body["correct"]:  # a fact confirmed right: its slot's truth
            self._confirmed[(f.subject, f.attribute)] = value_key(f.value)
        self._rel_version += 1

    def _apply_prior(self, body: Mapping[str, Any]) -> None:
        if "tier_prior" in body:
            self._book.set_tier_prior({t: (v[0], v[1]) for t, v in body["tier_prior"].items()})
        for src, mu in body.get("source_prior", {}).items():
            self._book.source_prior[src] = min(max(float(mu), 1e-3), 1 - 1e-3)
        self._rel_version += 1

    def record_outcome(self, fact_id: str, *, correct: bool) -> None:
        """Feedback that a fact was right or wrong; it updates its source's reliability."""
        f = self.get(fact_id)
        if not isinstance(correct, bool):
            msg = f"correct must be a bool, got {correct!r}"
            raise InvalidFact(msg)
        body = {"id": f.id, "source": f.source, "tier": f.tier, "correct": correct}
        self._log([("outcome", body)], lambda: self._apply_outcome(body))

    def record_source_outcome(self, source: str, *, correct: bool, tier: str = "agent") -> None:
        """Feedback on a source that has no fact here (a retrieved context, the model's own
        parametric answer: ``"model:parametric"``)."""
        src = check_label(source, "source")
        t = self._tier(tier)
        if not isinstance(correct, bool):
            msg = f"correct must be a bool, got {correct!r}"
            raise InvalidFact(msg)
        body = {"id": None, "source": src, "tier": t, "correct": correct}
        self._log([("outcome", body)], lambda: self._apply_outcome(body))

    def confirm(self, subject: str, attribute: str, value: Any) -> int:
        """Label the slot's truth: every head is recorded right or wrong at once (one
        transaction). Returns how many outcomes were recorded."""
        heads = self.current(subject, attribute).heads
        key = value_key(value)
        bodies = [{"id": f.id, "source": f.source, "tier": f.tier,
                   "correct": value_key(f.value) == key} for f in heads]

        def apply() -> None:
            for b in bodies:
                self._apply_outcome(b)

        self._log([("outcome", b) for b in bodies], apply)
        return len(bodies)

    def reliability(self) -> list[SourceReliability]:
        """Per-source posterior summaries: mean, 90% interval, outcomes, tier (sorted by
        source); sources of facts without outcomes show their tier prior."""
        with self._lock:
            names = {f.source: f.tier for f in self._facts.values()}
            names.update({s: st.tier for s, st in self._book.sources.items()})
            out = []
            for src in sorted(names):
                tier = names[src]
                lo, hi = self._book.interval(src, tier)
                st = self._book.sources.get(src)
                out.append(SourceReliability(src, st.tier if st else tier,
                                             self._book.mean(src, tier), lo, hi,
                                             st.n if st else 0))
            return out

    def fit_reliability(self, *, method: str = "nuts", rng_seed: int = 0,
                        num_samples: int = 500) -> dict[str, tuple[float, float]]:
        """Refit the tier hyperparameters (ordered tier means, concentrations) of the
        hierarchical model on every source's outcomes, with NUTS (default) or SVI. The
        result is journalled, so a reopen reproduces it exactly without refitting."""
        if method not in ("nuts", "svi"):
            msg = f"method must be 'nuts' or 'svi', got {method!r}"
            raise InvalidFact(msg)
        import jax
        import numpy as np

        from .reliability.inference import run_nuts, run_svi
        from .reliability.models import hierarchical_reliability

        data = self._book.fit_data()
        if not data["names"]:
            msg = "no outcomes recorded yet: nothing to fit"
            raise InvalidFact(msg)
        key = jax.random.key(rng_seed)
        args = {"tier": data["tier"], "trials": data["trials"], "successes": data["successes"],
                "n_tiers": len(self.tiers)}
        if method == "nuts":
            post = run_nuts(hierarchical_reliability, rng_key=key, num_warmup=num_samples,
                            num_samples=num_samples, **args)
        else:
            post = run_svi(hierarchical_reliability, rng_key=key, num_samples=num_samples,
                           **args)
        mu = np.asarray(post["tier_mean"]).mean(axis=0)
        k = np.asarray(post["tier_concentration"]).mean(axis=0)
        prior = {t: (float(mu[i]), float(k[i])) for i, t in enumerate(self.tiers)}
        body = {"tier_prior": {t: [m, c] for t, (m, c) in prior.items()}, "method": method}
        self._log([("prior", body)], lambda: self._apply_prior(body))
        return prior

    def learn_from_agreement(self, *, apply: bool = True) -> dict[str, float]:
        """Estimate each source's accuracy from how it agrees with the others, without labels.

        Every slot is an item whose truth is one of the values its live facts claim (each
        source's latest claim counts); a one-coin Bayesian Dawid-Skene model for open-ended
        values is fitted by variational Bayes. Slots whose truth was confirmed by outcomes
        (``confirm``) enter as observed truths (semi-supervised). With ``apply`` the
        estimates become the prior mean of each source (journalled); logged outcomes still
        update on top of them. Returns the estimated accuracy per source.
        """
        import numpy as np

        from .reliability.ds import vb_one_coin_open

        with self._lock:
            self._check_open()
            sources: dict[str, int] = {}
            ii: list[int] = []
            ww: list[int] = []
            cc: list[int] = []
            nc: list[int] = []
            gold: dict[int, int] = {}
            confirmed = dict(self._confirmed)
            for slot, ids in self._slots.items():
                latest: dict[str, Fact] = {}
                for fid in ids:
                    f = self._facts[fid]
                    if fid in self._retracted:
                        continue
                    cur = latest.get(f.source)
                    if cur is None or (f.valid_from, f.recorded_at) > (cur.valid_from,
                                                                        cur.recorded_at):
                        latest[f.source] = f
                if not latest:
                    continue
                values: dict[Any, int] = {}
                item = len(nc)
                for src, f in latest.items():
                    k = value_key(f.value)
                    c = values.setdefault(k, len(values))
                    ii.append(item)
                    ww.append(sources.setdefault(src, len(sources)))
                    cc.append(c)
                truth = confirmed.get(slot)
                if truth is not None and truth in values:
                    gold[item] = values[truth]
                nc.append(len(values))
            if not sources:
                return {}
            acc, _ = vb_one_coin_open(np.array(ii), np.array(ww), np.array(cc), np.array(nc),
                                      len(sources), gold=gold)
            est = {src: float(acc[j]) for src, j in sources.items()}
        if apply:
            body = {"source_prior": est}
            self._log([("prior", body)], lambda: self._apply_prior(body))
        return est

    def _claim_probabilities(self, claims: list[tuple[Any, list[tuple[str, str]]]],
                             draws: int = 400) -> list[tuple[float, tuple[float, float]]]:
        """P(value is the truth) for each claimed value (one-coin, single truth), averaged over
        draws of the sources' reliabilities; with one value an implicit "something else"
        competes. Returns (mean, 90% interval) per value."""
        import numpy as np

        rng = np.random.default_rng(20261129)
        m = max(len(claims), 2)
        srcs = sorted({s for _, ss in claims for s in ss})
        ab = np.array([self._book.params(s, t) for s, t in srcs]).reshape(-1, 2)
        theta = np.clip(rng.beta(ab[:, 0], ab[:, 1], size=(draws, len(srcs))), 1e-9, 1 - 1e-9)
        idx = {s: i for i, s in enumerate(srcs)}
        support = np.zeros((len(claims) + (1 if len(claims) == 1 else 0), len(srcs)))
        for v, (_, ss) in enumerate(claims):
            for s in ss:
                support[v, idx[s]] = 1.0
        claimed = support.sum(axis=0) > 0
        log_t, log_f = np.log(theta), np.log((1.0 - theta) / (m - 1))
        # score[d, v] = sum_s support[v,s] log theta + (claimed_s - support[v,s]) log off
        score = log_t @ support.T + log_f @ (claimed[None, :] - support).T
        score -= score.max(axis=1, keepdims=True)
        p = np.exp(score)
        p /= p.sum(axis=1, keepdims=True)
        return [(float(p[:, v].mean()), (float(np.quantile(p[:, v], 0.05)),
                                         float(np.quantile(p[:, v], 0.95))))
                for v in range(len(claims))]

    def _with_probabilities(self, r: Resolution) -> Resolution:
        heads = {f.id: f for f in r.heads}
        claims = [(c.value, sorted({(heads[i].source, heads[i].tier) for i in c.fact_ids}))
                  for c in r.candidates]
        probs = self._claim_probabilities(claims)
        best = max(range(len(probs)), key=lambda i: probs[i][0])
        cands = tuple(replace(c, p=pm, interval=iv, best=(i == best))
                      for i, (c, (pm, iv)) in enumerate(zip(r.candidates, probs, strict=True)))
        return replace(r, candidates=cands)

    def decide(self, subject: str, attribute: str, *,
               utility: Utility | None = None) -> Decision:
        """Answer with the value of highest expected utility, or abstain when no answer beats
        the value of abstaining. Probabilities come from the sources' reliabilities."""
        u = _check_utility(utility)
        r = self.current(subject, attribute)
        if r.status == "unknown":
            return Decision("abstain", None, 0.0, u.abstain, (), "the slot has no facts")
        heads = {f.id: f for f in r.heads}
        claims = [(c.value, sorted({(heads[i].source, heads[i].tier) for i in c.fact_ids}))
                  for c in r.candidates]
        probs = self._claim_probabilities(claims)
        return _decision(u, [(v, p, iv) for (v, _), (p, iv) in zip(claims, probs, strict=True)],
                         r.status)

    def resolve_context(
        self,
        *,
        question: str,
        context_value: Any,
        context_source: str,
        parametric_value: Any,
        parametric_confidence: float,
        context_tier: str = "unverified",
        utility: Utility | None = None,
    ) -> Decision:
        """Decide between a retrieved context and the model's own (parametric) answer.

        The context's reliability is the running posterior of ``context_source`` (its tier
        prior at first: a prior, not a fixed rule); the model's is the stated confidence,
        pulled toward the track record of ``"model:parametric"`` as outcomes accumulate
        (``record_source_outcome``). With one-coin evidence from both, P(context right) =
        r_c (1 - q) / (r_c (1 - q) + q (1 - r_c)).
        """
        check_label(question, "question")
        src = check_label(context_source, "context_source")
        tier = self._tier(context_tier)
        q = parametric_confidence
        if not isinstance(q, (int, float)) or isinstance(q, bool) or not 0.0 <= q <= 1.0:
            msg = f"parametric_confidence must be a number in [0, 1], got {q!r}"
            raise InvalidFact(msg)
        u = _check_utility(utility)
        r_c = self._book.mean(src, tier)
        st = self._book.sources.get(_MODEL_SOURCE)
        n_m = st.n if st else 0
        r_m = self._book.mean(_MODEL_SOURCE, "agent")
        q_eff = (10.0 * q + n_m * r_m) / (10.0 + n_m)
        q_eff = min(max(q_eff, 1e-6), 1 - 1e-6)
        if value_key(context_value) == value_key(parametric_value):
            p = 1.0 - (1.0 - r_c) * (1.0 - q_eff)
            return _decision(u, [(context_value, p, None)], "agree")
        pc = r_c * (1 - q_eff) / (r_c * (1 - q_eff) + q_eff * (1 - r_c))
        return _decision(u, [(context_value, pc, None), (parametric_value, 1 - pc, None)],
                         "context and parametric answers disagree")

    # ------------------------------------------------------------------ inspection

    def graph(self) -> Any:
        """A ``networkx.DiGraph``: facts and beliefs as nodes; ``supersedes`` edges (winner
        to loser, under the policy or an explicit link), ``conflicts`` edges between heads of
        a slot that disagree, ``supports`` edges from head facts to the beliefs they support.
        """
        import networkx as nx

        with self._lock:
            self._check_open()
            g = nx.DiGraph()
            for f in self._facts.values():
                g.add_node(f.id, kind="fact", subject=f.subject, attribute=f.attribute,
                           value=f.value, source=f.source, tier=f.tier,
                           retracted=f.id in self._retracted)
            for fid in self._facts:
                if fid in self._retracted:
                    continue
                for d in engine.ask("tk_links(M, Id, Ds, Dd)",
                                    {"M": self._h, "Id": fid})["Dd"]:
                    g.add_edge(fid, d, kind="supersedes")
            for slot in self.conflicts():
                heads = self.current(*slot).heads
                for x in heads:
                    for y in heads:
                        if x.id != y.id and value_key(x.value) != value_key(y.value):
                            g.add_edge(x.id, y.id, kind="conflicts")
            for b in self.beliefs():
                g.add_node(b.text, kind="belief", predicate=b.predicate)
                for fid in _support_ids(self.why(b)):
                    g.add_edge(fid, b.text, kind="supports")
            return g

    def audit(self) -> list[AuditEntry]:
        """The drop log of ``filter`` and the rejected writes, oldest first."""
        with self._lock:
            out: list[AuditEntry] = []
            for entry in self._audit:
                if isinstance(entry, AuditEntry):
                    out.append(entry)
                    continue
                at, query, dropped = entry
                out.extend(AuditEntry("drop", at, {
                    "query": query, "item": _describe(d.item),
                    "dominated_by": _describe(d.dominated_by), "rule": d.rule,
                }) for d in dropped)
            return out


class _Write:
    """What one write needs: strictly increasing transaction times, the next event number (for
    rule ids), the events to record and how to undo the change if the commit fails."""

    def __init__(self, mem: Memory, txn: Any) -> None:
        self.mem, self.txn = mem, txn
        self.events: list[tuple[str, int, Any]] = []
        self.undo: Callable[[], None] | None = None

    def times(self, n: int) -> list[int]:
        base = max(self.mem._last_ra, self.txn.last_ra if self.txn is not None else 0)
        start = max(_now_us(), base + 1)
        self.mem._last_ra = start + n - 1 if n else self.mem._last_ra
        return [start + i for i in range(n)]

    def next_seq(self) -> int:
        if self.txn is not None:
            return int(self.txn.seq) + 1
        return len(self.mem._rules) + 1


_EPOCH_DT = from_us(0)
_MODEL_SOURCE = "model:parametric"


def _check_utility(u: Utility | None) -> Utility:
    if u is None:
        return Utility()
    if not isinstance(u, Utility):
        msg = f"utility must be a truthkeeper.Utility, got {type(u).__name__}"
        raise InvalidFact(msg)
    return u


def _decision(u: Utility, options: list[tuple[Any, float, tuple[float, float] | None]],
              why: str) -> Decision:
    alts = sorted((Alternative(v, p, p * u.correct + (1 - p) * u.wrong, iv)
                   for v, p, iv in options), key=lambda a: -a.expected_utility)
    best = alts[0]
    if best.expected_utility > u.abstain:
        return Decision("answer", best.value, best.p, best.expected_utility, tuple(alts), why)
    return Decision("abstain", best.value, best.p, u.abstain, tuple(alts),
                    f"{why}; no answer beats abstaining ({u.abstain})")


def _json_problem(body: str) -> str | None:
    import json

    try:
        json.loads(body)
    except ValueError:
        return "its body is not valid JSON"
    return None


def _fact_body(f: Fact) -> dict[str, Any]:
    body = f.to_dict()
    del body["recorded_at"]
    if body["signature"] is None:
        del body["signature"]
    return body


def _describe(item: Any) -> Any:
    return item.id if isinstance(item, Fact) else item


def _belief(raw: Any) -> Belief:
    name, args, text = raw
    return Belief(predicate=name, args=tuple(args), text=text)


def _support_ids(j: Justification) -> set[str]:
    out: set[str] = set()
    if j.kind == "holds":
        out.update(f.id for f in j.details["facts"])
    for c in j.children:
        if c.kind != "fact":
            out |= _support_ids(c)
    return out

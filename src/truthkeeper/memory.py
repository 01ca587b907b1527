"""``Memory``: the facade. One lock, the lifecycle, and methods that delegate to the layers:
``logic/`` (facts, policies, Phi_T, rules), ``reliability/`` (probabilities, decisions),
``journal/`` (durability) and ``events`` (how each kind of event is applied)."""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .audit import caller_scope
from .errors import RuleWarning, ScopeError, TruthkeeperError, UnknownFact
from .graph import memory_graph
from .journal import Journal
from .journal.jsonl import read_jsonl, write_jsonl
from .keys import fold_prefix
from .logic.filter import filter_items
from .logic.policy import Policy
from .logic.rules import undefined_message
from .reliability.context import decide_context
from .reliability.decision import decide_slot
from .reliability.similarity import Similarity
from .results import (
    AuditEntry,
    Decision,
    FilterResult,
    SourceReliability,
    Utility,
    Verification,
    WhatIf,
)
from .schema import UNCHANGED, Declaration, Unchanged, declaration
from .session import CallContext, Closing, Parts, id_list, recorded_settings
from .signing import public_key_hex
from .validation import (
    check_bool,
    check_categories,
    check_probability,
    check_rule_text,
    check_signature,
    check_utility,
)
from .values import (
    Belief,
    Candidate,
    Fact,
    Justification,
    OneFact,
    Resolution,
    check_label,
    check_scope,
    check_source,
    from_us,
    in_scope,
    normalise_key,
    parse_time,
    to_us,
)
from .views import (
    check_visible,
    erase_selection,
    scope_names,
    view_conflicts,
    view_fact,
    view_history,
    view_slots,
)

__all__ = ["DEFAULT_TIERS", "Memory"]

DEFAULT_TIERS = ("human", "verified", "agent", "unverified")




class Memory(Closing):
    """An agent's memory of facts, with supersession, conflicts, beliefs and history.

    Parameters
    ----------
    path
        A SQLite journal file (created when missing); ``None`` keeps everything in memory.
    policy
        A policy's name (:func:`truthkeeper.policies`) or a :class:`~truthkeeper.Policy`.
    tiers, protected_tiers, trusted_keys
        Tiers, most authoritative first; protected ones need signatures by trusted keys,
        and so does every tier above a protected one (``protected_tiers`` lists them all).
    synchronous, readonly, discount, journal
        SQLite durability, open without writing, decay of old reliability evidence, and a
        journal object instead of ``path`` (e.g. ``PostgresJournal(dsn, connect_timeout=3)``).
    similarity
        Near-equal values support each other in conflict probabilities and
        ``learn_from_agreement`` (``Similarity.numbers(rel_tol)``, ``.tokens()``,
        ``.strings()`` or a callable); None (default): only equal values do.
    categories
        ``{attribute: [category, ...]}``: only these values, each source's confusion between
        them deciding conflicts (:mod:`.reliability.categorical`); journalled; None removes.
    lazy
        True (default): open a SQLite or PostgreSQL journal in constant time, reading each
        slot's events when the slot is first asked about (README: opening large memories).
        Every answer is that of a full replay; the chain is checked event by event as
        slots are read, in full by ``verify()`` and by the background index check.
        False: replay the whole journal at open (a damaged event is refused there).
    index_check
        When a lazily opened memory compares its slot index with the whole chain:
        ``"background"`` (default: in another process right after the open; a mismatch makes the
        next call raise JournalCorrupt) or ``"before-write"`` (reads trust the index until
        the first write or ``verify()``).

    Examples
    --------
    >>> mem = Memory()
    >>> for v, day in [(4500, "2026-11-20"), (4700, "2026-11-21")]:
    ...     _ = mem.add("acme", "invoice_total", v, source="billing-email", valid_from=day)
    >>> mem.current("acme", "invoice_total").value
    4700
    """

    _scope: str | None = None
    _view = False
    _owner: Memory | None = None

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 policy: str | Policy = "temporal_within_authority",
                 tiers: Sequence[str] = DEFAULT_TIERS,
                 protected_tiers: Sequence[str] = ("human",), trusted_keys: Sequence[Any] = (),
                 synchronous: str = "FULL", readonly: bool = False, discount: float = 1.0,
                 journal: Journal | None = None, index_check: str = "background",
                 similarity: Similarity | Callable[[Any, Any], float] | None = None,
                 categories: Mapping[str, Sequence[Any]] | None = None,
                 lazy: bool = True, clock: Callable[[], datetime] | None = None,
                 schema: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        p = self._p = Parts(path, {k: v for k, v in locals().items() if k not in ("self", "path")})
        self.path, self.policy, self.tiers = p.path, p.policy, p.tiers
        self.protected_tiers, self._lock, self._cache = p.guarded, p.lock, p.answers.cache
        self._rel, self._store, self._ledger, self._events = p.rel, p.store, p.ledger, p.events
        self._reasoner, self._audit = p.reasoner, p.audit

    @classmethod
    def open(cls, target: str, *, readonly: bool = True, create: bool = False,
             **settings: Any) -> Memory:
        """Open an existing journal with the settings it was created with.

        Parameters
        ----------
        target
            A journal file or a ``postgresql://`` URL.
        readonly
            Open it for reading only (the default): nothing is written, not even a
            configuration event.
        create
            Make a missing file (as ``Memory(target)`` would).
        **settings
            More of ``Memory``'s arguments (e.g. ``lazy=False``); the policy, tiers and
            protected tiers come from the journal.

        Returns
        -------
        Memory
            The opened memory.

        Raises
        ------
        JournalError
            The target is missing (and not ``create``), holds no memory, or cannot be opened.
        JournalCorrupt
            The journal is damaged.
        PolicyError
            The journal names a policy this process cannot register.

        Examples
        --------
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "m.db")
        >>> Memory(path, policy="temporal").close()
        >>> with Memory.open(path) as mem:
        ...     mem.policy
        'temporal'
        """
        return cls(target, **{**recorded_settings(target, readonly=readonly, create=create),
                              **settings})

    @property
    def corruption(self) -> str | None:
        """Why a ``readonly`` memory stopped replaying its journal, or None.

        >>> Memory().corruption is None
        True
        """
        return self._ledger.corruption


    def close(self) -> None:
        """Release the journal and the Prolog state; a closed memory answers nothing.

        A view (``scope``) shares its memory's state: closing a view closes nothing.

        Examples
        --------
        >>> mem = Memory(); mem.close()
        >>> len(mem)
        Traceback (most recent call last):
        ...
        truthkeeper.errors.TruthkeeperError: this Memory is closed
        """
        if not self._view and "_p" in self.__dict__:  # a view shares its memory's parts
            self._p.close()

    def __len__(self) -> int:
        """The number of facts this memory sees (a scope's view: its scope's and the shared
        layer's), erased and retracted ones included.

        Returns
        -------
        int
            How many facts the view holds.

        Raises
        ------
        TruthkeeperError
            The memory is closed.

        Examples
        --------
        >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> len(mem), len(mem.scope("user:bo"))
        (1, 1)
        """
        with self._open():
            return self._store.count(self._scope)

    def _open(self, strict: bool = True, poll: bool = True) -> CallContext:
        """The context of every call (:class:`~.session.CallContext`)."""
        return CallContext(self._lock, self._scope, self._p, strict, poll)

    def refresh(self) -> int:
        """Apply the events other processes appended to the journal.

        Reads catch up by themselves; ``refresh`` does it now, and says how much came in.

        Returns
        -------
        int
            How many events were applied.

        Raises
        ------
        JournalCorrupt
            An appended event is damaged (nothing after it is applied).

        Examples
        --------
        >>> import os, tempfile; path = os.path.join(tempfile.mkdtemp(), "m.db")
        >>> writer, reader = Memory(path), Memory(path)
        >>> _ = writer.add("ana", "city", "Lisbon", source="s")
        >>> reader.refresh(), reader.current("ana", "city").value
        (1, 'Lisbon')
        """
        return self._p.refresh(self._open)

    def verify(self, *, checkpoint: Mapping[str, Any] | None = None) -> Verification:
        """Check the journal: the hash chain, every signature, and the chain against the
        owner's signed checkpoint; then the slot index against the chain (rebuilt when it
        differs). A rewrite or a cut tail shows.

        Parameters
        ----------
        checkpoint
            A checkpoint the owner signed (``Signer.sign_checkpoint``); default: the last
            one journalled.

        Returns
        -------
        Verification
            ``ok``, the number of events, the head hash and what was wrong (a malformed
            ``checkpoint`` too: ``ok`` is False with the reason).

        Examples
        --------
        >>> Memory().verify().ok
        True
        """
        with self._open(strict=False):  # reports damage a lazy memory found, not raises it
            return self._events.verify(self._ledger.journal, self._p.guard.verifier(), checkpoint)

    def add_key(self, public_key: Any, *, signature: Mapping[str, str]) -> None:
        """Trust a new key from now on (journalled).

        Parameters
        ----------
        public_key
            An Ed25519 public key (or its raw bytes or hex).
        signature
            A trusted key's ``sign_action("key", {"key": <hex>, "action": "added"})``.

        Raises
        ------
        TierNotAuthorized
            The signature is missing, wrong, or by a key that is not trusted.
        InvalidFact
            ``public_key`` is not a key.

        Examples
        --------
        >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        >>> from truthkeeper import Signer
        >>> owner, deputy = (Signer(Ed25519PrivateKey.generate()) for _ in range(2))
        >>> mem = Memory(trusted_keys=[owner.public_key])
        >>> mem.add_key(deputy.public_key, signature=owner.sign_action(
        ...     "key", {"key": deputy.public_key_hex, "action": "added"}))
        >>> mem.add_many([deputy.sign({"subject": "acme", "attribute": "ceo", "value": "Ana",
        ...     "source": "user:ana", "tier": "human", "valid_from": "2026-01-01"})])[0].tier
        'human'
        """
        self._key(public_key, "added", signature)

    def revoke_key(self, public_key: Any, *, signature: Mapping[str, str]) -> None:
        """Revoke a key: it signs nothing from now on; what it signed stays verifiable.

        Parameters
        ----------
        public_key
            The trusted key to revoke (an Ed25519 public key, its raw bytes or hex).
        signature
            A trusted key's ``sign_action("key", {"key": <hex>, "action": "revoked"})``.

        Raises
        ------
        TierNotAuthorized
            The signature is missing, wrong, or by a key that is not trusted.
        InvalidFact
            ``public_key`` is not a key.

        Examples
        --------
        >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        >>> from truthkeeper import Signer
        >>> owner, old = (Signer(Ed25519PrivateKey.generate()) for _ in range(2))
        >>> mem = Memory(trusted_keys=[owner.public_key, old.public_key])
        >>> mem.revoke_key(old.public_key, signature=owner.sign_action(
        ...     "key", {"key": old.public_key_hex, "action": "revoked"}))
        >>> mem.add_many([old.sign({"subject": "acme", "attribute": "ceo", "value": "Bo",
        ...     "source": "user:bo", "tier": "human", "valid_from": "2026-01-01"})])
        Traceback (most recent call last):
        ...
        truthkeeper.errors.TierNotAuthorized: ...
        """
        self._key(public_key, "revoked", signature)

    def _key(self, key: Any, action: str, signature: Mapping[str, str]) -> None:
        body = {"key": public_key_hex(key), "action": action,
                "signature": check_signature(signature)}
        with self._open(), self._ledger.write() as w:
            self._events.key(w, body)

    def checkpoint(self, checkpoint: Mapping[str, Any]) -> None:
        """Journal a checkpoint the owner signed: ``verify`` then checks the chain
        against it.

        Parameters
        ----------
        checkpoint
            ``Signer.sign_checkpoint(events, head_hash)`` by a trusted key.

        Raises
        ------
        TierNotAuthorized
            The checkpoint is malformed, or not signed by a trusted key.

        Examples
        --------
        >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        >>> from truthkeeper import Signer
        >>> owner = Signer(Ed25519PrivateKey.generate())
        >>> mem = Memory(trusted_keys=[owner.public_key])
        >>> _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> v = mem.verify()
        >>> mem.checkpoint(owner.sign_checkpoint(v.events, v.head_hash))
        >>> mem.verify().ok
        True
        """
        with self._open(), self._ledger.write() as w:
            self._events.checkpoint(w, checkpoint, self._ledger.journal)


    def add(self, subject: str, attribute: str, value: Any, *, source: str,
            tier: str = "agent", valid_from: datetime | str | None = None,
            valid_to: datetime | str | None = None, supersedes: str | None = None,
            text: str | None = None, meta: Mapping[str, Any] | None = None,
            signature: Mapping[str, str] | None = None, present: bool = True) -> Fact:
        """Add one fact and return it (with its id and ``recorded_at``).

        Parameters
        ----------
        subject, attribute
            The slot (keys are normalised: NFC, case-folded, white space collapsed).
        value
            A JSON value (str, int, float, bool, None, lists, dicts with str keys).
        source
            Who said it; a source keeps the tier of its first fact or outcome.
        tier
            Its provenance class, one of the memory's tiers (protected ones need a
            ``signature``: ``Signer.sign``).
        valid_from, valid_to
            When it became and stopped being true (default: now, open-ended).
        supersedes
            The id of the fact of the same slot it replaces, whatever the times.
        text, meta
            The statement as said, and any JSON metadata (a policy may read ``meta``).
        present
            In a set (``declare(..., cardinality="many")``), False says that ``value`` is
            no longer a member.

        Returns
        -------
        Fact
            The fact as stored.

        Raises
        ------
        InvalidFact, UnknownFact, SupersessionError, TierNotAuthorized, ScopeError
            Refused; nothing changes.

        Examples
        --------
        >>> Memory().add("ana", "city", "Lisbon", source="user:ana", tier="verified").value
        'Lisbon'
        """
        return self.add_many([OneFact({
            "subject": subject, "attribute": attribute, "value": value, "source": source,
            "tier": tier, "valid_from": valid_from, "valid_to": valid_to,
            "supersedes": supersedes, "text": text, "meta": meta, "signature": signature,
            **({} if present is True else {"present": present})})])[0]

    def add_many(self, facts: Iterable[Mapping[str, Any] | Fact]) -> list[Fact]:
        """Add a batch atomically: all or none.

        Parameters
        ----------
        facts
            Dicts of ``add``'s arguments (plus ``id``), or Facts.

        Returns
        -------
        list of Fact
            The facts as stored, in order.

        Raises
        ------
        InvalidFact, UnknownFact, SupersessionError, TierNotAuthorized
            One item is refused (its index is named); nothing changes.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add_many([{"subject": "a", "attribute": "x", "value": 1, "source": "s"},
        ...                   {"subject": "b", "attribute": "x", "value": 2, "source": "s"}])
        >>> len(mem)
        2
        """
        facts = facts if self._scope is None else in_scope(facts, self._scope, "facts")
        with caller_scope(self._scope):  # the ids it draws at random go into ``drawn``
            built = self._events.validate(facts, drawn := set[str](), typed=False)
        # no poll first: the write catches up under the journal's lock (Ledger.write), then
        # applies the declared types; the slots a lazily opened store reads come in before
        # it takes that lock
        with self._open(poll=False):
            return self._p.add_facts(built, drawn)

    def declare(self, attribute: str, *, cardinality: str | Unchanged = UNCHANGED,
                value_type: str | None | Unchanged = UNCHANGED,
                categories: Sequence[Any] | None = None) -> None:
        """Declare an attribute for the whole memory (journalled). What is not passed stays
        as it is (an attribute never declared: one value at a time, no value type).

        A cardinality is fixed once the attribute holds a fact. The owner's act: a scope's
        view cannot declare.

        Parameters
        ----------
        attribute
            The attribute.
        cardinality
            ``"one"`` (a value at a time) or ``"many"``: a set, each value with its own
            chain; a value leaves the set by retraction, ``end``, or a newer fact with
            ``present=False``.
        value_type
            ``"number"``, ``"string"``, ``"boolean"`` or ``"date"``: values are coerced as
            they come in (``"135"`` -> 135) or refused; None removes the type.
        categories
            The attribute's closed set of values, each source's confusion between them
            deciding its conflicts (as ``Memory(categories=...)``); ``[]`` removes it.

        Raises
        ------
        InvalidFact
            A malformed declaration, or a cardinality change of an attribute that holds facts.
        ScopeError
            Called on a scope's view.

        Examples
        --------
        >>> mem = Memory(); mem.declare("pet", cardinality="many")
        >>> _ = mem.add("ana", "pet", "cat", source="user:ana", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "pet", "dog", source="user:ana", valid_from="2026-02-01")
        >>> mem.current("ana", "pet").value
        ('cat', 'dog')
        """
        self._owner_only("declare")
        d, keep = declaration(attribute, cardinality, value_type)
        cats = None if categories is None else check_categories({d.attribute: categories})
        with self._open():
            with self._ledger.write() as w:  # what was not passed: as the attribute has it
                self._events.declare(w, d, keep)
            if cats is not None:  # journalled as Memory(categories=...) journals them
                self._events.start_categories(self._ledger, cats)

    def _owner_only(self, act: str) -> None:
        if self._view:
            msg = f"{act} is the memory owner's act: call it on the Memory, not a scope's view"
            raise ScopeError(msg)

    def declarations(self) -> dict[str, Declaration]:
        """Every declared attribute with its declaration.

        Returns
        -------
        dict[str, Declaration]
            By attribute: cardinality and value type.

        Examples
        --------
        >>> mem = Memory(schema={"price": {"value_type": "number"}})
        >>> mem.declarations()["price"].value_type
        'number'
        """
        with self._open():
            return dict(self._events.declarer.schema.declarations())

    def end(self, fact_id: str, *, valid_to: datetime | str | None = None,
            signature: Mapping[str, str] | None = None) -> None:
        """The fact stopped being true at ``valid_to`` (default: now): an event, so the
        fact's history and ``as_of`` before that time are unchanged. Once ``valid_to``
        passes the fact is no longer current, and a slot with no other current fact is
        ``unknown``. Ending a protected fact needs ``signature``:
        ``sign_action("end", {"id", "valid_to"})`` (``valid_to`` as ISO 8601 in UTC).

        Parameters
        ----------
        fact_id
            The fact (of this memory's scope).
        valid_to
            When it stopped being true (default: now); after its ``valid_from``.
        signature
            For a protected fact.

        Raises
        ------
        InvalidFact, UnknownFact, ScopeError, TierNotAuthorized
            Refused; nothing changes.

        Examples
        --------
        >>> from datetime import datetime, UTC
        >>> mem = Memory(clock=lambda: datetime(2026, 6, 1, tzinfo=UTC))
        >>> f = mem.add("ana", "employer", "Globex", source="s", valid_from="2026-01-01")
        >>> mem.end(f.id, valid_to="2026-05-01")
        >>> mem.current("ana", "employer").status, mem.as_of("ana", "employer",
        ...     valid_at="2026-03-01").value
        ('unknown', 'Globex')
        """
        fid = self._own(fact_id).id
        vt = from_us(self._p.now()) if valid_to is None else parse_time(valid_to, "valid_to")
        body: dict[str, Any] = {"id": fid, "valid_to": vt.isoformat()}
        if signature is not None:
            body["signature"] = check_signature(signature)
        with self._open(), self._ledger.write() as w:
            self._events.end(w, body)

    def retract(self, fact_id: str, *, reason: str,
                signature: Mapping[str, str] | None = None) -> None:
        """Retract a fact: an event, not a delete (``history`` and ``as_of`` keep it).

        Parameters
        ----------
        fact_id
            The fact (of this memory's scope).
        reason
            Why, journalled with it.
        signature
            For a protected fact: ``Signer.sign_action("retract", {"id", "reason"})``.

        Raises
        ------
        UnknownFact, ScopeError, TierNotAuthorized
            Refused; nothing changes.

        Examples
        --------
        >>> mem = Memory()
        >>> mem.retract(mem.add("ana", "city", "Lisbon", source="s").id, reason="typo")
        >>> mem.current("ana", "city").status
        'unknown'
        """
        fid, why = self._own(fact_id).id, check_label(reason, "reason")
        with self._open(), self._ledger.write() as w:
            self._events.retract(w, fid, why, signature)

    def add_rule(self, text: str) -> None:
        """Add a rule over ``holds(Subject, Attribute, Value)`` (journalled): its beliefs
        follow the facts (README: how rules see values). In a scope's view the rule
        belongs to that scope.

        Parameters
        ----------
        text
            One Prolog clause, ``head :- body``, over ``holds/3`` and the allowed builtins.

        Raises
        ------
        UnsafeRule
            The text does not parse, calls what rules may not call, or names a reserved head.

        Warns
        -----
        RuleWarning
            The body calls a predicate that no rule (this one included) defines where the
            rule applies: the rule is added, and derives nothing through that call until a
            rule defines it (often a typo: ``holdz`` for ``holds``).

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "location", "Home", source="s")
        >>> mem.add_rule("needs_vpn(U) :- holds(U, location, home)")
        >>> [str(b) for b in mem.beliefs()]
        ['needs_vpn(ana)']
        """
        text = check_rule_text(text)
        with self._open(), self._ledger.write() as w:
            undefined = self._events.rule(w, text, self._scope)
        if undefined:  # added, and said so: a rule may name a head a later rule defines
            warnings.warn(undefined_message(text, undefined), RuleWarning, stacklevel=2)

    def remove_rule(self, text: str) -> None:
        """Remove the rule with this text (as ``rules()`` lists it); journalled.

        Parameters
        ----------
        text
            The rule's text.

        Raises
        ------
        UnknownRule
            No rule of this view has that text.

        Examples
        --------
        >>> mem = Memory(); mem.add_rule("p(X) :- holds(X, a, b)")
        >>> mem.remove_rule("p(X) :- holds(X, a, b)"); mem.rules()
        []
        """
        text = check_rule_text(text)
        with self._open(), self._ledger.write() as w:
            self._events.rule_removed(w, text, self._scope)

    def _log(self, kind: str, bodies: list[dict[str, Any]]) -> None:
        with self._open():
            self._events.log(self._ledger, kind, bodies)

    def record_outcome(self, fact_id: str, *, correct: bool,
                       signature: Mapping[str, str] | None = None) -> None:
        """Feedback that a fact was right or wrong: the reliability of its source learns
        from it (journalled).

        Parameters
        ----------
        fact_id
            The fact the feedback is about.
        correct
            Whether it was right.
        signature
            ``Signer.sign_action("outcome", ...)``: required when the fact's source is
            bound to a protected tier.

        Raises
        ------
        UnknownFact
            No such fact in this view.
        InvalidFact
            ``correct`` is not a bool.
        TierNotAuthorized
            A protected source's outcome without a valid signature.

        Examples
        --------
        >>> mem = Memory()
        >>> mem.record_outcome(mem.add("ana", "city", "Lisbon", source="crm").id, correct=True)
        >>> [(r.source, r.n) for r in mem.reliability()]
        [('crm', 1)]
        """
        f = self.get(fact_id)
        self._log("outcome", [self._events.outcome_body(f, f.source, f.tier,
                                                        check_bool(correct), signature)])

    def record_source_outcome(self, source: str, *, correct: bool, tier: str = "agent",
                              signature: Mapping[str, str] | None = None,
                              confidence: float | None = None) -> None:
        """Feedback on a source without facts here (a retrieved context,
        ``"model:parametric"``), journalled.

        Parameters
        ----------
        source
            The source.
        correct
            Whether what it said was right.
        tier
            The tier the source is bound to (its first outcome binds it).
        signature
            Required at a protected tier, as for ``record_outcome``.
        confidence
            What the source stated (a model's confidence), so that ``resolve_context``
            learns how far to trust its stated confidences.

        Raises
        ------
        InvalidFact
            A malformed source, tier, ``correct`` or ``confidence``.
        TierNotAuthorized
            The source is bound to another tier, or a protected one without a signature.

        Examples
        --------
        >>> mem = Memory(); mem.record_source_outcome("web", correct=False)
        >>> mem.reliability()[0].n
        1
        """
        src, t = check_source(source), self._p.builder.tier(tier)
        body = self._events.outcome_body(None, src, t, check_bool(correct), signature)
        if confidence is not None:
            body["confidence"] = check_probability(confidence, "confidence")
        self._log("outcome", [body])

    def confirm(self, subject: str, attribute: str, value: Any, *,
                signature: Mapping[str, str] | None = None) -> int:
        """Settle a slot on ``value``: it is the slot's resolved answer (``why()`` names
        the confirmation) until newer evidence of at least the confirmer's standing
        arrives (unsigned: the highest unprotected tier; with ``signature``,
        ``sign_action("confirm", {"subject", "attribute", "value"})`` over the slot's
        keys: the highest protected tier). Every head is recorded right or wrong (in a
        set: the heads about that member only), which teaches the reliability model; a
        confirmation fact is written, in the same write.

        Parameters
        ----------
        subject, attribute
            The slot.
        value
            The value the owner (or a trusted reviewer) says is right; in a set, one
            member (a list, tuple or set that no member is: refused, as a call for each
            member was likely meant).
        signature
            The owner's ``sign_action("confirm", ...)``: the confirmation then stands at
            the highest protected tier.

        Returns
        -------
        int
            How many heads were recorded right or wrong.

        Raises
        ------
        InvalidFact, TierNotAuthorized
            Refused; nothing changes.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "city", "Lisbon", source="a", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "city", "Porto", source="b", valid_from="2026-01-01")
        >>> mem.confirm("ana", "city", "lisbon")
        2
        """
        s, a = _slot(subject, attribute)
        with self._open():
            return self._events.confirm(self._ledger, self._scope, s, a, value, signature)

    def fit_reliability(self, *, method: str = "nuts", rng_seed: int = 0,
                        num_samples: int = 500) -> dict[str, tuple[float, float]]:
        """Refit the tier hyperparameters on the outcomes (journalled).

        Parameters
        ----------
        method
            ``"nuts"`` (MCMC) or ``"svi"`` (variational, faster).
        rng_seed
            The sampler's seed.
        num_samples
            Posterior draws (NUTS) or optimisation steps' draws (SVI).

        Returns
        -------
        dict[str, tuple[float, float]]
            Each tier's Beta prior ``(a, b)``.

        Raises
        ------
        InvalidFact
            An unknown method or a bad number of samples.
        ScopeError
            Called on a scope's view (the tiers' priors are the owner's).

        Examples
        --------
        >>> mem = Memory(); f = mem.add("acme", "total", 4500, source="billing")
        >>> mem.record_outcome(f.id, correct=True)
        >>> prior = mem.fit_reliability(method="svi", num_samples=50)
        >>> sorted(prior) == sorted(mem.tiers) and all(a > 0 and b > 0 for a, b in prior.values())
        True
        """
        self._owner_only("fit_reliability")
        with self._open():
            body = self._rel.fit(method, rng_seed, num_samples)
        self._log("prior", [body])
        return {t: (v[0], v[1]) for t, v in body["tier_prior"].items()}

    def learn_from_agreement(self, *, apply: bool = True, dependence: bool = False,
                             correlation: bool = True) -> dict[str, float]:
        """Each source's accuracy from agreement, without labels (Dawid-Skene).

        Parameters
        ----------
        apply
            Journal the estimates as the sources' prior means.
        dependence
            Also find sources that copy each other (ACCU's test, judged by the other
            sources) and journal them: a chorus of copies then counts about as one source.
        correlation
            Without ``dependence`` (which models correlated sources itself): also learn how
            correlated the claims about one slot are (rho, chosen so that each claim is best
            predicted from the others); a conflict's n claims then count as
            n / (1 + (n - 1) rho) independent ones, which keeps its probabilities from being
            overconfident when sources err together.

        Returns
        -------
        dict[str, float]
            Each source's estimated accuracy.

        Raises
        ------
        InvalidFact
            ``dependence`` or ``correlation`` is not a bool.
        ScopeError
            Called on a scope's view.

        Examples
        --------
        >>> mem = Memory()
        >>> for s, v in [("a", 1), ("b", 1), ("c", 2)]:
        ...     _ = mem.add("x", "n", v, source=s, valid_from="2026-01-01")
        >>> est = mem.learn_from_agreement(); est["a"] > est["c"]
        True
        """
        self._owner_only("learn_from_agreement")
        dep, cor = check_bool(dependence, "dependence"), check_bool(correlation, "correlation")
        app = check_bool(apply, "apply")
        with self._open():
            est, body = self._rel.learn(
                self._store.claims(list(self._rel.confirmed.values())), self._p.sim, dep, cor)
        if app and est:
            self._log("prior", [body])
        return est

    def scope(self, name: str) -> Memory:
        """A view bound to a scope: it writes to that scope and reads it over the shared
        (unscoped) layer, so one journal keeps many users' or agents' memories apart.
        Rules and outcomes added in the view stay in it; the shared ones apply in every view.

        Parameters
        ----------
        name
            The scope, e.g. ``"user:ana"``.

        Returns
        -------
        Memory
            The view (it shares this memory's state and lock).

        Raises
        ------
        InvalidFact
            A malformed scope name.

        Examples
        --------
        >>> mem = Memory(); ana, bob = mem.scope("user:ana"), mem.scope("user:bob")
        >>> _ = ana.add("me", "city", "Lisbon", source="chat")
        >>> ana.current("me", "city").value, bob.current("me", "city").status
        ('Lisbon', 'unknown')
        """
        scope = check_scope(name)  # before the copy: a discarded copy must not close us
        view = copy.copy(self)
        # the memory lives while a view does (collected, it closes)
        view._view, view._scope, view._owner = True, scope, self
        return view

    def scopes(self) -> list[str]:
        """Every scope that holds anything: a fact (retracted and ended ones too; erased
        ones not), a rule, an outcome or an audit entry this memory keeps. The owner's
        listing, e.g. to erase a person from every scope (see :meth:`erase`).

        Returns
        -------
        list[str]
            The scopes' names, sorted.

        Raises
        ------
        ScopeError
            Called on a scope's view (a view never learns what other scopes exist).

        Examples
        --------
        >>> mem = Memory(); _ = mem.scope("user:ana").add("me", "city", "Lisbon", source="chat")
        >>> _ = mem.scope("team:ops").add_rule("local(X) :- holds(X, city, lisbon)")
        >>> mem.scopes()
        ['team:ops', 'user:ana']
        """
        self._owner_only("scopes")
        with self._open():
            return scope_names(self)

    def slots(self, subject: str | None = None, *, prefix: str | None = None,
              ) -> list[tuple[str, str]]:
        """Every slot holding a fact this memory sees (a scope's view: its scope's and the
        shared layer's), sorted.

        Parameters
        ----------
        subject
            Only this subject's slots (default: all).
        prefix
            Only the slots of subjects starting with this text, folded as subjects are
            (case, Unicode form, spaces); a lazily opened memory finds them on its slot
            index, reading no slot in.

        Returns
        -------
        list[tuple[str, str]]
            ``(subject, attribute)`` pairs, normalised.

        Raises
        ------
        InvalidFact
            A malformed subject.

        Examples
        --------
        >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> mem.slots()
        [('ana', 'city')]
        """
        want = None if subject is None else normalise_key(subject, "subject")
        start = None if prefix is None else fold_prefix(prefix, "prefix")
        with self._open():
            return view_slots(self._store, self._scope, want, start)

    def about(self, subject: str) -> dict[str, Resolution]:
        """Every slot of a subject with its current resolution.

        Parameters
        ----------
        subject
            The subject.

        Returns
        -------
        dict[str, Resolution]
            By attribute, what ``current`` answers.

        Raises
        ------
        InvalidFact
            A malformed subject.

        Examples
        --------
        >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> {a: r.value for a, r in mem.about("ana").items()}
        {'city': 'Lisbon'}
        """
        return {a: self.current(s, a)
                for s, a in self.slots(normalise_key(subject, "subject"))}

    def erase(self, fact_ids: Iterable[str] = (), *, subject: str | None = None,
              attribute: str | None = None, scope: str | None = None,
              reason: str = "erasure request",
              signature: Mapping[str, str] | None = None) -> list[str]:
        """Erase facts for good (the right to be forgotten): by id, by ``subject`` (and
        ``attribute``), or every fact of ``scope``. Values, texts and meta leave memory,
        journal and exports; each fact stays in history as an erased placeholder, the chain
        still verifies, and the erasure is an event. A protected fact needs ``signature``:
        ``sign_action("erase", {"ids": [...], "reason": ...})``.

        Parameters
        ----------
        fact_ids
            Facts to erase by id.
        subject, attribute
            Every fact of a subject (and attribute) this memory sees as its own: on the
            Memory, the shared layer's. A person in every scope too: then
            ``mem.scope(name).erase(subject=...)`` for each name of :meth:`scopes`.
        scope
            Every fact of a scope, with its rules and outcomes (the owner's act, or that
            scope's own view).
        reason
            Journalled with the erasure.
        signature
            For protected facts.

        Returns
        -------
        list of str
            The erased ids.

        Raises
        ------
        UnknownFact, ScopeError, TierNotAuthorized
            Refused; nothing changes.

        Examples
        --------
        >>> mem = Memory(); f = mem.add("ana", "phone", "555-0101", source="chat")
        >>> mem.erase(subject="ana") == [f.id], mem.history("ana", "phone")[0].status
        (True, 'erased')
        """
        fact_ids, reason = id_list(fact_ids, "fact_ids"), check_label(reason, "reason")
        with self._open():  # chosen once caught up (again under the write's lock if need be)
            return self._events.erase(self._ledger, lambda: erase_selection(
                self, fact_ids, subject, attribute, scope), reason, signature)

    def export_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Write every event but the configuration as JSON Lines. The owner's act on the
        whole memory: a scope's view cannot export nor import.

        Parameters
        ----------
        path
            The file to write (replaced).

        Returns
        -------
        int
            The number of lines written.

        Raises
        ------
        ScopeError
            Called on a scope's view.
        JournalError
            The file cannot be written.

        Examples
        --------
        >>> import os, tempfile; path = os.path.join(tempfile.mkdtemp(), "m.jsonl")
        >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> mem.export_jsonl(path), Memory().import_jsonl(path)
        (1, 1)
        """
        self._owner_only("export")
        with self._open():
            events = self._ledger.every_event()
        return write_jsonl(path, events)

    def import_jsonl(self, path: str | os.PathLike[str]) -> int:
        """Import an ``export_jsonl`` file, all or nothing; events held already are skipped.

        Parameters
        ----------
        path
            The file to read.

        Returns
        -------
        int
            The number of lines read.

        Raises
        ------
        InvalidFact
            The file cannot be read, a line is malformed, or an event would be refused as a
            write is (nothing is imported).
        ScopeError
            Called on a scope's view.

        Examples
        --------
        >>> import os, tempfile; path = os.path.join(tempfile.mkdtemp(), "m.jsonl")
        >>> mem = Memory(); _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> _ = mem.export_jsonl(path)
        >>> copy = Memory(); _ = copy.import_jsonl(path); _ = copy.import_jsonl(path)
        >>> copy.current("ana", "city").value, len(copy)
        ('Lisbon', 1)
        """
        self._owner_only("import")
        lines = read_jsonl(path)
        with self._open():
            self._store.need_all()
            self._events.import_lines(self._ledger, lines, os.fsdecode(path))
        return len(lines)


    def get(self, fact_id: str) -> Fact:
        """The fact with this id.

        Parameters
        ----------
        fact_id
            The id ``add`` returned.

        Returns
        -------
        Fact
            With its ``status``.

        Raises
        ------
        UnknownFact
            This memory does not see it (another scope's is refused the same way).

        Examples
        --------
        >>> mem = Memory(); f = mem.add("acme", "price", 100, source="s")
        >>> mem.scope("user:ana").get(f.id).value  # a view sees the shared layer
        100
        """
        with self._open():
            return view_fact(self._store, self._scope, check_label(fact_id, "fact_id"),
                             lambda s, a: self._p.answers.heads(self._scope, s, a))

    def _visible_id(self, fact_id: str) -> bool:
        """Whether ``fact_id`` names a fact this memory sees; a fact id of another scope is
        refused exactly as an unknown one (a belief's text is not an id: False)."""
        with self._open():
            try:
                self._store.get(fact_id)
            except TruthkeeperError:  # no fact of this memory at all
                return False
        return self.get(fact_id) is not None

    def _own(self, fact_id: str) -> Fact:
        """A fact this memory (view) may write about: its own scope's."""
        with self._open():
            return check_visible(self._store.get(check_label(fact_id, "fact_id")),
                                 self._scope, fact_id, own=True)

    def superseded_by(self, fact_id: str) -> list[Fact]:
        """The facts that explicitly supersede a fact (the reverse of ``supersedes``).

        Parameters
        ----------
        fact_id
            The superseded fact.

        Returns
        -------
        list[Fact]
            The facts whose ``supersedes`` names it, oldest first.

        Raises
        ------
        UnknownFact
            No such fact in this view.

        Examples
        --------
        >>> mem = Memory(); old = mem.add("ana", "city", "Lisbon", source="s")
        >>> new = mem.add("ana", "city", "Porto", source="s", supersedes=old.id)
        >>> [f.value for f in mem.superseded_by(old.id)]
        ['Porto']
        """
        f = self.get(fact_id)
        return [g for g in self.history(f.subject, f.attribute) if g.supersedes == f.id]

    def current(self, subject: str, attribute: str) -> Resolution:
        """The slot's current value.

        Parameters
        ----------
        subject, attribute
            The slot.

        Returns
        -------
        Resolution
            ``status`` resolved (``value``; a set: the tuple of its members), conflict
            (every candidate with its probability, ``best`` and ``best_p``) or unknown;
            the heads and ``why``.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "city", "Lisbon", source="a", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "city", "Porto", source="b", valid_from="2026-01-01")
        >>> r = mem.current("ana", "city"); r.status, sorted(c.value for c in r.candidates)
        ('conflict', ['Lisbon', 'Porto'])
        """
        ck = (self._scope, subject, attribute)
        hit = self._p.answers.cached(ck) if type(subject) is type(attribute) is str else None
        if hit is not None:
            return hit
        s, a = _slot(subject, attribute)
        with self._open():
            return self._p.answers.put(ck, self._p.answers.resolve(self._open, self._scope, s, a))

    def history(self, subject: str, attribute: str) -> list[Fact]:
        """Every fact of the slot, oldest first (valid time).

        Parameters
        ----------
        subject, attribute
            The slot.

        Returns
        -------
        list of Fact
            Each with its ``status``: head, superseded, retracted, ended, future, erased.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "city", "Lisbon", source="s", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "city", "Porto", source="s", valid_from="2026-06-01")
        >>> [(f.value, f.status) for f in mem.history("ana", "city")]
        [('Lisbon', 'superseded'), ('Porto', 'head')]
        """
        s, a = _slot(subject, attribute)
        with self._open():
            r = None if self._scope is None else self._p.answers.heads(self._scope, s, a)
            return view_history(self._store, self._scope, s, a, r)

    def as_of(self, subject: str, attribute: str, *, valid_at: datetime | str | None = None,
              known_at: datetime | str | None = None) -> Resolution:
        """Bitemporal: what was true at ``valid_at``, as the store knew it at ``known_at``.

        Parameters
        ----------
        subject, attribute
            The slot.
        valid_at
            The valid time (default: now, so that ``current`` equals ``as_of`` at the
            memory's clock).
        known_at
            The transaction time (default: everything recorded).

        Returns
        -------
        Resolution
            As ``current`` answers.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "city", "Lisbon", source="s", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "city", "Porto", source="s", valid_from="2026-06-01")
        >>> mem.as_of("ana", "city", valid_at="2026-03-01").value
        'Lisbon'
        """
        s, a = _slot(subject, attribute)
        va = self._p.now() if valid_at is None else to_us(parse_time(valid_at, "valid_at"))
        ka = None if known_at is None else to_us(parse_time(known_at, "known_at"))
        with self._open():
            return self._p.answers.resolve(self._open, self._scope, s, a, known_at=ka,
                                           valid_at=va)

    def conflicts(self) -> list[tuple[str, str]]:
        """The slots whose heads disagree (residual conflicts), sorted.

        Returns
        -------
        list[tuple[str, str]]
            ``(subject, attribute)`` of each slot in conflict in this view.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "city", "Lisbon", source="a", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "city", "Porto", source="b", valid_from="2026-01-01")
        >>> mem.conflicts()
        [('ana', 'city')]
        """
        with self._open():
            return view_conflicts(self._store, self._scope,
                                  lambda s, a: self._p.answers.heads(self._scope, s, a))

    def filter(self, items: Iterable[str | Fact | Candidate], *,
               kappa: Callable[[Any, Any], bool] | None = None,
               query: str | None = None) -> FilterResult:
        """Drop the stale items of a retrieved context (Phi_T under this memory's policy).

        Parameters
        ----------
        items
            Fact ids, Facts, or Candidates (retrieved statements that need not be facts
            of this memory).
        kappa
            ``kappa(newer, older)``: whether two items conflict, for free text, judged on
            the pairs the policy lets dominate (default: their value keys differ).
        query
            The question the context was retrieved for, kept with the audit entry.

        Returns
        -------
        FilterResult
            ``kept`` in order, and ``dropped`` with what dominated each and the rule
            (``"ended"`` with the memory's fact when a Candidate restates a value that
            fact held until an end now past, from before that end, and no head holds
            it; with a ``kappa``, "restates" and "holds" are kappa's: no conflict).

        Raises
        ------
        InvalidFact, UnknownFact
            An item is malformed or names no fact this memory sees.
        TierNotAuthorized
            A Candidate claims a protected tier (it carries no signature).

        Examples
        --------
        >>> res = Memory(policy="temporal").filter([
        ...     Candidate("ana", "city", "Lisbon", "2026-01-01"),
        ...     Candidate("ana", "city", "Porto", "2026-06-01")])
        >>> [c.value for c in res.kept]
        ['Porto']
        """
        if isinstance(items, (str, Fact, Candidate)):
            items = [items]  # one item, not the characters of an id
        with self._open():
            res = filter_items(self._store, self._p.builder, self._p.guard, items, kappa,
                               self._scope, self._events.declarer.schema.coerce,
                               self._p.answers.verdicts)
            if res.dropped:
                self._audit.dropped(query, res.dropped)
        return res

    def rules(self) -> list[str]:
        """The texts of the rules that apply here, in the order they were added: the shared
        ones (added to the unscoped memory) and, in a scope's view, the scope's own; a text
        both layers have is listed once.

        Returns
        -------
        list[str]
            The rules' texts.

        Examples
        --------
        >>> mem = Memory(); _ = mem.add_rule("local(X) :- holds(X, city, lisbon)")
        >>> mem.rules()
        ['local(X) :- holds(X, city, lisbon)']
        """
        with self._open():
            return list(dict.fromkeys(t for _, t, _ in self._reasoner.rules(self._scope)))

    def beliefs(self) -> list[Belief]:
        """Every belief the rules derive from the current facts (kept current
        incrementally). In a scope's view, the shared rules and the scope's own over the
        view's facts (its scope's and the shared layer's); the unscoped memory's: shared
        rules, shared facts.

        Returns
        -------
        list[Belief]
            Each derived atom; ``why(belief.text)`` explains it.

        Raises
        ------
        RuleEvaluationError
            A rule ran out of its time or memory limit.

        Examples
        --------
        >>> mem = Memory(); _ = mem.add_rule("local(X) :- holds(X, city, lisbon)")
        >>> _ = mem.add("ana", "city", "Lisbon", source="s")
        >>> [b.text for b in mem.beliefs()]
        ['local(ana)']
        """
        with self._open():
            return self._reasoner.beliefs(self._scope)

    def why(self, item: str | Fact | Belief) -> Justification:
        """The justification of a fact or of a belief.

        Parameters
        ----------
        item
            A fact id, a Fact, a Belief or a belief's text.

        Returns
        -------
        Justification
            Who said the fact and what it superseded, or the rule and the supporting facts.

        Raises
        ------
        UnknownFact
            Neither a fact this memory sees nor a current belief.

        Examples
        --------
        >>> mem = Memory()
        >>> "said by crm" in str(mem.why(mem.add("ana", "city", "Lisbon", source="crm")))
        True
        """
        visible = True
        if isinstance(item, (str, Fact)):  # another scope's id: refused as an unknown one
            try:
                self._visible_id(item.id if isinstance(item, Fact) else item)
            except UnknownFact:
                visible = False
        with self._open():
            return self._reasoner.why(item, self._scope, fact=visible)

    def what_if(self, *, add: Iterable[Mapping[str, Any] | Fact] = (),
                retract: Iterable[str] = ()) -> WhatIf:
        """Which heads and beliefs would change; nothing is written.

        Parameters
        ----------
        add
            Facts to suppose added (dicts of ``add``'s fields, or Facts).
        retract
            Ids of facts to suppose retracted.

        Returns
        -------
        WhatIf
            ``changed``, and the heads and beliefs that would appear or go.

        Raises
        ------
        InvalidFact, UnknownFact
            A supposed fact is malformed, or an id names no fact of this view.

        Examples
        --------
        >>> mem = Memory()
        >>> f = mem.add("ana", "city", "Lisbon", source="s")
        >>> mem.what_if(retract=[f.id]).changed, len(mem)
        (True, 1)
        """
        now = self._p.now()
        ids = [self.get(check_label(r, "retract[]")).id for r in id_list(retract, "retract")]
        with self._open():  # caught up: declarations and erasures by another writer too
            facts = self._p.hypothetical(add, self._scope, now)
            self._store.need_all()
            return self._reasoner.what_if(facts, ids, self._ledger.last_ra, now, self._scope)

    def reliability(self) -> list[SourceReliability]:
        """Per-source posterior summaries.

        Returns
        -------
        list[SourceReliability]
            For each source this view knows: mean, 90% interval, outcomes seen, tier.

        Examples
        --------
        >>> mem = Memory(); f = mem.add("acme", "total", 4500, source="billing")
        >>> mem.record_outcome(f.id, correct=True)
        >>> [(r.source, r.n) for r in mem.reliability()]
        [('billing', 1)]
        """
        with self._open():
            return self._rel.summaries(self._store.sources(self._scope), self._scope)

    def decide(self, subject: str, attribute: str, *, utility: Utility | None = None) -> Decision:
        """Answer with the value of highest expected utility, or abstain.

        Parameters
        ----------
        subject, attribute
            The slot.
        utility
            Gain of a right answer, loss of a wrong one, value of abstaining
            (default ``Utility()``: 1, -1, 0).

        Returns
        -------
        Decision
            ``action`` answer or abstain, the ``value``, its probability ``p`` and why.
            On a categorical attribute whose confusion was learned, ``p`` is that of the
            value a confirmation would give, a confirmer read as well as the sources of
            the most reliable tenth of the claims until confirmations teach otherwise.

        Examples
        --------
        >>> mem = Memory()
        >>> _ = mem.add("ana", "city", "Lisbon", source="a", valid_from="2026-01-01")
        >>> _ = mem.add("ana", "city", "Porto", source="b", valid_from="2026-01-01")
        >>> mem.decide("ana", "city", utility=Utility(correct=1, wrong=-4)).action
        'abstain'
        """
        u = check_utility(utility)
        r = self.current(subject, attribute)
        with self._open():
            return decide_slot(self._rel.book_for(self._scope), r, u)

    def resolve_context(self, *, question: str, context_value: Any, context_source: str,
                        parametric_value: Any, parametric_confidence: float,
                        context_tier: str = "unverified", alternatives: int | None = None,
                        utility: Utility | None = None) -> Decision:
        """Decide between a retrieved context and the model's own answer.

        Parameters
        ----------
        question
            What was asked (a label for the decision).
        context_value
            The value the retrieved context gives.
        context_source
            Where the context came from (its reliability is learned from outcomes).
        parametric_value
            The model's own answer.
        parametric_confidence
            The model's stated confidence in it, in [0, 1].
        context_tier
            The tier of the context's source.
        alternatives
            How many answers were possible (None: open-ended).
        utility
            The payoffs of answering right, wrong, and abstaining (default: accuracy).

        Returns
        -------
        Decision
            The value to use (or an abstention), with its probability.

        Raises
        ------
        InvalidFact
            A malformed argument (confidence outside [0, 1], unknown tier, ...).
        TierNotAuthorized
            ``context_tier`` is protected, or ``context_source`` is bound to a protected
            tier (a passage carries no signature: it cannot borrow the owner's standing).

        Examples
        --------
        >>> Memory().resolve_context(question="capital?", context_value="Lyon",
        ...     context_source="web", parametric_value="Paris", parametric_confidence=0.9).value
        'Paris'
        """
        check_label(question, "question")
        u = check_utility(utility)
        with self._open():
            src, tier = self._p.passage(context_source, context_tier, self._scope)
            return decide_context(
                self._rel.book_for(self._scope), context_value=context_value, source=src,
                tier=tier, parametric_value=parametric_value, confidence=parametric_confidence, u=u,
                alternatives=alternatives,
                agree=self._store.same_value(context_value, parametric_value))

    def graph(self) -> Any:
        """The memory as a graph of facts and beliefs.

        Returns
        -------
        networkx.DiGraph
            Facts and beliefs as nodes; a ``supersedes`` edge into each superseded fact
            from the fact that makes it stale (the one ``filter`` names; its ``rule``: the
            policy, or ``supersedes``) and one per explicit link; a node
            ``("conflict", subject, attribute)`` for each slot whose heads disagree, with
            a ``conflicts`` edge from each of those heads; ``supports`` edges from facts to
            the beliefs they support. Its size grows with the memory's, not with the
            pairs of facts one dominates (every fact a newer one supersedes: ``why``).

        Examples
        --------
        >>> mem = Memory(); old = mem.add("ana", "city", "Lisbon", source="s")
        >>> new = mem.add("ana", "city", "Porto", source="s", supersedes=old.id)
        >>> mem.graph().has_edge(new.id, old.id)
        True
        """
        with self._open():
            return memory_graph(self._store, self._reasoner, self._scope, self._scope and self)

    def audit(self) -> list[AuditEntry]:
        """The drop log of ``filter`` and the refused writes, oldest first: those made in
        this memory's scope (a view of another scope sees none of them).

        Returns
        -------
        list[AuditEntry]
            The newest entries kept (a bounded log).

        Examples
        --------
        >>> mem = Memory(policy="temporal")
        >>> _ = mem.filter([Candidate("ana", "city", "Lisbon", "2026-01-01"),
        ...                 Candidate("ana", "city", "Porto", "2026-06-01")], query="city?")
        >>> [e.kind for e in mem.audit()]
        ['drop']
        """
        if self._store.lazy is not None:  # opened lazily: journalled entries are read now
            with self._open():
                self._store.lazy.need_audit()
        return self._audit.entries(self._scope)


def _slot(subject: object, attribute: object) -> tuple[str, str]:
    return normalise_key(subject, "subject"), normalise_key(attribute, "attribute")



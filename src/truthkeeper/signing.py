"""Unforgeable tiers: Ed25519 signatures over canonical bytes and a nonce, and the keys'
lifecycle.

The private key stays with the owner's channel (another process, a key file the agent cannot
read); a :class:`~truthkeeper.Memory` holds only public keys. Keys are journalled (added,
revoked, with times): history a key signed stays verifiable after it is rotated out, and a
revoked key signs nothing new.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .errors import InvalidFact, PolicyError, TierNotAuthorized
from .journal.codec import action_bytes, canonical, canonical_bytes
from .validation import check_list
from .values import normalise_key, scoped

__all__ = ["EVER", "Guard", "KeyRing", "Signer", "public_key_hex"]

EVER = -(2**62)
"""A time meaning "at any time" for KeyRing.active: checkpoints stay verifiable after their
key is rotated out."""


def public_key_hex(key: Ed25519PublicKey | bytes | str) -> str:
    """A public key (object, 32 raw bytes or 64 hex chars) as hex."""
    if isinstance(key, Ed25519PublicKey):
        return key.public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
    if isinstance(key, bytes) and len(key) == 32:
        return key.hex()
    if isinstance(key, str) and len(key) == 64:
        try:
            bytes.fromhex(key)
        except ValueError:
            pass
        else:
            return key.lower()
    msg = (f"a key must be an Ed25519PublicKey, 32 raw bytes or 64 hex characters, "
           f"got {type(key).__name__}")
    raise InvalidFact(msg)


class Signer:
    """Signs facts and actions with an Ed25519 private key (the owner's channel).

    Parameters
    ----------
    private_key
        An ``Ed25519PrivateKey`` or its 32 raw bytes (InvalidFact otherwise).

    Attributes
    ----------
    public_key, public_key_hex
        The key a memory trusts (``Memory(trusted_keys=[...])``), and as hex.

    Examples
    --------
    >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    >>> signer = Signer(Ed25519PrivateKey.generate())
    >>> fact = signer.sign({"subject": "acme", "attribute": "invoice_total", "value": 4800,
    ...                     "source": "user:ana", "tier": "human",
    ...                     "valid_from": "2026-11-21T16:00:00Z"})
    >>> sorted(fact["signature"])
    ['key', 'nonce', 'sig']
    """

    def __init__(self, private_key: Ed25519PrivateKey | bytes) -> None:
        if isinstance(private_key, bytes):
            private_key = Ed25519PrivateKey.from_private_bytes(private_key)
        if not isinstance(private_key, Ed25519PrivateKey):
            msg = "private_key must be an Ed25519PrivateKey or its 32 raw bytes"
            raise InvalidFact(msg)
        self._key = private_key
        self.public_key = private_key.public_key()
        self.public_key_hex = public_key_hex(self.public_key)

    def sign(self, fact: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a fact with a ``signature`` block, for a protected tier.

        ``valid_from`` is required (it is signed). The nonce is fresh random bytes, so a
        signature cannot be replayed. A fact for a scope's view is signed with its
        ``"scope"``: the signature binds it to that scope.

        Parameters
        ----------
        fact
            A dict as ``add_many`` takes it.

        Returns
        -------
        dict
            The fact with ``signature``: ``{"key", "nonce", "sig"}``.

        Raises
        ------
        InvalidFact
            The fact has no ``valid_from``.

        Examples
        --------
        >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        >>> signer = Signer(Ed25519PrivateKey.generate())
        >>> signed = signer.sign({"subject": "acme", "attribute": "ceo", "value": "Ana",
        ...     "source": "user:ana", "tier": "human", "valid_from": "2026-01-01"})
        >>> signed["signature"]["key"] == signer.public_key_hex
        True
        """
        if fact.get("valid_from") is None:
            msg = "a signed fact needs an explicit valid_from"
            raise InvalidFact(msg)
        nonce = os.urandom(16).hex()
        sig = self._key.sign(canonical_bytes(fact, nonce)).hex()
        return {**fact, "signature": {"key": self.public_key_hex, "nonce": nonce, "sig": sig}}

    def sign_action(self, action: str, payload: Mapping[str, Any]) -> dict[str, str]:
        """A signature over an action that needs one at a protected tier.

        Parameters
        ----------
        action
            ``"retract"``, ``"end"``, ``"erase"``, ``"outcome"``, ``"confirm"``, ``"key"`` or
            ``"checkpoint"``.
        payload
            What the action is about: ``"retract"`` ``{"id", "reason"}``, ``"outcome"``
            ``{"id", "source", "correct"}``, ``"confirm"`` ``{"subject", "attribute",
            "value"}`` (and ``"scope"`` for a scope's view), ``"key"`` ``{"key",
            "action"}``, ``"checkpoint"`` ``{"seq", "hash"}``.

        Returns
        -------
        dict[str, str]
            ``{"key", "nonce", "sig"}``: pass it as the call's ``signature``.

        Examples
        --------
        >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        >>> from truthkeeper import Memory
        >>> owner = Signer(Ed25519PrivateKey.generate())
        >>> mem = Memory(trusted_keys=[owner.public_key])
        >>> f = mem.add_many([owner.sign({"subject": "acme", "attribute": "ceo", "value": "Ana",
        ...     "source": "user:ana", "tier": "human", "valid_from": "2026-01-01"})])[0]
        >>> mem.retract(f.id, reason="typo", signature=owner.sign_action(
        ...     "retract", {"id": f.id, "reason": "typo"}))
        >>> mem.current("acme", "ceo").status
        'unknown'
        """
        if action == "confirm":
            payload = confirm_payload(payload)
        nonce = os.urandom(16).hex()
        sig = self._key.sign(action_bytes(action, payload, nonce)).hex()
        return {"key": self.public_key_hex, "nonce": nonce, "sig": sig}

    def sign_checkpoint(self, seq: int, head_hash: str) -> dict[str, Any]:
        """A signed checkpoint of the chain head: keep it outside the memory and pass it to
        ``verify(checkpoint=...)``, or journal it with ``Memory.checkpoint``.

        Parameters
        ----------
        seq
            The number of events (``Verification.events``).
        head_hash
            The hash of the last event (``Verification.head_hash``).

        Returns
        -------
        dict
            ``{"seq", "hash", "signature"}``.

        Examples
        --------
        >>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        >>> from truthkeeper import Memory
        >>> owner = Signer(Ed25519PrivateKey.generate())
        >>> mem = Memory(trusted_keys=[owner.public_key]); v = mem.verify()
        >>> mem.verify(checkpoint=owner.sign_checkpoint(v.events, v.head_hash)).ok
        True
        """
        payload = {"seq": seq, "hash": head_hash}
        return {**payload, "signature": self.sign_action("checkpoint", payload)}


def signed_fields(f: Any) -> dict[str, Any]:
    """A fact's fields as its signature covers them."""
    return {**f.to_dict(), "valid_from": f.valid_from, "valid_to": f.valid_to}


class KeyRing:
    """The trusted keys with their lifecycle: the spans of time each was trusted in (added
    at their start, revoked at their end; a key revoked and added again has two)."""

    def __init__(self) -> None:
        self.keys: dict[str, tuple[Ed25519PublicKey, tuple[tuple[int, int | None], ...]]] = {}

    def add(self, key_hex: str, at: int) -> None:
        """A key becomes trusted from ``at`` (microseconds); adding a trusted key again
        changes nothing (what it signed since it was first added stays valid)."""
        pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_hex))
        pub, spans = self.keys.get(key_hex, (pub, ()))
        if not spans or spans[-1][1] is not None:
            self.keys[key_hex] = (pub, (*spans, (at, None)))

    def revoke(self, key_hex: str, at: int) -> None:
        """A key signs nothing from ``at`` on; what it signed before stays valid (revoking
        a revoked key changes nothing)."""
        pub, spans = self.keys[key_hex]
        if spans[-1][1] is None:
            self.keys[key_hex] = (pub, (*spans[:-1], (spans[-1][0], at)))

    def active(self, key_hex: str, at: int | None) -> Ed25519PublicKey | None:
        """The key if it was trusted at ``at`` (None: now; EVER: at any time)."""
        entry = self.keys.get(key_hex.lower())
        if entry is None:
            return None
        pub, spans = entry
        if at == EVER:
            return pub
        if at is None:
            return pub if spans[-1][1] is None else None
        return pub if any(added <= at and (revoked is None or at < revoked)
                          for added, revoked in spans) else None


def _check(ring: KeyRing, signature: object, message: Callable[[str], bytes],
           at: int | None) -> str | None:
    if not isinstance(signature, Mapping):
        return "signature must be a dict with key, nonce and sig"
    key, nonce, sig = signature.get("key"), signature.get("nonce"), signature.get("sig")
    if not (isinstance(key, str) and isinstance(nonce, str) and isinstance(sig, str)):
        return "signature must carry key, nonce and sig as strings"
    pub = ring.active(key, at)
    if pub is None:
        return f"key {key[:16]}... is not a trusted key of this memory (or was revoked)"
    try:
        pub.verify(bytes.fromhex(sig), message(nonce))
    except (InvalidSignature, ValueError):
        return "signature does not match"
    return None


class Guard:
    """The protected-tier guard: which tiers need a signature, and the key ring.

    A write at or above the lowest protected tier, a retraction of such a fact and an
    outcome about such a source must carry a valid signature by a key trusted at the time;
    the store refuses a nonce it has seen (a replay).
    """

    def __init__(self, trusted_keys: Sequence[Any]) -> None:
        self.guarded: frozenset[str] = frozenset()
        """The tiers whose writes need a signature: the store's answer (Prolog decides,
        ``store:guarded_tier/2``), set when the memory's store exists."""
        try:
            self.offered = [public_key_hex(k) for k in
                            check_list(trusted_keys, "trusted_keys", "public keys")]
        except InvalidFact as exc:
            raise PolicyError(str(exc)) from None
        self.ring = KeyRing()

    def fact_problem(self, fields: Mapping[str, Any], at: int | None,
                     ring: KeyRing | None = None) -> str | None:
        """Why a fact's fields (a journal body or a Fact's) may not be written at their
        tier at time ``at``, or None."""
        if fields.get("tier") not in self.guarded:
            return None
        sig = fields.get("signature")
        if sig is None:
            return "it carries no signature"
        confirmed = confirmation_payload(fields)
        if confirmed is not None:  # a signed confirmation: the owner signed confirm(...)
            return _check(ring or self.ring, sig,
                          lambda n: action_bytes("confirm", confirmed, n), at)
        return _check(ring or self.ring, sig, lambda n: canonical_bytes(fields, n), at)

    def check_fact(self, fields: Mapping[str, Any], at: int | None = None) -> None:
        """Raise TierNotAuthorized when a fact claims a protected tier without a valid
        signature."""
        problem = self.fact_problem(fields, at)
        if problem == "signature does not match" and fields.get("scope") is not None:
            problem += (f" (a fact written in scope {fields['scope']!r}'s view is signed "
                        "with its scope: sign the dict with \"scope\")")
        if problem is not None:
            msg = (f"a write at tier {fields.get('tier')!r} (protected: "
                   f"{', '.join(sorted(self.guarded))}) must be signed by a trusted key; "
                   f"refused: {problem}")
            raise TierNotAuthorized(msg)

    def check_facts(self, facts: Iterable[Any], key_news: Callable[[], bool]) -> None:
        """The signature of each fact at a protected tier, against the keys trusted now. A
        key this memory does not trust may be one another writer added since it last
        caught up: ``key_news()`` catches up and says whether the keys changed, and the
        fact is checked once more."""
        for f in facts:
            if f.tier in self.guarded:
                try:
                    self.check_fact(signed_fields(f))
                except TierNotAuthorized:
                    if self.key_active(f.signature) or not key_news():
                        raise
                    self.check_fact(signed_fields(f))

    def check_keys(self, facts: Iterable[Any]) -> None:
        """Once a write has caught up with other writers: the key of each signed fact at a
        protected tier is still trusted (another writer may have revoked it since its
        signature was checked; appended, the fact would make every later replay refuse
        the journal). TierNotAuthorized."""
        for f in facts:
            if f.tier in self.guarded and not self.key_active(f.signature):
                self.check_fact(signed_fields(f))

    def key_active(self, signature: object) -> bool:
        """Whether ``signature`` names a key trusted now (its bytes are not checked)."""
        key = signature.get("key") if isinstance(signature, Mapping) else None
        return isinstance(key, str) and self.ring.active(key, None) is not None

    def check_claim(self, tier: str, what: str) -> str:
        """``tier``, or TierNotAuthorized when an unsigned claim (a retrieved candidate, a
        passage) names a protected tier: what carries no signature never has the owner's
        authority, in a decision as in a write."""
        if tier in self.guarded:
            msg = (f"{what} {tier!r} is protected ({', '.join(sorted(self.guarded))}): a "
                   "claim without a signature cannot hold it; give an unprotected tier (a "
                   "signed fact is weighed as stored, by its id)")
            raise TierNotAuthorized(msg)
        return tier

    def check_action(self, action: str, payload: Mapping[str, Any], signature: object,
                     at: int | None = None, ring: KeyRing | None = None) -> None:
        """Raise TierNotAuthorized unless ``signature`` signs ``action`` over ``payload``."""
        problem = "it carries no signature" if signature is None else _check(
            ring or self.ring, signature, lambda n: action_bytes(action, payload, n), at)
        if problem is not None:
            msg = (f"{action} {dict(payload)} concerns a protected tier "
                   f"({', '.join(sorted(self.guarded))}) and must be signed by a trusted "
                   f"key; refused: {problem}")
            raise TierNotAuthorized(msg)

    def verifier(self) -> Callable[[str, Mapping[str, Any], int], str | None]:
        """A checker of journal events in chain order: signatures of facts and key events
        against the keys trusted at each event's time, and replayed nonces."""
        ring, nonces = KeyRing(), dict[object, str]()

        def check(kind: str, body: Mapping[str, Any], at: int) -> str | None:
            sig = body.get("signature")
            if isinstance(sig, Mapping):
                owner = nonce_owner(kind, body)
                seen = nonces.get(sig.get("nonce"))
                if seen is not None and (seen != owner or owner is None):
                    return "a replayed signature nonce"
                nonces[sig.get("nonce")] = owner or ""
            if kind == "key":
                return _key_event(ring, body, at, self)
            if kind != "fact" or "$erased" in body:
                return None  # an erased placeholder: Applier.verify pairs it with its erasure
            try:
                tier = normalise_key(body.get("tier"), "tier")
            except InvalidFact as exc:
                return str(exc)
            problem = self.fact_problem({**body, "tier": tier}, at, ring)
            if problem == "it carries no signature":
                return f"a {tier}-tier fact without a signature"
            return problem

        return check


def confirm_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What ``confirm`` checks a signature against, from what the owner names: the slot's
    keys (``"Acme "`` is ``"acme"``), in a scope's view (``"scope"``) the scope's own.

    >>> confirm_payload({"subject": "Acme ", "attribute": "CEO", "value": "Ana"})
    {'subject': 'acme', 'attribute': 'ceo', 'value': 'Ana'}
    """
    from .validation import check_scope

    return {"subject": scoped(check_scope(payload.get("scope")),
                              normalise_key(payload.get("subject"), "subject")),
            "attribute": normalise_key(payload.get("attribute"), "attribute"),
            "value": payload.get("value")}


def confirmation_payload(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the owner signed for a confirmation fact (``Memory.confirm`` with a signature:
    ``sign_action("confirm", {"subject", "attribute", "value"})`` over the slot's keys),
    or None for any other fact."""
    meta = fields.get("meta") or {}
    if not (isinstance(meta, Mapping) and meta.get("confirmation") is True):
        return None
    try:
        subject = scoped(fields.get("scope"), normalise_key(fields.get("subject"), "subject"))
        attribute = normalise_key(fields.get("attribute"), "attribute")
    except InvalidFact:
        return None
    return {"subject": subject, "attribute": attribute, "value": fields.get("value")}


def nonce_owner(kind: str, body: Mapping[str, Any]) -> str | None:
    """Who a signature nonce belongs to: one signed confirmation covers its confirmation
    fact and the outcomes of the slot's heads, which name that fact (one owner per
    confirmation, so confirming again with the same signature is a replay); any other use
    is its own (None: a second use is a replay)."""
    if kind == "fact":
        return None if confirmation_payload(body) is None else f"confirm:{body.get('id')}"
    signed = body.get("signed") or {}
    if signed.get("action") != "confirm":
        return None
    if isinstance(body.get("confirmation"), str):  # the confirmation fact of its write
        return f"confirm:{body['confirmation']}"
    return "confirm:" + canonical(signed.get("payload"))  # format 2: no such fact


def _key_event(ring: KeyRing, body: Mapping[str, Any], at: int, guard: Guard) -> str | None:
    """Apply a key event to ``ring``; why it is invalid, or None."""
    key, action, also = body.get("key"), body.get("action"), body.get("also", [])
    if not isinstance(key, str) or len(key) != 64 or action not in ("added", "revoked"):
        return "a key event needs a 64-hex key and action added|revoked"
    if also and not (action == "added" and not ring.keys and isinstance(also, list)
                     and all(isinstance(k, str) and len(k) == 64 for k in also)):
        return "only a journal's first key event adds several keys (also: 64-hex keys)"
    if action == "added" and not ring.keys:
        pass  # the first keys of a journal, in one event (nothing could sign them)
    else:
        try:
            guard.check_action("key", {"key": key, "action": action}, body.get("signature"),
                               at, ring)
        except TierNotAuthorized as exc:
            return str(exc)
    if action == "added":
        try:
            for k in [key, *also]:
                ring.add(k, at)
        except ValueError:
            return "a key event's keys must be Ed25519 public keys in hex"
    elif key in ring.keys:
        ring.revoke(key, at)
    else:
        return f"revokes key {key[:16]}..., which was never added"
    return None


def apply_key_event(ring: KeyRing, body: Mapping[str, Any], at: int, guard: Guard) -> None:
    """Apply a journalled key event (replay); raise TierNotAuthorized when invalid."""
    problem = _key_event(ring, body, at, guard)
    if problem is not None:
        raise TierNotAuthorized(problem)

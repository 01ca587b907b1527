"""Unforgeable tiers: Ed25519 signatures over a fact's canonical bytes and a nonce.

The private key stays with the owner's channel (another process, a key file the agent cannot
read); a :class:`~truthkeeper.Memory` holds only public keys (``trusted_keys``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .errors import InvalidFact, PolicyError, TierNotAuthorized
from .journal.codec import canonical_bytes
from .values import Fact, normalise_key

__all__ = ["Guard", "Signer", "public_key_hex", "verify_signature"]

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
    msg = (f"trusted key must be an Ed25519PublicKey, 32 raw bytes or 64 hex characters, "
           f"got {type(key).__name__}")
    raise InvalidFact(msg)


def verify_signature(fact: Mapping[str, Any], signature: Mapping[str, Any],
                     trusted: Mapping[str, Ed25519PublicKey]) -> str | None:
    """None when ``signature`` is a valid signature of ``fact`` by a trusted key, else why not."""
    if not isinstance(signature, Mapping):
        return "signature must be a dict with key, nonce and sig"
    key, nonce, sig = signature.get("key"), signature.get("nonce"), signature.get("sig")
    if not (isinstance(key, str) and isinstance(nonce, str) and isinstance(sig, str)):
        return "signature must carry key, nonce and sig as strings"
    pub = trusted.get(key.lower())
    if pub is None:
        return f"key {key[:16]}... is not a trusted key of this memory"
    try:
        pub.verify(bytes.fromhex(sig), canonical_bytes(fact, nonce))
    except (InvalidSignature, ValueError):
        return "signature does not match the fact"
    return None


class Signer:
    """Signs facts for a protected tier with an Ed25519 private key (the owner's channel).

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
        """A copy of ``fact`` (a dict as ``add_many`` takes it) with a ``signature`` block.

        ``valid_from`` is required (it is signed). The nonce is fresh random bytes, so a
        signature cannot be replayed.
        """
        if fact.get("valid_from") is None:
            msg = "a signed fact needs an explicit valid_from"
            raise InvalidFact(msg)
        nonce = os.urandom(16).hex()
        sig = self._key.sign(canonical_bytes(fact, nonce)).hex()
        return {**fact, "signature": {"key": self.public_key_hex, "nonce": nonce, "sig": sig}}


class Guard:
    """The protected-tier guard: which tiers need a signature and whose keys are trusted.

    A write at or above the lowest protected tier must carry a valid signature by a trusted
    key; the store refuses a nonce it has seen (a replay).
    """

    def __init__(self, tiers: Sequence[str], protected: Sequence[str],
                 trusted_keys: Sequence[Any]) -> None:
        lowest = max((list(tiers).index(t) for t in protected), default=-1)
        self.guarded = frozenset(tiers[: lowest + 1])
        try:
            hexes = [public_key_hex(k) for k in trusted_keys]
        except InvalidFact as exc:
            raise PolicyError(str(exc)) from None
        self._trusted = {h: Ed25519PublicKey.from_public_bytes(bytes.fromhex(h)) for h in hexes}

    def problem(self, fields: Mapping[str, Any]) -> str | None:
        """Why a fact's fields (a journal body or ``Fact.to_dict()``) may not be written at
        their tier, or None."""
        tier = fields.get("tier")
        if tier not in self.guarded:
            return None
        sig = fields.get("signature")
        if sig is None:
            return "it carries no signature"
        return verify_signature(fields, sig, self._trusted)

    def check(self, fact: Fact) -> None:
        """Raise TierNotAuthorized when ``fact`` claims a protected tier unsigned."""
        if fact.tier not in self.guarded:
            return
        problem = self.problem({**fact.to_dict(), "valid_from": fact.valid_from,
                                "valid_to": fact.valid_to})
        if problem is not None:
            msg = (f"a write at tier {fact.tier!r} (protected: {', '.join(sorted(self.guarded))})"
                   f" must be signed by a trusted key; refused: {problem}")
            raise TierNotAuthorized(msg)

    def verifier(self) -> Callable[[Mapping[str, Any]], str | None]:
        """A checker of journal fact bodies in chain order (signatures and replays)."""
        nonces: set[str] = set()

        def check(body: Mapping[str, Any]) -> str | None:
            try:
                tier = normalise_key(body.get("tier"), "tier")
            except InvalidFact as exc:
                return str(exc)
            if tier not in self.guarded:
                return None
            problem = self.problem({**body, "tier": tier})
            if problem is None:
                nonce = body["signature"]["nonce"]
                if nonce in nonces:
                    return "a replayed signature nonce"
                nonces.add(nonce)
            elif problem == "it carries no signature":
                return f"a {tier}-tier fact without a signature"
            return problem

        return check

"""Custom supersession policies: Prolog text from the user, parsed, never consulted.

A policy is one or more clauses ``dominates(F, G) :- Body`` over fact records. The body may
read ``value(F, V)``, ``valid_from(F, T)``, ``recorded_at(F, T)``, ``source(F, S)``,
``rank(F, R)`` (larger is more authoritative), ``meta(F, Key, V)`` for the meta keys the
policy declares, ``differs(F, G)``, ``same_source(F, G)`` and the shipped tie rule
``newer(F, G)``, plus comparisons and arithmetic. ``dominates`` is only ever asked about two
facts whose values differ (kappa); same-value restatements corroborate whatever the policy
says. The three shipped policies are written in the same language (``prolog/policies.pl``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from ..errors import PolicyError, TruthkeeperError
from ..values import check_label, check_nesting
from . import bridge

__all__ = ["Policy"]


@dataclass(frozen=True, slots=True)
class Policy:
    """A custom policy: its name, its Prolog text and the meta keys it reads. Made by
    :meth:`from_prolog`, which checks and registers it.

    Attributes
    ----------
    name
        What ``Memory(policy=...)`` takes; a journal keeps the text under it.
    text
        The clauses ``dominates(F, G) :- Body`` in the policy language.
    meta_keys
        The fact ``meta`` keys the policy reads (keyword).

    Examples
    --------
    >>> erratum = Policy.from_prolog("erratum_wins", '''
    ...     dominates(F, G) :- meta(F, erratum, @(true)), \\\\+ meta(G, erratum, @(true)).
    ...     dominates(F, G) :- \\\\+ meta(G, erratum, @(true)), newer(F, G).
    ... ''', meta_keys=["erratum"])
    >>> from truthkeeper import Memory
    >>> mem = Memory(policy=erratum)
    >>> _ = mem.add("acme", "total", 4500, source="billing", valid_from="2026-11-02",
    ...             meta={"erratum": True})
    >>> _ = mem.add("acme", "total", 4700, source="crm", valid_from="2026-11-05")
    >>> mem.current("acme", "total").value
    4500
    """

    name: str
    text: str
    _: KW_ONLY
    meta_keys: tuple[str, ...] = ()

    @classmethod
    def from_prolog(cls, name: str, text: str, *, meta_keys: Sequence[str] = ()) -> Policy:
        """Parse, check and register a policy in the Prolog registry.

        Parameters
        ----------
        name
            The policy's name (what ``Memory(policy=...)`` takes); not a shipped one's.
        text
            One or more clauses ``dominates(F, G) :- Body`` in the policy language (README:
            custom policies).
        meta_keys
            The fact ``meta`` keys the policy reads with ``meta(F, Key, Value)``.

        Returns
        -------
        Policy
            The registered policy.

        Raises
        ------
        PolicyError
            The text does not parse, calls what a policy may not call, or the name is taken
            by another text.

        Examples
        --------
        >>> p = Policy.from_prolog("newest_first", "dominates(F, G) :- newer(F, G).")
        >>> from truthkeeper import Memory
        >>> Memory(policy=p).policy
        'newest_first'
        """
        try:
            name = check_label(name, "policy name")
            if not isinstance(text, str) or not text.strip() or len(text) > 65536:
                msg = "policy text must be a non-empty str of at most 65536 characters"
                raise PolicyError(msg)
            check_nesting(text, "policy text")
            keys = tuple(check_label(k, "meta_keys[]") for k in meta_keys)
        except TruthkeeperError as exc:
            raise PolicyError(str(exc)) from None
        policy = cls(name, text, meta_keys=keys)
        policy.register()
        return policy

    def register(self) -> None:
        """Register this policy in the Prolog registry (idempotent for the same text).

        Raises
        ------
        PolicyError
            The registry refuses it (another text under this name).

        Examples
        --------
        >>> p = Policy.from_prolog("newest_again", "dominates(F, G) :- newer(F, G).")
        >>> p.register()  # again, with the same text: nothing changes
        """
        try:
            bridge.ask("tk_register_policy(N, T, K)",
                       {"N": self.name, "T": self.text, "K": list(self.meta_keys)})
        except PolicyError:
            raise
        except TruthkeeperError as exc:
            msg = f"policy {self.name!r} refused: {exc}"
            raise PolicyError(msg) from None

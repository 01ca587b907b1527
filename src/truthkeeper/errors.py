"""The truthkeeper error family.

Every error the library raises on purpose is a :class:`TruthkeeperError`. Bad input raises
before anything changes, so catching the error leaves the memory as it was.
"""

from __future__ import annotations

__all__ = [
    "CrossSlotSupersession",
    "InvalidFact",
    "JournalCorrupt",
    "JournalError",
    "PolicyError",
    "PrologBridgeError",
    "RuleEvaluationError",
    "RuleWarning",
    "ScopeError",
    "SupersessionCycle",
    "SupersessionError",
    "TierInversion",
    "TierNotAuthorized",
    "TruthkeeperError",
    "UnknownFact",
    "UnknownRule",
    "UnsafeRule",
]


class TruthkeeperError(Exception):
    """Base class of every error raised by truthkeeper."""

    item: int | None = None
    """The position of the input item the error is about, where a call takes many
    (``filter``'s items: the document adapters leave that one out and ask again), or None."""


class InvalidFact(TruthkeeperError, ValueError):
    """An argument (key, value, time, tier, source, ...) is of the wrong type or out of range."""


class UnknownFact(TruthkeeperError, KeyError):
    """A fact id (or a belief's text) that the memory does not hold."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownRule(UnknownFact):
    """A rule the memory (or the imported file) does not hold."""


class ScopeError(TruthkeeperError, PermissionError):
    """A scope's view (or a server bound to a scope) reaching outside its scope: writing to
    the shared layer or to another scope, erasing another scope, or an act that is the
    memory owner's (declare, export, import, fitting or learning reliability)."""


class SupersessionError(TruthkeeperError, ValueError):
    """An explicit ``supersedes`` link the policy forbids (cross-slot, lower over higher tier)."""


class SupersessionCycle(SupersessionError):
    """An explicit ``supersedes`` link that would close a cycle."""


class CrossSlotSupersession(SupersessionError):
    """An explicit ``supersedes`` link to a fact of another slot."""


class TierInversion(SupersessionError):
    """An explicit ``supersedes`` link from a lower tier over a higher one."""


class PolicyError(TruthkeeperError, ValueError):
    """An unknown supersession policy or an invalid tier configuration."""


class UnsafeRule(TruthkeeperError, ValueError):
    """A rule given to ``add_rule`` that does not parse or calls something rules may not call."""


class RuleEvaluationError(UnsafeRule):
    """A rule raised, or exceeded its inference budget, while it was evaluated; the memory
    stays responsive and ``remove_rule`` takes the rule out."""


class RuleWarning(UserWarning):
    """A rule was added whose body calls a predicate no rule defines (``holdz(...)`` for
    ``holds(...)``, most often): it derives nothing through that call until a rule for
    it is added. A warning, not an error: rules may be added in any order."""


class TierNotAuthorized(TruthkeeperError, PermissionError):
    """A write at a protected tier without a valid, fresh signature."""


class JournalError(TruthkeeperError, OSError):
    """The journal could not be read or written."""


class JournalCorrupt(JournalError):
    """The journal's hash chain or a signature does not verify."""


class PrologBridgeError(TruthkeeperError, RuntimeError):
    """An error raised inside the Prolog layer, with the Prolog error term kept in ``term``."""

    def __init__(self, message: str, term: object = None) -> None:
        super().__init__(message)
        self.term = term


def brief(value: object, limit: int = 80) -> str:
    """``repr(value)`` for an error message, never failing and never long: an integer too
    long to print (Python refuses past 4,300 digits) is named by its size, and a repr
    past ``limit`` characters is cut."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"a {type(value).__name__} that cannot be shown"
    return text if len(text) <= limit else f"{text[:limit - 3]}..."

"""truthkeeper: decide which of an agent's conflicting memories is current and true.

Facts are keyed by slot ``(subject, attribute)``; supersession policies (Prolog rules)
decide which facts are chain heads; ``filter`` drops stale items from a retrieved context;
``why`` explains; nothing is ever deleted.
"""

from .errors import (
    CrossSlotSupersession,
    InvalidFact,
    JournalCorrupt,
    JournalError,
    PolicyError,
    PrologBridgeError,
    RuleEvaluationError,
    RuleWarning,
    ScopeError,
    SupersessionCycle,
    SupersessionError,
    TierInversion,
    TierNotAuthorized,
    TruthkeeperError,
    UnknownFact,
    UnknownRule,
    UnsafeRule,
)
from .logic.policy import Policy
from .logic.store import policies
from .memory import Memory
from .reliability.similarity import Similarity
from .results import (
    Alternative,
    AuditEntry,
    Decision,
    Dispute,
    Drop,
    FilterResult,
    HeadChange,
    SourceReliability,
    Utility,
    Verification,
    WhatIf,
)
from .signing import Signer
from .values import (
    Belief,
    Candidate,
    Fact,
    Justification,
    Resolution,
    ValueSupport,
)

__all__ = [
    "Alternative",
    "AuditEntry",
    "Belief",
    "Candidate",
    "CrossSlotSupersession",
    "Decision",
    "Dispute",
    "Drop",
    "Fact",
    "FilterResult",
    "HeadChange",
    "InvalidFact",
    "JournalCorrupt",
    "JournalError",
    "Justification",
    "Memory",
    "Policy",
    "PolicyError",
    "PrologBridgeError",
    "Resolution",
    "RuleEvaluationError",
    "RuleWarning",
    "ScopeError",
    "Signer",
    "Similarity",
    "SourceReliability",
    "SupersessionCycle",
    "SupersessionError",
    "TierInversion",
    "TierNotAuthorized",
    "TruthkeeperError",
    "UnknownFact",
    "UnknownRule",
    "UnsafeRule",
    "Utility",
    "ValueSupport",
    "Verification",
    "WhatIf",
    "policies",
]

__version__ = "0.3.0"

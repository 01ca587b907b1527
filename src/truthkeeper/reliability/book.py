"""Per-source reliability kept current between refits by conjugate Beta updates.

For a source s of tier t the posterior is Beta(mu_t k_t + successes, (1 - mu_t) k_t + failures)
given the tier hyperparameters (mu_t, k_t): a new source starts from its tier. A refit of the
hierarchical model (NUTS or SVI, :mod:`.models`) re-estimates (mu_t, k_t) from every source's
outcomes; between refits each outcome costs one addition. With ``discount`` < 1 old evidence
decays geometrically (for drifting sources).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_TIER_MEANS", "ReliabilityBook", "SourceState", "false_domain"]

DEFAULT_TIER_MEANS = (0.95, 0.85, 0.65, 0.5)
"""Prior mean reliability of the default tiers, most authoritative first (ordered)."""
DEFAULT_CONCENTRATION = 10.0
MAX_STATED = 5000


def false_domain(n_choices: Any, false_values: Any) -> Any:
    """Per slot, how many false values a wrong claim picks from: max(m - 1, 1, N) for a slot
    with m claimed values (an array for an array of m or of N, a float for one of each)."""
    import numpy as np

    m = np.asarray(n_choices, dtype=float)
    return np.maximum(np.maximum(m - 1.0, 1.0), np.asarray(false_values, dtype=float))


@dataclass
class SourceState:
    tier: str
    successes: float = 0.0
    failures: float = 0.0
    n: int = 0


@dataclass
class ReliabilityBook:
    """Conjugate Beta state per source under tier-level priors."""

    tiers: tuple[str, ...]
    discount: float = 1.0
    tier_prior: dict[str, tuple[float, float]] = field(default_factory=dict)
    sources: dict[str, SourceState] = field(default_factory=dict)
    source_prior: dict[str, float] = field(default_factory=dict)
    """Per-source prior means learned from agreement (``learn_from_agreement``)."""
    stated: dict[str, list[tuple[float, bool]]] = field(default_factory=dict)
    """Per source, (stated confidence, correct) of the outcomes that carried a confidence
    (the model's own answers), the last ``MAX_STATED``: its confidence is calibrated on
    them."""
    stated_fit: dict[str, tuple[int, tuple[float, float]]] = field(default_factory=dict)
    """Per source, the calibration map of its stated confidences and how many pairs it was
    fitted on (refitted when more arrive)."""
    dependence: dict[tuple[str, str], float] = field(default_factory=dict)
    """P(two sources copy each other), by sorted pair (``learn_from_agreement(dependence=
    True)``); their claims of one value count less in a conflict."""
    correlation: float = 0.0
    """The intra-item correlation rho of claims, learned from agreement: the n claims of a
    conflict count as n / (1 + (n - 1) rho) independent ones
    (:func:`truthkeeper.reliability.ds.design_weights`); 0 until learned."""
    false_values: float = 1.0
    """How many false values a wrong claim picks from, learned from agreement: a slot with m
    claimed values has max(m - 1, 1, this) (:func:`false_domain`),
    and its truth may be one of the values nobody claimed; 1 until learned (the false values
    are the other claimed ones)."""

    open_values: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Per attribute, (correlation, false_values) learned from its own claims when the
    memory holds several attributes; an attribute not here has the memory-wide ones."""

    categories: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """The categorical attributes: attribute -> its categories' value keys
    (:mod:`.categorical`)."""
    category_values: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """The same categories as declared (what ``decide`` answers)."""
    confusion: dict[str, Any] = field(default_factory=dict)
    """Per categorical attribute, the :class:`.categorical.Confusion` learned from
    agreement; used while its categories are the declared ones."""
    last_categorical: Any = field(default=None, repr=False, compare=False)
    """The last categorical slot's posterior with what it was computed from
    (:func:`.conflict.category_result`): ``decide`` scores the slot's candidates and then
    every category, from the same draws."""

    def __post_init__(self) -> None:
        if not self.tier_prior:
            n = len(self.tiers)
            for i, t in enumerate(self.tiers):
                if n == len(DEFAULT_TIER_MEANS):
                    mu = DEFAULT_TIER_MEANS[i]
                else:  # evenly spaced, ordered
                    mu = 0.95 - 0.45 * (i / max(n - 1, 1))
                self.tier_prior[t] = (mu, DEFAULT_CONCENTRATION)

    def correlation_of(self, attribute: str | None) -> float:
        """The correlation of claims about one slot of ``attribute``."""
        return self.open_values.get(attribute or "", (self.correlation, 0.0))[0]

    def false_values_of(self, attribute: str | None) -> float:
        """The number of false values a wrong claim about ``attribute`` picks from."""
        return self.open_values.get(attribute or "", (0.0, self.false_values))[1]

    def record_stated(self, source: str, confidence: float, correct: bool) -> None:
        """Keep a stated confidence with its outcome (the last ``MAX_STATED``)."""
        pairs = self.stated.setdefault(source, [])
        pairs.append((float(confidence), bool(correct)))
        if len(pairs) > MAX_STATED:
            del pairs[: len(pairs) - MAX_STATED]

    def record(self, source: str, tier: str, correct: bool) -> None:
        st = self.sources.get(source)
        if st is None:
            st = self.sources[source] = SourceState(tier)
        if self.discount != 1.0:
            st.successes *= self.discount
            st.failures *= self.discount
        if correct:
            st.successes += 1.0
        else:
            st.failures += 1.0
        st.n += 1

    def params(self, source: str, tier: str | None = None) -> tuple[float, float]:
        """The Beta(a, b) posterior of a source: its prior (the tier's, or the mean learned
        from agreement with the tier's strength k) plus its outcomes.

        A learned prior keeps both parameters at least 1: Beta(9.97, 0.03) (a mean of .997
        at k = 10) has a pole at 1, and half of its draws say the source is never wrong, so
        one such source outvoted any number of others in a conflict. Agreement alone thus
        takes a source to at most k / (k + 1) (.909 at k = 10); outcomes take it further.
        """
        st = self.sources.get(source)
        t = st.tier if st is not None else (tier or self.tiers[-1])
        mu, k = self.tier_prior[t]
        if source in self.source_prior:
            learned = self.source_prior[source]
            a, b = max(learned * k, 1.0), max((1.0 - learned) * k, 1.0)
        else:
            a, b = mu * k, (1.0 - mu) * k
        if st is not None:
            a += st.successes
            b += st.failures
        return a, b

    def mean(self, source: str, tier: str | None = None) -> float:
        a, b = self.params(source, tier)
        return a / (a + b)

    def interval(self, source: str, tier: str | None = None,
                 mass: float = 0.9) -> tuple[float, float]:
        from scipy.stats import beta

        a, b = self.params(source, tier)
        lo = (1.0 - mass) / 2.0
        return float(beta.ppf(lo, a, b)), float(beta.ppf(1.0 - lo, a, b))

    def set_tier_prior(self, prior: dict[str, tuple[float, float]]) -> None:
        for t, (mu, k) in prior.items():
            if t in self.tier_prior and 0.0 < mu < 1.0 and k > 0.0 and math.isfinite(k):
                self.tier_prior[t] = (float(mu), float(k))

    def fit_data(self) -> dict[str, Any]:
        """Arrays for the hierarchical model: tier index, trials, successes per source."""
        import numpy as np

        names = sorted(self.sources)
        tier = np.array([self.tiers.index(self.sources[s].tier) for s in names], dtype=np.int32)
        succ = np.array([round(self.sources[s].successes) for s in names], dtype=np.int32)
        trials = np.array([round(self.sources[s].successes + self.sources[s].failures)
                           for s in names], dtype=np.int32)
        return {"names": names, "tier": tier, "trials": trials, "successes": succ}

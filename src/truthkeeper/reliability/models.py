"""NumPyro models: pure functions of their data (``obs=None`` turns them into prediction).

Imported lazily: ``import truthkeeper`` never imports JAX.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.nn import sigmoid

__all__ = ["fixed_prior_reliability", "hierarchical_reliability"]


def _tier_priors(n_tiers: int) -> tuple[Any, Any]:
    """The tier hyperparameters: ordered means (the logit of each tier's mean is the next
    lower tier's plus a positive step) and concentrations."""
    base = numpyro.sample("base", dist.Normal(0.0, 1.5))  # logit mean of the lowest tier
    if n_tiers > 1:
        steps = numpyro.sample("steps", dist.HalfNormal(1.0).expand([n_tiers - 1]))
        above = jnp.concatenate([jnp.cumsum(steps[::-1])[::-1], jnp.zeros(1)])
    else:
        above = jnp.zeros(1)
    mu = numpyro.deterministic("tier_mean", sigmoid(base + above))
    k = numpyro.sample("tier_concentration", dist.LogNormal(jnp.log(10.0), 1.0).expand([n_tiers]))
    return mu, k


def hierarchical_reliability(tier: Any, trials: Any, successes: Any = None, *,
                             n_tiers: int) -> None:
    """Per-source reliability theta_s ~ Beta(mu_t k_t, (1 - mu_t) k_t) for the source's tier
    t (index 0 = most authoritative). Tier means are ordered: the logit of each tier's mean is
    the next lower tier's plus a positive step. Binomial likelihood on per-source sufficient
    statistics (successes out of trials)."""
    mu, k = _tier_priors(n_tiers)
    with numpyro.plate("sources", tier.shape[0]):
        theta = numpyro.sample("theta", dist.Beta(mu[tier] * k[tier], (1.0 - mu[tier]) * k[tier]))
        numpyro.sample("obs", dist.Binomial(trials, probs=theta), obs=successes)


def fixed_prior_reliability(a: float, b: float, trials: Any, successes: Any = None) -> None:
    """theta_s ~ Beta(a, b), successes ~ Binomial(trials, theta_s): the conjugate reference."""
    with numpyro.plate("sources", trials.shape[0]):
        theta = numpyro.sample("theta", dist.Beta(a, b))
        numpyro.sample("obs", dist.Binomial(trials, probs=theta), obs=successes)

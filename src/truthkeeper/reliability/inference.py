"""Inference apart from the models: NUTS and SVI runners returning posterior samples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["run_nuts", "run_svi"]


def run_nuts(model: Callable[..., None], *, rng_key: Any, num_warmup: int = 500,
             num_samples: int = 500, **data: Any) -> dict[str, Any]:
    """Posterior samples of every site (NUTS, one chain)."""
    from numpyro.infer import MCMC, NUTS

    mcmc = MCMC(NUTS(model), num_warmup=num_warmup, num_samples=num_samples,
                progress_bar=False)
    mcmc.run(rng_key, **data)
    return dict(mcmc.get_samples())


def run_svi(model: Callable[..., None], *, rng_key: Any, steps: int = 2000,
            num_samples: int = 500, learning_rate: float = 0.02, **data: Any) -> dict[str, Any]:
    """Posterior samples from a mean-field normal guide fitted by SVI (for many sources)."""
    import jax
    from numpyro.infer import SVI, Predictive, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal
    from numpyro.optim import Adam

    guide = AutoNormal(model)
    k1, k2 = jax.random.split(rng_key)
    svi = SVI(model, guide, Adam(learning_rate), Trace_ELBO())
    result = svi.run(k1, steps, progress_bar=False, **data)
    pred = Predictive(guide, params=result.params, num_samples=num_samples)
    samples = dict(pred(k2, **data))
    model_sites = Predictive(model, posterior_samples=samples, return_sites=None)
    full = model_sites(k2, **{k: v for k, v in data.items() if k != "successes"})
    samples.update({k: v for k, v in full.items() if k not in samples and k != "obs"})
    return samples

"""Inference apart from the models: NUTS and SVI runners returning posterior samples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["fit_tiers_svi", "run_nuts", "run_svi"]


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


def fit_tiers_svi(tier: Any, trials: Any, successes: Any, *, n_tiers: int, rng_seed: int = 0,
                  num_samples: int = 500, steps: int = 3000,
                  learning_rate: float = 0.02) -> dict[str, Any]:
    """Posterior samples of :func:`~truthkeeper.reliability.models.hierarchical_reliability`
    (the model NUTS fits), from a mean-field normal guide over the model's unconstrained
    sites, fitted by SVI (the reparameterised ELBO, one draw per step, Adam).

    The density is NumPyro's own (``potential_energy`` of the model); the optimisation is
    one compiled loop, cached per (sources rounded up to a power of two, tiers, steps), so
    a refit compiles nothing. Padding rows have zero trials: their reliabilities follow the
    prior and add nothing to the likelihood."""
    import jax
    import numpy as np

    n = len(tier)
    size = 1 << max(int(n - 1).bit_length(), 4)
    pad = size - n
    t = np.concatenate([np.asarray(tier, dtype=np.int32), np.zeros(pad, np.int32)])
    tr = np.concatenate([np.asarray(trials, dtype=np.float32), np.zeros(pad, np.float32)])
    su = np.concatenate([np.asarray(successes, dtype=np.float32), np.zeros(pad, np.float32)])
    out = _svi_loop(t, tr, su, jax.random.key(rng_seed), n_tiers=n_tiers, steps=steps,
                    num_samples=num_samples, learning_rate=learning_rate)
    return {k: np.asarray(v) for k, v in out.items()}


def _svi_loop_impl(tier: Any, trials: Any, successes: Any, key: Any, *, n_tiers: int,
                   steps: int, num_samples: int, learning_rate: float) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    from numpyro.distributions import biject_to
    from numpyro.handlers import seed, trace
    from numpyro.infer.util import constrain_fn, potential_energy
    from numpyro.optim import Adam

    from .models import hierarchical_reliability as model

    args, kwargs = (tier, trials, successes), {"n_tiers": n_tiers}
    k_init, k_fit, k_draw = jax.random.split(key, 3)
    # start at the origin of the unconstrained space of every latent site (one prior trace
    # gives the sites and their shapes)
    tr = trace(seed(model, k_init)).get_trace(*args, **kwargs)
    loc0 = {name: jnp.zeros_like(biject_to(site["fn"].support).inv(site["value"]))
            for name, site in tr.items()
            if site["type"] == "sample" and not site["is_observed"]}

    def energy(z: Any) -> Any:
        return potential_energy(model, args, kwargs, z)

    def sample(params: Any, k: Any) -> Any:  # z ~ q, reparameterised
        loc, log_scale = params
        leaves, tree = jax.tree_util.tree_flatten(loc)
        keys = jax.random.split(k, len(leaves))
        return jax.tree_util.tree_unflatten(tree, [
            m + jnp.exp(s) * jax.random.normal(kk, jnp.shape(m))
            for m, s, kk in zip(leaves, jax.tree_util.tree_leaves(log_scale), keys,
                                strict=True)])

    def neg_elbo(params: Any, k: Any) -> Any:
        entropy = sum(jnp.sum(s) for s in jax.tree_util.tree_leaves(params[1]))
        return energy(sample(params, k)) - entropy

    opt = Adam(learning_rate)
    params0 = (loc0, jax.tree_util.tree_map(lambda v: jnp.full(jnp.shape(v), -2.0), loc0))
    state0 = opt.init(params0)

    def step(state: Any, k: Any) -> Any:
        # a draw far in the tails can overflow (float32): such a step is skipped, as
        # NumPyro's SVI.stable_update does, instead of poisoning the whole fit
        loss, grads = jax.value_and_grad(neg_elbo)(opt.get_params(state), k)
        new = opt.update(grads, state)
        ok = jnp.isfinite(loss) & jnp.all(jnp.array(
            [jnp.all(jnp.isfinite(g)) for g in jax.tree_util.tree_leaves(grads)]))
        return jax.tree_util.tree_map(lambda a, b: jnp.where(ok, a, b), new, state), None

    state, _ = jax.lax.scan(step, state0, jax.random.split(k_fit, steps))
    fitted = opt.get_params(state)

    def draw(k: Any) -> Any:
        return constrain_fn(model, args, kwargs, sample(fitted, k),
                            return_deterministic=True)

    return dict(jax.vmap(draw)(jax.random.split(k_draw, num_samples)))


def _jitted() -> Any:
    import jax

    return jax.jit(_svi_loop_impl,
                   static_argnames=("n_tiers", "steps", "num_samples", "learning_rate"))


class _Lazy:
    """The compiled loop, built on first use (``import truthkeeper`` never imports JAX)."""

    fn: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fn is None:
            self.fn = _jitted()
        return self.fn(*args, **kwargs)


_svi_loop = _Lazy()

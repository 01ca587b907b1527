"""The NumPyro models and their inference (slow: JAX compiles; still run by make test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from truthkeeper import InvalidFact, Memory

pytestmark = pytest.mark.slow


def test_conjugate_update_agrees_with_nuts(jax_key: object) -> None:
    import jax.numpy as jnp

    from truthkeeper.reliability.inference import run_nuts
    from truthkeeper.reliability.models import fixed_prior_reliability

    a, b = 6.5, 3.5
    trials = jnp.array([0, 4, 20, 50])
    succ = jnp.array([0, 1, 18, 20])
    post = run_nuts(fixed_prior_reliability, rng_key=jax_key, num_warmup=500,
                    num_samples=4000, a=a, b=b, trials=trials, successes=succ)
    theta = np.asarray(post["theta"])
    ca, cb = a + np.asarray(succ), b + np.asarray(trials - succ)
    mean = ca / (ca + cb)
    sd = np.sqrt(ca * cb / ((ca + cb) ** 2 * (ca + cb + 1)))
    assert np.allclose(theta.mean(0), mean, atol=0.02)
    assert np.allclose(theta.std(0), sd, atol=0.02)


def test_fit_reliability_orders_tiers_and_is_journalled(tmp_path: Path) -> None:
    db = tmp_path / "fit.db"
    rng = np.random.default_rng(0)
    truth = {"human": 0.97, "verified": 0.9, "agent": 0.6, "unverified": 0.4}
    with Memory(db, protected_tiers=()) as mem:  # unsigned outcomes about every tier
        for tier, p in truth.items():
            for s in range(4):
                for _ in range(25):
                    mem.record_source_outcome(f"{tier}{s}", correct=bool(rng.random() < p),
                                              tier=tier)
        prior = mem.fit_reliability(method="nuts", num_samples=300)
        means = [prior[t][0] for t in ("human", "verified", "agent", "unverified")]
        assert means == sorted(means, reverse=True)
        assert abs(prior["agent"][0] - 0.6) < 0.15
        live = mem.reliability()
    with Memory(db, protected_tiers=()) as again:  # replayed, not refitted
        assert again.reliability() == live


def test_svi_fit_follows_the_data_and_is_repeatable() -> None:
    """SVI fits the tier hyperparameters of the model NUTS fits; its tier means follow the
    data, and the same call twice gives the same answer (the compiled loop is reused: its
    speed is measured by ``bench fit``, not here; NUTS against SVI on 1,000 sources is in
    benchmarks/README.md)."""
    rng = np.random.default_rng(1)
    truth = {"verified": 0.9, "agent": 0.7, "unverified": 0.45}
    share = {}
    with Memory(protected_tiers=()) as mem:
        for tier, p in truth.items():
            right = rng.random((25, 12)) < p
            share[tier] = right.mean()
            for s, row in enumerate(right):
                for ok in row:
                    mem.record_source_outcome(f"{tier}{s}", correct=bool(ok), tier=tier)
        svi = mem.fit_reliability(method="svi")
        assert mem.fit_reliability(method="svi") == svi
    for tier in truth:  # 300 outcomes per tier: the data, not the prior, set the means
        assert abs(svi[tier][0] - share[tier]) < 0.03
    with pytest.raises(InvalidFact, match="svi"):
        Memory().fit_reliability(method="sgd")


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"num_samples": 0}, "num_samples"),        # NaN priors, journalled
    ({"num_samples": -1}, "num_samples"),       # ValueError from NUTS
    ({"num_samples": 1.5}, "num_samples"),      # TypeError from JAX
    ({"num_samples": True}, "num_samples"),
    ({"num_samples": 10**12}, "num_samples"),   # held the process (memory, hours)
    ({"rng_seed": 10**30}, "rng_seed"),         # OverflowError
    ({"rng_seed": "x"}, "rng_seed"),            # TypeError from JAX
    ({"rng_seed": -1}, "rng_seed"),
])
def test_fit_reliability_refuses_a_bad_number_and_journals_nothing(
        tmp_path: Path, kwargs: dict, name: str) -> None:
    with Memory(tmp_path / "m.db") as mem:
        mem.record_outcome(mem.add("acme", "total", 1, source="billing").id, correct=True)
        events = mem.verify().events
        with pytest.raises(InvalidFact, match=rf"^{name} must be an integer"):
            mem.fit_reliability(method="svi" if name == "rng_seed" else "nuts", **kwargs)
        assert mem.verify().events == events  # no prior event

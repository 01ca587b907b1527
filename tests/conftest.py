"""Test configuration: Hypothesis profiles (TK_HYPOTHESIS_PROFILE=thorough for a long run)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("TK_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """Every test starts from the same random state (numpy's and Python's); JAX takes its
    keys explicitly (``jax_key``)."""
    import random

    import numpy as np

    random.seed(0)
    np.random.seed(0)


@pytest.fixture
def jax_key() -> object:
    """A fixed JAX PRNG key for the test."""
    import jax

    return jax.random.key(0)

"""Test configuration: Hypothesis profiles (TK_HYPOTHESIS_PROFILE=thorough for a long run)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("TK_HYPOTHESIS_PROFILE", "ci"))

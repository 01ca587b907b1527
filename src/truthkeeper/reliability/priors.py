"""The prior constants of the Bayesian layer, in one place (one configuration for every
data set; the models and the variational fits import them from here)."""

from __future__ import annotations

__all__ = ["DS_PRIOR_DIAG", "DS_PRIOR_OFF", "ONE_COIN_PRIOR"]

DS_PRIOR_DIAG = 1.0
"""Dawid-Skene: prior pseudo-count on a confusion row's diagonal."""
DS_PRIOR_OFF = 0.1
"""Dawid-Skene: prior pseudo-count on each off-diagonal cell."""
ONE_COIN_PRIOR = (2.0, 1.0)
"""One-coin model for open values: a source's accuracy ~ Beta(right, wrong) pseudo-counts."""

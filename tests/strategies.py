"""Shared Hypothesis strategies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

BASE = datetime(2026, 1, 1, tzinfo=UTC)

subjects = st.sampled_from(["acme", "Acme ", "globex", "ana", "x'), halt. %"])
attributes = st.sampled_from(["price", "location", "invoice_total"])
values = st.one_of(
    st.integers(min_value=-5, max_value=5),
    st.sampled_from(["a", "B", "b ", "x'), halt. %", "foo(X) :- halt.", "'\"", "",
                     "true", "false", "1", "1.0", "@(true)", "json([1])"]),
    st.sampled_from([1.0, 2.5, -0.0, None]),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=2),
)
tiers = st.sampled_from(["human", "verified", "agent", "unverified"])
sources = st.sampled_from(["s", "t", "u"])
policies = st.sampled_from(["temporal", "authority_first", "temporal_within_authority"])
offsets = st.integers(min_value=0, max_value=50)
"""Minutes after BASE: small, so that equal valid times (from one source or several) are
frequent."""


def at(minutes: int) -> datetime:
    return BASE + timedelta(minutes=minutes)

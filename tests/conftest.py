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


# ---------------------------------------------------------------- journal backends

def _pg_admin() -> str:
    dsn = os.environ.get("TK_PG_DSN")
    if not dsn:
        if os.environ.get("CI"):
            pytest.fail("TK_PG_DSN is not set: `make test` starts a PostgreSQL server")
        pytest.skip("no PostgreSQL server (TK_PG_DSN); `make test` starts one")
    return dsn


def new_pg_database(admin: str) -> str:
    """A fresh, empty database on the test server; its URL."""
    import uuid

    import psycopg

    name = f"tk_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return admin.rsplit("/", 1)[0] + "/" + name


def drop_pg_database(admin: str, url: str) -> None:
    import contextlib

    import psycopg

    with contextlib.suppress(psycopg.Error), psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def journal_url(request: pytest.FixtureRequest, tmp_path: object) -> object:
    """A fresh journal location on each backend: a SQLite path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        yield str(tmp_path) + "/m.db"
        return
    admin = _pg_admin()
    url = new_pg_database(admin)
    yield url
    drop_pg_database(admin, url)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def new_journal(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A factory of fresh journal locations on each backend (for Hypothesis tests)."""
    made: list[str] = []
    admin = _pg_admin() if request.param == "postgres" else ""

    def new() -> str:
        if request.param == "sqlite":
            return str(tmp_path_factory.mktemp("j") / "m.db")
        url = new_pg_database(admin)
        made.append(url)
        return url

    yield new
    for url in made:
        drop_pg_database(admin, url)


@pytest.fixture(scope="session")
def pg_admin() -> str:
    """The test server's admin DSN (skips outside CI when there is none)."""
    return _pg_admin()

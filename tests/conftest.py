"""Shared pytest fixtures. Tests run against a real Postgres (the local stack: `make db`)."""

from __future__ import annotations

import os

import psycopg
import pytest

DEFAULT_DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"


@pytest.fixture(scope="session")
def database_url() -> str:
    return os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)


@pytest.fixture(scope="session", autouse=True)
def _database_is_reachable(database_url: str) -> None:
    """Fail (never skip) every test when the database is down: a skipped suite hides breakage."""
    error = None
    try:
        with psycopg.connect(database_url, connect_timeout=5) as conn:
            conn.execute("select 1")
    except psycopg.Error as exc:
        error = exc
    if error is not None:  # outside `except`, so the report is not a chained traceback
        pytest.fail(
            f"database not reachable at {database_url!r}: {error}\n"
            "Start the local stack with `make db` (or set DATABASE_URL).",
            pytrace=False,
        )

"""Shared pytest fixtures. Tests run against a real Postgres (the local stack: `make db`)."""

from __future__ import annotations

import psycopg
import pytest
from job_helpers import JobKit

from supamem import db


@pytest.fixture(scope="session")
def database_url() -> str:
    """The client's own rule: $DATABASE_URL, else the local stack."""
    return db.database_url()


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


# --- supamem client fixtures (test_conversation_store, test_session_manager, test_user_memory,
# --- test_short_term, test_properties, test_concurrency, test_outage) -------------------------

import socket  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402

from supamem.db import Database  # noqa: E402


@pytest.fixture(scope="session")
def client_db(database_url: str) -> Iterator[Database]:
    """The client's pool (acting as service_role), shared by the whole session."""
    database = Database(database_url, min_size=1, max_size=12, timeout=10.0, open=True)
    yield database
    database.close()


@pytest.fixture(scope="session")
def superuser(database_url: str) -> Iterator[psycopg.Connection]:
    """A plain autocommit connection as the postgres superuser: to age rows and inspect tables."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        yield conn


@pytest.fixture(scope="session")
def make_id() -> Callable[[str], str]:
    """Fresh text ids ("alice-3f2a..."), so tests never see each other's rows."""
    return lambda prefix="user": f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def make_auth_user(superuser: psycopg.Connection) -> Callable[[], uuid.UUID]:
    """Create a Supabase Auth user (a row in auth.users) and return its id."""

    def create() -> uuid.UUID:
        row = superuser.execute(
            "insert into auth.users (id, email) values (gen_random_uuid(), %s) returning id",
            [f"{uuid.uuid4().hex[:12]}@supamem.test"],
        ).fetchone()
        assert row is not None
        return row[0]

    return create


@pytest.fixture(scope="session")
def closed_port_url() -> str:
    """A URL on a loopback port nothing listens on (connections are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"postgresql://postgres:postgres@127.0.0.1:{port}/postgres"


# --- job tests (test_worker, test_transports) ----------------------------------------------------


@pytest.fixture
def kit(database_url: str, request: pytest.FixtureRequest) -> Iterator[JobKit]:
    """Users, conversations and jobs of this test (tests/job_helpers.py), erased afterwards."""
    job_kit = JobKit(database_url, request.node.name[:24].replace("[", "-").replace("]", ""))
    try:
        yield job_kit
    finally:
        job_kit.cleanup()

"""Shared pytest fixtures. Tests run against a real Postgres (the local stack: `make db`)."""

from __future__ import annotations

import time
from contextlib import contextmanager

import psycopg
import pytest
from job_helpers import JobKit
from migrate import admin_url_for
from server_helpers import Served, serve

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
def postgres_conn(database_url: str) -> Iterator[psycopg.Connection]:
    """A plain autocommit connection as postgres (owner of the kit's tables, BYPASSRLS, not a
    superuser, as on a hosted project): to age rows and inspect tables."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        yield conn


@pytest.fixture(scope="session")
def admin_url(database_url: str) -> str:
    """The local stack's superuser (supabase_admin, scripts/db.sh): only for what a project's
    postgres may not do in a test's setup (filler rows with triggers off, track_functions)."""
    return admin_url_for(database_url)


@pytest.fixture(scope="session")
def make_id() -> Callable[[str], str]:
    """Fresh text ids ("alice-3f2a..."), so tests never see each other's rows."""
    return lambda prefix="user": f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def make_auth_user(postgres_conn: psycopg.Connection) -> Callable[[], uuid.UUID]:
    """Create a Supabase Auth user (a row in auth.users) and return its id."""

    def create() -> uuid.UUID:
        row = postgres_conn.execute(
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


# --- pg_cron ------------------------------------------------------------------------------------

#: A run of a pg_cron job that has started and not finished: its connection is busy with the
#: job's command, or its run is still being recorded as starting or running.
CRON_RUNNING = """
select exists (
    select 1 from pg_stat_activity as a
    where a.application_name = 'pg_cron' and a.query = %(command)s and a.state <> 'idle'
) or exists (
    select 1 from cron.job_run_details as d where d.jobid = %(job)s and d.status in ('starting', 'running')
)
"""


@contextmanager
def cron_job_paused(database_url: str, name: str) -> Iterator[None]:
    """The kit's pg_cron job `name` does not run inside the block, and no run of it is still going
    when the block starts. An advisory lock per job is held meanwhile: a second run of the suite
    against the same database would otherwise find the job already paused and, when done, leave
    it paused for good."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("set lock_timeout = '300s'")
        conn.execute("select pg_advisory_lock(hashtext(%s))", [f"supamem-tests:{name}-paused"])
        row = conn.execute("select jobid, command, active from cron.job where jobname = %s", [name]).fetchone()
        assert row is not None, f"pg_cron has no {name} job (run the migrations)"
        job, command, active = row
        conn.execute("select cron.alter_job(%s, active => false)", [job])
        try:
            deadline = time.monotonic() + 120
            while conn.execute(CRON_RUNNING, {"job": job, "command": command}).fetchone()[0]:
                if time.monotonic() > deadline:
                    pytest.fail(f"the {name} run that had started did not finish in 120 s")
                time.sleep(0.05)  # polling interval, not a timing assumption
            yield
        finally:
            conn.execute("select cron.alter_job(%s, active => %s)", [job, active])
            conn.execute("select pg_advisory_unlock(hashtext(%s))", [f"supamem-tests:{name}-paused"])


@pytest.fixture
def retention_sweep_paused(database_url: str) -> Iterator[None]:
    """pg_cron's retention sweep (every 5 minutes, over everyone's expired rows) does not run
    during the test. A test that ages rows past their expiry and then sweeps or reads them
    itself would otherwise race it: the sweep may delete them first, or hold them locked
    (`skip locked`) while the test's own sweep passes them by."""
    with cron_job_paused(database_url, "supamem-retention-sweep"):
        yield


@pytest.fixture
def extraction_queue_paused(database_url: str) -> Iterator[None]:
    """pg_cron's minutely pass over the turns' extraction notes does not run during the test, so
    the test decides when notes become jobs."""
    with cron_job_paused(database_url, "supamem-queue-extractions"):
        yield


@pytest.fixture
def summary_queue_paused(database_url: str) -> Iterator[None]:
    """pg_cron's minutely pass over the turns' summary notes does not run during the test."""
    with cron_job_paused(database_url, "supamem-queue-summaries"):
        yield


# --- the HTTP app (test_server_*) ----------------------------------------------------------------


@pytest.fixture(scope="session")
def served(database_url: str, postgres_conn: psycopg.Connection) -> Iterator[Served]:
    """The kit's app on a loopback port, against the test database, with the offline LLM."""
    yield from serve(database_url, postgres_conn)

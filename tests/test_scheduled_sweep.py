"""pg_cron's retention sweep, `call memory_private.run_retention_sweep()`: committed batches, each
resuming where the last stopped, with a pause after each batch of sweep_pause times the batch's
own time, so a background sweep leaves the writers their share of the server."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from client_helpers import age_turns

from supamem import ConversationStore, Database


@pytest.fixture
def sweep_settings(postgres_conn: psycopg.Connection) -> Iterator[Any]:
    """Set the sweep's settings for one test; the database's own are put back afterwards."""
    keys = ["sweep_batch_size", "sweep_max_batches", "sweep_pause"]
    saved = postgres_conn.execute(
        "select key, value::text from memory_private.settings where key = any(%s)", [keys]).fetchall()
    assert len(saved) == len(keys), "the migrations insert every sweep setting"

    def put(**values: str) -> None:
        for key, value in values.items():
            postgres_conn.execute("update memory_private.settings set value = %s::jsonb where key = %s", [value, key])

    try:
        yield put
    finally:
        for key, value in saved:
            put(**{key: value})


def _expire_turns(db: Database, conn: psycopg.Connection, user: str, turns: int, expired: int) -> None:
    """A conversation of `turns` turns whose first `expired` are past their time to live."""
    store = ConversationStore(db)
    for n in range(1, turns + 1):
        store.store_turn(user, f"q{n}", f"a{n}")
    conversation = conn.execute(
        "select id from memory.conversations where user_id = %s", [store.identity.user(user)]).fetchone()
    assert conversation is not None
    age_turns(conn, conversation[0], list(range(1, expired + 1)), timedelta(hours=25))


def _expired_messages(conn: psycopg.Connection) -> int:
    row = conn.execute("select count(*) from memory.messages where expires_at <= now()").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.usefixtures("retention_sweep_paused")
def test_the_scheduled_sweep_pauses_between_its_batches(
    client_db: Database, postgres_conn: psycopg.Connection, database_url: str, make_id: Any, sweep_settings: Any
) -> None:
    """While the procedure runs, its backend is seen waiting in pg_sleep between batches, and
    the batches it ran are committed."""
    _expire_turns(client_db, postgres_conn, make_id("scheduled-sweep"), 4, 4)
    before = _expired_messages(postgres_conn)
    sweep_settings(sweep_batch_size="1", sweep_max_batches="4", sweep_pause="20")

    with psycopg.connect(database_url, autocommit=True) as sweeper:
        pid = sweeper.info.backend_pid
        failure: list[BaseException] = []

        def call() -> None:
            try:
                sweeper.execute("call memory_private.run_retention_sweep()")
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                failure.append(exc)

        thread = threading.Thread(target=call)
        thread.start()
        waits: set[str] = set()
        # While it pauses it holds no transaction id and no lock: the pause comes after a commit.
        holding: set[bool] = set()
        def activity() -> tuple[str, object] | None:
            return postgres_conn.execute(  # type: ignore[return-value]
                "select coalesce(wait_event, ''), xact_start from pg_stat_activity where pid = %s", [pid]).fetchone()

        while thread.is_alive():
            first = activity()
            held = postgres_conn.execute(
                "select exists (select 1 from pg_stat_activity where pid = %(pid)s and backend_xid is not null)"
                " or exists (select 1 from pg_locks where pid = %(pid)s and locktype <> 'virtualxid')",
                {"pid": pid}).fetchone()
            if first:
                waits.add(first[0])
            # Counted only when the same pause lasted across the look at the locks: each of the
            # procedure's transactions holds one pause, before its batch.
            if first and first[0] == "PgSleep" and activity() == first and held:
                holding.add(held[0])
        thread.join()
    assert failure == []
    assert "PgSleep" in waits, f"the sweeper paused between batches (seen: {sorted(waits)})"
    assert holding == {False}, "a pause holds nothing"
    assert _expired_messages(postgres_conn) < before, "its batches are committed"


@pytest.mark.usefixtures("retention_sweep_paused")
def test_a_pause_that_is_not_a_number_stops_the_sweep_with_a_clear_error(
    postgres_conn: psycopg.Connection, sweep_settings: Any
) -> None:
    sweep_settings(sweep_pause='"long"')
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="setting sweep_pause must be a number of at least 0"):
        postgres_conn.execute("call memory_private.run_retention_sweep()")


@pytest.mark.usefixtures("retention_sweep_paused")
def test_a_run_ends_before_its_pauses_reach_the_statement_timeout(
    client_db: Database, postgres_conn: psycopg.Connection, database_url: str, make_id: Any, sweep_settings: Any
) -> None:
    """The pauses count against the statement timeout, which covers the whole call: a run whose next
    pause would take it past half the timeout ends there, committed, instead of being cancelled."""
    _expire_turns(client_db, postgres_conn, make_id("sweep-budget"), 3, 2)
    before = _expired_messages(postgres_conn)
    # A pause of 100,000 times a batch's own time would outlast the timeout many times over.
    sweep_settings(sweep_batch_size="1", sweep_max_batches="10", sweep_pause="100000")
    with psycopg.connect(database_url, autocommit=True) as sweeper:
        sweeper.execute("set statement_timeout = '2s'")
        sweeper.execute("call memory_private.run_retention_sweep()")
    assert _expired_messages(postgres_conn) < before, "the batch it ran is committed"


@pytest.mark.usefixtures("retention_sweep_paused")
def test_a_run_logs_what_it_deleted(
    client_db: Database, postgres_conn: psycopg.Connection, database_url: str, make_id: Any, sweep_settings: Any
) -> None:
    """Seed 001's cleanup statistics: the run writes its counts, batches and time to the server's
    log (seen here as a LOG message sent to the client)."""
    _expire_turns(client_db, postgres_conn, make_id("sweep-log"), 3, 2)
    before = _expired_messages(postgres_conn)
    sweep_settings(sweep_batch_size="100000", sweep_max_batches="10", sweep_pause="0")
    logged: list[str] = []
    with psycopg.connect(database_url, autocommit=True) as sweeper:
        sweeper.add_notice_handler(lambda notice: logged.append(notice.message_primary or ""))
        sweeper.execute("set client_min_messages = log")
        sweeper.execute("call memory_private.run_retention_sweep()")
    (line,) = [m for m in logged if m.startswith("supamem retention sweep:")]
    match = re.fullmatch(r"supamem retention sweep: (\d+) messages, (\d+) conversations, (\d+) short-term rows "
                         r"deleted in 1 batches, [\d.]+ s", line)
    assert match is not None, line
    assert int(match[1]) == before >= 4 and _expired_messages(postgres_conn) == 0

"""Helpers shared by the client tests: inspect and age rows as postgres (the tables' owner), run the
command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest


def age_turns(
    postgres_conn: psycopg.Connection,
    conversation_id: UUID | str,
    turn_numbers: list[int],
    age: timedelta,
    ttl: timedelta | None = timedelta(hours=24),
) -> None:
    """Pretend these turns were written `age` ago (created_at and expires_at move back together),
    and move the conversation's expiry to its newest message's, as if nothing came after."""
    postgres_conn.execute(
        "update memory.messages set created_at = now() - %(age)s,"
        " expires_at = case when %(ttl)s::interval is null then null else now() - %(age)s + %(ttl)s end"
        " where conversation_id = %(c)s and turn_number = any(%(t)s)",
        {"age": age, "ttl": ttl, "c": conversation_id, "t": turn_numbers},
    )
    postgres_conn.execute(
        "update memory.conversations as c set expires_at = m.latest"
        " from (select max(expires_at) as latest from memory.messages where conversation_id = %(c)s) as m"
        " where c.id = %(c)s and m.latest is not null",
        {"c": conversation_id},
    )


def stored_messages(postgres_conn: psycopg.Connection, conversation_id: UUID | str) -> list[dict[str, Any]]:
    """Every message row of a conversation (expired or not), in turn order."""
    cur = postgres_conn.execute(
        "select turn_number, role, content, metadata, expires_at from memory.messages"
        " where conversation_id = %s order by turn_number, role desc",
        [conversation_id],
    )
    names = [d.name for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def conversations_of(postgres_conn: psycopg.Connection, user_uuid: UUID) -> list[dict[str, Any]]:
    cur = postgres_conn.execute(
        "select id, ttl, window_turns, last_turn, expires_at, tenant_id, metadata from memory.conversations"
        " where user_id = %s order by created_at",
        [user_uuid],
    )
    names = [d.name for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def users_with_external_id(postgres_conn: psycopg.Connection, external_id: str) -> int:
    """How many `memory.users` rows carry this external id (in any tenant)."""
    row = postgres_conn.execute("select count(*) from memory.users where external_id = %s", [external_id]).fetchone()
    assert row is not None
    return row[0]


ROOT = Path(__file__).resolve().parent.parent


def run_module(
    module: str, database_url: str, *args: str, stdin: str | None = None, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` in a subprocess on `database_url` (plus `env`), as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DATABASE_URL": database_url, **env},
        cwd=ROOT,
        input=stdin,
        timeout=timeout,
        check=False,
    )


def run_cli(database_url: str, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`supamem ARGS` (supamem.cli) in a subprocess."""
    return run_module("supamem.cli", database_url, *args, stdin=stdin, **env)


def waiting_on(conn: psycopg.Connection, pid: int, event_type: str, event: str | None = None) -> bool:
    """Whether backend `pid` waits on `event_type` (and `event`, when given), as pg_stat_activity shows."""
    with conn.cursor(row_factory=psycopg.rows.tuple_row) as cur:
        row = cur.execute("select wait_event_type, wait_event from pg_stat_activity where pid = %s", [pid]).fetchone()
    return row is not None and row[0] == event_type and event in (None, row[1])


def wait_for(condition: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)  # polling interval, not a timing assumption

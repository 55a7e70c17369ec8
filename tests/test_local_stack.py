"""The local stack's promises (issue 2), on a throwaway cluster of its own: `scripts/db.sh start`
is a no-op on a running cluster and recovers from a crash's stale postmaster.pid; the migration
runner records what it applied, so running it again applies nothing."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import migrate
import psycopg
import pytest
from client_helpers import ROOT


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    def __init__(self, port: int) -> None:
        self.port = port
        self.env = {**os.environ, "SUPAMEM_DB_PORT": str(port)}
        self.url = f"postgresql://postgres:postgres@127.0.0.1:{port}/postgres"

    def db(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["scripts/db.sh", *args], capture_output=True, text=True, env=self.env, cwd=ROOT, timeout=300, check=False
        )

    def migrate(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "scripts/migrate.py", "--bootstrap", "--with-pgtap"],
            capture_output=True, text=True, env={**self.env, "DATABASE_URL": self.url}, cwd=ROOT, timeout=300,
            check=False,
        )

    def postmaster_pid(self) -> int:
        status = self.db("status")
        assert status.returncode == 0, status.stdout + status.stderr
        match = re.search(r"\(pid (\d+)\)", status.stdout)
        assert match, status.stdout
        return int(match.group(1))


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    made = Cluster(_free_port())
    try:
        yield made
    finally:
        made.db("stop")
        for state in (ROOT / ".supamem" / f"port-{made.port}", Path(f"/tmp/supamem-{made.port}")):
            shutil.rmtree(state, ignore_errors=True)


def _wait_until_gone(pid: int) -> None:
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists():
        assert time.monotonic() < deadline, f"pid {pid} still running"
        time.sleep(0.05)


def test_start_is_idempotent_and_recovers_a_stale_pid_file(cluster):
    first = cluster.db("start")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("started"), first.stdout
    again = cluster.db("start")
    assert again.returncode == 0 and again.stdout.startswith("already running"), again.stdout + again.stderr
    pid = cluster.postmaster_pid()

    os.kill(pid, signal.SIGKILL)  # a crash: postmaster.pid stays behind
    _wait_until_gone(pid)
    assert cluster.db("status").returncode == 3
    recovered = cluster.db("start")
    assert recovered.returncode == 0, recovered.stderr
    assert "removing stale postmaster.pid" in recovered.stderr
    assert recovered.stdout.startswith("started")
    assert cluster.postmaster_pid() != pid


def test_migrations_apply_once(cluster):
    assert cluster.db("start").returncode == 0
    first = cluster.migrate()
    assert first.returncode == 0, first.stderr
    applied = int(re.search(r"(\d+) applied, 0 already up to date", first.stdout).group(1))
    assert applied == len(list((ROOT / "supabase" / "migrations").glob("*.sql")))
    # As `supabase db push`: as a postgres that is not a superuser, each file's statements recorded.
    with psycopg.connect(cluster.url) as conn:
        assert conn.execute("select rolsuper, rolbypassrls from pg_roles where rolname = current_user").fetchone() == (
            False, True)
        files, statements = conn.execute(
            "select count(*), sum(cardinality(statements)) from supabase_migrations.schema_migrations").fetchone()
        assert files == applied and statements > 10 * applied
    again = cluster.migrate()
    assert again.returncode == 0, again.stderr
    assert f"0 applied, {applied} already up to date" in again.stdout
    assert "bootstrap: up to date" in again.stdout


@pytest.mark.parametrize(
    ("text", "statements"),
    [
        ("select 1; select 2;", ["select 1", "select 2"]),
        ("select ';'; select \"a;b\" from t", ["select ';'", 'select "a;b" from t']),
        ("select 'it''s; fine'; select 2", ["select 'it''s; fine'", "select 2"]),
        ("-- a comment; still a comment\nselect 1;", ["-- a comment; still a comment\nselect 1"]),
        ("/* one /* nested; */ still; */ select 1; select 2", ["/* one /* nested; */ still; */ select 1", "select 2"]),
        ("do $$ begin perform 1; end $$; do $body$ begin perform ';'; end $body$",
         ["do $$ begin perform 1; end $$", "do $body$ begin perform ';'; end $body$"]),
        ("select $1; select 2", ["select $1", "select 2"]),
        ("create rule r as on insert to t do also (insert into a select 1; insert into b select 2); select 1",
         ["create rule r as on insert to t do also (insert into a select 1; insert into b select 2)", "select 1"]),
        ("create function f() returns int language sql begin atomic select 1; select 2; end; select 3",
         ["create function f() returns int language sql begin atomic select 1; select 2; end", "select 3"]),
        ("select 1;;  ;\n", ["select 1"]),
        # The CLI's own quirks: a backslash escapes outside strings, and is plain inside them;
        # nested parentheses end at the first `)`.
        ("select E'\\''; select 2;", ["select E'\\''; select 2"]),
        ("do also (insert into a values (1); select 2)", ["do also (insert into a values (1)", "select 2)"]),
    ],
)
def test_migrations_are_split_where_the_supabase_cli_splits_them(text, statements):
    assert migrate.split_statements(text) == statements


def _run_migrations(directory: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/migrate.py", "--database-url", database_url, "--migrations-dir", str(directory)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )


@pytest.mark.parametrize(
    ("body", "sqlstate"),
    [
        # postgres is not a superuser here, as on a hosted project.
        ("create table public.{t} (id int);\nset session_replication_role = replica;\n", "42501"),
        # The CLI would send this as one statement (its splitter reads the backslash as an
        # escape), which the extended protocol refuses; psql would have run it.
        ("create table public.{t} (id int);\nselect E'\\''; select 2;\n", "42601"),
    ],
    ids=["superuser-only", "mis-split"],
)
def test_a_migration_that_fails_on_a_project_fails_here_and_leaves_nothing(
    tmp_path, database_url, postgres_conn, body, sqlstate
):
    table = f"t_{os.getpid()}_{time.monotonic_ns()}"
    version = "20991231235959"
    (tmp_path / f"{version}_fails.sql").write_text(body.format(t=table), encoding="utf-8")
    result = _run_migrations(tmp_path, database_url)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{sqlstate}:" in result.stderr
    assert postgres_conn.execute("select to_regclass(%s)", [f"public.{table}"]).fetchone()[0] is None
    recorded = postgres_conn.execute(
        "select count(*) from supabase_migrations.schema_migrations where version = %s", [version]
    ).fetchone()[0]
    assert recorded == 0


def test_a_migration_is_recorded_with_its_statements(tmp_path, database_url, postgres_conn):
    table = f"t_{os.getpid()}_{time.monotonic_ns()}"
    version = "20991231235958"
    (tmp_path / f"{version}_records.sql").write_text(
        f"create table public.{table} (id int);\ninsert into public.{table} values (1); -- one row\n", encoding="utf-8"
    )
    try:
        result = _run_migrations(tmp_path, database_url)
        assert result.returncode == 0, result.stderr
        row = postgres_conn.execute(
            "select statements, name from supabase_migrations.schema_migrations where version = %s", [version]
        ).fetchone()
        assert row == ([f"create table public.{table} (id int)", f"insert into public.{table} values (1)",
                        "-- one row"], "records")
    finally:
        postgres_conn.execute(f"drop table if exists public.{table}")
        postgres_conn.execute("delete from supabase_migrations.schema_migrations where version = %s", [version])

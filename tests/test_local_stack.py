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
    again = cluster.migrate()
    assert again.returncode == 0, again.stderr
    assert f"0 applied, {applied} already up to date" in again.stdout
    assert "bootstrap: up to date" in again.stdout

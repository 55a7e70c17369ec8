"""The `supamem` command line's exit codes, the same for every subcommand (supamem.cli_common):
0 done, 1 the database is unreachable or refused the request, 2 bad arguments, input or
configuration. Errors are one line on stderr, never a traceback."""

from __future__ import annotations

import json
from uuid import uuid4

import pytest
from client_helpers import run_cli


def _one_line_error(stderr: str) -> str:
    assert "Traceback" not in stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("supamem: error: ")]
    return line


@pytest.mark.parametrize("args", [["jobs"], ["export", "--user", "someone"]], ids=["jobs", "export"])
def test_an_unreachable_database_is_exit_1(closed_port_url, args):
    done = run_cli(closed_port_url, *args)  # one command of each module (jobs.cli, supamem.memory_cli)
    assert done.returncode == 1, done.stderr
    assert "cannot connect to the database" in _one_line_error(done.stderr)


def test_a_refused_request_is_exit_1(database_url):
    done = run_cli(database_url, "backfill", "--profile", str(uuid4()), "--year", "2026", "--month", "1")
    assert done.returncode == 1, done.stderr
    assert "profile not found (SQLSTATE P0002)" in _one_line_error(done.stderr)
    done = run_cli(database_url, "export", "--user", f"nobody-{uuid4().hex[:8]}")
    assert done.returncode == 1, done.stderr
    assert "user not found" in _one_line_error(done.stderr)


def test_bad_input_is_exit_2(database_url, tmp_path):
    missing = tmp_path / "missing.json"
    done = run_cli(database_url, "import", "--user", "someone", str(missing))
    assert done.returncode == 2, done.stderr
    assert "missing.json" in _one_line_error(done.stderr)
    done = run_cli(database_url, "backfill", "--profile", str(uuid4()), "--year", "2026", "--month", "1")
    assert done.returncode == 1  # the same command with good input reaches the database


def test_bad_configuration_is_exit_2(database_url):
    done = run_cli(database_url, "jobs", SUPABASE_URL="http://127.0.0.1:1", SUPABASE_SERVICE_ROLE_KEY="")
    assert done.returncode == 2, done.stderr
    assert "SUPABASE_SERVICE_ROLE_KEY" in _one_line_error(done.stderr)
    done = run_cli(database_url, "worker", "--once", SUPAMEM_LLM_PROVIDER="no-such-provider")
    assert done.returncode == 2, done.stderr
    _one_line_error(done.stderr)


def test_bad_arguments_are_exit_2(database_url):
    done = run_cli(database_url, "backfill", "--profile", "not-a-uuid", "--year", "2026", "--month", "1")
    assert done.returncode == 2
    assert "not a UUID" in done.stderr and "Traceback" not in done.stderr


def test_worker_kinds_take_the_summarize_group(database_url):
    """`--kinds extract,summarize` (the issue's example) runs extraction and every summary kind."""
    done = run_cli(database_url, "worker", "--once", "--json", "--kinds", "extract,summarize", "--user", str(uuid4()))
    assert done.returncode == 0, done.stderr
    started = next(json.loads(line) for line in done.stderr.splitlines() if '"worker_started"' in line)
    assert started["kind"] == "extract,summarize_conversation,summarize_week,summarize_month,compare_year"
    done = run_cli(database_url, "worker", "--once", "--kinds", "extract,summaries")
    assert done.returncode == 2
    assert "unknown job kind(s) summaries" in done.stderr and "summarize" in done.stderr

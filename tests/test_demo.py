"""`make demo` is the kit's main job: it must keep working. The demo checks itself (every "✓"
is an assertion on the database) and exits non-zero on the first check that fails."""

from __future__ import annotations

from client_helpers import run_module


def test_the_demo_runs_and_every_check_passes(database_url):
    for run in ("first", "again"):  # a second run starts over on its own data
        done = run_module("jobs.demo", database_url, timeout=120)
        assert done.returncode == 0, f"{run} run:\n{done.stdout}\n{done.stderr}"
        assert "All done." in done.stdout
        assert done.stdout.count("✓") >= 20, done.stdout
        assert "✗" not in done.stdout

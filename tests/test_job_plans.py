"""Queueing a job again finds it by its key, however many other jobs have finished.

memory_private.enqueue with p_replace puts a finished or dead job of the same key back in the queue;
a new memory asks it for its user's embed job, which is most often still queued. The update runs
inside plpgsql, so its plans are read through auto_explain (tests/plan_helpers.py), past plpgsql's
fifth call: with 1,000 finished jobs of another kind in the table, each call reads the one job of
its key. Everything is rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest
from plan_helpers import CALLS, explain_nested, nested_plans, rows_read, scans_of
from psycopg.rows import dict_row

FINISHED = 1000


@pytest.fixture
def finished_jobs(admin_url: str) -> Iterator[psycopg.Connection]:
    conn = psycopg.connect(admin_url, row_factory=dict_row)
    try:
        conn.execute(
            "insert into memory_private.jobs (kind, payload, dedup_key, status, max_attempts, finished_at)"
            " select 'title', '{}', format('title:plans-%%s', i), 'done', 5, now() from generate_series(1, %s) as i",
            [FINISHED],
        )
        conn.execute(
            "insert into memory_private.jobs (kind, payload, dedup_key, max_attempts) values ('embed', '{}', 'embed:plans', 5)"
        )
        # No analyze: the statistics are the database's own, behind the queue as on a live one.
        explain_nested(conn)
        yield conn
    finally:
        conn.rollback()
        conn.close()


def test_a_job_is_queued_again_through_its_key(finished_jobs) -> None:
    for _ in range(CALLS):
        (plan,) = nested_plans(finished_jobs, "select memory_private.enqueue('embed', '{}', 'embed:plans', null, null, true)",
                               [], "update memory_private.jobs")
        scans = scans_of(plan, "jobs")
        assert scans and all(scan["Node Type"] != "Seq Scan" for scan in scans), json.dumps(plan)
        # The key's row, then the same row by id: never the finished jobs.
        assert sum(rows_read(scan) for scan in scans) <= 2, json.dumps(plan)
    status = finished_jobs.execute("select status from memory_private.jobs where dedup_key = 'embed:plans'")
    assert status.fetchone()["status"] == "queued"

"""Queueing a job again finds it by its key, however many other jobs have finished; a claim walks
the users waiting on the kinds it takes, however many wait on others.

memory_private.enqueue with p_replace puts a finished or dead job of the same key back in the queue;
a new memory asks it for its user's embed job, which is most often still queued. The update runs
inside plpgsql, so its plans are read through auto_explain (tests/plan_helpers.py), past plpgsql's
fifth call: with 1,000 finished jobs of another kind in the table, each call reads the one job of
its key. A claim of one kind, with 300 users waiting on another, walks none of them (it walked every
user with queued work). Everything is rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest
from plan_helpers import CALLS, explain_nested, nested_plans, nodes, rows_read, scans_of, sign_in
from psycopg.rows import dict_row

FINISHED = 1000
#: Users waiting on another kind than the claim takes.
OTHER_USERS = 300


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


def test_a_claim_walks_only_the_users_waiting_on_its_kinds(admin_url: str) -> None:
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        try:
            conn.execute(
                "with u as (insert into memory.users (external_id)"
                " select format('claim-walk-%%s', i) from generate_series(0, %s) as i returning id, external_id)"
                " insert into memory_private.jobs (kind, payload, user_id, max_attempts)"
                " select case when u.external_id = 'claim-walk-0' then 'test_claim_walk' else 'title' end, '{}', u.id, 5"
                " from u",
                [OTHER_USERS],
            )
            explain_nested(conn)
            sign_in(conn, "service_role")
            for _ in range(CALLS):
                with conn.transaction(force_rollback=True):
                    (plan,) = nested_plans(conn, "select * from memory.claim_jobs(array['test_claim_walk'], 'w', 1)",
                                           [], "with recursive waiting")
                    (walk,) = [n for n in nodes(plan) if n["Node Type"] == "Recursive Union"]
                    # The one user waiting on the kind, and the probe past them.
                    assert walk["Actual Rows"] <= 2, json.dumps(plan)
                    claimed = conn.execute("select kind from memory_private.jobs where status = 'running'"
                                           " and worker = 'w'").fetchall()
                    assert [row["kind"] for row in claimed] == ["test_claim_walk"]
        finally:
            conn.rollback()

"""Queueing a job again finds it by its key, however many other jobs have finished; a claim reads the
users it serves, however many wait.

memory_private.enqueue with p_replace puts a finished or dead job of the same key back in the queue;
a new memory asks it for its user's embed job, which is most often still queued. The update runs
inside plpgsql, so its plans are read through auto_explain (tests/plan_helpers.py), past plpgsql's
fifth call: with 1,000 finished jobs of another kind in the table, each call reads the one job of
its key. A claim reads the users it serves from memory_private.job_waiters, whatever the number
waiting on its kind or on others (it probed every user waiting). job_stats reads the queue and the
last hour, not the finished jobs kept (it read them all). An embed batch stores the vectors of the
memories it names by id (it read every memory of the user). A pass over the summary or extraction
notes reads the notes it takes (it sorted them all), and a claim for some users holds and takes
theirs without reading the others' (one condition for all callers read every note). Everything is
rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest
from plan_helpers import (
    CALLS,
    explain_nested,
    index_names,
    nested_plans,
    profile_with_memories,
    rows_read,
    scans_of,
    sign_in,
)
from psycopg.rows import dict_row

FINISHED = 1000
#: Users waiting on the kind the claim takes, and as many on another.
WAITING = 300
#: Finished jobs kept for job_retention, which job_stats does not read.
HISTORY = 10000


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


def test_a_claim_reads_the_users_it_serves(admin_url: str) -> None:
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        try:
            # The statistics saw a few users waiting (a queue fills between two analyzes).
            conn.execute(
                "with u as (insert into memory.users (external_id) select 'claim-few-' || i"
                " from generate_series(1, 5) as i returning id)"
                " insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                " select 'title', '{}', u.id, 5, now() + interval '1 day' from u")
            conn.execute("analyze memory_private.job_waiters")
            # Users served lately (they come last) whose jobs of the claimed kind are the oldest: the
            # kind's queue order is not the order users are served in.
            conn.execute(
                "with u as (insert into memory.users (external_id) select 'claim-served-' || i"
                " from generate_series(1, 50) as i returning id)"
                " insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after, status, started_at,"
                " finished_at) select k.kind, '{}', u.id, 5, now() - interval '2 hours', k.status, k.at, k.at"
                " from u cross join (values ('test_claim_read', 'queued', null::timestamptz),"
                " ('title', 'done', now())) as k (kind, status, at)")
            # WAITING users with a job of the claimed kind, queued a second apart, and as many with
            # a job of another kind.
            conn.execute(
                "with u as (insert into memory.users (external_id)"
                " select format('claim-read-%%s', i) from generate_series(1, %s) as i returning id, external_id)"
                " insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                " select k.kind, '{}', u.id, 5, now() - interval '1 hour' + split_part(u.external_id, '-', 3)::integer"
                " * interval '1 second' from u cross join (values ('test_claim_read'), ('title')) as k (kind)",
                [WAITING],
            )
            explain_nested(conn)
            sign_in(conn, "service_role")
            for limit in (1, 4):
                with conn.transaction(force_rollback=True):
                    (plan,) = nested_plans(conn, "select * from memory.claim_jobs(array['test_claim_read'], 'w', %s)",
                                           [limit], "from memory_private.job_waiters as x")
                    # The first batch of users (the limit and 8), never every user waiting.
                    assert sum(rows_read(scan) for scan in scans_of(plan, "job_waiters")) <= limit + 8, json.dumps(plan)
                    # Never compiled: priced with the disable cost of its one sort, it was, 110 ms a claim.
                    assert "JIT" not in plan, json.dumps(plan["JIT"])
                    claimed = conn.execute("select j.kind, u.external_id from memory_private.jobs as j"
                                           " join memory.users as u on u.id = j.user_id"
                                           " where j.status = 'running' and j.worker = 'w' order by j.run_after").fetchall()
                    # The users who waited longest, one job each.
                    assert [(r["kind"], r["external_id"]) for r in claimed] == [
                        ("test_claim_read", f"claim-read-{i}") for i in range(1, limit + 1)]
                with conn.transaction(force_rollback=True):
                    probes = nested_plans(conn, "select * from memory.claim_jobs(array['test_claim_read'], 'w', %s)",
                                          [limit], "j.user_id = v_users[i]")
                    # Each user's next job is read from that user's queued jobs, never through the
                    # kind's queue (where the jobs of the users served lately come first).
                    for probe in probes:
                        assert sum(rows_read(scan) for scan in scans_of(probe, "jobs")) <= 2, json.dumps(probe)
        finally:
            conn.rollback()


def test_job_stats_reads_the_queue_not_the_history(admin_url: str) -> None:
    """The finished jobs kept for job_retention (here 10,000, finished two days ago, or ten times the
    queue a database used by many test runs holds, as a long-lived queue's history outweighs it) are
    never read: each figure comes from its own part of the queue, through its index."""
    counted = (
        "select count(*) as n from memory_private.jobs where status in ('queued', 'running', 'dead')"
        " or finished_at > now() - interval '1 hour' or failed_at > now() - interval '1 hour'"
    )
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        try:
            history = max(HISTORY, 10 * conn.execute(counted).fetchone()["n"])
            conn.execute(
                "insert into memory_private.jobs (kind, payload, status, max_attempts, created_at, started_at, finished_at)"
                " select 'test_stats_history', '{}', 'done', 5, now() - interval '2 days', now() - interval '2 days',"
                " now() - interval '2 days' from generate_series(1, %s)", [history])
            conn.execute("analyze memory_private.jobs")
            reported = conn.execute(counted).fetchone()["n"]
            (row,) = conn.execute("explain (analyze, format json) select * from memory_private.job_stats").fetchone().values()
            plan = row[0]["Plan"]
            read = sum(rows_read(scan) for scan in scans_of(plan, "jobs"))
            # Each part at most once (a job finished in the last hour may also have failed in it).
            assert read <= 2 * reported, json.dumps(plan)
            assert conn.execute("select count(*) as n from memory.job_stats() where kind = 'test_stats_history'"
                                ).fetchone()["n"] == 0
        finally:
            conn.rollback()


def test_an_embed_batch_stores_memory_vectors_by_id(admin_url: str) -> None:
    """A batch names a few of its user's 1,000 memories; storing their vectors reads those, not
    every memory of the user."""
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        try:
            user = conn.execute("select memory.user_id_for('plans-embed-' || gen_random_uuid()) as id").fetchone()["id"]
            conn.execute("set local session_replication_role = replica")
            _, memories = profile_with_memories(conn, user, 1000, "memory number %s of a long profile")
            conn.execute("set local session_replication_role = origin")
            conn.execute("analyze memory.memories")
            conn.execute("select memory.set_embedding_model('test-plans-2d', 2)")
            job = conn.execute(
                "insert into memory_private.jobs (kind, payload, user_id, max_attempts, status, worker, leased_until,"
                " started_at) values ('embed', '{}', %s, 5, 'running', 'w', now() + interval '1 minute', now())"
                " returning id", [user]).fetchone()["id"]
            items = [{"kind": "memory", "id": str(m), "embedding": [1, 0]} for m in memories[:3]]
            items.append({"kind": "memory", "id": "not-a-uuid", "embedding": [0, 1]})
            explain_nested(conn)
            (plan,) = nested_plans(conn, "select memory.finish_embeddings(%s, 'w', 'test-plans-2d', %s)",
                                   [job, json.dumps(items)], "insert into memory_private.memory_embeddings")
            assert sum(rows_read(scan) for scan in scans_of(plan, "memories")) <= len(items), json.dumps(plan)
            stored = conn.execute("select count(*) as n from memory_private.memory_embeddings where user_id = %s",
                                  [user]).fetchone()["n"]
            assert stored == 3
        finally:
            conn.rollback()


def test_summary_inputs_read_their_week_and_month(finished_jobs) -> None:
    """A monthly summary's input reads its weeks' summaries as a range of the profile's, and counts
    its pending weeks by their jobs' keys, not every job of the table by status and payload (it read
    all 1,000 finished jobs here); a weekly summary's input reads the week's conversation summaries
    of the profile, not all of them."""
    conn = finished_jobs
    user = conn.execute("select memory.user_id_for('job-plans-summaries')").fetchone()["user_id_for"]
    profile = conn.execute(
        "insert into memory.profiles (user_id, is_primary, timezone) values (%s, true, 'Europe/Paris') returning id", [user]
    ).fetchone()["id"]
    conversation = conn.execute(
        "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s)).id", [user, profile]
    ).fetchone()["id"]
    # A summary a day at noon UTC for 200 days back from Tuesday 10 March 2026: two fall in the week of
    # Monday 9 March in Paris (Sunday the 8th at 13:00 there is the week before).
    conn.execute(
        "insert into memory.conversation_summaries (conversation_id, user_id, profile_id, summary, from_turn, to_turn,"
        " created_at) select %s, %s, %s, 'day ' || i, i + 1, i + 1, timestamptz '2026-03-10 12:00+00' - i * interval '1 day'"
        " from generate_series(0, 200) as i",
        [conversation, user, profile],
    )
    # Another profile's summaries (3,000 weeks of them), so reading the table whole costs what it does
    # in a database in use, and thirty weekly summaries of this one, to the week of 30 March (whose
    # Thursday is in April): four are March's.
    other = conn.execute("select memory.user_id_for('job-plans-summaries-other')").fetchone()["user_id_for"]
    elsewhere = conn.execute(
        "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", [other]
    ).fetchone()["id"]
    # And, as in a database in use, other profiles' conversation summaries in the same weeks (100
    # profiles, one a day each), with statistics that have seen them: the week is then read through
    # the profile's range, not all profiles' summaries of the week, whatever the suite left before.
    conn.execute(
        "with profiles as (insert into memory.profiles (user_id, name) select %s, 'busy ' || i"
        " from generate_series(1, 100) as i returning id),"
        " conversation as (select (memory.create_conversation(p_user_id => %s)).id)"
        " insert into memory.conversation_summaries (conversation_id, user_id, profile_id, summary, from_turn, to_turn,"
        " created_at) select x.conversation, %s, x.profile, 'busy', x.turn, x.turn, x.at"
        " from (select c.id as conversation, p.id as profile, row_number() over () as turn,"
        " timestamptz '2026-03-10 12:00+00' - d * interval '1 day' as at"
        " from conversation as c, profiles as p, generate_series(0, 29) as d) as x",
        [other, other, other],
    )
    conn.execute("analyze memory.conversation_summaries")
    conn.execute(
        "insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date,"
        " emotional_summary, key_themes, conversation_count)"
        " select p.user_id, p.id, extract(isoyear from d), extract(week from d), d, d + 6, 'week of ' || d, '{}', 1"
        " from (values (%s::uuid, %s::uuid, 3000), (%s, %s, 30)) as p (user_id, id, weeks)"
        " cross join lateral (select date '2026-03-30' - 7 * i as d from generate_series(0, p.weeks - 1) as i) as w",
        [other, elsewhere, user, profile],
    )
    week = conn.execute(
        "select memory_private.enqueue('summarize_week', jsonb_build_object('profile_id', %s::text, 'week_start',"
        " '2026-03-09'), format('week:%%s:2026-03-09', %s), %s)",
        [profile, profile, user],
    ).fetchone()["enqueue"]
    month = conn.execute(
        "select memory_private.enqueue('summarize_month', jsonb_build_object('profile_id', %s::text, 'month_start',"
        " '2026-03-01'), format('month:%%s:2026-03', %s), %s)",
        [profile, profile, user],
    ).fetchone()["enqueue"]
    conn.execute(
        "update memory_private.jobs set status = 'running', attempts = 1, worker = 'plans', leased_until = now() + interval"
        " '5 minutes' where id = any(%s)",
        [[week, month]],
    )
    for _ in range(CALLS):
        (plan,) = nested_plans(conn, "select memory.job_input(%s, 'plans')", [month], "'weeks_pending'")
        scans = scans_of(plan, "jobs")
        assert scans and all(index_names(s) == {"jobs_kind_dedup_key"} for s in scans), json.dumps(plan)
        assert sum(rows_read(s) for s in scans) <= 4, "at most a row for each of the month's four Mondays"
        (weekly,) = scans_of(plan, "weekly_summaries")
        assert rows_read(weekly) == 4, json.dumps(plan)
        (plan,) = nested_plans(conn, "select memory.job_input(%s, 'plans')", [week], "'summaries'")
        (scan,) = scans_of(plan, "conversation_summaries")
        assert rows_read(scan) == 2, json.dumps(plan)
    document = conn.execute("select memory.job_input(%s, 'plans')", [month]).fetchone()["job_input"]
    assert document["weeks_pending"] == 1, "the week of 9 March is still being summarised"
    assert [w["week_start"] for w in document["weekly_summaries"]] == ["2026-03-02", "2026-03-09", "2026-03-16", "2026-03-23"]
    document = conn.execute("select memory.job_input(%s, 'plans')", [week]).fetchone()["job_input"]
    assert document["summaries"] == ["day 1", "day 0"]



def _notes_read(plans: list[dict], table: str) -> int:
    """Rows of `table` the logged statements read, none of them by a sequential scan."""
    scans = [n for plan in plans for n in scans_of(plan, table) if n["Node Type"].endswith("Scan")]
    assert scans and all(scan["Node Type"] != "Seq Scan" for scan in scans), json.dumps(plans)
    return sum(rows_read(scan) for scan in scans)


def _reads_only_what_it_takes(conn: psycopg.Connection, call: str, table: str, taken: int) -> None:
    """Past plpgsql's fifth call, the pass takes `taken` notes and its statements over `table`
    (choosing the batch, deleting it) read no note by a sequential scan and at most those, twice.
    Each call is rolled back, so each finds the same notes."""
    for _ in range(CALLS):
        conn.execute("savepoint pass")
        before = conn.execute(f"select count(*) as n from memory_private.{table}").fetchone()["n"]
        plans = nested_plans(conn, call, [], f"memory_private.{table}")
        assert before - conn.execute(f"select count(*) as n from memory_private.{table}").fetchone()["n"] == taken
        conn.execute("rollback to savepoint pass")
        assert _notes_read(plans, table) <= 2 * taken, json.dumps(plans)


def _holds_only_the_users_notes(conn: psycopg.Connection, kind: str, user: object, table: str, notes: int) -> None:
    """A claim for one user waits for and holds that user's notes (memory_private.hold_user_notes)
    reading no other note, past plpgsql's fifth call."""
    call = f"select memory_private.hold_user_notes(array['{kind}'], array['{user}'::uuid])"
    for _ in range(CALLS):
        plans = nested_plans(conn, call, [], f"memory_private.{table}")
        assert _notes_read(plans, table) == notes, json.dumps(plans)


def test_a_summary_pass_reads_the_notes_it_takes(admin_url: str) -> None:
    """With 3,000 summary notes waiting, a pass of 10 reads the 10 it takes, in key order, and
    deletes those; a claim's pass for one user reads that user's notes: it never reads every note
    (it sorted them all by time; matched by key it joined them all; with one condition for the
    whole queue and for some users, a generic plan read them all to find the users')."""
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        try:
            user = conn.execute("insert into memory.users (external_id) values ('summary-pass') returning id").fetchone()["id"]
            conversations = [conn.execute("select (memory.create_conversation(%s)).id", [user]).fetchone()["id"]
                             for _ in range(3)]
            conn.execute("insert into memory_private.pending_summaries (conversation_id, to_turn, turns)"
                         " select gen_random_uuid(), 4, 4 from generate_series(1, 3000)")
            conn.execute("insert into memory_private.pending_summaries (conversation_id, to_turn, turns)"
                         " select c, 4, 4 from unnest(%s::uuid[]) as c", [conversations])
            # Statistics of a table never analyzed, as on a new database (rolled back).
            conn.execute("update pg_catalog.pg_class set reltuples = -1, relpages = 0"
                         " where oid = 'memory_private.pending_summaries'::regclass")
            explain_nested(conn)
            _reads_only_what_it_takes(conn, "select memory_private.queue_pending_summaries(10)", "pending_summaries", 10)
            _reads_only_what_it_takes(conn, f"select memory_private.queue_pending_summaries(1000, array['{user}'::uuid])",
                                      "pending_summaries", 3)
            _holds_only_the_users_notes(conn, "summarize_conversation", user, "pending_summaries", 3)
        finally:
            conn.rollback()


def test_an_extraction_pass_reads_the_notes_it_takes(admin_url: str) -> None:
    """The same for the questions noted for extraction: with 3,000 waiting, a pass of 10 reads the
    10 it takes and deletes those, and a claim for one user holds and takes that user's notes."""
    with psycopg.connect(admin_url, row_factory=dict_row) as conn:
        try:
            user = conn.execute("select gen_random_uuid() as id").fetchone()["id"]
            conn.execute("insert into memory_private.pending_extractions (user_id, message_id)"
                         " select gen_random_uuid(), -i from generate_series(1, 3000) as i")
            conn.execute("insert into memory_private.pending_extractions (user_id, message_id)"
                         " select %s, -i from generate_series(3001, 3003) as i", [user])
            conn.execute("update pg_catalog.pg_class set reltuples = -1, relpages = 0"
                         " where oid = 'memory_private.pending_extractions'::regclass")
            explain_nested(conn)
            _reads_only_what_it_takes(conn, "select memory_private.queue_pending_extractions(10)", "pending_extractions", 10)
            _reads_only_what_it_takes(conn, f"select memory_private.queue_pending_extractions(1000, array['{user}'::uuid])",
                                      "pending_extractions", 3)
            _holds_only_the_users_notes(conn, "extract", user, "pending_extractions", 3)
        finally:
            conn.rollback()

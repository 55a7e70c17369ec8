"""memory_private.job_waiters says what the jobs say, whatever the order of the queue's operations,
and no job is left without its waiting row when a claim and a writer touch one user at once.

A statement that may queue work waits for the user's rows and works them out once it holds them, so
it counts a claim that committed meanwhile; a claim skips rows a writer holds and never waits on it.
A claim takes what rounds over the users in the order the jobs define take (a reference computed
here from the jobs), and rows that fell behind their jobs do not stop it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest
from client_helpers import waiting_on
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.rows import dict_row

KIND = "test_waiters_race"
KINDS = ("test_waiters_a", "test_waiters_b")

EXPECTED = """
select w.kind, w.first_due, w.last_served,
    (select min(j.run_after) from memory_private.jobs as j
     where j.status = 'queued' and j.user_id = w.user_id and j.kind = w.kind) as jobs_first_due,
    (select max(j.started_at) from memory_private.jobs as j where j.user_id = w.user_id) as jobs_last_served
from memory_private.job_waiters as w
where w.user_id = any(%(users)s)
"""

UNSEEN = """
select j.user_id, j.kind from memory_private.jobs as j
where j.status = 'queued' and j.user_id = any(%(users)s)
except
select w.user_id, w.kind from memory_private.job_waiters as w where w.first_due is not null
"""


def _users(conn: psycopg.Connection, count: int, label: str) -> list:
    return [row["id"] for row in conn.execute(
        "insert into memory.users (external_id) select format('waiters-%%s-%%s-%%s', %s::text, i, gen_random_uuid())"
        " from generate_series(1, %s) as i returning id", [label, count]).fetchall()]


def _letters(conn: psycopg.Connection) -> str:
    """Eight random letters, for a job kind of the test's own (kinds are letters and underscores)."""
    return conn.execute("select translate(left(md5(random()::text), 8), '0123456789', 'ghijklmnop') as t").fetchone()["t"]


def _agrees(conn: psycopg.Connection, users: list) -> None:
    for row in conn.execute(EXPECTED, {"users": users}).fetchall():
        assert (row["first_due"], row["last_served"]) == (row["jobs_first_due"], row["jobs_last_served"]), row
    assert conn.execute(UNSEEN, {"users": users}).fetchall() == []


@pytest.fixture
def admin(admin_url: str) -> Iterator[psycopg.Connection]:
    conn = psycopg.connect(admin_url, row_factory=dict_row)
    try:
        yield conn
    finally:
        conn.rollback()
        conn.close()


operation = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 1), st.sampled_from(KINDS), st.integers(-3, 3)),
    st.tuples(st.just("claim"), st.sampled_from([KINDS[:1], KINDS[1:], KINDS]), st.integers(1, 3)),
    st.tuples(st.just("complete"), st.integers(0, 5)),
    st.tuples(st.just("fail"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("defer"), st.integers(0, 5)),
    st.tuples(st.just("release"), st.integers(0, 5)),
    st.tuples(st.just("requeue"), st.integers(0, 5)),
    st.tuples(st.just("delete"), st.integers(0, 5)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(operation, min_size=1, max_size=14))
def test_the_rows_say_what_the_jobs_say(admin: psycopg.Connection, operations) -> None:
    with admin.transaction(force_rollback=True):
        users = _users(admin, 2, "property")

        def running(n: int):
            rows = admin.execute("select id from memory_private.jobs where user_id = any(%s) and status = 'running'"
                                 " order by id", [users]).fetchall()
            return rows[n % len(rows)]["id"] if rows else None

        for op in operations:
            name, *args = op
            if name == "add":
                admin.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                              " values (%s, '{}', %s, 5, now() + %s * interval '1 minute')",
                              [args[1], users[args[0]], args[2]])
            elif name == "claim":
                admin.execute("select * from memory.claim_jobs(%s, 'w', %s, null, %s)",
                              [list(args[0]), args[1], users]).fetchall()
            elif name == "requeue":
                admin.execute("update memory_private.jobs set status = 'queued', run_after = now(), started_at = null"
                              " where id = (select id from memory_private.jobs where user_id = any(%s)"
                              " and status = 'done' order by id offset %s limit 1)", [users, args[0]])
            elif name == "delete":
                admin.execute("delete from memory_private.jobs where id = (select id from memory_private.jobs"
                              " where user_id = any(%s) and status = 'queued' order by id offset %s limit 1)",
                              [users, args[0]])
            elif (job := running(args[0])) is not None:
                if name == "complete":
                    admin.execute("select memory.complete_job(%s, 'w')", [job])
                elif name == "fail":
                    admin.execute("select memory.fail_job(%s, 'w', 'boom', %s)", [job, "0 seconds" if args[1] else None])
                elif name == "defer":
                    admin.execute("select memory.defer_job(%s, 'w', interval '1 minute')", [job])
                else:
                    admin.execute("select memory.release_job(%s, 'w')", [job])
            _agrees(admin, users)


@dataclass
class Race:
    """Three sessions on one user's jobs: an autocommit observer, a claimer and a writer."""

    observer: psycopg.Connection
    claimer: psycopg.Connection
    writer: psycopg.Connection
    user: object


@pytest.fixture
def race(admin_url: str, request: pytest.FixtureRequest) -> Iterator[Race]:
    with psycopg.connect(admin_url, row_factory=dict_row, autocommit=True) as observer, \
            psycopg.connect(admin_url, row_factory=dict_row) as claimer, \
            psycopg.connect(admin_url, row_factory=dict_row) as writer:
        (user,) = _users(observer, 1, request.node.name)
        try:
            yield Race(observer, claimer, writer, user)
        finally:
            claimer.rollback()
            writer.rollback()
            observer.execute("delete from memory.users where id = %s", [user])


def test_a_job_queued_while_a_claim_takes_the_users_last_is_waited_on(race: Race) -> None:
    """The claim holds the user's row; the insert waits, then counts the claim's commit."""
    race.observer.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                          " values (%s, '{}', %s, 5, now() - interval '1 hour')", [KIND, race.user])
    (taken,) = race.claimer.execute("select id from memory.claim_jobs(array[%s], 'w', 1)", [KIND]).fetchall()
    pid = race.writer.execute("select pg_backend_pid() as pid").fetchone()["pid"]
    done = threading.Event()

    def queue() -> None:
        race.writer.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                            " values (%s, '{\"n\": 2}', %s, 5, now() - interval '1 minute')", [KIND, race.user])
        race.writer.commit()
        done.set()

    thread = threading.Thread(target=queue)
    thread.start()
    deadline = time.monotonic() + 30
    while not waiting_on(race.observer, pid, "Lock"):
        assert not done.is_set(), "the insert worked the row out under the claim's lock"
        assert time.monotonic() < deadline, "the insert never waited for the claim's row"
    race.claimer.commit()
    thread.join(30)
    assert done.is_set()
    _agrees(race.observer, [race.user])
    (row,) = race.observer.execute("select first_due from memory_private.job_waiters where user_id = %s",
                                   [race.user]).fetchall()
    assert row["first_due"] is not None
    (second,) = race.observer.execute("select id, payload from memory.claim_jobs(array[%s], 'w', 1)", [KIND]).fetchall()
    assert second["id"] != taken["id"] and second["payload"] == {"n": 2}


def test_a_claim_never_waits_for_a_writer(race: Race) -> None:
    """A writer holds the user's row (queued, not committed); a claim of their other job goes on
    without it, and the row it leaves unwritten still says the user waits."""
    race.observer.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                          " values (%s, '{\"n\": 1}', %s, 5, now() - interval '1 hour')", [KIND, race.user])
    race.writer.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after)"
                        " values (%s, '{\"n\": 2}', %s, 5, now() - interval '1 minute')", [KIND, race.user])
    race.claimer.execute("set local lock_timeout = '5s'")
    (first,) = race.claimer.execute("select payload from memory.claim_jobs(array[%s], 'w', 1)", [KIND]).fetchall()
    assert first["payload"] == {"n": 1}
    race.claimer.commit()
    race.writer.commit()
    (row,) = race.observer.execute("select first_due from memory_private.job_waiters where user_id = %s",
                                   [race.user]).fetchall()
    assert row["first_due"] is not None
    (second,) = race.observer.execute("select payload from memory.claim_jobs(array[%s], 'w', 1)", [KIND]).fetchall()
    assert second["payload"] == {"n": 2}
    _agrees(race.observer, [race.user])


job = st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(-4, 2), st.sampled_from(["queued", "done"]),
                st.one_of(st.none(), st.integers(-30, -1)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(job, min_size=1, max_size=20), asked=st.sampled_from([(0,), (1,), (0, 1)]), limit=st.integers(1, 6))
def test_a_claim_serves_the_order_the_jobs_define(admin: psycopg.Connection, jobs, asked, limit) -> None:
    """The claim takes what rounds over the users with due work take, users least recently served
    first (the latest started_at of any of their jobs), then by their earliest due job."""
    with admin.transaction(force_rollback=True):
        users = _users(admin, 6, "order")
        kinds = [f"test_order_{_letters(admin)}_{k}" for k in "ab"]
        for user, kind, due, status, started in jobs:
            admin.execute(
                "insert into memory_private.jobs (kind, payload, user_id, max_attempts, status, run_after, started_at,"
                " finished_at) values (%s, '{}', %s, 5, %s, now() + %s * interval '1 minute',"
                " now() + %s * interval '1 minute', case when %s = 'done' then now() end)",
                [kinds[kind], users[user], status, due, started, status])
        rows = admin.execute("select id, kind, user_id, status, run_after, started_at, run_after <= now() as due"
                             " from memory_private.jobs where user_id = any(%s)", [users]).fetchall()
        wanted = {kinds[k] for k in asked}
        served = {}
        for r in rows:
            if r["started_at"] is not None:
                served[r["user_id"]] = max(served.get(r["user_id"], r["started_at"]), r["started_at"])
        waiting: dict = {}
        for r in sorted((r for r in rows if r["status"] == "queued" and r["due"] and r["kind"] in wanted),
                        key=lambda r: (r["run_after"], r["id"])):
            waiting.setdefault(r["user_id"], []).append(r["id"])
        first_due = {r["user_id"]: min(x["run_after"] for x in rows if x["id"] in waiting[r["user_id"]])
                     for r in rows if r["user_id"] in waiting}
        order = sorted(waiting, key=lambda u: (served.get(u) is not None, served.get(u) or 0, first_due[u], str(u)))
        expected: list[int] = []
        while len(expected) < limit and any(waiting[u] for u in order):
            for u in order:
                if waiting[u] and len(expected) < limit:
                    expected.append(waiting[u].pop(0))
        claimed = admin.execute("select id from memory.claim_jobs(%s, 'w', %s)", [sorted(wanted), limit]).fetchall()
        assert sorted(r["id"] for r in claimed) == sorted(expected)


def test_rows_behind_their_jobs_do_not_stop_a_claim(admin: psycopg.Connection) -> None:
    """Twenty rows that say their users wait, ahead of the one user who does: the claim reads past
    them (a batch four times larger each time) and works them out again."""
    with admin.transaction(force_rollback=True):
        kind = f"test_waiters_behind_{_letters(admin)}"
        behind = _users(admin, 20, "behind")
        (due,) = _users(admin, 1, "due")
        admin.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts)"
                      " select %s, '{}', u, 5 from unnest(%s::uuid[]) as u", [kind, behind])
        admin.execute("update memory_private.jobs set status = 'done', finished_at = now() where kind = %s", [kind])
        admin.execute("update memory_private.job_waiters set first_due = now() - interval '1 hour' where kind = %s",
                      [kind])
        admin.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts, started_at, status,"
                      " finished_at) values (%s, '{}', %s, 5, now(), 'done', now())", [kind, due])
        job = admin.execute("insert into memory_private.jobs (kind, payload, user_id, max_attempts)"
                            " values (%s, '{}', %s, 5) returning id", [kind, due]).fetchone()["id"]
        claimed = admin.execute("select id from memory.claim_jobs(array[%s], 'w', 1)", [kind]).fetchall()
        assert [r["id"] for r in claimed] == [job]
        left = admin.execute("select count(*) as n from memory_private.job_waiters where kind = %s"
                             " and first_due is not null", [kind]).fetchone()["n"]
        assert left == 0


def test_a_claim_queueing_two_kinds_and_a_requeue_of_both_do_not_deadlock(race: Race) -> None:
    """A claim turns the turns' notes into jobs kind by kind (extractions, then summaries), one
    statement each; a requeue of both kinds at once (the lease reaper, retry_dead_jobs) takes the
    same users' rows in one statement. Both take the rows kind by kind, so neither waits on the
    other while holding what the other needs (by user first, this was a deadlock, 40P01)."""
    first, second = sorted([race.user, *_users(race.observer, 1, "deadlock")], key=str)
    ids = [race.observer.execute(
        "insert into memory_private.jobs (kind, payload, user_id, max_attempts, status, finished_at)"
        " values (%s, '{}', %s, 5, 'done', now()) returning id", [kind, user]).fetchone()["id"]
        for kind, user in (("summarize_conversation", first), ("extract", second))]
    insert = ("insert into memory_private.jobs (kind, payload, user_id, max_attempts)"
              " values (%s, '{}', %s, 5)")
    race.writer.execute(insert, ["extract", second])
    pid = race.claimer.execute("select pg_backend_pid() as pid").fetchone()["pid"]
    failures: list[Exception] = []

    def requeue() -> None:
        try:
            race.claimer.execute("update memory_private.jobs set status = 'queued', finished_at = null"
                                 " where id = any(%s)", [ids])
            race.claimer.commit()
        except psycopg.Error as exc:
            failures.append(exc)

    thread = threading.Thread(target=requeue)
    thread.start()
    deadline = time.monotonic() + 30
    while not waiting_on(race.observer, pid, "Lock"):
        assert thread.is_alive() and time.monotonic() < deadline, "the requeue never waited for the claim"
    try:
        race.writer.execute(insert, ["summarize_conversation", first])
        race.writer.commit()
    except psycopg.Error as exc:
        failures.append(exc)
    thread.join(30)
    assert failures == []
    assert race.observer.execute("select count(*) as n from memory_private.jobs where user_id = any(%s)"
                                 " and status = 'queued'", [[first, second]]).fetchone()["n"] == 4
    _agrees(race.observer, [first, second])
    race.observer.execute("delete from memory.users where id = %s", [second if first == race.user else first])

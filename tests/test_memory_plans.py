"""The two hot reads of long-term memory touch one user's rows, whatever the table holds.

memory.remember's dedup lookup and memory.select_memories' pool and scoring run inside plpgsql,
where EXPLAIN cannot reach, so this test reads, through auto_explain (tests/plan_helpers.py), the
plans of the statements the functions themselves run, with custom and with generic plans, against
a table of 100,000 users with 3 memories each plus one user with 1,000. It asserts on plans, never
on timings: an index on memories led by user_id, no sequential scan of memories, and at most that
user's rows read.

Everything happens in one transaction as postgres that is rolled back at the end; ANALYZE's
page and row counts in pg_class are written in place and survive the rollback, so the tables
are vacuumed and analyzed again afterwards to leave the statistics as they were.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from plan_helpers import explain_nested, index_names, nested_plans, profile_with_memories, rows_read, scans_of
from psycopg.rows import dict_row

USERS = 100_000
MEMORIES_EACH = 3
BIG = 1_000


def memories_scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return scans_of(plan, "memories")


@pytest.fixture(scope="module")
def loaded(admin_url: str) -> Iterator[dict[str, Any]]:
    """The big table, inside a transaction that is rolled back when the module is done (as the
    local stack's superuser: turning triggers off for the filler is superuser-only)."""
    started = time.monotonic()
    conn = psycopg.connect(admin_url, row_factory=dict_row)
    run = uuid4().hex[:8]
    try:
        # Bulk filler: 100,000 users, a primary profile each, 3 memories each. It is written with
        # triggers off (session_replication_role = replica) because memory_private.memory_defaults
        # and memory_private.record_memory_event would run 300,000 times (profile lookups plus an
        # audit row each), which is most of the run time and tests nothing here; every column those
        # triggers would set (tenant_id null for the app's own users, profile_id) is written
        # directly, and the foreign keys hold by construction. Only the filler skips them.
        conn.execute("set local session_replication_role = replica")
        conn.execute(
            """
            with u as (
                insert into memory.users (external_id)
                select format('plans-%%s-%%s', %(run)s::text, i) from generate_series(1, %(users)s) as i
                returning id
            ),
            p as (
                insert into memory.profiles (user_id, is_primary) select u.id, true from u
                returning id, user_id
            )
            insert into memory.memories (user_id, profile_id, content, type, confidence, created_at, number)
            select p.user_id, p.id, format('memory %%s of user %%s', k, p.user_id),
                (array['fact', 'goal', 'pattern'])[k], 0.8, now() - k * interval '1 day', k
            from p cross join generate_series(1, %(each)s) as k
            """,
            {"run": run, "users": USERS, "each": MEMORIES_EACH},
        )
        conn.execute("set local session_replication_role = origin")
        # The users under test are written the normal way, triggers and all.
        people = {}
        for name, count in (("big", BIG), ("small", MEMORIES_EACH)):
            user = conn.execute(
                "select memory.user_id_for(%s) as id", [f"plans-{run}-{name}"]
            ).fetchone()["id"]
            profile, _ = profile_with_memories(conn, user, count, f"{name} memory number %s about things")
            people[name] = {"user": user, "profile": profile, "rows": count}
        explain_nested(conn)
        total = conn.execute("select count(*) as n from memory.memories").fetchone()["n"]
        assert total >= USERS * MEMORIES_EACH + BIG
        conn.execute("analyze memory.users, memory.profiles, memory.memories")
        led = {
            column: {
                r["name"].removeprefix("memory.")
                for r in conn.execute(
                    """select i.indexrelid::regclass::text as name
                    from pg_index as i
                    join pg_attribute as a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
                    where i.indrelid = 'memory.memories'::regclass and a.attname = %s""",
                    [column],
                ).fetchall()
            }
            for column in ("user_id", "id")
        }
        yield {"conn": conn, "people": people, "user_led": led["user_id"], "id_led": led["id"],
               "load_seconds": time.monotonic() - started}
    finally:
        conn.rollback()
        conn.close()
        # ANALYZE wrote pg_class counts for a table 300,000 rows bigger: vacuum away the rolled
        # back rows and count again.
        with psycopg.connect(admin_url, autocommit=True) as again:
            again.execute("vacuum (analyze) memory.users, memory.profiles, memory.memories")
        print(f"\nmemory plans: {time.monotonic() - started:.1f}s in all")


def function_plans(conn: psycopg.Connection, call: str, params: list[Any], marker: str, *, generic: bool) -> list:
    """The plans of the function's statements containing `marker`, during one call: custom plans,
    as plpgsql makes for the first executions, or the generic plan it may cache later."""
    # A savepoint: what the call writes (a duplicate's reinforcement) goes with it.
    with conn.transaction(force_rollback=True):
        conn.execute(f"set local plan_cache_mode = {'force_generic_plan' if generic else 'force_custom_plan'}")
        return nested_plans(conn, call, params, marker)


def check_scan(plan: dict[str, Any], user_led: set[str], limit: int, what: str) -> dict[str, Any]:
    scans = memories_scans(plan)
    assert scans, f"{what}: memories is not scanned?"
    for scan in scans:
        assert scan["Node Type"] != "Seq Scan", f"{what}: sequential scan of memories"
        assert index_names(scan) & user_led, f"{what}: {scan['Node Type']} on {index_names(scan)}, not a user_id index"
        assert rows_read(scan) <= limit, f"{what}: read {rows_read(scan)} rows of memories"
        # The planner expects about the user's own rows (extended statistics on user and profile),
        # never a share of the whole table.
        assert scan["Plan Rows"] <= 2 * BIG, f"{what}: estimated {scan['Plan Rows']} rows"
    return scans[0]


CASES = [
    pytest.param("big", False, id="1000-memories-custom-plan"),
    pytest.param("big", True, id="1000-memories-generic-plan"),
    pytest.param("small", False, id="3-memories-custom-plan"),
    pytest.param("small", True, id="3-memories-generic-plan"),
]


@pytest.mark.parametrize(("who", "generic"), CASES)
def test_dedup_lookup_reads_only_the_users_live_memories(loaded, who, generic):
    person = loaded["people"][who]
    for plan in function_plans(
        loaded["conn"],
        "select * from memory.remember(p_content => %s, p_type => 'fact', p_user_id => %s, p_profile_id => %s)",
        [f"{who} memory number 7 about things", person["user"], person["profile"]],
        "operator(extensions.%)", generic=generic,
    ):
        check_scan(plan, loaded["user_led"], person["rows"], "dedup")
        assert plan["Actual Rows"] == 1  # the duplicate is found


@pytest.mark.parametrize(("who", "generic"), CASES)
@pytest.mark.parametrize("query", [None, "7"], ids=["no-query", "query"])
@pytest.mark.parametrize("built", [False, True], ids=["selection-unbuilt", "selection-built"])
def test_selection_reads_only_its_pool(loaded, who, generic, query, built):
    """select_memories scores its pool, by an id index or a user_id index: the profile's candidates
    once its selection is built (2 x memory_select_limit here, plus the one memory the query '7'
    lifts), and every live memory of the profile, listed through a user_id index, while it is not."""
    person = loaded["people"][who]
    conn = loaded["conn"]
    call = ("select * from memory.select_memories(p_user_id => %s, p_profile_id => %s, p_query => %s,"
            " p_limit => 10, p_token_budget => 500)")
    with conn.transaction(force_rollback=True):
        if built:
            conn.execute("select memory_private.refresh_memory_selection(%s)", [person["profile"]])
        else:
            conn.execute("update memory_private.memory_selections set bound = 'Infinity' where profile_id = %s",
                         [person["profile"]])
        scoring = function_plans(conn, call, [person["user"], person["profile"], query], "with scored as",
                                 generic=generic)
        listing = function_plans(conn, call, [person["user"], person["profile"], query],
                                 "select m.id from memory.memories", generic=generic) if not built else []
    pool = min(person["rows"], 20 + (query is not None)) if built else person["rows"]
    for plan in scoring:
        scans = memories_scans(plan)
        allowed = loaded["id_led"] | loaded["user_led"]
        assert scans and all(index_names(scan) and index_names(scan) <= allowed for scan in scans), scans
        assert sum(rows_read(scan) for scan in scans) == pool
    for plan in listing:
        scan = check_scan(plan, loaded["user_led"], person["rows"], "select_memories' pool")
        assert rows_read(scan) == person["rows"]
    assert bool(listing) != built


@pytest.mark.parametrize(("who", "generic"), CASES)
def test_selection_lift_reads_only_the_users_memories(loaded, who, generic):
    """The query's lexical side (lexical_memories) counts its corpus over the profile's live memories
    alone (memory_private.memory_corpus)."""
    person = loaded["people"][who]
    plans = function_plans(
        loaded["conn"],
        "select * from memory.select_memories(p_user_id => %s, p_profile_id => %s, p_query => 'things',"
        " p_limit => 10, p_token_budget => 500)",
        [person["user"], person["profile"]], "mm.profile_id = p_profile_id", generic=generic,
    )
    for plan in plans:
        check_scan(plan, loaded["user_led"], person["rows"], "lexical_memories")


def test_load_time_is_reported(loaded):
    # Not an assertion on speed: the number goes into the test log (pytest -s) and the report.
    print(f"\nmemory plans: loaded {USERS:,} users in {loaded['load_seconds']:.1f}s")
    assert loaded["load_seconds"] > 0

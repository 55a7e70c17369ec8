"""Memory selection reads its pool by id on a database of ordinary size, not every user's memories.

tests/test_memory_plans.py checks the selection against 300,000 memories, where every plan probes an
index. A memories table of a few thousand rows is where a plan may instead scan the table: the
planner expects one row of the profile's (its filters are deliberately not index conditions), so
scanning every user's memories once per call looks cheap. Here the table holds what the suite left,
another user's 1,500 memories and one profile's 60, analyzed, and the scoring statement's plans
(read through auto_explain, tests/plan_helpers.py, past plpgsql's fifth call, custom and generic)
never scan the table: the service role's read exactly the pool through an index on id; the signed-in owner's, under
the memories policy, at most the owner's memories. Everything is rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from plan_helpers import (
    CALLS,
    explain_nested,
    index_names,
    nested_plans,
    nodes,
    other_users_memories,
    profile_with_memories,
    registered_user,
    rows_read,
    scans_of,
    sign_in,
)
from psycopg.rows import dict_row

MEMORIES = 60
#: Other users' memories around the owner's.
OTHERS = 1500
#: The profile's candidates once its selection is built: 2 x memory_select_limit (10).
CANDIDATES = 20


@pytest.fixture(scope="module")
def owner(admin_url: str) -> Iterator[tuple[psycopg.Connection, dict[str, Any]]]:
    conn = psycopg.connect(admin_url, row_factory=dict_row)
    try:
        other_users_memories(conn, OTHERS)
        user = registered_user(conn, "selection-plans@supamem.test")
        profile, _ = profile_with_memories(conn, user, MEMORIES, "memory number %s about the garden")
        conn.execute("select memory_private.refresh_memory_selection(%s)", [profile])
        conn.execute("analyze memory.memories")
        id_led = {
            r["name"].removeprefix("memory.")
            for r in conn.execute(
                """select i.indexrelid::regclass::text as name
                from pg_index as i
                join pg_attribute as a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
                where i.indrelid = 'memory.memories'::regclass and a.attname = 'id'"""
            ).fetchall()
        }
        explain_nested(conn)
        yield conn, {"user": user, "profile": profile, "id_led": id_led}
    finally:
        conn.rollback()
        conn.close()
        # ANALYZE wrote pg_class counts that include the rolled back rows.
        with psycopg.connect(admin_url, autocommit=True) as again:
            again.execute("vacuum (analyze) memory.memories")


@pytest.mark.parametrize("role", ["service_role", "authenticated"], ids=["service-role", "owner"])
@pytest.mark.parametrize("generic", [False, True], ids=["custom-plan", "generic-plan"])
@pytest.mark.parametrize(("query", "lifted"), [(None, 0), ("7", 1)], ids=["no-query", "query"])
def test_selection_never_scans_every_users_memories(owner, role, generic, query, lifted) -> None:
    conn, cast = owner
    call = ("select * from memory.select_memories(p_user_id => %s, p_query => %s, p_limit => 10,"
            " p_token_budget => 500)")
    with conn.transaction(force_rollback=True):
        sign_in(conn, role, cast["user"])
        conn.execute(f"set local plan_cache_mode = {'force_generic_plan' if generic else 'force_custom_plan'}")
        plans = [plan for _ in range(CALLS) for plan in nested_plans(conn, call, [cast["user"], query],
                                                                    "with scored as")]
    for plan in plans:
        scans = scans_of(plan, "memories")
        assert scans and all(scan["Node Type"] != "Seq Scan" for scan in scans), json.dumps(plan)
        read = sum(rows_read(scan) for scan in scans)
        if role == "service_role":
            # Each memory of the pool once, by id: the candidates, and the one memory '7' lifts when
            # it is not one of them.
            assert all(index_names(scan) <= cast["id_led"] for scan in scans), json.dumps(plan)
            assert CANDIDATES <= read <= CANDIDATES + lifted, json.dumps(plan)
        else:
            # The policy's own conditions may lead the planner to the owner's memories instead.
            assert read <= MEMORIES, json.dumps(plan)


def test_the_lift_is_looked_up_per_scored_memory(owner) -> None:
    """A query that lifts every memory of the profile ('garden' is in all of them): each scored
    memory finds its lift by id. Joined as a set whose size the generic plan does not know, every
    scored memory was compared with every lift."""
    conn, cast = owner
    call = ("select * from memory.select_memories(p_user_id => %s, p_query => 'garden', p_limit => 10,"
            " p_token_budget => 500)")
    with conn.transaction(force_rollback=True):
        sign_in(conn, "service_role", cast["user"])
        plans = [plan for _ in range(CALLS) for plan in nested_plans(conn, call, [cast["user"]], "with scored as")]
    types = conn.execute("select count(*) as n from memory.memory_types").fetchone()["n"]
    for plan in plans:
        read = sum(rows_read(scan) for scan in scans_of(plan, "memories"))
        assert read == MEMORIES, json.dumps(plan)
        compared = sum(n.get("Rows Removed by Join Filter", 0) for n in nodes(plan))
        # At most the memory types each scored memory is not of.
        assert compared <= (types - 1) * read, json.dumps(plan)

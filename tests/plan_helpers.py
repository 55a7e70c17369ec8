"""Plans of the statements that functions run themselves (tests/test_function_plans.py,
tests/test_memory_plans.py).

plpgsql runs its queries where EXPLAIN cannot reach, so these helpers load auto_explain (a
superuser's `load`) with nested statements in the test's transaction and read the JSON plans it
logs to the client: the plans of the function's own statements, never a copy of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg

#: plpgsql plans a statement for its parameters five times, then may cache a generic plan.
CALLS = 7


def explain_nested(conn: psycopg.Connection) -> None:
    """Log the plan (with actual rows) of every statement, nested ones included, in this transaction."""
    conn.execute("load 'auto_explain'")
    for setting, value in {
        "auto_explain.log_min_duration": "0", "auto_explain.log_nested_statements": "on",
        "auto_explain.log_analyze": "on", "auto_explain.log_buffers": "on", "auto_explain.log_format": "json",
    }.items():
        conn.execute("select set_config(%s, %s, true)", [setting, value])


def nested_plans(conn: psycopg.Connection, call: str, params: list[Any], marker: str) -> list[dict[str, Any]]:
    """The plans logged during `call` for the statements whose text contains `marker`."""
    logged: list[str] = []

    def keep(diag: psycopg.errors.Diagnostic) -> None:
        if diag.severity_nonlocalized == "LOG" and diag.message_primary:
            logged.append(diag.message_primary)

    conn.add_notice_handler(keep)
    try:
        conn.execute("set local client_min_messages = log")
        conn.execute(call, params).fetchall()
        conn.execute("set local client_min_messages = notice")
    finally:
        conn.remove_notice_handler(keep)
    plans = [json.loads(m.split("plan:", 1)[1]) for m in logged if "plan:" in m]
    # A statement compiled by JIT says so beside its plan: kept with it.
    found = [{**p["Plan"], **({"JIT": p["JIT"]} if "JIT" in p else {})} for p in plans if marker in p["Query Text"]]
    assert found, f"no plan logged for a statement containing {marker!r} during {call!r}"
    return found


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def scans_of(plan: dict[str, Any], relation: str) -> list[dict[str, Any]]:
    return [n for n in nodes(plan) if n.get("Relation Name") == relation]


def index_names(scan: dict[str, Any]) -> set[str]:
    """Indexes a scan reads: its own, or those of the bitmap index scans beneath it."""
    return {n["Index Name"] for n in nodes(scan) if "Index Name" in n}


def rows_read(scan: dict[str, Any]) -> int:
    """Heap rows the scan looked at: those it returned plus those its filters threw away."""
    removed = scan.get("Rows Removed by Filter", 0) + scan.get("Rows Removed by Index Recheck", 0)
    per_loop = scan["Actual Rows"] + removed
    return per_loop * scan.get("Actual Loops", 1)


def pages_read(scan: dict[str, Any]) -> int:
    """Pages (index and heap) the scan touched: a btree key that does not end the scan shows in no
    row count, only here."""
    return scan["Shared Hit Blocks"] + scan["Shared Read Blocks"]


def other_users_memories(conn: psycopg.Connection, count: int) -> None:
    """`count` memories of another user, so the memories table is that of a database in use, where
    scanning it whole costs more than reading a handful of rows by id (on a fresh database's few rows
    a scan is the right plan). Written set-based with triggers off (a superuser's
    session_replication_role), every column the triggers would set given."""
    conn.execute("set local session_replication_role = replica")
    conn.execute(
        "with u as (insert into memory.users (external_id) values (format('plans-other-%%s', gen_random_uuid()))"
        " returning id),"
        " p as (insert into memory.profiles (user_id, is_primary) select u.id, true from u returning id, user_id)"
        " insert into memory.memories (user_id, profile_id, content, type, confidence, number)"
        " select p.user_id, p.id, format('another user''s memory number %%s, about the weather by the harbour', i),"
        " 'fact', 0.5, i from p cross join generate_series(1, %s) as i",
        [count],
    )
    conn.execute("set local session_replication_role = origin")


def profile_with_memories(conn: psycopg.Connection, user: Any, count: int, content: str) -> tuple[Any, list[Any]]:
    """A primary profile of `user` holding `count` facts, the i-th `content` with i for its %s:
    the profile's id and the memories' (on a connection with dict rows)."""
    profile = conn.execute("insert into memory.profiles (user_id, is_primary) values (%s, true) returning id",
                           [user]).fetchone()["id"]
    rows = conn.execute(
        # Numbered after the user's count, which moves past them, as an import numbers its batch (so
        # a caller with triggers off gets numbers too).
        "with n as (update memory.users set memories_numbered = memories_numbered + %(count)s where id = %(user)s"
        " returning memories_numbered - %(count)s as base)"
        " insert into memory.memories (user_id, profile_id, content, type, confidence, reference_count, number)"
        " select %(user)s, %(profile)s, format(%(content)s, i), 'fact', 0.7, i %% 5, n.base + i"
        " from generate_series(1, %(count)s) as i, n returning id",
        {"user": user, "profile": profile, "content": content, "count": count},
    ).fetchall()
    return profile, [r["id"] for r in rows]


def registered_user(conn: psycopg.Connection, email: str) -> Any:
    """A signed-up user (auth.users) registered with the kit: its id (on a connection with dict rows)."""
    user = conn.execute("insert into auth.users (id, email) values (gen_random_uuid(), %s) returning id",
                        [email]).fetchone()["id"]
    conn.execute("select memory.register_user(%s)", [user])
    return user


def sign_in(conn: psycopg.Connection, role: str, user: Any = None) -> None:
    """Run the rest of the transaction as `role`; as `authenticated`, signed in as `user`."""
    conn.execute(f"set local role {role}")
    if role == "authenticated":
        conn.execute("select set_config('request.jwt.claims', %s, true)",
                     [json.dumps({"sub": str(user), "role": "authenticated"})])

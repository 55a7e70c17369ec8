"""Every RPC, called by someone it does not belong to with another user's ids and hostile input.

For each function of schema `memory` (read from the catalog, so a new function is covered the day
it lands) and each outsider (anon, a stranger of the victim's tenant, another tenant's admin),
the call gets the victim's ids, then hostile values: a 1 MB string, tsquery and SQL syntax,
negative, zero and huge numbers, infinite times and intervals, JSON of the wrong shape, large
arrays, NULLs. Each call runs in its own transaction, rolled back afterwards, with a statement
timeout, and must:
- end with a clear SQLSTATE (a data exception, an integrity or permission error, not found, a
  limit or a state error), never an internal error, a timeout or a resource error; a data or
  integrity error must say what is wrong: raised by the kit itself, a not-null refusal (which
  names the column), or the argument's type refusing the value before the kit runs, never a
  check constraint or a cast inside the kit (which name only a constraint or a type);
- return nothing of the victim's (their content carries a marker no outsider may read);
- change nothing of the victim's (every row the victim owns, fingerprinted before the
  transaction rolls back).
The service role is trusted with every user's rows by design and is not an outsider.

The same hostile values are also sent one argument at a time, the others plausible: by the
outsiders, and by the owner and the service role, so a function's later checks, and what only the
service role may call, are reached too, not only the check that refuses the first bad argument.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

from supamem.db import database_url

MARKER = "VICTIMSECRET"
MEGABYTE = "x" * 1_000_000
TSQUERY = "!(a & b) | c:* <-> 'd' \\ (("
SQL_TEXT = "'); delete from memory.users; --"
#: Errors a caller may get: data exceptions, integrity, permission, not found, limits, state,
#: a function of the queue called outside its job, and psycopg's refusal of what it cannot send.
ALLOWED_CLASSES = ("22", "23", "42501", "P0002", "54000", "55000", "0A000", "2201")
#: Data and integrity errors, which must come from the kit's own RAISE (see _unclear).
SAYS_WHAT_IS_WRONG = ("22", "23")
#: Tables whose rows belong to a user (a user_id column), fingerprinted per call.
OWNED_TABLES = """
    select format('%I.%I', c.table_schema, c.table_name)
    from information_schema.columns as c
    join information_schema.tables as t using (table_schema, table_name)
    where c.table_schema in ('memory', 'memory_private') and c.column_name = 'user_id'
        and t.table_type = 'BASE TABLE'
    order by 1
"""


def _functions() -> list[tuple[str, list[tuple[str, str]]]]:
    query = """
        select p.proname, coalesce(p.proargnames, '{}'),
            array(select format_type(t, null) from unnest(p.proargtypes) as t)
        from pg_proc as p
        where p.pronamespace = 'memory'::regnamespace and p.prokind = 'f'
        order by p.proname, p.oid
    """
    with psycopg.connect(database_url()) as conn:
        rows = conn.execute(query).fetchall()
    out = []
    for name, arg_names, arg_types in rows:
        out.append((name, list(zip(arg_names[: len(arg_types)], arg_types, strict=True))))
    return out


FUNCTIONS = _functions()


@pytest.fixture(scope="module")
def world(postgres_conn: psycopg.Connection) -> dict[str, Any]:
    """A victim with something in every kind of row, and the outsiders."""
    def one(query: str, params: list[Any] | None = None) -> Any:
        row = postgres_conn.execute(query, params).fetchone()
        assert row is not None
        return row[0]

    def auth_user() -> uuid.UUID:
        return one("insert into auth.users (id, email) values (gen_random_uuid(), %s) returning id",
                   [f"{uuid.uuid4().hex[:12]}@adversarial.test"])

    tag = uuid.uuid4().hex[:8]
    tenant_a = one("insert into memory.tenants (name) values (%s) returning id", [f"adversarial A {tag}"])
    tenant_b = one("insert into memory.tenants (name) values (%s) returning id", [f"adversarial B {tag}"])
    victim, stranger, admin_b = auth_user(), auth_user(), auth_user()
    postgres_conn.execute("select memory.register_user(%s, %s)", [victim, tenant_a])
    postgres_conn.execute("select memory.register_user(%s, %s)", [stranger, tenant_a])
    postgres_conn.execute("insert into memory.tenant_admins (tenant_id, user_id) values (%s, %s)", [tenant_b, admin_b])
    profile = one("insert into memory.profiles (user_id, name, is_primary) values (%s, 'Main', true) returning id", [victim])
    conv = one("select id from memory.create_conversation(%s, %s, 'profile', %s, p_window_turns => 1000)",
               [victim, f"{MARKER} title", profile])
    for i in range(1, 5):
        postgres_conn.execute("select memory.add_turn(%s, %s, %s)", [conv, f"{MARKER} question {i}", f"{MARKER} answer {i}"])
    message = one("select min(id) from memory.messages where conversation_id = %s", [conv])
    memory = one("select memory_id from memory.remember(%s, 'goal', %s)", [f"{MARKER} wants to run a marathon", victim])
    postgres_conn.execute("select memory.kv_set('prefs', %s, %s)", [Jsonb({"secret": MARKER}), victim])
    postgres_conn.execute("select memory.state_set('active', %s)", [victim])
    postgres_conn.execute("select memory.short_term_set('clarify', %s, p_user_id => %s)", [Jsonb({"q": MARKER}), victim])
    postgres_conn.execute(
        "insert into memory.conversation_summaries (conversation_id, user_id, from_turn, to_turn, summary)"
        " values (%s, %s, 1, 4, %s)", [conv, victim, f"{MARKER} summary"])
    job = one("select min(id) from memory_private.jobs where user_id = %s", [victim])
    # Count the victim's words and queue their turns' extractions and summary now, so pg_cron's
    # minutely passes cannot change their rows mid-test.
    postgres_conn.execute("select memory_private.fold_search_terms()")
    postgres_conn.execute("select memory_private.queue_pending_extractions(null)")
    postgres_conn.execute("select memory_private.queue_pending_summaries(null)")
    postgres_conn.commit()
    return {
        "victim": victim, "tenant": tenant_a, "profile": profile, "conversation": conv, "message": message,
        "memory": memory, "job": job,
        "outsiders": {"anon": None, "stranger": stranger, "other tenant's admin": admin_b},
    }


def _uuid_for(name: str, world: dict[str, Any]) -> Any:
    for key, value in (("conversation", "conversation"), ("memory_id", "memory"), ("profile", "profile"),
                       ("tenant", "tenant"), ("p_id", "conversation")):
        if key in name:
            return world[value]
    return world["victim"]


def _normal_text(name: str) -> str:
    return {"p_role": "user", "p_type": "goal", "p_mode": "chat", "p_status": "active", "p_key": "prefs",
            "p_worker": "adversary", "p_external_id": "someone"}.get(name, "hello")


def _value(name: str, type_: str, variant: int, world: dict[str, Any]) -> Any:
    """Variant 0: the victim's ids with plausible values; 1-4: hostile values of each type."""
    if variant == 4:
        return None
    if type_ == "uuid":
        return uuid.uuid4() if variant == 3 else _uuid_for(name, world)
    if type_ == "uuid[]":
        return [world["memory"]] if variant < 3 else [uuid.uuid4() for _ in range(10_000)]
    if type_ == "bigint":
        victim_id = world["job"] if "job" in name else world["message"]
        return [victim_id, victim_id, -1, 9_223_372_036_854_775_807][variant]
    if type_ == "integer":
        return [10, 0, -1, 2_147_483_647][variant]
    if type_ == "numeric":
        return [0.5, -1, float("nan"), 1e300][variant]
    if type_ == "boolean":
        return [True, False, True, False][variant]
    if type_ == "text":
        return [_normal_text(name), MEGABYTE, TSQUERY, SQL_TEXT][variant]
    if type_ == "text[]":
        return [["extract"], [MEGABYTE], [TSQUERY], ["k"] * 10_000][variant]
    if type_ == "jsonb":
        return [Jsonb({}), Jsonb({"x": MEGABYTE}), Jsonb([1, 2]), "[" * 5000 + "]" * 5000][variant]
    if type_ == "interval":
        return ["5 minutes", "-1 day", "0", "1000000 years"][variant]
    if type_ == "date":
        return ["2026-11-01", "infinity", "-infinity", "5874897-12-31"][variant]
    if type_ == "timestamp with time zone":
        return ["2026-01-01", "infinity", "-infinity", "294276-12-31"][variant]
    if type_ == "vector":
        return ["[" + ",".join(["0.1"] * 384) + "]", "[1,2,3]", "[" + ",".join(["1"] * 16_001) + "]", "[NaN]"][variant]
    raise AssertionError(f"no hostile values for type {type_} (add them here)")


def _fingerprint(conn: psycopg.Connection, tables: list[str], victim: uuid.UUID) -> dict[str, str]:
    out = {}
    for table in tables:
        row = conn.execute(
            sql.SQL("select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) from {} as t where user_id = %s")
            .format(sql.SQL(table)), [victim]).fetchone()
        assert row is not None
        out[table] = row[0]
    return out


def _unclear(error: psycopg.Error) -> bool:
    """A refusal that names only a constraint or a type: a data or integrity error that neither
    the kit raised, nor a not-null constraint, nor the argument's type before any kit code ran."""
    state = error.sqlstate or ""
    if not state.startswith(SAYS_WHAT_IS_WRONG) or state == "23502":
        return False
    context = error.diag.context or ""
    # A parameter's own type refusing it is reported against the portal's parameter.
    return error.diag.source_function != "exec_stmt_raise" and not context.startswith("unnamed portal parameter")


SERVICE_ROLE = "service_role"


def _act_as(conn: psycopg.Connection, who: uuid.UUID | str | None) -> None:
    if who == SERVICE_ROLE:
        conn.execute("select set_config('role', 'service_role', true), set_config('request.jwt.claims', '', true)")
    elif who is None:
        conn.execute("select set_config('role', 'anon', true), set_config('request.jwt.claims', '', true)")
    else:
        claims = json.dumps({"sub": str(who), "role": "authenticated"})
        conn.execute("select set_config('role', 'authenticated', true), set_config('request.jwt.claims', %s, true)", [claims])


def _back_to_owner(conn: psycopg.Connection) -> None:
    conn.execute("reset role")
    conn.execute("select set_config('request.jwt.claims', '', true)")


class _Rollback(Exception):
    pass


Cases = list[tuple[str, list[Any]]]


def _all_at_once(args: list[tuple[str, str]], world: dict[str, Any], variants: range) -> Cases:
    """Every argument with the same variant of values."""
    return [(f"variant {v}", [_value(name, type_, v, world) for name, type_ in args]) for v in variants]


def _one_at_a_time(args: list[tuple[str, str]], world: dict[str, Any]) -> Cases:
    """Each hostile variant of each argument alone, the others the victim's ids and plausible values."""
    plausible = [_value(name, type_, 0, world) for name, type_ in args]
    return [
        (f"{name} variant {v}", [*plausible[:i], _value(name, type_, v, world), *plausible[i + 1:]])
        for i, (name, type_) in enumerate(args) for v in range(1, 5)
    ]


def _run(
    function: str, args: list[tuple[str, str]], world: dict[str, Any], database_url: str,
    callers: dict[str, uuid.UUID | str | None], cases: Cases, outsiders: bool,
) -> list[str]:
    """Problems found calling `function` as each caller with each case of values."""
    problems: list[str] = []
    call = sql.SQL("select * from memory.{}({})").format(
        sql.Identifier(function),
        sql.SQL(", ").join(sql.SQL("{} => %s::{}").format(sql.Identifier(n), sql.SQL(t)) for n, t in args),
    )
    with psycopg.connect(database_url) as conn:
        tables = [r[0] for r in conn.execute(OWNED_TABLES).fetchall()]
        before = _fingerprint(conn, tables, world["victim"])
        conn.commit()
        for caller, who in callers.items():
            for case, values in cases:
                where = f"{caller}, {case}"
                try:
                    with conn.transaction():
                        conn.execute("set local statement_timeout = '10s'")
                        _act_as(conn, who)
                        rows: list[Any] = []
                        error: psycopg.Error | None = None
                        try:
                            with conn.transaction():
                                rows = conn.execute(call, values).fetchall()
                        except psycopg.Error as exc:
                            error = exc
                        if error is not None:
                            state = error.sqlstate or "client"
                            if state != "client" and (not state.startswith(ALLOWED_CLASSES) or _unclear(error)):
                                problems.append(f"{where}: {state} {str(error).splitlines()[0][:160]}")
                        if outsiders:
                            _back_to_owner(conn)
                            after = _fingerprint(conn, tables, world["victim"])
                            changed = [t for t in tables if after[t] != before[t]]
                            if changed:
                                problems.append(f"{where}: changed the victim's rows in {changed}")
                            if MARKER in str(rows):
                                problems.append(f"{where}: returned the victim's content")
                        raise _Rollback
                except _Rollback:
                    pass
    return problems


@pytest.mark.parametrize(("function", "args"), FUNCTIONS, ids=[f for f, _ in FUNCTIONS])
def test_outsiders_get_a_clear_error_and_reach_nothing_of_the_victims(
    function: str, args: list[tuple[str, str]], world: dict[str, Any], database_url: str
) -> None:
    cases = _all_at_once(args, world, range(5)) + _one_at_a_time(args, world)
    assert _run(function, args, world, database_url, world["outsiders"], cases, outsiders=True) == []


@pytest.mark.parametrize(("function", "args"), FUNCTIONS, ids=[f for f, _ in FUNCTIONS])
def test_hostile_input_on_ones_own_rows_gets_a_clear_error(
    function: str, args: list[tuple[str, str]], world: dict[str, Any], database_url: str
) -> None:
    """The victim, signed in, sends hostile values with their own ids: a clear SQLSTATE or a
    result, never an internal error, a timeout or an exhausted resource."""
    cases = _all_at_once(args, world, range(1, 5))
    assert _run(function, args, world, database_url, {"the owner": world["victim"]}, cases, outsiders=False) == []


@pytest.mark.parametrize(("function", "args"), FUNCTIONS, ids=[f for f, _ in FUNCTIONS])
def test_each_hostile_argument_alone_gets_a_clear_error(
    function: str, args: list[tuple[str, str]], world: dict[str, Any], database_url: str
) -> None:
    """One hostile argument at a time, the others plausible, from the owner and the service role:
    every check a function makes is reached, and each says what is wrong."""
    callers = {"the owner": world["victim"], "the service role": SERVICE_ROLE}
    assert _run(function, args, world, database_url, callers, _one_at_a_time(args, world), outsiders=False) == []

"""Every migration applies onto a database in use, and what was stored keeps working.

A team deploys a new version with `supabase db push` onto a project full of its users' data, where
a migration that only ever met an empty database can fail (a constraint the old rows break) or
leave the old rows behind (a derived table or index column never filled for them). Here, in a
throwaway cluster, the first day's migrations build the database, tests/upgrade_data.sql writes
what a team's users would have written through the kit's functions of that day, and every later
migration is applied on top as `supabase db push` applies it. The rows of that day's columns are
unchanged, and the old rows are found, read and written through today's functions: search, the
prompt, a new turn continuing the old numbering, the queued jobs claimed, an admin's reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import schema
from migrate import MIGRATIONS_DIR, throwaway_port
from psycopg import sql
from psycopg.rows import dict_row

DATA = Path(__file__).parent / "upgrade_data.sql"
#: The migrations before this version build the database the data is written into.
FIRST_DAY_ENDS = "20261123"
#: Rows the migrations write themselves.
KITS_OWN = {"memory_private.settings", "memory_private.schedules", "memory.memory_types", "memory.reference_phrases"}
UPGRADE_PORT = throwaway_port(schema._BASE_PORT, 41)  # noqa: SLF001 (the throwaway ports' base)


def checksums(
    conn: psycopg.Connection, columns: dict[str, list[str]], last_job: int | None = None
) -> dict[str, tuple[int, str]]:
    """Each table's row count and an md5 over the given columns of its rows (of the queue, with
    `last_job`, the jobs up to that one: pg_cron's minutely passes queue more once upgraded)."""
    sums = {}
    for table, names in columns.items():
        row = sql.SQL("row({})::text").format(sql.SQL(", ").join(sql.Identifier(n) for n in names))
        where = sql.SQL("id <= {}").format(sql.Literal(last_job)) if table == "memory_private.jobs" and last_job \
            else sql.SQL("true")
        query = sql.SQL("select count(*) as n, md5(coalesce(string_agg({row}, '|' order by {row}), '')) as sum"
                        " from {table} where {where}").format(row=row, table=sql.SQL(table), where=where)
        found = conn.execute(query).fetchone()
        sums[table] = (found["n"], found["sum"])
    return sums


@dataclass(frozen=True)
class Upgraded:
    admin_url: str
    #: The first day's tables and their columns then, and their checksums before the upgrade.
    columns: dict[str, list[str]]
    before: dict[str, tuple[int, str]]
    #: The newest job of the first day.
    last_job: int


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upgraded]:
    first_day = tmp_path_factory.mktemp("first-day")
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        if path.name < FIRST_DAY_ENDS:
            (first_day / path.name).symlink_to(path)
    with schema.throwaway_cluster(UPGRADE_PORT) as (url, admin_url):
        schema.migrate(url, admin_url, first_day)
        with psycopg.connect(admin_url, autocommit=True, row_factory=dict_row) as conn:
            conn.execute(DATA.read_text())
            columns: dict[str, list[str]] = {}
            for r in conn.execute(
                "select format('%I.%I', c.table_schema, c.table_name) as t, c.column_name from information_schema.columns as c"
                " join information_schema.tables as t using (table_schema, table_name)"
                " where c.table_schema in ('memory', 'memory_private') and t.table_type = 'BASE TABLE'"
                " order by 1, c.ordinal_position"
            ).fetchall():
                columns.setdefault(r["t"], []).append(r["column_name"])
            before = checksums(conn, columns)
            last_job = conn.execute("select max(id) as id from memory_private.jobs").fetchone()["id"]
        schema.migrate(url, admin_url)
        yield Upgraded(admin_url, columns, before, last_job)


def test_the_first_days_rows_are_unchanged(upgraded: Upgraded) -> None:
    """The users' rows, that is: the kit's own (settings, schedules) change with the kit."""
    users = {t: c for t, c in upgraded.columns.items() if t not in KITS_OWN}
    with psycopg.connect(upgraded.admin_url, row_factory=dict_row) as conn:
        assert checksums(conn, users, upgraded.last_job) == {t: upgraded.before[t] for t in users}
    assert upgraded.before["memory.messages"][0] == 19 and upgraded.before["memory.memories"][0] == 6  # written


def test_the_old_rows_are_found_read_and_continued(upgraded: Upgraded) -> None:
    with psycopg.connect(upgraded.admin_url, row_factory=dict_row) as conn:
        try:
            ana = conn.execute("select id from memory.users where external_id = 'upgrade-ana'").fetchone()["id"]
            garden = conn.execute("select id from memory.conversations where title = 'The garden'").fetchone()["id"]
            # The words of the old turns and memories are found (their search rows were filled in).
            assert len(conn.execute("select * from memory.search_messages('zucchini', %s)", [ana]).fetchall()) == 6
            found = conn.execute("select content from memory.search_memories('zucchini', %s)", [ana]).fetchall()
            assert sorted(r["content"] for r in found) == ["Grows zucchini on a balcony", "Waters the zucchini on Thursdays"]
            context = conn.execute("select memory.prompt_context(%s, 'the zucchini') as c", [garden]).fetchone()["c"]
            assert [t["user_content"] for t in context["history"]] == [
                f"Turn {i}: my zucchini patch needs water" for i in range(1, 7)]
            assert context["conversation_summary"]["summary"] == "Ana waters her zucchini."
            assert {m["content"] for m in context["memories"]} >= {"Is vegetarian", "Grows zucchini on a balcony"}
            # The old memories are numbered by when they were written; a new one takes the next number.
            numbers = [r["number"] for r in conn.execute(
                "select number from memory.memories where user_id = %s order by created_at, id", [ana])]
            assert numbers == list(range(1, len(numbers) + 1))
            added = conn.execute("select memory_id from memory.remember('Keeps bees', 'fact', %s)", [ana]).fetchone()
            assert conn.execute("select number from memory.memories where id = %s",
                                [added["memory_id"]]).fetchone()["number"] == len(numbers) + 1
            # A new turn continues the old numbering; the queued jobs are claimed, each user's in turn.
            turn = conn.execute("select turn_number from memory.add_turn(%s, 'The flowers are out', 'Lovely',"
                                " p_user_id => %s)", [garden, ana]).fetchone()["turn_number"]
            assert turn == 7
            claimed = conn.execute("select kind, count(*) as n from memory.claim_jobs("
                                   "array['extract', 'summarize_conversation', 'title'], 'w', 100) group by kind order by kind")
            # The eight extractions the old turns queued and the new turn's; the old summary.
            assert {r["kind"]: r["n"] for r in claimed} == {"extract": 9, "summarize_conversation": 1}
        finally:
            conn.rollback()


def test_a_signed_in_admin_and_participant_reads_the_old_rows(upgraded: Upgraded) -> None:
    with psycopg.connect(upgraded.admin_url, row_factory=dict_row) as conn:
        try:
            cy = conn.execute("select id from auth.users where email = 'cy@upgrade.test'").fetchone()["id"]
            trip = conn.execute("select id from memory.conversations where title = 'Trip planning'").fetchone()["id"]
            conn.execute("set local role authenticated")
            conn.execute("select set_config('request.jwt.claims', %s, true)",
                         [json.dumps({"sub": str(cy), "role": "authenticated"})])
            # Acme's admin reads Acme's rows, and nothing of the user without a tenant.
            seen = conn.execute("select u.external_id from memory.users as u order by 1 nulls first").fetchall()
            assert [r["external_id"] for r in seen] == [None, "upgrade-ben"]
            history = conn.execute("select role, content from memory.history(%s) order by id", [trip]).fetchall()
            assert [r["content"] for r in history] == [
                "Where should we stay in Porto?", "Near Ribeira", "I prefer somewhere quiet", "Try Foz"]
            context = conn.execute("select memory.prompt_context(%s) as c", [trip]).fetchone()["c"]
            assert len(context["history"]) == 2
        finally:
            conn.rollback()

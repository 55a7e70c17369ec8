"""supabase/schemas and supabase/migrations build the same database (scripts/schema.py).

Both are built from scratch in throwaway clusters (their own ports, stopped afterwards): one by the
migrations as `supabase db push` applies them, one by the schema files in config.toml's order.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
import schema
from psycopg import sql


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[str, str]]:
    """(superuser URL of the migrated database, superuser URL of the declared one)."""
    with schema.both_databases() as (migrated, declared):
        yield migrated[1], declared[1]


def test_the_schema_files_build_what_the_migrations_build(built: tuple[str, str]) -> None:
    migrated, declared = (schema.catalog(url) for url in built)
    assert "CREATE TABLE memory.messages" in migrated  # the catalog holds the kit's objects
    assert "-- rows of memory_private.settings" in migrated and "supamem-retention-sweep" in migrated
    assert migrated == declared


def test_the_differ_finds_nothing_to_generate(built: tuple[str, str]) -> None:
    statements = schema.migra_statements(*built)
    assert statements == ""
    assert schema.companion_statements(*built, statements) == ""


def test_a_changed_object_is_seen_by_the_check_and_the_differ(built: tuple[str, str]) -> None:
    migrated, declared = built
    before = schema.catalog(declared)
    with psycopg.connect(declared, autocommit=True) as conn:
        original = conn.execute("select pg_get_functiondef('memory.count_messages'::regproc)").fetchone()[0]
        conn.execute(original.replace("count(*)", "count(*) + 0", 1))
        conn.execute("comment on table memory.tenants is 'changed'")
        try:
            after = schema.catalog(declared)
            assert after != before
            assert "changed" in after and "count(*) + 0" in after
            statements = schema.migra_statements(migrated, declared)
            assert "memory.count_messages" in statements and "count(*) + 0" in statements
            # The grants migra leaves out come back for the routine it recreates, and the comment.
            companions = schema.companion_statements(migrated, declared, statements)
            assert "grant execute on function memory.count_messages(uuid) to " in companions
            assert "comment on table memory.tenants is 'changed';" in companions
        finally:
            conn.execute(original)
            conn.execute(
                sql.SQL("comment on table memory.tenants is {}").format(sql.Literal(_comment(migrated, "memory.tenants")))
            )
    assert schema.catalog(declared) == before


def test_a_changed_set_clause_is_seen_by_the_check_and_the_differ(built: tuple[str, str]) -> None:
    """migra compares routines' bodies, not their SET clauses; the companion statements carry them."""
    migrated, declared = built
    before = schema.catalog(declared)
    window = "memory_private.turn_history(uuid,integer)"  # as regprocedure spells it
    with psycopg.connect(declared, autocommit=True) as conn:
        conn.execute(f"alter function {window} reset plan_cache_mode")
        conn.execute("alter function memory.count_messages(uuid) set work_mem = '8MB'")
        try:
            assert schema.catalog(declared) != before
            statements = schema.migra_statements(migrated, declared)
            companions = schema.companion_statements(migrated, declared, statements)
            assert f"alter function {window} reset plan_cache_mode;" in companions
            assert "alter function memory.count_messages(uuid) set work_mem = '8MB';" in companions
            # Only what changed: the search_path both routines pin is left alone.
            assert "search_path" not in companions
        finally:
            conn.execute(f"alter function {window} set plan_cache_mode = force_generic_plan")
            conn.execute("alter function memory.count_messages(uuid) reset work_mem")
    assert schema.catalog(declared) == before


def test_every_schema_file_is_applied_once_in_the_listed_order() -> None:
    files = schema.schema_files()
    on_disk = sorted(schema.SCHEMAS_DIR.rglob("*.sql"))
    assert sorted(files) == on_disk and len(set(files)) == len(files)
    # Dependencies first: the settings table before any area's settings rows, tables before views.
    names = [str(f.relative_to(schema.SCHEMAS_DIR)) for f in files]
    assert names[0] == "foundation/schemas.sql"
    assert names.index("foundation/settings.sql") < names.index("jobs/settings.sql")
    assert names.index("conversations/messages.sql") < names.index("conversations/turns.sql")
    assert names[-1] == "schedules/entries.sql"


def test_an_unlisted_schema_file_is_refused() -> None:
    stray = schema.SCHEMAS_DIR / "identity" / "zz_unlisted_for_test.sql"
    stray.write_text("select 1;\n", encoding="utf-8")
    try:
        with pytest.raises(schema.SchemaError, match="missing from schema_paths: .*zz_unlisted_for_test.sql"):
            schema.schema_files()
    finally:
        stray.unlink()


def _comment(url: str, table: str) -> str:
    with psycopg.connect(url) as conn:
        return conn.execute("select obj_description(%s::regclass, 'pg_class')", [table]).fetchone()[0]

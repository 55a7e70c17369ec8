#!/usr/bin/env python3
"""supabase/schemas is the source of the database; migrations are generated from it and checked.

The schema files hold the current definition of every object (one object or a tight group per
file, with its grants, policies and triggers beside it). `supabase/config.toml`'s
`[db.migrations] schema_paths` lists them in the order they are applied, as the Supabase CLI reads
it for declarative schemas. The first file turns `check_function_bodies` off (as pg_dump's own output
does), so a function may name a table that a later file creates.

    scripts/schema.py check            build the database from the migrations and from the schema
                                       files, each in a throwaway cluster; fail when they differ
    scripts/schema.py diff NAME        write supabase/migrations/<now>_NAME.sql: migra's diff from
                                       the migrations to the schema files (as `supabase db diff`
                                       does with migra), in the project's SQL style, for review
    scripts/schema.py apply URL        load the schema files into a bootstrapped database

What is compared (`catalog`): pg_dump's schema of `memory` and `memory_private` (tables, columns,
constraints, indexes, functions, policies, triggers, grants, comments), the rows of every table in
them (a fresh database holds only configuration: settings, schedules, phrase lists), the extensions,
the realtime publication's tables and pg_cron's jobs. migra does not diff routines' grants or
comments: `diff` adds those from the catalogs; rows, cron jobs and publication membership it leaves
to the author, and `check` fails until the migration carries them.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import psycopg

# Run as a script, its own directory is on the path; tests import it with scripts/ on theirs.
from migrate import MIGRATIONS_DIR, REPO_ROOT, StatementFailed, prepare_local_stack, run_statements, throwaway_port
from psycopg import sql
from psycopg.rows import dict_row

CONFIG = REPO_ROOT / "supabase" / "config.toml"
SCHEMAS_DIR = REPO_ROOT / "supabase" / "schemas"
KIT_SCHEMAS = ("memory", "memory_private")
PG_DUMP = Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")) / "pg_dump"
# Throwaway clusters (scripts/db.sh): one built from the migrations, one from the schema files, on
# ports that follow the local stack's (32361 and 32362 for the default 54322), so a second checkout
# running on its own SUPAMEM_DB_PORT gets its own.
_BASE_PORT = int(os.environ.get("SUPAMEM_DB_PORT", "54322"))
MIGRATIONS_PORT, SCHEMA_PORT = throwaway_port(_BASE_PORT, 39), throwaway_port(_BASE_PORT, 40)


class SchemaError(Exception):
    pass


def schema_files() -> list[Path]:
    """The schema files in the order config.toml's schema_paths gives (globs sorted, each file once)."""
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    patterns = config["db"]["migrations"]["schema_paths"]
    files: list[Path] = []
    base = CONFIG.parent
    for pattern in patterns:
        matches = sorted(base.glob(pattern.removeprefix("./")))
        if not matches:
            raise SchemaError(f"schema_paths entry {pattern!r} matches no file")
        files.extend(m for m in matches if m not in files)
    unlisted = sorted(set(SCHEMAS_DIR.rglob("*.sql")) - set(files))
    if unlisted:
        raise SchemaError("schema files missing from schema_paths: " + ", ".join(str(p) for p in unlisted))
    return files


def apply_schema(url: str) -> None:
    """Every schema file, statement by statement (as migrations run), in one transaction."""
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction(), conn.cursor(binary=True) as cursor:
        for path in schema_files():
            try:
                run_statements(cursor, path.read_text(encoding="utf-8"))
            except StatementFailed as failed:
                raise SchemaError(f"{path.relative_to(REPO_ROOT)} failed:\n  {failed}") from failed.error


def catalog(admin_url: str) -> str:
    """The database's kit-owned state as text, comparable across two databases."""
    dump = subprocess.run(
        [str(PG_DUMP), "--schema-only", "--no-owner", *(f"--schema={s}" for s in KIT_SCHEMAS), admin_url],
        capture_output=True, text=True, check=True,
    ).stdout
    lines = [line for line in dump.splitlines() if not line.startswith(("-- Dumped", "\\restrict", "\\unrestrict"))]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        tables = conn.execute(
            "select format('%%I.%%I', n.nspname, c.relname) from pg_class as c"
            " join pg_namespace as n on n.oid = c.relnamespace"
            " where n.nspname = any(%s) and c.relkind in ('r', 'p') order by 1",
            [list(KIT_SCHEMAS)],
        ).fetchall()
        for (table,) in tables:
            rows = conn.execute(
                sql.SQL("select t::text from {} as t order by 1").format(sql.SQL(table))
            ).fetchall()
            lines += [f"-- rows of {table}", *(r[0] for r in rows)]
        extras = {
            "extensions": "select extname || ' ' || extversion from pg_extension order by 1",
            "publication": "select pubname || ' ' || schemaname || '.' || tablename from pg_publication_tables"
            " order by 1",
            "cron jobs": "select jobname || ' | ' || schedule || ' | ' || command || ' | ' || username"
            " from cron.job order by 1",
        }
        for label, query in extras.items():
            lines += [f"-- {label}", *(r[0] for r in conn.execute(query).fetchall())]
    return "\n".join(lines) + "\n"


def _db_sh(port: int, *args: str) -> str:
    env = dict(os.environ, SUPAMEM_DB_PORT=str(port))
    result = subprocess.run(
        [str(REPO_ROOT / "scripts" / "db.sh"), *args], env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SchemaError(f"scripts/db.sh {' '.join(args)} (port {port}) failed:\n{result.stderr}")
    return result.stdout.strip()


@contextmanager
def throwaway_cluster(port: int) -> Iterator[tuple[str, str]]:
    """A fresh, bootstrapped cluster: (postgres URL, superuser URL); stopped afterwards."""
    _db_sh(port, "reset")
    try:
        url, admin_url = _db_sh(port, "url"), _db_sh(port, "admin-url")
        prepare_local_stack(admin_url, bootstrap_first=True, with_pgtap=False)
        yield url, admin_url
    finally:
        _db_sh(port, "stop")


def migrate(url: str, admin_url: str, migrations_dir: Path = MIGRATIONS_DIR) -> None:
    """scripts/migrate.py: the migrations of `migrations_dir` not applied yet, as `supabase db push`."""
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "migrate.py"), "--database-url", url, "--admin-url", admin_url,
         "--migrations-dir", str(migrations_dir)],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        raise SchemaError(f"the migrations failed:\n{result.stderr}")


@contextmanager
def both_databases() -> Iterator[tuple[tuple[str, str], tuple[str, str]]]:
    with throwaway_cluster(MIGRATIONS_PORT) as migrated, throwaway_cluster(SCHEMA_PORT) as declared:
        migrate(*migrated)
        apply_schema(declared[0])
        yield migrated, declared


def disagreement() -> str:
    """The unified diff of the two catalogs; empty when the schema files and the migrations agree."""
    with both_databases() as (migrated, declared):
        left, right = catalog(migrated[1]), catalog(declared[1])
    return "".join(difflib.unified_diff(
        left.splitlines(keepends=True), right.splitlines(keepends=True),
        fromfile="from supabase/migrations", tofile="from supabase/schemas",
    ))


def migra_statements(from_admin_url: str, to_admin_url: str) -> str:
    """migra's statements that turn the first database into the second ('' when it sees no difference)."""
    migra = Path(sys.executable).parent / "migra"
    if not migra.exists():
        raise SchemaError("migra is not installed (pip install -e '.[dev]')")
    urls = [u.replace("postgresql://", "postgresql+psycopg2://", 1) for u in (from_admin_url, to_admin_url)]
    result = subprocess.run(
        [str(migra), "--unsafe", "--with-privileges", "--exclude_schema", "supabase_migrations", *urls],
        capture_output=True, text=True, check=False,
    )
    # migra exits 2 when it found differences, 0 when none.
    if result.returncode not in (0, 2):
        raise SchemaError(f"migra failed:\n{result.stderr}")
    return result.stdout if result.returncode == 2 else ""


# Each routine of the kit's schemas: signature, ACL (grantees in their order), comment, SET clauses.
ROUTINES_SQL = """
select
    p.oid::regprocedure::text as signature,
    case p.prokind when 'p' then 'procedure' else 'function' end as kind,
    p.proacl is not null as restricted,
    (
        select string_agg(case when a.grantee = 0 then 'public' else quote_ident(r.rolname) end, ', ' order by a.n)
        from aclexplode(p.proacl) with ordinality as a (grantor, grantee, privilege_type, is_grantable, n)
        left join pg_roles as r on r.oid = a.grantee
        where a.grantee <> p.proowner
    ) as grantees,
    obj_description(p.oid, 'pg_proc') as comment,
    p.proconfig as settings
from pg_proc as p
where p.pronamespace = any(%s::regnamespace[])
"""
# Comments on the kit's tables, views and columns.
COMMENTS_SQL = """
select
    case when d.objsubid = 0
        then format('%%s %%s', case c.relkind when 'v' then 'view' else 'table' end, c.oid::regclass)
        else format('column %%s.%%I', c.oid::regclass, a.attname)
    end as target,
    d.description
from pg_description as d
inner join pg_class as c on c.oid = d.objoid and d.classoid = 'pg_class'::regclass
left join pg_attribute as a on a.attrelid = c.oid and a.attnum = d.objsubid
where c.relnamespace = any(%s::regnamespace[]) and c.relkind in ('r', 'p', 'v')
"""


def _routines(admin_url: str) -> dict[str, dict[str, object]]:
    with psycopg.connect(admin_url) as conn, conn.cursor(row_factory=dict_row) as cur:
        return {r["signature"]: r for r in cur.execute(ROUTINES_SQL, [list(KIT_SCHEMAS)]).fetchall()}


def _comments(admin_url: str) -> dict[str, str]:
    with psycopg.connect(admin_url) as conn:
        return dict(conn.execute(COMMENTS_SQL, [list(KIT_SCHEMAS)]).fetchall())


def companion_statements(from_admin_url: str, to_admin_url: str, migra_output: str) -> str:
    """What migra leaves out and the target database has: the grants of every routine migra
    (re)creates or whose grants differ, changed SET clauses of routines it leaves alone, and
    changed comments on routines, tables and columns."""
    before, after = _routines(from_admin_url), _routines(to_admin_url)
    created = {m.lower() for m in re.findall(r"create or replace (?:function|procedure) ([\w.\"]+)\(", migra_output, re.I)}
    lines: list[str] = []
    for signature, routine in sorted(after.items()):
        old = before.get(signature)
        name = signature.split("(")[0].replace('"', "").lower()
        kind = routine["kind"]
        if routine["restricted"] and (
            name in created or old is None or (old["restricted"], old["grantees"]) != (True, routine["grantees"])
        ):
            lines.append(_wrapped(f"revoke all on {kind} {signature}", "from public, anon, authenticated, service_role;"))
            if routine["grantees"]:
                lines.append(_wrapped(f"grant execute on {kind} {signature}", f"to {routine['grantees']};"))
        # migra compares bodies, not SET clauses: a routine it leaves alone gets them here.
        if old is not None and name not in created:
            was, now = _settings(old), _settings(routine)
            lines += [f"alter {kind} {signature} reset {key};" for key in sorted(set(was) - set(now))]
            lines += [f"alter {kind} {signature} set {key} = {_literal(value)};"
                      for key, value in sorted(now.items()) if was.get(key) != value]
        if routine["comment"] != (old or {}).get("comment"):
            lines.append(f"comment on {kind} {signature} is {_literal(routine['comment'])};")
    old_comments, new_comments = _comments(from_admin_url), _comments(to_admin_url)
    for target in sorted(set(old_comments) | set(new_comments)):
        if old_comments.get(target) != new_comments.get(target):
            lines.append(f"comment on {target} is {_literal(new_comments.get(target))};")
    return "\n".join(lines) + "\n" if lines else ""


def _settings(routine: dict[str, object]) -> dict[str, str]:
    """A routine's SET clauses (proconfig's `name=value` entries) by name."""
    return dict(entry.split("=", 1) for entry in routine["settings"] or [])  # type: ignore[union-attr]


def _wrapped(head: str, tail: str) -> str:
    """One statement, its grantees on their own line when it would not fit sqlfluff's 120 columns."""
    return f"{head} {tail}" if len(head) + len(tail) < 120 else f"{head}\n{tail}"


def _literal(text: str | None) -> str:
    return "null" if text is None else "'" + text.replace("'", "''") + "'"


def generate(name: str) -> Path | None:
    """The statements from the migrated database to the declared one, as a new migration file:
    migra's, then the grants and comments it leaves out."""
    with both_databases() as (migrated, declared):
        statements = migra_statements(migrated[1], declared[1])
        statements += companion_statements(migrated[1], declared[1], statements)
    if not statements.strip():
        return None
    version = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    path = MIGRATIONS_DIR / f"{version}_{name}.sql"
    path.write_text(statements, encoding="utf-8")
    # migra writes pg_get_functiondef's upper case; the project's SQL style is sqlfluff's (.sqlfluff).
    subprocess.run([str(Path(sys.executable).parent / "sqlfluff"), "fix", "--quiet", str(path)],
                   capture_output=True, check=False)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="fail when the schema files and the migrations build different databases")
    diff = sub.add_parser("diff", help="write a migration from the migrations' database to the schema files'")
    diff.add_argument("name", help="the migration's name (what it changes, snake_case)")
    apply = sub.add_parser("apply", help="load the schema files into a bootstrapped database")
    apply.add_argument("url")
    args = parser.parse_args(argv)
    try:
        if args.command == "apply":
            apply_schema(args.url)
        elif args.command == "check":
            differences = disagreement()
            if differences:
                print(differences, end="")
                print("error: supabase/schemas and supabase/migrations build different databases", file=sys.stderr)
                return 1
            print("supabase/schemas and supabase/migrations agree")
        else:
            path = generate(args.name)
            if path is None:
                print("no difference: the migrations already build what supabase/schemas declares")
            else:
                print(f"wrote {path.relative_to(REPO_ROOT)}: review it; table rows (settings, schedules), pg_cron"
                      " jobs and publication membership are not diffed: add those by hand (`make schema-check` verifies)")
    except SchemaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

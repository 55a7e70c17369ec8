#!/usr/bin/env python3
"""Apply supabase/migrations/*.sql in order, recording them where the Supabase CLI does.

Each pending file is applied as `supabase db push` applies it: split into statements by the
CLI's own rules (split_statements, a port of supabase/cli pkg/parser), each statement sent alone
with the extended protocol (so a statement the CLI would mis-split fails here too), all of them and
the history row (version, statements, name) in one transaction, so a failed file leaves nothing
behind and earlier files stay applied. Migrations run as the URL's role: `postgres`, which on the
local stack is not a superuser, as on a hosted project.

Local stack only: --bootstrap first loads scripts/bootstrap.sql (roles, auth, extensions that a
hosted Supabase project already has) as the cluster's superuser `supabase_admin` (--admin-url),
--with-pgtap creates pgTAP in schema `extensions` as that superuser (supautils does on a project).
The bootstrap is loaded only into a database with no migrations yet: re-running it on top of
migrations would re-grant Supabase's defaults that a migration may have revoked, and the
database would no longer match a real project. When bootstrap.sql has changed since, the
script says so; `make db-reset` rebuilds.

    DATABASE_URL=postgresql://... python scripts/migrate.py            # a real project
    python scripts/migrate.py --bootstrap --with-pgtap                   # the local stack
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"
# The local stack's superuser (scripts/db.sh initdb), as on Supabase's image.
ADMIN_ROLE = "supabase_admin"
BOOTSTRAP_SQL = REPO_ROOT / "scripts" / "bootstrap.sql"
MIGRATIONS_DIR = REPO_ROOT / "supabase" / "migrations"
# Same rule as the Supabase CLI: <14 digits>_<name>.sql; anything else is skipped.
MIGRATION_RE = re.compile(r"^(?P<version>\d{14})_(?P<name>.+)\.sql$")
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}
# Serialises concurrent runs (two `make db` at once) on the same database.
LOCK_KEY = 0x5355_504D  # "SUPM"


@dataclass(frozen=True)
class Migration:
    version: str
    name: str
    path: Path


class MigrationFailed(Exception):
    pass


def throwaway_port(base: int, offset: int) -> int:
    """The port of a throwaway cluster `offset` above a local stack on `base`, started while tests
    hold connections open: below Linux's ephemeral range (32768-60999), where a client connection's
    own port can take it first (54362 was once in use that way, and the cluster could not start)."""
    return base + offset - 22000 if base >= 32768 else base + offset


def admin_url_for(database_url: str) -> str:
    """The local stack's superuser for a database: $SUPAMEM_ADMIN_URL, else the URL as ADMIN_ROLE."""
    return os.environ.get("SUPAMEM_ADMIN_URL") or make_conninfo(database_url, user=ADMIN_ROLE)


def find_migrations(directory: Path) -> list[Migration]:
    if not directory.is_dir():
        print(f"warning: {directory} does not exist; no migrations to apply", file=sys.stderr)
        return []
    found: dict[str, Migration] = {}
    for path in sorted(directory.iterdir()):
        if not path.is_file():
            continue
        match = MIGRATION_RE.match(path.name)
        if match is None:
            print(
                f"warning: skipping {path.name}: name must be <14 digits>_<name>.sql",
                file=sys.stderr,
            )
            continue
        version = match["version"]
        if version in found:
            raise MigrationFailed(
                f"duplicate migration version {version}: {found[version].path.name} and {path.name}"
            )
        found[version] = Migration(version, match["name"], path)
    return [found[v] for v in sorted(found)]


def describe_error(exc: psycopg.Error, source: str | None = None, base: int = 0) -> str:
    """SQLSTATE, message, and where it happened (line in the file when Postgres says).

    `base` is where the failing statement starts in `source`."""
    diag = exc.diag
    lines = [f"{diag.sqlstate or '?????'}: {diag.message_primary or str(exc).strip()}"]
    if diag.statement_position and source is not None:
        pos = base + int(diag.statement_position)  # 1-based, in characters of the statement
        before = source[: pos - 1]
        line_no = before.count("\n") + 1
        col = pos - (before.rfind("\n") + 1)
        text = source.splitlines()[line_no - 1] if source.splitlines() else ""
        lines.append(f"at line {line_no}, column {col}: {text.strip()}")
    for label, value in (
        ("detail", diag.message_detail),
        ("hint", diag.message_hint),
        ("internal query", diag.internal_query),
        ("internal position", diag.internal_position),
        ("context", diag.context),
    ):
        if value:
            lines.append(f"{label}: {value.strip()}")
    return "\n  ".join(lines)


def run_script(conn: psycopg.Connection, path: Path, label: str) -> None:
    """Run a whole file in one transaction (no history row): bootstrap and the like."""
    text = path.read_text(encoding="utf-8")
    try:
        with conn.transaction():
            # No params: psycopg sends it with the simple query protocol, several statements ok.
            conn.execute(text, prepare=False)
    except psycopg.Error as exc:
        raise MigrationFailed(f"{label} failed ({path.name}):\n  {describe_error(exc, text)}") from exc


BOOTSTRAP_MARK = "supamem local bootstrap sha256:"


def bootstrap(conn: psycopg.Connection) -> None:
    """Load bootstrap.sql into a fresh database; afterwards only check it is still the same."""
    digest = hashlib.sha256(BOOTSTRAP_SQL.read_bytes()).hexdigest()
    row = conn.execute(
        "select (select obj_description(n.oid, 'pg_namespace') from pg_namespace as n where n.nspname = 'extensions'),"
        " to_regclass('supabase_migrations.schema_migrations') is not null"
    ).fetchone()
    recorded, has_table = row if row else (None, False)
    has_migrations = has_table and conn.execute(
        "select exists (select from supabase_migrations.schema_migrations)"
    ).fetchone()[0]
    if not has_migrations:
        run_script(conn, BOOTSTRAP_SQL, "bootstrap")
        conn.execute(
            sql.SQL("comment on schema extensions is {}").format(
                sql.Literal(BOOTSTRAP_MARK + digest)
            )
        )
        print("bootstrap: scripts/bootstrap.sql loaded")
    elif recorded == BOOTSTRAP_MARK + digest:
        print("bootstrap: up to date")
    else:
        print(
            "warning: scripts/bootstrap.sql differs from the one this database was built with"
            " (or that is unknown); it is not re-applied on top of migrations."
            " Run `make db-reset` to rebuild.",
            file=sys.stderr,
        )


def ensure_history_table(conn: psycopg.Connection) -> None:
    # What the Supabase CLI creates on first push; harmless when it already exists.
    with conn.transaction():
        conn.execute("create schema if not exists supabase_migrations")
        conn.execute(
            "create table if not exists supabase_migrations.schema_migrations"
            " (version text not null primary key)"
        )
        conn.execute(
            "alter table supabase_migrations.schema_migrations"
            " add column if not exists statements text[],"
            " add column if not exists name text"
        )


def applied_versions(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute("select version from supabase_migrations.schema_migrations").fetchall()
    return {r[0] for r in rows}


def split_statements(text: str) -> list[str]:
    """Split a migration where the Supabase CLI splits it (supabase/cli pkg/parser, SplitAndTrim).

    A `;` ends a statement unless it is inside quotes ('…', "…"), a dollar quote, a comment (--,
    nested /* */), parentheses, or a BEGIN ATOMIC body; a backslash escapes the next character.
    The CLI's quirks are kept on purpose (nested parentheses close at the first `)`), so a file
    the CLI would split wrongly fails here as it would there. Statements keep their comments,
    lose the trailing `;` and surrounding space; empty ones are dropped.
    """
    statements: list[str] = []
    start = 0

    def ready_next(ch: str, end: int) -> tuple | None:
        """ReadyState.Next: the state after `ch`; None emits a statement."""
        if ch == "$":
            return ("tag", end - 1)
        if ch in "'\"":
            return ("quote", ch, False)
        if ch == "-":
            return ("dash",)
        if ch == "/":
            return ("slash", 0)
        if ch == "\\":
            return ("escape",)
        if ch == ";":
            return None
        if ch == "(":
            return ("atomic", ("ready",), ")")
        if ch in "cC" and end >= 6 and text[end - 6:end].upper() == "ATOMIC":
            return ("atomic", ("ready",), "END")
        return ("ready",)

    def step(st: tuple, ch: str, end: int) -> tuple | None:
        kind = st[0]
        if kind == "ready":
            return ready_next(ch, end)
        if kind == "dash":
            return ("dollar", "\n") if ch == "-" else ready_next(ch, end)
        if kind == "slash":
            depth = st[1]
            window = text[max(0, end - 2):end]
            if window == "/*":
                return ("slash", depth + 1)
            if depth == 0:
                return ready_next(ch, end)
            if window == "*/":
                return ("ready",) if depth == 1 else ("slash", depth - 1)
            return st
        if kind == "quote":
            _, delimiter, escape = st
            if escape:
                return ("quote", delimiter, False) if ch == delimiter else ready_next(ch, end)
            return ("quote", delimiter, ch == delimiter)
        if kind == "dollar":
            delimiter = st[1]
            return ("ready",) if text[max(0, end - len(delimiter)):end] == delimiter else st
        if kind == "tag":
            if ch == "$":
                return ("dollar", text[st[1]:end])
            if ch.isalnum() or ch == "_":
                return st
            return ready_next(ch, end)
        if kind == "escape":
            return ("ready",)
        # atomic: run the wrapped state; the delimiter counts only outside quotes and comments
        _, inner, delimiter = st
        following = step(inner, ch, end)
        if following is not None:
            inner = following
        if inner[0] == "ready" and text[max(0, end - len(delimiter)):end].upper() == delimiter.upper():
            return ("ready",)
        return ("atomic", inner, delimiter)

    current: tuple = ("ready",)
    for index, ch in enumerate(text):
        following = step(current, ch, index + 1)
        if following is None:
            statements.append(text[start:index + 1])
            start, current = index + 1, ("ready",)
        else:
            current = following
    statements.append(text[start:])
    trimmed = (s.rstrip(";").strip() for s in statements)
    return [s for s in trimmed if s]


class StatementFailed(Exception):
    """A statement of a file failed; the message says which and why (describe_error)."""

    def __init__(self, message: str, exc: psycopg.Error) -> None:
        super().__init__(message)
        self.error = exc


def run_statements(cursor: psycopg.Cursor, text: str) -> list[str]:
    """Each statement of `text` alone, split and sent as `supabase db push` sends them (a binary
    cursor: the extended protocol, one statement per message); returns the statements."""
    statements = split_statements(text)
    base = 0
    for statement in statements:
        base = text.find(statement, base)
        try:
            cursor.execute(statement, prepare=False)
        except psycopg.Error as exc:
            raise StatementFailed(describe_error(exc, text, base), exc) from exc
    return statements


def apply_migration(conn: psycopg.Connection, m: Migration) -> None:
    try:
        with conn.transaction(), conn.cursor(binary=True) as cursor:
            statements = run_statements(cursor, m.path.read_text(encoding="utf-8"))
            cursor.execute(
                "insert into supabase_migrations.schema_migrations (version, statements, name)"
                " values (%s, %s, %s)",
                (m.version, statements, m.name),
            )
    except StatementFailed as failed:
        message = f"{m.path.name} failed:\n  {failed}"
        if not failed.error.diag.statement_position:
            where = locate_with_psql(conn, m.path)
            if where:
                message += f"\n  {where}"
        raise MigrationFailed(message) from failed.error


def locate_with_psql(conn: psycopg.Connection, path: Path) -> str | None:
    """Find the failing line when Postgres reports no position (CREATE POLICY, DDL on objects).

    Re-runs the file statement by statement with psql inside begin ... rollback, so nothing is
    kept; psql names the line of the failing statement. Best effort: None when psql is absent.
    """
    psql = shutil.which("psql")
    if psql is None:
        return None
    info = conn.info
    env = dict(os.environ, PGPASSWORD=info.password or os.environ.get("PGPASSWORD", ""))
    cmd = [
        psql, "-X", "-q", "-v", "ON_ERROR_STOP=1",
        "-h", info.host, "-p", str(info.port), "-U", info.user, "-d", info.dbname,
        "-c", "begin", "-f", str(path), "-c", "rollback",
    ]  # fmt: skip
    try:
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in result.stderr.splitlines():
        match = re.match(rf"^psql:{re.escape(str(path))}:(\d+): ERROR:", line)
        if match:
            return f"psql: the failing statement ends at line {match[1]}"
    return None


def is_loopback(url: str) -> bool:
    params = conninfo_to_dict(url)
    hosts = (params.get("host") or os.environ.get("PGHOST") or "").split(",")
    # No host, or a socket directory, is local too.
    return all(h in LOOPBACK_HOSTS or h.startswith("/") or h == "" for h in hosts)


def print_warnings(diag: psycopg.errors.Diagnostic) -> None:
    # Keep NOTICEs quiet (re-runs say "already exists, skipping" a lot); show real warnings.
    if diag.severity_nonlocalized in {"WARNING"}:
        print(f"WARNING: {diag.message_primary}", file=sys.stderr)


def prepare_local_stack(admin_url: str, *, bootstrap_first: bool, with_pgtap: bool) -> None:
    """As the local stack's superuser: the bootstrap, and pgTAP (supautils' part on a project)."""
    try:
        admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        if f'role "{ADMIN_ROLE}" does not exist' in str(exc):
            raise MigrationFailed(
                f"this cluster has no {ADMIN_ROLE} superuser (it predates the Supabase-shaped local"
                " stack, where postgres is not a superuser); `make db-reset` rebuilds it"
            ) from exc
        raise
    with admin:
        admin.add_notice_handler(print_warnings)
        admin.execute(sql.SQL("select pg_advisory_lock({})").format(sql.Literal(LOCK_KEY)))
        if bootstrap_first:
            bootstrap(admin)
        if with_pgtap:
            try:
                with admin.transaction():
                    admin.execute("create extension if not exists pgtap with schema extensions")
            except psycopg.Error as exc:
                raise MigrationFailed(f"create extension pgtap failed:\n  {describe_error(exc)}") from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Apply supabase/migrations to DATABASE_URL, like `supabase db push`.",
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", DEFAULT_URL),
        help=f"target database (default: $DATABASE_URL, else the local stack {DEFAULT_URL})",
    )
    parser.add_argument(
        "--bootstrap",
        action="store_true",
        help="first load scripts/bootstrap.sql (LOCAL stack only: roles, auth, extensions)",
    )
    parser.add_argument(
        "--with-pgtap",
        action="store_true",
        help="create extension pgtap in schema extensions (for the pgTAP tests)",
    )
    parser.add_argument(
        "--admin-url",
        help=f"the local stack's superuser, for --bootstrap and --with-pgtap"
        f" (default: $SUPAMEM_ADMIN_URL, else the database URL as {ADMIN_ROLE})",
    )
    parser.add_argument(
        "--migrations-dir",
        type=Path,
        default=MIGRATIONS_DIR,
        help="directory of <14 digits>_<name>.sql files (default: %(default)s)",
    )
    args = parser.parse_args(argv)

    if args.bootstrap and not is_loopback(args.database_url):
        print(
            "error: --bootstrap is for the local stack only; refusing a non-loopback host",
            file=sys.stderr,
        )
        return 2

    try:
        migrations = find_migrations(args.migrations_dir)
        if args.bootstrap or args.with_pgtap:
            prepare_local_stack(args.admin_url or admin_url_for(args.database_url),
                                bootstrap_first=args.bootstrap, with_pgtap=args.with_pgtap)
        conn = psycopg.connect(args.database_url, autocommit=True, connect_timeout=10)
    except MigrationFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except psycopg.OperationalError as exc:
        print(f"error: cannot connect to the database: {exc}".rstrip(), file=sys.stderr)
        return 1

    with conn:
        conn.add_notice_handler(print_warnings)
        conn.execute(sql.SQL("select pg_advisory_lock({})").format(sql.Literal(LOCK_KEY)))
        applied = skipped = 0
        try:
            ensure_history_table(conn)
            done = applied_versions(conn)
            for m in migrations:
                if m.version in done:
                    skipped += 1
                    continue
                apply_migration(conn, m)
                applied += 1
                print(f"applied {m.path.name}")
            unknown = sorted(done - {m.version for m in migrations})
            if unknown:
                print(
                    f"warning: {len(unknown)} version(s) in the database have no local file: "
                    + ", ".join(unknown),
                    file=sys.stderr,
                )
        except MigrationFailed as exc:
            print(f"error: {exc}", file=sys.stderr)
            print(f"{applied} applied before the failure; later files not attempted", file=sys.stderr)
            return 1
        except psycopg.Error as exc:
            print(f"error: {describe_error(exc)}", file=sys.stderr)
            return 1
    print(f"{applied} applied, {skipped} already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

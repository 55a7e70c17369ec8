"""`supamem export | import | erase`: a user's long-term memories in and out (seed 004).

`register(subparsers)` adds the three subcommands to the `supamem` command line
(supamem/cli.py).

CSV is seed 004's flattened export (supamem/memory_csv.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import textwrap
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from .cli_common import DATABASE_ENVIRONMENT, EXIT_OK, EXIT_USAGE, add_database_url, fail_with
from .db import Database, database_url
from .errors import SupamemError
from .identity import TenantKey
from .memories import MemoryService
from .memory_csv import IMPORTED_PROFILE_NAME, read_csv, write_csv

_USER_HELP = (
    "the user: a Supabase Auth user id, the app's own id for them (e.g. user123) together with"
    " --tenant, or the user_id of an export"
)
_TENANT_HELP = (
    "the tenant the user id belongs to: an integer (seed 003's tenant ids), a tenant name or a"
    " tenant UUID; leave out for the app's own users"
)


# -- commands ---------------------------------------------------------------------------------


def _tenant(value: str | None) -> TenantKey:
    if value is None:
        return None
    return int(value) if value.isdigit() else value


def _service(args: argparse.Namespace) -> MemoryService:
    url = args.database_url or database_url()
    return MemoryService(Database(url, min_size=1, max_size=2))


def _export(args: argparse.Namespace) -> int:
    service = _service(args)
    try:
        export = service.export(args.user, tenant_id=_tenant(args.tenant))
    finally:
        service.db.close()
    # A file opened (and closed by the `with`) here, or standard output, which stays open.
    target: Any = nullcontext(sys.stdout)
    if args.output:
        target = open(args.output, "w", encoding="utf-8", newline="")  # noqa: SIM115
    with target as out:
        if args.format == "csv":
            count = write_csv(export, out)
        else:
            json.dump(export, out, ensure_ascii=False, indent=2)
            out.write("\n")
            count = len(export.get("memories") or [])
    where = args.output or "standard output"
    print(f"exported {count} memories of user {export['user_id']} to {where}", file=sys.stderr)
    if count == 0:
        print("(no memories: check --user and --tenant)", file=sys.stderr)
    return EXIT_OK


def _read_export(path: str, fmt: str) -> dict[str, Any]:
    # Undecoded line ends: a CSV field keeps the \r\n it holds.
    text = (sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()).decode("utf-8")
    if fmt == "auto":
        fmt = "json" if text.lstrip().startswith("{") else "csv"
    if fmt == "csv":
        return read_csv(text)
    document = json.loads(text)
    if not isinstance(document, dict):
        raise SupamemError(f"{path}: not a supamem export (expected a JSON object)")
    return document


def _import(args: argparse.Namespace) -> int:
    export = _read_export(args.file, args.format)
    total = len(export.get("memories") or [])
    service = _service(args)
    try:
        added = service.import_(args.user, export, tenant_id=_tenant(args.tenant))
        user = service.resolve_user(args.user, _tenant(args.tenant))
    finally:
        service.db.close()
    print(f"imported {added} of {total} memories into user {user} ({total - added} were already there)")
    return EXIT_OK


def _erase(args: argparse.Namespace) -> int:
    if not args.yes:
        print(
            "supamem erase: refusing to erase without --yes. This deletes the user and, for good,"
            " their conversations, messages, memories and history. Export first if in doubt:"
            f" supamem export --user {args.user}{' --tenant ' + args.tenant if args.tenant else ''} -o backup.json",
            file=sys.stderr,
        )
        return EXIT_USAGE
    service = _service(args)
    try:
        result = service.erase(args.user, tenant_id=_tenant(args.tenant))
    finally:
        service.db.close()
    print(json.dumps(result, indent=2))
    return EXIT_OK


def _handled(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Errors a user can act on become one line on stderr and an exit code, not a traceback."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (SupamemError, OSError, ValueError) as exc:
            return fail_with(exc)

    return run


def _wrap(text: str) -> str:
    # The help formatter keeps descriptions as written (for the epilog's examples): wrap here.
    return textwrap.fill(text, width=88)


def _user_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, metavar="ID", help=_USER_HELP)
    parser.add_argument("--tenant", metavar="T", help=_TENANT_HELP)
    add_database_url(parser)


def register(subparsers: Any) -> None:
    """Add `export`, `import` and `erase` to the `supamem` command line."""
    export = subparsers.add_parser(
        "export",
        help="write a user's memories (all fields, every status) as JSON or CSV",
        description=_wrap(
            "Write every memory of a user (active, archived, deleted and superseded, with every"
            " field) and their profiles. JSON is the full archive that `supamem import` restores;"
            " CSV is one row per memory with the column names as header (json fields as JSON text),"
            " for spreadsheets. " + DATABASE_ENVIRONMENT
        ),
        epilog=(
            "examples:\n"
            "  supamem export --user user123 --tenant 7 -o user123.json\n"
            "  supamem export --user 1b4e28ba-2fa1-11d2-883f-0016d3cca427 --format csv -o memories.csv"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _user_arguments(export)
    export.add_argument("--format", choices=("json", "csv"), default="json", help="output format (default: json)")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    export.set_defaults(func=_handled(_export))

    imp = subparsers.add_parser(
        "import",
        help="bring memories back from an export (JSON or CSV)",
        description=_wrap(
            "Add the memories of an export to a user. Records keep their ids, so importing the"
            " same file twice adds nothing; links to conversations or messages that no longer"
            " exist are dropped. The usual use is restoring a user after `supamem erase`."
            " CSV files carry no profiles: each profile they name is recreated as"
            f' "{IMPORTED_PROFILE_NAME}". ' + DATABASE_ENVIRONMENT
        ),
        epilog="example:\n  supamem import --user user123 --tenant 7 user123.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _user_arguments(imp)
    imp.add_argument("file", metavar="FILE", help="a file written by `supamem export` (- reads standard input)")
    imp.add_argument(
        "--format", choices=("auto", "json", "csv"), default="auto",
        help="the file's format (default: auto, JSON when it starts with '{')",
    )
    imp.set_defaults(func=_handled(_import))

    erase = subparsers.add_parser(
        "erase",
        help="delete a user and everything of theirs (right to be forgotten)",
        description=_wrap(
            "Delete the user with their conversations, messages, memories, history and summaries,"
            " and the messages they wrote in other people's conversations. Nothing of anyone else"
            " is touched. This cannot be undone: run `supamem export` first to keep a copy."
            " Refuses to run without --yes. " + DATABASE_ENVIRONMENT
        ),
        epilog="example:\n  supamem export --user user123 -o backup.json && supamem erase --user user123 --yes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _user_arguments(erase)
    erase.add_argument("--yes", action="store_true", help="confirm: really erase the user")
    erase.set_defaults(func=_handled(_erase))

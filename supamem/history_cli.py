"""`supamem import-history`: conversation history moved from another store, in batches.

The file holds messages in order, as JSON Lines (one object a line) or one JSON array; each names
an existing conversation (`conversation_id`), its `role` and `content`, and may carry
`created_at`, `author_id`, `metadata`, `tool_calls`, `suggested_values`, `suggested_actions` and
`custom_payload`. JSON Lines are read a line at a time, so a file of any size fits. Each batch is
one `memory.import_messages` call, so it is stored whole or not at all; when a batch is refused
or a line cannot be read, the batches before it stay stored and the command says where to start
again (`--start`); when the connection is lost while a batch is out, it says the batch may be
stored and how to tell.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from .cli_common import DATABASE_ENVIRONMENT, EXIT_OK, add_database_url, fail_with
from .db import Database, database_url
from .errors import DatabaseUnavailableError, SupamemError

#: The most messages memory.import_messages takes in one call.
BATCH_LIMIT = 10_000


def read_messages(path: str) -> Iterator[Any]:
    """The file's messages in order: a JSON array (parsed whole), or JSON Lines, read a line at a
    time so a large export is never held in memory (blank lines skipped)."""
    with contextlib.ExitStack() as stack:
        stream = sys.stdin if path == "-" else stack.enter_context(Path(path).open(encoding="utf-8"))
        number, line = 1, stream.readline()
        while line and not line.strip():
            number, line = number + 1, stream.readline()
        if line.lstrip().startswith("["):
            messages = json.loads(line + stream.read())
            if not isinstance(messages, list):
                raise ValueError(f"{path}: not a JSON array of messages")
            yield from messages
            return
        while line:
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}, line {number}: {exc.msg}") from exc
            number, line = number + 1, stream.readline()


def _import_history(args: argparse.Namespace) -> int:
    if not 1 <= args.batch <= BATCH_LIMIT:
        return fail_with(ValueError(f"--batch must be 1..{BATCH_LIMIT}"))
    if args.start < 0:
        return fail_with(ValueError("--start must be 0 or more"))
    db = Database(args.database_url or database_url(), min_size=1, max_size=1)
    imported, conversations, first, batch, read = 0, set(), args.start, [], 0

    def send() -> None:
        nonlocal imported, first, batch
        rows = db.call("import_messages", messages=Jsonb(batch), extract=args.extract)
        imported += sum(row["imported"] for row in rows)
        conversations.update(str(row["conversation_id"]) for row in rows)
        first, batch = first + len(batch), []

    try:
        for read, message in enumerate(read_messages(args.file), 1):
            if read > args.start:
                batch.append(message)
                if len(batch) == args.batch:
                    send()
        if read < args.start:
            raise ValueError(f"--start must be 0..{read}, the number of messages in the file")
        if batch:
            send()
    except DatabaseUnavailableError as exc:
        code = fail_with(exc)
        if batch:
            # The connection went while the batch was out: it is stored whole or not at all, and
            # only the database can say which (running again from its start could store it twice).
            print(f"supamem: messages {first} to {first + len(batch) - 1} were sent as the connection was lost:"
                  f" they are stored whole or not at all; the {imported} before them in this run were stored."
                  f" Look at the last message of their conversations, then run again with --start {first}"
                  f" if it is not there or --start {first + len(batch)} if it is", file=sys.stderr)
        elif imported:
            print(f"supamem: messages from {first} on were not imported; the {imported} before them in this run"
                  f" were: run again with --start {first}", file=sys.stderr)
        return code
    except (OSError, ValueError, SupamemError) as exc:
        code = fail_with(exc)
        if imported or isinstance(exc, SupamemError):
            print(f"supamem: messages from {first} on were not imported; the {imported} before them in this run"
                  f" were: run again with --start {first} once the file is fixed", file=sys.stderr)
        return code
    finally:
        db.close()
    print(json.dumps({"imported": imported, "conversations": len(conversations)}))
    return EXIT_OK


def register(subparsers: Any) -> None:
    """Add `import-history` to the `supamem` command line."""
    parser = subparsers.add_parser(
        "import-history",
        help="bring conversation history over from another store",
        description=textwrap.fill(
            "Append messages, in the file's order, to existing conversations: turns are numbered"
            " as if each message had been added in turn, each conversation's window and lifetime"
            " apply once per batch, and no per-turn jobs are queued (--extract queues extraction of"
            " the imported questions, through the memory gate). The file is JSON Lines or a JSON"
            " array of objects with conversation_id, role and content, and optionally created_at,"
            " author_id, metadata, tool_calls, suggested_values, suggested_actions and"
            " custom_payload. Each batch is stored whole or not at all. Needs the service role. "
            + DATABASE_ENVIRONMENT,
            width=88,
        ),
        epilog="example:\n  supamem import-history --extract history.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="JSON Lines or a JSON array of messages (- reads standard input)")
    parser.add_argument("--extract", action="store_true", help="queue memory extraction of the imported questions")
    parser.add_argument("--batch", type=int, default=BATCH_LIMIT, metavar="N",
                        help=f"messages per call, each stored whole or not at all (default and most: {BATCH_LIMIT})")
    parser.add_argument("--start", type=int, default=0, metavar="I",
                        help="skip the file's first I messages (to continue after a refused batch)")
    add_database_url(parser)
    parser.set_defaults(func=_import_history)

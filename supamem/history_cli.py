"""`supamem import-history`: conversation history moved from another store, in batches.

The file holds messages in order, as JSON Lines (one object a line) or one JSON array; each names
an existing conversation (`conversation_id`), its `role` and `content`, and may carry
`created_at`, `author_id`, `metadata`, `tool_calls`, `suggested_values`, `suggested_actions` and
`custom_payload`. Each batch is one `memory.import_messages` call, so it is stored whole or not at
all; when a batch is refused, the batches before it stay stored and the command says where to
start again (`--start`).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from .cli_common import DATABASE_ENVIRONMENT, EXIT_OK, add_database_url, fail_with
from .db import Database, database_url
from .errors import SupamemError

#: The most messages memory.import_messages takes in one call.
BATCH_LIMIT = 10_000


def read_messages(path: str) -> list[Any]:
    """The file's messages in order: a JSON array, or JSON Lines (blank lines skipped)."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        messages = json.loads(text)
        if not isinstance(messages, list):
            raise ValueError(f"{path}: not a JSON array of messages")
        return messages
    messages = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                messages.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}, line {number}: {exc.msg}") from exc
    return messages


def batches(messages: list[Any], size: int, start: int) -> Iterator[tuple[int, list[Any]]]:
    """(index of the batch's first message, the batch) from message `start` on."""
    for first in range(start, len(messages), size):
        yield first, messages[first:first + size]


def _import_history(args: argparse.Namespace) -> int:
    try:
        if not 1 <= args.batch <= BATCH_LIMIT:
            raise ValueError(f"--batch must be 1..{BATCH_LIMIT}")
        messages = read_messages(args.file)
        if not 0 <= args.start <= len(messages):
            raise ValueError(f"--start must be 0..{len(messages)} (the file holds {len(messages)} messages)")
    except (OSError, ValueError) as exc:
        return fail_with(exc)
    db = Database(args.database_url or database_url(), min_size=1, max_size=1)
    imported, conversations = 0, set()
    try:
        for first, batch in batches(messages, args.batch, args.start):
            try:
                rows = db.call("import_messages", messages=Jsonb(batch), extract=args.extract)
            except SupamemError as exc:
                code = fail_with(exc)
                print(f"supamem: messages {first} to {first + len(batch) - 1} were not imported; the {imported}"
                      f" before them in this run were: run again with --start {first} once the file is fixed",
                      file=sys.stderr)
                return code
            imported += sum(row["imported"] for row in rows)
            conversations.update(str(row["conversation_id"]) for row in rows)
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

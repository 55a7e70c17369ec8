"""What every `supamem` subcommand shares: exit codes, one-line errors, the connection option.

Exit codes: 0 done; 1 the database could not be reached or refused the request; 2 bad
arguments, input or configuration (argparse's own code for bad arguments).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .db import DEFAULT_DATABASE_URL
from .errors import InvalidInputError, SupamemError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
#: A --once run of the jobs found the model or the embeddings server down: its jobs wait in the queue.
EXIT_UNAVAILABLE = 3

DATABASE_URL_HELP = "Postgres URL (default: $DATABASE_URL, else the local stack)"
#: Where the commands connect, for descriptions and epilogs.
DATABASE_ENVIRONMENT = f"The database is $DATABASE_URL (default: the local stack, {DEFAULT_DATABASE_URL})."


def add_database_url(parser: argparse.ArgumentParser | Any) -> None:
    """The `--database-url` option (on a parser or an argument group)."""
    parser.add_argument("--database-url", metavar="URL", help=DATABASE_URL_HELP)


def fail(message: str, code: int = EXIT_ERROR) -> int:
    """Print `message` as one line on stderr; returns `code`."""
    print(f"supamem: error: {message}", file=sys.stderr)
    return code


def fail_with(exc: BaseException) -> int:
    """One line for an error a user can act on, and its exit code: bad input or configuration
    (ValueError, OSError such as a missing file, the database's 22xxx/23514) is 2; anything else
    the database refused, or its being unreachable, is 1."""
    if isinstance(exc, SupamemError):
        sqlstate = f" (SQLSTATE {exc.sqlstate})" if exc.sqlstate else ""
        return fail(f"{exc}{sqlstate}", EXIT_USAGE if isinstance(exc, InvalidInputError) else EXIT_ERROR)
    return fail(str(exc), EXIT_USAGE)


__all__ = [
    "DATABASE_ENVIRONMENT",
    "DATABASE_URL_HELP",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "add_database_url",
    "fail",
    "fail_with",
]

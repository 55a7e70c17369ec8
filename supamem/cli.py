"""`supamem`: the kit's one command line entry point (console script `supamem`).

Each group of subcommands lives next to the code it drives and registers itself here through a
function `register(subparsers)` that adds its parsers and sets `func` (called with the parsed
arguments, returning the exit code) with `parser.set_defaults(func=...)`. To add commands, write
such a function and list its module in `COMMAND_MODULES`.

    supamem --help
    supamem worker --help
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Modules whose `register(subparsers)` adds subcommands, in the order `--help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "jobs.cli",  # worker, backfill, jobs
    "supamem.memory_cli",  # export, import, erase
    "supamem.history_cli",  # import-history
)

DESCRIPTION = """\
Long-term conversation memory for LLM chat apps, on Supabase.

The database (supabase/migrations) does the bookkeeping; these commands run the LLM jobs it
queues (memory extraction, conversation summaries, titles, weekly and monthly summaries),
inspect the queue, export, import or erase a user's memories, and import conversation history.

Connection: DATABASE_URL (default: the local stack on 127.0.0.1:54322), or the Supabase Data
API when SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY are set. LLM: SUPAMEM_LLM_PROVIDER
(offline by default, no network; "openai" for any OpenAI-compatible server) and SUPAMEM_LLM_*.
"""

EPILOG = """\
examples:
  supamem jobs                                   show the queue
  supamem worker --once                          run every job that is due now, then exit
  supamem worker --concurrency 8                 keep running (Ctrl-C or SIGTERM stops it cleanly)
  supamem backfill --profile UUID --year 2026 --month 10 --run
  supamem export --help                          a user's memories out (and import, erase)
  supamem import-history history.jsonl           conversation history from another store

Run `supamem COMMAND --help` for the options of each command.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="supamem",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    try:
        from supamem import __version__
    except ImportError:  # pragma: no cover
        __version__ = "unknown"
    parser.add_argument("--version", action="version", version=f"supamem {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    return int(func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

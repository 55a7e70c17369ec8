"""The jobs' subcommands of `supamem`: `worker`, `backfill` and `jobs`.

`register(subparsers)` adds them to the `supamem` entry point (supamem/cli.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TextIO
from uuid import UUID

from supamem.cli_common import EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, add_database_url, fail, fail_with
from supamem.db import DEFAULT_DATABASE_URL
from supamem.errors import SupamemError

from .handlers import KIND_GROUPS, KINDS, ClaimedJob, ConfigurationError, describe_llm, make_llm
from .transport import Transport, transport_from_env
from .worker import MAX_LEASE, Summary, Worker, configure_logging, default_worker_name

log = logging.getLogger("supamem.jobs.cli")

_CONNECTION_HELP = f"""\
connection:
  DATABASE_URL                     Postgres URL (default: the local stack,
                                   {DEFAULT_DATABASE_URL});
                                   a Supavisor session-mode URL works too
  SUPABASE_URL                     use the Supabase Data API instead (when port 5432 is blocked),
  SUPABASE_SERVICE_ROLE_KEY        with the project's service role key

LLM:
  SUPAMEM_LLM_PROVIDER             offline (default: deterministic, no network) or openai
  SUPAMEM_LLM_BASE_URL             any OpenAI-compatible /v1 URL (OpenAI, Ollama, vLLM, ...)
  SUPAMEM_LLM_API_KEY              or OPENAI_API_KEY
  SUPAMEM_LLM_MODEL                default gpt-4o-mini
  SUPAMEM_LLM_TIMEOUT / _MAX_RETRIES
"""


# --- shared options -----------------------------------------------------------------------------


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("connection")
    add_database_url(group)
    group.add_argument(
        "--supabase-url",
        metavar="URL",
        help="use the Supabase Data API at this URL (default: $SUPABASE_URL); the key is read "
        "from $SUPABASE_SERVICE_ROLE_KEY, never from the command line",
    )
    common.add_argument(
        "--log-level",
        default=None,
        choices=["debug", "info", "warning", "error"],
        help="JSON log lines on stderr at this level and above (default: info; warning for backfill)",
    )
    return common


def _environment(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
        env.pop("SUPABASE_URL", None)
    if args.supabase_url:
        env["SUPABASE_URL"] = args.supabase_url
    return env


def _kinds(value: str) -> list[str]:
    names = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in names if k not in KINDS and k not in KIND_GROUPS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown job kind(s) {', '.join(unknown) or '(none)'};"
            f" choose from {', '.join((*KINDS, *KIND_GROUPS))}"
        )
    kinds = [kind for name in names for kind in KIND_GROUPS.get(name, (name,))]
    return list(dict.fromkeys(kinds))


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _seconds(minimum: float, maximum: float = math.inf) -> Callable[[str], float]:
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum:g} seconds")
        if number > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:g} seconds")
        return number

    return parse


def _uuid(value: str) -> str:
    try:
        return str(UUID(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a UUID: {value!r}") from None


@contextmanager
def _connected(
    args: argparse.Namespace, pool_size: int = 10, application_name: str = "supamem-jobs"
) -> Iterator[Transport]:
    transport = transport_from_env(_environment(args), pool_size=pool_size, application_name=application_name)
    try:
        yield transport
    finally:
        transport.close()


@contextmanager
def _signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """SIGTERM and SIGINT call `handler` while the block runs (main thread only)."""
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# --- progress -----------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal (stderr); silent when stderr is not a TTY."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, width: int = 30) -> None:
        self.total = max(total, 0)
        self.label = label
        self.done = 0
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._started = time.monotonic()
        self._draw()

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.total = max(self.total, self.done)  # the worker may also take others' jobs of a kind
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        filled = self.width if not self.total else round(self.width * self.done / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.monotonic() - self._started
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {elapsed:5.1f}s")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


# --- worker -------------------------------------------------------------------------------------

WORKER_DESCRIPTION = """\
Run the LLM jobs the database queues: claim up to --concurrency jobs at a time, call the LLM
and write each result through its SQL function (which checks the job's lease, so a job is
written once even when two workers raced for it).

  --loop (default)  keep polling; stop with Ctrl-C or SIGTERM: no new claims, running jobs get
                    --grace seconds to finish, the rest go back to the queue; exit code 0
  --once            run every job that is due now, print a summary per kind and exit 0 (3 when
                    the model or the embeddings server gave no answer: their jobs wait)

Job kinds: extract (long-term memories from a turn), summarize_conversation (every 4 turns),
title (after the first turn), summarize_week, summarize_month (scheduled by pg_cron or
`supamem backfill`) and compare_year (on request).

Logs: one JSON object per line on stderr. Exit codes: 0 done or stopped, 1 database
unreachable, 2 bad arguments or LLM configuration (jobs held are handed back first), 3 a --once
run found the model or the embeddings server down (its jobs wait in the queue).
"""


def _add_worker(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "worker",
        parents=[common],
        help="run the queued LLM jobs (extraction, summaries, titles)",
        description=WORKER_DESCRIPTION,
        epilog=_CONNECTION_HELP
        + "\nexamples:\n"
        "  supamem worker --once\n"
        "  supamem worker --kinds extract,title --concurrency 8 --lease 120\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="drain the jobs due now, then exit")
    mode.add_argument("--loop", action="store_true", help="keep polling until stopped (the default)")
    parser.add_argument(
        "--kinds",
        type=_kinds,
        default=list(KINDS),
        metavar="K1,K2",
        help=f"comma-separated job kinds to run (default: all: {','.join(KINDS)}); "
        f"'summarize' means {','.join(KIND_GROUPS['summarize'])}",
    )
    parser.add_argument(
        "--concurrency", type=_positive_int, default=4, metavar="N", help="jobs run at once (default: 4)"
    )
    parser.add_argument(
        "--lease",
        type=_seconds(1, MAX_LEASE),
        default=300.0,
        metavar="SECONDS",
        help="how long a claim holds a job; renewed every third of it while the job runs, and "
        "after a crash the job is retried once it runs out (default: 300)",
    )
    parser.add_argument(
        "--grace",
        type=_seconds(0),
        default=20.0,
        metavar="SECONDS",
        help="on SIGTERM/Ctrl-C, how long running jobs may finish before they are handed back (default: 20)",
    )
    parser.add_argument("--name", metavar="NAME", help="worker name recorded on its jobs (default: host:pid:random)")
    parser.add_argument(
        "--max-jobs", type=_positive_int, metavar="N", help="claim at most N jobs in total, then finish and exit"
    )
    parser.add_argument(
        "--user",
        dest="user_ids",
        action="append",
        type=uuid.UUID,
        metavar="UUID",
        help="only this user's jobs (memory.users id; repeat for several): a dedicated worker",
    )
    parser.add_argument(
        "--poll-max",
        type=_seconds(0.1),
        default=30.0,
        metavar="SECONDS",
        help="--loop: longest pause between polls of an empty queue (it doubles from 0.5 s; default: 30)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    parser.set_defaults(func=run_worker)


def _print_summary(summary: Summary, as_json: bool, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    if as_json:
        stream.write(json.dumps(summary.as_dict()) + "\n")
    else:
        stream.write(summary.table() + "\n")
    stream.flush()


def run_worker(args: argparse.Namespace) -> int:
    configure_logging(args.log_level or "info")
    try:
        llm = make_llm(_environment(args))
    except ConfigurationError as exc:
        return fail_with(exc)
    name = args.name or default_worker_name()
    try:
        # The worker's name is its connections' application_name: pg_stat_activity shows who is who.
        with _connected(args, args.concurrency + 2, f"supamem-worker {name}") as transport:
            worker = Worker(
                transport,
                llm,
                kinds=args.kinds,
                concurrency=args.concurrency,
                lease=args.lease,
                worker_name=name,
                grace=args.grace,
                max_jobs=args.max_jobs,
                idle_max=args.poll_max,
                user_ids=args.user_ids,
            )
            log.info(
                f"LLM {describe_llm(llm)} via {transport.name}",
                extra={"event": "worker_config", "worker": worker.name},
            )
            with _signals(worker.handle_signal):
                summary = worker.run(once=args.once)
    except (SupamemError, ValueError) as exc:  # the database is down or refused; SUPABASE_URL without its key
        return fail_with(exc)
    finally:
        llm.close()
    _print_summary(summary, args.json)
    return _exit_code(summary)


def _exit_code(summary: Summary) -> int:
    """A run's exit code (and its message): a configuration error, a provider down, or done."""
    if summary.fatal:
        return fail(summary.fatal, EXIT_USAGE)
    if summary.unavailable:
        return fail(f"the {' and the '.join(summary.unavailable)} gave no answer; the jobs wait in the queue",
                    EXIT_UNAVAILABLE)
    return EXIT_OK


# --- backfill -----------------------------------------------------------------------------------

BACKFILL_DESCRIPTION = """\
Queue the summaries of one month of a profile: each week of the month (ISO weeks whose
Thursday falls in it, in the profile's time zone) that has no weekly summary yet, then the
month itself (memory.backfill_month); with --all-profiles, of every profile that had
conversations in that month (memory.backfill_month_for_all), after a cron outage longer than
the schedulers look back. --regenerate queues every week and the month again even
if they exist. Without --run the jobs wait for a worker; with --run this command runs them now
(the weeks first, then the month) with a progress bar, and prints a summary.
"""


def _add_backfill(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "backfill",
        parents=[common],
        help="(re)generate the weekly and monthly summaries of a past month",
        description=BACKFILL_DESCRIPTION,
        epilog=_CONNECTION_HELP
        + "\nexample:\n  supamem backfill --profile 6f1c2d3e-... --year 2026 --month 10 --run\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--profile", type=_uuid, metavar="UUID", help="the profile's id")
    which.add_argument("--all-profiles", action="store_true", help="every profile that had conversations in the month")
    parser.add_argument("--year", type=int, required=True, help="e.g. 2026")
    parser.add_argument("--month", type=int, required=True, choices=range(1, 13), metavar="1..12", help="1 to 12")
    parser.add_argument("--regenerate", action="store_true", help="redo weeks and month that already exist")
    parser.add_argument("--run", action="store_true", help="run the queued jobs now instead of leaving them to a worker")
    parser.add_argument(
        "--concurrency", type=_positive_int, default=4, metavar="N", help="--run: jobs run at once (default: 4)"
    )
    parser.add_argument(
        "--lease", type=_seconds(1, MAX_LEASE), default=300.0, metavar="SECONDS", help="--run: job lease (default: 300)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=run_backfill)


def run_backfill(args: argparse.Namespace) -> int:
    configure_logging(args.log_level or "warning")
    env = _environment(args)
    try:
        llm = make_llm(env) if args.run else None
    except ConfigurationError as exc:
        return fail_with(exc)
    try:
        with _connected(args, pool_size=args.concurrency + 2) as transport:
            month = {"p_year": args.year, "p_month": args.month, "p_regenerate": args.regenerate}
            if args.all_profiles:
                queued = transport.rpc("backfill_month_for_all", month)
            else:
                queued = transport.rpc("backfill_month", {"p_profile_id": args.profile, **month})
            if not args.json:
                whose = "every profile" if args.all_profiles else f"profile {args.profile}"
                print(f"queued {queued} job(s) for {args.year}-{args.month:02d} of {whose}")
            if not args.run:
                if args.json:
                    print(json.dumps({"queued": queued}))
                return EXIT_OK
            summary = _drain_backfill(transport, llm, args, int(queued or 0))
    except (SupamemError, ValueError) as exc:
        return fail_with(exc)
    finally:
        if llm is not None:
            llm.close()
    if args.json:
        print(json.dumps({"queued": queued, **summary.as_dict()}))
    else:
        print(summary.table())
        deferred = summary.total("deferred")
        if deferred:
            print("the month waits for weeks still being summarised elsewhere; a worker will finish it")
    return _exit_code(summary)


def _drain_backfill(transport: Transport, llm: Any, args: argparse.Namespace, queued: int) -> Summary:
    """Run the weekly jobs, then the monthly ones, as two `--once` workers; one summary.

    For one profile the workers claim only its user's jobs: other users' summaries wait for a worker.
    """
    owners = None if args.all_profiles else [str(transport.rpc("profile_user_id", {"p_profile_id": args.profile}))]
    total = Summary()
    progress = Progress(queued, f"{args.year}-{args.month:02d}")
    stopped = False

    def advance(_job: ClaimedJob, _outcome: str) -> None:
        progress.advance()

    try:
        for kinds in (["summarize_week"], ["summarize_month"]):
            if stopped:
                break
            worker = Worker(
                transport,
                llm,
                kinds=kinds,
                concurrency=args.concurrency,
                lease=args.lease,
                on_finish=advance,
                user_ids=owners,
                # A month that finds its weeks still running elsewhere is retried by a worker.
                defer_delay=30.0,
            )
            with _signals(worker.handle_signal):
                summary = worker.run(once=True)
            total.counts.update(summary.counts)
            total.tokens += summary.tokens
            total.fatal = total.fatal or summary.fatal
            total.unavailable = sorted({*total.unavailable, *summary.unavailable})
            stopped = summary.stopped_by_signal or bool(summary.fatal) or bool(summary.unavailable)
            total.stopped_by_signal = total.stopped_by_signal or summary.stopped_by_signal
    finally:
        progress.close()
    total.finished = time.monotonic()
    return total


# --- jobs (stats) -------------------------------------------------------------------------------

_STATS_COLUMNS: Sequence[tuple[str, str]] = (
    ("kind", "kind"),
    ("queued", "queued"),
    ("running", "running"),
    ("dead", "dead"),
    ("waiting", "waiting"),
    ("done_last_hour", "done/h"),
    ("retries_last_hour", "retries/h"),
    ("oldest_queued_age", "oldest queued"),
    ("p50_latency", "p50"),
    ("p95_latency", "p95"),
    ("tokens_last_hour", "tokens/h"),
)


def _short_interval(value: Any) -> str:
    """Postgres interval text ("1 day 02:03:04.5", "00:00:01.234") as "1d 02:03:04" / "1.2s"."""
    if value is None:
        return "-"
    text = str(value)
    days = ""
    if " day" in text:
        head, _, text = text.partition(" day")
        days = f"{head}d "
        text = text.lstrip("s").strip() or "00:00:00"
    parts = text.split(":")
    if len(parts) != 3:
        return str(value)
    hours, minutes, seconds = int(parts[0]), int(parts[1]), float(parts[2])
    if not days and hours == 0 and minutes == 0:
        return f"{seconds:.1f}s"
    return f"{days}{hours:02d}:{minutes:02d}:{int(seconds):02d}"


def format_stats(rows: Sequence[Mapping[str, Any]]) -> str:
    """memory.job_stats() as an aligned text table."""
    if not rows:
        return "no jobs"
    header = [title for _, title in _STATS_COLUMNS]
    table = []
    for row in rows:
        cells = []
        for key, _ in _STATS_COLUMNS:
            value = row.get(key)
            if key in ("oldest_queued_age", "p50_latency", "p95_latency"):
                cells.append(_short_interval(value))
            else:
                cells.append("-" if value is None else str(value))
        table.append(cells)
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in [header, *table]
    ]
    return "\n".join(lines)


def _add_jobs(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "jobs",
        parents=[common],
        help="show the job queue: depth, age, failures, latency and tokens by kind",
        description="Show memory.job_stats(): per job kind, jobs queued (and of those, waiting: not due "
        "yet, backing off after a failure or deferred, e.g. an extraction past its user's rate limit), "
        "running and dead (dead-lettered after their last attempt), jobs done and retried in the last hour, the "
        "age of the oldest queued job, the median and 95th percentile time from queued to done, "
        "and the LLM tokens used in the last hour.",
        epilog=_CONNECTION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--retry-dead", action="store_true",
        help="first queue the dead jobs again, each with all its attempts (memory.retry_dead_jobs): once the cause"
        " of their failures (an LLM outage, a bad key) is fixed",
    )
    parser.add_argument("--kind", metavar="KIND", help="--retry-dead: only the dead jobs of this kind")
    parser.add_argument(
        "--died-since", type=datetime.fromisoformat, metavar="TIME",
        help="--retry-dead: only the jobs that died since this ISO 8601 time (e.g. when an outage began)",
    )
    parser.set_defaults(func=run_stats)


def run_stats(args: argparse.Namespace) -> int:
    configure_logging(args.log_level or "warning")
    if (args.kind or args.died_since) and not args.retry_dead:
        return fail_with(ValueError("--kind and --died-since go with --retry-dead"))
    try:
        with _connected(args, pool_size=1) as transport:
            if args.retry_dead:
                retried = transport.rpc("retry_dead_jobs", {"p_kind": args.kind, "p_died_since": args.died_since})
                print(f"queued {retried} dead job(s) again", file=sys.stderr)
            rows = transport.rpc("job_stats") or []
    except (SupamemError, ValueError) as exc:
        return fail_with(exc)
    print(json.dumps(rows) if args.json else format_stats(rows))
    return EXIT_OK


# --- registration -------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    """Add `worker`, `backfill` and `jobs` to the `supamem` command (supamem/cli.py)."""
    common = _common()
    _add_worker(subparsers, common)
    _add_backfill(subparsers, common)
    _add_jobs(subparsers, common)


__all__ = ["Progress", "format_stats", "register", "run_backfill", "run_stats", "run_worker"]

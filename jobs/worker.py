"""The job runner: claim from the queue, run on a thread pool, keep leases alive, stop cleanly.

    worker = Worker(transport, llm, kinds=["extract"], concurrency=4, lease=300, worker_name="w1")
    summary = worker.run(once=True)      # drain what is claimable now, then return
    summary = worker.run(once=False)     # poll until request_stop() (SIGTERM / SIGINT)

What the database guarantees and the worker relies on (migration 20261122001200_job_queue.sql):
`memory.claim_jobs` hands each queued job to one worker (`for update skip locked`) with a lease;
every result RPC checks that lease in the same transaction as its write, so a job whose lease ran
out (a worker paused or killed) is written by at most one worker. The worker's part:

- a heartbeat extends the lease of each running job every lease/3 seconds;
- a failure goes back with `memory.fail_job` (exponential backoff in SQL, or the provider's
  Retry-After), which dead-letters the job after max_attempts, or at once when the provider
  refused the request itself (HTTP 400, 413, 422: the same request would be refused again);
- a provider that refuses `refusals_to_stop` jobs of a kind in a row, with none of that kind
  done between, refuses what the configuration sends (a parameter or model it does not take),
  not one job's input: the worker hands the last job back and stops, as on a configuration
  error, instead of sending the whole queue to the dead letters;
- a provider that gives no answer (rate limited, a server error, a timeout, no connection, after
  the client's own retries) for `unavailable_to_pause` jobs in a row is down, not failing those
  jobs: each job running when it is seen goes back with `memory.defer_job` (attempt unspent) and
  the worker claims none of that provider's jobs for a pause (`outage_pause`: from its first
  length, doubling each time the job sent after it, the probe, is unanswered too, at least the
  provider's Retry-After, at most the longest); a probe spends its attempt, so a job that fails on
  its own input still reaches the dead letters. Any answer ends the outage. The model and the
  embeddings server are two providers (`embed` jobs use the latter). The pause is kept in the
  database (`memory.provider_unavailable`, by provider and endpoint), and a worker that starts
  takes it over (`memory.provider_outages`) instead of spending attempts to find the provider
  down again: a --once run from cron during the pause leaves the provider's jobs queued, and the
  first run after it sends the probe;
- a deferral by the database is not a failure either: `memory.job_input` puts an extraction
  past its user's rate limit back in the queue (attempt given back) and says so, and the job is
  logged (`job_deferred`, with run_after and the reason) and counted as `deferred`; the rate limit
  met later (54000, "rate limit: ...") hands the job back with `memory.defer_job`, never spending
  an attempt;
- a statement the database cancelled (57014: past statement_timeout, or an operator's cancel)
  wrote nothing: the job goes back with `memory.fail_job` at once, its attempt spent; with the
  database out of reach (no connection) the job waits for its lease to run out and the reaper;
- a lost lease (the lease check's 55000) means another worker owns the job now: log it, drop the
  result; any other refusal of the output (another 55000, such as a memory superseded while the
  model answered, or another 54000, such as a cap every pinned memory fills) fails the job;
- on stop, no new claims; running jobs get `grace` seconds to finish, then whatever is left is
  handed back with `memory.release_job` (the attempt does not count) and `run()` returns.

Job threads are daemon threads: a job still stuck in an LLM call after the grace period cannot
keep the process alive, and its late result is refused by the lease check.

Logs are one JSON object per line (`JsonFormatter`): ts, level, event, job_id, kind, worker,
attempt, duration_ms, tokens, and error / outcome where they apply.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from supamem.errors import (
    DatabaseUnavailableError,
    RateLimitedError,
    StateError,
    StatementCancelledError,
    SupamemError,
)

from .handlers import KINDS, ClaimedJob, ConfigurationError, JobFailed, make_embedder, run_job
from .transport import Transport

log = logging.getLogger("supamem.jobs")

#: What can happen to a claimed job, in the order the summary prints them.
#: The longest lease claim_jobs and extend_lease grant (a day).
MAX_LEASE = 86_400.0
#: How memory_private.hold_lease refuses a job it no longer leases to the worker (55000).
LEASE_LOST = "job {id} is not leased to "
#: How the extraction rate limit refuses (54000); other 54000s are the output's fault.
RATE_LIMIT_PREFIX = "rate limit:"
OUTCOMES = ("done", "skipped", "deferred", "failed", "dead", "lost", "released", "error")


# --- logging ----------------------------------------------------------------------------------

_LOG_FIELDS = (
    "event", "job_id", "kind", "worker", "attempt", "duration_ms", "tokens", "outcome", "status",
    "retry_after", "run_after", "claimed", "provider", "pause", "error",
)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, event, message and the job fields that are set."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
        }
        for name in _LOG_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = value
        entry.setdefault("event", record.name)
        entry["message"] = record.getMessage()
        if record.exc_info and record.levelno >= logging.ERROR:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure_logging(level: str | int = "INFO", stream: TextIO | None = None) -> None:
    """JSON lines on stderr for the `supamem` loggers (idempotent)."""
    root = logging.getLogger("supamem")
    for handler in list(root.handlers):
        if getattr(handler, "_supamem_json", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler._supamem_json = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level if isinstance(level, int) else level.upper())
    root.propagate = False


def default_worker_name() -> str:
    """host:pid:random, unique per process, readable in job rows and logs."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


# --- summary ----------------------------------------------------------------------------------


@dataclass
class Summary:
    """What a run did, per kind and outcome."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    tokens: int = 0
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    stopped_by_signal: bool = False
    fatal: str | None = None
    #: The providers down when the run ended (their jobs wait in the queue).
    unavailable: list[str] = field(default_factory=list)

    def add(self, kind: str, outcome: str, tokens: int | None = None) -> None:
        self.counts[(kind, outcome)] += 1
        self.tokens += tokens or 0

    def total(self, outcome: str | None = None) -> int:
        return sum(n for (_, o), n in self.counts.items() if outcome is None or o == outcome)

    def by_kind(self) -> dict[str, Counter[str]]:
        result: dict[str, Counter[str]] = {}
        for (kind, outcome), n in sorted(self.counts.items()):
            result.setdefault(kind, Counter())[outcome] += n
        return result

    def as_dict(self) -> dict[str, Any]:
        return {
            "kinds": {kind: dict(c) for kind, c in self.by_kind().items()},
            "tokens": self.tokens,
            "seconds": round((self.finished or time.monotonic()) - self.started, 3),
            "stopped_by_signal": self.stopped_by_signal,
            "fatal": self.fatal,
            "unavailable": self.unavailable,
        }

    def table(self) -> str:
        """A plain text table: one row per kind, one column per outcome that occurred."""
        by_kind = self.by_kind()
        columns = [o for o in OUTCOMES if any(c[o] for c in by_kind.values())] or ["done"]
        header = ["kind", *columns]
        rows = [[kind, *(str(c[o]) for o in columns)] for kind, c in by_kind.items()]
        rows.append(["total", *(str(self.total(o)) for o in columns)])
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

        seconds = (self.finished or time.monotonic()) - self.started
        out = [line(header), *(line(r) for r in rows)]
        out.append(f"{self.total()} jobs in {seconds:.1f}s, {self.tokens} tokens")
        return "\n".join(out)


# --- worker -----------------------------------------------------------------------------------


@dataclass
class _Running:
    job: ClaimedJob
    started: float
    next_extend: float
    abandoned: bool = False  # released after the grace period; its thread may still be running
    lost: bool = False  # the heartbeat found the lease gone
    probe: bool = False  # sent to see whether its provider, down, answers again


class Worker:
    """Claims jobs of `kinds` and runs them, `concurrency` at a time.

    Args:
        transport: how to reach the database (`jobs.transport`).
        llm: the LLM client handed to the handlers (`jobs.llm.LLMClient`).
        kinds: job kinds to claim (default: all).
        concurrency: jobs running at once (threads), and the most claimed in one call.
        lease: seconds a claim (and each heartbeat extension) is valid.
        worker_name: recorded on the jobs this worker holds; unique per process.
        grace: seconds running jobs get to finish after a stop request.
        max_jobs: stop claiming after this many claims (None: no limit).
        idle_min / idle_max: polling delay when the queue is empty (loop mode), doubling.
        defer_delay: seconds a monthly summary waits when its weeks are still being made.
        on_finish: called with (job, outcome) after each job, from the job's thread.
        embedder: the embeddings client for embed jobs (default: from SUPAMEM_EMBEDDING_*).
        refusals_to_stop: jobs of one kind the provider may refuse in a row before the worker
            takes it for a configuration error and stops.
        unavailable_to_pause: jobs in a row a provider may leave unanswered before the worker
            takes it for down and pauses its jobs.
        outage_pause: (first, longest) seconds a down provider's jobs wait before one is sent
            to see whether it answers again.
    """

    def __init__(
        self,
        transport: Transport,
        llm: Any,
        kinds: Iterable[str] = KINDS,
        concurrency: int = 4,
        lease: float = 300.0,
        worker_name: str | None = None,
        *,
        grace: float = 20.0,
        max_jobs: int | None = None,
        idle_min: float = 0.5,
        idle_max: float = 30.0,
        defer_delay: float = 30.0,
        on_finish: Callable[[ClaimedJob, str], None] | None = None,
        user_ids: Iterable[str] | None = None,
        embedder: Any = None,
        refusals_to_stop: int = 3,
        unavailable_to_pause: int = 3,
        outage_pause: tuple[float, float] = (15.0, 600.0),
    ) -> None:
        kinds = tuple(dict.fromkeys(kinds))
        unknown = sorted(set(kinds) - set(KINDS))
        if not kinds or unknown:
            raise ValueError(f"unknown job kinds {unknown}; known: {', '.join(KINDS)}")
        if not 1 <= concurrency <= 100:
            raise ValueError("concurrency must be 1..100")
        if not 1 <= lease <= MAX_LEASE:
            raise ValueError("lease must be 1 second to a day")
        if max_jobs is not None and max_jobs < 1:
            raise ValueError("max_jobs must be at least 1")
        if refusals_to_stop < 1:
            raise ValueError("refusals_to_stop must be at least 1")
        if unavailable_to_pause < 1:
            raise ValueError("unavailable_to_pause must be at least 1")
        if not 0 < outage_pause[0] <= outage_pause[1] <= 86400:
            raise ValueError("outage_pause must be (first, longest) seconds, 0 < first <= longest <= a day")
        self.transport = transport
        self.llm = llm
        self.embedder = embedder if embedder is not None or "embed" not in kinds else make_embedder()
        self.kinds = kinds
        self.user_ids = None if user_ids is None else [str(u) for u in user_ids]
        self.concurrency = concurrency
        self.lease = float(lease)
        self.name = worker_name or default_worker_name()
        self.grace = grace
        self.max_jobs = max_jobs
        self.idle_min = idle_min
        self.idle_max = idle_max
        self.defer_delay = defer_delay
        self.on_finish = on_finish
        self.refusals_to_stop = refusals_to_stop
        self.unavailable_to_pause = unavailable_to_pause
        self.outage_pause = outage_pause

        self._cond = threading.Condition()  # an RLock: safe to take from a signal handler
        self._running: dict[int, _Running] = {}
        self._queue: queue.SimpleQueue[_Running | None] = queue.SimpleQueue()
        self._stop = False
        self._stop_now = False
        self._handing_back = 0  # job threads handing their own job back
        self._summary = Summary()
        self._threads: list[threading.Thread] = []
        self._embeddings_queued_at: float | None = None
        # Refusals of each kind's requests since one of that kind was last done.
        self._refusals: Counter[str] = Counter()
        # Each provider's jobs left unanswered since it last answered, the length of its pause, and
        # when the pause ends (time.monotonic()).
        self._unanswered: Counter[str] = Counter()
        # Providers whose pause was over with none of their jobs due to send as a probe.
        self._nothing_to_probe: set[str] = set()
        self._pause_length: dict[str, float] = {}
        self._paused_until: dict[str, float] = {}

    # -- control ---------------------------------------------------------------------------

    def request_stop(self, *, now: bool = False, reason: str = "stop requested") -> None:
        """Stop claiming; with `now`, skip the grace period. Safe from a signal handler."""
        with self._cond:
            first = not self._stop
            self._stop = True
            self._stop_now = self._stop_now or now
            self._cond.notify_all()
        if first:
            log.info(reason, extra={"event": "stopping", "worker": self.name})

    def handle_signal(self, signum: int, _frame: Any = None) -> None:
        """SIGTERM / SIGINT: the first stops claiming (grace period), a second skips the grace."""
        with self._cond:
            again = self._stop
            self._summary.stopped_by_signal = True
        self.request_stop(now=again, reason=f"signal {signum}: stop claiming, finish running jobs")

    @property
    def running_jobs(self) -> list[int]:
        with self._cond:
            return sorted(self._running)

    # -- the run -----------------------------------------------------------------------------

    def run(self, *, once: bool) -> Summary:
        """Claim and run jobs until the queue is drained (`once`) or a stop is requested."""
        summary = self._summary
        log.info(
            "worker started",
            extra={"event": "worker_started", "worker": self.name, "kind": ",".join(self.kinds)},
        )
        self._threads = [
            threading.Thread(target=self._job_thread, name=f"job-{i}", daemon=True)
            for i in range(self.concurrency)
        ]
        heartbeat = threading.Thread(target=self._heartbeat_thread, name="heartbeat", daemon=True)
        for thread in [*self._threads, heartbeat]:
            thread.start()
        try:
            try:
                self._take_over_outages()
                self._claim_loop(once)
            except BaseException:
                # Claiming failed for good (once mode): hand back what is held, then report it.
                self.request_stop(now=True, reason="claiming failed: releasing held jobs")
                raise
            finally:
                self._wind_down()
        finally:
            with self._cond:
                self._stop = True
                self._cond.notify_all()
            for _ in self._threads:
                self._queue.put(None)
            summary.finished = time.monotonic()
            # Down, unless its pause was over and none of its jobs was due to send it: then it is
            # not known to be down any more.
            with self._cond:
                summary.unavailable = sorted(
                    provider for provider, n in self._unanswered.items()
                    if n >= self.unavailable_to_pause and provider not in self._nothing_to_probe
                )
        log.info(
            "worker stopped",
            extra={"event": "worker_stopped", "worker": self.name, "tokens": summary.tokens},
        )
        return summary

    def _claim_loop(self, once: bool) -> None:
        claimed_total = 0
        claiming = True
        idle = self.idle_min
        while True:
            with self._cond:
                if self._stop:
                    return
                free = self.concurrency - len(self._running)
            if self.max_jobs is not None:
                free = min(free, self.max_jobs - claimed_total)
            claimed: list[ClaimedJob] = []
            probed: list[ClaimedJob] = []
            kinds, probe, wake, probing = self._claimable(once)
            if claiming and free > 0:
                try:
                    # The probe first: a busy queue of the other provider's jobs must not keep it waiting.
                    if probe:
                        probed = self._claim(probe, 1, probe=True)
                        claimed += probed
                        with self._cond:
                            if probed:
                                self._nothing_to_probe.difference_update(_provider(kind) for kind in probe)
                            else:
                                self._nothing_to_probe.update(_provider(kind) for kind in probe)
                    if kinds and len(claimed) < free:
                        claimed += self._claim(kinds, free - len(claimed))
                except SupamemError as exc:
                    claimed_total += len(claimed)
                    # Down, or a transient error (a serialization failure, a 5xx from the API):
                    # a long-running worker backs off and tries again; a --once run reports it.
                    log.warning(
                        f"claiming failed: {exc}",
                        extra={"event": "claim_failed", "worker": self.name, "error": str(exc)},
                    )
                    if once:
                        raise
                    self._wait(idle)
                    idle = min(idle * 2, self.idle_max)
                    continue
                claimed_total += len(claimed)
                if once and len(claimed) < free and not (probed or probing):
                    # Drained: what was claimable at this moment is taken (once a probe sent is
                    # answered, its provider's jobs are claimable too).
                    claiming = False
                if self.max_jobs is not None and claimed_total >= self.max_jobs:
                    claiming = False
                if claimed:
                    idle = self.idle_min
            with self._cond:
                busy = bool(self._running)
                if not claiming and not busy:
                    return
                if self._stop:
                    return
                if claimed and len(self._running) < self.concurrency:
                    continue  # more may be waiting: claim again right away
                if not claiming or len(self._running) >= self.concurrency:
                    self._cond.wait(timeout=1.0)  # until a job finishes or a stop
                    continue
            # Loop mode, nothing to claim: poll again later, sooner if a job finishes or a pause ends
            # (and then as soon as the queue is, for the probe).
            if wake is not None and wake < idle:
                self._wait(wake)
                idle = self.idle_min
            else:
                self._wait(idle)
                idle = min(idle * 2, self.idle_max)

    def _wait(self, seconds: float) -> None:
        with self._cond:
            if not self._stop:
                self._cond.wait(timeout=seconds)

    def _claimable(self, once: bool) -> tuple[list[str], list[str], float | None, bool]:
        """The kinds to claim; the kinds to claim one job of, to see whether their provider answers
        again (its pause over, none of its jobs running); the seconds until the next pause ends; and
        whether a probe is running. One look at the running jobs for all four: a probe that ended
        between two looks would end a `once` run with its provider's jobs still claimable. A
        `once` run does not wait for a pause to end."""
        now = time.monotonic()
        claim: list[str] = []
        probe: list[str] = []
        wake: float | None = None
        with self._cond:
            busy = {_provider(r.job.kind) for r in self._running.values()}
            probing = any(r.probe for r in self._running.values())
            for kind in self.kinds:
                provider = _provider(kind)
                until = self._paused_until.get(provider, now)
                if self._unanswered[provider] < self.unavailable_to_pause:
                    claim.append(kind)
                elif until > now:
                    if not once:
                        wake = until - now if wake is None else min(wake, until - now)
                elif provider not in busy:
                    probe.append(kind)
        return claim, probe, wake, probing

    def _claim(self, kinds: list[str], limit: int, *, probe: bool = False) -> list[ClaimedJob]:
        now = time.monotonic()
        if "embed" in kinds and (self._embeddings_queued_at is None or now - self._embeddings_queued_at >= 1.0):
            # Messages written since the last scan get their users' embed jobs now, not at the
            # next pg_cron minute; at most once a second, since a scan visits every user with
            # messages waiting.
            self.transport.rpc("queue_embeddings", {})
            self._embeddings_queued_at = now
        rows = self.transport.rpc(
            "claim_jobs",
            {
                "p_kinds": kinds,
                "p_worker": self.name,
                "p_limit": limit,
                "p_lease": f"{self.lease} seconds",
                "p_user_ids": self.user_ids,
            },
        ) or []
        jobs = [ClaimedJob.from_row(row) for row in rows]
        if jobs:
            now = time.monotonic()
            with self._cond:
                for job in jobs:
                    self._running[job.id] = _Running(job, now, now + self.lease / 3, probe=probe)
            for job in jobs:
                log.info(
                    "job claimed",
                    extra={
                        "event": "job_claimed", "job_id": job.id, "kind": job.kind, "worker": self.name,
                        "attempt": job.attempts,
                    },
                )
                self._queue.put(self._running[job.id])
        return jobs

    def _wind_down(self) -> None:
        """After the claim loop: wait for running jobs (bounded by `grace` after a stop), then
        hand back what is left."""
        with self._cond:
            if not self._stop:
                # Drained (once / max_jobs): let every running job finish.
                while self._running and not self._stop:
                    self._cond.wait(timeout=1.0)
            if self._stop and self._running and not self._stop_now:
                deadline = time.monotonic() + self.grace
                while self._running and not self._stop_now:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(timeout=remaining)
            leftovers = [r for r in self._running.values() if not r.abandoned]
            for running in leftovers:
                running.abandoned = True
        for running in leftovers:
            if self._release(running):
                with self._cond:
                    self._summary.add(running.job.kind, "released")
        # A job thread handing its own job back (a configuration error) finishes before run() returns.
        with self._cond:
            while self._handing_back:
                self._cond.wait(timeout=1.0)

    def _release(self, running: _Running) -> bool:
        """Hand a held job back to the queue (`memory.release_job`); True when it was."""
        job = running.job
        extra = self._context(job)
        try:
            self.transport.rpc("release_job", {"p_job_id": job.id, "p_worker": self.name})
        except StateError as exc:
            # It finished (or lost its lease) between the grace deadline and now.
            log.info("job no longer held", extra={**extra, "event": "release_skipped", "error": str(exc)})
            return False
        except SupamemError as exc:
            log.error(
                "could not release job; its lease will expire",
                extra={**extra, "event": "release_failed", "error": str(exc)},
            )
            return False
        log.info(
            "job released", extra={**extra, "event": "job_released", "duration_ms": _ms(running.started)}
        )
        return True

    # -- threads -----------------------------------------------------------------------------

    def _job_thread(self) -> None:
        while True:
            running = self._queue.get()
            if running is None:
                return
            try:
                outcome, tokens = self._execute(running)
            except BaseException:  # noqa: BLE001 - a job thread never dies silently
                log.exception("job thread failed", extra={"event": "job_crashed", "job_id": running.job.id})
                outcome, tokens = "error", None
            with self._cond:
                self._running.pop(running.job.id, None)
                # A job handed back by the stop is counted there, unless its own outcome won the race
                # (dead or done before the release, which then found it no longer held).
                if not running.abandoned or outcome not in ("lost", "released", "error"):
                    self._summary.add(running.job.kind, outcome, tokens)
                self._cond.notify_all()
            if self.on_finish is not None:
                try:
                    self.on_finish(running.job, outcome)
                except Exception:  # noqa: BLE001
                    log.exception("on_finish callback failed", extra={"event": "callback_failed"})

    def _execute(self, running: _Running) -> tuple[str, int | None]:
        job = running.job
        extra = self._context(job)
        try:
            result = run_job(
                job, transport=self.transport, llm=self.llm, worker=self.name, defer_delay=self.defer_delay,
                embedder=self.embedder,
            )
        except ConfigurationError as exc:
            return self._stop_for_configuration(running, str(exc)), None
        except StatementCancelledError as exc:
            # The database answered and the statement wrote nothing: the job goes back now, its
            # attempt spent, so one that always times out still reaches the dead letters.
            return self._fail(running, f"statement timeout: {exc}", None), None
        except DatabaseUnavailableError as exc:
            log.error(
                "database unavailable; the lease will expire and the reaper requeues the job",
                extra={**extra, "event": "job_error", "duration_ms": _ms(running.started), "error": str(exc)},
            )
            return "error", None
        except JobFailed as exc:
            if exc.final and self._refused(job.kind):
                return self._stop_for_configuration(
                    running, f"the provider refused {self.refusals_to_stop} {job.kind} jobs in a row, the last: {exc}"
                ), None
            if not exc.unavailable:
                self._provider_answered(job.kind)
                return self._fail(running, str(exc), exc.retry_after, final=exc.final), None
            pause = self._unanswered_again(running, exc.retry_after)
            if pause is None or running.probe:
                # Seen before the outage was, or a probe: the attempt is spent, so a job that times
                # out on its own input still ends in the dead letters, outage or not.
                return self._fail(running, str(exc), pause if pause is not None else exc.retry_after), None
            return self._defer(running, f"the {_provider(job.kind)} is unavailable: {exc}", pause), None
        except SupamemError as exc:
            if _lease_lost(exc, job):
                level = logging.INFO if running.abandoned else logging.WARNING
                log.log(
                    level,
                    "lease lost: another worker owns the job now; result dropped",
                    extra={**extra, "event": "lease_lost", "duration_ms": _ms(running.started), "error": str(exc)},
                )
                return "lost", None
            if isinstance(exc, RateLimitedError) and str(exc).startswith(RATE_LIMIT_PREFIX):
                # The extraction rate limit is not the job's fault: try again in a minute,
                # without spending an attempt.
                return self._defer(running, f"RateLimitedError [{exc.sqlstate}]: {exc}", 60.0), None
            # The database refused the output: a validation error from a finish_* RPC, a memory
            # superseded while the model answered (55000), a cap every pinned memory fills (54000).
            # The attempt is spent, so a refusal that lasts ends in the dead letters.
            return self._fail(running, f"{type(exc).__name__} [{exc.sqlstate}]: {exc}", None), None
        except Exception as exc:  # noqa: BLE001 - a bug in a handler must not stop the worker
            log.exception("handler crashed", extra={**extra, "event": "job_crashed", "error": repr(exc)})
            return self._fail(running, f"{type(exc).__name__}: {exc}", None), None
        if result.outcome == "done":
            self._answered(job.kind)
        deferral = result.result if result.outcome == "deferred" and isinstance(result.result, dict) else {}
        log.info(
            f"job {result.outcome}" + (f": {deferral['reason']}" if deferral.get("reason") else ""),
            extra={
                **extra, "event": f"job_{result.outcome}", "outcome": result.outcome,
                "duration_ms": _ms(running.started), "tokens": result.tokens, "run_after": deferral.get("run_after"),
            },
        )
        return result.outcome, result.tokens

    def _refused(self, kind: str) -> bool:
        """Count a refusal of a `kind` job's request; True when that makes `refusals_to_stop` in a row."""
        with self._cond:
            self._refusals[kind] += 1
            return self._refusals[kind] >= self.refusals_to_stop

    def _unanswered_again(self, running: _Running, retry_after: float | None) -> float | None:
        """Count a job its provider left unanswered; when that makes `unavailable_to_pause` in a row,
        the seconds the provider's jobs wait, else None. The pause starts at its first length, goes on
        for a job that met it while it ran, starts again as long for a job that was running when it
        ended, and doubles when a probe is unanswered; a Retry-After makes it at least that long."""
        provider = _provider(running.job.kind)
        first, longest = self.outage_pause
        with self._cond:
            self._unanswered[provider] += 1
            self._nothing_to_probe.discard(provider)
            if self._unanswered[provider] < self.unavailable_to_pause:
                return None
            now = time.monotonic()
            until = self._paused_until.get(provider, now)
            going_on = until > now
            if going_on:
                until = max(until, now + min(retry_after or 0.0, longest))
                length, pause = self._pause_length[provider], until - now
            else:
                length = self._pause_length.get(provider, first)
                if provider in self._pause_length and running.probe:
                    length = min(length * 2, longest)
                pause = min(max(length, retry_after or 0.0), longest)
                until = now + pause
            self._pause_length[provider] = length
            self._paused_until[provider] = until
        if not going_on:
            log.warning(
                f"the {provider} is unavailable: its jobs wait {pause:g} s, then one is sent to see whether it answers",
                extra={"event": "provider_unavailable", "worker": self.name, "provider": provider, "pause": pause},
            )
        self._note_outage(provider, length, pause)
        return pause

    def _endpoint(self, provider: str) -> str:
        """Where the provider's requests go (its base URL): an outage is of that server."""
        client = self.embedder if provider == EMBEDDINGS_SERVER else self.llm
        return str(getattr(getattr(client, "settings", None), "base_url", ""))  # none for a client without settings

    def _note_outage(self, provider: str, length: float, wait: float) -> None:
        """Keep the pause in the database (memory.provider_unavailable) for the runs after this one."""
        try:
            self.transport.rpc("provider_unavailable", {"p_provider": provider, "p_endpoint": self._endpoint(provider),
                                                        "p_pause": f"{length} seconds", "p_wait": f"{wait} seconds"})
        except SupamemError as exc:  # this run pauses all the same; the next finds out again
            log.warning(f"the {provider}'s outage could not be noted: {exc}",
                        extra={"event": "outage_not_noted", "worker": self.name, "provider": provider, "error": str(exc)})

    def _take_over_outages(self) -> None:
        """Start paused where runs before this one left a provider down (memory.provider_outages):
        its jobs wait out the pause, then one is sent, as the run that found it down would have."""
        try:
            rows = self.transport.rpc("provider_outages", {}) or []
        except SupamemError as exc:  # the claims will say what is wrong with the database
            log.warning(f"outages noted before could not be read: {exc}",
                        extra={"event": "outage_not_noted", "worker": self.name, "error": str(exc)})
            return
        mine = {(p, self._endpoint(p)) for p in {_provider(kind) for kind in self.kinds}}
        for row in rows:
            provider, wait = row["provider"], row["wait_seconds"]
            if (provider, row["endpoint"]) not in mine:
                continue
            with self._cond:
                self._unanswered[provider] = self.unavailable_to_pause
                self._pause_length[provider] = row["pause_seconds"]
                self._paused_until[provider] = time.monotonic() + wait
            log.warning(
                f"the {provider} was found unavailable before this run: its jobs wait {wait:g} s more,"
                " then one is sent to see whether it answers",
                extra={"event": "provider_unavailable", "worker": self.name, "provider": provider, "pause": wait},
            )

    def _answered(self, kind: str) -> None:
        """A job of `kind` is done: its refusals are over, and so is its provider's outage."""
        with self._cond:
            self._refusals[kind] = 0
        self._provider_answered(kind)

    def _provider_answered(self, kind: str) -> None:
        """`kind`'s provider answered (done, refused, or an answer the job could not use): it is up."""
        provider = _provider(kind)
        with self._cond:
            back = self._unanswered[provider] >= self.unavailable_to_pause
            self._unanswered[provider] = 0
            self._pause_length.pop(provider, None)
            self._paused_until.pop(provider, None)
        if back:
            log.info(f"the {provider} answers again",
                     extra={"event": "provider_back", "worker": self.name, "provider": provider})
            try:
                self.transport.rpc("provider_answered", {"p_provider": provider, "p_endpoint": self._endpoint(provider)})
            except SupamemError as exc:  # the next run waits out the pause noted, then finds it up
                log.warning(f"the {provider}'s outage could not be ended in the database: {exc}",
                            extra={"event": "outage_not_noted", "worker": self.name, "provider": provider,
                                   "error": str(exc)})

    def _stop_for_configuration(self, running: _Running, error: str) -> str:
        """No job can succeed with this configuration: hand the job back (its attempt unspent) and stop."""
        job = running.job
        with self._cond:
            if running.abandoned:  # the stop already handed it back (a job refused after the first stop)
                return "released"
            self._summary.fatal = self._summary.fatal or error
            running.abandoned = True  # this thread hands it back, not _wind_down
            self._handing_back += 1  # and run() waits for it (_wind_down)
        log.error(
            f"configuration error, stopping: {error}",
            extra={**self._context(job), "event": "configuration_error", "error": error},
        )
        # Claiming stops first, so the claim loop cannot take the job again once it is back in the queue.
        self.request_stop(reason="configuration error: releasing held jobs")
        released = False
        try:
            released = self._release(running)
        finally:
            with self._cond:
                self._summary.add(job.kind, "released" if released else "error")
                self._handing_back -= 1
                self._cond.notify_all()
        self.request_stop(now=True)
        return "released" if released else "error"

    def _context(self, job: ClaimedJob) -> dict[str, Any]:
        """The fields every log line about `job` carries."""
        return {"job_id": job.id, "kind": job.kind, "worker": self.name, "attempt": job.attempts}

    def _hand_back(self, running: _Running, function: str, params: dict[str, Any], why: str, what: str) -> Any:
        """Give the job back to the queue through `function` (defer_job, fail_job); its result, or
        "lost" / "error" (logged) when the lease was lost or the call failed."""
        extra = self._context(running.job)
        try:
            return self.transport.rpc(function, {"p_job_id": running.job.id, "p_worker": self.name, **params})
        except StateError as exc:
            log.warning(
                f"job {what} after its lease was lost; nothing recorded",
                extra={**extra, "event": "lease_lost", "error": f"{why}; {exc}"},
            )
            return "lost"
        except SupamemError as exc:
            log.error(
                f"could not record the job as {what}; the lease will expire",
                extra={**extra, "event": f"{function}_failed", "error": f"{why}; {exc}"},
            )
            return "error"

    def _defer(self, running: _Running, reason: str, delay: float) -> str:
        """Hand the job back to the queue for `delay` seconds (`memory.defer_job`): no attempt spent."""
        outcome = self._hand_back(running, "defer_job", {"p_delay": f"{max(0.0, delay)} seconds"}, reason, "deferred")
        if outcome in ("lost", "error"):
            return outcome
        log.info(
            f"job deferred: {reason}",
            extra={
                **self._context(running.job), "event": "job_deferred", "outcome": "deferred", "retry_after": delay,
                "duration_ms": _ms(running.started),
            },
        )
        return "deferred"

    def _fail(self, running: _Running, error: str, retry_after: float | None, *, final: bool = False) -> str:
        params: dict[str, Any] = {"p_error": error}
        if final:
            params["p_final"] = True
        if retry_after is not None:
            params["p_retry_after"] = f"{max(0.0, retry_after)} seconds"
        status = self._hand_back(running, "fail_job", params, error, "failed")
        if status in ("lost", "error"):
            return status
        extra = self._context(running.job)
        outcome = "dead" if status == "dead" else "failed"
        log.log(
            logging.ERROR if outcome == "dead" else logging.WARNING,
            "job dead-lettered" if outcome == "dead" else "job failed; it will be retried",
            extra={
                **extra, "event": f"job_{outcome}", "status": status, "retry_after": retry_after,
                "duration_ms": _ms(running.started), "error": error,
            },
        )
        return outcome

    def _heartbeat_thread(self) -> None:
        """Extends each running job's lease every lease/3 seconds."""
        interval = self.lease / 3
        while True:
            with self._cond:
                if self._stop and not self._running:
                    return
                now = time.monotonic()
                due = [r for r in self._running.values() if r.next_extend <= now and not r.lost and not r.abandoned]
            for running in due:
                self._extend(running, interval)
            with self._cond:
                upcoming = [r.next_extend for r in self._running.values() if not r.lost and not r.abandoned]
                wait = min([*(t - time.monotonic() for t in upcoming), 1.0])
                if wait > 0:
                    self._cond.wait(timeout=wait)

    def _extend(self, running: _Running, interval: float) -> None:
        job = running.job
        extra = self._context(job)
        try:
            self.transport.rpc(
                "extend_lease", {"p_job_id": job.id, "p_worker": self.name, "p_lease": f"{self.lease} seconds"}
            )
        except StateError as exc:
            with self._cond:
                if job.id not in self._running:
                    return  # it finished while we were extending
                running.lost = True
            log.warning(
                "lease lost while running", extra={**extra, "event": "lease_lost", "error": str(exc)}
            )
            return
        except Exception as exc:  # noqa: BLE001 - the heartbeat thread must survive anything
            # Try again soon; the lease still has two thirds of its time left.
            running.next_extend = time.monotonic() + min(interval, 1.0)
            log.warning("could not extend lease", extra={**extra, "event": "heartbeat_failed", "error": str(exc)})
            return
        running.next_extend = time.monotonic() + interval
        log.debug("lease extended", extra={**extra, "event": "lease_extended"})


#: The provider of embed jobs (the model answers the others).
EMBEDDINGS_SERVER = "embeddings server"


def _provider(kind: str) -> str:
    """Who answers a job of `kind`: embed jobs the embeddings server, the others the model."""
    return EMBEDDINGS_SERVER if kind == "embed" else "model"


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


__all__ = ["MAX_LEASE", "OUTCOMES", "JsonFormatter", "Summary", "Worker", "configure_logging", "default_worker_name"]


def _lease_lost(exc: SupamemError, job: ClaimedJob) -> bool:
    """Whether `exc` is the lease check's refusal: whatever the job computed belongs to no one now.
    Another 55000 (a memory superseded meanwhile) refuses the output like any other refusal."""
    return isinstance(exc, StateError) and str(exc).startswith(LEASE_LOST.format(id=job.id))

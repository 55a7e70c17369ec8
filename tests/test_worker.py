"""The job runner end to end: real database, real `supamem worker` processes, real HTTP.

The queue is shared with every other test of the suite (their triggers queue titles, summaries
and extractions for their own users) and with pg_cron's schedulers, so every worker here runs
with `--user` for the test's own users (`JobKit.worker_args`, tests/job_helpers.py) and claims
nothing else. Each test deletes its users' jobs and erases its users at the end (the `kit`
fixture), and asserts only about its own users. The backfill and scheduler tests date their
summaries in 2015 (its calendar is 2026's, day for day), far outside the hourly schedulers'
`summary_lookback`, so pg_cron never queues weeks or months for them behind a test's back.

No sleeps: every wait polls a condition with a deadline (`wait_for`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest
from client_helpers import wait_for
from job_helpers import JobKit

from jobs.llm import LLMClient, LLMSettings
from jobs.transport import PsycopgTransport
from jobs.worker import MAX_LEASE, JsonFormatter, Worker

ROOT = Path(__file__).resolve().parent.parent


# --- helpers ----------------------------------------------------------------------------------


def worker_env(database_url: str, **llm: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUPABASE_", "SUPAMEM_LLM_", "OPENAI_"))}
    env["DATABASE_URL"] = database_url
    env["SUPAMEM_LLM_PROVIDER"] = "offline"
    env.update({f"SUPAMEM_LLM_{k.upper()}": v for k, v in llm.items()})
    return env


class WorkerProcess:
    """`python -m supamem.cli worker ...` with its output in files (a full pipe would block it)."""

    def __init__(self, tmp_path: Path, env: dict[str, str], *args: str, name: str | None = None) -> None:
        self.name = name or f"test-worker-{uuid.uuid4().hex[:8]}"
        self.stdout_path = tmp_path / f"{self.name}.out"
        self.stderr_path = tmp_path / f"{self.name}.err"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "supamem.cli", "worker", "--name", self.name, *args],
                cwd=ROOT, env=env, stdout=out, stderr=err,
            )

    def wait(self, timeout: float = 60.0) -> int:
        return self.process.wait(timeout=timeout)

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text()

    @property
    def logs(self) -> list[dict[str, Any]]:
        # One JSON object per line; a worker that stops on an error says why last, in plain words.
        return [json.loads(line) for line in self.stderr_path.read_text().splitlines() if line.startswith("{")]

    def events(self, event: str) -> list[dict[str, Any]]:
        return [entry for entry in self.logs if entry.get("event") == event]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def processes() -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for process in started:
        process.kill()


def run_worker(tmp_path: Path, env: dict[str, str], *args: str, timeout: float = 60.0) -> WorkerProcess:
    worker = WorkerProcess(tmp_path, env, *args)
    code = worker.wait(timeout)
    assert code == 0, f"worker exited {code}:\n{worker.stdout}\n{worker.stderr_path.read_text()[-3000:]}"
    return worker


# --- a loopback OpenAI-compatible server ---------------------------------------------------------

EXTRACTION_ANSWER = {
    "operations": [
        {"op": "add", "content": "Flies kites on windy days", "type": "preference", "confidence": 0.9,
         "category": "hobbies", "context": []}
    ]
}
ANSWERS = {
    "extract": EXTRACTION_ANSWER,
    "title": {"title": "Kites on windy days"},
    "summarize_conversation": {"summary": "The user talked about kites."},
}


class FakeLLM:
    """`POST /v1/chat/completions` on loopback. `gate`: requests wait until it is set (a slow
    model); `status`: answer with this HTTP status instead (500, 429 with `retry_after`);
    `statuses`: the statuses of the next requests, in the order they come, before `status`.

    Not tests/llm_server.py's scripted server: that one is slow for a fixed `delay`, and these
    tests need a model that is slow until the test says otherwise (no timing assumptions), and
    answers by job kind whatever order the requests come in."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.status = 200
        self.statuses: list[int] = []
        self.retry_after: str | None = None
        self.received = 0
        self.answered = 0
        self._lock = threading.Lock()
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with llm._lock:
                    llm.received += 1
                    status = llm.statuses.pop(0) if llm.statuses else llm.status
                llm.gate.wait(timeout=120)
                name = body["response_format"]["json_schema"]["name"]  # supamem_<kind>_<version>
                kind = name.removeprefix("supamem_").rsplit("_", 1)[0]
                if status != 200:
                    payload: dict[str, Any] = {"error": {"message": f"injected {status}"}}
                else:
                    payload = {
                        "id": "chatcmpl-test", "object": "chat.completion", "model": "fake-model",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": json.dumps(ANSWERS[kind])}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                    }
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if llm.retry_after is not None:
                        self.send_header("Retry-After", llm.retry_after)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the worker that asked was killed
                with llm._lock:
                    llm.answered += 1

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self.gate.set()
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


def openai_env(database_url: str, llm: FakeLLM, **extra: str) -> dict[str, str]:
    return worker_env(
        database_url, provider="openai", base_url=llm.base_url, api_key="test-key", model="fake-model",
        max_retries="0", timeout="60", **extra,
    )


FOUR_TURNS = [
    ("I live in Berlin and I want to run a marathon.", "That's a great goal."),
    ("My sister is called Ana.", "Nice!"),
    ("I love green tea.", "Noted."),
    ("I decided to learn Portuguese.", "Boa sorte!"),
]


# --- once: a conversation's jobs ---------------------------------------------------------------


def test_once_turns_a_conversation_into_memories_a_summary_and_a_title(
    kit: JobKit, database_url: str, tmp_path: Path
) -> None:
    user_id, profile_id = kit.user()
    conversation_id = kit.conversation(user_id, profile_id, FOUR_TURNS)
    assert Counter(j["kind"] for j in kit.jobs()) == {"extract": 4, "summarize_conversation": 1, "title": 1}

    worker = run_worker(tmp_path, worker_env(database_url), "--once", "--concurrency", "3", *kit.worker_args)

    jobs = kit.jobs()
    assert [(j["status"], j["attempts"]) for j in jobs] == [("done", 1)] * 6
    assert all(j["usage"]["total_tokens"] > 0 and j["usage"]["provider"] == "offline" for j in jobs)
    memories = kit.rows("select content, type, source_message_id from memory.memories where user_id = %s", [user_id])
    assert {(m["content"], m["type"]) for m in memories} >= {("Sister is called Ana", "relationship")}
    assert len(kit.rows("select 1 from memory.memory_extractions where user_id = %s", [user_id])) == 4
    summaries = kit.rows(
        "select from_turn, to_turn, summary, profile_id from memory.conversation_summaries where conversation_id = %s",
        [conversation_id],
    )
    assert [(s["from_turn"], s["to_turn"], s["profile_id"]) for s in summaries] == [(1, 4, profile_id)]
    assert kit.value("select title from memory.conversations where id = %s", [conversation_id])

    # The summary on stdout, and one JSON object per log line with the job fields.
    # The embed job runs beside them (once or twice: the new memories queue it again).
    assert re.search(r"^extract +4$", worker.stdout, re.M) and re.search(r"^title +1$", worker.stdout, re.M)
    done = [e for e in worker.events("job_done") if e["kind"] != "embed"]
    assert sorted(e["job_id"] for e in done) == [j["id"] for j in jobs]
    for entry in done:
        assert {"ts", "level", "event", "job_id", "kind", "worker", "attempt", "duration_ms", "tokens"} <= set(entry)
        assert entry["worker"] == worker.name and entry["attempt"] == 1 and entry["tokens"] > 0


def test_help_explains_every_subcommand() -> None:
    for command in ([], ["worker"], ["backfill"], ["jobs"]):
        result = subprocess.run(
            [sys.executable, "-m", "supamem.cli", *command, "--help"], cwd=ROOT, capture_output=True, text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        assert "usage: supamem" in result.stdout
    worker_help = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "worker", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=30
    ).stdout
    for option in ("--once", "--loop", "--kinds", "--concurrency", "--lease", "--grace", "DATABASE_URL", "SUPABASE_URL"):
        assert option in worker_help


def test_jobs_command_prints_the_queue(kit: JobKit, database_url: str) -> None:
    user_id, profile_id = kit.user()
    kit.conversation(user_id, profile_id, FOUR_TURNS[:1])
    env = worker_env(database_url)
    table = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "jobs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30
    )
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:4] == ["kind", "queued", "running", "dead"]
    as_json = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "jobs", "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=30,
    )
    rows = {row["kind"]: row for row in json.loads(as_json.stdout)}
    assert rows["title"]["queued"] >= 1 and rows["extract"]["queued"] >= 1


def test_jobs_command_queues_the_dead_letters_again(kit: JobKit, database_url: str) -> None:
    """After an outage killed the jobs that ran through it: `supamem jobs --retry-dead`, of a kind
    or since a time (memory.retry_dead_jobs)."""
    user_id, profile_id = kit.user()
    kit.conversation(user_id, profile_id, FOUR_TURNS[:1])
    kit.conn.execute("update memory_private.jobs set status = 'dead', attempts = max_attempts, failed_at = now(),"
                     " finished_at = now(), last_error = 'the model was down' where user_id = %s", [user_id])

    def jobs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "supamem.cli", "jobs", "--json", *args], cwd=ROOT,
                              env=worker_env(database_url), capture_output=True, text=True, timeout=30)

    future = datetime.now(UTC) + timedelta(days=1)
    assert jobs("--retry-dead", "--died-since", future.isoformat()).stderr.startswith("queued 0 dead job(s) again")
    done = jobs("--retry-dead", "--kind", "title")
    assert done.returncode == 0 and done.stderr.startswith("queued 1 dead job(s) again"), done.stderr
    assert {j["kind"]: (j["status"], j["attempts"]) for j in kit.jobs("title")} == {"title": ("queued", 0)}
    assert {j["status"] for j in kit.jobs("extract")} == {"dead"}
    assert jobs("--kind", "title").returncode == 2, "--kind alone is a mistake"


# --- crashes and leases -------------------------------------------------------------------------


def _one_extraction(kit: JobKit) -> tuple[uuid.UUID, dict[str, Any]]:
    user_id, profile_id = kit.user()
    kit.conversation(user_id, profile_id, [("I fly kites when it is windy.", "Fun!")], title="Kites")
    (job,) = kit.jobs()
    assert job["kind"] == "extract"
    return user_id, job


def _held_by(kit: JobKit, job_id: int, worker: str) -> dict[str, Any] | None:
    job = kit.job(job_id)
    return job if job["status"] == "running" and job["worker"] == worker else None


def _lease_ran_out(kit: JobKit, job_id: int) -> bool:
    """The job's lease has expired, or pg_cron's reaper (every minute) has already taken the job
    back: then it is queued and has no lease to compare."""
    return kit.value(
        "select status <> 'running' or leased_until < now() from memory_private.jobs where id = %s", [job_id]
    )


def test_killed_worker_loses_nothing_and_the_job_is_written_once(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM, processes: list[WorkerProcess]
) -> None:
    user_id, job = _one_extraction(kit)
    fake_llm.gate.clear()  # the model is slow: the first worker dies waiting for it
    env = openai_env(database_url, fake_llm)
    first = WorkerProcess(tmp_path, env, "--once", "--kinds", "extract", "--lease", "2", *kit.worker_args)
    processes.append(first)
    claimed = wait_for(lambda: _held_by(kit, job["id"], first.name), what="the first worker's claim")
    wait_for(lambda: fake_llm.received == 1, what="the LLM request")
    # The heartbeat keeps the 2-second lease alive while the model thinks.
    wait_for(lambda: kit.job(job["id"])["leased_until"] > claimed["leased_until"], what="a lease extension")

    first.signal(signal.SIGKILL)
    first.wait(10)
    wait_for(lambda: _lease_ran_out(kit, job["id"]), what="the lease to run out")
    # pg_cron's reaper runs every minute and may have been first; either way the job is queued again.
    kit.value("select memory_private.reap_expired_leases()")
    reaped = kit.job(job["id"])
    assert reaped["status"] == "queued" and reaped["worker"] is None and reaped["attempts"] == 1
    assert "expired" in reaped["last_error"]

    fake_llm.gate.set()
    second = run_worker(tmp_path, env, "--once", "--kinds", "extract", "--lease", "30", *kit.worker_args)
    done = kit.job(job["id"])
    assert (done["status"], done["attempts"], done["worker"]) == ("done", 2, second.name)
    assert len(kit.rows("select 1 from memory.memory_extractions where source_message_id = %s",
                        [job["payload"]["source_message_id"]])) == 1
    memories = kit.rows("select content from memory.memories where user_id = %s", [user_id])
    assert [m["content"] for m in memories] == ["Flies kites on windy days"]
    assert done["result"] == [{"memory_id": done["result"][0]["memory_id"], "outcome": "added"}]
    assert done["usage"]["total_tokens"] == 120


def test_a_result_the_statement_timeout_cancels_fails_the_job_at_once(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """The database answered (57014: the statement ran past statement_timeout): the job goes back
    with its attempt spent and a backoff now, not when its lease runs out, and nothing is written."""
    user_id, job = _one_extraction(kit)
    # A worker whose statements time out after a second. Its extraction's memory needs the user's row
    # (a new memory takes the user's next number), which this test holds until the worker is done.
    env = openai_env(database_url + ("&" if "?" in database_url else "?") + "options=-c%20statement_timeout%3D1000",
                     fake_llm)
    with psycopg.connect(database_url) as holder:
        holder.execute("select 1 from memory.users where id = %s for update", [user_id])
        worker = run_worker(tmp_path, env, "--once", "--kinds", "extract", "--lease", "300", "--json",
                            *kit.worker_args)
        after = kit.job(job["id"])
    assert (after["status"], after["attempts"], after["worker"]) == ("queued", 1, None)
    assert "statement timeout" in after["last_error"] and after["run_after"] > after["failed_at"]
    assert json.loads(worker.stdout)["kinds"] == {"extract": {"failed": 1}}
    assert kit.rows("select 1 from memory.memories where user_id = %s", [user_id]) == []


def test_paused_worker_that_lost_its_lease_writes_nothing(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM, processes: list[WorkerProcess]
) -> None:
    user_id, job = _one_extraction(kit)
    fake_llm.gate.clear()
    env = openai_env(database_url, fake_llm)
    slow = WorkerProcess(tmp_path, env, "--once", "--kinds", "extract", "--lease", "2", *kit.worker_args)
    processes.append(slow)
    wait_for(lambda: _held_by(kit, job["id"], slow.name), what="the claim")
    wait_for(lambda: fake_llm.received == 1, what="the LLM request")
    # A long GC pause, a frozen VM: alive, but not renewing its lease. Frozen only between two
    # transactions: frozen inside one (a heartbeat), it would hold the job's row lock, and the
    # reaper (`skip locked`) would rightly pass it by.
    def frozen_between_transactions() -> bool:
        slow.signal(signal.SIGSTOP)
        busy = kit.value(
            "select count(*) from pg_stat_activity where application_name = %s and state <> 'idle'",
            [f"supamem-worker {slow.name}"],
        )
        if busy:
            slow.signal(signal.SIGCONT)
        return not busy

    wait_for(frozen_between_transactions, what="a moment between the worker's transactions")
    try:
        wait_for(lambda: _lease_ran_out(kit, job["id"]), what="the lease to run out")
        kit.value("select memory_private.reap_expired_leases()")
        assert kit.job(job["id"])["status"] == "queued"
        fake_llm.gate.set()
        wait_for(lambda: fake_llm.answered == 1, what="the slow answer to be sent")
        other = run_worker(tmp_path, env, "--once", "--kinds", "extract", *kit.worker_args)
    finally:
        slow.signal(signal.SIGCONT)
    assert slow.wait(30) == 0
    lost = slow.events("lease_lost")
    assert lost and lost[0]["job_id"] == job["id"]
    assert "lost" in slow.stdout
    done = kit.job(job["id"])
    assert (done["status"], done["worker"], done["attempts"]) == ("done", other.name, 2)
    assert kit.value("select count(*) from memory.memories where user_id = %s", [user_id]) == 1
    assert kit.value("select count(*) from memory.memory_extractions where user_id = %s", [user_id]) == 1


# --- many workers -------------------------------------------------------------------------------


def test_four_workers_never_process_a_job_twice(
    kit: JobKit, database_url: str, tmp_path: Path, processes: list[WorkerProcess]
) -> None:
    for _ in range(2):
        user_id, profile_id = kit.user()
        for n in range(5):
            kit.conversation(user_id, profile_id, [(f"{q} ({n})", a) for q, a in FOUR_TURNS])
    total = len(kit.jobs())
    assert total == 60  # 40 extractions, 10 summaries, 10 titles
    per_worker = total // 4
    env = worker_env(database_url)
    workers = [
        WorkerProcess(tmp_path, env, "--once", "--max-jobs", str(per_worker), "--concurrency", "3", "--json",
                      "--kinds", "extract,summarize,title", *kit.worker_args)
        for _ in range(4)
    ]
    processes.extend(workers)
    for worker in workers:
        assert worker.wait(120) == 0, worker.stderr_path.read_text()[-3000:]

    jobs = kit.jobs()
    assert len(jobs) == total
    assert all(j["status"] == "done" and j["attempts"] == 1 for j in jobs), Counter((j["status"], j["attempts"]) for j in jobs)
    claimed = [e["job_id"] for w in workers for e in w.events("job_claimed")]
    assert len(claimed) == len(set(claimed)) == total  # no job claimed twice
    assert sorted(claimed) == sorted(j["id"] for j in jobs)
    by_worker = Counter(j["worker"] for j in jobs)
    assert set(by_worker) <= {w.name for w in workers} and sum(by_worker.values()) == total
    summaries = [json.loads(w.stdout) for w in workers]
    assert sum(sum(k.get("done", 0) for k in s["kinds"].values()) for s in summaries) == total
    # Every result exactly once.
    assert kit.value("select count(*) from memory.memory_extractions where user_id = any(%s)", [kit.users]) == 40
    assert kit.value("select count(*) from memory.conversation_summaries where user_id = any(%s)", [kit.users]) == 10
    assert kit.value(
        "select count(*) from memory.conversations where user_id = any(%s) and title is not null", [kit.users]
    ) == 10


# --- stopping -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ending", "signum"),
    [("finishes", signal.SIGTERM), ("released", signal.SIGTERM), ("finishes", signal.SIGINT)],
    ids=["sigterm-finishes", "sigterm-released", "sigint-finishes"],
)
def test_stop_signal_during_a_slow_job(
    ending: str, signum: int, kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM,
    processes: list[WorkerProcess],
) -> None:
    user_id, job = _one_extraction(kit)
    fake_llm.gate.clear()
    grace = "30" if ending == "finishes" else "0.5"
    worker = WorkerProcess(
        tmp_path, openai_env(database_url, fake_llm),
        "--loop", "--max-jobs", "1", "--kinds", "extract", "--grace", grace, "--json", *kit.worker_args,
    )
    processes.append(worker)
    wait_for(lambda: _held_by(kit, job["id"], worker.name), what="the claim")
    wait_for(lambda: fake_llm.received == 1, what="the LLM request")

    worker.signal(signum)
    wait_for(lambda: worker.events("stopping"), what="the worker to stop claiming")
    if ending == "finishes":
        fake_llm.gate.set()  # the model answers within the grace period
    assert worker.wait(30) == 0
    summary = json.loads(worker.stdout)
    assert summary["stopped_by_signal"] is True
    after = kit.job(job["id"])
    if ending == "finishes":
        assert summary["kinds"] == {"extract": {"done": 1}}
        assert (after["status"], after["attempts"]) == ("done", 1)
        assert kit.value("select count(*) from memory.memories where user_id = %s", [user_id]) == 1
    else:
        # Handed back: queued, the attempt not counted, claimable again at once.
        assert summary["kinds"] == {"extract": {"released": 1}}
        assert (after["status"], after["attempts"], after["worker"], after["leased_until"]) == ("queued", 0, None, None)
        assert kit.value("select count(*) from memory.memories where user_id = %s", [user_id]) == 0
        fake_llm.gate.set()
        run_worker(tmp_path, openai_env(database_url, fake_llm), "--once", "--kinds", "extract", *kit.worker_args)
        assert kit.job(job["id"])["status"] == "done"


# --- failures -----------------------------------------------------------------------------------


def test_failures_back_off_then_dead_letter(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    user_id, profile_id = kit.user()
    conversation_id = kit.conversation(user_id, profile_id, [("Hello there", "Hi!")])
    (job,) = kit.jobs("title")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s and kind <> 'title'", [user_id])
    kit.conn.execute("update memory_private.jobs set max_attempts = 3 where id = %s", [job["id"]])
    backoff_base = kit.value(
        "select (value #>> '{}')::interval from memory_private.settings where key = 'job_backoff_base'"
    )
    env = openai_env(database_url, fake_llm)

    def attempt() -> tuple[WorkerProcess, dict[str, Any]]:
        assert kit.make_due() == 1  # the backoff has "passed": claimable now
        worker = run_worker(tmp_path, env, "--once", "--kinds", "title", "--json", *kit.worker_args)
        return worker, kit.job(job["id"])

    # 1. Rate limited with Retry-After: 7 -> retried after exactly what the provider asked.
    fake_llm.status, fake_llm.retry_after = 429, "7"
    worker, after = attempt()
    assert (after["status"], after["attempts"]) == ("queued", 1)
    # Both stamped by fail_job in one transaction: exact, however long the attempt took.
    assert after["run_after"] - after["failed_at"] == timedelta(seconds=7)
    assert "rate limited" in after["last_error"]
    assert json.loads(worker.stdout)["kinds"] == {"title": {"failed": 1}}
    assert worker.events("job_failed")[0]["retry_after"] == 7.0

    # 2. A server error: exponential backoff from job_backoff_base (base x 2^(attempt-1)).
    fake_llm.status, fake_llm.retry_after = 500, None
    worker, after = attempt()
    assert (after["status"], after["attempts"]) == ("queued", 2)
    assert after["run_after"] - after["failed_at"] == backoff_base * 2
    assert "500" in after["last_error"]

    # 3. The last attempt fails too: dead letter, never claimed again.
    worker, after = attempt()
    assert (after["status"], after["attempts"]) == ("dead", 3)
    assert after["finished_at"] is not None and "500" in after["last_error"]
    assert json.loads(worker.stdout)["kinds"] == {"title": {"dead": 1}}
    assert worker.events("job_dead")[0]["level"] == "error"
    assert kit.value("select title from memory.conversations where id = %s", [conversation_id]) is None
    stats = {r["kind"]: r for r in kit.rows("select * from memory.job_stats()")}
    assert stats["title"]["dead"] >= 1


def test_refusals_that_come_together_stop_the_worker_once_and_count_each_job_once(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """Four jobs in flight, all refused at once: the third refusal stops the worker, no job is left
    held, at most two are dead (which ones is the threads' race) and the rest handed back, and the
    summary counts each job once, as the queue holds it."""
    for n in range(4):
        user_id, profile_id = kit.user()
        kit.conversation(user_id, profile_id, [(f"Hello {n}", "Hi!")])
        kit.conn.execute("delete from memory_private.jobs where user_id = %s and kind <> 'title'", [user_id])
    assert kit.make_due() == 4
    fake_llm.status = 400
    fake_llm.gate.clear()  # the four requests wait together
    worker = WorkerProcess(tmp_path, openai_env(database_url, fake_llm), "--once", "--kinds", "title",
                           "--concurrency", "4", "--json", *kit.worker_args)
    wait_for(lambda: fake_llm.received == 4, what="four requests in flight")
    fake_llm.gate.set()
    assert worker.wait() == 2, worker.stderr_path.read_text()[-3000:]
    statuses = Counter(job["status"] for job in kit.jobs("title"))
    assert set(statuses) <= {"dead", "queued"} and statuses["dead"] <= 2, statuses
    summary = json.loads(worker.stdout)["kinds"]["title"]
    assert summary == {k: v for k, v in {"dead": statuses["dead"], "released": statuses["queued"]}.items() if v}


def test_the_worker_takes_the_leases_the_queue_grants(kit: JobKit) -> None:
    """Worker and CLI refuse a lease past MAX_LEASE before claiming: the queue grants a day at most."""
    assert kit.value("select count(*) from memory.claim_jobs('{title}', 'lease-probe', 1, %s * interval '1 second',"
                     " '{}'::uuid[])", [MAX_LEASE]) == 0
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="at most a day"):
        kit.value("select count(*) from memory.claim_jobs('{title}', 'lease-probe', 1, %s * interval '1 second',"
                  " '{}'::uuid[])", [MAX_LEASE + 1])
    with pytest.raises(ValueError, match="lease must be 1 second to a day"):
        Worker(transport=None, llm=None, kinds=["title"], lease=MAX_LEASE + 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("status", [400, 413, 422])
def test_a_request_the_provider_refuses_is_dead_at_once(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM, status: int
) -> None:
    """The provider refuses the request itself: sent again, it is refused again, so the job is
    dead-lettered at its first attempt, with one model call, its other attempts unspent."""
    user_id, profile_id = kit.user()
    kit.conversation(user_id, profile_id, [("Hello there", "Hi!")])
    (job,) = kit.jobs("title")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s and kind <> 'title'", [user_id])
    fake_llm.status = status
    assert kit.make_due() == 1
    worker = run_worker(tmp_path, openai_env(database_url, fake_llm), "--once", "--kinds", "title", "--json",
                        *kit.worker_args)
    after = kit.job(job["id"])
    assert (after["status"], after["attempts"]) == ("dead", 1) and after["max_attempts"] > 1
    assert str(status) in after["last_error"] and after["finished_at"] is not None
    assert fake_llm.received == 1
    assert json.loads(worker.stdout)["kinds"] == {"title": {"dead": 1}}


def test_a_provider_refusing_every_job_stops_the_worker_instead_of_filling_the_dead_letters(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """Refusals in a row, with no job of the kind done between, are the configuration's (a
    parameter the server does not take), not each job's: after three the worker hands the third
    job back, its attempt unspent, and stops, leaving the rest queued. A job done between starts
    the count again."""
    for n in range(7):
        user_id, profile_id = kit.user()
        kit.conversation(user_id, profile_id, [(f"Hello {n}", "Hi!")])
        kit.conn.execute("delete from memory_private.jobs where user_id = %s and kind <> 'title'", [user_id])
    assert kit.make_due() == 7
    fake_llm.statuses, fake_llm.status = [400, 400, 200], 400
    worker = WorkerProcess(tmp_path, openai_env(database_url, fake_llm), "--once", "--kinds", "title",
                           "--concurrency", "1", *kit.worker_args)
    assert worker.wait() == 2, worker.stderr_path.read_text()[-3000:]
    jobs = kit.jobs("title")
    by_status = Counter(job["status"] for job in jobs)
    assert by_status == {"dead": 4, "done": 1, "queued": 2}, by_status
    assert fake_llm.received == 6, "the worker stopped at the third refusal in a row"
    assert all(job["attempts"] == 0 and job["last_error"] is None for job in jobs if job["status"] == "queued")
    (stopped,) = worker.events("configuration_error")
    assert "refused 3 title jobs in a row" in stopped["error"] and "400" in stopped["error"]
    assert worker.stderr_path.read_text().splitlines()[-1].startswith("supamem: error: the provider refused 3 title jobs")


def _title_jobs(kit: JobKit, count: int) -> None:
    """`count` users, each with one conversation whose title job is their only job of the model's."""
    for n in range(count):
        user_id, profile_id = kit.user()
        kit.conversation(user_id, profile_id, [(f"Hello {n}", "Hi!")])
        kit.conn.execute("delete from memory_private.jobs where user_id = %s and kind <> 'title'", [user_id])
    assert kit.make_due() == count


def test_a_provider_outage_pauses_its_jobs_instead_of_spending_their_attempts(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """A model that answers nothing (503 to every request) fails two jobs, an attempt each; the
    third job it leaves unanswered shows it is down: that job goes back with its attempt unspent,
    due when the pause ends, and a --once run claims no more of the model's jobs. The pause is
    kept in the database: the next run waits it out, then sends one job. Once the model answers,
    every job is done and none was dead-lettered."""
    _title_jobs(kit, 6)
    env = openai_env(database_url, fake_llm)
    fake_llm.status = 503
    worker = WorkerProcess(tmp_path, env, "--once", "--kinds", "title", "--concurrency", "1", "--json",
                           *kit.worker_args)
    assert worker.wait() == 3, "a --once run that found the model down says so"
    assert worker.stderr_path.read_text().splitlines()[-1] == (
        "supamem: error: the model gave no answer; the jobs wait in the queue"
    )
    assert fake_llm.received == 3, "the worker sent no job after the third unanswered one"
    summary = json.loads(worker.stdout)
    assert (summary["kinds"], summary["unavailable"]) == ({"title": {"failed": 2, "deferred": 1}}, ["model"])
    jobs = kit.jobs("title")
    assert {job["status"] for job in jobs} == {"queued"}
    assert sorted((job["attempts"], job["last_error"] is not None) for job in jobs) == [(0, False)] * 4 + [(1, True)] * 2
    (paused,) = worker.events("provider_unavailable")
    assert (paused["pause"], paused["provider"]) == (15.0, "model")
    (deferred,) = worker.events("job_deferred")
    waited = kit.value("select run_after - now() from memory_private.jobs where id = %s", [deferred["job_id"]])
    assert timedelta(seconds=5) < waited <= timedelta(seconds=15), "due when the pause ends"

    # The next run, while the pause lasts (a --once run from cron), takes it over from the database:
    # it sends the model nothing, and no attempt is spent.
    attempts = sorted(job["attempts"] for job in kit.jobs("title"))
    assert kit.make_due() == 6
    worker = WorkerProcess(tmp_path, env, "--once", "--kinds", "title", "--json", *kit.worker_args)
    assert worker.wait() == 3 and json.loads(worker.stdout)["unavailable"] == ["model"]
    assert fake_llm.received == 3 and sorted(job["attempts"] for job in kit.jobs("title")) == attempts
    # Once the pause is over, a run sends one job; unanswered, it spends its attempt and the pause doubles.
    kit.conn.execute("update memory_private.provider_outages set paused_until = now()")
    worker = WorkerProcess(tmp_path, env, "--once", "--kinds", "title", "--json", *kit.worker_args)
    assert worker.wait() == 3 and json.loads(worker.stdout)["kinds"] == {"title": {"failed": 1}}
    assert fake_llm.received == 4
    assert kit.value("select pause from memory_private.provider_outages where endpoint = %s",
                     [fake_llm.base_url]) == timedelta(seconds=30)

    fake_llm.status = 200
    kit.conn.execute("update memory_private.provider_outages set paused_until = now()")
    assert kit.make_due() == 6
    worker = run_worker(tmp_path, env, "--once", "--kinds", "title", "--concurrency", "1", "--json", *kit.worker_args)
    assert json.loads(worker.stdout)["kinds"] == {"title": {"done": 6}} and json.loads(worker.stdout)["unavailable"] == []
    assert {job["status"] for job in kit.jobs("title")} == {"done"}
    assert kit.value("select count(*) from memory_private.provider_outages") == 0, "the outage is over for every worker"


def test_a_once_run_after_a_pause_with_nothing_to_probe_exits(
    kit: JobKit, database_url: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """A pause that is over, and none of the model's jobs due: a --once run has no probe to send,
    so it exits at once instead of waiting for a job to claim, and finds nothing down."""
    _title_jobs(kit, 1)
    kit.conn.execute("update memory_private.jobs set run_after = now() + interval '1 hour' where user_id = any(%s)",
                     [kit.users])
    kit.conn.execute("select memory.provider_unavailable('model', %s, interval '15 seconds', interval '0')",
                     [fake_llm.base_url])
    env = openai_env(database_url, fake_llm)
    worker = WorkerProcess(tmp_path, env, "--once", "--kinds", "title", "--json", *kit.worker_args)
    assert worker.wait(timeout=30) == 0
    summary = json.loads(worker.stdout)
    assert (summary["kinds"], summary["unavailable"], fake_llm.received) == ({}, [], 0)


def _until_done(
    kit: JobKit, database_url: str, fake_llm: FakeLLM, jobs: int, concurrency: int, in_flight: int = 0
) -> list[dict[str, Any]]:
    """A long-running worker of this test's title jobs that pauses a down model from the first job
    it leaves unanswered (a pause of 50 ms, doubling), until `jobs` are done; its log entries. With
    `in_flight`, the model's first answers wait until that many requests have come."""
    events: list[dict[str, Any]] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            events.append(json.loads(JsonFormatter().format(record)))

    done: list[int] = []

    def finished(job: Any, outcome: str) -> None:
        if outcome == "done":
            done.append(job.id)
            if len(done) == jobs:
                worker.request_stop()

    llm = LLMClient(LLMSettings(provider="openai", base_url=fake_llm.base_url, api_key="test-key",
                                model="fake-model", max_retries=0))
    transport = PsycopgTransport.from_url(database_url)
    worker = Worker(transport, llm, kinds=["title"], concurrency=concurrency, user_ids=kit.users,
                    unavailable_to_pause=1, outage_pause=(0.05, 1.0), on_finish=finished)
    logger = logging.getLogger("supamem.jobs")
    handler, level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    if in_flight:
        fake_llm.gate.clear()
    try:
        runner = threading.Thread(target=worker.run, kwargs={"once": False})
        runner.start()
        if in_flight:
            wait_for(lambda: fake_llm.received == in_flight, what=f"{in_flight} requests in flight")
            fake_llm.gate.set()
        runner.join(timeout=60)
        assert not runner.is_alive(), f"the worker did not finish the {jobs} jobs"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        transport.close()
        llm.close()
    return events


def test_a_worker_sends_one_job_at_a_time_to_a_down_provider_and_resumes_when_it_answers(
    kit: JobKit, database_url: str, fake_llm: FakeLLM
) -> None:
    """A long-running worker, three jobs at once: all three unanswered, so each goes back with its
    attempt unspent and the model's jobs wait. After the pause one job, the probe, is sent;
    unanswered again, it spends its attempt (a job that fails on its own input still reaches the
    dead letters) and the next pause is twice as long; then the next probe is done and the other
    jobs follow. While the model was down the worker held one job at a time."""
    _title_jobs(kit, 3)
    fake_llm.statuses = [503] * 4
    events = _until_done(kit, database_url, fake_llm, jobs=3, concurrency=3, in_flight=3)

    jobs = kit.jobs("title")
    assert {job["status"] for job in jobs} == {"done"}
    assert sorted(job["attempts"] for job in jobs) == [1, 1, 2], "only the unanswered probe spent an attempt"
    assert fake_llm.received == 7
    names = [e["event"] for e in events]
    pauses = [e["pause"] for e in events if e["event"] == "provider_unavailable"]
    # A job answered after the first pause ended (a slow machine) starts it again, as long.
    assert pauses[0] == 0.05 and pauses[-1] == 0.1 and set(pauses) == {0.05, 0.1}, pauses
    outage = names[names.index("provider_unavailable"):names.index("provider_back")]
    assert outage.count("job_claimed") == 2, f"one job at a time while the model was down: {outage}"
    assert names.count("job_failed") == 1 and names.count("job_deferred") == 3


def test_any_answer_from_a_down_provider_ends_its_outage(kit: JobKit, database_url: str, fake_llm: FakeLLM) -> None:
    """A probe the model refuses (400) is an answer: the model is up, the refused job is a dead
    letter of its own, and the other jobs are claimed and done without another pause."""
    _title_jobs(kit, 3)
    fake_llm.statuses = [503, 400]
    events = _until_done(kit, database_url, fake_llm, jobs=2, concurrency=1)

    assert sorted(job["status"] for job in kit.jobs("title")) == ["dead", "done", "done"]
    names = [e["event"] for e in events]
    assert names.count("provider_unavailable") == 1 and names.count("provider_back") == 1
    assert names.index("provider_back") < names.index("job_dead") < names.index("job_done")
    assert fake_llm.received == 4


# --- summaries: backfill and the schedulers --------------------------------------------------------


def _local(day: str, clock: str, zone: str) -> datetime:
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=ZoneInfo(zone))


def _summary_at(kit: JobKit, conversation_id: uuid.UUID, to_turn: int, at: datetime, text: str) -> None:
    kit.conn.execute(
        "insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn,"
        " summary, created_at) select c.id, c.user_id, c.profile_id, 1, %s, %s, %s"
        " from memory.conversations as c where c.id = %s",
        [to_turn, text, at, conversation_id],
    )


def test_backfill_a_missed_month(kit: JobKit, database_url: str, tmp_path: Path) -> None:
    zone = "America/Los_Angeles"
    user_id, profile_id = kit.user(zone)
    conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="October")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s", [user_id])
    # October 2015 by ISO weeks (a week belongs to the month of its Thursday): Sep 28 - Nov 1.
    moments = {
        "2015-09-29": "the week of Mon Sep 28 (Thursday Oct 1): October's first week",
        "2015-10-14": "work stress and running in the middle of October",
        "2015-10-15": "more running, a calmer week",
        "2015-11-01": "Sunday Nov 1, last day of October's last week (Mon Oct 26)",
    }
    for n, (day, text) in enumerate(moments.items(), start=1):
        _summary_at(kit, conversation_id, 4 * n, _local(day, "23:30", zone), text)
    _summary_at(kit, conversation_id, 40, _local("2015-09-27", "23:30", zone), "September, not October")
    # Another user's weekly summary, due now: the backfill's workers must leave it to a worker.
    other_user, other_profile = kit.user(zone)
    decoy = kit.value(
        "select memory_private.enqueue('summarize_week', jsonb_build_object('profile_id', %s::uuid,"
        " 'week_start', date '2015-10-05'), 'test-decoy:' || %s::text, %s::uuid)",
        [other_profile, other_profile, other_user],
    )

    result = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "backfill", "--profile", str(profile_id), "--year", "2015",
         "--month", "10", "--run", "--json"],
        cwd=ROOT, env=worker_env(database_url), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout.splitlines()[-1])
    assert output["queued"] == 6  # five weeks (Sep 28 .. Oct 26) and the month
    # --run drains the profile's user's jobs only.
    assert output["kinds"]["summarize_week"]["done"] == 3
    assert output["kinds"]["summarize_week"]["skipped"] == 2
    assert output["kinds"]["summarize_month"]["done"] == 1
    assert kit.job(decoy)["status"] == "queued"

    weeks = kit.rows(
        "select week_start_date, iso_year, week_number, conversation_count from memory.weekly_summaries"
        " where profile_id = %s order by week_start_date", [profile_id],
    )
    assert [(str(w["week_start_date"]), w["week_number"]) for w in weeks] == [
        ("2015-09-28", 40), ("2015-10-12", 42), ("2015-10-26", 44)
    ]
    (month,) = kit.rows("select * from memory.monthly_summaries where profile_id = %s", [profile_id])
    assert (month["year"], month["month"], month["weekly_summaries_used"]) == (2015, 10, 3)
    assert all(j["status"] == "done" for j in kit.jobs(user_id=user_id))

    # Running it again queues nothing new; --regenerate redoes every week and the month.
    again = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "backfill", "--profile", str(profile_id), "--year", "2015",
         "--month", "10"],
        cwd=ROOT, env=worker_env(database_url), capture_output=True, text=True, timeout=60,
    )
    assert again.returncode == 0 and again.stdout.startswith("queued 3 job(s)")  # the 2 empty weeks + month


def test_backfill_a_month_for_every_profile_that_talked_in_it(kit: JobKit, database_url: str) -> None:
    """After a cron outage longer than the schedulers look back: --all-profiles queues and runs the
    month of every profile with conversations in it, each in its own time zone, and no other."""
    talked = []
    for zone in ("Europe/Lisbon", "Asia/Tokyo"):
        user_id, profile_id = kit.user(zone)
        conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="June")
        _summary_at(kit, conversation_id, 4, _local("2014-06-11", "10:00", zone), "a June week")
        talked.append(profile_id)
    quiet_user, quiet = kit.user("UTC")
    kit.conn.execute("delete from memory_private.jobs where user_id = any(%s)", [kit.users])

    result = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "backfill", "--all-profiles", "--year", "2014", "--month", "6",
         "--run", "--json"],
        cwd=ROOT, env=worker_env(database_url), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # June 2014: Thursdays 5, 12, 19, 26 -> four weeks and the month, for each profile that talked.
    assert json.loads(result.stdout.splitlines()[-1])["queued"] == 10
    months = kit.rows("select profile_id, weekly_summaries_used from memory.monthly_summaries"
                      " where user_id = any(%s) and year = 2014 and month = 6", [kit.users])
    assert sorted((m["profile_id"], m["weekly_summaries_used"]) for m in months) == sorted((p, 1) for p in talked)
    assert kit.jobs(user_id=quiet_user) == [], f"the profile that did not talk ({quiet}) is not backfilled"
    both = subprocess.run(
        [sys.executable, "-m", "supamem.cli", "backfill", "--all-profiles", "--profile", str(quiet), "--year", "2014",
         "--month", "6"], cwd=ROOT, env=worker_env(database_url), capture_output=True, text=True, timeout=60,
    )
    assert both.returncode == 2 and "not allowed with argument" in both.stderr, "one profile or all, not both"


def test_a_month_waits_for_its_weeks(kit: JobKit, database_url: str, tmp_path: Path) -> None:
    user_id, profile_id = kit.user("Europe/Lisbon")
    conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="August")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s", [user_id])
    _summary_at(kit, conversation_id, 4, _local("2015-08-12", "10:00", "Europe/Lisbon"), "a summer week")
    # August 2015: Thursdays 6, 13, 20, 27 -> weeks of Aug 3, 10, 17, 24; and the month.
    assert kit.value("select memory.backfill_month(%s, 2015, 8)", [profile_id]) == 5
    (month,) = kit.jobs("summarize_month")

    worker = run_worker(tmp_path, worker_env(database_url), "--once", "--kinds", "summarize_month", "--json",
                        *kit.worker_args)
    assert json.loads(worker.stdout)["kinds"] == {"summarize_month": {"deferred": 1}}
    deferred = kit.job(month["id"])
    assert (deferred["status"], deferred["attempts"], deferred["worker"]) == ("queued", 0, None)
    # The default 30 s deferral, counted from a moment between its claim and now.
    deferred_at = deferred["run_after"] - timedelta(seconds=30)
    assert deferred["started_at"] <= deferred_at <= deferred["db_now"], deferred

    run_worker(tmp_path, worker_env(database_url), "--once", "--kinds", "summarize_week", *kit.worker_args)
    assert kit.make_due() == 1  # only the month is left, and its deferral has "passed"
    worker = run_worker(tmp_path, worker_env(database_url), "--once", "--kinds", "summarize_month", "--json",
                        *kit.worker_args)
    assert json.loads(worker.stdout)["kinds"] == {"summarize_month": {"done": 1}}
    assert Counter((j["kind"], j["status"]) for j in kit.jobs()) == {
        ("summarize_week", "done"): 4, ("summarize_month", "done"): 1
    }
    assert kit.value("select weekly_summaries_used from memory.monthly_summaries where profile_id = %s",
                     [profile_id]) == 1


def _week_jobs(kit: JobKit, profile_id: uuid.UUID) -> list[str]:
    return sorted(
        j["payload"]["week_start"] for j in kit.jobs("summarize_week") if j["payload"]["profile_id"] == str(profile_id)
    )


def _week_start(kit: JobKit, at: datetime, zone: str) -> str:
    return str(kit.value("select memory_private.local_week_start(%s, %s)", [at, zone]))


@pytest.mark.parametrize("zone", ["Pacific/Auckland", "America/Los_Angeles"])
def test_weekly_scheduler_uses_the_profiles_local_weeks(kit: JobKit, zone: str) -> None:
    user_id, profile_id = kit.user(zone)
    conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="Weeks")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s", [user_id])
    sunday_late = _local("2015-06-14", "23:30", zone)
    monday_early = _local("2015-06-15", "00:30", zone)
    assert _week_start(kit, sunday_late, zone) == "2015-06-08"  # ISO week 24, Mon Jun 8 - Sun Jun 14
    assert _week_start(kit, monday_early, zone) == "2015-06-15"  # ISO week 25
    _summary_at(kit, conversation_id, 4, sunday_late, "late on Sunday")
    _summary_at(kit, conversation_id, 8, monday_early, "early on Monday")

    def run(at: datetime) -> list[str]:
        kit.value("select memory_private.enqueue_due_weekly_summaries(%s)", [at])
        return _week_jobs(kit, profile_id)

    # Sunday 23:45 local: the week has not ended here yet.
    assert run(_local("2015-06-14", "23:45", zone)) == []
    # Monday 01:00 local: week 24 has ended; week 25 has just begun.
    assert run(_local("2015-06-15", "01:00", zone)) == ["2015-06-08"]
    assert run(_local("2015-06-15", "01:00", zone)) == ["2015-06-08"]  # idempotent
    # The next run is missed; one a week later queues week 25 and still week 24 only once.
    assert run(_local("2015-06-22", "03:00", zone)) == ["2015-06-08", "2015-06-15"]
    assert len(kit.jobs("summarize_week")) == 2


def test_weekly_scheduler_same_instant_different_zones(kit: JobKit) -> None:
    """At 12:30 UTC on Sunday June 14 it is Monday 00:30 in Auckland and Sunday 05:30 in Los Angeles."""
    profiles = {}
    for zone in ("Pacific/Auckland", "America/Los_Angeles"):
        user_id, profile_id = kit.user(zone)
        conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="Zones")
        _summary_at(kit, conversation_id, 4, _local("2015-06-10", "12:00", zone), "midweek")
        profiles[zone] = profile_id
    kit.conn.execute("delete from memory_private.jobs where user_id = any(%s)", [kit.users])
    now = datetime.fromisoformat("2015-06-14T12:30:00+00:00")
    kit.value("select memory_private.enqueue_due_weekly_summaries(%s)", [now])
    assert _week_jobs(kit, profiles["Pacific/Auckland"]) == ["2015-06-08"]
    assert _week_jobs(kit, profiles["America/Los_Angeles"]) == []


def test_a_week_or_month_whose_job_died_is_queued_again_an_hour_later(kit: JobKit) -> None:
    """A dead job held its key: the schedulers never queued the week or month again, and the month
    was summarised without the week. An hour after it died it is queued again, and meanwhile a
    month counts the dead week as pending."""
    zone = "UTC"
    user_id, profile_id = kit.user(zone)
    conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="Dead weeks")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s", [user_id])
    _summary_at(kit, conversation_id, 4, _local("2015-06-10", "12:00", zone), "midweek")
    monday = _local("2015-06-15", "01:00", zone)

    def week(at: datetime, failed: datetime | None = None) -> tuple[str, int]:
        if failed is not None:
            kit.conn.execute("update memory_private.jobs set status = 'dead', attempts = 5, failed_at = %s,"
                             " finished_at = %s where user_id = %s and kind = 'summarize_week'", [failed, failed, user_id])
        kit.value("select memory_private.enqueue_due_weekly_summaries(%s)", [at])
        (job,) = kit.jobs("summarize_week")
        return job["status"], job["attempts"]

    assert week(monday) == ("queued", 0)
    assert week(monday, failed=monday - timedelta(minutes=10)) == ("dead", 5), "not while its cause may last"
    assert week(monday, failed=monday - timedelta(minutes=61)) == ("queued", 0)
    kit.conn.execute("update memory_private.jobs set status = 'done', finished_at = %s where user_id = %s"
                     " and kind = 'summarize_week'", [monday - timedelta(hours=2), user_id])
    kit.value("select memory_private.enqueue_due_weekly_summaries(%s)", [monday])
    assert [j["status"] for j in kit.jobs("summarize_week")] == ["done"], "a finished week is not redone"

    # The month: queued again an hour after its job died; it waits for a week whose job is dead.
    kit.conn.execute("insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date,"
                     " week_end_date, emotional_summary) values (%s, %s, 2015, 24, '2015-06-08', '2015-06-14', 'Calm.')",
                     [user_id, profile_id])
    july = _local("2015-07-06", "01:00", zone)

    def month(failed: datetime) -> tuple[str, int]:
        kit.conn.execute("update memory_private.jobs set status = 'dead', attempts = 5, failed_at = %s,"
                         " finished_at = %s where user_id = %s and kind = 'summarize_month'", [failed, failed, user_id])
        kit.value("select memory_private.enqueue_due_monthly_summaries(%s)", [july])
        (job,) = kit.jobs("summarize_month")
        return job["status"], job["attempts"]

    kit.value("select memory_private.enqueue_due_monthly_summaries(%s)", [july])
    assert month(july - timedelta(minutes=10)) == ("dead", 5)
    assert month(july - timedelta(hours=2)) == ("queued", 0)
    (job,) = kit.jobs("summarize_month")
    kit.conn.execute("update memory_private.jobs set status = 'running', worker = 'probe', attempts = 1,"
                     " leased_until = now() + interval '1 minute' where id = %s", [job["id"]])
    for week_status, pending in (("dead", 1), ("done", 0)):
        kit.conn.execute("update memory_private.jobs set status = %s where user_id = %s and kind = 'summarize_week'",
                         [week_status, user_id])
        assert kit.value("select memory.job_input(%s, 'probe')", [job["id"]])["weeks_pending"] == pending


DST_WEEKS = [
    # zone, Monday that starts the DST week, the Sunday of the change, its length in hours
    ("Pacific/Auckland", "2015-03-30", "2015-04-05", 169),  # NZDT ends: 03:00 -> 02:00
    ("Pacific/Auckland", "2015-09-21", "2015-09-27", 167),  # NZDT starts: 02:00 -> 03:00
    ("America/Los_Angeles", "2015-03-02", "2015-03-08", 167),  # PDT starts
    ("America/Los_Angeles", "2015-10-26", "2015-11-01", 169),  # PDT ends
]


@pytest.mark.parametrize(("zone", "monday", "sunday", "hours"), DST_WEEKS)
def test_a_dst_week_is_seven_local_days(kit: JobKit, zone: str, monday: str, sunday: str, hours: int) -> None:
    user_id, profile_id = kit.user(zone)
    conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="DST")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s", [user_id])
    next_monday = (datetime.fromisoformat(monday) + timedelta(days=7)).date().isoformat()
    first = _local(monday, "00:30", zone)
    last = _local(sunday, "23:30", zone)
    after = _local(next_monday, "00:30", zone)
    start, end = _local(monday, "00:00", zone), _local(next_monday, "00:00", zone)
    # Not 7 x 24 hours, yet one local week (aware datetimes in one zone subtract as wall clocks).
    assert end.astimezone(UTC) - start.astimezone(UTC) == timedelta(hours=hours)
    assert _week_start(kit, first, zone) == monday
    assert _week_start(kit, last, zone) == monday
    assert _week_start(kit, after, zone) == next_monday
    for n, moment in enumerate((first, last, after), start=1):
        _summary_at(kit, conversation_id, 4 * n, moment, f"summary {n}")

    kit.value("select memory_private.enqueue_due_weekly_summaries(%s)", [_local(next_monday, "01:00", zone)])
    assert _week_jobs(kit, profile_id) == [monday]
    (job,) = kit.jobs("summarize_week")
    # The job's input holds both ends of the week and nothing of the next one.
    kit.conn.execute("update memory_private.jobs set status = 'running', worker = 'probe', attempts = 1,"
                     " leased_until = now() + interval '1 minute' where id = %s", [job["id"]])
    job_input = kit.value("select memory.job_input(%s, 'probe')", [job["id"]])
    assert job_input["summaries"] == ["summary 1", "summary 2"]
    assert job_input["time_zone"] == zone


@pytest.mark.parametrize("zone", ["Pacific/Auckland", "America/Los_Angeles"])
def test_month_boundary_follows_the_local_calendar(
    kit: JobKit, database_url: str, tmp_path: Path, zone: str
) -> None:
    """Sunday May 31 2015, 23:30 local belongs to May (its week, Mon May 25, has its Thursday in
    May) in both zones, although in Los Angeles it is already June 1 in UTC; Monday June 1 00:30
    local belongs to June."""
    user_id, profile_id = kit.user(zone)
    conversation_id = kit.conversation(user_id, profile_id, [("Hi", "Hello")], title="Months")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s", [user_id])
    last_of_may = _local("2015-05-31", "23:30", zone)
    first_of_june = _local("2015-06-01", "00:30", zone)
    _summary_at(kit, conversation_id, 4, last_of_may, "the last evening of May")
    _summary_at(kit, conversation_id, 8, first_of_june, "the first night of June")
    assert _week_start(kit, last_of_may, zone) == "2015-05-25"

    kit.value("select memory_private.enqueue_due_weekly_summaries(%s)", [_local("2015-06-08", "01:00", zone)])
    assert _week_jobs(kit, profile_id) == ["2015-05-25", "2015-06-01"]
    run_worker(tmp_path, worker_env(database_url), "--once", "--kinds", "summarize_week", *kit.worker_args)
    weeks = {str(r["week_start_date"]): r["conversation_count"] for r in kit.rows(
        "select week_start_date, conversation_count from memory.weekly_summaries where profile_id = %s", [profile_id])}
    assert weeks == {"2015-05-25": 1, "2015-06-01": 1}

    def months(at: datetime) -> list[str]:
        kit.value("select memory_private.enqueue_due_monthly_summaries(%s)", [at])
        return sorted(j["payload"]["month_start"] for j in kit.jobs("summarize_month"))

    assert months(_local("2015-05-31", "23:45", zone)) == []  # May has not ended here yet
    assert months(_local("2015-06-01", "00:15", zone)) == ["2015-05-01"]
    assert months(_local("2015-06-28", "23:45", zone)) == ["2015-05-01"]  # nor has June
    assert months(_local("2015-07-01", "00:15", zone)) == ["2015-05-01", "2015-06-01"]
    assert months(_local("2015-07-01", "00:15", zone)) == ["2015-05-01", "2015-06-01"]  # idempotent


# --- dates and week boundaries of summaries ---------------------------------------------------


def test_a_month_is_not_queued_before_its_last_week_has_ended(kit: JobKit) -> None:
    """October 2015's last week (Mon 26 Oct - Sun 1 Nov) belongs to October: not done on 1 Nov."""
    user_id, profile_id = kit.user("UTC")
    kit.conn.execute(
        "insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date,"
        " week_end_date, emotional_summary) values (%s, %s, 2015, 42, '2015-10-12', '2015-10-18', 'calm')",
        [user_id, profile_id],
    )
    sunday_noon = datetime.fromisoformat("2015-11-01T12:00:00+00:00")  # inside October's last week
    kit.value("select memory_private.enqueue_due_monthly_summaries(%s)", [sunday_noon])
    assert kit.jobs("summarize_month") == []


def test_a_late_conversation_summary_belongs_to_the_week_of_its_turns(
    kit: JobKit, database_url: str, tmp_path: Path
) -> None:
    """A summary written after a week boundary (a backlog, a retry) is dated by its turns."""
    user_id, profile_id = kit.user("UTC")
    conversation_id = kit.conversation(user_id, profile_id, FOUR_TURNS, title="Last week")
    kit.conn.execute("delete from memory_private.jobs where user_id = %s and kind <> 'summarize_conversation'",
                     [user_id])
    kit.conn.execute("update memory.messages set created_at = now() - interval '14 days'"
                     " where conversation_id = %s", [conversation_id])
    run_worker(tmp_path, worker_env(database_url), "--once", "--kinds", "summarize_conversation", *kit.worker_args)
    turns_week, summary_week = kit.rows(
        "select memory_private.local_week_start(max(m.created_at), 'UTC') as turns,"
        " (select memory_private.local_week_start(s.created_at, 'UTC') from memory.conversation_summaries as s"
        "  where s.conversation_id = %s) as summary"
        " from memory.messages as m where m.conversation_id = %s", [conversation_id, conversation_id],
    )[0].values()
    assert summary_week == turns_week

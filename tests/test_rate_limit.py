"""The extraction rate limit (60 per user per minute) defers work; it never fails it. The
database's other refusals of an extraction (another limit, a memory revised meanwhile) fail it.

A real worker (`jobs.worker.Worker` over the psycopg transport) runs real extraction jobs with the
offline LLM provider behind a wrapper that records every question it is asked. The database
decides: `memory.job_input` puts a job past its user's rate limit back in the queue, its attempt
given back, and the worker asks no model for it. So a burst of one user's extractions is never
dead-lettered, never loses an attempt to the limit, costs one model call per extraction, and is
applied in full once the window has passed. Time passes by ageing the ledger rows and the
deferred jobs' run_after by a minute, never by sleeping.

The job queue is shared with the rest of the suite, so each worker here claims only this test's
users' jobs (`Worker(user_ids=...)`, `memory.claim_jobs(p_user_ids)`), and each test deletes its
users' jobs and erases its users at the end.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from jobs.cli import format_stats
from jobs.handlers import make_llm
from jobs.prompts import extract_job_input
from jobs.transport import PsycopgTransport
from jobs.worker import JsonFormatter, Summary, Worker
from supamem.errors import RateLimitedError

LIMIT = 60


# --- helpers ----------------------------------------------------------------------------------


class People:
    """Users of one test, each with a primary profile and a remembered conversation; created and
    cleaned up as postgres."""

    def __init__(self, database_url: str) -> None:
        self.conn = psycopg.connect(database_url, autocommit=True, row_factory=dict_row)
        self.users: list[uuid.UUID] = []

    def value(self, query: str, params: Any = None) -> Any:
        row = self.conn.execute(query, params).fetchone()
        assert row is not None
        return next(iter(row.values()))

    def user(self, label: str, questions: list[str]) -> tuple[uuid.UUID, list[int]]:
        """A user who asked `questions`, one turn each: (user id, the questions' message ids).
        Each turn notes an extraction, queued as a job here as a worker's first claim would."""
        user_id = self.value("select memory.user_id_for(%s)", [f"rate-limit-{label}-{uuid.uuid4().hex[:12]}"])
        self.users.append(user_id)
        profile_id = self.value(
            "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", [user_id]
        )
        conversation_id = self.value(
            "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s, p_remember => true)).id",
            [user_id, profile_id],
        )
        message_ids = [
            self.value("select user_message_id from memory.add_turn(%s, %s, %s)", [conversation_id, q, "Noted."])
            for q in questions
        ]
        self.conn.execute("select memory_private.queue_pending_extractions()")
        return user_id, message_ids

    def extraction_jobs(self, user_id: uuid.UUID) -> list[dict[str, Any]]:
        """The user's extraction jobs, with the source message's text and the database's now()."""
        return self.conn.execute(
            "select j.*, m.content as question, now() as db_now from memory_private.jobs as j"
            " join memory.messages as m on m.id = (j.payload ->> 'source_message_id')::bigint"
            " where j.user_id = %s and j.kind = 'extract' order by j.id",
            [user_id],
        ).fetchall()

    def extracted(self, user_id: uuid.UUID) -> set[int]:
        """Source message ids in the user's extraction ledger."""
        rows = self.conn.execute(
            "select source_message_id from memory.memory_extractions where user_id = %s", [user_id]
        ).fetchall()
        return {r["source_message_id"] for r in rows}

    def most_in_a_minute(self, user_id: uuid.UUID) -> int:
        """The most ledger rows of the user within any one minute (the window apply_extraction counts)."""
        return self.value(
            "select coalesce(max(n), 0) from (select (select count(*) from memory.memory_extractions as b"
            " where b.user_id = a.user_id and b.created_at <= a.created_at"
            " and b.created_at > a.created_at - interval '1 minute') as n"
            " from memory.memory_extractions as a where a.user_id = %s) as w",
            [user_id],
        )

    def let_a_minute_pass(self, user_id: uuid.UUID) -> None:
        """As if a minute had passed for the user: their ledger rows and their waiting
        extraction jobs' run_after move a minute back."""
        self.conn.execute(
            "update memory.memory_extractions set created_at = created_at - interval '1 minute' where user_id = %s",
            [user_id],
        )
        self.conn.execute(
            "update memory_private.jobs set run_after = run_after - interval '1 minute'"
            " where user_id = %s and kind = 'extract' and status = 'queued'",
            [user_id],
        )

    def cleanup(self) -> None:
        self.conn.execute("delete from memory_private.jobs where user_id = any(%s)", [self.users])
        for user_id in self.users:
            self.conn.execute("select memory.erase_user(%s)", [user_id])
        self.conn.close()


class CountingLLM:
    """The offline provider, recording the user message of every extraction it is asked about
    (and calling `on_call` with the job input first, from the job's thread)."""

    def __init__(self, on_call: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self.inner = make_llm({"SUPAMEM_LLM_PROVIDER": "offline"})
        self.asked: list[str] = []
        self.on_call = on_call
        self._lock = threading.Lock()

    def complete(self, messages: list[dict[str, Any]], output: Any, **kwargs: Any) -> Any:
        job_input = extract_job_input(messages[-1]["content"])
        with self._lock:
            self.asked.append(str(job_input.get("user_message")))
        if self.on_call is not None:
            self.on_call(job_input)
        return self.inner.complete(messages, output, **kwargs)


@pytest.fixture
def people(database_url: str) -> Iterator[People]:
    found = People(database_url)
    try:
        yield found
    finally:
        found.cleanup()


@pytest.fixture
def transport(database_url: str) -> Iterator[PsycopgTransport]:
    opened = PsycopgTransport.from_url(database_url, max_size=6)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def job_logs() -> Iterator[list[dict[str, Any]]]:
    """The worker's log lines (JSON, as `supamem worker` writes them) during the test."""
    lines: list[dict[str, Any]] = []
    formatter = JsonFormatter()

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(formatter.format(record)))

    logger = logging.getLogger("supamem.jobs")
    handler = Collect()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def run_once(transport: Any, llm: CountingLLM, users: list[uuid.UUID], concurrency: int = 4) -> Summary:
    worker = Worker(transport, llm, kinds=["extract"], concurrency=concurrency, lease=60, user_ids=users)
    return worker.run(once=True)


# --- tests ------------------------------------------------------------------------------------


def test_a_burst_waits_for_the_window_and_every_extraction_applies(
    people: People, transport: PsycopgTransport, job_logs: list[dict[str, Any]]
) -> None:
    assert people.value("select (memory_private.setting('extraction_rate_limit'))::integer") == LIMIT
    busy, busy_messages = people.user("busy", [f"I keep a diary, this is page {i}" for i in range(1, 71)])
    calm, _ = people.user("calm", ["I swim in the sea on Sundays", "I bake rye bread on Fridays"])
    llm = CountingLLM()

    first = run_once(transport, llm, [busy, calm])

    jobs = people.extraction_jobs(busy)
    assert len(jobs) == 70
    done = [j for j in jobs if j["status"] == "done"]
    waiting = [j for j in jobs if j["status"] != "done"]
    # The limit holds, and the first 60 ran at once; the others wait, deferred, not failed.
    assert people.most_in_a_minute(busy) <= LIMIT
    assert len(done) >= LIMIT and waiting, first.table()
    assert people.extracted(busy) == {j["payload"]["source_message_id"] for j in done}
    assert all(j["attempts"] == 1 for j in done)
    for job in waiting:
        assert job["status"] == "queued" and job["attempts"] == 0, job
        assert job["run_after"] > job["db_now"], job
        assert job["last_error"] is None and job["failed_at"] is None, job
    # The other user was not held back.
    assert {j["status"] for j in people.extraction_jobs(calm)} == {"done"}
    # One model call per extraction that ran, none for a deferred one.
    calm_questions = ["I swim in the sea on Sundays", "I bake rye bread on Fridays"]
    assert Counter(llm.asked) == Counter([j["question"] for j in done] + calm_questions)
    assert not {j["question"] for j in waiting} & set(llm.asked)
    # The summary and the logs say deferred, not failed.
    by_kind = first.by_kind()["extract"]
    assert by_kind["done"] == len(done) + 2
    assert by_kind["deferred"] >= len(waiting)
    assert by_kind["failed"] == by_kind["dead"] == 0
    deferrals = [line for line in job_logs if line.get("event") == "job_deferred"]
    assert len(deferrals) == by_kind["deferred"]
    assert {line["job_id"] for line in deferrals} >= {j["id"] for j in waiting}
    for line in deferrals:
        assert line["kind"] == "extract" and line["outcome"] == "deferred" and line["run_after"], line
        assert f"rate limit: {LIMIT} extractions per user per minute" in line["message"], line
    assert not [line for line in job_logs if line.get("event") in ("job_failed", "job_dead")]
    # job_stats shows them as waiting work, not as retries.
    stats = people.conn.execute("select * from memory.job_stats() where kind = 'extract'").fetchone()
    assert stats is not None and stats["waiting"] >= len(waiting)
    assert "waiting" in format_stats([stats]).splitlines()[0].split()  # `supamem jobs` shows it

    # The window passes: the deferred jobs run, and every extraction is applied.
    rounds = 0
    while any(j["status"] != "done" for j in people.extraction_jobs(busy)):
        rounds += 1
        assert rounds <= 3, "the deferred extractions did not run after three minutes"
        people.let_a_minute_pass(busy)
        later = run_once(transport, llm, [busy])
        assert later.total("failed") == later.total("dead") == 0, later.table()

    jobs = people.extraction_jobs(busy)
    assert [(j["status"], j["attempts"]) for j in jobs] == [("done", 1)] * 70
    assert people.extracted(busy) == set(busy_messages)
    assert Counter(llm.asked) == Counter([j["question"] for j in jobs] + calm_questions)
    assert people.most_in_a_minute(busy) <= LIMIT


def test_an_answer_is_applied_when_the_window_fills_while_the_model_answers(
    people: People, transport: PsycopgTransport, database_url: str
) -> None:
    racer, messages = people.user("race", [f"I paint landscapes, canvas {i}" for i in range(1, 63)])
    job_message, direct, refused = messages[0], messages[1:61], messages[61]
    # The app extracts the other messages itself (memory.apply_extraction), so one job remains.
    people.conn.execute(
        "delete from memory_private.jobs where user_id = %s and kind = 'extract' and dedup_key <> %s",
        [racer, f"message:{job_message}"],
    )

    def direct_callers_fill_the_window(_: Mapping[str, Any]) -> None:
        with psycopg.connect(database_url, autocommit=True) as conn:
            for message_id in direct:
                conn.execute("select * from memory.apply_extraction(%s, '[]'::jsonb, %s)", [message_id, racer])

    llm = CountingLLM(on_call=direct_callers_fill_the_window)
    summary = run_once(transport, llm, [racer], concurrency=1)

    assert summary.by_kind()["extract"] == Counter(done=1), summary.table()
    assert llm.asked == ["I paint landscapes, canvas 1"]
    [job] = people.extraction_jobs(racer)
    assert (job["status"], job["attempts"], job["last_error"]) == ("done", 1, None)
    assert people.extracted(racer) == {job_message, *direct}
    assert people.most_in_a_minute(racer) == LIMIT + 1  # the admitted job's answer went past the direct callers
    with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="rate limit: 60 extractions per user per minute"):
        people.conn.execute("select * from memory.apply_extraction(%s, '[]'::jsonb, %s)", [refused, racer])


class _RefusingFinish:
    """A transport whose finish_extraction meets a database limit (54000)."""

    def __init__(self, inner: PsycopgTransport) -> None:
        self.inner = inner

    def rpc(self, function: str, params: Mapping[str, Any] | None = None) -> Any:
        if function == "finish_extraction":
            raise RateLimitedError("rate limit: 60 extractions per user per minute", sqlstate="54000")
        return self.inner.rpc(function, params)

    def close(self) -> None:
        pass


def test_a_limit_met_at_finish_defers_the_job_without_spending_an_attempt(
    people: People, transport: PsycopgTransport, job_logs: list[dict[str, Any]]
) -> None:
    user_id, _ = people.user("finish", ["I grow tomatoes on the balcony"])
    summary = run_once(_RefusingFinish(transport), CountingLLM(), [user_id], concurrency=1)

    assert summary.by_kind()["extract"] == Counter(deferred=1), summary.table()
    [job] = people.extraction_jobs(user_id)
    assert (job["status"], job["attempts"], job["failed_at"], job["last_error"]) == ("queued", 0, None, None)
    assert 50 <= (job["run_after"] - job["db_now"]).total_seconds() <= 70
    [line] = [line for line in job_logs if line.get("event") == "job_deferred"]
    assert line["job_id"] == job["id"] and line["retry_after"] == 60.0 and "54000" in line["message"]


# --- other refusals fail the job --------------------------------------------------------------


def test_a_cap_every_pinned_memory_fills_fails_the_job_instead_of_deferring_it(
    people: People, transport: PsycopgTransport, job_logs: list[dict[str, Any]]
) -> None:
    """Another 54000 than the rate limit is the output's (here a cap below the pinned memories):
    deferred without spending an attempt, the job asked the model again every minute for ever."""
    user_id, _ = people.user("cap", ["I moved to Porto last spring"])
    profile = people.value("select id from memory.profiles where user_id = %s", [user_id])
    for content in ("Is vegetarian", "Speaks Dutch"):
        people.conn.execute("select memory.remember(%s, 'fact', %s, %s, p_pinned => true)", [content, user_id, profile])
    cap = people.value("select value from memory_private.settings where key = 'memory_cap'")
    people.conn.execute("update memory_private.settings set value = '1' where key = 'memory_cap'")
    try:
        summary = run_once(transport, CountingLLM(), [user_id], concurrency=1)
    finally:
        people.conn.execute("update memory_private.settings set value = %s where key = 'memory_cap'", [Jsonb(cap)])
    assert summary.by_kind()["extract"] == Counter(failed=1), summary.table()
    [job] = people.extraction_jobs(user_id)
    assert (job["status"], job["attempts"]) == ("queued", 1)
    assert "54000" in job["last_error"] and "memory cap reached" in job["last_error"]
    assert not [line for line in job_logs if line.get("event") == "job_deferred"]


def test_a_memory_revised_while_the_model_answers_fails_the_job_not_its_lease(
    people: People, transport: PsycopgTransport, job_logs: list[dict[str, Any]], database_url: str
) -> None:
    """Another 55000 than the lease check's is the output's too: taken for a lost lease, the job was
    left running, unheld, until its lease ran out."""
    user_id, _ = people.user("revised", ["I live in Porto now"])
    profile = people.value("select id from memory.profiles where user_id = %s", [user_id])
    lisbon = people.value("select memory_id from memory.remember('Lives in Lisbon', 'fact', %s, %s)", [user_id, profile])

    def revised_elsewhere(_: Mapping[str, Any]) -> None:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("select memory.revise_memory(%s, 'Lives in Faro', p_user_id => %s)", [lisbon, user_id])

    summary = run_once(transport, CountingLLM(on_call=revised_elsewhere), [user_id], concurrency=1)
    assert summary.by_kind()["extract"] == Counter(failed=1), summary.table()
    [job] = people.extraction_jobs(user_id)
    assert (job["status"], job["attempts"], job["worker"]) == ("queued", 1, None)
    assert "55000" in job["last_error"] and "only an active memory can be revised" in job["last_error"]
    assert not [line for line in job_logs if line.get("event") == "lease_lost"]


"""Users, conversations and jobs of one job test (tests/test_worker.py, tests/test_transports.py).

The job queue is shared with the whole suite (every test's turns queue titles, summaries and
extractions for its own users) and with pg_cron's schedulers, so a job test claims only its own
users' jobs: `memory.claim_jobs(..., p_user_ids)`, a `Worker` with `user_ids`, or
`supamem worker --user` (`JobKit.worker_args`). Nothing else in the queue is touched, so tests
(and two runs against one database) never take each other's jobs.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row

from jobs.handlers import make_llm
from jobs.transport import PsycopgTransport
from jobs.worker import Worker


class JobKit:
    """Users, conversations and jobs of one test, created and cleaned up as postgres."""

    def __init__(self, database_url: str, label: str) -> None:
        self.label = label
        self.conn = psycopg.connect(database_url, autocommit=True, row_factory=dict_row)
        self.users: list[uuid.UUID] = []

    # -- data --

    def user(self, timezone: str = "UTC") -> tuple[uuid.UUID, uuid.UUID]:
        """A user with a primary profile in `timezone`: (user id, profile id)."""
        external_id = f"jobs-{self.label}-{uuid.uuid4().hex[:12]}"
        user_id = self.value("select memory.user_id_for(%s)", [external_id])
        self.users.append(user_id)
        profile_id = self.value(
            "insert into memory.profiles (user_id, is_primary, timezone) values (%s, true, %s) returning id",
            [user_id, timezone],
        )
        return user_id, profile_id

    def conversation(
        self, user_id: uuid.UUID, profile_id: uuid.UUID, turns: list[tuple[str, str]], title: str | None = None
    ) -> uuid.UUID:
        conversation_id = self.value(
            "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s, p_remember => true,"
            " p_title => %s)).id",
            [user_id, profile_id, title],
        )
        for question, answer in turns:
            self.conn.execute("select * from memory.add_turn(%s, %s, %s)", [conversation_id, question, answer])
        # The turns' notes become extract and summary jobs, as the first claim of a worker would make them.
        self.conn.execute("select memory_private.queue_pending_extractions(), memory_private.queue_pending_summaries()")
        return conversation_id

    def value(self, query: str, params: Any = None) -> Any:
        row = self.conn.execute(query, params).fetchone()
        assert row is not None
        return next(iter(row.values()))

    def rows(self, query: str, params: Any = None) -> list[dict[str, Any]]:
        return self.conn.execute(query, params).fetchall()

    # -- jobs --

    def jobs(self, kind: str | None = None, user_id: uuid.UUID | None = None) -> list[dict[str, Any]]:
        """This test's jobs (of one kind, of one of its users), oldest first; without a kind, the
        model's jobs (embed jobs are the embeddings tests' concern)."""
        users = self.users if user_id is None else [user_id]
        return self.rows(
            "select * from memory_private.jobs where user_id = any(%s)"
            " and (kind = %s or %s::text is null and kind <> 'embed') order by id",
            [users, kind, kind],
        )

    def job(self, job_id: int) -> dict[str, Any]:
        rows = self.rows("select *, now() as db_now from memory_private.jobs where id = %s", [job_id])
        assert rows, f"job {job_id} is gone"
        return rows[0]

    def make_due(self) -> int:
        """Let this test's queued jobs run now, as if their backoff or deferral had passed;
        returns how many of the model's jobs are queued (pg_cron's minutely scan may have queued
        an embed job for the test's messages at any moment)."""
        self.conn.execute(
            "update memory_private.jobs set run_after = now()"
            " where user_id = any(%s) and status = 'queued' and run_after > now()",
            [self.users],
        )
        return self.value(
            "select count(*) from memory_private.jobs where user_id = any(%s) and status = 'queued'"
            " and kind <> 'embed'",
            [self.users],
        )

    @property
    def worker_args(self) -> list[str]:
        """`supamem worker` options that keep it to this test's users."""
        return [arg for user_id in self.users for arg in ("--user", str(user_id))]

    def cleanup(self) -> None:
        self.conn.execute("delete from memory_private.jobs where user_id = any(%s)", [self.users])
        # A provider this test found down is this test's alone.
        self.conn.execute("delete from memory_private.provider_outages")
        for user_id in self.users:
            self.conn.execute("select memory.erase_user(%s)", [user_id])
        self.conn.close()


@contextmanager
def running_worker(database_url: str, user_ids: list[uuid.UUID], kinds: tuple[str, ...] = ("extract",)) -> Iterator[None]:
    """A worker of these users' jobs (the offline provider) running in a thread until the block
    ends, as `supamem worker --user` would beside the app."""
    transport = PsycopgTransport.from_url(database_url, max_size=2)
    worker = Worker(transport, make_llm({"SUPAMEM_LLM_PROVIDER": "offline"}), kinds=list(kinds), concurrency=1,
                    lease=60, user_ids=user_ids)
    thread = threading.Thread(target=worker.run, kwargs={"once": False})
    thread.start()
    try:
        yield
    finally:
        worker.request_stop()
        thread.join()
        transport.close()

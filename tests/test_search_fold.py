"""The search-term fold never passes a message whose transaction is still open.

A message's id is drawn when its insert runs, so a writer still open can hold an id below one
already committed. The fold (memory_private.fold_search_terms) first waits for the writers open at
its start (at most p_wait): given no time, it counts no new message while one is open; given time,
it waits for the writer to end and then posts both messages. Real connections, committed rows,
the test's user erased at the end.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest


@pytest.fixture
def user(database_url: str) -> Iterator[Any]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        uid = conn.execute("select memory.user_id_for(%s)", [f"fold-writers-{uuid.uuid4()}"]).fetchone()[0]
        yield uid
        conn.execute("delete from memory.users where id = %s", [uid])


def conversation(conn: psycopg.Connection, user: Any) -> Any:
    return conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [user]).fetchone()[0]


def add(conn: psycopg.Connection, conv: Any, content: str) -> int:
    return conn.execute("select (memory.add_message(%s, 'user', %s)).id", [conv, content]).fetchone()[0]


def posted(conn: psycopg.Connection, message: int) -> bool:
    return conn.execute("select exists (select 1 from memory_private.search_postings where message_id = %s)",
                        [message]).fetchone()[0]


def test_the_fold_waits_for_an_open_writer_below_its_ids(database_url: str, user: Any) -> None:
    with psycopg.connect(database_url, autocommit=True) as setup, \
            psycopg.connect(database_url) as open_writer, \
            psycopg.connect(database_url, autocommit=True) as folder:
        first, second = conversation(setup, user), conversation(setup, user)
        early = add(open_writer, first, "an early zeppelin, committed late")
        late = add(setup, second, "a later zeppelin, committed at once")
        assert early < late

        # Given no time, the fold passes neither id while the early writer is open.
        folder.execute("select memory_private.fold_search_terms(2147483647, interval '0')")
        through = folder.execute(
            "select through from memory_private.message_scans where name = 'search_terms'").fetchone()[0]
        assert through < early
        assert not posted(folder, late)

        # Given time, it waits for the writer, then posts both.
        pid = folder.info.backend_pid
        fold = threading.Thread(
            target=folder.execute, args=["select memory_private.fold_search_terms(2147483647, interval '5 minutes')"]
        )
        fold.start()
        deadline = time.monotonic() + 60
        while not setup.execute("select exists (select 1 from pg_stat_activity where pid = %s and wait_event = 'PgSleep')",
                                [pid]).fetchone()[0]:
            assert time.monotonic() < deadline, "the fold never waited for the open writer"
        open_writer.commit()
        fold.join()
        assert posted(setup, early) and posted(setup, late)

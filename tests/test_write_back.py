"""Buffered turns are written back exactly once, even by two write-backs racing each other.

The first write-back looks up which client turn ids are stored already; a second one that started
before the first committed cannot see them, so the table's unique key on the client turn id
(`messages_client_turn_id_key`) is what keeps the turn to one copy: the loser skips it.
"""

from __future__ import annotations

import threading
import time

from client_helpers import stored_messages, waiting_on

from supamem import ConversationStore
from supamem.fallback import BufferedTurn, write_back


def test_racing_write_backs_store_each_turn_once(client_db, postgres_conn, make_id):
    store = ConversationStore(client_db)
    user_id = make_id("racer")
    store.store_turn(user_id, "before", "the outage")
    user = store.identity.user(user_id)
    conversation = postgres_conn.execute(
        "select id from memory.conversations where user_id = %s", [user]
    ).fetchone()[0]
    turns = [BufferedTurn(key="k", user_id=user_id, query=f"q{n}", response=f"a{n}", metadata={}) for n in (1, 2)]

    second: dict[str, object] = {}

    def write_back_again() -> None:
        with client_db.transaction() as tx:
            second["pid"] = tx.execute("select pg_backend_pid() as pid")[0]["pid"]
            started.set()
            second["written"] = write_back(tx, conversation, turns, user)

    started = threading.Event()
    with client_db.transaction() as tx:
        assert write_back(tx, conversation, turns, user) == 2
        racer = threading.Thread(target=write_back_again)
        racer.start()
        assert started.wait(10)
        # The racer's lookup ran before this commit, so it tries the same turns and must wait.
        deadline = time.monotonic() + 30
        while not waiting_on(postgres_conn, second["pid"], "Lock"):
            assert racer.is_alive(), "the second write-back finished without waiting"
            assert time.monotonic() < deadline, "the second write-back never reached the lock"
    racer.join(10)
    assert second["written"] == 0
    contents = [m["content"] for m in stored_messages(postgres_conn, conversation)]
    assert contents == ["before", "the outage", "q1", "a1", "q2", "a2"]

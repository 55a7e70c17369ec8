"""Buffered turns are written back exactly once, even by two write-backs racing each other, and
where they belong: a participant's into the shared conversation, a turn held for an archived
conversation into a new one.

The first write-back looks up which client turn ids are stored already; a second one that started
before the first committed cannot see them, so the table's unique key on the client turn id
(`messages_client_turn_id_key`) is what keeps the turn to one copy: the loser skips it.
"""

from __future__ import annotations

import threading
import time

from client_helpers import stored_messages, waiting_on
from db_proxy import db_proxy
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from supamem import ConversationMemoryManager, ConversationStore
from supamem.db import Database
from supamem.fallback import BufferedTurn, write_back, write_back_session


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


def _conversation(postgres_conn, owner) -> object:
    return postgres_conn.execute("select (memory.create_conversation(%s)).id", [owner]).fetchone()[0]


def test_a_participants_held_turns_go_into_the_shared_conversation(client_db, postgres_conn, make_id):
    """In together mode a participant's turns belong to the owner's conversation, the participant
    their questions' author: they went into a new conversation of the participant's own."""
    owner, guest = (postgres_conn.execute("select memory.user_id_for(%s)", [make_id(n)]).fetchone()[0] for n in ("o", "g"))
    shared = _conversation(postgres_conn, owner)
    postgres_conn.execute("insert into memory.participants (conversation_id, user_id) values (%s, %s)", [shared, guest])
    turns = [BufferedTurn(key="k", user_id=str(guest), query=f"q{n}", response=f"a{n}", metadata={}) for n in (1, 2)]

    def no_new_session(tx, wanted):
        raise AssertionError("the turns belong to the shared conversation")

    assert write_back_session(client_db, shared, turns, guest, no_new_session) == (shared, 2)
    rows = postgres_conn.execute("select user_id, author_id, role, content from memory.messages where conversation_id = %s"
                                 " order by id", [shared]).fetchall()
    assert rows == [(owner, guest, "user", "q1"), (owner, None, "assistant", "a1"),
                    (owner, guest, "user", "q2"), (owner, None, "assistant", "a2")]
    assert write_back_session(client_db, shared, turns, guest, no_new_session) == (shared, 0), "written once"


def test_turns_held_for_an_archived_conversation_go_into_a_new_one(client_db, postgres_conn, make_id):
    """A turn cannot go into an archived conversation (55000), as the live chat would have started
    a new session: the write-back failed on every flush, the turns held until the process ended."""
    user = postgres_conn.execute("select memory.user_id_for(%s)", [make_id("a")]).fetchone()[0]
    archived = _conversation(postgres_conn, user)
    postgres_conn.execute("update memory.conversations set archived = true where id = %s", [archived])
    turns = [BufferedTurn(key="k", user_id=str(user), query="held", response="through the outage", metadata={})]

    def new_session(tx, wanted):
        return tx.call_one("create_conversation", user_id=user, id=wanted)["id"]

    session, written = write_back_session(client_db, archived, turns, user, new_session)
    assert session != archived and written == 1
    assert [m["content"] for m in stored_messages(postgres_conn, session)] == ["held", "through the outage"]
    assert stored_messages(postgres_conn, archived) == []
    assert write_back_session(client_db, archived, turns, user, new_session) == (session, 0), "written once"


def test_a_turn_whose_commit_went_unacknowledged_is_written_once(database_url, postgres_conn, make_id):
    """The live add_turn commits but its reply never arrives (the connection is lost after the
    commit): the manager buffers the turn, and the write-back finds the committed copy by its
    question and answer instead of storing the turn a second time."""
    target = conninfo_to_dict(database_url)
    with db_proxy(str(target.get("host") or "127.0.0.1"), int(target.get("port") or 5432)) as proxy:
        db = Database(make_conninfo(database_url, host="127.0.0.1", port=proxy.port), min_size=1, max_size=2, timeout=5.0)
        try:
            manager = ConversationMemoryManager(db)
            user = make_id("ack")
            session = manager.store_turn(None, user, "Before", "the blip").session_id
            proxy.arm(b"add_turn")
            held = manager.store_turn(session, user, "Lost", "acknowledgement")
            assert proxy.cut.is_set() and held.buffered, "the commit went through, its reply did not"
            manager.store_turn(session, user, "After", "it")  # reaches the database: writes back first
        finally:
            db.close()
    contents = [m["content"] for m in stored_messages(postgres_conn, session)]
    assert contents == ["Before", "the blip", "Lost", "acknowledgement", "After", "it"]

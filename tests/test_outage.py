"""The database stops mid-conversation and comes back: nothing is lost, nothing is doubled.

The outage is real: `scripts/db.sh stop` / `start`, run from the repo root. It runs against a
throwaway cluster on its own port (SUPAMEM_OUTAGE_PORT, by default 7 above the test database's
port, moved below the ephemeral ports: 32329 for the shared 54322; db.sh keeps it in
.supamem/port-<port>/), rebuilt and
migrated for this module, so stopping it never breaks other tests or colleagues using the shared
database, and two runs on two database ports (`SUPAMEM_DB_PORT=... make test`) never reset each
other's outage cluster. Setting SUPAMEM_OUTAGE_PORT to the test database's port runs the same
test against that cluster (its users are fresh ids, so rows of earlier runs do not matter).
Either way a finalizer starts the cluster again, even when the test fails; the throwaway one is
then stopped when the module is done.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import psycopg
import pytest
from client_helpers import wait_for
from llm_server import chat_completion, llm_server  # noqa: F401 (fixture)
from migrate import throwaway_port
from psycopg.conninfo import conninfo_to_dict
from server_helpers import serve

from jobs.llm import LLMClient, LLMSettings
from supamem import ConversationMemoryManager, ConversationStore, Database, db
from supamem.fallback import write_back

REPO_ROOT = Path(__file__).resolve().parent.parent
TEST_DB_PORT = int(conninfo_to_dict(db.database_url()).get("port") or 5432)
OUTAGE_PORT = int(os.environ.get("SUPAMEM_OUTAGE_PORT", throwaway_port(TEST_DB_PORT, 7)))


def db_sh(command: str) -> None:
    env = {**os.environ, "SUPAMEM_DB_PORT": str(OUTAGE_PORT)}
    result = subprocess.run(
        ["scripts/db.sh", command],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"db.sh {command} failed:\n{result.stdout}\n{result.stderr}"


def migrate(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/migrate.py", "--bootstrap", "--database-url", url],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def outage_url():
    url = f"postgresql://postgres:postgres@127.0.0.1:{OUTAGE_PORT}/postgres"
    if OUTAGE_PORT == TEST_DB_PORT:
        db_sh("start")
    else:
        db_sh("reset")  # a fresh throwaway cluster with the current migrations
    result = migrate(url)
    assert result.returncode == 0, f"migrate failed:\n{result.stdout}\n{result.stderr}"
    yield url
    db_sh("start")
    if OUTAGE_PORT != TEST_DB_PORT:
        db_sh("stop")


def _messages(url: str, conversation_id: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "select turn_number, role, content, metadata ->> 'client_turn_id' from memory.messages"
            " where conversation_id = %s order by turn_number, role desc",
            [conversation_id],
        ).fetchall()


def _conversation_of(url: str, store: ConversationStore, user: str) -> str:
    with psycopg.connect(url, autocommit=True) as conn:
        (row,) = conn.execute(
            "select c.id from memory.conversations as c where c.user_id = %s", [store.identity.user(user)]
        ).fetchall()
    return str(row[0])


def test_outage_mid_conversation(outage_url, caplog, request, make_id):
    request.addfinalizer(lambda: db_sh("start"))  # the database runs again, whatever happens
    db = Database(outage_url, timeout=1.0, connect_timeout=1.0, retry_interval=1.0)
    request.addfinalizer(db.close)
    manager, store = ConversationMemoryManager(db), ConversationStore(db)
    user, store_user = make_id("outage"), make_id("store")

    session = manager.create_session(user)
    manager.store_turn(session, user, "q1", "a1")
    manager.store_turn(session, user, "q2", "a2")
    assert len(manager.get_session_history(session)) == 2
    assert store.store_turn(store_user, "s1", "r1")
    assert len(store.get_history(store_user)) == 1
    # Written, never read back before the outage: the buffer still numbers after them.
    unread_user = make_id("unread")
    assert store.store_turn(unread_user, "u1", "v1")
    unread = manager.store_turn(None, user, "n1", "m1").session_id

    db_sh("stop")
    with caplog.at_level(logging.WARNING, logger="supamem"):
        third = manager.store_turn(session, user, "q3", "a3")
        fourth = manager.store_turn(session, user, "q4", "a4", {"intent": "more"})
        assert third.buffered and fourth.buffered
        assert (third.turn_number, fourth.turn_number) == (3, 4)
        history = manager.get_session_history(session)
        assert [(t.turn_number, t.query_text) for t in history] == [(1, "q1"), (2, "q2"), (3, "q3"), (4, "q4")]
        context = manager.get_context_for_query(session, "the first one")
        assert context.degraded and len(context.history) == 4
        offline = manager.create_session(user)  # a client-side session id
        manager.store_turn(offline, user, "o1", "p1")
        assert store.store_turn(store_user, "s2", "r2")
        assert [h["user_query"] for h in store.get_history(store_user)] == ["s1", "s2"]
        assert store.store_turn(unread_user, "u2", "v2")
        assert [(h["turn_number"], h["user_query"]) for h in store.get_history(unread_user)] == [(2, "u2")]
        assert manager.store_turn(unread, user, "n2", "m2").turn_number == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(session in m and user in m and "store_turn" in m for m in warnings)
    assert any(store_user in m and "get_history" in m for m in warnings)
    buffered = [t for key in manager.fallback.pending_keys() for t in manager.fallback.pending(key)]
    store_buffered = [t for key in store.fallback.pending_keys() for t in store.fallback.pending(key)]
    assert [t.query for t in buffered if t.query != "n2"] == ["q3", "q4", "o1"]
    assert [t.query for t in store_buffered if t.query != "u2"] == ["s2"]
    buffered = [t for t in buffered if t.query != "n2"]
    store_buffered = [t for t in store_buffered if t.query != "u2"]

    db_sh("start")
    assert db.wait_available(60)  # the background reconnect found it
    caplog.clear()
    history = manager.get_session_history(session)  # the next call writes the buffer back
    assert len(manager.fallback) == 0
    assert [(t.turn_number, t.query_text, t.buffered) for t in history] == [
        (1, "q1", False), (2, "q2", False), (3, "q3", False), (4, "q4", False),
    ]
    assert history[3].metadata["intent"] == "more"
    expected = [
        (1, "user", "q1", None), (1, "assistant", "a1", None),
        (2, "user", "q2", None), (2, "assistant", "a2", None),
        (3, "user", "q3", buffered[0].client_turn_id), (3, "assistant", "a3", buffered[0].client_turn_id),
        (4, "user", "q4", buffered[1].client_turn_id), (4, "assistant", "a4", buffered[1].client_turn_id),
    ]
    assert _messages(outage_url, session) == expected

    offline_history = manager.get_session_history(offline)  # the client id is the real session's id
    assert [(t.turn_number, t.query_text, t.session_id) for t in offline_history] == [(1, "o1", offline)]
    assert [row[2] for row in _messages(outage_url, offline)] == ["o1", "p1"]

    assert [(h["turn_number"], h["user_query"]) for h in store.get_history(store_user)] == [(1, "s1"), (2, "s2")]
    # The numbers the buffer gave are the ones the write-back stored.
    assert [(h["turn_number"], h["user_query"]) for h in store.get_history(unread_user)] == [(1, "u1"), (2, "u2")]
    assert [(t.turn_number, t.query_text) for t in manager.get_session_history(unread)] == [(1, "n1"), (2, "n2")]
    store_conversation = _conversation_of(outage_url, store, store_user)
    store_rows = _messages(outage_url, store_conversation)
    assert [r[2] for r in store_rows] == ["s1", "r1", "s2", "r2"]

    # A write-back attempted again (its commit went through but the acknowledgement was lost, so
    # the turns were still buffered) writes nothing: the same write-back finds their client ids.
    user_uuid, store_uuid = manager.identity.user(user), store.identity.user(store_user)
    with db.transaction() as tx:
        assert write_back(tx, UUID(session), buffered[:2], user_uuid) == 0
        assert write_back(tx, UUID(offline), buffered[2:], user_uuid) == 0
        assert write_back(tx, UUID(store_conversation), store_buffered, store_uuid) == 0
    assert _messages(outage_url, session) == expected
    assert [row[2] for row in _messages(outage_url, offline)] == ["o1", "p1"]
    assert _messages(outage_url, store_conversation) == store_rows


def test_restart_between_calls_is_invisible(outage_url, request, make_id):
    """Connections killed by a restart are replaced at checkout (pool `check`), with no error."""
    request.addfinalizer(lambda: db_sh("start"))
    db = Database(outage_url, min_size=2, timeout=5.0, retry_interval=1.0)
    request.addfinalizer(db.close)
    manager = ConversationMemoryManager(db)
    user = make_id("restart")
    session = manager.create_session(user)
    manager.store_turn(session, user, "before", "a")
    with db.transaction() as tx:
        before = tx.execute("select pg_backend_pid() as pid")[0]["pid"]
    db_sh("stop")
    db_sh("start")
    with db.transaction() as tx:  # would raise if a dead connection were handed out
        after = tx.execute("select pg_backend_pid() as pid")[0]["pid"]
    assert after != before
    turn = manager.store_turn(session, user, "after", "b")
    assert not turn.buffered and turn.turn_number == 2
    assert [t.query_text for t in manager.get_session_history(session)] == ["before", "after"]


def test_a_stopped_database_is_answered_from_the_fallback_without_waiting(outage_url, request, make_id):
    """The first call after the database stops does not wait for the pool's `timeout` (a minute
    here): it sees that the server refuses connections and answers from the buffer; so do the
    calls after it, while one background thread reconnects."""
    request.addfinalizer(lambda: db_sh("start"))
    db = Database(outage_url, timeout=60.0, connect_timeout=60.0, retry_interval=0.5)
    request.addfinalizer(db.close)
    store = ConversationStore(db)
    user = make_id("nowait")
    assert store.store_turn(user, "before", "a")
    db_sh("stop")
    started = time.monotonic()
    for i in range(3):
        assert store.store_turn(user, f"during {i}", "b")
    assert time.monotonic() - started < db.timeout / 2, "a call waited for the pool instead of the fallback"
    assert len(store.fallback) == 3
    db_sh("start")
    assert db.wait_available(120)
    assert [h["user_query"] for h in store.get_history(user)] == ["before", "during 0", "during 1", "during 2"]


def test_the_chat_answers_through_an_outage_and_writes_its_turns_back(outage_url, request, caplog, llm_server):  # noqa: F811
    """Seed 001, property 8, at the chat endpoint: while the database is stopped the answers go on
    from the window read before (no error to the user), and the user's next request once it is
    back writes those turns into their sessions first, in order and once."""
    request.addfinalizer(lambda: db_sh("start"))
    db = Database(outage_url, timeout=1.0, connect_timeout=1.0, retry_interval=0.5)
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    with psycopg.connect(outage_url, autocommit=True) as conn:
        for served in serve(outage_url, conn, llm=model, db=db):
            alice = served.person()
            llm_server.enqueue(chat_completion("Four runs a week."))
            first = alice.http.post("/chat", json={"message": "Plan my running week"}).json()
            session = first["conversation_id"]
            assert first["degraded"] is False

            db_sh("stop")
            llm_server.enqueue(chat_completion("Add a long run."), chat_completion("Hello, offline."))
            with caplog.at_level(logging.WARNING, logger="supamem_server"):
                asked = {"message": "And on weekends?", "conversation_id": session, "client_turn_id": "weekends"}
                during = alice.http.post("/chat", json=asked)
                assert during.status_code == 200, during.text
                assert (during.json()["degraded"], during.json()["conversation_id"]) == (True, session)
                system = llm_server.requests[-1].json["messages"][0]["content"]
                assert "Turn 1:\nUser: Plan my running week\nAI: Four runs a week." in system, "the window read before"
                # Sent again (its response lost): the held turn, not a second one.
                again = alice.http.post("/chat", json={**asked, "conversation_id": None}).json()
                assert (again["replayed"], again["response"], again["conversation_id"]) == (True, "Add a long run.", session)
                assert again["metadata"] == {"client_turn_id": "weekends"} and "could not be reached" in again["error"]
                fresh = alice.http.post("/chat", json={"message": "A new topic"}).json()
                assert fresh["degraded"] is True and fresh["conversation_id"] != session
                assert alice.http.post("/chat", json={"message": "   "}).status_code == 422
            assert len(llm_server.requests) == 3, "an empty message never reached the model"
            warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
            assert any(session in m and str(alice.id) in m and "chat" in m for m in warnings)

            db_sh("start")
            assert db.wait_available(60)
            llm_server.enqueue(chat_completion("Rest on Sunday."))
            after = alice.http.post("/chat", json={"message": "And rest days?", "conversation_id": session})
            assert after.status_code == 200, after.text
            assert after.json()["degraded"] is False
            system = llm_server.requests[-1].json["messages"][0]["content"]
            assert "Turn 2:\nUser: And on weekends?\nAI: Add a long run." in system, "written back before the read"
            rows = _messages(outage_url, session)
            assert [(r[0], r[1], r[2]) for r in rows] == [
                (1, "user", "Plan my running week"), (1, "assistant", "Four runs a week."),
                (2, "user", "And on weekends?"), (2, "assistant", "Add a long run."),
                (3, "user", "And rest days?"), (3, "assistant", "Rest on Sunday."),
            ]
            assert rows[2][3] is not None and rows[4][3] is None, "the buffered turn carries its client id"
            assert [(r[0], r[2]) for r in _messages(outage_url, fresh["conversation_id"])] == [
                (1, "A new topic"), (1, "Hello, offline."),
            ], "the session started offline exists under the id the user was given"
            with psycopg.connect(outage_url, autocommit=True) as check:
                owners = check.execute("select distinct user_id from memory.conversations where id = any(%s)",
                                       [[session, fresh["conversation_id"]]]).fetchall()
            assert owners == [(alice.id,)]
            llm_server.enqueue(chat_completion("Go on."))
            alice.http.post("/chat", json={"message": "Go on", "conversation_id": fresh["conversation_id"]})
            assert [r[0] for r in _messages(outage_url, fresh["conversation_id"])] == [1, 1, 2, 2], "written back once"


@pytest.mark.parametrize("interval", [0.2, 3600.0], ids=["while-running", "when-stopping"])
def test_chat_turns_held_through_an_outage_are_written_back_without_another_request(
    outage_url, request, llm_server, interval,  # noqa: F811
):
    """A user who never comes back loses nothing: the app's background write-back stores the held
    turn once the database is back (every `interval` seconds), or when the app stops."""
    request.addfinalizer(lambda: db_sh("start"))
    db = Database(outage_url, timeout=1.0, connect_timeout=1.0, retry_interval=0.2)
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    with psycopg.connect(outage_url, autocommit=True) as conn:
        for served in serve(outage_url, conn, llm=model, db=db, write_back_interval=interval):
            maria = served.person()
            llm_server.enqueue(chat_completion("Hello."), chat_completion("Held for later."))
            session = maria.http.post("/chat", json={"message": "Hi"}).json()["conversation_id"]
            db_sh("stop")
            held = maria.http.post("/chat", json={"message": "Are you keeping this?", "conversation_id": session})
            assert held.json()["degraded"] is True
            db_sh("start")
            assert db.wait_available(60)
            if interval < 60:  # while the app still runs, with no other request
                wait_for(lambda held=session: len(_messages(outage_url, held)) == 4, 30, "the background write-back")
    rows = _messages(outage_url, session)
    assert [(r[0], r[2]) for r in rows] == [(1, "Hi"), (1, "Hello."), (2, "Are you keeping this?"), (2, "Held for later.")]


def test_a_first_chat_and_a_deleted_session_through_an_outage(outage_url, request, llm_server):  # noqa: F811
    """A user whose first request comes during an outage keeps its turn, written back into the
    session they were given though they had no row yet (their next request registers them after
    the write-back); a session deleted before its held turns were written back stays deleted; a
    session started with a profile is made with it (one not theirs is left out, the turns kept); a
    participant's refused delete of the host's session leaves their held turn to be written back."""
    request.addfinalizer(lambda: db_sh("start"))
    db = Database(outage_url, timeout=1.0, connect_timeout=1.0, retry_interval=0.2)
    model = LLMClient(LLMSettings(provider="openai", base_url=llm_server.base_url, api_key="k", max_retries=0))
    with psycopg.connect(outage_url, autocommit=True) as conn:
        for served in serve(outage_url, conn, llm=model, db=db, write_back_interval=3600.0):
            newcomer, deleter, planner = served.person(), served.person(), served.person()
            host, guest = served.person(), served.person()
            profile = planner.http.post("/api/profiles", json={"name": "Running", "primary": True}).json()["id"]
            foreign = deleter.http.post("/api/profiles", json={"name": "Theirs", "primary": True}).json()["id"]
            guest.http.get("/api/profiles")  # their first request makes their kit user
            llm_server.enqueue(chat_completion("Hello both."))
            shared = host.http.post("/api/conversations", json={"title": "Trip", "mode": "together"}).json()["id"]
            assert host.http.post("/chat", json={"message": "Let us plan", "conversation_id": shared}).status_code == 200
            dropped = host.http.post("/api/conversations", json={"title": "Party", "mode": "together"}).json()["id"]
            for together in (shared, dropped):
                assert host.http.post(f"/api/conversations/{together}/participants",
                                      json={"user_id": str(guest.id)}).status_code == 201
            db_sh("stop")
            llm_server.enqueue(chat_completion("Welcome."), chat_completion("Gone soon."),
                               chat_completion("Four runs."), chat_completion("Borrowed."), chat_completion("Noted."))
            first = newcomer.http.post("/chat", json={"message": "Hello, first time"}).json()
            doomed = deleter.http.post("/chat", json={"message": "Delete this one"}).json()
            planned = planner.http.post("/chat", json={"message": "Plan my week", "profile_id": profile}).json()
            borrowed = planner.http.post("/chat", json={"message": "Use theirs", "profile_id": foreign}).json()
            joined = guest.http.post("/chat", json={"message": "I am in", "conversation_id": shared}).json()
            assert joined["degraded"] is True
            llm_server.enqueue(chat_completion("Cake it is."))
            assert guest.http.post("/chat", json={"message": "Cake?", "conversation_id": dropped}).json()["degraded"]
            assert first["degraded"] is True and doomed["degraded"] is True and planned["degraded"] is True
            # An answer the database would refuse is given, as the live write gives it, and not held.
            llm_server.enqueue(chat_completion("x" * 100_001))
            refused = newcomer.http.post("/chat", json={"message": "Say a lot", "conversation_id": first["conversation_id"]})
            assert refused.status_code == 200 and refused.json()["error"].startswith("the answer could not be stored")
            db_sh("start")
            assert db.wait_available(60)
            llm_server.enqueue(chat_completion("Welcome back."), chat_completion("Something else."))
            after = newcomer.http.post("/chat", json={"message": "I am back", "conversation_id": first["conversation_id"]})
            assert after.status_code == 200, after.text
            assert (after.json()["conversation_id"], after.json()["degraded"]) == (first["conversation_id"], False)
            assert deleter.http.delete(f"/api/conversations/{doomed['conversation_id']}").status_code == 204
            # A participant may not delete the host's conversation: refused, their held turn stays.
            assert guest.http.delete(f"/api/conversations/{shared}").status_code == 404
            # The host's delete drops everyone's held turns of it: the guest's do not make it again.
            assert host.http.delete(f"/api/conversations/{dropped}").status_code == 204
            assert deleter.http.post("/chat", json={"message": "Something else"}).status_code == 200
    # The app has stopped, writing back what it still held: not the deleted session.
    assert [(r[0], r[2]) for r in _messages(outage_url, first["conversation_id"])] == [
        (1, "Hello, first time"), (1, "Welcome."), (2, "I am back"), (2, "Welcome back."),
    ]
    with psycopg.connect(outage_url, autocommit=True) as check:
        gone = check.execute("select count(*) from memory.conversations where id = %s", [doomed["conversation_id"]])
        assert gone.fetchone() == (0,), "the deleted session was not brought back"
        sessions = check.execute("select id, mode, profile_id from memory.conversations where user_id = %s",
                                 [planner.id]).fetchall()
        assert {(str(r[0]), r[1], r[2] and str(r[2])) for r in sessions} == {
            (planned["conversation_id"], "profile", profile), (borrowed["conversation_id"], "chat", None),
        }, "a session started during the outage keeps its profile; another user's profile is not taken"
    assert [r[2] for r in _messages(outage_url, borrowed["conversation_id"])] == ["Use theirs", "Borrowed."]
    assert [r[2] for r in _messages(outage_url, shared)] == ["Let us plan", "Hello both.", "I am in", "Noted."]
    with psycopg.connect(outage_url, autocommit=True) as check:
        made = check.execute("select count(*) from memory.conversations where id = %s", [dropped]).fetchone()
        assert made == (0,), "the host's deleted conversation was not made again by the guest's held turn"

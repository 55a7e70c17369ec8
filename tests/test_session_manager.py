"""Seed 001's ConversationMemoryManager on the real database."""

from __future__ import annotations

import logging
from datetime import timedelta
from uuid import UUID, uuid4

import pytest
from client_helpers import age_turns, conversations_of, stored_messages

from supamem import (
    ConversationDatabaseService,
    ConversationMemoryManager,
    ConversationStore,
    Database,
    FallbackBuffer,
    InvalidInputError,
    PromptContext,
    Turn,
    get_memory_manager,
)
from supamem import session_manager as session_manager_module


@pytest.fixture
def manager(client_db):
    return ConversationMemoryManager(client_db)


def test_create_session_returns_a_uuid_and_logs_it(manager, make_id, caplog):
    user = make_id()
    with caplog.at_level(logging.INFO, logger="supamem"):
        session = manager.create_session(user)
    assert str(UUID(session)) == session
    (record,) = [r for r in caplog.records if r.getMessage().startswith("created session")]
    assert record.getMessage() == f"created session {session[:8]}... for user {str(user)[:8]}..."
    assert (record.supamem_session_id, record.supamem_operation) == (session, "create_session")


def test_sessions_have_a_24_hour_ttl(manager, postgres_conn, make_id):
    session = manager.create_session(make_id())
    ttl, expires_in = postgres_conn.execute(
        "select ttl, expires_at - now() from memory.conversations where id = %s", [session]
    ).fetchone()
    assert ttl == timedelta(hours=24)
    assert timedelta(hours=23, minutes=59) < expires_in <= timedelta(hours=24)


def test_store_turn_returns_a_complete_turn(manager, make_id):
    user = make_id("alice")
    session = manager.create_session(user)
    turn = manager.store_turn(session, user, "What is Python?", "A language.", {"intent": "define"})
    assert isinstance(turn, Turn)
    assert (turn.session_id, turn.user_id, turn.turn_number) == (session, user, 1)
    assert (turn.query_text, turn.response_text) == ("What is Python?", "A language.")
    assert turn.metadata == {"intent": "define"}
    assert turn.id and turn.created_at and not turn.buffered


def test_history_is_chronological_and_limited(manager, make_id):
    user = make_id()
    session = manager.create_session(user)
    for n in range(1, 8):
        manager.store_turn(session, user, f"q{n}", f"a{n}", {"n": n})
    history = manager.get_session_history(session)
    assert [t.turn_number for t in history] == list(range(1, 8))
    assert [t.metadata["n"] for t in history] == list(range(1, 8))
    assert all(t.user_id == user and t.session_id == session for t in history)
    assert [t.query_text for t in manager.get_session_history(session, limit=3)] == ["q5", "q6", "q7"]


def test_history_retrieval_is_at_most_50_turns(manager, make_id):
    """Seed 001: "Limit conversation history retrieval (default: 20 turns, max: 50)"."""
    user = make_id()
    session = manager.create_session(user)
    for n in range(1, 53):
        manager.store_turn(session, user, f"q{n}", f"a{n}")
    assert [t.turn_number for t in manager.get_session_history(session, limit=100)] == list(range(3, 53))
    assert manager.get_context_for_query(session, "more").history[-1].turn_number == 52
    assert len(manager.get_context_for_query(session, "more").history) == 20


def test_a_missing_session_id_starts_a_session(manager, make_id):
    user = make_id()
    turn = manager.store_turn(None, user, "q", "a")
    assert UUID(turn.session_id)
    assert [t.query_text for t in manager.get_session_history(turn.session_id)] == ["q"]


@pytest.mark.parametrize("bad", ["not-a-uuid", "", "1234"])
def test_invalid_session_starts_a_new_one(manager, make_id, bad):
    user = make_id()
    assert manager.get_session_history(bad) == []
    turn = manager.store_turn(bad, user, "q", "a")
    assert turn.session_id != bad
    assert UUID(turn.session_id)
    assert [t.query_text for t in manager.get_session_history(turn.session_id)] == ["q"]
    assert manager.get_session_history(bad) == []


def test_an_unknown_uuid_is_the_new_sessions_id(client_db, manager, postgres_conn, make_id):
    """A UUID no conversation has is the client's choice: the session is created with it."""
    user = make_id()
    chosen = uuid4()
    assert manager.get_session_history(chosen) == []
    turn = manager.store_turn(str(chosen).upper(), user, "q", "a")  # any spelling of the UUID
    assert turn.session_id == str(chosen) and turn.turn_number == 1
    assert manager.store_turn(chosen, user, "q2", "a2").session_id == str(chosen)
    fresh = ConversationMemoryManager(client_db)  # another process knows it too
    assert [t.query_text for t in fresh.get_session_history(str(chosen))] == ["q", "q2"]
    owner = postgres_conn.execute("select user_id, ttl from memory.conversations where id = %s", [chosen]).fetchone()
    assert owner == (manager.identity.user(user), timedelta(hours=24))


def test_another_users_session_is_not_written_to(manager, make_id):
    owner, intruder = make_id("owner"), make_id("intruder")
    session = manager.create_session(owner)
    manager.store_turn(session, owner, "mine", "ok")
    turn = manager.store_turn(session, intruder, "sneaky", "no")
    assert turn.session_id != session
    assert [t.query_text for t in manager.get_session_history(session)] == ["mine"]


@pytest.mark.usefixtures("retention_sweep_paused")
def test_expired_session_starts_a_new_one(manager, postgres_conn, make_id):
    user = make_id()
    session = manager.create_session(user)
    manager.store_turn(session, user, "old", "a")
    age_turns(postgres_conn, session, [1], timedelta(hours=25))
    assert manager.get_session_history(session) == []
    turn = manager.store_turn(session, user, "new", "b")
    assert turn.session_id != session and turn.turn_number == 1


def test_delete_session(manager, postgres_conn, make_id):
    user = make_id()
    session = manager.create_session(user)
    for n in range(3):
        manager.store_turn(session, user, f"q{n}", f"a{n}")
    assert manager.delete_session(session) == 3
    assert manager.get_session_history(session) == []
    assert stored_messages(postgres_conn, session) == []
    assert manager.delete_session(session) == 0
    assert manager.delete_session("not-a-uuid") == 0


def test_context_for_query_in_one_call(manager, make_id):
    user = make_id()
    session = manager.create_session(user)
    manager.store_turn(session, user, "Show me red shoes", "Here are 3 red shoes.")
    manager.store_turn(session, user, "And blue ones?", "Here are 2 blue shoes.")
    context = manager.get_context_for_query(session, "tell me more about the first one")
    assert isinstance(context, PromptContext)
    assert context.conversation_id == session and not context.degraded
    assert [t.turn_number for t in context.history] == [1, 2]
    assert context.referenced_turn is not None
    assert context.referenced_turn.query_text == "Show me red shoes"
    assert context.memories == []
    assert context.format_history().startswith("Previous conversation:\nTurn 1:\nUser: Show me red shoes")
    assert manager.get_context_for_query(session, "no reference here").referenced_turn is None
    assert manager.get_context_for_query("junk", "the first one").history == []


@pytest.mark.usefixtures("retention_sweep_paused")
def test_cleanup_old_conversations(manager, postgres_conn, make_id):
    user = make_id()
    old, fresh = manager.create_session(user), manager.create_session(user)
    manager.store_turn(old, user, "old", "a")
    manager.store_turn(fresh, user, "fresh", "b")
    age_turns(postgres_conn, old, [1], timedelta(hours=26))
    result = manager.cleanup_old_conversations()
    assert result.errors == []
    assert result.sessions_deleted >= 1 and result.turns_deleted >= 1
    assert result.execution_time >= 0
    gone = postgres_conn.execute("select count(*) from memory.conversations where id = %s", [old]).fetchone()
    assert gone == (0,)
    assert [t.query_text for t in manager.get_session_history(fresh)] == ["fresh"]


def test_cleanup_logs_its_statistics_and_a_failure_is_reported_not_raised(manager, caplog):
    """Seed 001's cleanup service: each run logs what it deleted and how long it took; a run that
    fails (here the database is unreachable) logs the error and reports it in `errors`, and the
    caller goes on."""
    with caplog.at_level(logging.INFO, logger="supamem"):
        ran = manager.cleanup_old_conversations()
    assert ran.errors == [] and any(m.startswith("cleanup: ") and " turns deleted in " in m for m in caplog.messages)
    caplog.clear()
    unreachable = ConversationMemoryManager(Database("postgresql://postgres@127.0.0.1:1/none", connect_timeout=1))
    try:
        with caplog.at_level(logging.INFO, logger="supamem"):
            failed = unreachable.cleanup_old_conversations()
    finally:
        unreachable.db.close()
    assert len(failed.errors) == 1 and failed.errors[0].startswith("DatabaseUnavailableError")
    assert (failed.sessions_deleted, failed.turns_deleted) == (0, 0)
    assert any(r.levelno >= logging.WARNING and "cleanup_old_conversations" in r.getMessage() for r in caplog.records)


def test_invalid_input_raises_and_logs_context(manager, make_id, caplog):
    user = make_id()
    session = manager.create_session(user)
    for query, response in [("", "a"), ("q", " \n\t"), ("q\x00", "a"), ("q", "a\x00")]:
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="supamem"), pytest.raises(InvalidInputError):
            manager.store_turn(session, user, query, response)
        (record,) = caplog.records
        assert session in record.getMessage() and user in record.getMessage()
        assert record.supamem_operation == "store_turn"
    assert manager.get_session_history(session) == []


def test_supabase_auth_user_ids_are_their_own_user(manager, postgres_conn, make_auth_user):
    auth_id = make_auth_user()
    session = manager.create_session(str(auth_id))
    turn = manager.store_turn(session, str(auth_id), "q", "a")
    assert turn.user_id == str(auth_id)
    owner = postgres_conn.execute("select user_id from memory.conversations where id = %s", [session]).fetchone()
    assert owner == (auth_id,)


def test_signed_in_users_see_only_their_own_sessions(client_db, manager, make_auth_user):
    alice, bob = make_auth_user(), make_auth_user()
    session = manager.create_session(alice)
    manager.store_turn(session, alice, "alice's question", "answer")
    with client_db.as_user(alice) as tx:
        assert [r["user_content"] for r in tx.call("turn_history", conversation_id=UUID(session))] == [
            "alice's question"
        ]
    with client_db.as_user(bob) as tx:
        assert tx.call("turn_history", conversation_id=UUID(session)) == []
        assert tx.execute("select * from memory.messages where conversation_id = %s", [session]) == []
    # Acting as a user never leaks into the next transaction on the same pooled connection.
    with client_db.transaction() as tx:
        assert tx.execute("select current_user as role")[0]["role"] == "service_role"
        assert tx.execute("select auth.uid() as uid")[0]["uid"] is None


def test_get_memory_manager_is_a_singleton(monkeypatch):
    monkeypatch.setattr(session_manager_module, "_manager", None)
    first = get_memory_manager()
    try:
        assert first is get_memory_manager()
        assert isinstance(first.db, Database)
    finally:
        first.db.close()
        monkeypatch.setattr(session_manager_module, "_manager", None)


def test_fallback_bounds_drop_oldest_with_a_warning(caplog):
    buffer = FallbackBuffer(max_turns_per_key=2, max_total_turns=3)
    with caplog.at_level(logging.WARNING, logger="supamem"):
        for n in range(3):
            buffer.append("a", "u", f"q{n}", "r", None)
        buffer.append("b", "u", "qb1", "r", None)
        buffer.append("b", "u", "qb2", "r", None)
    assert len(buffer) == 3
    assert [t.query for t in buffer.pending("a")] == ["q2"]
    assert [t.query for t in buffer.pending("b")] == ["qb1", "qb2"]
    assert sum("dropped the oldest buffered turn" in r.getMessage() for r in caplog.records) == 2


def test_turn_from_dict_is_seed_001s_constructor():
    data = {
        "id": "7", "session_id": str(uuid4()), "user_id": "u", "turn_number": 2,
        "query_text": "q", "response_text": "r", "created_at": "2026-01-01T00:00:00+00:00",
        "metadata": None,
    }
    turn = Turn.from_dict(data)
    assert (turn.turn_number, turn.metadata, turn.created_at.year) == (2, {}, 2026)


def test_sessions_and_the_running_conversation_of_one_user_stay_apart(client_db, make_id):
    """A seed 000 store and seed 001 sessions for the same user never share a conversation."""
    user = make_id("apart")
    manager = ConversationMemoryManager(client_db)
    store = ConversationStore(client_db)
    session = manager.create_session(user)
    manager.store_turn(session, user, "session question", "session answer")
    store.store_turn(user, "store question", "store answer")
    assert [t.query_text for t in manager.get_session_history(session)] == ["session question"]
    assert [h["user_query"] for h in store.get_history(user)] == ["store question"]


# -- outages: client-chosen session ids, shared buffers ---------------------------------------


@pytest.fixture
def down_db(closed_port_url):
    """A client whose database is unreachable (nothing listens on its port)."""
    db = Database(closed_port_url, connect_timeout=0.3, timeout=0.3, retry_interval=600)
    yield db
    db.close()


def test_a_session_started_offline_keeps_its_id_after_a_restart(database_url, down_db, postgres_conn, make_id):
    """The write-back creates the offline session with its client-side id: no alias, no process
    memory needed, so a fresh process (new pool, new manager) reads it by that id."""
    user = make_id("offline")
    buffer = FallbackBuffer()
    offline = ConversationMemoryManager(down_db, fallback=buffer)
    session = offline.create_session(user)
    first = offline.store_turn(session, user, "asked offline", "answered offline")
    second = offline.store_turn(session, user, "asked again", "answered again", {"n": 2})
    assert first.buffered and second.buffered and first.session_id == second.session_id == session

    back = Database(database_url, max_size=2)  # the client restarts: new pool, new objects
    try:
        writer = ConversationMemoryManager(back, fallback=buffer)
        assert writer.flush_pending() == 2 and len(buffer) == 0
    finally:
        back.close()
    after = Database(database_url, max_size=2)  # and again: nothing of the write-back is left
    try:
        reader = ConversationMemoryManager(after)
        history = reader.get_session_history(session)
        assert [(t.turn_number, t.query_text, t.session_id, t.buffered) for t in history] == [
            (1, "asked offline", session, False), (2, "asked again", session, False),
        ]
        assert history[1].metadata["n"] == 2
        assert reader.store_turn(session, user, "online now", "yes").session_id == session
    finally:
        after.close()
    assert len(stored_messages(postgres_conn, session)) == 6


@pytest.mark.usefixtures("retention_sweep_paused")
def test_offline_turns_for_an_expired_session_go_to_a_new_one(client_db, down_db, postgres_conn, make_id):
    """The id is taken (an expired session not swept yet): creating it conflicts, so the buffered
    turns land in a new session, as a live call's would; the expired one stays as it was."""
    user = make_id("expired-offline")
    manager = ConversationMemoryManager(client_db)
    session = manager.create_session(user)
    manager.store_turn(session, user, "old", "a")
    age_turns(postgres_conn, session, [1], timedelta(hours=25))
    buffer = FallbackBuffer()
    assert ConversationMemoryManager(down_db, fallback=buffer).store_turn(session, user, "new", "b").buffered
    assert ConversationMemoryManager(client_db, fallback=buffer).flush_pending() == 1
    sessions = conversations_of(postgres_conn, manager.identity.user(user))
    assert len(sessions) == 2 and str(sessions[1]["id"]) != session
    assert [t.query_text for t in manager.get_session_history(sessions[1]["id"])] == ["new"]
    assert [r["content"] for r in stored_messages(postgres_conn, session)] == ["old", "a"]


def test_a_shared_buffer_keeps_stores_sessions_and_tenants_apart(client_db, down_db, postgres_conn, make_id):
    """Buffer keys are namespaced by owner kind and tenant, and each owner writes back only its
    own: a store never writes a session's turns, nor a tenant another tenant's."""
    user = make_id("shared")
    buffer = FallbackBuffer()
    sessions_down = ConversationMemoryManager(down_db, fallback=buffer)
    store_down, tenant_down = (ConversationStore(down_db, fallback=buffer, tenant_id=t) for t in (None, 7))
    session = sessions_down.create_session(user)
    sessions_down.store_turn(session, user, "session q", "session a")
    assert store_down.store_turn(user, "store q", "store a")
    assert tenant_down.store_turn(user, "tenant q", "tenant a")
    # During the outage each owner reads its own turns only.
    assert [h["user_query"] for h in store_down.get_history(user)] == ["store q"]
    assert [h["user_query"] for h in tenant_down.get_history(user)] == ["tenant q"]
    assert [t.query_text for t in sessions_down.get_session_history(session)] == ["session q"]
    assert len(buffer) == 3

    manager = ConversationMemoryManager(client_db, fallback=buffer)
    assert manager.flush_pending() == 1  # its own turn only
    assert len(buffer) == 2
    store, tenant_store = (ConversationStore(client_db, fallback=buffer, tenant_id=t) for t in (None, 7))
    assert [h["user_query"] for h in store.get_history(user)] == ["store q"]  # writes back its own first
    assert len(buffer) == 1
    assert [h["user_query"] for h in tenant_store.get_history(user)] == ["tenant q"]
    assert len(buffer) == 0
    assert [t.query_text for t in manager.get_session_history(session)] == ["session q"]
    mine = conversations_of(postgres_conn, manager.identity.user(user))
    assert len(mine) == 2  # the session and the store's running conversation, nothing else
    assert [r["content"] for r in stored_messages(postgres_conn, session)] == ["session q", "session a"]


# -- retention ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("retention_sweep_paused")
def test_cleanup_uses_the_databases_sweep_settings(manager, postgres_conn, make_id):
    """No hard-coded batches: the batch size and the number of batches are the settings'
    (sweep_batch_size, sweep_max_batches), as for pg_cron's sweep."""
    store = ConversationStore(manager.db)
    user = make_id("sweep")
    for n in range(1, 6):
        store.store_turn(user, f"q{n}", f"a{n}")
    (conversation,) = conversations_of(postgres_conn, store.identity.user(user))
    age_turns(postgres_conn, conversation["id"], [1, 2, 3, 4, 5], timedelta(hours=25))
    saved = postgres_conn.execute(
        "select key, value::text from memory_private.settings"
        " where key in ('sweep_batch_size', 'sweep_max_batches')"
    ).fetchall()
    postgres_conn.execute(
        "update memory_private.settings set value = '2' where key in ('sweep_batch_size', 'sweep_max_batches')"
    )
    try:  # two batches of two rows per table, whatever the caller's defaults were
        turns = store.cleanup_old_turns(user)
        result = manager.cleanup_old_conversations()
    finally:
        for key, value in saved:
            postgres_conn.execute("update memory_private.settings set value = %s::jsonb where key = %s", [value, key])
    assert turns == 2  # 4 of the user's 10 expired messages
    assert result.errors == []
    assert result.messages_deleted <= 4 and result.sessions_deleted <= 4 and result.short_term_deleted <= 4


def test_seed_001s_database_service_name_serves_its_calls(client_db, make_id):
    """Seed 001's ConversationDatabaseService interface: store_turn returns the Turn, the session's
    history reads it back with its metadata, cleanup reports what it did."""
    service = ConversationDatabaseService(client_db)
    user = make_id("dbservice")
    session = service.create_session(user)
    stored = service.store_turn(session, user, "What is a tempo run?", "A steady, hard effort.", {"intent": "define"})
    assert (stored.session_id, stored.turn_number, stored.metadata["intent"]) == (session, 1, "define")
    (read,) = service.get_session_history(session, limit=50)
    assert (read.query_text, read.response_text, read.metadata["intent"]) == (
        "What is a tempo run?", "A steady, hard effort.", "define")
    assert service.cleanup_old_conversations().errors == []
    assert service.delete_session(session) == 1

"""Seed 001's short-term clarification state (memory.short_term_*), 5 minutes by default."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from client_helpers import users_with_external_id

from supamem import ConversationHandler, ConversationMemoryManager, Database, ShortTermMemory


@pytest.fixture
def short_term(client_db):
    return ShortTermMemory(client_db)


def _lifetime(postgres_conn, short_term: ShortTermMemory, user: str, key: str = "clarification") -> timedelta:
    """How long the state was given when last written (both ends stamped by that write, so the
    answer does not depend on how long ago that was)."""
    row = postgres_conn.execute(
        "select expires_at - updated_at from memory.short_term_state where user_id = %s and key = %s",
        [short_term.identity.user(user), key],
    ).fetchone()
    assert row is not None
    return row[0]


def test_set_get_clear_clarification(short_term, make_id):
    user = make_id()
    state = {"question": "Which one?", "options": ["red shoes", "blue shoes"], "original": "show shoes"}
    assert short_term.get_clarification(user) is None
    short_term.set_clarification(user, state)
    assert short_term.get_clarification(user) == state
    assert short_term.clear_clarification(user) is True
    assert short_term.get_clarification(user) is None
    assert short_term.clear_clarification(user) is False


def test_reads_of_an_unknown_user_create_nothing(short_term, postgres_conn, make_id):
    user = make_id("reader")
    assert short_term.get_clarification(user) is None
    assert short_term.clear_clarification(user) is False
    assert users_with_external_id(postgres_conn, user) == 0


def test_default_lifetime_is_five_minutes(short_term, postgres_conn, make_id):
    user = make_id()
    short_term.set_clarification(user, {"q": 1})
    assert _lifetime(postgres_conn, short_term, user) == timedelta(minutes=5)


def test_custom_lifetime_and_overwrite(short_term, postgres_conn, make_id):
    user = make_id()
    short_term.set_clarification(user, {"v": 1}, ttl=timedelta(seconds=30))
    assert _lifetime(postgres_conn, short_term, user) == timedelta(seconds=30)
    short_term.set_clarification(user, {"v": 2})
    assert short_term.get_clarification(user) == {"v": 2}
    assert _lifetime(postgres_conn, short_term, user) == timedelta(minutes=5)


def test_expired_state_reads_as_absent(short_term, postgres_conn, make_id):
    user = make_id()
    short_term.set_clarification(user, {"q": 1})
    postgres_conn.execute(
        "update memory.short_term_state set expires_at = now() - interval '1 second' where user_id = %s",
        [short_term.identity.user(user)],
    )
    assert short_term.get_clarification(user) is None


def test_reading_is_activity_so_the_lifetime_starts_again(short_term, postgres_conn, make_id):
    """Seed 001: the state expires after 5 minutes of inactivity, not 5 minutes after it was set."""
    user = make_id()
    short_term.set_clarification(user, {"q": 1})
    uid = short_term.identity.user(user)
    query = "select updated_at, expires_at from memory.short_term_state where user_id = %s"
    postgres_conn.execute(  # four idle minutes: one left
        "update memory.short_term_state set updated_at = updated_at - interval '4 minutes',"
        " expires_at = expires_at - interval '4 minutes' where user_id = %s",
        [uid],
    )
    idle_since, expiring = postgres_conn.execute(query, [uid]).fetchone()
    assert short_term.get_clarification(user) == {"q": 1}
    read_at, expires = postgres_conn.execute(query, [uid]).fetchone()
    assert read_at - idle_since >= timedelta(minutes=4)  # the read is the new last activity
    assert expires - read_at == timedelta(minutes=5)  # and the whole lifetime counts from it
    assert expires - expiring >= timedelta(minutes=4)


def test_generic_keys_hold_any_json(short_term, make_id):
    user = make_id()
    for key, value in [("list", [1, "two"]), ("text", "plain"), ("number", 3), ("flag", False)]:
        short_term.set(user, key, value)
        assert short_term.get(user, key) == value
    assert short_term.get_clarification(user) is None  # independent keys


def test_users_do_not_share_state(short_term, make_id):
    alice, bob = make_id("alice"), make_id("bob")
    short_term.set_clarification(alice, {"who": "alice"})
    assert short_term.get_clarification(bob) is None


def test_conversation_handler_answers_on_the_class_as_seed_001_calls_it(client_db, make_id):
    """Seed 001's chat endpoint calls `ConversationHandler.get_clarification(user_id)` on the class."""
    user = make_id("handler")
    ConversationHandler.set_clarification(user, {"options": ["red", "blue"]})
    assert ConversationHandler.get_clarification(user) == {"options": ["red", "blue"]}
    assert ShortTermMemory(client_db).get_clarification(user) == {"options": ["red", "blue"]}, "kept in the database"
    assert ConversationHandler(client_db).clear_clarification(user) is True, "an instance works as before"
    assert ConversationHandler.get_clarification(user) is None
    assert isinstance(ConversationHandler.shared(), ShortTermMemory)


def test_independent_of_long_term_memory(client_db, short_term, make_id):
    user = make_id()
    manager = ConversationMemoryManager(client_db)
    short_term.set_clarification(user, {"pending": True})
    session = manager.create_session(user)
    manager.store_turn(session, user, "q", "a")
    manager.delete_session(session)
    assert short_term.get_clarification(user) == {"pending": True}
    short_term.clear_clarification(user)
    other = manager.create_session(user)
    manager.store_turn(other, user, "q2", "a2")
    assert [t.query_text for t in manager.get_session_history(other)] == ["q2"]


def test_signed_in_users_reach_only_their_own_state(client_db, make_auth_user):
    alice, bob = make_auth_user(), make_auth_user()
    with client_db.as_user(alice) as tx:
        tx.call("short_term_set", key="clarification", value={"owner": "alice"})
        assert tx.call_value("short_term_get", key="clarification") == {"owner": "alice"}
    with client_db.as_user(bob) as tx:
        assert tx.call_value("short_term_get", key="clarification") is None
        assert tx.execute("select * from memory.short_term_state where user_id = %s", [alice]) == []
        assert tx.call_value("short_term_delete", key="clarification") is False
    # The service reads it for alice by her id (service_role passes p_user_id).
    assert ShortTermMemory(client_db).get_clarification(str(alice)) == {"owner": "alice"}


def test_outage_keeps_state_in_process(closed_port_url, make_id, caplog):
    db = Database(closed_port_url, connect_timeout=0.3, timeout=0.3, retry_interval=60)
    short_term = ShortTermMemory(db)
    user = make_id()
    try:
        with caplog.at_level(logging.WARNING, logger="supamem"):
            short_term.set_clarification(user, {"q": "which?"})
            assert short_term.get_clarification(user) == {"q": "which?"}
            assert short_term.clear_clarification(user) is True
            assert short_term.get_clarification(user) is None
        assert any(user in r.getMessage() and "short_term" in r.getMessage() for r in caplog.records)
    finally:
        db.close()

"""Seed 000's ConversationStore on the real database: 10-turn window, 24-hour TTL, references."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import pytest
from client_helpers import age_turns, conversations_of, stored_messages, users_with_external_id

from supamem import ConversationStore, Database, Turn, format_history_for_prompt


@pytest.fixture
def store(client_db):
    return ConversationStore(client_db)


def _conversation(store: ConversationStore, postgres_conn, user_id: str) -> dict:
    conversations = conversations_of(postgres_conn, store.identity.user(user_id))
    assert len(conversations) == 1
    return conversations[0]


def test_store_and_get_history_in_seed_shape(store, make_id):
    user = make_id("alice")
    assert store.store_turn(user, "What is Python?", "A programming language.")
    assert store.store_turn(user, "Who made it?", "Guido van Rossum.")
    history = store.get_history(user)
    assert [h["turn_number"] for h in history] == [1, 2]
    assert history[0]["user_query"] == "What is Python?"
    assert history[1]["ai_response"] == "Guido van Rossum."
    assert set(history[0]) == {"turn_number", "user_query", "ai_response", "created_at"}
    assert isinstance(history[0]["created_at"], datetime)
    assert history[0]["created_at"] <= history[1]["created_at"]


def test_new_user_has_empty_history(store, make_id):
    assert store.get_history(make_id("nobody")) == []


def test_reads_of_an_unknown_user_create_nothing(store, postgres_conn, make_id):
    user = make_id("reader")
    assert store.get_history(user) == []
    assert store.resolve_reference(user, "the first one") is None
    assert store.cleanup_old_turns(user) == 0
    assert users_with_external_id(postgres_conn, user) == 0


def test_reads_of_a_user_without_a_running_conversation_create_none(store, postgres_conn, make_id):
    user = make_id("reader")
    known = store.identity.user(user)  # e.g. a user of seed 003's module, new to this store
    assert store.get_history(user) == []
    assert store.resolve_reference(user, "yung una") is None
    assert conversations_of(postgres_conn, known) == []
    store.store_turn(user, "q", "a")  # the first write creates it
    assert [c["metadata"] for c in conversations_of(postgres_conn, known)] == [{"store": "conversation_store"}]


def test_current_conversation_has_seed_000_policy(store, postgres_conn, make_id):
    user = make_id("policy")
    store.store_turn(user, "q", "a")
    conversation = _conversation(store, postgres_conn, user)
    assert conversation["ttl"] == timedelta(hours=24)
    assert conversation["window_turns"] == 10
    assert conversation["expires_at"] is not None


def test_window_keeps_the_newest_ten_turns(store, postgres_conn, make_id):
    user = make_id("window")
    for n in range(1, 13):
        assert store.store_turn(user, f"question {n}", f"answer {n}")
    history = store.get_history(user)
    assert [h["turn_number"] for h in history] == list(range(3, 13))
    assert history[0]["user_query"] == "question 3"
    rows = stored_messages(postgres_conn, _conversation(store, postgres_conn, user)["id"])
    assert sorted({r["turn_number"] for r in rows}) == list(range(3, 13))  # deleted, not hidden
    assert [h["turn_number"] for h in store.get_history(user, max_turns=3)] == [10, 11, 12]


def test_format_history_for_prompt_exact(store, make_id):
    user = make_id("format")
    store.store_turn(user, "What is Python?", "A language.")
    store.store_turn(user, "yung una?", "Python.")
    text = store.format_history_for_prompt(store.get_history(user))
    assert text == (
        "Previous conversation:\n"
        "Turn 1:\nUser: What is Python?\nAI: A language.\n\n"
        "Turn 2:\nUser: yung una?\nAI: Python."
    )
    assert store.format_history_for_prompt([]) == ""
    assert format_history_for_prompt([]) == ""


def test_format_uses_stored_turn_numbers_after_the_window_slides(store, make_id):
    user = make_id("slide")
    for n in range(1, 12):
        store.store_turn(user, f"q{n}", f"a{n}")
    text = store.format_history_for_prompt(store.get_history(user, max_turns=2))
    assert text == "Previous conversation:\nTurn 10:\nUser: q10\nAI: a10\n\nTurn 11:\nUser: q11\nAI: a11"


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("yung una", "q1"),
        ("ano yung una?", "q1"),
        ("the first one", "q1"),
        ("the second one please", "q2"),
        ("pangatlo", "q3"),
        ("kanina", "q3"),
        ("earlier", "q3"),
        ("the one before", "q2"),
    ],
)
def test_resolve_reference(store, make_id, phrase, expected):
    user = make_id("ref")
    for n in (1, 2, 3):
        store.store_turn(user, f"q{n}", f"a{n}")
    turn = store.resolve_reference(user, phrase)
    assert turn is not None
    assert turn["user_query"] == expected


def test_resolve_reference_none_cases(store, make_id):
    user = make_id("ref-none")
    assert store.resolve_reference(user, "the first one") is None  # no history
    store.store_turn(user, "q1", "a1")
    assert store.resolve_reference(user, "what is the weather") is None  # no phrase
    assert store.resolve_reference(user, "the third one") is None  # no such turn


def test_resolve_reference_counts_within_the_window(store, make_id):
    user = make_id("ref-window")
    for n in range(1, 13):
        store.store_turn(user, f"q{n}", f"a{n}")
    assert store.resolve_reference(user, "yung una")["turn_number"] == 3


@pytest.mark.usefixtures("retention_sweep_paused")
def test_cleanup_old_turns_deletes_only_expired(store, postgres_conn, make_id, caplog):
    """Seed 000: the cleanup deletes only expired turns and logs how many it deleted."""
    user = make_id("cleanup")
    for n in (1, 2, 3):
        store.store_turn(user, f"q{n}", f"a{n}")
    conversation = _conversation(store, postgres_conn, user)
    age_turns(postgres_conn, conversation["id"], [1, 2], timedelta(hours=25))
    postgres_conn.execute(  # the conversation itself stays live (turn 3 is recent)
        "update memory.conversations set expires_at = now() + interval '1 hour' where id = %s",
        [conversation["id"]],
    )
    assert [h["turn_number"] for h in store.get_history(user)] == [3]  # hidden before the sweep
    with caplog.at_level(logging.INFO, logger="supamem"):
        assert store.cleanup_old_turns(user) == 2
    assert f"cleanup_old_turns: deleted 2 expired turns of user_id={user}" in caplog.messages
    assert {r["turn_number"] for r in stored_messages(postgres_conn, conversation["id"])} == {3}
    assert store.cleanup_old_turns(user) == 0


def test_expired_conversation_starts_over(store, postgres_conn, make_id):
    user = make_id("expired")
    store.store_turn(user, "old", "old answer")
    conversation = _conversation(store, postgres_conn, user)
    age_turns(postgres_conn, conversation["id"], [1], timedelta(hours=30))
    assert store.get_history(user) == []
    assert store.store_turn(user, "new", "new answer")
    history = store.get_history(user)
    assert [(h["turn_number"], h["user_query"]) for h in history] == [(1, "new")]


def test_invalid_turn_returns_false_and_logs(store, make_id, caplog):
    user = make_id("invalid")
    with caplog.at_level(logging.ERROR, logger="supamem"):
        assert store.store_turn(user, "   ", "answer") is False
        assert store.store_turn(user, "question", "") is False
        assert store.store_turn(user, "nul\x00byte", "answer") is False
    assert store.get_history(user) == []
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3
    assert all("store_turn" in m and user in m for m in messages)


def test_overlong_text_is_refused_online_and_while_the_database_is_down(store, make_id, closed_port_url):
    user = make_id("long")
    assert store.store_turn(user, "x" * 100_001, "answer") is False  # the database's bound
    offline = ConversationStore(Database(closed_port_url, connect_timeout=0.5, timeout=0.5, retry_interval=0.3))
    try:
        assert offline.store_turn(user, "x" * 100_001, "answer") is False  # the same bound, buffered
        assert len(offline.fallback) == 0
        assert offline.store_turn(user, "x" * 100_000, "answer") is True
        assert len(offline.fallback) == 1
    finally:
        offline.db.close()
    assert store.get_history(user) == []


def test_get_history_with_invalid_max_turns_returns_empty(store, make_id, caplog):
    user = make_id("badmax")
    store.store_turn(user, "q", "a")
    with caplog.at_level(logging.ERROR, logger="supamem"):
        assert store.get_history(user, max_turns=0) == []
    assert any("get_history" in r.getMessage() for r in caplog.records)


def test_tenants_do_not_share_conversations(client_db, make_id):
    user = make_id("tenanted")
    first, second = ConversationStore(client_db, tenant_id=1), ConversationStore(client_db, tenant_id=2)
    first.store_turn(user, "tenant one", "a")
    assert second.get_history(user) == []
    second.store_turn(user, "tenant two", "b")
    assert [h["user_query"] for h in first.get_history(user)] == ["tenant one"]
    assert [h["user_query"] for h in second.get_history(user)] == ["tenant two"]


def test_turn_to_dict_is_seed_000_shape():
    created = datetime(2026, 1, 2, 3, 4, 5).astimezone()
    turn = Turn(
        id="1", session_id="s", user_id="u", turn_number=4, query_text="q", response_text="r",
        created_at=created,
    )
    assert turn.to_dict() == {
        "turn_number": 4, "user_query": "q", "ai_response": "r", "created_at": created.isoformat(),
    }
    assert turn.history_item() == {**turn.to_dict(), "created_at": created}
    assert (turn.user_query, turn.ai_response) == ("q", "r")
    assert turn.is_expired()


def test_get_history_and_to_dict_are_one_shape(client_db, store, postgres_conn, make_id):
    """get_history items are Turn.history_item(): Turn.to_dict()'s keys and values, with
    created_at a datetime (seed 000's data model) where to_dict() has ISO 8601 text."""
    user = make_id("shape")
    store.store_turn(user, "What is Python?", "A language.")
    (item,) = store.get_history(user)
    conversation = _conversation(store, postgres_conn, user)
    (row,) = client_db.call("turn_history", conversation_id=conversation["id"], max_turns=1)
    turn = Turn.from_row(row, user_id=user)
    assert item == turn.history_item()
    assert turn.to_dict() == {**item, "created_at": item["created_at"].isoformat()}
    assert store.resolve_reference(user, "the first one") == item

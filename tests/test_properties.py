"""Seed 001's twelve correctness properties, each a hypothesis test on the real database.

Feature: chatgpt-style-conversation-memory. Every test runs at least 100 examples through the
Python client (`ConversationMemoryManager`, `ConversationStore`, `ShortTermMemory`); rows are
inspected and aged as postgres, the table owner (no sleeping). Text never contains NUL (Postgres
refuses it; property 11 checks that it is refused) and is never whitespace-only (the database's
rule is `content ~ '[^[:space:]]'`; property 11 checks that too).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from uuid import UUID, uuid4

import pytest
from client_helpers import age_turns, stored_messages
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supamem import (
    ConflictError,
    ConversationMemoryManager,
    ConversationStore,
    Database,
    FallbackBuffer,
    InvalidInputError,
    ShortTermMemory,
)

PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
DAY = timedelta(hours=24)

# -- strategies ---------------------------------------------------------------------------

SAFE_CHARS = st.characters(exclude_characters="\x00", exclude_categories=("Cs",))
VISIBLE_CHARS = st.characters(categories=("L", "N", "P", "S"))
WHITESPACE = st.text(st.sampled_from(" \t\n\r\x0b\x0c"), max_size=12)


def content(max_size: int) -> st.SearchStrategy[str]:
    """Any text without NUL that has at least one character Postgres does not call a space."""
    half = st.text(SAFE_CHARS, max_size=max_size // 2)
    return st.builds(lambda a, c, b: a + c + b, half, VISIBLE_CHARS, half)


def _not_a_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return True
    return False


QUERIES = content(1000)
RESPONSES = content(5000)
SHORT = content(60)
PAIRS = st.tuples(SHORT, SHORT)
# Seed 001 user ids are UUIDs; seeds 000/003 use text ids. Both resolve to a memory user.
USER_IDS = st.one_of(st.uuids().map(str), content(40).filter(_not_a_uuid))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(SAFE_CHARS, max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(SAFE_CHARS, max_size=10), inner, max_size=3),
    max_leaves=6,
)
METADATA = st.dictionaries(st.text(SAFE_CHARS, max_size=10), JSON_VALUES, max_size=4)
SESSIONS_SEEN: set[str] = set()


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def manager(client_db):
    return ConversationMemoryManager(client_db)


@pytest.fixture(scope="module")
def down_db(closed_port_url):
    """A client whose database is unreachable (nothing listens on its port)."""
    db = Database(closed_port_url, connect_timeout=0.3, timeout=0.3, retry_interval=600)
    yield db
    db.close()


def _pairs(turns):
    return [(t.query_text, t.response_text) for t in turns]


# -- properties ---------------------------------------------------------------------------


@PROPERTY
@given(user_id=USER_IDS, query=QUERIES, response=RESPONSES, metadata=METADATA)
def test_property_1_turn_storage_completeness(manager, postgres_conn, user_id, query, response, metadata):
    """Property 1: a stored turn is retrievable with every field present and intact."""
    session = manager.create_session(user_id)
    turn = manager.store_turn(session, user_id, query, response, metadata)
    (stored,) = manager.get_session_history(session)
    assert stored.session_id == turn.session_id == session
    assert stored.user_id == turn.user_id == user_id
    assert (stored.query_text, stored.response_text) == (query, response)
    assert stored.turn_number == turn.turn_number == 1
    assert stored.created_at == turn.created_at
    assert stored.metadata == turn.metadata == metadata
    assert stored.id == turn.id
    rows = stored_messages(postgres_conn, session)
    assert [(r["role"], r["content"]) for r in rows] == [("user", query), ("assistant", response)]


@PROPERTY
@given(user_id=USER_IDS, count=st.integers(1, 4))
def test_property_2_session_id_uniqueness_and_format(manager, user_id, count):
    """Property 2: session ids are unique, UUID-formatted, and carried by every turn."""
    sessions = [manager.create_session(user_id) for _ in range(count)]
    for session in sessions:
        parsed = UUID(session)
        assert str(parsed) == session and parsed.version == 4
    assert len(set(sessions)) == count
    assert not SESSIONS_SEEN.intersection(sessions)
    SESSIONS_SEEN.update(sessions)
    assert manager.store_turn(sessions[-1], user_id, "q", "a").session_id == sessions[-1]


@PROPERTY
@given(
    users=st.tuples(USER_IDS, USER_IDS),
    plan=st.lists(st.tuples(st.sampled_from([0, 1]), SHORT, SHORT), min_size=1, max_size=8),
)
def test_property_3_session_isolation(manager, users, plan):
    """Property 3: a session's history holds its own turns and none of another session's."""
    sessions = [manager.create_session(users[0]), manager.create_session(users[1])]
    for which, query, response in plan:
        manager.store_turn(sessions[which], users[which], query, response)
    for which in (0, 1):
        history = manager.get_session_history(sessions[which])
        assert _pairs(history) == [(q, r) for w, q, r in plan if w == which]
        assert {t.session_id for t in history} <= {sessions[which]}


@PROPERTY
@given(
    user_id=USER_IDS,
    first=st.lists(PAIRS, min_size=1, max_size=4),
    later=st.lists(PAIRS, min_size=1, max_size=4),
)
def test_property_4_session_continuity(client_db, manager, user_id, first, later):
    """Property 4: a request with an existing session id continues that session."""
    session = manager.create_session(user_id)
    for query, response in first:
        manager.store_turn(session, user_id, query, response)
    # A later request, possibly handled by another manager instance of the same app.
    other = ConversationMemoryManager(client_db, identity=manager.identity)
    for query, response in later:
        assert other.store_turn(session, user_id, query, response).session_id == session
    history = manager.get_session_history(session)
    assert _pairs(history) == first + later
    assert [t.turn_number for t in history] == list(range(1, len(first) + len(later) + 1))


@PROPERTY
@given(
    user_id=USER_IDS,
    bad=st.one_of(
        st.tuples(st.just("text"), st.text(SAFE_CHARS, max_size=40).filter(_not_a_uuid)),
        # Minted in the test: a drawn UUID would repeat across runs and, once used, be known.
        st.tuples(st.just("unknown"), st.none()),
        st.tuples(st.just("foreign"), st.just("")),
        st.tuples(st.just("none"), st.none()),
    ),
    query=SHORT,
    response=SHORT,
)
def test_property_5_invalid_session_handling(manager, make_id, user_id, bad, query, response):
    """Property 5: an invalid or unknown session id starts a new session, without an error.

    An unknown UUID is the client's choice of id (e.g. minted during an outage): the new session
    gets it. Any other id (not a UUID, none, another user's) gets a new random id.
    """
    kind, session_id = bad
    foreign_history = None
    if kind == "unknown":
        session_id = str(uuid4())
    if kind == "foreign":  # a live session of somebody else
        stranger = make_id("stranger")
        session_id = manager.create_session(stranger)
        manager.store_turn(session_id, stranger, "theirs", "theirs")
        foreign_history = _pairs(manager.get_session_history(session_id))
    else:
        assert manager.get_session_history(session_id) == []
        assert manager.get_context_for_query(session_id, query).history == []
    turn = manager.store_turn(session_id, user_id, query, response)
    assert str(UUID(turn.session_id)) == turn.session_id
    assert _pairs(manager.get_session_history(turn.session_id)) == [(query, response)]
    if kind == "unknown":
        assert turn.session_id == session_id
        return
    assert turn.session_id != session_id
    if foreign_history is None:
        assert manager.get_session_history(session_id) == []
    else:
        assert _pairs(manager.get_session_history(session_id)) == foreign_history


@pytest.mark.usefixtures("retention_sweep_paused")
@PROPERTY
@given(
    ages=st.lists(
        st.floats(0, 48 * 3600, allow_nan=False).filter(lambda s: abs(s - DAY.total_seconds()) > 120),
        min_size=1,
        max_size=6,
    )
)
def test_property_6_ttl_enforcement(manager, postgres_conn, make_id, ages):
    """Property 6: cleanup deletes turns older than 24 hours and keeps the younger ones."""
    user = make_id("ttl")
    session = manager.create_session(user)
    for n in range(1, len(ages) + 1):
        manager.store_turn(session, user, f"q{n}", f"a{n}")
    for n, age in enumerate(ages, 1):
        age_turns(postgres_conn, session, [n], timedelta(seconds=age))
    result = manager.cleanup_old_conversations()
    assert result.errors == []
    young = [n for n, age in enumerate(ages, 1) if age < DAY.total_seconds()]
    assert sorted({r["turn_number"] for r in stored_messages(postgres_conn, session)}) == young
    assert [t.turn_number for t in manager.get_session_history(session)] == young
    if not young:  # nothing live is left: the session itself is gone
        row = postgres_conn.execute("select count(*) from memory.conversations where id = %s", [session])
        assert row.fetchone() == (0,)
        assert result.sessions_deleted >= 1


@PROPERTY
@given(plan=st.lists(st.integers(0, 2), min_size=1, max_size=12))
def test_property_7_chronological_ordering(manager, make_id, plan):
    """Property 7: turns written in any interleaving come back in turn (and time) order."""
    user = make_id("order")
    sessions = [manager.create_session(user) for _ in range(3)]
    for i, which in enumerate(plan):
        manager.store_turn(sessions[which], user, f"q{i}", f"a{i}")
    for which, session in enumerate(sessions):
        history = manager.get_session_history(session)
        assert [t.turn_number for t in history] == list(range(1, len(history) + 1))
        assert [t.created_at for t in history] == sorted(t.created_at for t in history)
        assert [t.query_text for t in history] == [f"q{i}" for i, w in enumerate(plan) if w == which]


@PROPERTY
@given(
    user_id=USER_IDS,
    turns=st.lists(PAIRS, min_size=1, max_size=8),
    limit=st.integers(1, 10),
)
def test_property_8_graceful_degradation(down_db, user_id, turns, limit):
    """Property 8: with the database unreachable, every call still answers (bounded fallback)."""
    per_session = 5
    manager = ConversationMemoryManager(down_db, fallback=FallbackBuffer(max_turns_per_key=per_session))
    session = manager.create_session(user_id)
    assert str(UUID(session)) == session
    stored = [manager.store_turn(session, user_id, q, r) for q, r in turns]
    assert all(t.buffered and t.session_id == session for t in stored)
    assert [t.turn_number for t in stored] == list(range(1, len(turns) + 1))
    kept = stored[-per_session:]
    history = manager.get_session_history(session, limit=limit)
    assert _pairs(history) == _pairs(kept[-limit:])
    assert [t.turn_number for t in history] == [t.turn_number for t in kept[-limit:]]
    context = manager.get_context_for_query(session, "the first one")
    assert context.degraded and _pairs(context.history) == _pairs(kept)
    assert len(manager.fallback) == len(kept)
    store = ConversationStore(down_db, fallback=FallbackBuffer(max_turns_per_key=10))
    assert all(store.store_turn(user_id, q, r) for q, r in turns)
    assert [(h["user_query"], h["ai_response"]) for h in store.get_history(user_id)] == turns[-10:]
    assert store.resolve_reference(user_id, "the first one") is None
    assert store.cleanup_old_turns(user_id) == 0


@PROPERTY
@given(user_id=USER_IDS, state=METADATA, turns=st.lists(PAIRS, min_size=1, max_size=4))
def test_property_9_memory_layer_independence(client_db, manager, user_id, state, turns):
    """Property 9: short-term state and long-term history never change each other."""
    short_term = ShortTermMemory(client_db, identity=manager.identity)
    short_term.set_clarification(user_id, state)
    session = manager.create_session(user_id)
    for query, response in turns:
        manager.store_turn(session, user_id, query, response)
    assert short_term.get_clarification(user_id) == state
    assert short_term.clear_clarification(user_id)
    assert _pairs(manager.get_session_history(session)) == turns
    short_term.set_clarification(user_id, {"again": True})
    assert manager.delete_session(session) == len(turns)
    assert short_term.get_clarification(user_id) == {"again": True}
    assert short_term.clear_clarification(user_id)


@PROPERTY
@given(
    user_id=USER_IDS,
    turns=st.lists(st.tuples(SHORT, SHORT, st.floats(0, 23.9 * 3600, allow_nan=False)), min_size=1, max_size=4),
)
def test_property_10_long_term_persistence(database_url, postgres_conn, user_id, turns):
    """Property 10: turns survive a client restart for the whole TTL."""
    before = Database(database_url, max_size=2)
    try:
        writer = ConversationMemoryManager(before)
        session = writer.create_session(user_id)
        stored = [writer.store_turn(session, user_id, q, r) for q, r, _ in turns]
    finally:
        before.close()
    for turn, (_, _, age) in zip(stored, turns, strict=True):
        age_turns(postgres_conn, session, [turn.turn_number], timedelta(seconds=age))
    after = Database(database_url, max_size=2)  # a new process: new pool, cold caches
    try:
        reader = ConversationMemoryManager(after)
        assert reader.cleanup_old_conversations().errors == []
        history = reader.get_session_history(session)
        key = [(t.id, t.turn_number, t.query_text, t.response_text, t.user_id) for t in stored]
        assert [(t.id, t.turn_number, t.query_text, t.response_text, t.user_id) for t in history] == key
    finally:
        after.close()


@PROPERTY
@given(
    case=st.sampled_from(["empty query", "empty response", "nul", "turn number", "duplicate"]),
    setup=st.lists(PAIRS, min_size=1, max_size=3),
    data=st.data(),
)
def test_property_11_database_constraint_compliance(manager, make_id, case, setup, data):
    """Property 11: invalid turns (empty text, NUL, turn number < 1, duplicates) are rejected."""
    user = make_id("constraints")
    session = manager.create_session(user)
    for query, response in setup:
        manager.store_turn(session, user, query, response)
    if case in {"empty query", "empty response", "nul"}:
        query, response = data.draw(QUERIES), data.draw(RESPONSES)
        if case == "empty query":
            query = data.draw(WHITESPACE)
        elif case == "empty response":
            response = data.draw(WHITESPACE)
        else:
            target = data.draw(st.sampled_from(["query", "response"]))
            text = query if target == "query" else response
            at = data.draw(st.integers(0, len(text)))
            text = text[:at] + "\x00" + text[at:]
            query, response = (text, response) if target == "query" else (query, text)
        with pytest.raises(InvalidInputError):
            manager.store_turn(session, user, query, response)
    else:
        if case == "turn number":
            number, expected = data.draw(st.integers(-(2**31), 0)), InvalidInputError
        else:
            number, expected = data.draw(st.integers(1, len(setup))), ConflictError
        role = data.draw(st.sampled_from(["user", "assistant"]))
        with pytest.raises(expected), manager.db.transaction() as tx:
            tx.execute(
                "insert into memory.messages (conversation_id, role, content, turn_number)"
                " values (%s, %s, %s, %s)",
                [UUID(session), role, "direct insert", number],
            )
    assert _pairs(manager.get_session_history(session)) == setup


@PROPERTY
@given(
    user_id=USER_IDS,
    query=SHORT,
    response=SHORT,
    failure=st.sampled_from(["unavailable", "invalid"]),
)
def test_property_12_error_logging_with_context(manager, down_db, caplog, user_id, query, response, failure):
    """Property 12: a failed operation logs session id, user id, operation and the error."""
    caplog.clear()
    if failure == "unavailable":
        degraded = ConversationMemoryManager(down_db)
        session = str(uuid4())
        with caplog.at_level(logging.WARNING, logger="supamem"):
            degraded.store_turn(session, user_id, query, response)
        level, detail = logging.WARNING, "unavailable"
    else:
        session = manager.create_session(user_id)
        with caplog.at_level(logging.ERROR, logger="supamem"), pytest.raises(InvalidInputError):
            manager.store_turn(session, user_id, query + "\x00", response)
        level, detail = logging.ERROR, "NUL"
    records = [r for r in caplog.records if r.levelno == level]
    assert records, "nothing was logged"
    record = records[0]
    message = record.getMessage()
    assert session in message and user_id in message and "store_turn" in message and detail in message
    assert record.supamem_session_id == session
    assert record.supamem_user_id == user_id
    assert record.supamem_operation == "store_turn"


def test_whitespace_strategy_matches_the_database(postgres_conn):
    """The strategies' notion of 'blank' is the database's: these strings fail its check."""
    for blank in ["", " ", "\t\n\r\x0b\x0c"]:
        assert postgres_conn.execute("select %s ~ '[^[:space:]]'", [blank]).fetchone() == (False,)

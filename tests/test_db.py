"""supamem.db: the pool acts as service_role, RPC calls are whitelisted, SQLSTATEs become types."""

from __future__ import annotations

import json
import time
from uuid import UUID, uuid4

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from supamem import (
    ConflictError,
    Conversation,
    Database,
    DatabaseUnavailableError,
    InvalidInputError,
    InvalidRoleError,
    NotFoundError,
    PermissionDeniedError,
    SupamemError,
    Turn,
)


def test_pool_connections_act_as_service_role(client_db):
    with client_db.transaction() as tx:
        row = tx.execute("select current_user as role, auth.uid() as uid")[0]
    assert row == {"role": "service_role", "uid": None}


def test_acting_as_a_user_lasts_one_transaction(client_db, make_auth_user):
    alice = make_auth_user()
    with client_db.as_user(alice) as tx:
        row = tx.execute("select current_user as role, auth.uid() as uid, auth.role() as jwt_role,"
                         " current_setting('statement_timeout') as timeout")[0]
    # As PostgREST does, the role's own settings apply: Supabase's 8 s for signed-in users.
    assert row == {"role": "authenticated", "uid": alice, "jwt_role": "authenticated", "timeout": "8s"}
    for _ in range(client_db.max_size):  # whichever pooled connection comes next
        with client_db.transaction() as tx:
            assert tx.execute("select current_user as role, auth.uid() as uid,"
                              " current_setting('statement_timeout') as timeout")[0] == {
                "role": "service_role",
                "uid": None,
                "timeout": "0",
            }


# Any JSON document jsonb holds (every character but NUL and lone surrogates): integers past 64
# bits, floats at the edges of their range.
JSON_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))
JSON_DOCUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats(allow_nan=False, allow_infinity=False)
    | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(document=JSON_DOCUMENTS)
def test_jsonb_reads_back_as_the_standard_library_parses_it(client_db, document):
    # The pool parses jsonb with pydantic's parser; what it returns is what json.loads returns.
    with client_db.transaction() as tx:
        row = tx.execute("select %(d)s::jsonb as value, %(d)s::jsonb::text as text", {"d": Jsonb(document)})[0]
    assert row["value"] == json.loads(row["text"])
    assert json.dumps(row["value"], sort_keys=True) == json.dumps(json.loads(row["text"]), sort_keys=True)


@pytest.mark.parametrize("depth", [199, 250, 900])
def test_jsonb_nested_past_pydantics_limit_reads_back(client_db, depth):
    # pydantic's parser stops at 200 levels; a row stored that deep (a direct table write goes
    # around the writers' limit of 64) is read by the standard library's instead of failing.
    text = "[" * depth + "]" * depth
    with client_db.transaction() as tx:
        row = tx.execute("select %(t)s::jsonb as value", {"t": text})[0]
    assert row["value"] == json.loads(text)


def test_statements_without_rows_return_an_empty_list(client_db):
    with client_db.transaction() as tx:
        assert tx.execute("create temporary table statement_rows (a int) on commit drop") == []
        assert tx.execute("insert into statement_rows values (1), (2)") == []
        assert tx.execute("insert into statement_rows values (3) returning a") == [{"a": 3}]
        assert tx.execute("select a from statement_rows where a > 5") == []
        assert tx.execute("select count(*) as n from statement_rows") == [{"n": 3}]


def test_call_builds_named_arguments(client_db, make_id):
    user = client_db.call_value("user_id_for", external_id=make_id())
    assert isinstance(user, UUID)
    conversation = Conversation.model_validate(
        client_db.call_one("create_conversation", user_id=user, title="t", metadata={"a": 1})
    )
    assert (conversation.user_id, conversation.title, conversation.metadata) == (user, "t", {"a": 1})
    row = client_db.call_one(
        "add_turn", conversation_id=conversation.id, user_content="q", assistant_content="a"
    )
    assert row["turn_number"] == 1
    (turn_row,) = client_db.call("turn_history", conversation_id=conversation.id)
    turn = Turn.from_row(turn_row)
    assert (turn.session_id, turn.query_text, turn.response_text) == (str(conversation.id), "q", "a")


def test_only_functions_of_schema_memory_are_called_and_names_are_checked(client_db):
    # Calls are schema-qualified: a function of another schema does not exist in `memory`.
    with pytest.raises(SupamemError) as missing:
        client_db.call("pg_sleep", seconds=0)
    assert missing.value.sqlstate == "42883"
    with pytest.raises(ValueError, match="invalid function name"):
        client_db.call("count_messages(null); --")
    with pytest.raises(ValueError, match="invalid parameter name"):
        client_db.call("count_messages", **{"conversation_id) --": None})


def test_sqlstates_map_to_typed_errors(client_db, make_id, make_auth_user):
    with pytest.raises(NotFoundError) as not_found:  # P0002
        client_db.call("delete_message", message_id=2**62)
    assert not_found.value.sqlstate == "P0002"
    with pytest.raises(InvalidInputError) as bad_uuid:  # 22P02
        client_db.call("turn_history", conversation_id="not-a-uuid")
    assert bad_uuid.value.sqlstate == "22P02"
    with pytest.raises(InvalidInputError):  # 22023
        client_db.call("turn_history", conversation_id=uuid4(), max_turns=0)
    user = client_db.call_value("user_id_for", external_id=make_id())
    conversation = client_db.call_one("create_conversation", user_id=user)["id"]
    with pytest.raises(InvalidRoleError):  # 22023, invalid role
        client_db.call("add_message", conversation_id=conversation, role="system", content="x")
    with pytest.raises(InvalidInputError):  # NUL, refused before it reaches the server
        client_db.call("add_message", conversation_id=conversation, role="user", content="a\x00b")
    client_db.call("add_turn", conversation_id=conversation, user_content="q", assistant_content="a")
    with pytest.raises(ConflictError) as conflict, client_db.transaction() as tx:  # 23505
        tx.execute(
            "insert into memory.messages (conversation_id, role, content, turn_number) values (%s, 'user', 'x', 1)",
            [conversation],
        )
    assert conflict.value.sqlstate == "23505"
    alice, bob = make_auth_user(), make_auth_user()
    owned = client_db.call_as(alice, "create_conversation")[0]["id"]
    with pytest.raises(NotFoundError):  # P0002: bob writes to alice's conversation, which he cannot see
        client_db.call_as(bob, "add_turn", conversation_id=owned, user_content="q", assistant_content="a")
    with pytest.raises(PermissionDeniedError):  # 42501: bob writes to his own conversation as alice
        client_db.call_as(bob, "add_turn", conversation_id=client_db.call_as(bob, "create_conversation")[0]["id"],
                          user_content="q", assistant_content="a", author_id=alice)
    assert client_db.call_as(bob, "turn_history", conversation_id=owned) == []


def test_a_first_call_while_the_server_refuses_connections_does_not_wait_for_the_pool(closed_port_url):
    """A process that starts during an outage: its first call sees the refusal and fails at once
    (the fallbacks answer), not after `connect_timeout` (a minute here) spent on a pool that cannot open."""
    db = Database(closed_port_url, connect_timeout=60.0, timeout=60.0, retry_interval=60.0)
    try:
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailableError, match="cannot connect to the database"):
            db.call("count_messages", conversation_id=uuid4())
        assert time.monotonic() - started < db.connect_timeout / 2, "the first call waited for the pool"
    finally:
        db.close()


def test_unreachable_database_fails_fast_and_reconnects_in_the_background(closed_port_url, database_url):
    db = Database(closed_port_url, connect_timeout=0.5, timeout=0.5, retry_interval=0.2)
    try:
        with pytest.raises(DatabaseUnavailableError):
            db.call("count_messages", conversation_id=uuid4())
        for _ in range(20):  # every call fails at once, before any connection attempt, while the thread tries
            with pytest.raises(DatabaseUnavailableError, match="reconnecting in the background"):
                db.call("count_messages", conversation_id=uuid4())
        assert not db.ping()
        assert not db.wait_available(0)
        db.url = database_url  # the database "comes back": the background thread's next pool works
        assert db.wait_available(30)
        assert db.call_value("count_messages", conversation_id=uuid4()) == 0
        assert db.ping()
    finally:
        db.close()
    with pytest.raises(DatabaseUnavailableError, match="closed"):
        db.call("count_messages", conversation_id=uuid4())


def test_a_single_call_survives_its_connection_being_terminated(database_url, postgres_conn):
    """One RPC call is one autocommit statement; cut off by a shutdown (57P01) it cannot have
    committed, so it runs again on a fresh connection instead of failing."""
    db = Database(database_url, min_size=1, max_size=1, timeout=5.0)
    try:
        first = db.call_value("create_session", user_id=db.call_value("user_id_for", external_id="terminated"))
        with db.transaction() as tx:
            pid = tx.execute("select pg_backend_pid() as pid")[0]["pid"]
        postgres_conn.execute("select pg_terminate_backend(%s)", [pid])
        assert db.call_value("count_messages", conversation_id=first) == 0  # no error: retried
        with db.transaction() as tx:
            assert tx.execute("select pg_backend_pid() as pid")[0]["pid"] != pid
    finally:
        db.close()
def test_a_transaction_begins_again_when_its_connection_was_terminated(database_url, postgres_conn, make_auth_user):
    """A connection used moments ago is not pinged; one a shutdown killed fails at BEGIN, before
    any work, and the transaction (a signed-in call too) begins again on a live connection."""
    db = Database(database_url, min_size=1, max_size=1, timeout=5.0)
    try:
        user = make_auth_user()
        db.call("register_user", user_id=user)
        for begin, role in ((db.transaction, "service_role"), (lambda: db.as_user(user), "authenticated")):
            with db.transaction() as tx:
                pid = tx.execute("select pg_backend_pid() as pid")[0]["pid"]
            postgres_conn.execute("select pg_terminate_backend(%s)", [pid])
            with begin() as tx:
                row = tx.execute("select pg_backend_pid() as pid, current_user as role")[0]
                assert row["pid"] != pid and row["role"] == role
    finally:
        db.close()


def test_a_transaction_cut_off_after_it_began_fails_and_is_not_run_again(database_url, postgres_conn, make_id):
    """Work inside a transaction may have had effects the caller acted on: once BEGIN went
    through, a terminated connection fails the transaction instead of running it again."""
    db = Database(database_url, min_size=1, max_size=1, timeout=5.0)
    runs = 0
    try:
        with pytest.raises(DatabaseUnavailableError), db.transaction() as tx:
            runs += 1
            pid = tx.execute("select pg_backend_pid() as pid")[0]["pid"]
            postgres_conn.execute("select pg_terminate_backend(%s)", [pid])
            tx.call("user_id_for", external_id=make_id("cut-off"))
        assert runs == 1
        assert db.call_value("count_messages", conversation_id=uuid4()) == 0  # the pool recovered
    finally:
        db.close()



"""memory.import_messages numbers and trims a batch exactly as adding its messages one by one does.

For any conversation state (messages already there, any window) and any sequence of user and
assistant messages, importing the sequence leaves the same turns, roles, contents and turn counter
as `memory.add_message` called once per message. Each example runs in a transaction that is rolled
back, as the service role.
"""

from __future__ import annotations

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

ROLES = st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=25)


def _conversation(conn: psycopg.Connection, user: str, window: int | None) -> str:
    return str(conn.execute(
        "select (memory.create_conversation(p_user_id => %s, p_window_turns => %s)).id", (user, window)
    ).fetchone()[0])


def _state(conn: psycopg.Connection, conversation: str) -> tuple[list[tuple[int, str, str]], int]:
    rows = conn.execute(
        "select turn_number, role, content from memory.messages where conversation_id = %s order by turn_number, role desc",
        (conversation,),
    ).fetchall()
    last = conn.execute("select last_turn from memory.conversations where id = %s", (conversation,)).fetchone()[0]
    return [tuple(r) for r in rows], last


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.lists(st.sampled_from(["user", "assistant"]), max_size=6), batch=ROLES,
       window=st.one_of(st.none(), st.integers(1, 6)))
def test_an_import_numbers_and_trims_as_one_by_one(database_url: str, before: list[str], batch: list[str],
                                                   window: int | None) -> None:
    with psycopg.connect(database_url) as conn:
        conn.execute("set local role service_role")
        user = conn.execute("select memory.user_id_for(%s)", ("import-property",)).fetchone()[0]
        one_by_one, imported = _conversation(conn, user, window), _conversation(conn, user, window)
        for i, role in enumerate(before):
            for conversation in (one_by_one, imported):
                conn.execute("select memory.add_message(%s, %s, %s)", (conversation, role, f"before {i}"))
        for i, role in enumerate(batch):
            conn.execute("select memory.add_message(%s, %s, %s)", (one_by_one, role, f"message {i}"))
        result = conn.execute(
            "select imported, last_turn from memory.import_messages(%s)",
            (Jsonb([{"conversation_id": imported, "role": role, "content": f"message {i}"} for i, role in enumerate(batch)]),),
        ).fetchone()
        expected, expected_last = _state(conn, one_by_one)
        assert _state(conn, imported) == (expected, expected_last)
        assert tuple(result) == (len(batch), expected_last)
        conn.rollback()

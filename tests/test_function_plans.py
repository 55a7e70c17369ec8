"""The hot reads' own statements, planned inside their functions, stop at the page they return.

memory.history and memory.turn_history (the window prompt_context reads) run their queries inside
plpgsql, where EXPLAIN cannot reach, so this test reads, through auto_explain
(tests/plan_helpers.py), the plans of the statements the functions themselves run, as the
signed-in owner (RLS policy included) of a 2,000-turn conversation and a short one, written after
the statistics were taken. The calls repeat past
plpgsql's fifth execution, when it may switch to a generic plan, and every plan is checked: a
later migration that changes a hot statement, or a plan Postgres would pick for it, fails here.
Everything is rolled back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from plan_helpers import CALLS, explain_nested, index_names, nested_plans, nodes, registered_user, scans_of, sign_in
from psycopg.rows import dict_row

TURNS = 2000
#: The owner's other conversation, read beside the long one.
SHORT_TURNS = 2
#: Other users' messages, there before the statistics are taken.
FILLER_USERS = 100
FILLER_MESSAGES = 40
INDEX = "messages_conversation_turn_role_key"


@pytest.fixture(scope="module")
def owner_session(admin_url: str) -> Iterator[tuple[psycopg.Connection, dict[str, Any]]]:
    conn = psycopg.connect(admin_url, row_factory=dict_row)
    try:
        owner = registered_user(conn, "plans@supamem.test")
        conversation = conn.execute(
            "select (memory.create_conversation(p_user_id => %s, p_title => 'Long', p_window_turns => 5000)).id",
            [owner],
        ).fetchone()["id"]
        # Statistics from before the owner wrote: on a live database they lag behind the writes (the
        # planner then expects the owner's messages to be few), and no hot plan may depend on them.
        # Other users' conversations come first, so the statistics are a database's, not an empty
        # table's, however few messages the tests before this one left.
        conn.execute(
            "insert into memory.messages (conversation_id, role, content)"
            " select c.id, case when i %% 2 = 1 then 'user' else 'assistant' end, format('filler %%s', i)"
            " from generate_series(1, %s) as u,"
            " lateral memory.create_conversation(p_user_id => memory.user_id_for(format('plans-filler-%%s', u))) as c,"
            " generate_series(1, %s) as i order by u, i",
            [FILLER_USERS, FILLER_MESSAGES],
        )
        conn.execute("analyze memory.messages")
        short = conn.execute(
            "select (memory.create_conversation(p_user_id => %s, p_title => 'Short', p_window_turns => 5000)).id",
            [owner],
        ).fetchone()["id"]
        for conv, turns in ((conversation, TURNS), (short, SHORT_TURNS)):
            conn.execute(
                "insert into memory.messages (conversation_id, role, content)"
                " select %s, case when i %% 2 = 1 then 'user' else 'assistant' end, format('message %%s', i)"
                " from generate_series(1, %s) as i order by i",
                [conv, 2 * turns],
            )
        explain_nested(conn)
        sign_in(conn, "authenticated", owner)
        yield conn, {"owner": owner, "conversation": conversation, "short": short}
    finally:
        conn.rollback()
        conn.close()


def scans_of_messages(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return scans_of(plan, "messages")


def each_call(conn: psycopg.Connection, call: str, params: list[Any], statement: str,
              check: Callable[[dict[str, Any]], None]) -> None:
    for _ in range(CALLS):
        for plan in nested_plans(conn, call, params, statement):
            check(plan)


HISTORY = "order by m.turn_number desc, m.role asc"


@pytest.mark.parametrize(("newest_first", "offset"), [(True, 0), (False, 0), (True, 100)])
def test_history_walks_the_index_backwards_and_stops_at_the_page(owner_session, newest_first, offset) -> None:
    conn, cast = owner_session

    def check(plan: dict[str, Any]) -> None:
        # At most the page is sorted (oldest-first), never the conversation.
        sorted_rows = [child["Actual Rows"] for n in nodes(plan) if n["Node Type"] == "Sort" for child in n["Plans"]]
        assert all(rows <= 20 for rows in sorted_rows), json.dumps(plan)
        (scan,) = scans_of_messages(plan)
        assert scan["Node Type"] == "Index Scan" and scan["Index Name"] == INDEX, json.dumps(plan)
        assert scan["Scan Direction"] == "Backward"
        assert scan["Actual Rows"] == offset + 20, "the scan reads the page (and the rows it skips), no more"

    each_call(conn, "select * from memory.history(%s, 20, %s, %s)", [cast["conversation"], offset, newest_first],
              HISTORY, check)


@pytest.mark.parametrize("call", [
    "select * from memory.turn_history(%s, 10)",
    # The prompt read takes its window from turn_history, whatever else it reads.
    "select memory.prompt_context(%s, 'tell me more about the first one')",
], ids=["turn_history", "prompt_context"])
def test_the_turn_window_reads_only_its_turns(owner_session, call: str) -> None:
    conn, cast = owner_session

    def check(plan: dict[str, Any]) -> None:
        scans = scans_of_messages(plan)
        assert scans, json.dumps(plan)
        for scan in scans:
            # A plain or a bitmap index scan: either reads just the rows inside the turn bound.
            assert scan["Node Type"] != "Seq Scan" and index_names(scan) == {INDEX}, json.dumps(plan)
            assert scan["Actual Rows"] <= 20, "the 20 messages of the last 10 turns"

    each_call(conn, call, [cast["conversation"]], "memory.turns", check)


@pytest.mark.parametrize(("call", "statement"), [
    ("select * from memory.turn_history(%s, 10)", "memory.turns"),
    ("select memory.prompt_context(%s)", "memory.turns"),
    ("select * from memory.history(%s, 20)", HISTORY),
    ("select memory.count_messages(%s)", "count(*)"),
], ids=["turn_history", "prompt_context", "history", "count_messages"])
def test_the_hot_reads_run_one_plan_from_the_first_call(owner_session, call: str, statement: str) -> None:
    """plpgsql plans a statement for each call's values until a generic plan's estimate looks as cheap,
    which for these never came: planning them took longer than running them. Their conditions name
    parameters on every call (a generic plan, made once); the conversation's id never appears as a value."""
    conn, cast = owner_session
    conversation = str(cast["conversation"])
    for _ in range(CALLS):
        for plan in nested_plans(conn, call, [cast["conversation"]], statement):
            conditions = " ".join(
                n[key] for n in nodes(plan) for key in ("Index Cond", "Recheck Cond", "Filter") if key in n
            )
            assert "$" in conditions and conversation not in conditions, json.dumps(plan)


@pytest.mark.parametrize(("call", "statement"), [
    ("select * from memory.messages where conversation_id = %s", "memory.messages"),
    ("select * from memory.turns where conversation_id = %s", "memory.turns"),
    ("select memory.count_messages(%s)", "count(*)"),
    ("select * from memory.history(%s, 20)", HISTORY),
    ("select * from memory.turn_history(%s, 10)", "memory.turns"),
], ids=["messages", "turns", "count_messages", "history", "turn_history"])
def test_a_short_conversation_is_read_without_the_owners_long_one(owner_session, call: str, statement: str) -> None:
    """Under the per-row policy of messages, a signed-in owner's read of one conversation reads that
    conversation's rows, never the owner's others through the user index, whatever the statistics."""
    conn, cast = owner_session

    def check(plan: dict[str, Any]) -> None:
        for scan in scans_of_messages(plan):
            read = [n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0) for n in nodes(scan)]
            assert max(read) <= 2 * SHORT_TURNS, json.dumps(plan)

    each_call(conn, call, [cast["short"]], statement, check)


def test_deleting_messages_looks_for_each_next_message_only_up_to_the_next_deleted_one(owner_session) -> None:
    """A sweep or trim deletes a run of messages; the trigger that drops the next message's vector
    reads between neighbours (both bounds in the index condition), not from each deleted message to
    the end of the run through its dead index entries."""
    conn, cast = owner_session
    conn.execute("savepoint trimmed")
    try:
        conn.execute("set local role postgres")
        conn.execute(
            "insert into memory_private.message_embeddings (message_id, user_id, model, embedding)"
            " select m.id, m.user_id, 'probe', array_fill(0.1, array[384])::extensions.vector"
            " from memory.messages as m where m.conversation_id = %s and m.turn_number <= 101",
            [cast["conversation"]],
        )
        conn.execute("set local role authenticated")
        plans = nested_plans(conn, "with d as (delete from memory.messages where conversation_id = %s"
                             " and turn_number <= 100 returning 1) select count(*) from d",
                             [cast["conversation"]], "with deleted as")
        conn.execute("set local role postgres")
        kept = conn.execute("select m.turn_number, m.role from memory.messages as m"
                            " join memory_private.message_embeddings as e on e.message_id = m.id"
                            " where m.conversation_id = %s order by 1, 2", [cast["conversation"]]).fetchall()
        # Turn 101's question lost its vector (embedded after turn 100's answer); its answer keeps one.
        assert kept == [{"turn_number": 101, "role": "assistant"}]
    finally:
        conn.execute("rollback to savepoint trimmed")
    for plan in plans:
        (scan,) = scans_of_messages(plan)
        assert scan["Node Type"] == "Index Scan" and scan["Index Name"] == INDEX, json.dumps(plan)
        assert "turn_number >=" in scan["Index Cond"] and "turn_number <=" in scan["Index Cond"], json.dumps(plan)
        assert scan["Actual Loops"] == 200, "one look per deleted message"


def test_an_embed_job_reads_the_messages_waiting_not_the_history(owner_session) -> None:
    """An embed job's input, and its check for more after storing a batch, read the user's noted
    messages (memory_private.pending_embeddings): with 3 of 4,004 messages waiting for a vector,
    no statement reads more than those 3, however long the history."""
    conn, cast = owner_session
    conn.execute("savepoint embedded")
    try:
        conn.execute("set local role postgres")
        # Every message but the newest three has its vector and no note, as embed jobs leave them.
        conn.execute(
            "insert into memory_private.message_embeddings (message_id, user_id, model, embedding)"
            " select m.id, m.user_id, memory_private.setting('embedding_model') ->> 0,"
            " array_fill(0.1, array[384])::extensions.vector"
            " from memory.messages as m where m.user_id = %s and m.id < ("
            "select max(x.id) - 2 from memory.messages as x where x.user_id = %s)",
            [cast["owner"], cast["owner"]],
        )
        conn.execute(
            "delete from memory_private.pending_embeddings as n using memory_private.message_embeddings as e"
            " where n.user_id = %s and e.message_id = n.message_id",
            [cast["owner"]],
        )
        # The notes are read by unembedded's statement, the messages (and each one's predecessor) by
        # embedding_texts'.
        for limit in (64, 1):
            for _ in range(CALLS):
                for marker, relation in (("pending_embeddings", "pending_embeddings"), ("message_before", "messages")):
                    plans = nested_plans(conn, "select * from memory_private.unembedded(%s, %s)",
                                         [cast["owner"], limit], marker)
                    for plan in plans:
                        scans = scans_of(plan, relation)
                        assert scans, json.dumps(plan)
                        for scan in scans:
                            read = scan["Actual Rows"] * scan["Actual Loops"]
                            assert read <= 3, f"{relation}: {json.dumps(plan)}"
    finally:
        conn.execute("rollback to savepoint embedded")

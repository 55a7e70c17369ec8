"""Search's own statements, planned inside its functions, read what the query needs, not the history.

memory.search_messages checks access once and runs as the owner (under the per-row OR policy the
planner read all of a signed-in user's messages), and it and lexical_messages keep generic plans,
which must stay bounded whatever the call's values: the page is read by id, the messages not yet
folded into the term statistics through (user_id, id), never through the primary key (every
user's turns since the fold), and the candidates
from the postings' index alone (within a conversation, from the postings or a walk of the
conversation). Read through auto_explain
(tests/plan_helpers.py) as the signed-in owner of 6,000 messages among 60,000 of another user,
past plpgsql's fifth execution, when plans may be cached. Everything is rolled back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from plan_helpers import (
    CALLS,
    explain_nested,
    index_names,
    nested_plans,
    nodes,
    other_users_memories,
    pages_read,
    registered_user,
    rows_read,
    scans_of,
    sign_in,
)
from psycopg.rows import dict_row

MESSAGES = 6000
#: The owner's short conversation: every fifth message holds a zeppelin.
SMALL = 10
UNFOLDED = 10
MEMORIES = 3
#: Other users' memories around the owner's.
OTHER_MEMORIES = 1500
OTHERS = 60000
#: The other user's turns written since the fold.
OTHERS_UNFOLDED = 5000
SEARCH = "select id from memory.search_messages('coffee zeppelin', p_limit => 20)"


@pytest.fixture(scope="module")
def owner_session(admin_url: str) -> Iterator[psycopg.Connection]:
    conn = psycopg.connect(admin_url, row_factory=dict_row)
    try:
        owner = registered_user(conn, "search-plans@supamem.test")
        profile = conn.execute(
            "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", [owner]
        ).fetchone()["id"]
        conversation = conn.execute(
            "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s, p_window_turns => 10000)).id",
            [owner, profile],
        ).fetchone()["id"]
        # Coffee in every message, a zeppelin in every hundredth; the term statistics folded.
        conn.execute(
            "insert into memory.messages (conversation_id, role, content)"
            " select %s, case when i %% 2 = 1 then 'user' else 'assistant' end,"
            " format('message %%s about coffee', i) || case when i %% 100 = 0 then ' and a zeppelin' else '' end"
            " from generate_series(1, %s) as i order by i",
            [conversation, MESSAGES],
        )
        # A short conversation of the owner's, two of its messages about a zeppelin.
        small = conn.execute(
            "select (memory.create_conversation(p_user_id => %s, p_title => 'small', p_window_turns => 10000)).id",
            [owner],
        ).fetchone()["id"]
        conn.execute(
            "insert into memory.messages (conversation_id, role, content)"
            " select %s, case when i %% 2 = 1 then 'user' else 'assistant' end,"
            " format('short %%s about coffee', i) || case when i %% 5 = 0 then ' and a zeppelin' else '' end"
            " from generate_series(1, %s) as i order by i",
            [small, SMALL],
        )
        # Other users' history around the owner's, as in any shared database (set-based, triggers off).
        other = registered_user(conn, "search-plans-other@supamem.test")
        elsewhere = conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [other]).fetchone()["id"]
        conn.execute("set local session_replication_role = replica")
        conn.execute(
            "insert into memory.messages (conversation_id, user_id, role, content, turn_number)"
            " select %s, %s, case when i %% 2 = 1 then 'user' else 'assistant' end, format('other %%s about tea', i),"
            " (i + 1) / 2 from generate_series(1, %s) as i",
            [elsewhere, other, OTHERS],
        )
        conn.execute("set local session_replication_role = origin")
        conn.execute("select memory_private.fold_search_terms(2147483647)")
        # Ten more that the fold has not reached yet, among another user's newer turns it has not reached
        # either (the fold runs every minute; a busy database writes thousands of turns in between).
        conn.execute("set local session_replication_role = replica")
        conn.execute(
            "insert into memory.messages (conversation_id, user_id, role, content, turn_number)"
            " select %s, %s, case when i %% 2 = 1 then 'user' else 'assistant' end, format('later %%s about tea', i),"
            " (%s + i + 1) / 2 from generate_series(1, %s) as i",
            [elsewhere, other, OTHERS, OTHERS_UNFOLDED],
        )
        conn.execute("set local session_replication_role = origin")
        conn.execute(
            "insert into memory.messages (conversation_id, role, content)"
            " select %s, case when i %% 2 = 1 then 'user' else 'assistant' end, format('late %%s: coffee', i)"
            " from generate_series(1, %s) as i order by i",
            [conversation, UNFOLDED],
        )
        other_users_memories(conn, OTHER_MEMORIES)
        # Memories of a zeppelin drawn from three of the owner's messages: search finds the turns through them too.
        conn.execute(
            "insert into memory.memories (user_id, content, type, source_conversation_id, source_message_id)"
            " select %s, format('The user rode a zeppelin (%%s)', m.id), 'fact', m.conversation_id, m.id"
            " from memory.messages as m where m.conversation_id = %s and m.role = 'user' limit %s",
            [owner, conversation, MEMORIES],
        )
        conn.execute("analyze memory.messages, memory.memories, memory_private.search_terms")
        explain_nested(conn)
        sign_in(conn, "authenticated", owner)
        yield conn
    finally:
        conn.rollback()
        conn.close()
        # ANALYZE wrote pg_class counts that include the rolled back rows.
        with psycopg.connect(admin_url, autocommit=True) as again:
            again.execute("vacuum (analyze) memory.messages, memory.memories, memory_private.search_terms")


def each_call(conn: psycopg.Connection, marker: str) -> list[dict[str, Any]]:
    plans = []
    for _ in range(CALLS):
        plans += nested_plans(conn, SEARCH, [], marker)
    return plans


def test_fusion_reads_no_message_and_the_page_is_read_by_id(owner_session) -> None:
    for plan in each_call(owner_session, "with by_text as"):
        assert not scans_of(plan, "messages"), json.dumps(plan)
    for plan in each_call(owner_session, "with ordinality"):
        (scan,) = scans_of(plan, "messages")
        # One probe per fused id (by the key, or by the user and id).
        assert scan["Node Type"] == "Index Scan", json.dumps(plan)
        assert index_names(scan) <= {"messages_pkey", "messages_user_id_idx"}, json.dumps(plan)
        assert "(id = f.id)" in scan["Index Cond"], json.dumps(plan)
        assert rows_read(scan) <= 60, "the fused candidates, looked up by id"


def test_the_memories_found_are_read_by_id(owner_session) -> None:
    """The turns' memories that the lexical side finds lead to their turns, one probe each: joined
    as a set, a memories table of a few hundred pages was scanned whole for every search."""
    for plan in each_call(owner_session, "with by_text as"):
        scans = scans_of(plan, "memories")
        assert scans, json.dumps(plan)
        for scan in scans:
            assert scan["Node Type"] == "Index Scan", json.dumps(plan)
            assert re.fullmatch(r"\(id = \w+\.memory_id\)", scan["Index Cond"]), json.dumps(plan)
        # Without an embedding only the lexical side's probes run.
        assert sum(rows_read(scan) for scan in scans) == MEMORIES, json.dumps(plan)


def postings_and_messages(plan: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The reads of the postings, and those of the messages (the scored ones by id, the unfolded ones)."""
    postings = scans_of(plan, "search_postings")
    messages = [s for s in scans_of(plan, "messages") if s.get("Actual Loops", 0) > 0]
    return postings, messages


def scored_by_id(messages: list[dict[str, Any]]) -> dict[str, Any]:
    (scored,) = [s for s in messages if index_names(s) == {"messages_pkey"}]
    return scored


def test_lexical_candidates_come_from_the_rare_terms_postings(owner_session) -> None:
    """Across the user's history the candidates are the zeppelin's postings, read from the index
    alone; the common term is scored, never used to find candidates; the messages' heap is read
    for the best of them by id (at most twice the page; search asks lexical search for 50), and
    the unfolded messages by their own statement (below)."""
    for plan in each_call(owner_session, "with posted as"):
        postings, messages = postings_and_messages(plan)
        (scan,) = postings
        assert scan["Node Type"] == "Index Only Scan", json.dumps(plan)
        assert scan["Actual Loops"] == 1, "one admitted term"
        assert rows_read(scan) == MESSAGES // 100 + SMALL // 5, json.dumps(plan)
        assert [scored_by_id(messages)] == messages, json.dumps(plan)
        assert rows_read(scored_by_id(messages)) == MESSAGES // 100 + SMALL // 5, json.dumps(plan)


def test_a_common_term_reads_only_its_newest_postings(owner_session) -> None:
    """Coffee is in every message: its newest 500 postings (lexical_candidates) come from the
    index, newest first, and only the best 2 x 50 of them are read from the messages' heap, however
    long the history and wherever its matches lie."""
    plans = []
    for _ in range(CALLS):
        plans += nested_plans(owner_session, "select id from memory.search_messages('coffee', p_limit => 20)", [],
                              "with posted as")
    for plan in plans:
        postings, messages = postings_and_messages(plan)
        (scan,) = postings
        assert scan["Node Type"] == "Index Only Scan", json.dumps(plan)
        assert rows_read(scan) == 500, json.dumps(plan)
        assert rows_read(scored_by_id(messages)) == 100, json.dumps(plan)


def test_a_short_conversation_is_walked_not_the_users_matches(owner_session) -> None:
    """Within a conversation smaller than the user's matches of the rarest term (62 zeppelins, 60 of
    them elsewhere), the candidates come from a walk of that conversation alone: the term index
    would read every conversation's matches to keep two."""
    small = owner_session.execute("select id from memory.conversations where title = 'small'").fetchone()["id"]
    query = "select id from memory.search_messages('coffee zeppelin', p_conversation_id => %s, p_limit => 20)"
    plans = []
    for _ in range(CALLS):
        plans += nested_plans(owner_session, query, [small], "with posted as")
    for plan in plans:
        executed = [s for s in scans_of(plan, "messages") + scans_of(plan, "search_postings")
                    if s.get("Actual Loops", 0) > 0]
        assert not executed, "the user's matches in every conversation are not read for one conversation"
    walks = []
    for _ in range(CALLS):
        walks += nested_plans(owner_session, query, [small], "order by m.turn_number desc")
    for walk in walks:
        (scan,) = scans_of(walk, "messages")
        assert index_names(scan) == {"messages_conversation_turn_role_key"}, json.dumps(walk)
        assert rows_read(scan) == SMALL, "the conversation's messages, no other"
    found = owner_session.execute(query, [small]).fetchall()
    assert len(found) == SMALL // 5
    texts = owner_session.execute(
        "select content from memory.messages where id = any(%s)", [[r["id"] for r in found]]
    ).fetchall()
    assert all("zeppelin" in t["content"] for t in texts)


def test_a_long_conversation_reads_its_matches_from_the_postings(owner_session) -> None:
    """Within a conversation larger than half the user's matches (62 zeppelins, 6,000 messages),
    the matches come from the postings' index and each is read once by id to know its
    conversation: no walk of the conversation, no other message."""
    long = owner_session.execute(
        "select conversation_id from memory.messages where user_id = (select auth.uid())"
        " group by 1 order by count(*) desc limit 1").fetchone()["conversation_id"]
    query = "select id from memory.search_messages('coffee zeppelin', p_conversation_id => %s, p_limit => 20)"
    plans = []
    for _ in range(CALLS):
        plans += nested_plans(owner_session, query, [long], "with posted as")
    for plan in plans:
        postings, messages = postings_and_messages(plan)
        (scan,) = postings
        assert scan["Node Type"] == "Index Only Scan", json.dumps(plan)
        assert rows_read(scan) == MESSAGES // 100 + SMALL // 5, json.dumps(plan)
        assert all(index_names(m) == {"messages_pkey"} for m in messages), json.dumps(plan)
        assert sum(rows_read(m) for m in messages) == MESSAGES // 100 + SMALL // 5, json.dumps(plan)
    found = owner_session.execute(query, [long]).fetchall()
    assert len(found) == 20


def test_unfolded_messages_are_read_from_the_folds_watermark(owner_session) -> None:
    plans = each_call(owner_session, "9223372036854775807")
    assert len(plans) == 2 * CALLS, "a count, then the messages, once a search"
    for plan in plans:
        (scan,) = scans_of(plan, "messages")
        assert index_names(scan) == {"messages_user_id_idx"}, json.dumps(plan)
        # Read backward from the user's newest message, the scan walked all 6,000 of their messages'
        # index entries (about 30 pages) to reach the fold's watermark.
        assert pages_read(scan) <= UNFOLDED + 5, json.dumps(plan)
        assert scan["Actual Rows"] == UNFOLDED, "only the messages the fold has not reached"
        # (Deletions pending for the fold are a table of their own, emptied every minute.)
        assert not [n for n in nodes(plan) if n["Node Type"] == "Seq Scan" and n.get("Relation Name") == "messages"], (
            json.dumps(plan)
        )


@pytest.mark.parametrize("behind", [20000, 20003])
def test_a_backlog_over_the_cap_is_counted_from_the_newest(admin_url: str, behind: int) -> None:
    """Should the fold fall more than 20,000 messages behind a user, search counts the newest 20,000."""
    with psycopg.connect(admin_url, row_factory=dict_row) as conn, conn.transaction(force_rollback=True):
        user = registered_user(conn, "search-backlog@supamem.test")
        conversation = conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [user]).fetchone()["id"]
        through = conn.execute(
            "select through from memory_private.message_scans where name = 'search_terms'").fetchone()["through"]
        conn.execute("set local session_replication_role = replica")
        written = [r["id"] for r in conn.execute(
            "insert into memory.messages (conversation_id, user_id, role, content, turn_number)"
            " select %s, %s, case when i %% 2 = 1 then 'user' else 'assistant' end, format('turn %%s', i), (i + 1) / 2"
            " from generate_series(1, %s) as i returning id",
            [conversation, user, behind],
        )]
        conn.execute("set local session_replication_role = origin")
        read = [r["id"] for r in conn.execute("select id from memory_private.unfolded_messages(%s, %s)", [user, through])]
        assert sorted(read) == sorted(written)[-20000:]


def test_without_an_embedding_no_vector_side_runs(owner_session) -> None:
    for plan in each_call(owner_session, "with by_text as"):
        vector = [n for n in nodes(plan) if n.get("Function Name") in ("vector_messages", "vector_memories")]
        # The turns' own vectors only: memories lead to their turns by their words.
        assert [n["Function Name"] for n in vector] == ["vector_messages"], json.dumps(plan)
        assert all(n["Actual Loops"] == 0 for n in vector), "a vector side ran without a query embedding"


@pytest.mark.parametrize("generic", [False, True], ids=["custom-plan", "generic-plan"])
def test_memory_search_ranks_once(owner_session, generic) -> None:
    """memory.search_memories fuses its two rankings once, however the plan joins them to the user's
    memories: under a nested loop the ranks were computed again for every memory."""
    with owner_session.transaction(force_rollback=True):
        owner_session.execute(f"set local plan_cache_mode = {'force_generic_plan' if generic else 'force_custom_plan'}")
        plans = []
        for _ in range(CALLS):
            plans += nested_plans(owner_session, "select id from memory.search_memories('zeppelin')", [], "with lexical as")
    for plan in plans:
        ranked = [n for n in nodes(plan) if n["Node Type"] == "WindowAgg"]
        assert ranked and all(n["Actual Loops"] == 1 for n in ranked), json.dumps(plan)

"""The search-term fold never passes a message whose transaction is still open.

A message's id is drawn when its insert runs, so a writer still open can hold an id below one
already committed. The fold (memory_private.fold_search_terms) first waits for the writers open at
its start (at most p_wait): given no time, it counts no new message while one is open; given time,
it waits for the writer to end and then posts both messages. Real connections, committed rows,
the test's user erased at the end. And, a hypothesis test in rolled-back transactions: whatever is
written, deleted and edited between folds, the postings and the counts after a fold are those of
the live messages; and the fold never reads a user's postings once per deleted message. A message
deleted or edited while a fold posts it is noted whatever watermark its writer saw, and the next
fold takes out what was posted.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from client_helpers import wait_for, waiting_on
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_helpers import explain_nested, nested_plans, nodes, scans_of


@pytest.fixture
def user(database_url: str) -> Iterator[Any]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        uid = conn.execute("select memory.user_id_for(%s)", [f"fold-writers-{uuid.uuid4()}"]).fetchone()[0]
        yield uid
        conn.execute("delete from memory.users where id = %s", [uid])


def conversation(conn: psycopg.Connection, user: Any) -> Any:
    return conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [user]).fetchone()[0]


def add(conn: psycopg.Connection, conv: Any, content: str) -> int:
    return conn.execute("select (memory.add_message(%s, 'user', %s)).id", [conv, content]).fetchone()[0]


def posted(conn: psycopg.Connection, message: int) -> bool:
    return conn.execute("select exists (select 1 from memory_private.search_postings where message_id = %s)",
                        [message]).fetchone()[0]


#: A fold that waits up to five minutes for the writers open at its start.
FOLD_WAITING = "select memory_private.fold_search_terms(2147483647, interval '5 minutes')"


def fold_in_background(folder: psycopg.Connection) -> threading.Thread:
    fold = threading.Thread(target=folder.execute, args=[FOLD_WAITING])
    fold.start()
    return fold


def test_the_fold_waits_for_an_open_writer_below_its_ids(database_url: str, user: Any) -> None:
    with psycopg.connect(database_url, autocommit=True) as setup, \
            psycopg.connect(database_url) as open_writer, \
            psycopg.connect(database_url, autocommit=True) as folder:
        first, second = conversation(setup, user), conversation(setup, user)
        early = add(open_writer, first, "an early zeppelin, committed late")
        late = add(setup, second, "a later zeppelin, committed at once")
        assert early < late

        # Given no time, the fold passes neither id while the early writer is open.
        folder.execute("select memory_private.fold_search_terms(2147483647, interval '0')")
        through = folder.execute(
            "select through from memory_private.message_scans where name = 'search_terms'").fetchone()[0]
        assert through < early
        assert not posted(folder, late)

        # Given time, it waits for the writer, then posts both.
        fold = fold_in_background(folder)
        wait_for(lambda: waiting_on(setup, folder.info.backend_pid, "Timeout", "PgSleep"), 60,
                 "the fold to wait for the open writer")
        open_writer.commit()
        fold.join()
        assert posted(setup, early) and posted(setup, late)


def lexemes_posted(conn: psycopg.Connection, message: int) -> set[str]:
    return {r[0] for r in conn.execute("select lexeme from memory_private.search_postings where message_id = %s",
                                       [message])}


@pytest.mark.parametrize("change", ["delete", "edit"])
def test_a_message_changed_while_a_fold_posts_it_is_posted_as_it_is(database_url: str, admin_url: str,
                                                                   user: Any, change: str) -> None:
    """The fold has read its batch and is posting it when the message is deleted or edited: the
    change is noted whatever watermark it sees, and the next fold takes out the words this fold
    posted (noted only below the watermark, a deleted message's words stayed in the postings for
    good, and an edited one was never found by its new words)."""
    with psycopg.connect(database_url, autocommit=True) as setup, \
            psycopg.connect(admin_url) as blocker, \
            psycopg.connect(database_url, autocommit=True) as folder:
        message = add(setup, conversation(setup, user), "a zeppelin over the harbour")
        # An uncommitted posting of the same key holds the fold's insert after it has read its batch.
        blocker.execute("insert into memory_private.search_postings (user_id, lexeme, message_id, frequency, length)"
                        " values (%s, 'zeppelin', %s, 1, 2)", [user, message])
        fold = fold_in_background(folder)
        wait_for(lambda: waiting_on(setup, folder.info.backend_pid, "Lock"), 60, "the fold to reach the held posting")
        if change == "delete":
            setup.execute("delete from memory.messages where id = %s", [message])
        else:
            setup.execute("update memory.messages set content = 'a kayak in the garden' where id = %s", [message])
        blocker.rollback()
        fold.join()
        assert "zeppelin" in lexemes_posted(setup, message), "the fold posted the words it read"
        folder.execute(FOLD_WAITING)
        assert lexemes_posted(setup, message) == ({"kayak", "garden"} if change == "edit" else set())


def test_a_message_deleted_before_any_fold_leaves_the_scores_as_they_were(postgres_conn: psycopg.Connection) -> None:
    """Its deletion is noted, but search does not take out words the fold never counted."""
    with postgres_conn.transaction(force_rollback=True):
        user = postgres_conn.execute("select memory.user_id_for('fold-unpassed')").fetchone()[0]
        conv = conversation(postgres_conn, user)
        for text in ("a zeppelin", "the harbour at night", "coffee by the harbour"):
            add(postgres_conn, conv, text)
        postgres_conn.execute("select memory_private.fold_search_terms()")

        def scores() -> list[tuple[Any, ...]]:
            return postgres_conn.execute(
                "select * from memory_private.lexical_messages(%s, 'zeppelin harbour')", [user]).fetchall()

        before = scores()
        gone = add(postgres_conn, conv, "a zeppelin over the harbour")
        postgres_conn.execute("delete from memory.messages where id = %s", [gone])
        assert scores() == before
        postgres_conn.execute("select memory_private.fold_search_terms()")
        assert scores() == before


WORDS = ["zeppelin", "harbour", "coffee", "museum", "kayak", "garden"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
#: A step: write a turn, delete or edit the i-th live message (modulo how many there are), or fold.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("write"), texts),
        st.tuples(st.just("delete"), st.integers(0, 20)),
        st.tuples(st.just("edit"), st.integers(0, 20), texts),
        st.tuples(st.just("fold")),
    ),
    min_size=1,
    max_size=14,
)


def test_folds_keep_postings_and_counts_equal_to_the_live_messages(postgres_conn: psycopg.Connection) -> None:
    """Whatever turns are written, deleted and edited between folds, after a fold the user's postings
    are exactly the live messages' lexemes (with their frequency and the message's length), and the
    term and corpus counts are theirs."""

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(steps=steps)
    def check(steps: list[tuple[Any, ...]]) -> None:
        with postgres_conn.transaction(force_rollback=True):
            user = postgres_conn.execute("select memory.user_id_for('prop-fold')").fetchone()[0]
            conv = conversation(postgres_conn, user)
            live: list[int] = []
            for step in steps:
                if step[0] == "write":
                    live.append(add(postgres_conn, conv, step[1]))
                elif step[0] == "delete" and live:
                    postgres_conn.execute("delete from memory.messages where id = %s", [live.pop(step[1] % len(live))])
                elif step[0] == "edit" and live:
                    postgres_conn.execute("update memory.messages set content = %s where id = %s",
                                          [step[2], live[step[1] % len(live)]])
                elif step[0] == "fold":
                    postgres_conn.execute("select memory_private.fold_search_terms()")
            postgres_conn.execute("select memory_private.fold_search_terms()")

            def rows(query: str) -> list[tuple[Any, ...]]:
                return sorted(postgres_conn.execute(query, [user]).fetchall())

            assert rows("select lexeme, message_id, frequency, length from memory_private.search_postings "
                        "where user_id = %s") == rows(
                "select w.lexeme, m.id, cardinality(w.positions), length(m.search) from memory.messages as m "
                "cross join lateral unnest(m.search) as w where m.user_id = %s")
            assert rows("select lexeme, documents from memory_private.search_terms where user_id = %s "
                        "and documents > 0") == rows(
                "select w.lexeme, count(*)::integer from memory.messages as m "
                "cross join lateral unnest(tsvector_to_array(m.search)) as w (lexeme) where m.user_id = %s group by 1")
            assert rows("select coalesce(sum(documents), 0), coalesce(sum(lexemes), 0) from memory_private.search_corpus "
                        "where user_id = %s") == rows(
                "select count(*), coalesce(sum(length(m.search)), 0) from memory.messages as m where m.user_id = %s")

    check()


def test_a_fold_never_reads_a_users_postings_for_each_deleted_message(admin_url: str) -> None:
    """Taking deleted messages out reads the postings once (a small table) or probes each posting by
    its whole key, never the user's postings once for every deleted message (which made unfolding
    20,000 of one user's messages take 110 s)."""
    with psycopg.connect(admin_url) as conn:
        user = conn.execute("select memory.user_id_for('fold-unfold-plan')").fetchone()[0]
        conv = conversation(conn, user)
        conn.execute("select count(memory.add_message(%s, 'user', format('message %%s about the zeppelin museum "
                     "and a harbour kayak', i))) from generate_series(1, 2000) as i", [conv])
        conn.execute("select memory_private.fold_search_terms(2147483647, interval '0')")
        conn.execute("delete from memory.messages where id in "
                     "(select id from memory.messages where conversation_id = %s order by id limit 200)", [conv])
        explain_nested(conn)
        (plan,) = nested_plans(conn, "select memory_private.fold_search_terms(2147483647, interval '0')", [],
                               "gone_postings as materialized")
        reads = [n for s in scans_of(plan, "search_postings") if s["Node Type"] != "ModifyTable" for n in nodes(s)]
        assert reads, json.dumps(plan)
        for node in reads:
            if node["Node Type"] == "Seq Scan":
                assert node["Actual Loops"] == 1, json.dumps(plan)
            if "Index Cond" in node:
                assert "message_id" in node["Index Cond"], json.dumps(plan)
        conn.rollback()

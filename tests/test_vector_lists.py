"""A user's vector lists are built off the write path and keep every vector listed.

pg_cron's minutely pass (memory_private.run_vector_list_builds) builds the lists of the users due
them, each build committed on its own. A build holds the user's vector lock alone: one that starts
while a writer of the user's vectors is open waits for it, so the writer's vector is listed by the
new centres, never left out. A search over the history reads only the nearest lists of its own
user, by their index, with the plan it keeps. And, a hypothesis test in rolled-back transactions: whatever vectors
are stored, changed, refused and deleted around builds, each vector of a user with lists is listed
once, in the list of its nearest centre. Real connections; the test's users erased at the end.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from client_helpers import wait_for, waiting_on
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_helpers import CALLS, explain_nested, index_names, nested_plans, rows_read, scans_of

#: A random unit vector of the default model's 384 dimensions for each row (`g` ties it to the row).
RANDOM_VECTOR = ("extensions.l2_normalize(array(select random() - 0.5 from generate_series(1, 384) "
                 "where g > 0)::extensions.vector)")


@pytest.fixture
def user(database_url: str) -> Iterator[Any]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        uid = conn.execute("select memory.user_id_for(%s)", [f"vector-lists-{uuid.uuid4()}"]).fetchone()[0]
        yield uid
        conn.execute("delete from memory.users where id = %s", [uid])


def history(conn: psycopg.Connection, user: Any, messages: int) -> Any:
    """A conversation of `messages` messages with a vector each, then the search-term fold (which
    finds the user due lists when `messages` reaches vector_lists_from)."""
    conv = conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [user]).fetchone()[0]
    conn.execute(
        "select memory.import_messages(jsonb_agg(jsonb_build_object("
        "'conversation_id', %s::uuid, 'role', 'user', 'content', 'turn ' || g))) "
        "from generate_series(1, %s) as g",
        [conv, messages],
    )
    conn.execute(
        f"insert into memory_private.message_embeddings (message_id, user_id, model, embedding) "
        f"select m.id, m.user_id, memory_private.setting('embedding_model') ->> 0, {RANDOM_VECTOR} "
        f"from (select m.*, m.id as g from memory.messages as m where m.conversation_id = %s) as m",
        [conv],
    )
    conn.execute("select memory_private.fold_search_terms(2147483647)")
    return conv


def listed(conn: psycopg.Connection, user: Any) -> tuple[int, int]:
    """(vectors of the user, of them listed in the list of their nearest centre)."""
    return conn.execute(
        "select (select count(*) from memory_private.message_embeddings where user_id = %(u)s), "
        "(select count(*) from memory_private.vector_list_entries as x "
        " join memory_private.vector_lists as l on l.user_id = x.user_id and l.model = x.model "
        " where x.user_id = %(u)s and x.list_no = (memory_private.nearest_centroids(l.centroids, x.embedding))[1])",
        {"u": user},
    ).fetchone()


def test_the_scheduled_pass_builds_the_lists_of_users_due_them(database_url: str, user: Any) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        assert conn.execute(
            "select command from cron.job where jobname = 'supamem-build-vector-lists'"
        ).fetchone() == ("call memory_private.run_vector_list_builds()",)
        frm = int(conn.execute("select memory_private.number_setting('vector_lists_from', 1)").fetchone()[0])
        history(conn, user, frm)
        due = conn.execute("select wanted_at is not null from memory_private.vector_lists where user_id = %s",
                           [user]).fetchone()
        assert due == (True,)

        conn.execute("call memory_private.run_vector_list_builds()")
        lists = conn.execute("select lists, wanted_at from memory_private.vector_lists where user_id = %s",
                             [user]).fetchone()
        assert lists == (-(-frm ** 0.5 // 1), None)
        assert listed(conn, user) == (frm, frm)


def test_a_build_waits_for_an_open_vector_writer_and_lists_its_vector(database_url: str, user: Any) -> None:
    # The writer is closed first on the way out, so a build blocked behind it is never left waiting.
    with psycopg.connect(database_url, autocommit=True) as setup, \
            psycopg.connect(database_url, autocommit=True) as builder, \
            psycopg.connect(database_url) as writer:
        frm = int(setup.execute("select memory_private.number_setting('vector_lists_from', 1)").fetchone()[0])
        conv = history(setup, user, frm)
        setup.execute("call memory_private.run_vector_list_builds()")

        # A writer stores one more vector and stays open.
        late = setup.execute("select (memory.add_message(%s, 'user', 'late')).id", [conv]).fetchone()[0]
        writer.execute(
            f"insert into memory_private.message_embeddings (message_id, user_id, model, embedding) "
            f"select %s, %s, memory_private.setting('embedding_model') ->> 0, {RANDOM_VECTOR} "
            f"from (select 1 as g) as s",
            [late, user],
        )
        build = threading.Thread(target=builder.execute, args=[
            "select memory_private.build_vector_lists(%s, memory_private.setting('embedding_model') ->> 0)", [user]])
        build.start()
        wait_for(lambda: waiting_on(setup, builder.info.backend_pid, "Lock", "advisory"), 60,
                 "the build to wait for the open writer")
        writer.commit()
        build.join(60)
        assert not build.is_alive()
        assert listed(setup, user) == (frm + 1, frm + 1)


def test_a_build_holds_its_vectors_before_it_replaces_their_copies(database_url: str, user: Any) -> None:
    """A build holds the user's vectors against deletion before it touches a copy, so a delete
    arriving meanwhile waits at the vector: one that reached a copy the build had replaced while the
    build waited for its vector (the new copy's foreign key) deadlocked. Here a vector held by
    another transaction stops the build, which has then replaced no copy; once free, it lists all."""
    with psycopg.connect(database_url, autocommit=True) as setup, \
            psycopg.connect(database_url, autocommit=True) as builder, \
            psycopg.connect(database_url) as holder:
        frm = int(setup.execute("select memory_private.number_setting('vector_lists_from', 1)").fetchone()[0])
        history(setup, user, frm)
        setup.execute("call memory_private.run_vector_list_builds()")
        holder.execute("select 1 from memory_private.message_embeddings where message_id = "
                       "(select max(message_id) from memory_private.message_embeddings where user_id = %s) for update",
                       [user])
        build = threading.Thread(target=builder.execute, args=[
            "select memory_private.build_vector_lists(%s, memory_private.setting('embedding_model') ->> 0)", [user]])
        build.start()
        try:
            wait_for(lambda: waiting_on(setup, builder.info.backend_pid, "Lock"), 60, "the build to wait for the vector")
            copies = setup.execute("select count(*) from (select 1 from memory_private.vector_list_entries "
                                   "where user_id = %s for update nowait) as x", [user]).fetchone()[0]
            assert copies == frm
        finally:
            holder.rollback()
            build.join(60)
        assert not build.is_alive()
        assert listed(setup, user) == (frm, frm)


def test_a_pass_whose_builds_fail_tries_each_again_in_an_hour(database_url: str) -> None:
    """A build that fails does not stop the pass: it is logged, its user is due again in an hour
    (behind the others), and the pass goes on to the next user and ends."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        frm = int(conn.execute("select memory_private.number_setting('vector_lists_from', 1)").fetchone()[0])
        users = [conn.execute("select memory.user_id_for(%s)", [f"vector-lists-{uuid.uuid4()}"]).fetchone()[0]
                 for _ in range(2)]
        try:
            for uid in users:
                history(conn, uid, frm)
            # Every build fails on a setting it cannot read (pg_cron's pass may have built them already).
            conn.execute("update memory_private.settings set value = '\"many\"' where key = 'vector_lists_from'")
            conn.execute("update memory_private.vector_lists set wanted_at = now() - interval '1 second' "
                         "where user_id = any(%s)", [users])
            conn.execute("call memory_private.run_vector_list_builds()")
            rows = conn.execute(
                "select wanted_at > now() + interval '50 minutes' "
                "from memory_private.vector_lists where user_id = any(%s)", [users]).fetchall()
            assert rows == [(True,), (True,)]
        finally:
            conn.execute("update memory_private.settings set value = %s where key = 'vector_lists_from'", [str(frm)])
            conn.execute("delete from memory.users where id = any(%s)", [users])


def test_a_search_reads_the_nearest_lists_of_its_user_alone(database_url: str, admin_url: str, user: Any) -> None:
    with psycopg.connect(database_url, autocommit=True) as setup:
        frm = int(setup.execute("select memory_private.number_setting('vector_lists_from', 1)").fetchone()[0])
        probes = int(setup.execute("select memory_private.number_setting('vector_list_probes', 1)").fetchone()[0])
        history(setup, user, frm)
        setup.execute("call memory_private.run_vector_list_builds()")
        largest = setup.execute("select max(c) from (select count(*) as c from memory_private.vector_list_entries "
                                "where user_id = %s group by list_no) as l", [user]).fetchone()[0]
        query = setup.execute(f"select {RANDOM_VECTOR}::text from (select 1 as g) as s").fetchone()[0]
    with psycopg.connect(admin_url) as conn:
        explain_nested(conn)
        # The HNSW index priced out: the test's user may hold most of it.
        conn.execute("update memory_private.settings set value = '1000000' where key = 'hnsw_visit_cost'")
        conn.execute("set local role service_role")
        call = "select * from memory_private.vector_messages(%s, %s::extensions.vector, null, 20)"
        for _ in range(CALLS):
            conn.execute(call, [user, query]).fetchall()
        (plan,) = nested_plans(conn, call, [user, query], "memory_private.vector_list_entries")
        (entries,) = scans_of(plan, "vector_list_entries")
        assert index_names(entries) == {"vector_list_entries_list_idx"}
        assert rows_read(entries) <= probes * largest < frm
        conn.rollback()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["store", "change", "refuse", "delete", "build"]),
                          st.integers(0, 39), st.lists(st.integers(-3, 3), min_size=3, max_size=3)),
                max_size=30))
def test_every_vector_of_a_listed_user_is_in_its_nearest_list(database_url: str, steps: list[Any]) -> None:
    with psycopg.connect(database_url) as conn:
        try:
            conn.execute("select memory.set_embedding_model('property-3d', 3)")
            conn.execute("update memory_private.settings set value = '10' where key = 'vector_lists_from'")
            uid = conn.execute("select memory.user_id_for(%s)", [f"vector-lists-{uuid.uuid4()}"]).fetchone()[0]
            conv = conn.execute("select (memory.create_conversation(p_user_id => %s)).id", [uid]).fetchone()[0]
            ids = [conn.execute("select (memory.add_message(%s, 'user', %s)).id", [conv, f"m{i}"]).fetchone()[0]
                   for i in range(40)]
            conn.execute("select memory_private.fold_search_terms(2147483647)")
            for i, mid in enumerate(ids[:12]):
                conn.execute("insert into memory_private.message_embeddings (message_id, user_id, model, embedding) "
                             "values (%s, %s, 'property-3d', %s)", [mid, uid, f"[{i % 3}, 1, {i % 5}]"])
            conn.execute("select memory_private.build_vector_lists(%s, 'property-3d')", [uid])
            for action, which, values in steps:
                mid, vector = ids[which], f"[{values[0]}, {values[1]}, {values[2]}]"
                if action == "store" or action == "change":
                    conn.execute(
                        "insert into memory_private.message_embeddings (message_id, user_id, model, embedding) "
                        "values (%s, %s, 'property-3d', %s) on conflict (message_id) do update "
                        "set embedding = excluded.embedding, refused = null",
                        [mid, uid, vector])
                elif action == "refuse":
                    conn.execute("update memory_private.message_embeddings set embedding = null, refused = 'no' "
                                 "where message_id = %s", [mid])
                elif action == "delete":
                    conn.execute("delete from memory_private.message_embeddings where message_id = %s", [mid])
                else:
                    conn.execute("select memory_private.build_vector_lists(%s, 'property-3d')", [uid])
            vectors, in_place = conn.execute(
                "select (select count(*) from memory_private.message_embeddings "
                "        where user_id = %(u)s and embedding is not null), "
                "(select count(*) from memory_private.vector_list_entries as x "
                " join memory_private.message_embeddings as e on e.message_id = x.message_id "
                " join memory_private.vector_lists as l on l.user_id = x.user_id and l.model = x.model "
                " where x.user_id = %(u)s and x.embedding = e.embedding "
                " and x.list_no = (memory_private.nearest_centroids(l.centroids, x.embedding))[1])",
                {"u": uid}).fetchone()
            entries, has_lists = conn.execute(
                "select (select count(*) from memory_private.vector_list_entries where user_id = %(u)s), "
                "exists (select 1 from memory_private.vector_lists where user_id = %(u)s and lists is not null)",
                {"u": uid}).fetchone()
            # A build that found too few vectors leaves the user without lists, and so without copies.
            listed = vectors if has_lists else 0
            assert (in_place, entries) == (listed, listed)
        finally:
            conn.rollback()

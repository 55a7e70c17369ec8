"""Concurrent writers: turn numbers and memory numbers stay unique and gap-free (the database
serialises them)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from uuid import uuid4

import psycopg
from client_helpers import conversations_of, stored_messages, wait_for

from supamem import ConversationMemoryManager, ConversationStore
from supamem.memories import MemoryService

THREADS = 8
TURNS_PER_THREAD = 10


def _run_together(worker, count: int) -> list:
    """Start `count` workers at the same instant (a barrier), return their results."""
    barrier = threading.Barrier(count)

    def start(index: int):
        barrier.wait()
        return worker(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(start, range(count)))


def test_eight_threads_append_to_one_session(client_db, postgres_conn, make_id):
    assert client_db.max_size >= THREADS  # each thread holds its own pooled connection
    manager = ConversationMemoryManager(client_db)
    user = make_id("concurrent")
    session = manager.create_session(user)

    def worker(index: int) -> list[int]:
        numbers = []
        for n in range(TURNS_PER_THREAD):
            turn = manager.store_turn(session, user, f"t{index}-q{n}", f"t{index}-a{n}")
            assert turn.session_id == session
            numbers.append(turn.turn_number)
        return numbers

    results = _run_together(worker, THREADS)
    total = THREADS * TURNS_PER_THREAD
    handed_out = sorted(n for numbers in results for n in numbers)
    assert handed_out == list(range(1, total + 1))  # no gap, no duplicate
    for numbers in results:
        assert numbers == sorted(numbers)  # each writer sees its own turns in order

    rows = stored_messages(postgres_conn, session)
    assert [(r["turn_number"], r["role"]) for r in rows] == [
        (n, role) for n in range(1, total + 1) for role in ("user", "assistant")
    ]
    for n in range(1, total + 1):  # question and answer of one turn come from one writer
        question, answer = rows[2 * n - 2]["content"], rows[2 * n - 1]["content"]
        assert question.split("-q")[0] == answer.split("-a")[0]
    history = manager.get_session_history(session, limit=50)  # seed 001's most
    assert [t.turn_number for t in history] == list(range(total - 49, total + 1))


def test_concurrent_first_requests_share_one_current_conversation(client_db, postgres_conn, make_id):
    store = ConversationStore(client_db)
    user = make_id("first-request")

    def worker(index: int) -> bool:
        return store.store_turn(user, f"q{index}", f"a{index}")

    assert all(_run_together(worker, THREADS))
    (conversation,) = conversations_of(postgres_conn, store.identity.user(user))
    assert conversation["window_turns"] == 10 and conversation["last_turn"] == THREADS
    history = store.get_history(user)
    assert [h["turn_number"] for h in history] == list(range(1, THREADS + 1))
    assert sorted(h["user_query"] for h in history) == sorted(f"q{i}" for i in range(THREADS))


def test_a_new_users_first_requests_at_once_all_register_them(client_db, make_auth_user):
    """Pages fire several requests at once; each registers the signed-in user (idempotently).
    Twenty new users, four simultaneous first calls each: every call succeeds, one row each."""
    users = [make_auth_user() for _ in range(20)]
    for user in users:
        assert _run_together(lambda _index, user=user: client_db.call_as(user, "register_user"), 4) == [
            [{"register_user": user}]] * 4
    with client_db.transaction() as tx:
        counted = tx.execute("select count(*) as n from memory.users where id = any(%s)", [users])[0]["n"]
    assert counted == 20


def test_eight_threads_write_one_users_memories(client_db, postgres_conn, make_id):
    """Seed 004's "M-143": memories written at once by eight writers take 1..n, none twice."""
    service = MemoryService(client_db)
    user = make_id("numbers")
    service.create_memory(user, {"content": "first, which makes the profile", "type": "fact"})

    def worker(index: int) -> list[int]:
        # Contents far apart, so no write is a near-duplicate of another.
        return [service.create_memory(user, {"content": uuid4().hex, "type": "fact"}).number for n in range(5)]

    handed_out = sorted(n for numbers in _run_together(worker, THREADS) for n in numbers)
    assert handed_out == list(range(2, 2 + 5 * THREADS))
    stored = postgres_conn.execute(
        "select array_agg(m.number order by m.number), max(u.memories_numbered) from memory.memories as m "
        "join memory.users as u on u.id = m.user_id where u.external_id = %s", [user]).fetchone()
    assert stored == (list(range(1, 2 + 5 * THREADS)), 1 + 5 * THREADS)


def test_a_revision_and_a_writer_holding_the_users_number_do_not_deadlock(database_url, postgres_conn, make_id):
    """A writer that numbered a new memory (the user's row held to commit) and then locks a memory,
    beside a revision of that memory: the revision takes the user's row first and waits, instead
    of holding the memory while it waits for the row (a deadlock, 40P01)."""
    user = postgres_conn.execute("select memory.user_id_for(%s)", [make_id("lock-order")]).fetchone()[0]
    old = postgres_conn.execute("select memory_id from memory.remember('Runs on Sundays', 'pattern', %s)",
                                [user]).fetchone()[0]
    with psycopg.connect(database_url) as writer, psycopg.connect(database_url, autocommit=True) as reviser:
        writer.execute("select memory.remember('Keeps a vegetable garden', 'fact', %s)", [user])
        reviser_pid = reviser.info.backend_pid
        with ThreadPoolExecutor(max_workers=1) as pool:
            revised = pool.submit(lambda: reviser.execute(
                "select id, number, pinned from memory.revise_memory(%s, 'Runs on Saturdays')", [old]).fetchone())
            wait_for(lambda: postgres_conn.execute(
                "select wait_event_type = 'Lock' from pg_stat_activity where pid = %s", [reviser_pid]).fetchone()[0],
                what="the revision to wait for the writer")
            writer.execute("update memory.memories set pinned = true where id = %s", [old])
            writer.commit()
            new_id, number, pinned = revised.result(timeout=30)
    # Written after the writer's memory (number 2), from the version the writer pinned.
    assert (number, pinned) == (3, True)
    assert postgres_conn.execute("select superseded_by from memory.memories where id = %s", [old]).fetchone()[0] == new_id

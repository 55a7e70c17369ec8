"""Writers of one profile's memories never wait on each other for its kept selection.

Every write to memories notes what it may have lifted (memory_private.memory_selection_notes) and
takes no lock on the profile's selection. A lock there would order each writer after any other
writer of the profile, and an answer reinforcing the memories it used while an extraction of the
same profile remembers (a new memory, then a reinforcement of one the answer holds) would deadlock.
"""

from __future__ import annotations

import threading
from uuid import uuid4

import psycopg


def test_writers_of_one_profile_do_not_wait_on_each_other(database_url, client_db, postgres_conn):
    user = client_db.call_value("user_id_for", external_id=f"writers-{uuid4()}")
    profile = postgres_conn.execute(
        "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", [user]
    ).fetchone()[0]
    held = postgres_conn.execute(
        "insert into memory.memories (user_id, profile_id, content, type) values (%s, %s, 'Runs at dawn', 'pattern')"
        " returning id",
        [user, profile],
    ).fetchone()[0]
    extraction = psycopg.connect(database_url)
    answer = psycopg.connect(database_url)
    try:
        # Without the notes, the answer's write below would wait for the extraction's, which waits
        # for the answer's: the lock timeout turns that wait into a failure instead of a hang.
        answer.execute("set lock_timeout = '5s'")
        extraction.execute(
            "insert into memory.memories (user_id, profile_id, content, type) values (%s, %s, 'Has a dog', 'fact')",
            [user, profile],
        )
        answer.execute("update memory.memories set reference_count = reference_count + 1 where id = %s", [held])
        # The extraction now writes the memory the answer holds: it waits for the answer alone.
        failures: list[BaseException] = []

        def reinforce() -> None:
            try:
                extraction.execute("update memory.memories set confidence = 0.9 where id = %s", [held])
                extraction.commit()
            except BaseException as error:  # reported by the assertion below
                failures.append(error)

        waiting = threading.Thread(target=reinforce)
        waiting.start()
        answer.commit()
        waiting.join()
        assert not failures, failures
        row = postgres_conn.execute(
            "select reference_count, confidence from memory.memories where id = %s", [held]
        ).fetchone()
        assert (row[0], float(row[1])) == (1, 0.9)
        noted = postgres_conn.execute(
            "select count(*) from memory_private.memory_selection_notes where profile_id = %s and memory_id is not null",
            [profile],
        ).fetchone()[0]
        assert noted >= 3  # both memories' inserts and the reinforcement
    finally:
        extraction.close()
        answer.close()
        client_db.call("erase_user", user_id=user)

"""A user erased by another process (`supamem erase`) while an app keeps running: the app's
cached ids for that user are stale, and its next writes still succeed (the user is made again,
as on first use) instead of failing until a restart."""

from __future__ import annotations

import pytest
from client_helpers import run_cli

from supamem import ConversationStore
from supamem.errors import InvalidInputError
from supamem.memories import MemoryService


def test_writes_after_an_erase_in_another_process_succeed(client_db, database_url, make_id, postgres_conn) -> None:
    store = ConversationStore(client_db)
    memories = MemoryService(client_db, identity=store.identity)
    user = make_id("erased")
    assert store.store_turn(user, "I like kites.", "Nice!")
    first = memories.create_memory(user, {"content": "Likes kites", "type": "preference"})
    old_id = memories.resolve_user(user)

    erased = run_cli(database_url, "erase", "--user", user, "--yes")
    assert erased.returncode == 0, erased.stderr
    assert postgres_conn.execute("select count(*) from memory.users where id = %s", [old_id]).fetchone() == (0,)

    assert store.store_turn(user, "I still like kites.", "Noted.")
    second = memories.create_memory(user, {"content": "Flies kites on Sundays", "type": "preference"})
    new_id = memories.resolve_user(user)
    assert new_id != old_id and second.id != first.id
    assert [t["user_query"] for t in store.get_history(user)] == ["I still like kites."]
    assert postgres_conn.execute("select user_id from memory.memories where id = %s", [second.id]).fetchone() == (new_id,)


def test_a_foreign_key_error_of_a_live_user_is_not_retried(client_db, make_id) -> None:
    memories = MemoryService(client_db)
    user = make_id("live")
    memories.create_memory(user, {"content": "Likes kites", "type": "preference"})
    calls = []

    def write() -> None:
        calls.append(1)
        with client_db.transaction() as tx:
            tx.execute("insert into memory.profiles (user_id) values (gen_random_uuid())")

    with pytest.raises(InvalidInputError) as caught:
        memories.identity.run(user, write)
    assert caught.value.sqlstate == "23503" and calls == [1]

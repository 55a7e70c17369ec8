"""Live memory updates: the database announces each memory change (ids and operation only) on
commit, and GET /api/events streams them to the owner's open pages, never to anyone else's."""

from __future__ import annotations

import json

import psycopg
from client_helpers import wait_for
from server_helpers import Person, Served

from supamem_server.events import STREAMS_PER_USER


class Stream:
    """An open /api/events stream; `next_event()` is the next memory event. The server is
    listening once the stream is open, so every change committed afterwards arrives. A stream
    that only keeps alive twice in a row has nothing coming: that fails the test."""

    def __init__(self, person: Person) -> None:
        self._context = person.http.stream("GET", "/api/events")
        response = self._context.__enter__()
        if response.status_code != 200:
            self.close()
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        self._lines = response.iter_lines()
        assert next(self._lines) == ": listening"

    def next_event(self) -> dict[str, str]:
        kind, idle = None, 0
        for line in self._lines:
            if line == ": keep-alive":
                idle += 1
                assert idle < 2, "no event arrived"
            elif line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: ") and kind == "memory":
                return json.loads(line[len("data: "):])
        raise AssertionError("the stream ended")

    def close(self) -> None:
        self._context.__exit__(None, None, None)


def opened(person: Person) -> Stream | None:
    try:
        return Stream(person)
    except AssertionError:
        return None


def _remember(served: Served, user: object, content: str) -> str:
    row = served.postgres_conn.execute(
        "select memory_id from memory.remember(%s, 'fact', %s)", [content, user]).fetchone()
    assert row is not None
    return str(row[0])


def test_a_saved_memory_reaches_its_owners_stream_and_no_one_elses(served: Served) -> None:
    owner, stranger = served.person(), served.person()
    for person in (owner, stranger):
        person.http.post("/api/profiles", json={"name": "Me", "primary": True})
    theirs, mine = Stream(owner), Stream(stranger)
    owners_memory = _remember(served, owner.id, "Keeps bees")          # committed first
    strangers_memory = _remember(served, stranger.id, "Restores clocks")
    assert theirs.next_event() == {"memory_id": owners_memory, "op": "add"}
    assert mine.next_event() == {"memory_id": strangers_memory, "op": "add"}, "the owner's event never reached the stranger"
    served.postgres_conn.execute("select memory.forget(%s, %s)", [owners_memory, owner.id])
    assert theirs.next_event() == {"memory_id": owners_memory, "op": "delete"}
    theirs.close()
    mine.close()
    got = owner.http.get(f"/api/memories/{owners_memory}").json()
    assert got["deleted_at"] is not None, "the page reads what changed through row-level security"
    assert stranger.http.get(f"/api/memories/{owners_memory}").status_code == 404


def test_a_rolled_back_write_announces_nothing(served: Served, database_url: str) -> None:
    owner = served.person()
    owner.http.post("/api/profiles", json={"name": "Me", "primary": True})
    stream = Stream(owner)
    with psycopg.connect(database_url) as conn:
        conn.execute("select memory.remember('Never happened', 'fact', %s)", [owner.id])
        conn.rollback()
    kept = _remember(served, owner.id, "Did happen")
    assert stream.next_event() == {"memory_id": kept, "op": "add"}, "the rolled-back memory sent nothing first"
    stream.close()


def test_events_need_a_signed_in_user(served: Served) -> None:
    with served.anonymous() as client:
        assert client.get("/api/events").status_code == 401


def test_a_user_holds_a_bounded_number_of_streams_and_a_closed_one_frees_its_place(served: Served) -> None:
    owner, other = served.person(), served.person()
    streams = [Stream(owner) for _ in range(STREAMS_PER_USER)]
    refused = owner.http.get("/api/events")
    assert refused.status_code == 429
    assert refused.json()["detail"] == f"at most {STREAMS_PER_USER} event streams are open at once; close one first"
    theirs = Stream(other)  # the bound is each user's own
    streams.pop().close()
    # The server lets the place go once it sees the stream closed.
    streams.append(wait_for(lambda: opened(owner), what="the closed stream's place"))
    for stream in [*streams, theirs]:
        stream.close()

"""Seed 002's conversation routes over HTTP, for the owner and for everyone else."""

from __future__ import annotations

from server_helpers import Served


def _count(served: Served, query: str, *params: object) -> int:
    row = served.postgres_conn.execute(query, list(params)).fetchone()
    assert row is not None
    return int(row[0])


def test_the_owner_creates_lists_reads_changes_and_deletes(served: Served) -> None:
    alice = served.person()
    ids = [alice.http.post("/api/conversations", json={"title": f"Chat {i}"}).json()["id"] for i in range(3)]
    listed = alice.http.get("/api/conversations", params={"limit": 2}).json()
    assert [c["title"] for c in listed] == ["Chat 2", "Chat 1"], "most recently active first, paged"
    assert [c["title"] for c in alice.http.get("/api/conversations", params={"limit": 2, "offset": 2}).json()] == ["Chat 0"]

    served.postgres_conn.execute("select memory.add_turn(%s, 'Hello?', 'Hi!')", [ids[0]])
    one = alice.http.get(f"/api/conversations/{ids[0]}").json()
    assert one["title"] == "Chat 0" and [m["content"] for m in one["messages"]] == ["Hello?", "Hi!"]

    changed = alice.http.put(f"/api/conversations/{ids[0]}", json={"title": "Renamed", "archived": True})
    assert changed.status_code == 200 and changed.json()["title"] == "Renamed" and changed.json()["archived"]
    assert [c["title"] for c in alice.http.get("/api/conversations", params={"archived": True}).json()] == ["Renamed"]

    assert alice.http.delete(f"/api/conversations/{ids[1]}").status_code == 204
    assert alice.http.get(f"/api/conversations/{ids[1]}").status_code == 404
    assert _count(served, "select count(*) from memory.conversations where id = %s", ids[1]) == 0


def test_conversations_are_searched_by_title_then_by_their_turns(served: Served) -> None:
    dana, stranger = served.person(), served.person()
    trip = dana.http.post("/api/conversations", json={"title": "Lisbon trip"}).json()["id"]
    shoes = dana.http.post("/api/conversations", json={"title": "Shoes"}).json()["id"]
    dana.http.post("/api/conversations", json={"title": "Baking"})
    served.postgres_conn.execute("select memory.add_turn(%s, 'Running shoes for Lisbon hills?', 'Trail shoes.')", [shoes])
    stranger.http.post("/api/conversations", json={"title": "Lisbon for me"})
    found = dana.http.get("/api/conversations", params={"search": "lisbon"})
    assert found.status_code == 200 and [c["id"] for c in found.json()] == [trip, shoes]
    assert [c["id"] for c in dana.http.get("/api/conversations", params={"search": "lisbon", "offset": 1}).json()] == [shoes]
    assert dana.http.get("/api/conversations", params={"search": "sourdough"}).json() == []
    blank = dana.http.get("/api/conversations", params={"search": "   "})
    assert blank.status_code == 422 and "query must be 1..1000 characters" in blank.text


def test_messages_are_paged_newest_first(served: Served) -> None:
    bob = served.person()
    conversation = bob.http.post("/api/conversations", json={}).json()["id"]
    for i in range(1, 4):
        served.postgres_conn.execute("select memory.add_turn(%s, %s, %s)", [conversation, f"q{i}", f"a{i}"])
    page = bob.http.get(f"/api/conversations/{conversation}/messages", params={"limit": 2}).json()
    assert [m["content"] for m in page] == ["a3", "q3"]
    page = bob.http.get(f"/api/conversations/{conversation}/messages", params={"limit": 2, "offset": 2}).json()
    assert [m["content"] for m in page] == ["a2", "q2"]


def test_an_offset_past_what_a_page_may_skip_is_422_not_an_error(served: Served) -> None:
    carol = served.person()
    conversation = carol.http.post("/api/conversations", json={}).json()["id"]
    for route in (f"/api/conversations/{conversation}/messages", "/api/memories", "/api/conversations"):
        assert carol.http.get(route, params={"offset": 2**40}).status_code == 422, route
        assert carol.http.get(route, params={"offset": 100_000}).status_code == 200, route


def test_current_gets_or_creates_the_active_conversation(served: Served) -> None:
    carol = served.person()
    first = carol.http.get("/api/conversations/current").json()
    assert carol.http.get("/api/conversations/current").json()["id"] == first["id"]


def test_another_users_conversation_is_not_found_and_untouched(served: Served) -> None:
    owner, stranger = served.person(), served.person()
    conversation = owner.http.post("/api/conversations", json={"title": "Private"}).json()["id"]
    served.postgres_conn.execute("select memory.add_turn(%s, 'secret question', 'secret answer')", [conversation])
    missing = stranger.http.get("/api/conversations/00000000-0000-4000-8000-000000000000")
    for response in (
        stranger.http.get(f"/api/conversations/{conversation}"),
        stranger.http.get(f"/api/conversations/{conversation}/messages"),
        stranger.http.put(f"/api/conversations/{conversation}", json={"title": "Mine now"}),
        stranger.http.delete(f"/api/conversations/{conversation}"),
    ):
        assert response.status_code == 404, response.text
        assert response.json() == missing.json(), "the same answer as for a conversation that never existed"
    assert stranger.http.get("/api/conversations").json() == []
    row = served.postgres_conn.execute("select title from memory.conversations where id = %s", [conversation]).fetchone()
    assert row == ("Private",)
    assert _count(served, "select count(*) from memory.messages where conversation_id = %s", conversation) == 2


def test_bad_bodies_are_422_and_change_nothing(served: Served) -> None:
    dana = served.person()
    conversation = dana.http.post("/api/conversations", json={"title": "Kept"}).json()["id"]
    too_long = dana.http.put(f"/api/conversations/{conversation}", json={"title": "t" * 501})
    assert too_long.status_code == 422 and too_long.json()["sqlstate"] == "22023"
    assert "title must be at most 500 characters" in too_long.text
    assert dana.http.post("/api/conversations", json={"mode": "bogus"}).status_code == 422
    assert dana.http.get("/api/conversations", params={"limit": 0}).status_code == 422
    assert dana.http.get("/api/conversations/not-a-uuid").status_code == 422
    unknown = dana.http.put(f"/api/conversations/{conversation}", json={"title": "Gone", "archive": True})
    assert unknown.status_code == 422, "a field the route does not know is refused, not ignored"
    assert dana.http.get(f"/api/conversations/{conversation}").json()["title"] == "Kept"
    assert _count(served, "select count(*) from memory.conversations where user_id = %s", dana.id) == 1
    # Seed 002's column name is taken as well.
    assert dana.http.put(f"/api/conversations/{conversation}", json={"is_archived": True}).json()["archived"] is True


def test_a_conversation_names_the_memories_its_answers_used(served: Served) -> None:
    """Seed 004's chips, read back: the memories an answer used, while they are the reader's and
    not deleted (another person's is not named to them)."""
    alice, bob = served.person(), served.person()
    bob.http.get("/api/profiles")
    alice.http.post("/api/profiles", json={"name": "Me", "primary": True})
    goal = alice.http.post("/api/memories", json={"content": "Training for a marathon", "type": "goal"}).json()
    fact = alice.http.post("/api/memories", json={"content": "Lives in Porto", "type": "fact"}).json()
    ids = [goal["memory"]["id"], fact["memory"]["id"]]
    conversation = alice.http.post("/api/conversations", json={"title": "Running", "mode": "together"}).json()["id"]
    served.postgres_conn.execute("select memory.add_turn(%s, 'Plan my week', 'Four runs', p_used_memory_ids => %s::uuid[])",
                                 [conversation, ids[::-1]])

    read = alice.http.get(f"/api/conversations/{conversation}").json()
    assert read["messages"][1]["used_memory_ids"] == ids[::-1]
    assert [(m["id"], m["number"], m["type"], m["content"]) for m in read["used_memories"]] == [
        (ids[1], 2, "fact", "Lives in Porto"), (ids[0], 1, "goal", "Training for a marathon")]
    assert alice.http.delete(f"/api/memories/{ids[1]}").status_code in (200, 204)
    assert [m["id"] for m in alice.http.get(f"/api/conversations/{conversation}").json()["used_memories"]] == [ids[0]]
    assert alice.http.post(f"/api/conversations/{conversation}/participants", json={"user_id": str(bob.id)}).status_code == 201
    shared = bob.http.get(f"/api/conversations/{conversation}").json()
    assert (len(shared["messages"]), shared["used_memories"]) == (2, []), "a participant reads the turn, not her memories"

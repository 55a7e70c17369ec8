"""Seed 002's memory routes and seed 004's controls over HTTP."""

from __future__ import annotations

import csv
import io

from job_helpers import running_worker
from server_helpers import Person, Served, serve

from supamem.memories import MEMORY_COLUMNS


def _main_profile(person: Person) -> str:
    made = person.http.post("/api/profiles", json={"name": "Me", "primary": True})
    assert made.status_code == 201, made.text
    return made.json()["id"]


def test_memories_are_created_listed_searched_updated_deleted_and_restored(served: Served) -> None:
    alice = served.person()
    profile = _main_profile(alice)
    goal = alice.http.post("/api/memories", json={"content": "Wants to run a marathon", "type": "goal"})
    assert goal.status_code == 201 and goal.json()["outcome"] == "added" and goal.json()["memory"]["profile_id"] == profile
    alice.http.post("/api/memories", json={"content": "Prefers tea over coffee", "type": "preference"})
    again = alice.http.post("/api/memories", json={"content": "Wants to run a marathon", "type": "goal"})
    assert again.json()["outcome"] == "duplicate"

    assert {m["type"] for m in alice.http.get("/api/memories").json()} == {"goal", "preference"}
    assert [m["content"] for m in alice.http.get("/api/memories", params={"type": "goal"}).json()] == ["Wants to run a marathon"]
    found = alice.http.get("/api/memories", params={"search": "marathon"}).json()
    assert [m["content"] for m in found] == ["Wants to run a marathon"]

    memory_id = goal.json()["memory"]["id"]
    revised = alice.http.put(f"/api/memories/{memory_id}", json={"content": "Wants to run two marathons"}).json()
    assert revised["content"] == "Wants to run two marathons" and revised["id"] != memory_id, "a new version supersedes"
    pinned = alice.http.put(f"/api/memories/{revised['id']}", json={"pinned": True}).json()
    assert pinned["pinned"] and pinned["id"] == revised["id"]

    deleted = alice.http.delete(f"/api/memories/{revised['id']}").json()
    assert deleted["deleted_at"] is not None
    assert "Wants to run two marathons" not in {m["content"] for m in alice.http.get("/api/memories").json()}
    restored = alice.http.post(f"/api/memories/{revised['id']}/restore").json()
    assert restored["deleted_at"] is None

    # Undo (the "This was saved" toast): an update gives way to the version it replaced.
    moved = alice.http.put(f"/api/memories/{revised['id']}", json={"content": "Wants to run an ultra"}).json()
    standing = alice.http.post(f"/api/memories/{moved['id']}/undo")
    assert standing.status_code == 200 and standing.json()["id"] == revised["id"], standing.text
    assert standing.json()["active"] is True
    goals = [m["content"] for m in alice.http.get("/api/memories", params={"type": "goal"}).json()]
    assert goals == ["Wants to run two marathons"]
    tea = [m for m in alice.http.get("/api/memories").json() if m["type"] == "preference"][0]
    undone = alice.http.post(f"/api/memories/{tea['id']}/undo").json()
    assert undone["id"] == tea["id"] and undone["deleted_at"] is not None, "a memory that replaced none is removed"


def test_controls_overview_clear_all_and_export(served: Served) -> None:
    bob = served.person()
    _main_profile(bob)
    for content, kind in (("Lives in Lisbon", "fact"), ("Learning the cello", "project"), ("Wants a dog", "goal")):
        bob.http.post("/api/memories", json={"content": content, "type": kind})
    overview = bob.http.get("/api/memories/overview").json()
    assert overview["live"] == 3 and overview["by_type"] == {"fact": 1, "goal": 1, "project": 1}
    assert overview["memory_paused"] is False and overview["primary_profile_id"] is not None
    stored = served.postgres_conn.execute(
        "select sum(pg_column_size(m.*)) from memory.memories as m where m.user_id = %s", [bob.id]).fetchone()
    assert overview["storage_bytes"] == stored[0] > 0

    settings = bob.http.put("/api/memory-settings", json={"memory_paused": True}).json()
    assert settings == {"memory_paused": True, "long_term_opt_in": False}
    assert bob.http.put("/api/memory-settings", json={"long_term_opt_in": True}).json() == {
        "memory_paused": True, "long_term_opt_in": True}

    exported = bob.http.get("/api/memories/export").json()
    assert sorted(m["content"] for m in exported["memories"]) == ["Learning the cello", "Lives in Lisbon", "Wants a dog"]
    as_csv = bob.http.get("/api/memories/export", params={"format": "csv"})
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert as_csv.headers["content-disposition"] == 'attachment; filename="memories.csv"'
    assert sorted(r["content"] for r in csv.DictReader(io.StringIO(as_csv.text))) == [
        "Learning the cello", "Lives in Lisbon", "Wants a dog"]

    assert bob.http.post("/api/memories/clear").json() == {"cleared": 3}
    assert bob.http.get("/api/memories").json() == []
    assert bob.http.get("/api/memories/overview").json()["deleted"] == 3


def test_the_csv_export_is_the_clis_and_quotes_a_formula(served: Served) -> None:
    """The download is `supamem export --format csv`'s document (memory.memories' columns in table
    order), and a text a spreadsheet would run is written behind an apostrophe."""
    carla = served.person()
    carla.http.post("/api/memories", json={"content": "=HYPERLINK(\"http://example.com\")", "type": "fact"})
    carla.http.post("/api/memories", json={"content": "Keeps bees", "type": "fact", "category": "-hobby"})
    reader = csv.DictReader(io.StringIO(carla.http.get("/api/memories/export", params={"format": "csv"}).text,
                                        newline=""))
    assert reader.fieldnames == list(MEMORY_COLUMNS)
    assert sorted((r["content"], r["category"]) for r in reader) == [
        ("'=HYPERLINK(\"http://example.com\")", ""), ("Keeps bees", "'-hobby")]


def test_another_users_memory_is_not_found_and_untouched(served: Served) -> None:
    owner, stranger = served.person(), served.person()
    _main_profile(owner)
    memory_id = owner.http.post("/api/memories", json={"content": "Private fact", "type": "fact"}).json()["memory"]["id"]
    served.postgres_conn.execute("update memory.memories set archived = true where id = %s", [memory_id])
    for response in (
        stranger.http.post(f"/api/memories/{memory_id}/unarchive"),
        stranger.http.put(f"/api/memories/{memory_id}", json={"content": "Overwritten"}),
        stranger.http.put(f"/api/memories/{memory_id}", json={"pinned": True}),
        stranger.http.delete(f"/api/memories/{memory_id}"),
        stranger.http.post(f"/api/memories/{memory_id}/restore"),
        stranger.http.post(f"/api/memories/{memory_id}/undo"),
    ):
        assert response.status_code == 404, response.text
        assert response.json() == {"detail": "not found"}
    assert stranger.http.get("/api/memories", params={"search": "Private"}).json() == []
    assert stranger.http.get("/api/memories/export").json()["memories"] == []
    row = served.postgres_conn.execute(
        "select content, pinned, deleted_at, archived from memory.memories where id = %s", [memory_id]).fetchone()
    assert row == ("Private fact", False, None, True)
    back = owner.http.post(f"/api/memories/{memory_id}/unarchive")
    assert back.status_code == 200 and back.json()["archived"] is False, "the owner brings it back"


def test_bad_memory_bodies_are_422_and_change_nothing(served: Served) -> None:
    carol = served.person()
    _main_profile(carol)
    gossip = carol.http.post("/api/memories", json={"content": "x", "type": "gossip"})
    assert gossip.status_code == 422 and "unknown memory type 'gossip'" in gossip.text, "the database names it"
    empty = carol.http.post("/api/memories", json={"content": "   ", "type": "fact"})
    assert empty.status_code == 422 and "sqlstate" in empty.json()
    assert carol.http.post("/api/memories", json={"content": "ok", "type": "fact", "confidence": 7}).status_code == 422
    assert carol.http.get("/api/memories", params={"status": "everything"}).status_code == 422
    assert carol.http.get("/api/memories/overview").json()["live"] == 0
    kept = carol.http.post("/api/memories", json={"content": "Kept as is", "type": "fact"}).json()["memory"]["id"]
    unknown = carol.http.put(f"/api/memories/{kept}", json={"content": "Changed", "pin": True})
    assert unknown.status_code == 422, "a field the route does not know is refused, not ignored"
    assert [m["content"] for m in carol.http.get("/api/memories").json()] == ["Kept as is"]
    # Seed 002's column names are taken as well.
    pinned = carol.http.put(f"/api/memories/{kept}", json={"is_pinned": True}).json()
    assert (pinned["id"], pinned["pinned"]) == (kept, True)
    typed = carol.http.put(f"/api/memories/{kept}", json={"memory_type": "goal"}).json()
    assert (typed["type"], typed["content"]) == ("goal", "Kept as is")


def test_a_memory_type_the_team_added_is_taken(served: Served) -> None:
    """Memory types are rows of memory.memory_types, which a team may extend: the API takes what
    the database knows, not a list of its own."""
    dora = served.person()
    _main_profile(dora)
    served.postgres_conn.execute("insert into memory.memory_types (type, weight, description)"
                                 " values ('habit', 1.1, 'Something done regularly.')")
    try:
        made = dora.http.post("/api/memories", json={"content": "Walks the dog at seven", "type": "habit"})
        assert made.status_code == 201, made.text
        assert [m["type"] for m in dora.http.get("/api/memories", params={"type": "habit"}).json()] == ["habit"]
    finally:
        served.postgres_conn.execute("delete from memory.memories where type = 'habit'")
        served.postgres_conn.execute("delete from memory.memory_types where type = 'habit'")


def test_extract_queues_the_turns_and_waits_for_their_memories(served: Served, database_url: str) -> None:
    dana = served.person()
    profile = _main_profile(dana)
    conversation = dana.http.post("/api/conversations", json={"mode": "profile", "profile_id": profile}).json()["id"]
    # A turn written while "Remember in this chat" was off queued nothing; extract queues it later.
    assert dana.http.put(f"/api/conversations/{conversation}", json={"remember": False}).json()["remember"] is False
    served.postgres_conn.execute(
        "select memory.add_turn(%s, 'I live in Porto', 'Nice.', p_author_id => %s)", [conversation, dana.id])
    assert dana.http.put(f"/api/conversations/{conversation}", json={"remember": True}).json()["remember"] is True
    assert dana.http.post("/api/memories/extract", json={"conversation_id": conversation}).json() == {
        "queued": 1, "pending": 1, "memories": []}
    assert dana.http.post("/api/memories/extract", json={"conversation_id": conversation}).json()["queued"] == 0
    stranger = served.person()
    assert stranger.http.post("/api/memories/extract", json={"conversation_id": conversation}).status_code == 404
    too_long = {"conversation_id": conversation, "wait_seconds": 31}
    assert dana.http.post("/api/memories/extract", json=too_long).status_code == 422

    # Waiting for the worker, the answer holds the memories the turn gave, and nothing waits.
    with running_worker(database_url, [dana.id]):
        done = dana.http.post("/api/memories/extract", json={"conversation_id": conversation, "wait_seconds": 30},
                              timeout=60).json()
    assert done["queued"] == 0 and done["pending"] == 0
    assert done["memories"] and {m["source_conversation_id"] for m in done["memories"]} == {conversation}
    assert any("Porto" in m["content"] for m in done["memories"])


def test_an_export_imports_back_once(served: Served) -> None:
    erin = served.person()
    _main_profile(erin)
    erin.http.post("/api/memories", json={"content": "Grew up in Oslo", "type": "fact"})
    exported = erin.http.get("/api/memories/export").json()
    served.postgres_conn.execute("delete from memory.memories where user_id = %s", [erin.id])  # lost, say
    assert erin.http.post("/api/memories/import", json=exported).json() == {"imported": 1}
    assert erin.http.post("/api/memories/import", json=exported).json() == {"imported": 0}, "idempotent"
    assert [m["content"] for m in erin.http.get("/api/memories").json()] == ["Grew up in Oslo"]
    assert erin.http.post("/api/memories/import", json={"format": "something else"}).status_code == 422


def test_backfill_queues_a_month_of_the_users_own_profile(served: Served) -> None:
    fay, stranger = served.person(), served.person()
    profile = _main_profile(fay)
    queued = fay.http.post("/api/summaries/backfill", params={"profile_id": profile, "year": 2015, "month": 3})
    assert queued.status_code == 200 and queued.json()["queued"] >= 5
    jobs = served.postgres_conn.execute(
        "select count(*) from memory_private.jobs where user_id = %s and kind in ('summarize_week', 'summarize_month')",
        [fay.id]).fetchone()
    assert jobs == (queued.json()["queued"],)
    assert stranger.http.post("/api/summaries/backfill",
                              params={"profile_id": profile, "year": 2015, "month": 3}).status_code == 404
    assert fay.http.post("/api/summaries/backfill", params={"profile_id": profile, "year": 2015, "month": 13}).status_code == 422


def test_an_edit_to_empty_text_is_422_and_makes_no_version(served: Served) -> None:
    """An empty content is not a missing one: it took the old text, and a new version of the memory
    superseded it for nothing."""
    dora = served.person()
    memory = dora.http.post("/api/memories", json={"content": "Keeps bees", "type": "fact"}).json()["memory"]
    refused = dora.http.put(f"/api/memories/{memory['id']}", json={"content": ""})
    assert refused.status_code == 422, refused.text
    rows = served.postgres_conn.execute(
        "select content, superseded_by from memory.memories where user_id = %s", [dora.id]).fetchall()
    assert rows == [("Keeps bees", None)]


def test_an_import_takes_the_csv_download_and_refuses_what_is_not_an_export(served: Served) -> None:
    ana, ben = served.person(), served.person()
    _main_profile(ana)
    ana.http.post("/api/memories", json={"content": "Keeps bees", "type": "fact"})
    csv_text = ana.http.get("/api/memories/export", params={"format": "csv"}).text
    put_back = ben.http.post("/api/memories/import", content=csv_text.encode(), headers={"Content-Type": "text/csv"})
    assert put_back.status_code == 200 and put_back.json() == {"imported": 1}, put_back.text
    assert [m["content"] for m in ben.http.get("/api/memories").json()] == ["Keeps bees"]
    for body, kind in ((b"id,content\nnot-a-uuid,x\n", "text/csv"), (b"id,content\nabc\n", "text/csv"),
                       (b"\xff\xfe", "text/csv"), (b"[1, 2]", "application/json"),
                       (b"{not json", "application/json")):
        refused = ben.http.post("/api/memories/import", content=body, headers={"Content-Type": kind})
        assert refused.status_code == 422 and "not a supamem export" in refused.json()["detail"], refused.text
    assert len(ben.http.get("/api/memories").json()) == 1, "a refused import changes nothing"


def test_extract_answers_at_once_when_no_place_to_wait_is_free(database_url: str, postgres_conn) -> None:
    """Each waiting request holds one of the threads every synchronous route shares: with no place
    free (extraction_waiters 0) a request asking to wait 30 s answers at once with what is pending."""
    for served in serve(database_url, postgres_conn, extraction_waiters=0):
        eve = served.person()
        profile = _main_profile(eve)
        conversation = eve.http.post("/api/conversations", json={"mode": "profile", "profile_id": profile}).json()["id"]
        served.postgres_conn.execute("select memory.add_turn(%s, 'I live in Braga', 'Nice.', p_author_id => %s)",
                                     [conversation, eve.id])
        # The client gives up long before the 30 s a wait would take.
        answer = eve.http.post("/api/memories/extract", json={"conversation_id": conversation, "wait_seconds": 30},
                               timeout=10)
        assert answer.status_code == 200 and answer.json()["pending"] == 1

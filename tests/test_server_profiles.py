"""Seed 004's profiles over HTTP: the user moves "My Main Profile" to another of their profiles;
memories made before keep their profile, new ones go to the new primary."""

from __future__ import annotations

from server_helpers import Served


def test_the_primary_profile_moves_and_memories_made_before_keep_theirs(served: Served) -> None:
    alice, stranger = served.person(), served.person()
    main = alice.http.post("/api/profiles", json={"name": "Home", "primary": True}).json()["id"]
    work = alice.http.post("/api/profiles", json={"name": "Work"}).json()["id"]
    before = alice.http.post("/api/memories", json={"content": "Grows tomatoes", "type": "fact"}).json()["memory"]
    assert before["profile_id"] == main

    assert stranger.http.post(f"/api/profiles/{work}/primary").status_code == 404
    assert [p["id"] for p in alice.http.get("/api/profiles").json() if p["is_primary"]] == [main], "a stranger changes nothing"

    moved = alice.http.post(f"/api/profiles/{work}/primary")
    assert moved.status_code == 200 and moved.json()["is_primary"] is True, moved.text
    profiles = alice.http.get("/api/profiles").json()
    assert [(p["id"], p["is_primary"]) for p in profiles] == [(work, True), (main, False)], "one primary, listed first"
    after = alice.http.post("/api/memories", json={"content": "Leads the data team", "type": "fact"}).json()["memory"]
    assert after["profile_id"] == work
    assert alice.http.get(f"/api/memories/{before['id']}").json()["profile_id"] == main

"""Seed 004's together mode over HTTP: the owner adds a participant, who chats in the shared
conversation as themselves (their questions are theirs, their memory stays theirs), chooses their
own profile, and leaves; nobody else can add, change or read."""

from __future__ import annotations

from server_helpers import Served


def test_a_participant_chats_in_the_shared_conversation_as_themselves(served: Served) -> None:
    owner, guest, stranger = served.person(), served.person(), served.person()
    for person in (guest, stranger):
        person.http.get("/api/profiles")  # their first request makes their kit user
    shared = owner.http.post("/api/conversations", json={"title": "Trip planning", "mode": "together"}).json()["id"]

    assert stranger.http.post(f"/api/conversations/{shared}/participants", json={"user_id": str(stranger.id)}).status_code == 404
    added = owner.http.post(f"/api/conversations/{shared}/participants", json={"user_id": str(guest.id)})
    assert added.status_code == 201, added.text
    assert [p["user_id"] for p in guest.http.get(f"/api/conversations/{shared}/participants").json()] == [str(guest.id)]
    assert stranger.http.get(f"/api/conversations/{shared}/participants").status_code == 404
    invited = guest.http.post(f"/api/conversations/{shared}/participants", json={"user_id": str(stranger.id)})
    assert invited.status_code == 403, "only the owner adds people"

    owner.http.post("/chat", json={"message": "Where should we go?", "conversation_id": shared})
    said = guest.http.post("/chat", json={"message": "I vote for Porto", "conversation_id": shared})
    assert said.status_code == 200, said.text
    assert said.json()["conversation_id"] == shared, "the guest continued the shared conversation"
    rows = served.postgres_conn.execute(
        "select turn_number, role, author_id from memory.messages where conversation_id = %s order by turn_number, role desc",
        [shared]).fetchall()
    assert [(r[0], r[1]) for r in rows] == [(1, "user"), (1, "assistant"), (2, "user"), (2, "assistant")]
    assert rows[2][2] == guest.id, "the guest's question is stored as theirs"
    seen = owner.http.get(f"/api/conversations/{shared}/messages").json()
    assert "I vote for Porto" in [m["content"] for m in seen], "the owner reads the guest's turn"

    elsewhere = stranger.http.post("/chat", json={"message": "Let me in", "conversation_id": shared}).json()
    assert elsewhere["conversation_id"] != shared, "someone who does not take part starts their own session"

    profile = guest.http.post("/api/profiles", json={"name": "Me", "primary": True}).json()["id"]
    chosen = guest.http.put(f"/api/conversations/{shared}/participants/me", json={"profile_id": profile})
    assert chosen.status_code == 200
    (stored,) = served.postgres_conn.execute(
        "select profile_id from memory.participants where conversation_id = %s and user_id = %s", [shared, guest.id]
    ).fetchone()
    assert str(stored) == profile, "the guest's own profile: their words feed their memory"
    assert stranger.http.put(f"/api/conversations/{shared}/participants/me", json={"profile_id": None}).status_code == 404
    owner.http.post("/api/profiles", json={"name": "Owner", "primary": True})
    owner.http.post("/api/memories", json={"content": "Owns a sailing boat", "type": "fact"})
    guest.http.post("/api/memories", json={"content": "Plays the violin", "type": "fact"})
    answered = guest.http.post("/chat", json={"message": "What should I practise?", "conversation_id": shared}).json()
    assert [m["content"] for m in answered["used_memories"]] == ["Plays the violin"], \
        "the guest's prompt holds their own memories, never the owner's"

    assert stranger.http.delete(f"/api/conversations/{shared}/participants/{guest.id}").status_code == 404
    assert guest.http.delete(f"/api/conversations/{shared}/participants/{guest.id}").status_code == 204
    after = guest.http.post("/chat", json={"message": "Still there?", "conversation_id": shared}).json()
    assert after["conversation_id"] != shared, "once they left, the conversation is not theirs to continue"


def test_a_participant_sending_a_turn_again_gets_it_back(served: Served) -> None:
    """A participant's request sent again with its client_turn_id gets their stored turn back, as the
    owner's does; the owner reusing that id in their conversation is refused, the turn not theirs."""
    owner, guest = served.person(), served.person()
    guest.http.get("/api/profiles")
    shared = owner.http.post("/api/conversations", json={"title": "Trip planning", "mode": "together"}).json()["id"]
    owner.http.post(f"/api/conversations/{shared}/participants", json={"user_id": str(guest.id)})
    body = {"message": "I vote for Porto", "conversation_id": shared, "client_turn_id": "vote-1"}

    first = guest.http.post("/chat", json=body)
    again = guest.http.post("/chat", json=body)
    assert again.status_code == 200, again.text
    assert (again.json()["replayed"], again.json()["response"], again.json()["conversation_id"]) == (
        True, first.json()["response"], shared)
    (turns,) = served.postgres_conn.execute(
        "select count(*) from memory.messages where conversation_id = %s and role = 'user'", [shared]).fetchone()
    assert turns == 1, "the turn is stored once"
    assert owner.http.post("/chat", json=body).status_code == 409

"""Seed 002's ConversationService on the real database: every method, for an external user
(served as the service role) and a Supabase Auth user (served through RLS), and another user's
conversation never reached."""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID, uuid4

import pytest

from supamem import ConversationService, MessageCreate
from supamem.errors import InvalidInputError, NotFoundError


@pytest.fixture
def conversations(client_db) -> ConversationService:
    return ConversationService(client_db)


@pytest.fixture(params=["external", "auth"])
def someone(request: pytest.FixtureRequest, make_id: Callable[[str], str], make_auth_user) -> str | UUID:
    """An app's user id: an external id, or a Supabase Auth user's id."""
    return make_id("conversations") if request.param == "external" else make_auth_user()


def test_create_get_list_update_and_delete(conversations: ConversationService, someone: str | UUID) -> None:
    first = conversations.create_conversation(someone, "Trip to Lisbon")
    second = conversations.create_conversation(someone)
    assert (first.title, first.mode, second.title) == ("Trip to Lisbon", "chat", None)
    assert conversations.get_conversation(str(first.id), someone) == first

    conversations.add_message(first.id, {"role": "user", "content": "Where should we eat?"})
    assert [c.id for c in conversations.list_conversations(someone)] == [first.id, second.id], "most recently active first"
    assert [c.id for c in conversations.list_conversations(someone, limit=1, offset=1)] == [second.id]

    renamed = conversations.update_conversation(first.id, someone, {"title": "Lisbon", "archived": True})
    assert (renamed.title, renamed.archived) == ("Lisbon", True)
    assert [c.id for c in conversations.list_conversations(someone)] == [second.id]
    assert [c.id for c in conversations.list_conversations(someone, archived=True)] == [first.id]
    assert conversations.update_conversation(first.id, someone, {}) == renamed
    with pytest.raises(InvalidInputError, match="cannot update user_id"):
        conversations.update_conversation(first.id, someone, {"user_id": str(uuid4())})

    assert conversations.delete_conversation(first.id, someone) is True
    assert conversations.delete_conversation(first.id, someone) is False
    with pytest.raises(NotFoundError):
        conversations.get_conversation(first.id, someone)
    assert conversations.get_messages(first.id) == []


def test_messages_are_numbered_by_turn_and_paged_newest_first(conversations: ConversationService, someone: str | UUID) -> None:
    c = conversations.create_conversation(someone, "Turns")
    question = conversations.add_message(c.id, MessageCreate(role="user", content="What is fado?"))
    answer = conversations.add_message(c.id, {"role": "assistant", "content": "A Portuguese song.",
                                              "metadata": {"model": "m"}})
    follow = conversations.add_message(c.id, {"role": "user", "content": "Where can I hear it?"})
    assert [(m.turn_number, m.role) for m in (question, answer, follow)] == [(1, "user"), (1, "assistant"), (2, "user")]
    assert answer.metadata == {"model": "m"}
    assert [m.id for m in conversations.get_messages(c.id)] == [follow.id, answer.id, question.id]
    assert [m.id for m in conversations.get_messages(c.id, limit=2, offset=1)] == [answer.id, question.id]
    with pytest.raises(InvalidInputError):
        conversations.add_message(c.id, {"role": "user", "content": "   "})
    with pytest.raises(InvalidInputError, match="role"):
        conversations.add_message(c.id, {"role": "system", "content": "Not a seed 002 role"})
    assert len(conversations.get_messages(c.id)) == 3, "a refused message stores nothing"


def test_another_users_conversation_is_never_reached(
    conversations: ConversationService, make_id: Callable[[str], str], make_auth_user,
) -> None:
    owner, stranger, auth_stranger = make_id("owner"), make_id("stranger"), make_auth_user()
    theirs = conversations.create_conversation(owner, "Private")
    conversations.create_conversation(stranger, "Mine")
    for other in (stranger, auth_stranger):
        with pytest.raises(NotFoundError):
            conversations.get_conversation(theirs.id, other)
        with pytest.raises(NotFoundError):
            conversations.update_conversation(theirs.id, other, {"title": "Taken"})
        assert conversations.delete_conversation(theirs.id, other) is False
        assert theirs.id not in [c.id for c in conversations.list_conversations(other)]
    assert conversations.get_conversation(theirs.id, owner).title == "Private"
    assert conversations.list_conversations(make_id("nobody")) == [], "a read creates no user"
    with pytest.raises(InvalidInputError, match="not a conversation id"):
        conversations.get_conversation("not-a-uuid", owner)

"""Seed 002's `ConversationService` over the SQL API: permanent conversations and their messages.

Each method is one RPC or one RLS-bound statement (`memory.create_conversation`,
`list_conversations`, `update_conversation`, `delete_conversation`, `add_message`, `history`); turn numbers, the
conversation's activity time, retention and extraction are the database's. Who acts for
`user_id` is `supamem.acting`'s rule: a Supabase Auth user as themselves under RLS, anyone else
as service_role for that user, so another user's conversation is not found either way.
`add_message` and `get_messages` name no user (seed 002's signatures): they act as the service
role, for the conversation's owner.

    conversations = ConversationService(Database())
    c = conversations.create_conversation("user123", "Trip to Lisbon")
    conversations.add_message(c.id, {"role": "user", "content": "Where should we eat?"})
    conversations.get_messages(c.id, limit=20, offset=0)    # newest first
"""

from __future__ import annotations

import json
from typing import Any, Literal
from uuid import UUID

from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .acting import Acting
from .errors import InvalidInputError, NotFoundError
from .identity import TenantKey, as_uuid
from .models import Conversation, Message


class MessageCreate(BaseModel):
    """Seed 002's new message."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    tool_calls: list[Any] | None = None
    suggested_values: Any = None
    suggested_actions: Any = None
    custom_payload: Any = None
    used_memory_ids: list[UUID] = Field(default_factory=list)


class ConversationService(Acting):
    """Seed 002's conversation service on one `Database` (which acts as service_role)."""

    def create_conversation(
        self,
        user_id: str | UUID,
        title: str | None = None,
        *,
        tenant_id: TenantKey = None,
        mode: str = "chat",
        profile_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Conversation:
        def write() -> Conversation:
            owner = self._owner(user_id, tenant_id)
            with self._transaction(owner) as tx:
                row = tx.call_one("create_conversation", user_id=owner.id, title=title, mode=mode,
                                  profile_id=profile_id, metadata=metadata or {})
            return Conversation.model_validate(row)

        return self._run(user_id, write)

    def get_conversation(self, conversation_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> Conversation:
        """The user's conversation; NotFoundError when it is not theirs (or does not exist)."""
        owner = self._owner(user_id, tenant_id, create=False)
        with self._transaction(owner) as tx:
            rows = tx.execute("select * from memory.conversations where id = %s and user_id = %s",
                              [_uuid(conversation_id), owner.id])
        if not rows:
            raise NotFoundError("conversation not found", sqlstate="P0002")
        return Conversation.model_validate(rows[0])

    def list_conversations(
        self, user_id: str | UUID, limit: int = 20, offset: int = 0, *, tenant_id: TenantKey = None,
        archived: bool | None = False,
    ) -> list[Conversation]:
        """Most recently active first; `archived`: False live ones, True archived ones, None both."""
        owner = self._find_owner(user_id, tenant_id)
        if owner is None:
            return []
        with self._transaction(owner) as tx:
            rows = tx.call("list_conversations", user_id=owner.id, archived=archived, limit=limit, offset=offset)
        return [Conversation.model_validate(r) for r in rows]

    def update_conversation(
        self, conversation_id: UUID | str, user_id: str | UUID, updates: dict[str, Any], *, tenant_id: TenantKey = None,
    ) -> Conversation:
        """Change the title, archive it, toggle "remember", select a profile, the mode, metadata."""
        if not updates:
            return self.get_conversation(conversation_id, user_id, tenant_id=tenant_id)
        owner = self._owner(user_id, tenant_id, create=False)
        with self._transaction(owner) as tx:
            row = tx.call_one("update_conversation", conversation_id=_uuid(conversation_id), changes=changes(updates),
                              user_id=owner.id)
        return Conversation.model_validate(row)

    def delete_conversation(self, conversation_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> bool:
        """Delete it with its messages; False when the user has no such conversation."""
        owner = self._find_owner(user_id, tenant_id)
        if owner is None:
            return False
        try:
            with self._transaction(owner) as tx:
                tx.call("delete_conversation", conversation_id=_uuid(conversation_id), user_id=owner.id)
        except NotFoundError:
            return False
        return True

    def add_message(self, conversation_id: UUID | str, message: MessageCreate | dict[str, Any]) -> Message:
        """Append one message; the database numbers its turn (an answer joins its question's)."""
        try:
            new = message if isinstance(message, MessageCreate) else MessageCreate.model_validate(message)
        except ValidationError as exc:
            raise InvalidInputError(f"invalid message: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
        row = self.db.call_one("add_message", conversation_id=_uuid(conversation_id), **new.model_dump())
        return Message.model_validate(row)

    def get_messages(self, conversation_id: UUID | str, limit: int = 50, offset: int = 0) -> list[Message]:
        """A page of the conversation's messages, newest first (as `GET .../messages`)."""
        rows = self.db.call("history", conversation_id=_uuid(conversation_id), limit=limit, offset=offset,
                            newest_first=True)
        return [Message.model_validate(r) for r in rows]


def _uuid(value: UUID | str) -> UUID:
    found = as_uuid(value)
    if found is None:
        raise InvalidInputError(f"{value!r} is not a conversation id (a UUID)")
    return found


def changes(updates: dict[str, Any]) -> Jsonb:
    """A conversation's changes as `memory.update_conversation` takes them (ids as text)."""
    return Jsonb(updates, dumps=lambda value: json.dumps(value, default=str))

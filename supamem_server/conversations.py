"""Seed 002's conversation routes. Each is one kit function or one RLS-bound statement."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Request, Response

from supamem.conversations import changes as conversation_changes

from . import chat_outage
from .deps import Tx, UserId, visible
from .embedding import Search, search_parameter
from .memories import used_memories
from .models import Conversation, ConversationChanges, ConversationWithMessages, Message, NewConversation

router = APIRouter(prefix="/api/conversations", tags=["conversations"])


def _one(tx: Tx, conversation_id: UUID) -> Conversation:
    return Conversation.model_validate(visible(tx, "conversations", conversation_id, "conversation"))


@router.get("", response_model=list[Conversation], summary="List or search the user's conversations (paginated)")
def list_conversations(
    search: Annotated[Search, search_parameter(
        "titles holding it first, then conversations by their best matching turn", min_length=1)],
    tx: Tx,
    limit: int = Query(20, ge=1, le=200),
    offset: int = Query(0, ge=0, le=100_000),
    archived: bool | None = Query(False, description="true: archived only; omit the value (null) for both"),
) -> list[Conversation]:
    if search.text is None:
        rows = tx.call("list_conversations", archived=archived, limit=limit, offset=offset)
    else:
        rows = tx.call("search_conversations", query=search.text, archived=archived, limit=limit, offset=offset,
                       query_embedding=search.vector)
    return [Conversation.model_validate(r) for r in rows]


@router.post("", response_model=Conversation, status_code=201, summary="Create a conversation")
def create_conversation(tx: Tx, body: NewConversation) -> Conversation:
    row = tx.call_one("create_conversation", title=body.title, mode=body.mode, profile_id=body.profile_id,
                      remember=body.remember, metadata=body.metadata)
    return Conversation.model_validate(row)


@router.get("/current", response_model=Conversation, summary="Get or create the current active conversation")
def current_conversation(tx: Tx) -> Conversation:
    return Conversation.model_validate(tx.call_one("current_conversation"))


@router.get("/{conversation_id}", response_model=ConversationWithMessages,
            summary="A conversation with its newest messages (up to `limit`), oldest first")
def get_conversation(tx: Tx, conversation_id: UUID, limit: int = Query(100, ge=1, le=1000)) -> ConversationWithMessages:
    conversation = _one(tx, conversation_id)
    messages = [Message.model_validate(m) for m in tx.call("history", conversation_id=conversation_id, limit=limit)]
    used = list(dict.fromkeys(m for message in messages for m in message.used_memory_ids))
    return ConversationWithMessages(**conversation.model_dump(), messages=messages, used_memories=used_memories(tx, used))


@router.put("/{conversation_id}", response_model=Conversation,
            summary="Change the title, archive it, toggle Remember in this chat, select a profile")
def update_conversation(tx: Tx, conversation_id: UUID, body: ConversationChanges) -> Conversation:
    changes = body.model_dump(exclude_unset=True)
    if not changes:
        return _one(tx, conversation_id)
    return Conversation.model_validate(tx.call_one("update_conversation", conversation_id=conversation_id,
                                                   changes=conversation_changes(changes)))


@router.delete("/{conversation_id}", status_code=204, summary="Delete a conversation and its messages")
def delete_conversation(request: Request, tx: Tx, user: UserId, conversation_id: UUID) -> Response:
    # Its turns held through an outage go too (everyone's), once the delete is allowed, so a
    # write-back never brings it back; a session started during the outage exists only there.
    fallback = request.app.state.supamem.fallback
    held = chat_outage.key(user, conversation_id)
    if tx.execute("select 1 from memory.conversations where id = %s", [conversation_id]):
        tx.call("delete_conversation", conversation_id=conversation_id)  # P0002 when it is not the caller's
        chat_outage.drop_session(fallback, conversation_id)
    elif not fallback.drop_key(held):
        tx.call("delete_conversation", conversation_id=conversation_id)  # P0002: nothing of it anywhere
    return Response(status_code=204)


@router.get("/{conversation_id}/messages", response_model=list[Message],
            summary="A conversation's messages, newest first (paginated)")
def list_messages(
    tx: Tx, conversation_id: UUID, limit: int = Query(50, ge=1, le=1000), offset: int = Query(0, ge=0, le=100_000),
) -> list[Message]:
    _one(tx, conversation_id)
    rows = tx.call("history", conversation_id=conversation_id, limit=limit, offset=offset, newest_first=True)
    return [Message.model_validate(r) for r in rows]

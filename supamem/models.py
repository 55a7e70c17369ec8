"""Typed models at the client boundary (pydantic), one per thing the seeds hand back.

Database rows carry the kit's identities: `user_id` is the `memory.users` id (for a Supabase
Auth user, the auth id), `tenant_id` the `memory.tenants` id. `Turn.user_id` is the exception:
it is the id the app speaks (seed 001's user id, an external id such as "user123"), so a turn
read back says who the caller said it was.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Turn(_Model):
    """A user message and its answer (seeds 000 and 001).

    `id` is the database id of the turn's user message (for a turn that only lives in the
    fallback buffer, its client turn id); `buffered` is True for such turns: they are written to
    the database, and get their final turn number, when it is reachable again.
    An open turn (a question not answered yet) has `response_text == ""`.
    """

    id: str
    session_id: str
    user_id: str
    turn_number: int
    query_text: str
    response_text: str
    created_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    buffered: bool = False

    # Seed 000 names.
    @property
    def user_query(self) -> str:
        return self.query_text

    @property
    def ai_response(self) -> str:
        return self.response_text

    def is_expired(self, hours: int = 24) -> bool:
        """Seed 000's check: older than `hours` (the database already hides expired turns)."""
        return (datetime.now(UTC) - self.created_at).total_seconds() > hours * 3600

    def history_item(self) -> dict[str, Any]:
        """Seed 000's `get_history` item: turn_number, user_query, ai_response, and created_at as
        a datetime (seed 000's data model). The one definition of seed 000's keys."""
        return {
            "turn_number": self.turn_number,
            "user_query": self.query_text,
            "ai_response": self.response_text,
            "created_at": self.created_at,
        }

    def to_dict(self) -> dict[str, Any]:
        """Seed 000's `ConversationTurn.to_dict()`: `history_item()` with created_at as ISO 8601."""
        return {**self.history_item(), "created_at": self.created_at.isoformat()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        """Seed 001's constructor: from a dict with the model's own field names."""
        return cls.model_validate({**data, "metadata": data.get("metadata") or {}})

    @classmethod
    def from_row(cls, row: dict[str, Any], *, user_id: str | None = None) -> Turn:
        """From a `memory.turns` row (or its jsonb form, as in `memory.prompt_context`)."""
        message_id = row.get("user_message_id") or row.get("assistant_message_id")
        return cls(
            id=str(message_id),
            session_id=str(row["conversation_id"]),
            user_id=user_id if user_id is not None else str(row["user_id"]),
            turn_number=row["turn_number"],
            query_text=row.get("user_content") or "",
            response_text=row.get("assistant_content") or "",
            created_at=row["created_at"],
            metadata=row.get("metadata") or {},
        )


class Message(_Model):
    """A row of `memory.messages` (seed 003's ConversationMessage, seed 002's message)."""

    id: int
    conversation_id: UUID
    user_id: UUID
    tenant_id: UUID | None = None
    author_id: UUID | None = None
    role: str
    content: str
    turn_number: int
    tool_calls: list[Any] | None = None
    suggested_values: Any = None
    suggested_actions: Any = None
    custom_payload: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    used_memory_ids: list[UUID] = Field(default_factory=list)
    created_at: datetime
    expires_at: datetime | None = None


class ConversationMessage(Message):
    """Seed 003's message: `user_id` and `tenant_id` are the ids the app passed ("user123", 1)."""

    user_id: str  # type: ignore[assignment]
    tenant_id: int | str | UUID | None = None  # type: ignore[assignment]


class Conversation(_Model):
    """A row of `memory.conversations`: a conversation (seed 002) or session (seed 001)."""

    id: UUID
    user_id: UUID
    tenant_id: UUID | None = None
    profile_id: UUID | None = None
    title: str | None = None
    mode: str = "chat"
    remember: bool = True
    archived: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    ttl: Any = None  # datetime.timedelta, or None for "keep"
    window_turns: int | None = None
    last_turn: int = 0
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None


class UserMemory(_Model):
    """Seed 003's user memory: a JSON object under a key (`memory.user_kv`); `user_id` and
    `tenant_id` are the ids the app passed."""

    id: int
    tenant_id: int | str | UUID | None = None
    user_id: str
    key: str
    value: dict[str, Any]
    updated_at: datetime


class UserState(_Model):
    """Seed 003's user state: one mode per user (`memory.user_state`); `user_id` and `tenant_id`
    are the ids the app passed."""

    tenant_id: int | str | UUID | None = None
    user_id: str
    mode: str
    updated_at: datetime


class CleanupResult(_Model):
    """Seed 001's cleanup report. `sessions_deleted` counts expired conversations."""

    sessions_deleted: int = 0
    turns_deleted: int = 0
    execution_time: float = 0.0
    errors: list[str] = Field(default_factory=list)
    messages_deleted: int = 0
    short_term_deleted: int = 0


class PromptContext(_Model):
    """What a prompt needs for one query, from one call to `memory.prompt_context`.

    `memories` are the long-term memories selected for the prompt (rows of
    `memory.select_memories`; empty unless the conversation's profile is the owner's primary
    one and "remember" is on). `extra` keeps any key a later migration adds to the document.
    `degraded` is True when it was assembled from the fallback buffer.
    """

    conversation_id: str
    query: str | None = None
    history: list[Turn] = Field(default_factory=list)
    referenced_turn: Turn | None = None
    memories: list[dict[str, Any]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    degraded: bool = False

    def format_history(self) -> str:
        """The history in seed 000's prompt format."""
        from .formatting import format_history_for_prompt

        return format_history_for_prompt([t.to_dict() for t in self.history])


__all__ = [
    "CleanupResult",
    "Conversation",
    "ConversationMessage",
    "Message",
    "PromptContext",
    "Turn",
    "UserMemory",
    "UserState",
]

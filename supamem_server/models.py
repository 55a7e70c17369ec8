"""Request and response bodies: the OpenAPI document is generated from these."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, computed_field, model_validator

from supamem.fallback import CLIENT_TURN_ID

#: A conversation's mode and a memory's type, as the database knows them: the table's mode check and
#: the rows of `memory.memory_types` (a team may add a type) refuse others, naming what they take.
Mode = Annotated[str, Field(min_length=1, max_length=100)]
MemoryType = Annotated[str, Field(min_length=1, max_length=100)]


class Row(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Conversation(Row):
    id: UUID
    #: The owner (in together mode others take part).
    user_id: UUID
    title: str | None
    mode: str
    profile_id: UUID | None
    remember: bool
    archived: bool
    metadata: dict[str, Any]
    last_turn: int
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None


class Message(Row):
    id: int
    conversation_id: UUID
    role: Literal["user", "assistant"]
    content: str
    turn_number: int
    author_id: UUID | None
    tool_calls: Any = None
    suggested_values: Any = None
    suggested_actions: Any = None
    custom_payload: Any = None
    metadata: dict[str, Any]
    used_memory_ids: list[UUID]
    created_at: datetime
    #: An answer's rating by the one who asked (seed 004's helpfulness).
    helpful: bool | None = None


class UsedMemory(BaseModel):
    id: UUID
    #: Seed 004's chip names a memory "[M-{number} {type}]".
    number: int
    type: str
    content: str


class ConversationWithMessages(Conversation):
    messages: list[Message]
    #: The memories its answers used (`used_memory_ids`) that the caller may read: seed 004's chips.
    used_memories: list[UsedMemory]


class Memory(Row):
    id: UUID
    #: Seed 004's short reference, "M-{number}": the user's memories numbered from 1 as written.
    number: int
    content: str
    type: str
    category: str | None
    confidence: float
    profile_id: UUID | None
    source_conversation_id: UUID | None
    source_message_id: int | None
    #: The mode of the conversation it was drawn from (none for one added by hand): kept when that
    #: conversation is gone.
    origin_mode: str | None = None
    pinned: bool
    active: bool
    archived: bool
    deleted_at: datetime | None
    created_at: datetime
    last_referenced_at: datetime | None
    reference_count: int


class NewConversation(BaseModel):
    title: str | None = None
    mode: Mode = "chat"
    profile_id: UUID | None = None
    remember: bool | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ConversationChanges(BaseModel):
    """PUT /api/conversations/{id}: seed 002's title and archive, and seed 004's profile and
    "Remember in this chat" toggle. Fields left out are unchanged; seed 002's column name
    `is_archived` is taken too, and any other field is refused (422) rather than ignored."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = None
    archived: bool | None = Field(None, validation_alias=AliasChoices("archived", "is_archived"))
    remember: bool | None = None
    profile_id: UUID | None = None


class NewMemory(BaseModel):
    content: str
    type: MemoryType
    category: str | None = None
    confidence: float = Field(0.8, ge=0, le=1)
    profile_id: UUID | None = None
    pinned: bool = False


class MemoryChanges(BaseModel):
    """PUT /api/memories/{id}: new content (or type, category, confidence) supersedes the memory
    with a new version; `pinned` pins or unpins it in place. Seed 002's column names `is_pinned`
    and `memory_type` are taken too, and any other field is refused (422) rather than ignored."""

    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    type: MemoryType | None = Field(None, validation_alias=AliasChoices("type", "memory_type"))
    category: str | None = None
    confidence: float | None = Field(None, ge=0, le=1)
    pinned: bool | None = Field(None, validation_alias=AliasChoices("pinned", "is_pinned"))


class MemoryWritten(BaseModel):
    memory: Memory
    outcome: str


class ExtractRequest(BaseModel):
    conversation_id: UUID
    #: How long to wait for the extraction worker before answering (0: answer at once).
    wait_seconds: float = Field(0, ge=0, le=30)


class Queued(BaseModel):
    #: Jobs queued by this request.
    queued: int


class Extraction(Queued):
    #: Turns still waiting for the worker when the answer was given.
    pending: int
    #: The caller's active memories drawn from the conversation, newest first (at most 200).
    memories: list[Memory]


class Cleared(BaseModel):
    cleared: int


class Imported(BaseModel):
    imported: int


class MemorySettings(BaseModel):
    memory_paused: bool | None = None
    long_term_opt_in: bool | None = None


class Overview(BaseModel):
    memory_paused: bool
    long_term_opt_in: bool
    primary_profile_id: UUID | None
    live: int
    pinned: int
    archived: int
    deleted: int
    #: Bytes of the user's memory rows (every version kept), seed 004's storage size.
    storage_bytes: int
    by_type: dict[str, int]


#: The app context (and the turn metadata) a chat request may carry, as JSON.
MAX_CONTEXT_CHARS = 8_000
#: The turn metadata key of seed 004's A/B arm.
MEMORY_ARM = "memory_arm"
#: Turn metadata the chat writes itself: the client's turn id and the A/B arm.
KIT_METADATA_KEYS = frozenset({CLIENT_TURN_ID, MEMORY_ARM})


class ChatRequest(BaseModel):
    #: Seed 001's clients send it as `query`.
    message: str = Field(validation_alias=AliasChoices("message", "query"))
    session_id: str | None = None
    #: Seed 002's name for the session: the conversation to continue (a new one when absent).
    conversation_id: UUID | None = None
    #: For a new session: the profile selected for it (the primary one builds memory).
    profile_id: UUID | None = None
    #: Seed 002's app context (the page, the mode...): shown to the model in the system prompt, so
    #: bounded: stored nowhere, it meets no database limit, and every character is paid for.
    context: dict[str, Any] = Field(default_factory=dict)
    #: The client's id for this turn: a request sent again with it (its answer lost on the way)
    #: gets the stored turn back, and the model is not asked twice nor the turn stored twice.
    client_turn_id: str | None = Field(None, min_length=1, max_length=200)
    #: Seed 001's turn metadata: what the app knows of this turn (its intent, confidence, result
    #: count...), stored with both messages and given back in the response. Bounded as `context`
    #: is, so a turn held through an outage is never one the database refuses at write-back.
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _small_context(self) -> ChatRequest:
        for name in ("context", "metadata"):
            if len(json.dumps(getattr(self, name), default=str)) > MAX_CONTEXT_CHARS:
                raise ValueError(f"{name} must be at most {MAX_CONTEXT_CHARS:,} characters of JSON")
        return self

    @model_validator(mode="after")
    def _own_metadata(self) -> ChatRequest:
        taken = sorted(KIT_METADATA_KEYS.intersection(self.metadata))
        if taken:
            raise ValueError(f"metadata keys {', '.join(taken)} are the kit's own")
        return self

    @model_validator(mode="after")
    def _one_session(self) -> ChatRequest:
        if self.session_id is not None and self.conversation_id is not None and self.session_id != str(self.conversation_id):
            raise ValueError("session_id and conversation_id name the same conversation: give one, or the same id")
        return self

    @property
    def session(self) -> str | None:
        return str(self.conversation_id) if self.conversation_id is not None else self.session_id


class Profile(Row):
    id: UUID
    name: str
    is_primary: bool
    timezone: str
    attributes: dict[str, Any]
    created_at: datetime


class NewProfile(BaseModel):
    name: str = "Main profile"
    timezone: str = "UTC"
    attributes: dict[str, Any] = Field(default_factory=dict)
    primary: bool = False


class ChatResponse(BaseModel):
    response: str
    session_id: UUID
    #: Seed 002's name for the same id.
    conversation_id: UUID
    #: The database could not be reached: answered without memories, the turn held by the server
    #: until the user's next request writes it back.
    degraded: bool = False
    #: The turn a request sent before with the same client_turn_id stored, given back.
    replayed: bool = False
    used_memories: list[UsedMemory]
    #: Seed 001's names: the question asked, and the answer (`message`, the same as `response`).
    query: str
    #: Seed 001's: the metadata stored with the turn (the request's, the A/B arm, the client's id).
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: Seed 001's: what went wrong without failing the request (the database unreachable).
    error: str | None = None
    #: The stored answer's message id, to rate it (`PUT /api/messages/{id}/rating`); none while
    #: the turn is held through an outage.
    answer_id: int | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def message(self) -> str:
        return self.response

"""Long-term memories (seeds 002 and 004): seed 002's `MemoryService` over the SQL API.

Every method is one call (or one transaction of calls) to the RPC functions in schema `memory`
(supabase/migrations/20261122000700_memories.sql ... 20261122001500_request_extraction.sql):
dedup on write, supersede instead of editing in place, soft delete with undo, selection for the
prompt, export / import and erasure all happen in SQL. Python only picks who acts (supamem.acting).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal
from uuid import UUID

from psycopg import sql
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from .acting import Acting
from .db import Transaction
from .errors import ExtractionPendingError, InvalidInputError, NotFoundError
from .identity import TenantKey

#: Columns of `memory.memories` a client sees, in table order (`search` is the generated
#: tsvector behind full-text search: derived from `content`, never exported).
MEMORY_COLUMNS: tuple[str, ...] = (
    "id",
    "user_id",
    "tenant_id",
    "profile_id",
    "content",
    "type",
    "category",
    "confidence",
    "context",
    "origin_mode",
    "source_conversation_id",
    "source_message_id",
    "turn_index",
    "pinned",
    "active",
    "archived",
    "deleted_at",
    "expires_at",
    "created_at",
    "updated_at",
    "last_referenced_at",
    "reference_count",
    "superseded_by",
    "number",
)

MemoryStatus = Literal["active", "archived", "deleted", "superseded", "all"]

#: What `memory.remember` did, in its own words (kept as is, so the client, the Data API and the
#: jobs' results all say the same): a new memory; a near-duplicate of a live one, referenced
#: once more instead; or a new memory archived at once because the user's profile is at
#: `memory_cap` and every other live memory is pinned (seed 004: archive, never delete).
MemoryOutcome = Literal["added", "duplicate", "archived: memory cap reached"]

#: Keys `update_memory` accepts, with seed 002's / 004's names for them.
_REVISED_FIELDS = {"content": "content", "type": "type", "category": "category", "confidence": "confidence"}
_UPDATE_ALIASES = {
    "memory_text": "content",
    "memory_type": "type",
    "confidence_score": "confidence",
    "is_pinned": "pinned",
    "pinned": "pinned",
    **_REVISED_FIELDS,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Memory(_Model):
    """A row of `memory.memories` (every column but `search`).

    `outcome` is set by `MemoryService.create_memory` (`MemoryOutcome`): 'added'; 'duplicate'
    when a live near-duplicate already existed and was referenced once more instead (this is that
    memory); or 'archived: memory cap reached' when the new memory was stored but archived at
    once (the cap is reached and every other live memory is pinned).
    """

    id: UUID
    user_id: UUID
    tenant_id: UUID | None = None
    profile_id: UUID
    content: str
    type: str
    category: str | None = None
    confidence: float
    context: dict[str, Any] = Field(default_factory=dict)
    origin_mode: str | None = None
    source_conversation_id: UUID | None = None
    source_message_id: int | None = None
    turn_index: int | None = None
    pinned: bool = False
    active: bool = True
    archived: bool = False
    deleted_at: datetime | None = None
    expires_at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    last_referenced_at: datetime | None = None
    reference_count: int = 0
    superseded_by: UUID | None = None
    #: Seed 004's short reference, "M-{number}": the user's memories numbered from 1 as written
    #: (none in an export written before memories were numbered; an import numbers them afresh).
    number: int | None = None
    outcome: MemoryOutcome | None = None

    @property
    def status(self) -> str:
        """'deleted', 'superseded', 'archived' or 'active' (search_memories' status names)."""
        if self.deleted_at is not None:
            return "deleted"
        if self.superseded_by is not None:
            return "superseded"
        if self.archived:
            return "archived"
        return "active"

    # Seed 002's and 004's names for the same fields.
    @property
    def is_pinned(self) -> bool:
        return self.pinned

    @property
    def is_archived(self) -> bool:
        return self.archived

    @property
    def is_active(self) -> bool:
        return self.active

    @property
    def memory_type(self) -> str:
        return self.type

    @property
    def memory_text(self) -> str:
        return self.content


class MemoryCreate(_Model):
    """A memory to remember (seed 002's POST /api/memories body).

    `profile_id` defaults to the user's primary profile; `source_message_id` links the memory to
    the message it came from, and then seed 004's gate applies (primary profile, remember on,
    not paused), raising `PermissionDeniedError` when it is closed.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    content: str = Field(validation_alias=AliasChoices("content", "memory_text"))
    type: str = Field(validation_alias=AliasChoices("type", "memory_type"))
    category: str | None = None
    confidence: float = Field(0.8, ge=0, le=1, validation_alias=AliasChoices("confidence", "confidence_score"))
    profile_id: UUID | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    source_message_id: int | None = None
    pinned: bool = Field(False, validation_alias=AliasChoices("pinned", "is_pinned"))
    expires_at: datetime | None = None


class MemoryFilters(_Model):
    """Seed 002's `GET /api/memories` filters (all optional; `status` defaults to active).

    `query` searches full text and, for typos, trigram word similarity; results come best match
    first, then newest. `created_from` is inclusive, `created_to` exclusive.
    """

    model_config = ConfigDict(extra="forbid")

    type: str | None = None
    category: str | None = None
    profile_id: UUID | None = None
    conversation_id: UUID | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    status: MemoryStatus = "active"
    query: str | None = None
    limit: int = Field(20, ge=1, le=200)
    offset: int = Field(0, ge=0)


class SelectedMemory(_Model):
    """A memory chosen for a prompt (`memory.selected_memory`): its score and token cost."""

    id: UUID
    content: str
    type: str
    category: str | None = None
    confidence: float
    pinned: bool
    reference_count: int
    last_referenced_at: datetime | None = None
    score: float
    tokens: int
    #: Seed 004's short reference, "M-{number}" (`Memory.number`).
    number: int

    @property
    def is_pinned(self) -> bool:
        return self.pinned


class MemorySettings(_Model):
    """A user's memory controls (seed 004's Settings): paused, long-term storage opt-in."""

    user_id: UUID
    memory_paused: bool
    long_term_opt_in: bool


PROMPT_HEADING = "\n\n## What You Know About the User\n"
#: Seed 002 puts every pinned memory and at most this many of the others into the prompt.
PROMPT_RECENT_LIMIT = 10


def wait_for_extraction(
    transaction: Callable[[], AbstractContextManager[Transaction]],
    conversation_id: UUID | str,
    user_id: UUID | None,
    timeout: float,
) -> tuple[int, list[dict[str, Any]]]:
    """Wait until none of a conversation's questions waits for extraction (memory.extraction_pending),
    at most `timeout` seconds, asking in short transactions so the worker's commits are seen. Returns
    how many still wait, and the rows of `user_id`'s (None: the signed-in caller's) active memories
    drawn from the conversation, newest first, at most 200."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        with transaction() as tx:
            pending = int(tx.call_value("extraction_pending", conversation_id=conversation_id))
            if pending == 0 or time.monotonic() >= deadline:
                rows = tx.call(
                    "search_memories", user_id=user_id, conversation_id=conversation_id, status="active", limit=200
                )
                return pending, rows
        time.sleep(min(delay, max(deadline - time.monotonic(), 0)))
        delay = min(delay * 2, 1.0)


class MemoryService(Acting):
    """Seed 002's memory service on one `Database` (which acts as service_role)."""

    @staticmethod
    def _memory(
        tx: Transaction, memory_id: UUID | str, user_id: UUID | None = None, *, outcome: str | None = None
    ) -> Memory:
        query = sql.SQL(
            "select {} from memory.memories as m where m.id = %s and (%s::uuid is null or m.user_id = %s)"
        ).format(sql.SQL(", ").join(sql.Identifier("m", c) for c in MEMORY_COLUMNS))
        rows = tx.execute(query, [memory_id, user_id, user_id])
        if not rows:
            raise _memory_not_found()
        return Memory.model_validate({**rows[0], "outcome": outcome})

    # -- seed 002's interface -------------------------------------------------------------

    def create_memory(
        self, user_id: str | UUID, memory: MemoryCreate | dict[str, Any], *, tenant_id: TenantKey = None
    ) -> Memory:
        """Remember `memory` (memory.remember); returns the stored memory with `.outcome`.

        A near-duplicate of a live memory of the same user and profile is not stored again: the
        existing memory is returned with `outcome == 'duplicate'` and one more reference. At the
        memory cap with every other live memory pinned, the new memory is stored archived
        (`outcome == 'archived: memory cap reached'`, `status == 'archived'`).
        """
        new = memory if isinstance(memory, MemoryCreate) else MemoryCreate.model_validate(memory)

        def write() -> Memory:
            owner = self._owner(user_id, tenant_id)
            with self._transaction(owner) as tx:
                row = tx.call_one(
                    "remember",
                    content=new.content,
                    type=new.type,
                    user_id=owner.id,
                    profile_id=new.profile_id,
                    category=new.category,
                    confidence=_numeric(new.confidence),
                    context=new.context,
                    source_message_id=new.source_message_id,
                    pinned=new.pinned,
                    expires_at=new.expires_at,
                )
                assert row is not None
                # Validated like every other field: an outcome the model does not know is an error.
                return self._memory(tx, row["memory_id"], outcome=row["outcome"])

        return self._run(user_id, write)

    def get_memories(
        self,
        user_id: str | UUID,
        filters: MemoryFilters | dict[str, Any] | None = None,
        *,
        tenant_id: TenantKey = None,
    ) -> list[Memory]:
        """The user's memories matching `filters` (memory.search_memories), one page."""
        f = filters if isinstance(filters, MemoryFilters) else MemoryFilters.model_validate(filters or {})
        owner = self._find_owner(user_id, tenant_id)
        if owner is None:
            return []
        with self._transaction(owner) as tx:
            rows = tx.call(
                "search_memories",
                user_id=owner.id,
                query=f.query,
                type=f.type,
                category=f.category,
                profile_id=f.profile_id,
                conversation_id=f.conversation_id,
                created_from=f.created_from,
                created_to=f.created_to,
                status=f.status,
                limit=f.limit,
                offset=f.offset,
            )
        return [Memory.model_validate(r) for r in rows]

    def get_memory(self, memory_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> Memory:
        """One of the user's memories, in any status."""
        owner = self._find_owner(user_id, tenant_id)
        if owner is None:
            raise _memory_not_found()
        with self._transaction(owner) as tx:
            # A read filtered on the owner: RLS would also show a tenant admin their tenant's
            # memories, but this method answers for the user's own.
            return self._memory(tx, memory_id, owner.id)

    def update_memory(
        self,
        memory_id: UUID | str,
        user_id: str | UUID,
        updates: dict[str, Any],
        *,
        tenant_id: TenantKey = None,
    ) -> Memory:
        """Change a memory; returns the memory as it now stands.

        Content, type, category or confidence changes never edit in place: the change is a new
        memory that supersedes this one (memory.revise_memory), so the returned memory has a new
        id and the old one stays in history, inactive. `pinned` is set with memory.pin_memory (on
        the new version when both change). Only an active memory can be revised (SQLSTATE 55000).
        Keys: content, type, category, confidence, pinned (or seed 002's / 004's names for them).
        """
        unknown = sorted(k for k in updates if k not in _UPDATE_ALIASES)
        if unknown:
            raise InvalidInputError(
                f"cannot update {', '.join(unknown)}; allowed: content, type, category, confidence, pinned"
            )
        changes = {_UPDATE_ALIASES[k]: v for k, v in updates.items()}
        if not changes:
            raise InvalidInputError("no changes given")
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            target: Any = memory_id
            if any(k in _REVISED_FIELDS for k in changes):
                revised = tx.call_one(
                    "revise_memory",
                    memory_id=memory_id,
                    content=changes.get("content"),  # null keeps the current text
                    type=changes.get("type"),
                    category=changes.get("category"),
                    confidence=_numeric(changes.get("confidence")),
                    user_id=owner.id,
                )
                assert revised is not None
                target = revised["id"]
            if "pinned" in changes:
                tx.call("pin_memory", memory_id=target, pinned=bool(changes["pinned"]), user_id=owner.id)
            return self._memory(tx, target)

    def delete_memory(self, memory_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> bool:
        """Soft-delete (memory.forget): True. `undo_delete` brings it back until it is purged.

        NotFoundError when the memory is not the user's or is already deleted.
        """
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            tx.call("forget", memory_id=memory_id, user_id=owner.id)
        return True

    def undo_delete(self, memory_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> Memory:
        """Seed 004's "Undo" of a delete (memory.restore_memory); returns the restored memory.

        A memory that was superseded before it was deleted comes back inactive, as it was.
        """
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            tx.call("restore_memory", memory_id=memory_id, user_id=owner.id)
            return self._memory(tx, memory_id)

    def undo_save(self, memory_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> Memory:
        """Seed 004's "Undo" on "This was saved" (memory.undo_memory): a new version gives way to the
        version it replaced, which is returned active again; a memory that replaced none is deleted
        and returned. NotFoundError when the memory is not the user's or is already deleted.
        """
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            standing = tx.call_one("undo_memory", memory_id=memory_id, user_id=owner.id)
            assert standing is not None
            return self._memory(tx, standing["id"])

    def unarchive_memory(self, memory_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> Memory:
        """Bring an archived memory back (memory.unarchive_memory); returns it as it now stands.

        It counts against the cap like a new memory: on a full profile the lowest-scored unpinned
        live memory is archived to make room, which may be this one again (`archived` says so;
        pin it first to keep it). NotFoundError when the memory is not the user's or not archived.
        """
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            tx.call("unarchive_memory", memory_id=memory_id, user_id=owner.id)
            return self._memory(tx, memory_id)

    def clear_memories(
        self, user_id: str | UUID, profile_id: UUID | str | None = None, *, tenant_id: TenantKey = None
    ) -> int:
        """Seed 004's "Clear all memories" (memory.clear_memories): soft-delete every memory of the
        user, or of one profile, that is not deleted yet; returns how many. Each can still be
        brought back with `undo_delete` until it is purged. Ask the user to confirm first."""
        owner = self._find_owner(user_id, tenant_id)
        if owner is None:
            return 0
        with self._transaction(owner) as tx:
            return int(tx.call_value("clear_memories", user_id=owner.id, profile_id=profile_id))

    def pin_memory(
        self, memory_id: UUID | str, user_id: str | UUID, pinned: bool = True, *, tenant_id: TenantKey = None
    ) -> Memory:
        """Pin (always include in the prompt) or unpin a memory."""
        return self.update_memory(memory_id, user_id, {"pinned": pinned}, tenant_id=tenant_id)

    def request_extraction(
        self, conversation_id: UUID | str, *, user_id: str | UUID | None = None, tenant_id: TenantKey = None
    ) -> int:
        """Queue extraction of a conversation's messages (memory.request_extraction).

        Returns how many jobs were queued: messages already extracted or already queued, and
        messages whose gate is closed (no primary profile, remember off, paused), add nothing.
        The extraction worker applies the model's output later (memory.apply_extraction). With
        `user_id` of an Auth user, only that user's own messages are queued.
        """
        owner = self._owner(user_id, tenant_id) if user_id is not None else None
        with self._transaction(owner) as tx:
            queued = tx.call_value("request_extraction", conversation_id=conversation_id)
        return int(queued)

    def extract_memories(
        self,
        conversation_id: UUID | str,
        *,
        user_id: str | UUID | None = None,
        tenant_id: TenantKey = None,
        timeout: float = 30.0,
    ) -> list[Memory]:
        """Seed 002: extract a conversation's turns not extracted yet; returns the memories the
        conversation has given (active, newest first, at most 200): its owner's, or with `user_id`
        that user's own.

        Queues what waits (`request_extraction`), then waits for the extraction worker until none
        of the conversation's questions is noted or held by an unfinished job
        (memory.extraction_pending), at most `timeout` seconds (0: do not wait). Past it,
        ExtractionPendingError says how many still wait and holds the memories given so far. A
        conversation that is not `user_id`'s own or one they take part in is NotFoundError.
        """
        owner = self._find_owner(user_id, tenant_id) if user_id is not None else None
        if user_id is not None and owner is None:
            raise NotFoundError("conversation not found", sqlstate="P0002")
        me = owner.id if owner is not None else None
        with self._transaction(owner) as tx:
            # The user's own or one they take part in (the service role would see anyone's).
            found = tx.execute(
                "select c.user_id from memory.conversations as c where c.id = %s and (%s::uuid is null"
                " or c.user_id = %s or exists (select 1 from memory.participants as p"
                " where p.conversation_id = c.id and p.user_id = %s))",
                [conversation_id, me, me, me],
            )
        if not found:
            raise NotFoundError("conversation not found", sqlstate="P0002")
        user = owner.id if owner is not None else found[0]["user_id"]
        self.request_extraction(conversation_id, user_id=user_id, tenant_id=tenant_id)
        pending, rows = wait_for_extraction(lambda: self._transaction(owner), conversation_id, user, timeout)
        memories = [Memory.model_validate(r) for r in rows]
        if pending:
            raise ExtractionPendingError(
                f"{pending} of the conversation's questions still wait for extraction after {timeout:g} s",
                pending=pending,
                memories=memories,
            )
        return memories

    def get_context_memories(
        self,
        user_id: str | UUID,
        profile_id: UUID | str | None = None,
        query: str | None = None,
        *,
        limit: int | None = None,
        token_budget: int | None = None,
        message_id: int | None = None,
        record: bool = False,
        tenant_id: TenantKey = None,
    ) -> list[SelectedMemory]:
        """The memories for a prompt (memory.select_memories): pinned first, then by seed 004's
        score (lifted by relevance to `query`), at most `limit` (default 10) and within the token
        budget (default 500).

        Choosing is a read. A memory's use is counted when the answer it served is stored with
        its id: pass `used_memory_ids=[m.id for m in chosen]` to `store_turn` (the session
        manager's or the conversation store's), which counts each use once per answer. For an
        answer that is already stored, pass its assistant `message_id` (the ids are attached to
        it, counted once) or call `mark_memories_used`; `record=True` counts the use now,
        without an answer.
        """
        owner = self._find_owner(user_id, tenant_id)
        if owner is None:
            return []
        with self._transaction(owner) as tx:
            rows = tx.call(
                "select_memories",
                user_id=owner.id,
                profile_id=profile_id,
                query=query,
                limit=limit,
                token_budget=token_budget,
                message_id=message_id,
                record=record,
            )
        return [SelectedMemory.model_validate(r) for r in rows]

    def mark_memories_used(
        self,
        user_id: str | UUID,
        message_id: int,
        memory_ids: list[UUID],
        *,
        tenant_id: TenantKey = None,
    ) -> None:
        """Record that the memories served assistant message `message_id` (seed 004's chips);
        NotFoundError when it is not an answer of the user's."""
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            tx.call("mark_memories_used", message_id=message_id, memory_ids=list(memory_ids), user_id=owner.id)

    @staticmethod
    def system_prompt_block(memories: list[Any]) -> str:
        """Seed 002's prompt section: every pinned memory, then at most 10 others, in order.

        "\\n\\n## What You Know About the User\\n" and one "- {content}\\n" line per memory;
        "" when there is nothing to say. Accepts `Memory`, `SelectedMemory` or any object with
        `content` and `pinned` (or `is_pinned`).
        """

        def is_pinned(m: Any) -> bool:
            return bool(getattr(m, "pinned", getattr(m, "is_pinned", False)))

        pinned = [m for m in memories if is_pinned(m)]
        recent = [m for m in memories if not is_pinned(m)][:PROMPT_RECENT_LIMIT]
        if not pinned and not recent:
            return ""
        return PROMPT_HEADING + "".join(f"- {m.content}\n" for m in pinned + recent)

    # -- Settings controls ------------------------------------------------------------------

    def _settings(self, user_id: str | UUID, tenant_id: TenantKey, **values: bool | None) -> MemorySettings:
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            row = tx.call_one("set_memory_settings", user_id=owner.id, **values)
        if row is None or row.get("id") is None:
            raise NotFoundError("user not found", sqlstate="P0002")
        return MemorySettings(user_id=row["id"], **{k: row[k] for k in ("memory_paused", "long_term_opt_in")})

    def pause(self, user_id: str | UUID, *, tenant_id: TenantKey = None) -> MemorySettings:
        """Pause memory building: nothing new is remembered from conversations."""
        return self._settings(user_id, tenant_id, memory_paused=True)

    def resume(self, user_id: str | UUID, *, tenant_id: TenantKey = None) -> MemorySettings:
        """Resume memory building."""
        return self._settings(user_id, tenant_id, memory_paused=False)

    def opt_in_long_term(
        self, user_id: str | UUID, opt_in: bool = True, *, tenant_id: TenantKey = None
    ) -> MemorySettings:
        """Opt in to (or out of) long-term storage: opted-in memories are never auto-archived."""
        return self._settings(user_id, tenant_id, long_term_opt_in=opt_in)

    def ensure_primary_profile(
        self, user_id: str | UUID, name: str = "Main profile", *, timezone: str = "UTC", tenant_id: TenantKey = None
    ) -> UUID:
        """The user's primary profile, created when they have none (memories need a profile).

        There is no profile RPC: this is a plain insert into memory.profiles, as the user (RLS)
        or as service_role. Concurrent first calls are safe: the one-primary-per-user index
        rejects the second insert, and the loser reads the winner's row.
        """
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            rows = tx.execute(
                "insert into memory.profiles (user_id, name, is_primary, timezone)"
                " select %(u)s, %(n)s, true, %(tz)s"
                " where not exists (select 1 from memory.profiles where user_id = %(u)s and is_primary)"
                " on conflict do nothing returning id",
                {"u": owner.id, "n": name, "tz": timezone},
            )
            if not rows:
                rows = tx.execute(
                    "select id from memory.profiles where user_id = %s and is_primary", [owner.id]
                )
        return rows[0]["id"]

    def set_primary_profile(self, profile_id: UUID | str, user_id: str | UUID, *, tenant_id: TenantKey = None) -> UUID:
        """Make one of the user's profiles the primary one (memory.set_primary_profile), in one step;
        memories made before keep their profile. NotFoundError when the profile is not the user's."""
        owner = self._owner(user_id, tenant_id)
        with self._transaction(owner) as tx:
            return tx.call_one("set_primary_profile", profile_id=profile_id, user_id=owner.id)["id"]  # type: ignore[index]

    # -- portability and erasure ------------------------------------------------------------

    def export(self, user_id: str | UUID, *, tenant_id: TenantKey = None) -> dict[str, Any]:
        """Every memory (all statuses, every field) and profile of the user, as one document
        (memory.export_memories: {"format": "supamem.memories", "version": 1, ...})."""
        owner = self._owner(user_id, tenant_id, create=False)
        with self._transaction(owner) as tx:
            rows = tx.execute("select memory.export_memories(p_user_id => %s) as export", [owner.id])
        return rows[0]["export"]

    def import_(self, user_id: str | UUID, export: dict[str, Any], *, tenant_id: TenantKey = None) -> int:
        """Bring an export back in (memory.import_memories); returns how many memories were added.

        Records keep their ids, so importing the same export again adds 0. Links to
        conversations or messages that no longer exist are dropped. Runs as service_role (the
        function is not granted to signed-in users).
        """
        if not isinstance(export, dict):
            raise InvalidInputError("an export is a JSON object (format supamem.memories)")
        owner = self._owner(user_id, tenant_id)
        with self.db.transaction() as tx:
            return int(tx.call_value("import_memories", export=export, user_id=owner.id))

    def erase(self, user_id: str | UUID, *, tenant_id: TenantKey = None) -> dict[str, Any]:
        """Erase the user and everything of theirs (memory.erase_user); returns the counts.
        NotFoundError when nobody has the id (already erased, or never used)."""
        owner = self._owner(user_id, tenant_id, create=False)
        with self.db.transaction() as tx:
            result = tx.call_value("erase_user", user_id=owner.id)
        # The user row is gone: a later call for the same id must resolve it afresh.
        with self._lock:
            for key in [k for k, v in self._owners.items() if v.id == owner.id]:
                del self._owners[key]
        self.identity.forget(user_id)
        self.identity.forget(owner.id)
        return dict(result)


def _memory_not_found() -> NotFoundError:
    return NotFoundError("memory not found", sqlstate="P0002")


def _numeric(value: float | Decimal | None) -> Decimal | None:
    """A float as the numeric it reads as (a float parameter is double precision, which
    Postgres does not cast to numeric implicitly, so the RPC would not be found)."""
    return None if value is None else Decimal(str(value))


__all__ = [
    "MEMORY_COLUMNS",
    "PROMPT_HEADING",
    "Memory",
    "MemoryCreate",
    "MemoryFilters",
    "MemoryOutcome",
    "MemoryService",
    "MemorySettings",
    "MemoryStatus",
    "SelectedMemory",
]

"""Seed 000's ConversationStore: one running conversation per user, 10 turns, 24 hours.

Each user (a text id such as "user123", in an optional tenant) has a current conversation
(`memory.current_conversation`, safe under concurrent first requests) whose retention policy is a
rolling window of 10 turns and a 24-hour TTL; `memory.add_turn` stores a turn atomically and the
database numbers turns, trims the window and sets the expiry. Reads never return expired turns,
so `get_history` does not need to sweep first (seed 000 swept on every read);
`cleanup_old_turns` sweeps one user's expired rows on demand. Reads create nothing: the history of
an id nobody has stored a turn for is [] (supamem.current).

Errors are handled as seed 000 says: `store_turn` returns False, reads return []/None, and the
failure is logged with the user id and operation. When the database is unreachable, turns are
buffered and reads answer from the buffer (supamem.fallback), under `store:<tenant>:<user id>`
keys; buffered turns are written back on the next call that reaches the database. A buffer shared
with other stores or with a `ConversationMemoryManager` is safe: each writes back only its own
keys (same kind, same tenant).

`get_history` items are `Turn.history_item()` (created_at a datetime, as in seed 000's data
model); `Turn.to_dict()` is the same dict with created_at in ISO 8601 (seed 000's
ConversationTurn.to_dict()).
"""

from __future__ import annotations

import logging
import math
import threading
from datetime import timedelta
from typing import Any
from uuid import UUID

from .current import read_current
from .db import Database, Transaction
from .errors import DatabaseUnavailableError, SupamemError
from .fallback import (
    BufferedTurn,
    FallbackBuffer,
    as_memory_ids,
    check_buffered_text,
    flush,
    log_degraded,
    log_failure,
    write_back,
)
from .formatting import format_history_for_prompt
from .identity import Identity, TenantKey, tenant_uuid
from .models import Turn
from .retention import sweep

log = logging.getLogger(__name__)

WINDOW_TURNS = 10
TTL = timedelta(hours=24)
#: Metadata that marks a user's running seed 000 conversation.
CURRENT = {"store": "conversation_store"}


class ConversationStore:
    """Seed 000's interface. `db` replaces seed 000's Supabase client."""

    def __init__(
        self,
        db: Database | None = None,
        *,
        tenant_id: TenantKey = None,
        window_turns: int = WINDOW_TURNS,
        ttl: timedelta = TTL,
        fallback: FallbackBuffer | None = None,
        identity: Identity | None = None,
    ) -> None:
        self.db = db if db is not None else Database()
        self.identity = identity if identity is not None else Identity(self.db)
        self.tenant_id = tenant_id
        self.window_turns = window_turns
        self.ttl = ttl
        self.fallback = fallback if fallback is not None else FallbackBuffer()
        tenant = tenant_uuid(tenant_id)
        #: This store's namespace in the fallback buffer (its kind and tenant).
        self._prefix = f"store:{tenant or '-'}:"
        self._flush_lock = threading.Lock()

    # -- helpers --------------------------------------------------------------------------

    def _key(self, user_id: str) -> str:
        return f"{self._prefix}{user_id}"

    def _current(self, tx: Transaction, user: UUID) -> dict[str, Any]:
        """The user's current seed 000 conversation, created with its window and TTL if missing.

        The match keeps it apart from any other conversation of the same user (seed 001
        sessions, seed 002 conversations): only one tagged as this store's is current.
        """
        conversation = tx.call_one(
            "current_conversation", user_id=user, ttl=self.ttl, window_turns=self.window_turns, match=CURRENT
        )
        assert conversation is not None
        return conversation

    def _read(self, user_id: str, function: str, **params: Any) -> list[dict[str, Any]]:
        return read_current(self.db, self.identity, user_id, self.tenant_id, CURRENT, function, **params)

    # -- write-back -----------------------------------------------------------------------

    def flush_pending(self) -> int:
        """Write this store's buffered turns back (in order, exactly once); returns how many
        were written now. Raises only when the database is unreachable."""
        if not self.fallback.has_pending(self._prefix):
            return 0
        return flush(self.fallback, self._prefix, self._flush_lock, self._write_back)

    def _write_back(self, key: str, turns: list[BufferedTurn]) -> tuple[UUID, int]:
        user = self.identity.user(turns[0].user_id, self.tenant_id)
        with self.db.transaction() as tx:
            conversation = self._current(tx, user)["id"]
            return conversation, write_back(tx, conversation, turns, user)

    def _write_back_pending(self) -> None:
        if self.fallback.has_pending(self._prefix):
            self.flush_pending()

    # -- seed 000 interface ---------------------------------------------------------------

    def store_turn(
        self,
        user_id: str,
        user_query: str,
        ai_response: str,
        used_memory_ids: list[UUID | str] | None = None,
    ) -> bool:
        """Store a turn; True on success (or buffered during an outage), False on error.

        `used_memory_ids` are the long-term memories the answer's prompt used (e.g. the ids of
        `MemoryService.get_context_memories`): storing the answer counts their use, once.
        """
        try:
            used = as_memory_ids(used_memory_ids)
        except SupamemError as exc:
            log_failure(log, "store_turn", None, user_id, exc)
            return False
        def write() -> None:
            user = self.identity.user(user_id, self.tenant_id)
            with self.db.transaction() as tx:
                conversation = self._current(tx, user)
                row = tx.call_one(
                    "add_turn",
                    conversation_id=conversation["id"],
                    user_content=user_query,
                    assistant_content=ai_response,
                    **({"used_memory_ids": used} if used else {}),
                )
            assert row is not None
            self.fallback.stored(self._key(user_id), row["turn_number"])

        try:
            self._write_back_pending()
            self.identity.run(user_id, write)
            return True
        except DatabaseUnavailableError as exc:
            log_degraded(log, "store_turn", None, user_id, exc)
            try:
                check_buffered_text("user_query", user_query)
                check_buffered_text("ai_response", ai_response)
            except SupamemError as invalid:
                log_failure(log, "store_turn", None, user_id, invalid)
                return False
            self.fallback.append(self._key(user_id), user_id, user_query, ai_response, None, used)
            return True
        except SupamemError as exc:
            log_failure(log, "store_turn", None, user_id, exc)
            return False

    def get_history(self, user_id: str, max_turns: int = 10) -> list[dict[str, Any]]:
        """The newest `max_turns` turns within the TTL, oldest first ([] on error)."""
        key = self._key(user_id)
        try:
            self._write_back_pending()
            rows = self._read(user_id, "turn_history", max_turns=max_turns)
            turns = [Turn.from_row(r, user_id=user_id) for r in rows]
            self.fallback.remember(key, turns)
            merged = self.fallback.view(key, turns, session_id=key, limit=max_turns)
        except DatabaseUnavailableError as exc:
            log_degraded(log, "get_history", None, user_id, exc)
            merged = self.fallback.view(key, None, session_id=key, limit=max_turns)
        except SupamemError as exc:
            log_failure(log, "get_history", None, user_id, exc)
            return []
        return [t.history_item() for t in merged]

    def resolve_reference(self, user_id: str, reference: str) -> dict[str, Any] | None:
        """The turn a phrase such as "yung una" / "the first one" points at, or None.

        Positions count within the turns the prompt shows (the window): 1 is the oldest shown,
        -1 ("kanina", "earlier") the latest. The phrases are rows of memory.reference_phrases.
        """
        try:
            self._write_back_pending()
            rows = self._read(user_id, "resolve_reference", text=reference, max_turns=self.window_turns)
        except DatabaseUnavailableError as exc:
            log_degraded(log, "resolve_reference", None, user_id, exc)
            return None
        except SupamemError as exc:
            log_failure(log, "resolve_reference", None, user_id, exc)
            return None
        return Turn.from_row(rows[0], user_id=user_id).history_item() if rows else None

    def cleanup_old_turns(self, user_id: str) -> int:
        """Delete the user's expired turns now; returns how many turns were deleted."""
        try:
            user = self.identity.find(user_id, self.tenant_id)
            if user is None:
                return 0
            totals = sweep(self.db, user_id=user)
        except DatabaseUnavailableError as exc:
            log_degraded(log, "cleanup_old_turns", None, user_id, exc)
            return 0
        except SupamemError as exc:
            log_failure(log, "cleanup_old_turns", None, user_id, exc)
            return 0
        # Both messages of a turn expire together; a lone question counts as a turn.
        turns = math.ceil(totals["messages_deleted"] / 2)
        log.info("cleanup_old_turns: deleted %d expired turns of user_id=%s", turns, user_id)
        return turns

    @staticmethod
    def format_history_for_prompt(history: list[dict[str, Any]]) -> str:
        """Seed 000's prompt format (supamem.formatting)."""
        return format_history_for_prompt(history)


__all__ = ["ConversationStore"]

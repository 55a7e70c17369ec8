"""Seed 001's ConversationMemoryManager: 24-hour sessions of turns, with graceful degradation.

A session is a `memory.conversations` row created with a 24-hour TTL (`CONVERSATION_TTL_HOURS`);
turns are written with `memory.add_turn` (numbering, TTL and window are the database's job) and
read with `memory.turn_history` / `memory.prompt_context`. Expired turns are never returned;
`cleanup_old_conversations()` runs the retention sweep (pg_cron also runs it every 5 minutes).

Property 5: a session id that is not a UUID, expired, or another user's starts a new session for
the caller without error; the returned `Turn.session_id` is the new id. A UUID that names no
conversation at all is taken as the client's choice of id: the session is created with it (a
client may mint session ids, e.g. during an outage), so `Turn.session_id` is that id. (Before the
first turn is stored, reading an unknown id gives [].)

Property 8: when the database is unreachable every method keeps answering from a bounded
in-memory fallback (supamem.fallback, keys `session:<tenant>:<session id>`) and logs a WARNING
with session id, user id and operation; buffered turns are written back, exactly once and in
order, on the next call that reaches the database. A session created during an outage gets a
client-side UUID, and the write-back creates the session with that very id, so the id keeps
working in every process and after a restart. (Only if the id is taken meanwhile, by another
user's or an expired session, do the turns go to a new session, as for a live call; the WARNING
names it.)
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

from .db import Database, Transaction
from .errors import DatabaseUnavailableError, NotFoundError, SupamemError
from .fallback import (
    BufferedTurn,
    FallbackBuffer,
    as_memory_ids,
    check_buffered_text,
    flush,
    log_degraded,
    log_failure,
    log_session_created,
    open_session,
    write_back_session,
)
from .identity import Identity, TenantKey, as_uuid, tenant_uuid
from .models import CleanupResult, PromptContext, Turn
from .query_embedding import embedding_model, query_embedding
from .retention import sweep

if TYPE_CHECKING:
    from jobs.embeddings import EmbeddingClient

log = logging.getLogger(__name__)

DEFAULT_TTL = timedelta(hours=float(os.environ.get("CONVERSATION_TTL_HOURS", "24")))
#: Seed 001: history retrieval is 20 turns by default and at most 50.
MAX_HISTORY_TURNS = 50
DEFAULT_CONTEXT_TURNS = int(os.environ.get("CONVERSATION_HISTORY_LIMIT", "20"))
_CONTEXT_KEYS = frozenset({"conversation_id", "history", "referenced_turn", "memories"})


class ConversationMemoryManager:
    """Seed 001's interface over the kit's conversations.

    Args:
        db: the `Database` (default: one on `$DATABASE_URL`).
        tenant_id: the tenant external user ids belong to (None: the app's own users).
        ttl: lifetime of a session's turns (default 24 hours, `CONVERSATION_TTL_HOURS`).
        context_turns: turns `get_context_for_query` puts in a prompt.
        fallback: the buffer used during outages (default: a new `FallbackBuffer()`); it may be
            shared with other managers and stores (each writes back only its own keys).
        embedder: embeds the query of `get_context_for_query` for the hybrid selection of
            memories (`jobs.embeddings.EmbeddingClient.from_env()`); None selects lexically.
    """

    def __init__(
        self,
        db: Database | None = None,
        *,
        tenant_id: TenantKey = None,
        ttl: timedelta | None = DEFAULT_TTL,
        context_turns: int = DEFAULT_CONTEXT_TURNS,
        fallback: FallbackBuffer | None = None,
        identity: Identity | None = None,
        embedder: EmbeddingClient | None = None,
    ) -> None:
        self.db = db if db is not None else Database()
        self.embedder = embedder
        self.identity = identity if identity is not None else Identity(self.db)
        self.tenant_id = tenant_id
        self.ttl = ttl
        self.context_turns = min(context_turns, MAX_HISTORY_TURNS)
        self.fallback = fallback if fallback is not None else FallbackBuffer()
        tenant = tenant_uuid(tenant_id)
        #: This manager's namespace in the fallback buffer (its kind and tenant).
        self._prefix = f"session:{tenant or '-'}:"
        self._flush_lock = threading.Lock()

    # -- helpers --------------------------------------------------------------------------

    def _user(self, user_id: str | UUID) -> UUID:
        return self.identity.user(user_id, self.tenant_id)

    def _display(self, user_id: str | UUID) -> str:
        uid = as_uuid(user_id)
        return str(uid) if uid is not None else str(user_id)

    def _resolve(self, session_id: object) -> tuple[str, str, UUID | None]:
        """(buffer key, session id as text, database id or None) for a session id the app passed.

        A UUID is written in its canonical form, so every spelling of it is the same session.
        """
        session = as_uuid(session_id)
        text = str(session) if session is not None else str(session_id)
        return self._prefix + text, text, session

    def _new_session(self, tx: Transaction, user: UUID, session_id: UUID | None = None) -> UUID:
        row = tx.call_one("create_conversation", user_id=user, ttl=self.ttl, id=session_id)
        assert row is not None
        return row["id"]

    def _open_session(self, tx: Transaction, user: UUID, wanted: UUID | None) -> UUID:
        """A new session for `user`, with the id `wanted` when it is free (fallback.open_session)."""
        return open_session(tx, wanted, lambda tx, session: self._new_session(tx, user, session))

    def _turns(self, rows: list[dict[str, Any]]) -> list[Turn]:
        return [
            Turn.from_row(r, user_id=self.identity.display_id(as_uuid(r["user_id"])))  # type: ignore[arg-type]
            for r in rows
        ]

    # -- write-back -----------------------------------------------------------------------

    def flush_pending(self) -> int:
        """Write this manager's buffered turns back (in order, exactly once); returns how many
        were written now. Raises only when the database is unreachable."""
        if not self.fallback.has_pending(self._prefix):
            return 0
        return flush(
            self.fallback,
            self._prefix,
            self._flush_lock,
            lambda key, turns: self._write_back(as_uuid(key.removeprefix(self._prefix)), turns),
        )

    def _write_back(self, wanted: UUID | None, turns: list[BufferedTurn]) -> tuple[UUID, int]:
        """Write `turns` to session `wanted` (created with that id when no conversation has it)."""
        user = self._user(turns[0].user_id)
        return write_back_session(self.db, wanted, turns, user, lambda tx, session: self._new_session(tx, user, session))

    def _write_back_pending(self) -> None:
        """Before each call: write buffered turns back; raises DatabaseUnavailableError only."""
        if self.fallback.has_pending(self._prefix):
            self.flush_pending()

    # -- seed 001 interface ---------------------------------------------------------------

    def store_turn(
        self,
        session_id: str | UUID | None,
        user_id: str | UUID,
        query: str,
        response: str,
        metadata: dict[str, Any] | None = None,
        used_memory_ids: list[UUID | str] | None = None,
    ) -> Turn:
        """Store a turn; returns it with the session it landed in (maybe a new one).

        `used_memory_ids` are the long-term memories the answer's prompt used (e.g. the ids of
        `MemoryService.get_context_memories` or `PromptContext.memories`): storing the answer
        counts their use, once per answer (also when the turn is buffered and written back).
        """
        metadata = dict(metadata or {})
        try:
            used = as_memory_ids(used_memory_ids)
            self._write_back_pending()
            return self._store(session_id, user_id, query, response, metadata, used)
        except DatabaseUnavailableError as exc:
            log_degraded(log, "store_turn", session_id, user_id, exc)
            return self._store_buffered(session_id, user_id, query, response, metadata, used)
        except SupamemError as exc:
            log_failure(log, "store_turn", session_id, user_id, exc)
            raise

    def _store(
        self,
        session_id: object,
        user_id: str | UUID,
        query: str,
        response: str,
        metadata: dict[str, Any],
        used: list[UUID],
    ) -> Turn:
        user = self._user(user_id)
        _, _, wanted = self._resolve(session_id)
        turn: dict[str, Any] = {
            "user_content": query, "assistant_content": response, "metadata": metadata, "user_id": user,
        }
        if used:
            turn["used_memory_ids"] = used
        row: dict[str, Any] | None = None
        session = wanted
        if wanted is not None:
            try:
                row = self.db.call_one("add_turn", conversation_id=wanted, **turn)
            except NotFoundError:
                row = None  # no live session of this user has the id: made below
        if row is None:
            with self.db.transaction() as tx:
                session = self._open_session(tx, user, wanted)
                row = tx.call_one("add_turn", conversation_id=session, **turn)
            if session_id is not None:
                log.info(
                    "session %s is not a live session of user %s: %s",
                    session_id,
                    user_id,
                    "created it with that id" if session == wanted else f"started session {session}",
                    extra={"supamem_operation": "store_turn", "supamem_session_id": str(session_id),
                           "supamem_user_id": str(user_id)},
                )
        assert row is not None and session is not None
        self.fallback.stored(self._resolve(session)[0], row["turn_number"])
        return Turn(
            id=str(row["user_message_id"]),
            session_id=str(session),
            user_id=self.identity.display_id(user),
            turn_number=row["turn_number"],
            query_text=query,
            response_text=response,
            created_at=row["created_at"],
            metadata=metadata,
        )

    def _store_buffered(
        self,
        session_id: object,
        user_id: str | UUID,
        query: str,
        response: str,
        metadata: dict[str, Any],
        used: list[UUID],
    ) -> Turn:
        try:
            check_buffered_text("query", query)
            check_buffered_text("response", response)
        except SupamemError as exc:
            log_failure(log, "store_turn", session_id, user_id, exc)
            raise
        key, text, session = self._resolve(session_id)
        if session is None:  # not a UUID: a new (client-side) session, as with the database
            key, text, _ = self._resolve(uuid4())
        buffered = self.fallback.append(key, self._display(user_id), query, response, metadata, used)
        view = self.fallback.view(key, None, session_id=text)
        return next(t for t in reversed(view) if t.id == buffered.client_turn_id)

    def get_session_history(self, session_id: str | UUID, limit: int = 50) -> list[Turn]:
        """The newest `limit` turns of a session (at most 50), oldest first ([] for an unknown
        session)."""
        limit = min(limit, MAX_HISTORY_TURNS)
        key, text, session = self._resolve(session_id)
        try:
            self._write_back_pending()
            if session is None:
                return []
            rows = self.db.call("turn_history", conversation_id=session, max_turns=limit)
            turns = self._turns(rows)
            self.fallback.remember(key, turns)
            return self.fallback.view(key, turns, session_id=text, limit=limit)
        except DatabaseUnavailableError as exc:
            log_degraded(log, "get_session_history", session_id, None, exc)
            return self.fallback.view(key, None, session_id=text, limit=limit)
        except SupamemError as exc:
            log_failure(log, "get_session_history", session_id, None, exc)
            raise

    def create_session(self, user_id: str | UUID) -> str:
        """A new session id (a UUID string)."""
        try:
            self._write_back_pending()
            user = self._user(user_id)
            with self.db.transaction() as tx:
                created = str(self._new_session(tx, user))
            log_session_created(log, created, user_id)
            return created
        except DatabaseUnavailableError as exc:
            session = str(uuid4())
            log_degraded(log, "create_session", session, user_id, exc)
            return session
        except SupamemError as exc:
            log_failure(log, "create_session", None, user_id, exc)
            raise

    def delete_session(self, session_id: str | UUID) -> int:
        """Delete a session and its turns; returns the number of turns deleted (0 if unknown).

        During an outage the session's buffered turns are dropped and DatabaseUnavailableError
        is raised: the stored turns cannot be deleted until the database is back.
        """
        key, _, session = self._resolve(session_id)
        dropped = self.fallback.drop_key(key)
        try:
            self._write_back_pending()
            deleted = 0
            if session is not None:
                try:
                    deleted = self.db.call_value("delete_conversation", conversation_id=session) or 0
                except NotFoundError:
                    deleted = 0
            return deleted + dropped
        except DatabaseUnavailableError as exc:
            log_degraded(log, "delete_session", session_id, None, exc)
            raise
        except SupamemError as exc:
            log_failure(log, "delete_session", session_id, None, exc)
            raise

    def get_context_for_query(self, session_id: str | UUID, query: str) -> PromptContext:
        """History window plus the turn the query points at ("the first one") and the memories
        selected for the query, in one round trip (two more with an embedder: the model, then the
        query's vector from the embeddings server)."""
        key, text, session = self._resolve(session_id)
        try:
            self._write_back_pending()
            if session is None:
                return PromptContext(conversation_id=text, query=query)
            embedding = None
            if self.embedder is not None:
                with self.db.transaction() as tx:
                    model = embedding_model(tx)
                embedding = query_embedding(self.embedder, model, query)  # no connection held meanwhile
            doc = self.db.call_value(
                "prompt_context", conversation_id=session, query=query, max_turns=self.context_turns,
                query_embedding=embedding,
            ) or {}
            history = self._turns(doc.get("history") or [])
            self.fallback.remember(key, history)
            referenced = doc.get("referenced_turn")
            return PromptContext(
                conversation_id=text,
                query=query,
                history=self.fallback.view(key, history, session_id=text, limit=self.context_turns),
                referenced_turn=self._turns([referenced])[0] if referenced else None,
                memories=doc.get("memories") or [],
                extra={k: v for k, v in doc.items() if k not in _CONTEXT_KEYS},
            )
        except DatabaseUnavailableError as exc:
            log_degraded(log, "get_context_for_query", session_id, None, exc)
            return PromptContext(
                conversation_id=text,
                query=query,
                history=self.fallback.view(key, None, session_id=text, limit=self.context_turns),
                degraded=True,
            )
        except SupamemError as exc:
            log_failure(log, "get_context_for_query", session_id, None, exc)
            raise

    def cleanup_old_conversations(
        self, *, batch_size: int | None = None, max_batches: int | None = None
    ) -> CleanupResult:
        """Delete expired turns and sessions now (seed 001's cleanup service); never raises.

        Batches default to the database's `sweep_batch_size` and `sweep_max_batches` settings
        (supamem.retention.sweep), as pg_cron's sweep uses them.
        """
        started = time.perf_counter()
        errors: list[str] = []
        totals = {"messages_deleted": 0, "conversations_deleted": 0, "short_term_deleted": 0}
        try:
            totals = sweep(self.db, batch_size=batch_size, max_batches=max_batches)
        except SupamemError as exc:
            log_failure(log, "cleanup_old_conversations", None, None, exc)
            errors.append(f"{type(exc).__name__}: {exc}")
        result = CleanupResult(
            sessions_deleted=totals["conversations_deleted"],
            # Both messages of a turn expire together; a lone question counts as a turn.
            turns_deleted=math.ceil(totals["messages_deleted"] / 2),
            execution_time=time.perf_counter() - started,
            errors=errors,
            messages_deleted=totals["messages_deleted"],
            short_term_deleted=totals["short_term_deleted"],
        )
        log.info(
            "cleanup: %d sessions, %d turns deleted in %.3fs",
            result.sessions_deleted,
            result.turns_deleted,
            result.execution_time,
        )
        return result


#: Seed 001's name for its database service: the same calls (store_turn, get_session_history,
#: create_session, delete_session, cleanup_old_conversations) on the same tables.
ConversationDatabaseService = ConversationMemoryManager

_manager: ConversationMemoryManager | None = None
_manager_lock = threading.Lock()


def get_memory_manager() -> ConversationMemoryManager:
    """The process-wide manager (seed 001), on `$DATABASE_URL`; the pool opens on first use."""
    global _manager
    if _manager is None:
        with _manager_lock:
            if _manager is None:
                _manager = ConversationMemoryManager()
    return _manager


__all__ = ["ConversationMemoryManager", "get_memory_manager"]

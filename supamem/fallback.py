"""Graceful degradation (seed 001, property 8): a bounded in-memory buffer for outages.

While the database is unreachable (`DatabaseUnavailableError`), `ConversationMemoryManager` and
`ConversationStore` keep answering:
- writes are buffered here, each turn under a client-generated `client_turn_id`;
- reads return the last history read from the database for that session (a snapshot) followed by
  the buffered turns, numbered provisionally after it.
On the next call that reaches the database, the buffered turns are written back in order, in one
transaction per conversation, and dropped from the buffer only after the commit.

Keys are namespaced by the kind of owner and the tenant (`store:<tenant>:<user id>` for a
`ConversationStore`, `session:<tenant>:<session id>` for a `ConversationMemoryManager`, with `-`
for no tenant), and each owner writes back only the keys under its own prefix, so one buffer may
be shared by several owners without one writing another's turns into its conversations. Each written
message carries `{"client_turn_id": ...}` in its metadata, and a flush first asks the database
which of its ids are already there, so a turn is written exactly once even when a flush is
retried after a commit whose acknowledgement was lost. The live write a turn was buffered after
may have committed unacknowledged too: it carries no id (an indexed id on every message would cost
every turn), so a flush looks for that turn by its question and answer after the turn known then.

Bounds (all in-process memory; nothing here survives a restart):
- `max_turns_per_key` (default 50) buffered turns per session / user: the oldest is dropped,
  with a WARNING, when a new one arrives;
- `max_total_turns` (default 1000) buffered turns overall: the oldest anywhere is dropped, with a
  WARNING;
- `max_snapshots` (default 256) remembered histories, least recently used evicted, each at most
  `max_turns_per_key` turns.
So the buffer holds at most max_total_turns turns plus max_snapshots x max_turns_per_key
snapshot turns, whatever the length of the outage.

Every degraded call logs a WARNING naming the operation, session id and user id
(`log_degraded`); other failures are logged at ERROR with the same context (`log_failure`).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

from .db import Database, Transaction
from .errors import (
    ConflictError,
    DatabaseUnavailableError,
    InvalidInputError,
    NotFoundError,
    StateError,
    SupamemError,
)
from .models import Turn

log = logging.getLogger(__name__)

CLIENT_TURN_ID = "client_turn_id"
#: The unique index that stores a client turn id once per user and role.
CLIENT_TURN_KEY = "messages_client_turn_id_key"


def _context(operation: str, session_id: object, user_id: object) -> dict[str, Any]:
    return {
        "supamem_operation": operation,
        "supamem_session_id": None if session_id is None else str(session_id),
        "supamem_user_id": None if user_id is None else str(user_id),
    }


def log_session_created(logger: logging.Logger, session_id: object, user_id: object) -> None:
    """INFO: a session was created (seed 001 logs it with the ids cut to eight characters)."""
    logger.info("created session %s... for user %s...", str(session_id)[:8], str(user_id)[:8],
                extra=_context("create_session", session_id, user_id))


def log_degraded(
    logger: logging.Logger, operation: str, session_id: object, user_id: object, exc: BaseException
) -> None:
    """WARNING: the database is unreachable and `operation` is served from the fallback."""
    logger.warning(
        "database unavailable during %s (session_id=%s, user_id=%s): %s; using the in-memory fallback",
        operation,
        session_id,
        user_id,
        exc,
        extra=_context(operation, session_id, user_id),
    )


def log_failure(
    logger: logging.Logger, operation: str, session_id: object, user_id: object, exc: BaseException
) -> None:
    """ERROR: `operation` failed (bad input, not found, permission...), with its context."""
    sqlstate = getattr(exc, "sqlstate", None)
    logger.error(
        "%s failed (session_id=%s, user_id=%s): %s: %s%s",
        operation,
        session_id,
        user_id,
        type(exc).__name__,
        exc,
        f" [SQLSTATE {sqlstate}]" if sqlstate else "",
        extra=_context(operation, session_id, user_id),
    )


#: The database's `messages_content_length` bound, mirrored for turns buffered while it is down.
MAX_CONTENT_LENGTH = 100_000


def check_buffered_text(name: str, value: str) -> None:
    """While the database is down, refuse what it would refuse, so a buffered turn never fails.

    The database's rules are `content ~ '[^[:space:]]'`, no NUL bytes and at most
    MAX_CONTENT_LENGTH characters; Python's `str.strip()` removes a superset of [:space:] in the
    C.UTF-8 locale, so nothing the database accepts is refused here except strings made only of
    exotic spaces.
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string")
    if "\x00" in value:
        raise InvalidInputError(f"{name} must not contain NUL bytes")
    if not value.strip():
        raise InvalidInputError(f"{name} must not be empty")
    if len(value) > MAX_CONTENT_LENGTH:
        raise InvalidInputError(f"{name} must be at most {MAX_CONTENT_LENGTH} characters")


def as_memory_ids(ids: Iterable[UUID | str] | None) -> list[UUID]:
    """`used_memory_ids` as UUIDs, in order and without repeats; InvalidInputError otherwise.

    Checked before anything is written or buffered, so a buffered turn never fails on them.
    """
    if ids is None:
        return []
    if isinstance(ids, (str, bytes, UUID)):
        raise InvalidInputError("used_memory_ids must be a list of memory ids, not a single value")
    result: list[UUID] = []
    for value in ids:
        try:
            result.append(value if isinstance(value, UUID) else UUID(str(value)))
        except ValueError:
            raise InvalidInputError(f"used_memory_ids: {value!r} is not a memory id (a UUID)") from None
    return list(dict.fromkeys(result))


@dataclass
class BufferedTurn:
    """A turn written while the database was unreachable."""

    key: str
    user_id: str
    query: str
    response: str
    metadata: dict[str, Any]
    #: Long-term memories the answer used (counted when the turn is written back).
    used_memory_ids: list[UUID] = field(default_factory=list)
    client_turn_id: str = field(default_factory=lambda: str(uuid4()))
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    sequence: int = 0
    #: Turn number shown while buffered: after the last known one (the database assigns the
    #: real number when the turn is written back).
    provisional_number: int = 0
    #: The newest turn of its key known when it was buffered: a live write whose commit went
    #: through unacknowledged stored it after that one (see `write_back`).
    after_turn: int = 0
    #: The profile a session made for this turn takes (the chat's `profile_id`).
    profile_id: UUID | None = None

    def stored_metadata(self) -> dict[str, Any]:
        return {**self.metadata, CLIENT_TURN_ID: self.client_turn_id}


class FallbackBuffer:
    """Bounded, thread-safe store of buffered turns and last-known histories (see module doc)."""

    def __init__(
        self, max_turns_per_key: int = 50, max_total_turns: int = 1000, max_snapshots: int = 256
    ) -> None:
        if min(max_turns_per_key, max_total_turns, max_snapshots) < 1:
            raise ValueError("fallback bounds must be positive")
        self.max_turns_per_key = max_turns_per_key
        self.max_total_turns = max_total_turns
        self.max_snapshots = max_snapshots
        self._pending: OrderedDict[str, deque[BufferedTurn]] = OrderedDict()
        self._snapshots: OrderedDict[str, list[Turn]] = OrderedDict()
        #: The newest turn number the database took per key, when no history was read since.
        self._stored: OrderedDict[str, int] = OrderedDict()
        self._total = 0
        self._sequence = itertools.count(1)
        self._lock = threading.RLock()

    # -- buffered writes ------------------------------------------------------------------

    def append(
        self,
        key: str,
        user_id: str,
        query: str,
        response: str,
        metadata: dict[str, Any] | None,
        used_memory_ids: list[UUID] | None = None,
        client_turn_id: str | None = None,
        profile_id: UUID | None = None,
    ) -> BufferedTurn:
        turn = BufferedTurn(key, user_id, query, response, dict(metadata or {}), list(used_memory_ids or []),
                            profile_id=profile_id)
        if client_turn_id is not None:  # the caller's own id: a retry written back is stored once
            turn.client_turn_id = client_turn_id
        with self._lock:
            turn.sequence = next(self._sequence)
            queue = self._pending.setdefault(key, deque())
            known = max(
                max((t.turn_number for t in self._snapshots.get(key, ())), default=0), self._stored.get(key, 0)
            )
            turn.after_turn = known
            turn.provisional_number = max(known, queue[-1].provisional_number if queue else 0) + 1
            if len(queue) >= self.max_turns_per_key:
                self._drop(key, queue.popleft(), f"more than {self.max_turns_per_key} turns for it")
            elif self._total >= self.max_total_turns:
                oldest_key = min(self._pending, key=lambda k: self._pending[k][0].sequence)
                self._drop(
                    oldest_key,
                    self._pending[oldest_key].popleft(),
                    f"more than {self.max_total_turns} turns buffered",
                )
            self._pending.setdefault(key, deque()).append(turn)  # `queue` may have been emptied
            self._total += 1
        return turn

    def _drop(self, key: str, turn: BufferedTurn, why: str) -> None:
        self._total -= 1
        if not self._pending.get(key):
            self._pending.pop(key, None)
        log.warning(
            "fallback buffer full (%s): dropped the oldest buffered turn %s of session/user %s "
            "(user_id=%s); it will not be written to the database",
            why,
            turn.client_turn_id,
            key,
            turn.user_id,
            extra=_context("fallback_drop", key, turn.user_id),
        )

    def pending(self, key: str) -> list[BufferedTurn]:
        with self._lock:
            return list(self._pending.get(key, ()))

    def pending_keys(self, prefix: str = "") -> list[str]:
        """Keys (starting with `prefix`) with buffered turns, oldest buffered turn first."""
        with self._lock:
            keys = [k for k in self._pending if k.startswith(prefix)]
            return sorted(keys, key=lambda k: self._pending[k][0].sequence)

    def has_pending(self, prefix: str = "") -> bool:
        """Whether any turn is buffered under a key starting with `prefix`."""
        if self._total == 0:
            return False
        if not prefix:
            return True
        with self._lock:
            return any(k.startswith(prefix) for k in self._pending)

    def __len__(self) -> int:
        return self._total

    def find(self, prefix: str, client_turn_id: str) -> BufferedTurn | None:
        """The held turn with this client id under a key starting with `prefix`, if any."""
        with self._lock:
            return next(
                (t for k, queue in self._pending.items() if k.startswith(prefix) for t in queue
                 if t.client_turn_id == client_turn_id),
                None,
            )

    def discard(self, key: str, client_turn_ids: set[str] | list[str]) -> None:
        """Forget buffered turns once they are committed (or will never be written)."""
        ids = set(client_turn_ids)
        with self._lock:
            queue = self._pending.get(key)
            if not queue:
                return
            kept = deque(t for t in queue if t.client_turn_id not in ids)
            self._total -= len(queue) - len(kept)
            if kept:
                self._pending[key] = kept
            else:
                del self._pending[key]

    def drop_key(self, key: str) -> int:
        """Forget everything about a session/user (it was deleted); returns buffered turns dropped."""
        with self._lock:
            queue = self._pending.pop(key, deque())
            self._total -= len(queue)
            self._snapshots.pop(key, None)
            self._stored.pop(key, None)
            return len(queue)

    # -- last-known histories -------------------------------------------------------------

    def remember(self, key: str, turns: list[Turn]) -> None:
        """Keep the newest history read from the database, to answer from during an outage."""
        with self._lock:
            self._snapshots[key] = list(turns[-self.max_turns_per_key :])
            self._snapshots.move_to_end(key)
            while len(self._snapshots) > self.max_snapshots:
                self._snapshots.popitem(last=False)

    def stored(self, key: str, turn_number: int) -> None:
        """The database took turn `turn_number` under `key`: turns buffered later number after it,
        as the write-back will store them."""
        with self._lock:
            self._stored[key] = max(turn_number, self._stored.get(key, 0))
            self._stored.move_to_end(key)
            while len(self._stored) > self.max_snapshots:
                self._stored.popitem(last=False)

    def view(
        self, key: str, stored: list[Turn] | None, *, session_id: str, limit: int | None = None
    ) -> list[Turn]:
        """`stored` (or the snapshot when None) followed by buffered turns not stored yet."""
        with self._lock:
            base = list(self._snapshots.get(key, ())) if stored is None else list(stored)
            pending = list(self._pending.get(key, ()))
        written = {t.metadata.get(CLIENT_TURN_ID) for t in base}
        number = max((t.turn_number for t in base), default=0)
        merged = list(base)
        for buffered in pending:
            if buffered.client_turn_id in written:
                continue
            # Against the snapshot, keep the numbers already handed out; after a fresh read,
            # number the still-buffered turns after the database's newest.
            number = buffered.provisional_number if stored is None else number + 1
            merged.append(
                Turn(
                    id=buffered.client_turn_id,
                    session_id=session_id,
                    user_id=buffered.user_id,
                    turn_number=number,
                    query_text=buffered.query,
                    response_text=buffered.response,
                    created_at=buffered.created_at,
                    metadata=buffered.stored_metadata(),
                    buffered=True,
                )
            )
        if limit is not None:
            merged = merged[-limit:] if limit > 0 else []
        return merged


def flush(
    fallback: FallbackBuffer,
    prefix: str,
    lock: threading.Lock,
    write: Callable[[str, list[BufferedTurn]], tuple[object, int]],
) -> int:
    """Write back every buffered turn under `prefix`, key by key, oldest first; returns how many
    were written now. The loop both seed clients share.

    `write(key, turns)` stores one key's turns in one transaction and returns where they went
    (for the log) and how many it wrote. Turns leave the buffer only after their commit. An
    unreachable database raises (the caller keeps buffering); any other error leaves the key's
    turns buffered for the next call and goes on with the next key.
    """
    written = 0
    with lock:
        for key in fallback.pending_keys(prefix):
            turns = fallback.pending(key)
            if not turns:
                continue
            buffered_as = key.removeprefix(prefix)
            try:
                target, count = write(key, turns)
            except DatabaseUnavailableError:
                raise
            except SupamemError as exc:
                log_failure(log, "write_back", buffered_as, turns[0].user_id, exc)
                continue
            fallback.discard(key, [t.client_turn_id for t in turns])
            written += count
            log.warning(
                "database reachable again: wrote back %d buffered turn(s) of %s (user_id=%s) to %s",
                count,
                buffered_as,
                turns[0].user_id,
                target,
                extra=_context("write_back", buffered_as, turns[0].user_id),
            )
    return written


def stored_client_turn_ids(
    tx: Transaction, ids: list[str], *, conversation_id: UUID | None = None, user_id: UUID | None = None
) -> dict[str, UUID]:
    """Which of `ids` the database already holds (one query): client_turn_id -> conversation.

    The `?` condition matches the predicate of `messages_client_turn_id_key`, so the planner can
    answer from that index.
    """
    if conversation_id is not None:
        where, value = "m.conversation_id = %s", conversation_id
    elif user_id is not None:
        where, value = "m.user_id = %s", user_id
    else:
        raise ValueError("conversation_id or user_id required")
    rows = tx.execute(
        "select distinct m.metadata ->> 'client_turn_id' as client_turn_id, m.conversation_id"
        f" from memory.messages as m where {where}"
        " and m.metadata ? 'client_turn_id' and m.metadata ->> 'client_turn_id' = any(%s)",
        [value, ids],
    )
    return {r["client_turn_id"]: r["conversation_id"] for r in rows}


def stored_live(tx: Transaction, conversation_id: UUID, turn: BufferedTurn) -> bool:
    """Whether the live write that failed before `turn` was buffered committed after all (the
    connection was lost after the commit, before its acknowledgement): the conversation holds, after
    the turn known then, a turn of the same question and answer written live (a live write carries
    no client turn id, and every copy the write-back stores does). One range of the conversation's
    turn index."""
    return bool(tx.execute(
        "select 1 from memory.messages as q join memory.messages as a on a.conversation_id = q.conversation_id"
        " and a.turn_number = q.turn_number and a.role = 'assistant'"
        " where q.conversation_id = %s and q.turn_number > %s and q.role = 'user' and q.content = %s"
        " and a.content = %s and not q.metadata ? 'client_turn_id' limit 1",
        [conversation_id, turn.after_turn, turn.query, turn.response],
    ))


def write_back(
    tx: Transaction, conversation_id: UUID, turns: list[BufferedTurn], user_id: UUID, author_id: UUID | None = None
) -> int:
    """Append buffered turns to `user_id`'s conversation in order, skipping those already stored;
    with `author_id`, the questions of that participant of the conversation (together mode).

    Runs inside the caller's transaction. A conversation of another user (or an expired or
    unknown one) raises NotFoundError (memory.add_turn's p_user_id). A turn whose live write
    committed unacknowledged is skipped (`stored_live`). A turn the database rejects
    as invalid is logged and skipped (its savepoint rolls back alone): it could never be written.
    A turn that another write-back stored meanwhile is refused by `messages_client_turn_id_key`
    and skipped. Any other error aborts the whole write-back. When it returns, every turn is settled (written
    now, already stored, or rejected); it returns how many were written now.
    """
    present = stored_client_turn_ids(tx, [t.client_turn_id for t in turns], conversation_id=conversation_id)
    written = 0
    for turn in turns:
        if turn.client_turn_id in present or stored_live(tx, conversation_id, turn):
            continue
        used = {"used_memory_ids": turn.used_memory_ids} if turn.used_memory_ids else {}
        if author_id is not None:
            used["author_id"] = author_id
        try:
            with tx.savepoint():
                tx.call(
                    "add_turn",
                    conversation_id=conversation_id,
                    user_content=turn.query,
                    assistant_content=turn.response,
                    metadata=turn.stored_metadata(),
                    user_id=user_id,
                    **used,
                )
        except ConflictError as exc:
            if CLIENT_TURN_KEY not in exc.message:
                raise
            continue  # stored meanwhile by another write-back: the table keeps one copy
        except InvalidInputError as exc:
            log_failure(log, "write_back", conversation_id, turn.user_id, exc)
            continue
        written += 1
    return written


__all__ = [
    "CLIENT_TURN_ID",
    "BufferedTurn",
    "FallbackBuffer",
    "as_memory_ids",
    "check_buffered_text",
    "flush",
    "log_degraded",
    "log_failure",
    "stored_client_turn_ids",
    "write_back",
]


def open_session(tx: Transaction, wanted: UUID | None, create: Callable[[Transaction, UUID | None], UUID]) -> UUID:
    """A new session made by `create(tx, id)`: with the id `wanted` when no conversation has it,
    else a random one (the id is taken: another user's session, or an expired one not swept yet).

    The database tells the cases apart (the primary key refuses a taken id: ConflictError), so
    nothing is looked up first and two racing writers cannot both get the id.
    """
    if wanted is not None:
        try:
            with tx.savepoint():
                return create(tx, wanted)
        except ConflictError:
            pass
    return create(tx, None)


def write_back_session(
    db: Database,
    wanted: UUID | None,
    turns: list[BufferedTurn],
    user: UUID,
    create: Callable[[Transaction, UUID | None], UUID],
) -> tuple[UUID, int]:
    """Write the turns buffered for session `wanted` back: into that conversation when it is a live
    one of `user`'s, or one they take part in (under its owner, `user` the questions' author), else
    into one `open_session` makes (with that id when it is free): the conversation is gone, another
    user's, or archived (where a turn cannot go, as the live write would have started a new
    session). Returns the session they are in and how many were written now. The write-back both
    session-keyed clients share (seed 001's manager and the chat endpoint)."""
    if wanted is not None:
        try:
            with db.transaction() as tx:
                owner = tx.execute(
                    "select c.user_id from memory.conversations as c join memory.participants as p"
                    " on p.conversation_id = c.id where c.id = %s and p.user_id = %s",
                    [wanted, user],
                )
                if owner:
                    return wanted, write_back(tx, wanted, turns, owner[0]["user_id"], author_id=user)
                return wanted, write_back(tx, wanted, turns, user)
        except (NotFoundError, StateError):
            pass  # made below
    with db.transaction() as tx:
        # A retried write-back whose first commit went through (acknowledgement lost) has already
        # put the turns somewhere: find them by their ids instead of making another session.
        present = stored_client_turn_ids(tx, [t.client_turn_id for t in turns], user_id=user)
        session = next(iter(present.values()), None) or open_session(tx, wanted, create)
        return session, write_back(tx, session, turns, user)

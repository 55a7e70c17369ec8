"""Seed 003's memory module: conversation history, key-value memory and user state per tenant.

Every call is tenant-isolated, and names its tenant (seed 003: all functions require tenant_id,
so a call that forgets it is a TypeError, never a write into the system's namespace): `user_id`
is the app's text id, `tenant_id` an int (seed 003), a tenant UUID or name, or None for the app's
own namespace (seed 003's system data). (user, tenant) resolves to one
`memory.users` row (supamem.identity), so two tenants' "user123" are different people and
nothing one tenant does reaches another's rows. The history is the user's current conversation
(`memory.current_conversation`, created on first write, kept forever by default). Reads never
create anything: an id nobody has written for reads as empty.

The functions run as service_role through a module-level default client on `$DATABASE_URL`
(`configure()` replaces it); `UserMemoryClient` is the same API on an explicit `Database`.
Errors: `InvalidRoleError` (a role other than user/assistant, raised by SQL as 22023),
`MemoryNotFoundError` (= `NotFoundError`: a missing message, key or state), `InvalidInputError`.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from .current import read_current
from .db import Database, Transaction
from .identity import NOBODY, Identity, TenantKey, tenant_uuid
from .models import ConversationMessage, UserMemory, UserState

DEFAULT_PAGE = 50


#: Metadata that marks a user's seed 003 history conversation.
HISTORY = {"store": "user_memory"}


def _as_given(row: dict[str, Any], user_id: str, tenant_id: TenantKey) -> dict[str, Any]:
    """A row with the ids the app speaks (seed 003's models), not the `memory.users` ids."""
    return {**row, "user_id": user_id, "tenant_id": tenant_id}


class UserMemoryClient:
    """Seed 003's functions on one `Database`."""

    def __init__(self, db: Database | None = None, *, identity: Identity | None = None) -> None:
        self.db = db if db is not None else Database()
        self.identity = identity if identity is not None else Identity(self.db)

    def _user(self, user_id: str, tenant_id: TenantKey) -> UUID:
        return self.identity.user(user_id, tenant_id)

    @staticmethod
    def _conversation(tx: Transaction, user: UUID) -> UUID:
        # Seed 003 keeps one history per user, apart from the user's other conversations.
        row = tx.call_one("current_conversation", user_id=user, match=HISTORY)
        assert row is not None
        return row["id"]

    def _history_call(self, user_id: str, tenant_id: TenantKey, function: str, **params: Any) -> list[dict[str, Any]]:
        return read_current(self.db, self.identity, user_id, tenant_id, HISTORY, function, **params)

    def _history_count(self, user_id: str, tenant_id: TenantKey, function: str) -> int:
        """A count `function` returns for the user's history (0 when there is none)."""
        rows = self._history_call(user_id, tenant_id, function)
        return int(next(iter(rows[0].values()))) if rows else 0

    # -- conversation history -------------------------------------------------------------

    def add_message(self, user_id: str, role: str, content: str, tenant_id: TenantKey) -> int:
        """Append a message ('user' or 'assistant'); returns its id."""
        user = self._user(user_id, tenant_id)
        with self.db.transaction() as tx:
            row = tx.call_one(
                "add_message", conversation_id=self._conversation(tx, user), role=role, content=content
            )
        assert row is not None
        return row["id"]

    def get_conversation_history(
        self, user_id: str, tenant_id: TenantKey, limit: int = DEFAULT_PAGE, offset: int = 0
    ) -> list[ConversationMessage]:
        """A page of messages, newest first (for display)."""
        rows = self._history_call(user_id, tenant_id, "history", limit=limit, offset=offset, newest_first=True)
        return [ConversationMessage.model_validate(_as_given(r, user_id, tenant_id)) for r in rows]

    def get_recent_messages(self, user_id: str, tenant_id: TenantKey, count: int = 10) -> list[ConversationMessage]:
        """The newest `count` messages, oldest first (for a prompt)."""
        rows = self._history_call(user_id, tenant_id, "history", limit=count, newest_first=False)
        return [ConversationMessage.model_validate(_as_given(r, user_id, tenant_id)) for r in rows]

    def count_messages(self, user_id: str, tenant_id: TenantKey) -> int:
        return self._history_count(user_id, tenant_id, "count_messages")

    def clear_conversation_history(self, user_id: str, tenant_id: TenantKey) -> int:
        """Delete the user's messages; returns how many were deleted."""
        return self._history_count(user_id, tenant_id, "clear_conversation")

    def delete_message(self, message_id: int, tenant_id: TenantKey) -> None:
        """Delete one message of this tenant; `MemoryNotFoundError` if missing or another tenant's."""
        self.db.call("delete_tenant_message", message_id=message_id, tenant_id=tenant_uuid(tenant_id))

    # -- user memory (key-value) ----------------------------------------------------------

    def set_memory(self, user_id: str, key: str, value: dict[str, Any], tenant_id: TenantKey) -> int:
        """Upsert a JSON object under `key`; returns the memory id."""
        # Jsonb(...) even for a non-dict, so kv_set's check (a JSON object) says what is wrong (22023).
        row = self.db.call_one("kv_set", key=key, value=Jsonb(value), user_id=self._user(user_id, tenant_id))
        assert row is not None
        return row["id"]

    def get_memory(self, user_id: str, key: str, tenant_id: TenantKey) -> dict[str, Any] | None:
        user = self.identity.find(user_id, tenant_id)
        return None if user is None else self.db.call_value("kv_get", key=key, user_id=user)

    def get_all_memory(self, user_id: str, tenant_id: TenantKey) -> list[UserMemory]:
        user = self.identity.find(user_id, tenant_id)
        rows = [] if user is None else self.db.call("kv_list", user_id=user)
        return [UserMemory.model_validate(_as_given(r, user_id, tenant_id)) for r in rows]

    def delete_memory(self, user_id: str, key: str, tenant_id: TenantKey) -> None:
        """Delete one key; `MemoryNotFoundError` if it does not exist."""
        # An unknown user has no keys: memory.kv_delete reports that, as for any missing key.
        self.db.call("kv_delete", key=key, user_id=self.identity.find(user_id, tenant_id) or NOBODY)

    def clear_all_memory(self, user_id: str, tenant_id: TenantKey) -> int:
        user = self.identity.find(user_id, tenant_id)
        return 0 if user is None else int(self.db.call_value("kv_clear", user_id=user))

    # -- user state -----------------------------------------------------------------------

    def set_user_state(self, user_id: str, mode: str, tenant_id: TenantKey) -> UserState:
        row = self.db.call_one("state_set", mode=mode, user_id=self._user(user_id, tenant_id))
        return UserState.model_validate(_as_given(row, user_id, tenant_id))

    def get_user_state(self, user_id: str, tenant_id: TenantKey) -> UserState | None:
        user = self.identity.find(user_id, tenant_id)
        row = None if user is None else self.db.call_one("state_get", user_id=user)
        return None if row is None else UserState.model_validate(_as_given(row, user_id, tenant_id))

    def delete_user_state(self, user_id: str, tenant_id: TenantKey) -> None:
        """`MemoryNotFoundError` if the user has no state."""
        self.db.call("state_delete", user_id=self.identity.find(user_id, tenant_id) or NOBODY)


# -- module-level API (seed 003) ----------------------------------------------------------

_default: UserMemoryClient | None = None
_default_lock = threading.Lock()


def configure(db: Database | None = None) -> UserMemoryClient:
    """Point the module-level functions at `db` (default: a new `Database` on $DATABASE_URL)."""
    global _default
    with _default_lock:
        _default = UserMemoryClient(db)
    return _default


def default_client() -> UserMemoryClient:
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = UserMemoryClient()
    return _default


def add_message(user_id: str, role: str, content: str, tenant_id: TenantKey) -> int:
    return default_client().add_message(user_id, role, content, tenant_id)


def get_conversation_history(
    user_id: str, tenant_id: TenantKey, limit: int = DEFAULT_PAGE, offset: int = 0
) -> list[ConversationMessage]:
    return default_client().get_conversation_history(user_id, tenant_id, limit, offset)


def get_recent_messages(user_id: str, tenant_id: TenantKey, count: int = 10) -> list[ConversationMessage]:
    return default_client().get_recent_messages(user_id, tenant_id, count)


def count_messages(user_id: str, tenant_id: TenantKey) -> int:
    return default_client().count_messages(user_id, tenant_id)


def clear_conversation_history(user_id: str, tenant_id: TenantKey) -> int:
    return default_client().clear_conversation_history(user_id, tenant_id)


def delete_message(message_id: int, tenant_id: TenantKey) -> None:
    default_client().delete_message(message_id, tenant_id)


def set_memory(user_id: str, key: str, value: dict[str, Any], tenant_id: TenantKey) -> int:
    return default_client().set_memory(user_id, key, value, tenant_id)


def get_memory(user_id: str, key: str, tenant_id: TenantKey) -> dict[str, Any] | None:
    return default_client().get_memory(user_id, key, tenant_id)


def get_all_memory(user_id: str, tenant_id: TenantKey) -> list[UserMemory]:
    return default_client().get_all_memory(user_id, tenant_id)


def delete_memory(user_id: str, key: str, tenant_id: TenantKey) -> None:
    default_client().delete_memory(user_id, key, tenant_id)


def clear_all_memory(user_id: str, tenant_id: TenantKey) -> int:
    return default_client().clear_all_memory(user_id, tenant_id)


def set_user_state(user_id: str, mode: str, tenant_id: TenantKey) -> UserState:
    return default_client().set_user_state(user_id, mode, tenant_id)


def get_user_state(user_id: str, tenant_id: TenantKey) -> UserState | None:
    return default_client().get_user_state(user_id, tenant_id)


def delete_user_state(user_id: str, tenant_id: TenantKey) -> None:
    default_client().delete_user_state(user_id, tenant_id)


__all__ = [
    "UserMemoryClient",
    "add_message",
    "clear_all_memory",
    "clear_conversation_history",
    "configure",
    "count_messages",
    "default_client",
    "delete_memory",
    "delete_message",
    "delete_user_state",
    "get_all_memory",
    "get_conversation_history",
    "get_memory",
    "get_recent_messages",
    "get_user_state",
    "set_memory",
    "set_user_state",
]

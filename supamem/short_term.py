"""Seed 001's short-term memory: clarification state that lives minutes, not a conversation.

Backed by `memory.short_term_*` (default lifetime: the `short_term_ttl` setting, 5 minutes);
expired state reads as absent at once. The lifetime counts from the last activity (seed 001: "5
minutes of inactivity"): a read by the user starts it again. It is independent of long-term memory (property 9):
nothing here touches conversations, and conversation writes never touch it.

During an outage, `set` keeps the value in a small in-process map (bounded, with the same
expiry) and `get` reads it from there, so a "Which one?" flow started then can still finish;
that map is not written back (the state lives minutes).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from datetime import timedelta
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from .db import Database
from .errors import DatabaseUnavailableError, SupamemError
from .fallback import log_degraded, log_failure
from .identity import Identity, TenantKey

log = logging.getLogger(__name__)

CLARIFICATION_KEY = "clarification"
DEFAULT_OUTAGE_TTL = timedelta(minutes=5)
MAX_LOCAL_ENTRIES = 10_000


class ShortTermMemory:
    """Short-lived per-user state by key; `set_clarification` & co. are seed 001's names."""

    def __init__(
        self,
        db: Database | None = None,
        *,
        tenant_id: TenantKey = None,
        identity: Identity | None = None,
    ) -> None:
        self.db = db if db is not None else Database()
        self.identity = identity if identity is not None else Identity(self.db)
        self.tenant_id = tenant_id
        self._local: OrderedDict[tuple[str, str], tuple[Any, float]] = OrderedDict()
        self._lock = threading.Lock()

    def _user(self, user_id: str | UUID) -> UUID:
        return self.identity.user(user_id, self.tenant_id)

    def _local_get(self, user_id: str | UUID, key: str) -> tuple[bool, Any]:
        with self._lock:
            entry = self._local.get((str(user_id), key))
            if entry is None:
                return False, None
            if entry[1] <= time.monotonic():
                del self._local[(str(user_id), key)]
                return False, None
            return True, entry[0]

    def _local_set(self, user_id: str | UUID, key: str, value: Any, ttl: timedelta | None) -> None:
        expires = time.monotonic() + (ttl or DEFAULT_OUTAGE_TTL).total_seconds()
        with self._lock:
            self._local[(str(user_id), key)] = (value, expires)
            self._local.move_to_end((str(user_id), key))
            while len(self._local) > MAX_LOCAL_ENTRIES:
                self._local.popitem(last=False)

    def _local_pop(self, user_id: str | UUID, key: str) -> bool:
        with self._lock:
            return self._local.pop((str(user_id), key), None) is not None

    # -- generic state --------------------------------------------------------------------

    def set(self, user_id: str | UUID, key: str, value: Any, ttl: timedelta | None = None) -> None:
        """Keep `value` (any JSON value) under `key` for `ttl` (default: 5 minutes)."""
        try:
            self.db.call("short_term_set", key=key, value=Jsonb(value), ttl=ttl, user_id=self._user(user_id))
            self._local_pop(user_id, key)
        except DatabaseUnavailableError as exc:
            log_degraded(log, f"short_term_set[{key}]", None, user_id, exc)
            self._local_set(user_id, key, value, ttl)
        except SupamemError as exc:
            log_failure(log, f"short_term_set[{key}]", None, user_id, exc)
            raise

    def get(self, user_id: str | UUID, key: str) -> Any | None:
        """The live value under `key`, or None (expired or never set); reading it starts its
        lifetime again."""
        found, value = self._local_get(user_id, key)  # set during an outage: newer than the DB
        if found:
            return value
        try:
            user = self.identity.find(user_id, self.tenant_id)
            return None if user is None else self.db.call_value("short_term_get", key=key, user_id=user)
        except DatabaseUnavailableError as exc:
            log_degraded(log, f"short_term_get[{key}]", None, user_id, exc)
            return None
        except SupamemError as exc:
            log_failure(log, f"short_term_get[{key}]", None, user_id, exc)
            raise

    def delete(self, user_id: str | UUID, key: str) -> bool:
        """Forget `key`; True when there was something to forget."""
        local = self._local_pop(user_id, key)
        try:
            user = self.identity.find(user_id, self.tenant_id)
            deleted = user is not None and bool(self.db.call_value("short_term_delete", key=key, user_id=user))
            return deleted or local
        except DatabaseUnavailableError as exc:
            log_degraded(log, f"short_term_delete[{key}]", None, user_id, exc)
            return local
        except SupamemError as exc:
            log_failure(log, f"short_term_delete[{key}]", None, user_id, exc)
            raise

    # -- seed 001 names -------------------------------------------------------------------

    def set_clarification(
        self, user_id: str | UUID, state: dict[str, Any], ttl: timedelta | None = None
    ) -> None:
        """Remember a pending "Which one?" question for `user_id` (5 minutes by default)."""
        self.set(user_id, CLARIFICATION_KEY, state, ttl)

    def get_clarification(self, user_id: str | UUID) -> dict[str, Any] | None:
        value = self.get(user_id, CLARIFICATION_KEY)
        return value if isinstance(value, dict) else None

    def clear_clarification(self, user_id: str | UUID) -> bool:
        return self.delete(user_id, CLARIFICATION_KEY)


class _OnClassOrInstance:
    """A ShortTermMemory method that seed 001 calls on the class itself
    (`ConversationHandler.get_clarification(user_id)`): on the class it acts through one shared
    handler on the default database (`DATABASE_URL`), on an instance through that instance."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type[ConversationHandler]) -> Any:
        return getattr(ShortTermMemory, self.name).__get__(instance if instance is not None else owner.shared())


class ConversationHandler(ShortTermMemory):
    """Seed 001's name for the component that holds clarification state; its three calls also work
    on the class, as seed 001's chat endpoint makes them."""

    _shared: ConversationHandler | None = None
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls) -> ConversationHandler:
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    set_clarification = _OnClassOrInstance()
    get_clarification = _OnClassOrInstance()
    clear_clarification = _OnClassOrInstance()

__all__ = ["CLARIFICATION_KEY", "ConversationHandler", "ShortTermMemory"]

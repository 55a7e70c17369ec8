"""Who acts for an app's user id, shared by the seed 002 services (`MemoryService`,
`ConversationService`).

`user_id` arguments are what the app speaks: a Supabase Auth user id, an external id such as
"user123" (with `tenant_id`, seed 003's tenant key), or a `memory.users` id. A Supabase Auth user
acts as themselves (`Database.as_user`: row level security decides, exactly as through the Data
API); any other user is served as `service_role`, which bypasses RLS, and the RPCs take
`p_user_id` so that another user's rows are not found, as they would not be under RLS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from .db import Database
from .errors import NotFoundError
from .identity import Identity, TenantKey

T = TypeVar("T")


@dataclass(frozen=True)
class Owner:
    """A resolved user: its `memory.users` id, and whether it is a Supabase Auth user."""

    id: UUID
    auth: bool


class Acting:
    """Resolves and caches who acts for each user id, on one `Database`."""

    def __init__(self, db: Database, identity: Identity | None = None) -> None:
        self.db = db
        self.identity = identity if identity is not None else Identity(db)
        self._owners: dict[tuple[str, object], Owner] = {}
        self._lock = threading.Lock()

    def resolve_user(self, user_id: str | UUID, tenant_id: TenantKey = None) -> UUID:
        """The `memory.users` id the service uses for `user_id` in `tenant_id`."""
        return self._owner(user_id, tenant_id).id

    def _owner(self, user_id: str | UUID, tenant_id: TenantKey, *, create: bool = True) -> Owner:
        """Who acts for `user_id`: created on first use by writes; with `create` off, a user
        nobody has made yet is NotFoundError."""
        owner = self._find_owner(user_id, tenant_id, create=create)
        if owner is None:
            raise NotFoundError("user not found", sqlstate="P0002")
        return owner

    def _find_owner(self, user_id: str | UUID, tenant_id: TenantKey, *, create: bool = False) -> Owner | None:
        """Who acts for `user_id` (Identity resolves the id), or None when nobody has the id and
        `create` is off (reads create nothing)."""
        key = (str(user_id), tenant_id)
        cached = self._owners.get(key)
        if cached is not None:
            return cached
        found = self.identity.user(user_id, tenant_id) if create else self.identity.find(user_id, tenant_id)
        if found is None:
            return None
        with self.db.transaction() as tx:
            rows = tx.execute("select auth_user_id is not null as auth from memory.users where id = %s", [found])
        if not rows:
            return None
        owner = Owner(id=found, auth=rows[0]["auth"])
        with self._lock:
            self._owners[key] = owner
        return owner

    def _transaction(self, owner: Owner | None) -> Any:
        """As the Auth user themselves (RLS decides), else (or for nobody) as service_role."""
        return self.db.as_user(owner.id) if owner is not None and owner.auth else self.db.transaction()

    def _run(self, user_id: str | UUID, write: Callable[[], T]) -> T:
        """A write that survives the user's erasure by another process (`Identity.run`)."""

        def cached() -> list[UUID]:
            with self._lock:
                return [o.id for k, o in self._owners.items() if k[0] == str(user_id)]

        def forget() -> None:
            with self._lock:
                for key in [k for k in self._owners if k[0] == str(user_id)]:
                    del self._owners[key]

        return self.identity.run(user_id, write, cached=cached, forget=forget)

"""Who a caller's ids name: tenants and users, resolved once per process.

Users
- A Supabase Auth user id (a UUID, no tenant) is its own `memory.users` id:
  `memory.register_user(p_user_id)` creates the row once.
- Any other id (seed 000's and 003's "user123", a chat id) is an external id in a tenant:
  `memory.user_id_for(p_external_id, p_tenant_id)` maps it to a user, the same one forever.
- A UUID that is not an Auth user (register_user fails on its foreign key to auth.users) is
  treated as an external id, so seed 001 callers that mint their own UUIDs still work.
The mapping never changes while the user exists, so it is cached in-process. A user erased by
another process (`supamem erase`, `memory.erase_user`) leaves a stale entry here; writes go
through `Identity.run`, which notices the missing row when the write is refused, drops the
stale ids and runs the write once more (the user is made again, as on first use).

Tenants
- seed 003's tenant ids are integers; the kit's tenants are UUID rows in `memory.tenants`.
  An int `n` names the tenant "tenant-n", a non-UUID string names the tenant of that name; both
  map to `uuid5(TENANT_NAMESPACE, name)` and the row is created on first use (an idempotent
  insert, so concurrent first uses agree). A UUID is used as is and must exist.
- None is the app's own namespace (`tenant_id is null`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypeVar
from uuid import UUID, uuid5

from .db import Database
from .errors import InvalidInputError, NotFoundError

R = TypeVar("R")

#: Namespace of the deterministic tenant ids (uuid5) for int and name tenant keys.
TENANT_NAMESPACE = UUID("6f1d2a4e-59c3-4c1e-9f4e-2b7d0c8a5e31")

TenantKey = int | str | UUID | None


#: A user id that names nobody (gen_random_uuid never makes the nil UUID): a write-side RPC called
#: with it for an unknown user answers as it does for a user without the row.
NOBODY = UUID(int=0)


def as_uuid(value: object) -> UUID | None:
    """`value` as a UUID (a UUID, or text or anything whose text is one), else None."""
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        return None


def tenant_uuid(tenant_id: TenantKey) -> UUID | None:
    """The `memory.tenants` id a tenant key names, computed without the database.

    None stays None, a UUID is itself, an int `n` and a name map to `uuid5(TENANT_NAMESPACE,
    "tenant-n" / name)`. Pure, so it also names a tenant while the database is unreachable (the
    fallback buffer keys on it); `Identity.tenant` creates the row on first use.
    """
    if tenant_id is None:
        return None
    if isinstance(tenant_id, bool) or not isinstance(tenant_id, (int, str, UUID)):
        raise InvalidInputError(f"tenant id must be an int, a UUID or a name, not {tenant_id!r}")
    uid = as_uuid(tenant_id)
    if uid is not None:
        return uid
    return uuid5(TENANT_NAMESPACE, _tenant_name(tenant_id))


def _user_key(user_id: str | UUID, tenant: UUID | None) -> tuple[UUID | None, str]:
    """(tenant, id as text): a UUID in its canonical spelling, so every spelling is one user."""
    uid = as_uuid(user_id)
    return tenant, str(uid) if uid is not None else str(user_id)


def _tenant_name(tenant_id: object) -> str:
    return f"tenant-{tenant_id}" if isinstance(tenant_id, int) else str(tenant_id)


class Identity:
    """Resolves (user id, tenant) to `memory.users` ids and tenant keys to tenant ids."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._users: dict[tuple[UUID | None, str], UUID] = {}
        self._display: dict[UUID, str] = {}
        self._tenants: dict[object, UUID] = {}
        self._lock = threading.Lock()

    # -- tenants --------------------------------------------------------------------------

    def tenant(self, tenant_id: TenantKey) -> UUID | None:
        """The `memory.tenants` id for a tenant key (None stays None)."""
        resolved = tenant_uuid(tenant_id)
        if resolved is None:
            return None
        cache_key = (type(tenant_id).__name__, tenant_id)
        cached = self._tenants.get(cache_key)
        if cached is not None:
            return cached
        if as_uuid(tenant_id) is None:
            # memory.tenants has no RPC: service_role inserts the row (the name check applies).
            with self.db.transaction() as tx:
                tx.execute(
                    "insert into memory.tenants (id, name) values (%s, %s) on conflict (id) do nothing",
                    [resolved, _tenant_name(tenant_id)],
                )
        with self._lock:
            self._tenants[cache_key] = resolved
        return resolved

    # -- users ----------------------------------------------------------------------------

    def user(self, user_id: str | UUID, tenant_id: TenantKey = None) -> UUID:
        """The `memory.users` id of `user_id` in tenant `tenant_id` (created on first use)."""
        tenant = self.tenant(tenant_id)
        key = _user_key(user_id, tenant)
        cached = self._users.get(key)
        if cached is not None:
            return cached
        # memory.find_user_id decides what an id names; only an id that names nobody yet makes a user.
        resolved = self.find(user_id, tenant_id)
        if resolved is not None:
            return resolved
        if as_uuid(user_id) is not None and tenant is None:
            try:
                resolved = self.db.call_value("register_user", user_id=UUID(key[1]))
            except InvalidInputError as exc:
                if exc.sqlstate != "23503":  # not a Supabase Auth user: an external id then
                    raise
        if resolved is None:
            resolved = self.db.call_value("user_id_for", external_id=key[1], tenant_id=tenant)
        assert isinstance(resolved, UUID)
        self._cache(key, resolved)
        return resolved

    def find(self, user_id: str | UUID, tenant_id: TenantKey = None) -> UUID | None:
        """The `memory.users` id of `user_id`, or None when nobody has it (creates nothing).

        Reads use this, so reading an id nobody has used leaves no user or tenant behind.
        """
        key = _user_key(user_id, tenant_uuid(tenant_id))
        cached = self._users.get(key)
        if cached is not None:
            return cached
        found = self.db.call_value("find_user_id", external_id=key[1], tenant_id=key[0])
        if found is not None:
            self._cache(key, found)
        return found

    def _cache(self, key: tuple[UUID | None, str], resolved: UUID) -> None:
        with self._lock:
            self._users[key] = resolved
            self._display.setdefault(resolved, key[1])

    def display_id(self, user_uuid: UUID) -> str:
        """The id the app speaks for a `memory.users` id: its external id, else the UUID."""
        cached = self._display.get(user_uuid)
        if cached is not None:
            return cached
        with self.db.transaction() as tx:
            rows = tx.execute("select external_id from memory.users where id = %s", [user_uuid])
        text = rows[0]["external_id"] if rows and rows[0]["external_id"] else str(user_uuid)
        with self._lock:
            self._display[user_uuid] = text
        return text

    def run(
        self,
        user_id: str | UUID,
        write: Callable[[], R],
        *,
        cached: Callable[[], Iterable[UUID]] = lambda: (),
        forget: Callable[[], None] = lambda: None,
    ) -> R:
        """Run `write` (which resolves `user_id` through the caches); when it is refused (a
        foreign key, a missing profile, a row not found) and a cached id of this user no longer
        has its row (erased by another process), drop this user's cached ids (here and, with
        `forget`, the caller's own, listed by `cached`) and run it once more."""
        try:
            return write()
        except (InvalidInputError, NotFoundError):
            if not self._erased(user_id, cached()):
                raise
        self.forget(user_id)
        forget()
        return write()

    def _erased(self, user_id: str | UUID, also: Iterable[UUID]) -> bool:
        """True when some id cached for `user_id` names no `memory.users` row any more."""
        text = str(as_uuid(user_id) or user_id)
        with self._lock:
            ids = {v for k, v in self._users.items() if k[1] == text} | set(also)
        if not ids:
            return False
        with self.db.transaction() as tx:
            rows = tx.execute("select count(*) as n from memory.users where id = any(%s)", [list(ids)])
        return rows[0]["n"] < len(ids)

    def forget(self, user_id: str | UUID | None = None) -> None:
        """Drop cached mappings (all of them when `user_id` is None)."""
        with self._lock:
            if user_id is None:
                self._users.clear()
                self._display.clear()
                self._tenants.clear()
                return
            text = str(as_uuid(user_id) or user_id)
            for key in [k for k in self._users if k[1] == text]:
                self._display.pop(self._users.pop(key), None)


__all__ = ["TENANT_NAMESPACE", "Identity", "TenantKey", "tenant_uuid"]

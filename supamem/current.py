"""Reads of a user's running conversation of one kind, that create nothing.

Seed 000's store and seed 003's history each keep one running conversation per user, told apart
by a metadata match (`memory.current_conversation` creates it on the first write). A read of a
user or a conversation that does not exist yet answers empty instead of creating them.
"""

from __future__ import annotations

from typing import Any

from .db import Database
from .identity import Identity, TenantKey


def read_current(
    db: Database,
    identity: Identity,
    user_id: str,
    tenant_id: TenantKey,
    match: dict[str, str],
    function: str,
    **params: Any,
) -> list[dict[str, Any]]:
    """`memory.<function>(p_conversation_id => <the running conversation>, ...)`'s rows, or []
    when the user or the conversation does not exist."""
    user = identity.find(user_id, tenant_id)
    if user is None:
        return []
    with db.transaction() as tx:
        conversation = tx.call_one("find_conversation", user_id=user, match=match)
        return [] if conversation is None else tx.call(function, conversation_id=conversation["id"], **params)


__all__ = ["read_current"]

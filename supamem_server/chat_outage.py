"""The chat through a database outage (seed 001, property 8).

While the database cannot be reached, a question is answered from the session's last window this
server read plus the turns answered since (no memories, no summary), and its turn waits in the
server's memory (supamem.fallback, keyed by user and session; a new session gets its id here). The
user's next request that reaches the database writes their turns back first, exactly once, into
that session (made with that id when no conversation has it). A WARNING names the user and
session. Buffered turns live in this process only: a restart before the write-back loses them.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from supamem.db import Transaction
from supamem.fallback import flush, write_back_session


def key(user: UUID, session: UUID) -> str:
    return f"chat:{user}:{session}"


def write_back(services: Any, user: UUID) -> None:
    """The user's turns answered during an outage go in before anything else is read."""
    prefix = f"chat:{user}:"
    if not services.fallback.has_pending(prefix):
        return

    def create(tx: Transaction, session: UUID | None) -> UUID:
        return tx.call_one("create_conversation", user_id=user, id=session)["id"]  # type: ignore[index]

    flush(services.fallback, prefix, services.flush_lock,
          lambda k, turns: write_back_session(services.db, UUID(k.removeprefix(prefix)), turns, user, create))


def context(services: Any, user: UUID, session: UUID, turns: int) -> dict[str, Any]:
    """The prompt context an outage can give: the last `turns` of the window remembered and the
    turns buffered since."""
    shown = services.fallback.view(key(user, session), None, session_id=str(session), limit=turns)
    return {"history": [{"turn_number": t.turn_number, "user_content": t.query_text,
                         "assistant_content": t.response_text} for t in shown]}

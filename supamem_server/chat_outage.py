"""The chat through a database outage (seed 001, property 8).

While the database cannot be reached, a question is answered from the session's last window this
server read plus the turns answered since (no memories, no summary), and its turn waits in the
server's memory (supamem.fallback, keyed by user and session; a new session gets its id here).
They are written back exactly once, into that session (made with that id when no conversation has
it): by the user's next request that reaches the database, before anything else, and by the
app's background write-back (`WriteBack`) every few seconds once the database is back, and once
more when the app stops, so a user who does not come back loses nothing either. A WARNING names
the user and session. Buffered turns live in this process only: a crash before the database
returns loses them.
"""

from __future__ import annotations

import logging
import threading
from typing import Any
from uuid import UUID

from supamem.db import Transaction
from supamem.errors import InvalidInputError, SupamemError
from supamem.fallback import flush, write_back_session

log = logging.getLogger(__name__)


PREFIX = "chat:"


def key(user: UUID, session: UUID) -> str:
    return f"{PREFIX}{user}:{session}"


def drop_session(fallback: Any, session: UUID) -> None:
    """Drop every person's turns held for a deleted session (its owner's and its participants'),
    so no write-back makes it again."""
    for held in fallback.pending_keys(PREFIX):
        if held.endswith(f":{session}"):
            fallback.drop_key(held)


def write_back(services: Any, user: UUID | None = None) -> None:
    """Held turns go in: the user's, before their request reads anything, or (no user) everyone's."""
    prefix = PREFIX if user is None else f"{PREFIX}{user}:"
    if not services.fallback.has_pending(prefix):
        return

    def write(held: str, turns: list[Any]) -> tuple[UUID, int]:
        owner, session = (UUID(part) for part in held.removeprefix(PREFIX).split(":"))
        # A user whose first request came during the outage has no row yet (their request registers
        # them after this write-back): their turns are theirs all the same.
        with services.db.transaction() as tx:
            tx.call("register_user", user_id=owner)

        profile = next((t.profile_id for t in turns if t.profile_id is not None), None)

        def create(tx: Transaction, wanted: UUID | None) -> UUID:
            # A session started during the outage with a profile is made with it, as the live
            # request would have made it; a profile gone or never theirs leaves the turns in a
            # plain session (the live request would have been refused; these were answered).
            if profile is not None:
                try:
                    with tx.savepoint():
                        return tx.call_one("create_conversation", user_id=owner, id=wanted, mode="profile",
                                           profile_id=profile, ttl=services.session_ttl)["id"]  # type: ignore[index]
                except InvalidInputError as exc:
                    log.warning("held turns of session %s (user_id=%s) go in without profile %s: %s",
                                wanted, owner, profile, exc)
            return tx.call_one("create_conversation", user_id=owner, id=wanted,
                               ttl=services.session_ttl)["id"]  # type: ignore[index]

        return write_back_session(services.db, session, turns, owner, create)

    flush(services.fallback, prefix, services.flush_lock, write)


def held(services: Any, user: UUID, client_turn_id: str) -> tuple[UUID, Any] | None:
    """The user's turn held under this client id, and its session: a request sent again."""
    turn = services.fallback.find(f"{PREFIX}{user}:", client_turn_id)
    if turn is None:
        return None
    return UUID(turn.key.rsplit(":", 1)[1]), turn


def context(services: Any, user: UUID, session: UUID, turns: int) -> dict[str, Any]:
    """The prompt context an outage can give: the last `turns` of the window remembered and the
    turns buffered since."""
    shown = services.fallback.view(key(user, session), None, session_id=str(session), limit=turns)
    return {"history": [{"turn_number": t.turn_number, "user_content": t.query_text,
                         "assistant_content": t.response_text} for t in shown]}


class WriteBack:
    """The app's background write-back: every `interval` seconds, while turns are held and the
    database is up, each user's turns go in as their next request would write them."""

    def __init__(self, services: Any, interval: float) -> None:
        self.services = services
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="supamem-chat-write-back", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop, then write back what is held one last time (if the database is up)."""
        self._stop.set()
        self._thread.join()
        self.once()

    def once(self) -> None:
        try:
            write_back(self.services)
        except SupamemError as exc:  # still down: the turns stay held
            log.debug("chat write-back deferred: %s", exc)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if self.services.fallback.has_pending(PREFIX) and self.services.db.wait_available(0):
                self.once()

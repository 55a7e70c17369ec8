"""9. Seed 001's response-time targets, through its own interface, `ConversationMemoryManager`:
turn storage under 100 ms, history retrieval under 200 ms, the cleanup operation under 5 s, and
graceful degradation under 50 ms of overhead.

Storage and history: 100 users with a 24-hour session each, 20 turns stored first; `store_turn`
and `get_session_history` (20 turns, seed 001's context default) interleaved over the sessions.
Cleanup: one `cleanup_old_conversations()` (the defaults pg_cron's sweep uses) over a day's
expired sessions of a mid-sized app, 1,000 sessions of 20 turns (40,000 messages, set-based), next
to the live ones. Degradation: the same two calls on a manager whose database cannot be reached
(a closed port on loopback), answered from its in-memory buffer, against the same calls with the
database up; the first call of an outage, which finds the server gone, is timed apart.
"""

from __future__ import annotations

import itertools
import socket
import time
from typing import Any

from . import data
from .common import admin, kit_database, log, pick, vacuum_analyze
from .stats import interleaved, summarize

USERS = 100
TURNS = 20
EXPIRED_SESSIONS = 1_000


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://postgres:postgres@127.0.0.1:{port}/postgres"


def run() -> dict[str, Any]:
    from supamem import ConversationMemoryManager, Database

    data.reset_data()
    db = kit_database(max_size=2)
    manager = ConversationMemoryManager(db)
    users = [f"session-user-{i}" for i in range(USERS)]
    sessions = [manager.create_session(u) for u in users]
    for s, u in zip(sessions, users, strict=True):
        for t in range(TURNS):
            manager.store_turn(s, u, f"Question {t} about the marathon plan?", f"Answer {t}: run easy, then long.")
    pairs = itertools.cycle(list(zip(sessions, users, strict=True)))
    n = pick(300, 2000)
    counter = itertools.count()

    def store() -> None:
        s, u = next(pairs)
        manager.store_turn(s, u, f"And turn {next(counter)}?", "Keep it easy.")

    def history() -> None:
        s, _ = next(pairs)
        assert len(manager.get_session_history(s, limit=20)) == 20

    up = interleaved({"store_turn": store, "get_session_history": history}, n, 50)
    out: dict[str, Any] = {"samples": n, "database_up": {k: summarize(v) for k, v in up.items()}}

    # The outage: a manager on a server that is not there, answering from its buffer.
    down_db = Database(_closed_port_url(), connect_timeout=2.0, timeout=2.0, retry_interval=60.0)
    down = ConversationMemoryManager(down_db)
    started = time.perf_counter_ns()  # the first call of the outage finds the server gone
    offline = [down.create_session(users[0])]
    first_ms = (time.perf_counter_ns() - started) / 1e6
    offline += [down.create_session(u) for u in users[1:10]]
    cycle = itertools.cycle(list(zip(offline, users[:10], strict=True)))
    m = pick(200, 400)  # within the buffer's bounds: 50 turns a session, 1,000 in all

    def store_down() -> None:
        s, u = next(cycle)
        assert down.store_turn(s, u, "A question while the database is down?", "Answered anyway.").buffered

    def history_down() -> None:
        s, _ = next(cycle)
        down.get_session_history(s, limit=20)

    degraded = interleaved({"store_turn": store_down, "get_session_history": history_down}, m, 10)
    out["database_down"] = {k: summarize(v) for k, v in degraded.items()}
    out["database_down"]["first_call_ms"] = round(first_ms, 2)
    down_db.close()

    # The cleanup: a day's expired sessions beside the live ones.
    with admin() as conn:
        data.create_users(conn, EXPIRED_SESSIONS, "expired-session", profiles=False, conversation_title="expired-session",
                          ttl="24 hours")
        filled = data.filler_messages(conn, "expired-session", TURNS, expired=True)
    vacuum_analyze("memory.messages", "memory.conversations")
    result = manager.cleanup_old_conversations()
    out["cleanup"] = {"expired_sessions": EXPIRED_SESSIONS, "expired_messages": filled["rows"],
                      "seconds": round(result.execution_time, 3), "sessions_deleted": result.sessions_deleted,
                      "messages_deleted": result.messages_deleted, "errors": result.errors}
    log(f"sessions: store p50 {out['database_up']['store_turn']['p50_us']}us, cleanup {result.execution_time:.2f}s")
    db.close()
    return out

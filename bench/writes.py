"""2. Writes: adding turns with 1, 4 and 8 concurrent clients, the kit's `memory.add_turn`
(through its own client, `supamem.Database`) against langchain-postgres'
`PostgresChatMessageHistory.add_messages` storing the same two messages.

The kit does more per turn: it numbers the turn under the conversation's row lock, applies the
rolling window (10 turns, deleting the oldest) and the 24-hour TTL, checks the memory gate and
notes the question for extraction (and the conversation's summary every 4 turns). Each client writes its
own conversation (its own user); the peer's clients write their own session ids. The sides (and
the kit's call as one bare statement) run in short runs, several each in rotating order, and the
figures pool each side's runs.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from typing import Any

from . import data
from .common import admin, bench_url, kit_database, log, one, pick, replica_mode, service
from .stats import ratio, run_concurrent

TABLE = "langchain_chat_history"
QUESTION = "Can you recommend a good running plan for my first marathon in the spring?"
ANSWER = ("Sure. Start with four runs a week: two easy runs, one tempo run and one long run that grows "
          "by about a mile a week, with a cut-back week every fourth week and a two-week taper.")


def _kit_conversations(clients: int, tag: str) -> list[str]:
    ids = []
    with service() as conn:
        for i in range(clients):
            uid = one(conn, "select memory.user_id_for(%s)", (f"writer-{tag}-{i}",))
            pid = one(conn, "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", (uid,))
            cid = one(conn, "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s, "
                            "p_ttl => interval '24 hours', p_window_turns => 10)).id", (uid, pid))
            ids.append(str(cid))
    return ids


def run_kit(clients: int, duration: float, tag: str) -> dict[str, Any]:
    conversations = _kit_conversations(clients, tag)
    db = kit_database(max_size=clients)

    def make(i: int) -> Callable[[], Any]:
        cid = conversations[i]
        return lambda: db.call("add_turn", conversation_id=cid, user_content=QUESTION, assistant_content=ANSWER)

    try:
        return run_concurrent(make, clients, duration)
    finally:
        db.close()


def run_kit_raw(clients: int, duration: float, tag: str) -> dict[str, Any]:
    """The same RPC as one autocommit statement on a plain connection: the server's share."""
    conversations = _kit_conversations(clients, tag)
    conns = [service() for _ in range(clients)]

    def make(i: int) -> Callable[[], Any]:
        cid, conn = conversations[i], conns[i]
        return lambda: conn.execute("select * from memory.add_turn(%s, %s, %s)", (cid, QUESTION, ANSWER)).fetchall()

    try:
        return run_concurrent(make, clients, duration)
    finally:
        for c in conns:
            c.close()


# A floor, not the kit: the turn's two rows inserted into the kit's messages table by one plain
# statement with its triggers and foreign keys off; its indexes, checks and stored tsvector stay.
FLOOR = """
insert into memory.messages (conversation_id, user_id, role, content, turn_number, expires_at)
values (%(c)s, %(u)s, 'user', %(q)s, %(t)s, now() + interval '24 hours'),
    (%(c)s, %(u)s, 'assistant', %(a)s, %(t)s, now() + interval '24 hours')
"""


def run_floor(clients: int, duration: float, tag: str) -> dict[str, Any]:
    conversations = _kit_conversations(clients, tag)
    conns = [admin() for _ in range(clients)]
    with service() as conn:
        owners = [one(conn, "select user_id from memory.conversations where id = %s", (cid,)) for cid in conversations]

    def make(i: int) -> Callable[[], Any]:
        conn, turns = conns[i], itertools.count(1)
        params = {"c": conversations[i], "u": owners[i], "q": QUESTION, "a": ANSWER}
        return lambda: conn.execute(FLOOR, {**params, "t": next(turns)})

    try:
        for conn in conns:
            conn.execute("set session_replication_role = replica")
        return run_concurrent(make, clients, duration)
    finally:
        for conn in conns:
            conn.close()
        # Its rows go, so the other sides' later runs write into a table of the same size.
        with admin() as conn, replica_mode(conn):
            conn.execute("delete from memory.messages where conversation_id = any(%s::uuid[])", (conversations,))


def run_peer(clients: int, duration: float) -> dict[str, Any]:
    import psycopg
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_postgres import PostgresChatMessageHistory

    conns = [psycopg.connect(bench_url()) for _ in range(clients)]
    histories = [PostgresChatMessageHistory(TABLE, str(uuid.uuid4()), sync_connection=c) for c in conns]
    messages = [HumanMessage(content=QUESTION), AIMessage(content=ANSWER)]

    def make(i: int) -> Callable[[], Any]:
        history = histories[i]
        return lambda: history.add_messages(messages)

    try:
        return run_concurrent(make, clients, duration)
    finally:
        for c in conns:
            c.close()


def _pool(runs: list[dict[str, Any]], samples: list[list[int]] | None = None) -> dict[str, Any]:
    calls = sum(r["calls"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    return {
        "calls": calls,
        "seconds": seconds,
        "turns_per_second": round(calls / seconds, 1),
        "runs_per_second": [r["per_second"] for r in runs],
        "latency_runs": [r["latency"] for r in runs],
        "errors": sum(r["error_count"] for r in runs),
        "error_examples": [e for r in runs for e in r["errors"]][:3],
    }


def run() -> dict[str, Any]:
    import psycopg
    from langchain_postgres import PostgresChatMessageHistory

    data.reset_data()
    with psycopg.connect(bench_url()) as conn:
        PostgresChatMessageHistory.drop_table(conn, TABLE)
        PostgresChatMessageHistory.create_tables(conn, TABLE)
    duration = pick(2.0, 4.0)
    rounds = pick(2, 5)
    levels = [1, 4, 8]
    out: dict[str, Any] = {"duration_per_run_s": duration, "runs_per_side": rounds, "levels": []}
    sides = ("kit", "peer", "raw", "floor")
    for clients in levels:
        runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        # Short runs in rotating order, so the three sides share whatever else the machine does
        # (pg_cron's minutely passes over what the kit's turns noted, autovacuum) instead of one
        # side taking a pass whole.
        for rnd in range(rounds):
            order = sides[rnd % len(sides):] + sides[:rnd % len(sides)]
            for side in order:
                if side == "kit":
                    runs["kit"].append(run_kit(clients, duration, f"{clients}-{rnd}"))
                elif side == "raw":
                    runs["raw"].append(run_kit_raw(clients, duration, f"{clients}-raw-{rnd}"))
                elif side == "floor":
                    runs["floor"].append(run_floor(clients, duration, f"{clients}-floor-{rnd}"))
                else:
                    runs["peer"].append(run_peer(clients, duration))
        kit, peer, raw, floor = (_pool(runs[side]) for side in sides)
        level = {"clients": clients, "kit": kit, "peer": peer, "kit_single_statement": raw, "floor": floor,
                 "throughput_ratio": ratio(kit["turns_per_second"], peer["turns_per_second"]),
                 "single_statement_ratio": ratio(raw["turns_per_second"], peer["turns_per_second"]),
                 "floor_ratio": ratio(floor["turns_per_second"], peer["turns_per_second"])}
        # Latency percentiles: the mean of the runs' own (each run's are kept above).
        for side, name in (("kit", "kit"), ("peer", "peer"), ("kit_single_statement", "raw"), ("floor", "floor")):
            level[side]["latency"] = {
                k: round(sum(r["latency"][k] for r in runs[name]) / len(runs[name]), 1)
                for k in ("p50_us", "p95_us", "p99_us")
            }
        out["levels"].append(level)
        log(f"writes: {clients} clients: kit {kit['turns_per_second']}/s, peer {peer['turns_per_second']}/s "
            f"(x{level['throughput_ratio']}); kit as one statement {raw['turns_per_second']}/s; "
            f"floor {floor['turns_per_second']}/s")
    with service() as conn:
        out["jobs_enqueued"] = one(conn, "select count(*) from memory_private.jobs")
        out["extractions_noted"] = one(conn, "select count(*) from memory_private.pending_extractions")
        out["summaries_noted"] = one(conn, "select count(*) from memory_private.pending_summaries")
        out["kit_messages"] = one(conn, "select count(*) from memory.messages")
    with psycopg.connect(bench_url()) as conn:
        out["peer_messages"] = one(conn, f"select count(*) from {TABLE}")
    return out

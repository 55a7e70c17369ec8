"""3. Reads: history of sessions of 20, 200 and 2,000 messages, the kit's `memory.history`
(through `supamem.Database`; the prompt window, newest 20 messages oldest-first) against
langchain-postgres' `PostgresChatMessageHistory.get_messages` (every message of the session, as
its API offers no limit). For reference the kit also reads whole sessions (`p_limit` up to its
maximum of 1,000). Both stores hold the same messages; calls are interleaved in blocks of 10, and
the window is also timed right after the peer's read.
"""

from __future__ import annotations

import uuid
from typing import Any

from . import data
from .common import bench_url, kit_database, log, one, pick, service, vacuum_analyze
from .stats import following, interleaved, ratio, summarize
from .writes import TABLE

LENGTHS = (20, 200, 2000)


def run() -> dict[str, Any]:
    import psycopg
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_postgres import PostgresChatMessageHistory

    data.reset_data()
    peer_conn = psycopg.connect(bench_url())
    PostgresChatMessageHistory.drop_table(peer_conn, TABLE)
    PostgresChatMessageHistory.create_tables(peer_conn, TABLE)
    sessions: dict[int, tuple[str, Any, Any]] = {}
    with service() as conn:
        for length in LENGTHS:
            uid = one(conn, "select memory.user_id_for(%s)", (f"reader-{length}",))
            cid = str(one(conn, "select (memory.create_conversation(p_user_id => %s)).id", (uid,)))
            history = PostgresChatMessageHistory(TABLE, str(uuid.uuid4()), sync_connection=peer_conn)
            for t in range(length // 2):
                q = f"Question {t}: " + " ".join(data.WORDS[(t * 7 + k) % len(data.WORDS)] for k in range(12)) + "?"
                a = f"Answer {t}: " + " ".join(data.WORDS[(t * 11 + k) % len(data.WORDS)] for k in range(30)) + "."
                conn.execute("select * from memory.add_turn(%s, %s, %s)", (cid, q, a))
                history.add_messages([HumanMessage(content=q), AIMessage(content=a)])
            sessions[length] = (cid, history, uid)
    vacuum_analyze("memory.messages", TABLE)
    db = kit_database(max_size=1)
    raw = service()
    out: dict[str, Any] = {"lengths": []}
    for length in LENGTHS:
        cid, history, uid = sessions[length]
        n = pick(150, {20: 2000, 200: 1000, 2000: 300}[length])
        fns = {
            "kit_history_20": lambda cid=cid: db.call("history", conversation_id=cid, limit=20),
            "peer_get_messages": lambda history=history: history.get_messages(),
            # The same RPC as one autocommit statement on a plain connection: the server's share.
            "kit_history_20_single_statement": lambda cid=cid: raw.execute(
                "select * from memory.history(%s, 20)", (cid,)).fetchall(),
            # As the signed-in owner (an app calling as its users: role, claims, RLS), in one transaction.
            "kit_history_20_signed_in": lambda cid=cid, uid=uid: db.call_as(uid, "history", conversation_id=cid,
                                                                            limit=20),
        }
        # The peer builds thousands of Python objects per call: collect garbage between rounds only,
        # and time each side in blocks of 10 calls, so the kit's calls are not timed in caches the
        # peer's large read has just evicted (measured on its own below).
        samples = interleaved(fns, n, 20, collect_every=10, block=10)
        # What the window costs right after the peer's read in the same process.
        samples["kit_history_20_after_peer"] = following(
            history.get_messages, fns["kit_history_20"], pick(50, {20: 500, 200: 300, 2000: 150}[length]))
        # Timed on their own: the whole-session read (a reference), and the window as one statement
        # with nothing else between its calls, which shows the window's own work apart from the cost
        # of following a large read in the interleaved rounds above.
        alone = {
            "kit_history_all": lambda cid=cid, length=length: db.call("history", conversation_id=cid,
                                                                      limit=min(length, 1000)),
            "kit_history_20_alone": lambda cid=cid: raw.execute(
                "select * from memory.history(%s, 20)", (cid,)).fetchall(),
        }
        for name, fn in alone.items():
            samples |= interleaved({name: fn}, n, 20, collect_every=10)
        entry = {"messages": length, **{k: summarize(v) for k, v in samples.items()}}
        assert len(history.get_messages()) == length
        assert len(db.call("history", conversation_id=cid, limit=20)) == min(20, length)
        entry["peer_over_kit_p50"] = ratio(entry["peer_get_messages"]["p50_us"], entry["kit_history_20"]["p50_us"])
        out["lengths"].append(entry)
        log(f"reads: {length}: kit {entry['kit_history_20']['p50_us']}us, peer {entry['peer_get_messages']['p50_us']}us")
    db.close()
    raw.close()
    peer_conn.close()
    peer20 = out["lengths"][0]["peer_get_messages"]["p50_us"]
    out["kit_max_p50_over_peer20_p50"] = ratio(max(e["kit_history_20"]["p50_us"] for e in out["lengths"]), peer20)
    out["speedup_at_2000"] = out["lengths"][-1]["peer_over_kit_p50"]
    return out

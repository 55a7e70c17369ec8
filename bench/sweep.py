"""5. Retention sweep: cost per 100,000 expired rows, whether it follows the expired rows or the
table size, and the p99 of concurrent writers during a sweep against without one.

Two kinds of expired rows, both common:
- expired sessions (seeds 000/001: 24-hour TTL): the conversation and all its messages are past
  their expiry; `memory.sweep_expired` deletes a batch of messages, then a batch of expired
  conversations, whose remaining messages go with them by cascade;
- expired messages in live conversations (a TTL'd conversation still in use): only the message
  batches apply.
Live rows carry a future expiry (24 hours), so they sit in the same partial expiry index as the
expired ones. The sweep is timed batch by batch exactly as `memory_private.run_retention_sweep`
runs it (batches of `sweep_batch_size`, each its own transaction), as service_role. The
search-term fold is paused while the section runs: it would otherwise spend it posting the live
messages loaded in bulk just before (12.7 s of every other minute at the 4,000,000-message table
in a run on 2026-11-27), a backlog a database does not carry in steady state; what a sweep leaves
for the fold is measured apart (finding 7).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from psycopg.types.json import Jsonb

from . import data
from .common import admin, kit_database, log, one, paused_job, pick, service, vacuum_analyze
from .stats import ratio, summarize

QUESTION = "Is it going to rain in Paris this weekend?"
ANSWER = "Light rain is likely on Saturday morning; Sunday looks dry and mild."
MESSAGES_PER_SESSION = 40


def _count_messages() -> int:
    with admin() as conn:
        return int(one(conn, "select count(*) from memory.messages"))


def _add_live(conn: Any, messages: int, tag: str) -> dict[str, Any]:
    users = max(1, messages // 200)
    data.create_users(conn, users, f"live{tag}", profiles=False, conversation_title="live", ttl="24 hours")
    n_conv = int(one(conn, "select count(*) from memory.conversations where title = 'live'"))
    return data.filler_messages(conn, "live", max(1, messages // (2 * n_conv)))


def _add_expired(conn: Any, rows: int, kind: str, tag: str) -> dict[str, Any]:
    title = f"{kind}-{tag}"
    sessions = max(1, rows // MESSAGES_PER_SESSION)
    data.create_users(conn, sessions, title, profiles=False, conversation_title=title, ttl="24 hours")
    return data.filler_messages(conn, title, MESSAGES_PER_SESSION // 2, expired=True,
                                expire_conversation=(kind == "sessions"))


def sweep_until_done(batch: int = 5000) -> dict[str, Any]:
    """Batches of memory.sweep_expired, each resuming where the last stopped, until one comes back short,
    as the scheduled procedure does."""
    before = _count_messages()
    times = []
    deleted = {"messages_deleted": 0, "conversations_deleted": 0, "short_term_deleted": 0}
    resume = None
    with service() as conn:
        while True:
            t0 = time.perf_counter()
            *counts, resume = conn.execute(
                "select * from memory.sweep_expired(%s, null, %s)", (batch, Jsonb(resume) if resume else None)
            ).fetchone()
            times.append(time.perf_counter() - t0)
            for key, value in zip(deleted, counts, strict=True):
                deleted[key] += value
            if max(counts) < batch:
                break
    after = _count_messages()
    total = sum(times)
    removed = before - after
    return {
        "seconds": round(total, 3),
        "batches": len(times),
        "longest_batch_seconds": round(max(times), 3),
        "messages_removed": removed,
        "messages_removed_by_cascade": removed - deleted["messages_deleted"],
        **deleted,
        "seconds_per_100k_messages": round(total * 100_000 / removed, 3) if removed else None,
    }


def _writers_during_sweep(clients: int, expired: int, rounds: int) -> dict[str, Any]:
    with service() as conn:
        conversations = []
        for i in range(clients):
            uid = one(conn, "select memory.user_id_for(%s)", (f"sweep-writer-{i}",))
            conversations.append(str(one(conn, "select (memory.create_conversation(p_user_id => %s, "
                                               "p_ttl => interval '24 hours', p_window_turns => 10)).id", (uid,))))
    db = kit_database(max_size=clients)
    baseline: list[int] = []
    during: list[int] = []
    sweeps = []
    for rnd in range(rounds):
        with admin() as conn:
            _add_expired(conn, expired, "sessions", f"w{rnd}")
        vacuum_analyze("memory.messages", "memory.conversations")
        samples: list[tuple[int, int]] = []
        stop = threading.Event()
        lock = threading.Lock()

        def loop(cid: str, stop: threading.Event = stop, lock: threading.Lock = lock,
                 samples: list[tuple[int, int]] = samples) -> None:
            mine = []
            while not stop.is_set():
                t0 = time.perf_counter_ns()
                db.call("add_turn", conversation_id=cid, user_content=QUESTION, assistant_content=ANSWER)
                mine.append((t0, time.perf_counter_ns() - t0))
            with lock:
                samples.extend(mine)

        threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in conversations]
        t_start = time.perf_counter_ns()
        for t in threads:
            t.start()
        time.sleep(4.0)
        with admin() as conn:
            ts = time.perf_counter_ns()
            conn.execute("call memory_private.run_retention_sweep()")
            te = time.perf_counter_ns()
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join()
        warm = t_start + 500_000_000
        baseline += [lat for start, lat in samples if warm <= start < ts]
        during += [lat for start, lat in samples if ts <= start < te]
        sweeps.append(round((te - ts) / 1e9, 3))
        log(f"sweep: round {rnd}: sweep took {sweeps[-1]}s")
    db.close()
    b, d = summarize(baseline), summarize(during)
    return {"clients": clients, "expired_rows_per_round": expired, "rounds": rounds, "sweep_seconds": sweeps,
            "baseline": b, "during_sweep": d,
            "p99_ratio": ratio(d.get("p99_us"), b.get("p99_us")), "p50_ratio": ratio(d.get("p50_us"), b.get("p50_us"))}


def run() -> dict[str, Any]:
    data.reset_data()
    out: dict[str, Any] = {"batch_size": 5000, "messages_per_expired_session": MESSAGES_PER_SESSION,
                           "tables": [], "writers": None}
    sizes = pick([100_000, 300_000], [1_000_000, 4_000_000])
    expired_levels = pick([20_000, 40_000], [50_000, 100_000, 200_000])
    have_live = 0
    with admin() as conn, paused_job(conn, "supamem-fold-search-terms"):
        for ti, live in enumerate(sizes):
            load = _add_live(conn, live - have_live, str(ti))
            have_live = live
            vacuum_analyze("memory.messages", "memory.conversations")
            table: dict[str, Any] = {"live_messages": _count_messages(), "live_load": load, "runs": []}
            for kind in ("sessions", "messages"):
                for ei, expired in enumerate(expired_levels):
                    _add_expired(conn, expired, kind, f"{ti}-{ei}")
                    vacuum_analyze("memory.messages", "memory.conversations")
                    res = sweep_until_done()
                    res.update({"kind": kind, "expired_rows": expired})
                    table["runs"].append(res)
                    log(f"sweep: live {table['live_messages']}, {kind} {expired}: {res['seconds']}s in "
                        f"{res['batches']} batches (longest {res['longest_batch_seconds']}s)")
            out["tables"].append(table)
        out["writers"] = _writers_during_sweep(4, pick(50_000, 200_000), pick(1, 3))
    # Proportionality: seconds per 100k at the small and the large table, same kind and count.
    def per100k(t: dict[str, Any], kind: str, rows: int) -> float | None:
        for r in t["runs"]:
            if r["kind"] == kind and r["expired_rows"] == rows:
                return r["seconds_per_100k_messages"]
        return None

    mid = expired_levels[len(expired_levels) // 2]
    out["table_size_effect"] = {
        kind: ratio(per100k(out["tables"][-1], kind, mid), per100k(out["tables"][0], kind, mid))
        for kind in ("sessions", "messages")
    }
    return out

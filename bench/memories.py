"""6. Memories: the dedup upsert (`memory.remember`) and `memory.select_memories` with 1,000
memories per profile (the kit's cap), among many users.

Probe profiles hold exactly 1,000 live memories; the other users' profiles hold filler memories
(set-based, triggers off), interleaved with the probes' rows as real traffic would leave them.
`remember` is measured on its two paths: a near-duplicate of an existing memory (trigram
similarity >= 0.85: the existing one is reinforced) and a new memory (inserted; the cap then
archives the lowest-scored one, so the profile stays at 1,000). `select_memories` is measured as
prompt_context calls it (with the user's query, not recorded: the use is recorded when the
answer is stored), recording the use as well, and without a query.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from . import data
from .common import SCALE, Timer, admin, log, one, pick, service, vacuum_analyze
from .stats import interleaved, summarize

PROBES = 20
PER_PROBE = 1000
RECORDING_PROBES = 5
QUERY = "how is the marathon training going with my sister"


def run() -> dict[str, Any]:
    data.reset_data()
    users = pick(1_000, 10_000)
    filler_per_profile = pick(20, 100)
    out: dict[str, Any] = {"users": users + PROBES, "probe_profiles": PROBES, "memories_per_probe_profile": PER_PROBE,
                           "recording_probe_profiles": RECORDING_PROBES,
                           "filler_memories_per_profile": filler_per_profile}
    with admin() as conn:
        out["users_seconds"] = data.create_users(conn, users, "muser")
        data.create_users(conn, PROBES, "mprobe")
        load = data.filler_memories(conn, "muser", filler_per_profile, probe_prefix="mprobe", probe_count=PER_PROBE)
        data.log_step("memories: filler", load)
        out["load"] = load
        with Timer() as tv:
            conn.execute("vacuum (analyze) memory.memories")
        out["vacuum_analyze_seconds"] = tv.seconds
        out["memories_total"] = int(one(conn, "select count(*) from memory.memories"))
        out["table_bytes"] = int(one(conn, "select pg_total_relation_size('memory.memories')"))
        probes = conn.execute(
            "select p.user_id::text, p.id::text from memory.profiles p join memory.users u on u.id = p.user_id "
            "where u.external_id like 'mprobe-%' order by u.external_id").fetchall()
        contents = {uid: [r[0] for r in conn.execute(
            "select content from memory.memories where user_id = %s order by random() limit 200", (uid,)).fetchall()]
            for uid, _ in probes}
    if SCALE == "full":
        out["note_10k_users_x_1000"] = (
            "10,000 users x 1,000 memories (10^7 rows) was not loaded: the set-based load runs at "
            f"{load['rows_per_second']} rows/s here (two GIN indexes: full text and trigram), so 10^7 rows would "
            f"take about {round(10_000_000 / max(1, load['rows_per_second']) / 60)} minutes. Per-call cost depends on "
            "the profile's own memories (remember's dedup reads them through memories_live_idx; select_memories its "
            "kept candidates), which the probes have at 1,000.")
    rng = random.Random(11)
    conn = service()
    # Recording a use raises the chosen memories' scores, which would change what later calls
    # select; the recording select gets probe profiles of its own so the others read unchanged scores.
    probe_cycle = itertools.cycle(probes[:-RECORDING_PROBES])
    record_cycle = itertools.cycle(probes[-RECORDING_PROBES:])
    counter = itertools.count()

    def duplicate() -> None:
        uid, _ = next(probe_cycle)
        base = rng.choice(contents[uid])
        conn.execute("select * from memory.remember(p_content => %s, p_type => 'fact', p_user_id => %s)",
                     (base + ".", uid)).fetchall()

    def new() -> None:
        uid, _ = next(probe_cycle)
        text = f"New memory {next(counter)}: the user " + " ".join(rng.choice(data.WORDS) for _ in range(9))
        conn.execute("select * from memory.remember(p_content => %s, p_type => 'preference', p_user_id => %s)",
                     (text, uid)).fetchall()

    def select(query: str | None, record: bool) -> Any:
        def call() -> None:
            uid, pid = next(record_cycle if record else probe_cycle)
            conn.execute("select * from memory.select_memories(p_user_id => %s, p_profile_id => %s, p_query => %s, "
                         "p_record => %s)", (uid, pid, query, record)).fetchall()
        return call

    n = pick(200, 600)
    ops = {
        "select_1": lambda: conn.execute("select 1").fetchone(),
        "remember (near-duplicate: reinforce)": duplicate,
        "remember (new: insert + cap)": new,
        "select_memories (query, recorded)": select(QUERY, True),
        "select_memories (query, not recorded: as prompt_context)": select(QUERY, False),
        "select_memories (no query, not recorded)": select(None, False),
    }
    with Timer() as tm:
        samples = interleaved(ops, n, 20)
    out["ops"] = {k: summarize(v) for k, v in samples.items()}
    out["measure_seconds"] = tm.seconds
    out["samples"] = n
    # Check the paths did what they are named for.
    with admin() as a:
        out["outcomes"] = {
            "live_per_probe_profile_after": [int(x[0]) for x in a.execute(
                "select count(*) from memory.memories m join memory.users u on u.id = m.user_id "
                "where u.external_id like 'mprobe-%%' and m.active and not m.archived and m.deleted_at is null "
                "group by m.user_id order by 1 limit 3").fetchall()],
            "archived_by_cap": int(one(a, "select count(*) from memory.memories where archived")),
            "reference_events": int(one(a, "select count(*) from memory.memory_events where event = 'reference'")),
        }
    conn.close()
    log("memories: " + ", ".join(f"{k} p50 {v['p50_us']}us" for k, v in out["ops"].items()))
    vacuum_analyze("memory.memories")
    return out

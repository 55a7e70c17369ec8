"""1. Prompt context, the hot path: `memory.prompt_context` (history window, referenced turn,
selected memories, summaries; one round trip) against a bare `select 1` on the same connection,
at growing data sizes (messages and users).

Probe conversations are built through the kit's RPCs (add_turn, remember) with summaries; the
rest of each size is filler (data.filler_messages) interleaved across conversations. The same
probes are measured at every size, so any growth in cost is the data's, not the probes'. The
search-term fold is paused while the sizes load and are measured: it would otherwise spend the
section posting the filler loaded in bulk, a backlog a database does not carry in steady state.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from typing import Any

from . import data
from .common import SCALE, Timer, admin, kit_database, log, one, paused_job, pick, service, vacuum_analyze
from .stats import interleaved, ratio, summarize

QUERY = "tell me more about the first one, the marathon plan"
PROBES = 10
PROBE_TURNS = 20
PROBE_MEMORIES = 50


def _sizes() -> list[tuple[int, int]]:
    """(messages, users) per step."""
    return pick(
        [(1_000, 100), (10_000, 1_000), (100_000, 10_000)],
        [(1_000, 100), (100_000, 10_000), (1_000_000, 100_000), (10_000_000, 100_000)],
    )


def make_probes(conn: Any, prefix: str = "probe", k: int = PROBES, turns: int = PROBE_TURNS,
                memories: int = PROBE_MEMORIES) -> list[str]:
    """k users with a primary profile, one conversation of `turns` turns, `memories` memories and
    summaries (every 4 turns, 4 weeks, 2 months), all through the kit's RPCs / service_role."""
    rng = random.Random(7)
    words = data.WORDS
    probes = []
    for i in range(k):
        uid = one(conn, "select memory.user_id_for(%s)", (f"{prefix}-{i}",))
        pid = one(conn, "insert into memory.profiles (user_id, is_primary) values (%s, true) returning id", (uid,))
        cid = one(conn, "select (memory.create_conversation(p_user_id => %s, p_profile_id => %s, p_title => %s)).id",
                  (uid, pid, prefix))
        for t in range(turns):
            q = f"Question {t}: what about " + " ".join(rng.choice(words) for _ in range(10)) + "?"
            a = f"Answer {t}: " + " ".join(rng.choice(words) for _ in range(30)) + "."
            conn.execute("select * from memory.add_turn(%s, %s, %s)", (cid, q, a))
        for m in range(memories):
            content = f"Memory {m}: the user " + " ".join(rng.choice(words) for _ in range(8))
            kind = rng.choice(["fact", "preference", "goal", "pattern", "relationship", "emotion"])
            conn.execute("select * from memory.remember(p_content => %s, p_type => %s, p_user_id => %s)",
                         (content, kind, uid))
        for to_turn in range(4, turns + 1, 4):
            conn.execute(
                "insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)"
                " values (%s, %s, %s, %s, %s, %s)",
                (
                    cid, uid, pid, to_turn - 3, to_turn,
                    f"Turns {to_turn - 3}-{to_turn}: " + " ".join(rng.choice(words) for _ in range(40)),
                ),
            )
        for w in range(4):
            conn.execute(
                "insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date,"
                " week_end_date, emotional_summary, key_themes, dominant_patterns, conversation_count)"
                " select %s, %s, extract(isoyear from d), extract(week from d), d, d + 6, %s, %s, %s, 3"
                " from (select (date_trunc('week', now()) - make_interval(weeks => %s))::date as d) as x",
                (uid, pid, "A calm week of " + " ".join(rng.choice(words) for _ in range(20)),
                 [rng.choice(words) for _ in range(3)], [rng.choice(words) for _ in range(2)], w + 1),
            )
        for mo in range(2):
            conn.execute(
                "insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary, key_themes)"
                " select %s, %s, extract(year from d), extract(month from d), %s, %s"
                " from (select date_trunc('month', now()) - make_interval(months => %s) as d) as x",
                (uid, pid, "A month of " + " ".join(rng.choice(words) for _ in range(30)),
                 [rng.choice(words) for _ in range(3)], mo + 1),
            )
        probes.append(str(cid))
    return probes


_PLAN_LOG = re.compile(r"duration: ([0-9.]+) ms\s+plan:\s*Query Text:(.*?)\n(.*)", re.S)
_BUFFERS = re.compile(r"Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?")


def explain(probe: str) -> dict[str, Any]:
    """`explain (analyze, buffers)` of the hot path, plus auto_explain's plans of the statements
    inside the function (the top-level plan only shows a Result node)."""
    notices: list[str] = []
    with admin() as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        for setting in (
            "load 'auto_explain'",
            "set auto_explain.log_min_duration = 0",
            "set auto_explain.log_analyze = on",
            "set auto_explain.log_buffers = on",
            "set auto_explain.log_timing = on",
            "set auto_explain.log_nested_statements = on",
            "set client_min_messages = log",
            "set role service_role",
        ):
            conn.execute(setting)
        # A warm-up call, then the measured one.
        conn.execute("select memory.prompt_context(%s, %s)", (probe, QUERY))
        notices.clear()
        plan = [r[0] for r in conn.execute("explain (analyze, buffers) select memory.prompt_context(%s, %s)",
                                            (probe, QUERY)).fetchall()]
    nested: dict[str, dict[str, Any]] = {}
    for message in notices:
        m = _PLAN_LOG.search(message)
        if not m:
            continue
        text = " ".join(m.group(2).split())[:110]
        if text.startswith("explain"):
            continue
        body = m.group(3)
        b = _BUFFERS.search(body)
        hit = int(b.group(1) or 0) if b else 0
        read = int(b.group(2) or 0) if b else 0
        entry = nested.setdefault(text, {"statement": text, "calls": 0, "ms": 0.0, "shared_hit": 0, "shared_read": 0,
                                         "first_node": body.strip().splitlines()[0][:120] if body.strip() else ""})
        entry["calls"] += 1
        entry["ms"] = round(entry["ms"] + float(m.group(1)), 3)
        entry["shared_hit"] += hit
        entry["shared_read"] += read
    top_buffers = None
    for line in plan:
        b = _BUFFERS.search(line)
        if b:
            top_buffers = {"shared_hit": int(b.group(1) or 0), "shared_read": int(b.group(2) or 0)}
            break
    return {"plan": plan, "top_buffers": top_buffers,
            "nested": sorted(nested.values(), key=lambda e: -e["ms"])}


def measure(probes: list[str], n: int, warmup: int) -> dict[str, Any]:
    conn = service()
    cycle = itertools.cycle(probes)
    sizes: list[int] = []

    def ctx() -> None:
        row = conn.execute("select memory.prompt_context(%s, %s)", (next(cycle), QUERY)).fetchone()
        if len(sizes) < 5:
            sizes.append(len(json.dumps(row[0])))

    def ctx_no_query() -> None:
        conn.execute("select memory.prompt_context(%s)", (next(cycle),)).fetchone()

    def select1() -> None:
        conn.execute("select 1").fetchone()

    # The issue's two targets: with the query (the window's reference and the memories' lift) and
    # without one.
    samples = interleaved({"select_1": select1, "prompt_context": ctx, "prompt_context_no_query": ctx_no_query},
                          n, warmup)
    conn.close()
    out = {name: summarize(v) for name, v in samples.items()}
    for suffix, name in (("", "prompt_context"), ("_no_query", "prompt_context_no_query")):
        out[f"ratio_p50{suffix}"] = ratio(out[name]["p50_us"], out["select_1"]["p50_us"])
        out[f"ratio_p99{suffix}"] = ratio(out[name]["p99_us"], out["select_1"]["p99_us"])
    out["payload_bytes"] = sizes[-1] if sizes else None

    # The same through the kit's Python client (pool checkout, BEGIN ... COMMIT), for reference.
    db = kit_database(max_size=1)
    kn = max(200, n // 4)

    def kit_ctx() -> None:
        db.call_value("prompt_context", conversation_id=next(cycle), query=QUERY)

    def kit_select1() -> None:
        with db.transaction() as tx:
            tx.execute("select 1")

    ks = interleaved({"select_1": kit_select1, "prompt_context": kit_ctx}, kn, 50)
    db.close()
    out["kit_client"] = {name: summarize(v) for name, v in ks.items()}
    out["kit_client"]["ratio_p50"] = ratio(out["kit_client"]["prompt_context"]["p50_us"],
                                           out["kit_client"]["select_1"]["p50_us"])
    return out


# A floor, not the kit: the rows of the document without a query (the window, the profile's kept
# candidates scored and cut to ten, the latest summaries) read by one plain statement with no access
# check, settings, notes or proof, the least any query-time design reads.
FLOOR = """
with c as (select * from memory.conversations where id = %(c)s),
window_turns as (
    select t.* from memory.turns as t
    where t.conversation_id = %(c)s and t.turn_number > (select c.last_turn - 10 from c)
),
chosen as (
    select m.id, m.content, m.type, m.pinned,
        memory_private.memory_score(w.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count,
            now()) as score
    from c
    join memory_private.memory_selections as s on s.profile_id = c.profile_id
    join memory.memories as m on m.id = any(s.candidates)
    join memory.memory_types as w on w.type = m.type
    where m.active and not m.archived and m.deleted_at is null
    order by m.pinned desc, score desc, m.id
    limit 10
)
select json_build_object(
    'history', (select json_agg(t order by t.turn_number) from window_turns as t),
    'memories', (select json_agg(m) from chosen as m),
    'conversation_summary', (
        select to_json(s) from memory.conversation_summaries as s
        where s.conversation_id = %(c)s order by s.to_turn desc limit 1
    ),
    'weekly_summary', (
        select to_json(w) from memory.weekly_summaries as w, c
        where w.profile_id = c.profile_id order by w.week_start_date desc limit 1
    ),
    'monthly_summary', (
        select to_json(m) from memory.monthly_summaries as m, c
        where m.profile_id = c.profile_id order by m.year desc, m.month desc limit 1
    )
)
"""


def attribution(probe: str, n: int) -> dict[str, Any]:
    """Where the hot path's time goes: its parts called on their own, interleaved, same connection."""
    conn = service()
    uid, pid = conn.execute("select user_id, profile_id from memory.conversations where id = %s", (probe,)).fetchone()
    parts = {
        "select_1": ("select 1", ()),
        "prompt_context": ("select memory.prompt_context(%s, %s)", (probe, QUERY)),
        "prompt_context, no query": ("select memory.prompt_context(%s)", (probe,)),
        "turn_history (window)": ("select * from memory.turn_history(%s, 10)", (probe,)),
        "resolve_reference": ("select * from memory.resolve_reference(%s, %s, 10)", (probe, QUERY)),
        "select_memories, no query, not recorded": (
            "select * from memory.select_memories(p_user_id => %s, p_profile_id => %s, p_record => false)", (uid, pid)),
        "select_memories, query, not recorded": (
            "select * from memory.select_memories(p_user_id => %s, p_profile_id => %s, p_query => %s, p_record => false)",
            (uid, pid, QUERY)),
        "floor: one plain statement, no query": (FLOOR, {"c": probe}),
    }

    def caller(q: str, params: Any) -> Any:
        return lambda: conn.execute(q, params or None).fetchall()

    samples = interleaved({name: caller(q, p) for name, (q, p) in parts.items()}, n, 30)
    conn.close()
    return {name: summarize(v) for name, v in samples.items()}


def run() -> dict[str, Any]:
    data.reset_data()
    n = pick(600, 3000)
    warmup = pick(100, 300)
    result: dict[str, Any] = {"query": QUERY, "samples_per_size": n, "probes": PROBES, "probe_turns": PROBE_TURNS,
                              "probe_memories": PROBE_MEMORIES, "steps": [], "loading": []}
    with service() as conn, Timer() as t:
        probes = make_probes(conn)
    result["probe_setup_seconds"] = t.seconds
    with admin() as conn:
        # What the minutely refresh does within a minute of the probes' memories being written.
        conn.execute("select memory_private.refresh_memory_selections(2147483647)")
    log(f"context: {PROBES} probe conversations through the RPCs in {t.seconds}s")
    trigger_measured = False
    with admin() as conn, paused_job(conn, "supamem-fold-search-terms"):
        for step, (target_messages, target_users) in enumerate(_sizes()):
            load: dict[str, Any] = {"step": step, "target_messages": target_messages, "target_users": target_users}
            have_users = int(one(conn, "select count(*) from memory.users"))
            if target_users > have_users:
                load["users_seconds"] = data.create_users(conn, target_users - have_users, f"filler{step}",
                                                          conversation_title="filler")
                load["users_added"] = target_users - have_users
            have = int(one(conn, "select count(*) from memory.messages"))
            n_conv = int(one(conn, "select count(*) from memory.conversations where title = 'filler'"))
            pairs = max(0, math.ceil((target_messages - have) / (2 * n_conv)))
            if pairs >= 2 and not trigger_measured and n_conv * 2 >= 10_000:
                # One turn per filler conversation through the triggers: the kit's own write path.
                info = data.triggered_messages(conn, "filler", 1)
                load["triggered"] = info
                data.log_step("context: through triggers", info)
                # And one through the import RPC, the path for history moved from another store.
                info = data.imported_messages(conn, "filler", 1)
                load["imported"] = info
                data.log_step("context: through import_messages", info)
                trigger_measured = True
                pairs -= 2
            if step == len(_sizes()) - 1 and SCALE == "full" and result["loading"]:
                # 10^7 (the targets' upper size) unless the bulk path's measured rate says it would take
                # over ~25 minutes to load.
                rates = [s["filler"]["rows_per_second"] for s in result["loading"] if s.get("filler", {}).get("rows_per_second")]
                rate = min(rates[-1:] or [0])
                projected = (target_messages - have) / rate if rate else float("inf")
                load["projected_seconds"] = round(projected)
                if projected > 1500:
                    load["skipped"] = f"projected load {projected:.0f}s at {rate} rows/s exceeds ~25 minutes"
                    result["loading"].append(load)
                    log(f"context: skipping {target_messages} messages: {load['skipped']}")
                    break
            if pairs:
                info = data.filler_messages(conn, "filler", pairs)
                load["filler"] = info
                data.log_step(f"context: filler to {target_messages}", info)
            with Timer() as tv:
                conn.execute("vacuum (analyze) memory.messages, memory.conversations, memory.users, memory.profiles")
            load["vacuum_analyze_seconds"] = tv.seconds
            messages = int(one(conn, "select count(*) from memory.messages"))
            users = int(one(conn, "select count(*) from memory.users"))
            load["messages"] = messages
            load["users"] = users
            result["loading"].append(load)
            log(f"context: measuring at {messages} messages, {users} users")
            m = measure(probes, n, warmup)
            m.update({"messages": messages, "users": users,
                      "memories": int(one(conn, "select count(*) from memory.memories")),
                      "table_sizes": data.table_sizes()})
            if step == 0:
                m["explain"] = explain(probes[0])
            result["steps"].append(m)
            log(f"context: p50 {m['prompt_context']['p50_us']}us vs select 1 {m['select_1']['p50_us']}us "
                f"(x{m['ratio_p50']})")
        result["steps"][-1]["explain"] = explain(probes[0])
        result["attribution"] = attribution(probes[0], pick(200, 600))
    first, last = result["steps"][0], result["steps"][-1]
    result["flatness_p50"] = ratio(last["prompt_context"]["p50_us"], first["prompt_context"]["p50_us"])
    result["flatness_ratio_p50"] = ratio(last["ratio_p50"], first["ratio_p50"])
    vacuum_analyze("memory.memories")
    return result
